"""Map a typed table to integer codes over a finite Domain, and codes back to typed values.

The Domain comes from the schema alone (public), never from the data. Numeric values are
clipped to their public bounds before binning: this is what bounds every query's sensitivity.
Missing values get a code of their own (the last one of the column), so no row is ever dropped.
Derived columns (``derived_from`` in the schema) have no codes: decoding fills them from their
source column through the schema's public mapping, or from their public formula.
Id, text and ignored columns have no codes either, and ``encode`` refuses a table that holds any
of their values: decoding writes fresh keys (synthpriv.ids) and public text, never data. Date and
datetime columns are encoded as integer columns over days/seconds and decoded back to the
column's written format (synthpriv.datetimes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from synthpriv.datetimes import format_times, shift_days, weekday_numbers, weekdays_of
from synthpriv.domain import Dataset, Domain
from synthpriv.ids import KeyMaker
from synthpriv.schema import (
    FINE_CELLS,
    UNMODELLED,
    CategoricalColumn,
    DatetimeColumn,
    DerivedFormula,
    IdColumn,
    IgnoredColumn,
    NumericColumn,
    Schema,
    TextColumn,
)


class TableEncoder:
    """Encoder and decoder for the tables of one schema."""

    def __init__(self, schema: Schema) -> None:
        if schema.unresolved:
            raise ValueError(
                f"internal error: {[c.name for c in schema.unresolved]} have no domain yet; the "
                "domain step (synthpriv.domain_stage) resolves them before anything is encoded"
            )
        self.schema = schema
        # values outside a numeric column's bounds, clipped (or read as missing: ``outside``), by
        # column: the operator's terminal shows the counts (they read the raw table); they reach
        # no release or manifest
        self.clipped: dict[str, int] = {}
        self._edges = {
            c.name: c.bin_edges() for c in schema.columns if isinstance(c, NumericColumn)
        }
        self.domain = Domain.from_sizes({c.name: self._codes(c) for c in schema.modelled})
        self._keys: dict[str, KeyMaker] = {}  # fresh-key makers of id columns, made on first use

    def _codes(self, column: CategoricalColumn | NumericColumn) -> int:
        values = (
            len(column.categories)
            if isinstance(column, CategoricalColumn)
            else len(self._edges[column.name]) - 1
        )
        return values + int(column.missing)

    def encode(self, table: pd.DataFrame) -> Dataset:
        """Integer codes of a table already checked by ``read_table`` (NaN = missing); derived
        columns are not encoded, nor id/text/ignored ones (ValueError if they hold a value)."""
        self._refuse_unmodelled(table)
        codes = np.empty((len(table), len(self.domain)), dtype=np.int64)
        for j, column in enumerate(self.schema.modelled):
            values = table[column.name]
            missing = values.isna().to_numpy()
            if isinstance(column, CategoricalColumn):
                lookup = {c: i for i, c in enumerate(column.categories)}
                code = values.map(lookup).to_numpy(dtype=float, na_value=np.nan)
            else:
                code = self._bin(column, values.to_numpy(dtype=float)).astype(float)
                if column.outside == "missing":  # still one code a row: sensitivity unchanged
                    missing = missing | self._outside(column, values.to_numpy(dtype=float))
            code[missing] = self.domain.shape[j] - 1
            if np.isnan(code).any():
                raise ValueError(f"column '{column.name}' has values outside its domain")
            codes[:, j] = code.astype(np.int64)
        return Dataset(codes, self.domain)

    def _refuse_unmodelled(self, table: pd.DataFrame) -> None:
        """ValueError if an id, text or ignored column of ``table`` holds a value: the readers
        drop those cells (synthpriv.table.parse_chunk), so a value here is a bug upstream."""
        for column in self.schema.columns:
            if (isinstance(column, UNMODELLED) and column.name in table
                    and table[column.name].notna().any()):
                raise ValueError(
                    f"internal error: column '{column.name}' is {column.kind} and holds values; "
                    "its cells must never reach the model (the readers drop them)")

    @staticmethod
    def _outside(column: NumericColumn, values: np.ndarray) -> np.ndarray:
        """Which values lie outside the column's bounds (NaN: none)."""
        return (values < column.lower) | (values > column.upper)

    def _bin(self, column: NumericColumn, values: np.ndarray) -> np.ndarray:
        edges = self._edges[column.name]
        outside = int(np.count_nonzero(self._outside(column, values)))
        if outside:  # for the operator's terminal only (``clipped``): never released
            self.clipped[column.name] = self.clipped.get(column.name, 0) + outside
        clipped = np.clip(values, column.lower, column.upper)
        bins = np.searchsorted(edges, clipped, side="right") - 1
        return np.clip(bins, 0, len(edges) - 2)

    def decode(
        self, codes: np.ndarray, rng: np.random.Generator,
        atoms: Mapping[str, np.ndarray] | None = None,
    ) -> pd.DataFrame:
        """Typed values for codes: categories, a value drawn uniformly within the bin (integers
        within the bin's integers; a continuous column rounded to its ``precision``, or to
        ``decimals`` without one, within its bounds), NaN for the missing code, derived columns
        from their source. A bin flagged in ``atoms`` (a point mass the noisy fine counts found,
        ``compress.heaped``) is decoded at its roundest value (``roundest``): the value a heap
        sits on (not for date/datetime columns: see below); a declared point mass's own cell
        (``NumericColumn.point_masses``) at exactly its value. Post-processing: costs no budget."""
        atoms = atoms or {}
        columns = {}
        for j, column in enumerate(self.schema.modelled):
            code = codes[:, j]
            missing = column.missing & (code == self.domain.shape[j] - 1)
            if isinstance(column, CategoricalColumn):
                categories = np.array(column.categories + [""], dtype=object)
                values = pd.Series(categories[np.where(missing, len(column.categories), code)])
                columns[column.name] = values.where(~missing)
            else:
                # a heap in days/seconds since 1970 is no decimal heap: its "roundest" value
                # (a multiple of 10ᵏ seconds) is no round time, so dates are drawn in the cell
                heaps = None if isinstance(column, DatetimeColumn) else atoms.get(column.name)
                columns[column.name] = self._draw_in_bin(column, np.where(missing, 0, code), rng,
                                                         missing, heaps)
        for column in self.schema.columns:
            if column.derived_from is not None:
                columns[column.name] = derive(column, columns)
            elif isinstance(column, UNMODELLED) and not isinstance(column, IgnoredColumn):
                columns[column.name] = self._public_values(column, len(codes), rng)
        for column in self.schema.columns:
            if isinstance(column, DatetimeColumn):
                columns[column.name] = format_times(columns[column.name], column.kind,
                                                    column.format, column.timezone)
        return pd.DataFrame({name: columns[name] for name in self.schema.names})

    def _public_values(self, column: IdColumn | TextColumn, rows: int,
                       rng: np.random.Generator) -> pd.Series:
        """An id column's fresh keys (never repeating within this encoder's release) or a text
        column's public placeholder / public values: no data is read (no budget)."""
        if isinstance(column, IdColumn):
            maker = self._keys.setdefault(column.name, KeyMaker(column.format, rng))
            return pd.Series(maker.draw(rows), dtype=object)
        if column.values is not None:
            return pd.Series(rng.choice(np.array(column.values, dtype=object), rows), dtype=object)
        return pd.Series([column.placeholder] * rows, dtype=object)

    def _draw_in_bin(
        self, column: NumericColumn, code: np.ndarray, rng: np.random.Generator,
        missing: np.ndarray, atoms: np.ndarray | None = None,
    ) -> pd.Series:
        edges = self._edges[column.name]
        low, high = edges[code], edges[code + 1]
        last = code == len(edges) - 2
        if column.kind == "continuous":
            values = rng.uniform(low, high)
            if atoms is not None and atoms.any():
                points = point_values(edges, atoms)
                at = atoms[code]
                values[at] = points[code[at]]
            digits = decimals(column, edges)[code]
            values = _within(_round(values, digits), low, high, last, digits)
            values = _round(spread_clipped(column, values, code, len(edges) - 1, rng), digits)
            lower, upper = _inward(column.lower, column.upper, digits)
            values = at_point_masses(column, np.clip(values, lower, upper) + 0.0, code)  # no -0.0
            return pd.Series(values).mask(missing)
        first = np.ceil(low)
        top = np.where(last, np.floor(high), np.ceil(high) - 1)
        top = np.maximum(top, first)
        values = first + np.floor(rng.random(len(code)) * (top - first + 1))
        if atoms is not None and atoms.any():
            points = point_values(edges, atoms, whole=True)
            at = atoms[code]
            values[at] = points[code[at]]
        values = spread_clipped(column, values, code, len(edges) - 1, rng, whole=True)
        values = np.clip(values, math.ceil(column.lower), math.floor(column.upper))
        values = at_point_masses(column, values, code)
        if isinstance(column, DatetimeColumn) and column.weekdays is not None:
            values = on_weekdays(column, values, first, top, rng)
        series = pd.Series(values.astype(np.int64))
        return series.astype("Int64").mask(missing) if column.missing else series


def on_weekdays(column: DatetimeColumn, values: np.ndarray, first: np.ndarray, top: np.ndarray,
                rng: np.random.Generator) -> np.ndarray:
    """``values`` (days or seconds) moved onto the column's public ``weekdays``: a value on
    another day moves by whole days to one of the allowed weekdays drawn uniformly, the nearer
    way that stays inside its cell [``first``, ``top``] and the column's bounds (else the other
    way). A value drawn uniformly over a long cell so ends uniform over the allowed days of the
    cell, and each keeps its time of day. Post-processing of the model's draw: no budget."""
    allowed = np.array(weekday_numbers(column.weekdays))
    values = values.astype(float).copy()
    weekday = weekdays_of(values, column.kind, column.timezone)
    wrong = ~np.isin(weekday, allowed)
    if not wrong.any():
        return values
    target = rng.choice(allowed, int(wrong.sum()))
    ahead = (target - weekday[wrong]) % 7  # days forward to the target; or ahead - 7 back
    forward = shift_days(values[wrong], ahead, column.kind, column.timezone)
    backward = shift_days(values[wrong], ahead - 7, column.kind, column.timezone)
    # the nearer way, unless only the other stays in the cell and the bounds; a cell narrower
    # than a week: in the bounds (a range holding none of the days keeps the draw, clipped)
    use_forward = ahead <= 3
    for upper, lower in ((top[wrong], first[wrong]), (np.inf, -np.inf)):
        if column.upper is not None:
            upper = np.minimum(upper, column.upper)
        if column.lower is not None:
            lower = np.maximum(lower, column.lower)
        fits_forward, fits_backward = forward <= upper, backward >= lower
        either = fits_forward | fits_backward
        use_forward = np.where(either & ~(fits_forward & fits_backward), fits_forward,
                               use_forward)
        if either.all():
            break
    values[wrong] = np.where(use_forward, forward, backward)
    if column.lower is not None and column.upper is not None:
        values = np.clip(values, math.ceil(column.lower), math.floor(column.upper))
    return values


def at_point_masses(column: NumericColumn, values: np.ndarray, code: np.ndarray) -> np.ndarray:
    """``values`` with every row decoded in a declared point mass's own fine cell
    (``NumericColumn.point_mass_cells``) set to exactly that value: never the cell's roundest
    value, never spread (not by ``spread_clipped`` either: the value is known to be there).
    Post-processing of the public schema: no budget."""
    cells = column.point_mass_cells()
    if not len(cells):
        return values
    values = np.asarray(values, dtype=float).copy()
    for cell, value in zip(cells, column.point_masses or (), strict=True):
        values[code == cell] = value
    return values


SPREAD_BINS = 32  # the clipped rows spread over 1/32 of the range: one of the adaptive domain's
# finest bins (synthpriv.marginals.compress.MAX_BINS), so they add no bin-level error there


def spread_clipped(column: NumericColumn, values: np.ndarray, code: np.ndarray, cells: int,
                   rng: np.random.Generator, whole: bool = False) -> np.ndarray:
    """``values`` with the rows decoded in the first (last) of the ``cells`` fine cells redrawn
    uniformly over the outermost 1/SPREAD_BINS of [lower, upper] when the lower (upper) bound
    is a DP one (``column.spread_clipped``): values beyond a DP bound (a tail the noise hid) are
    clipped into that bound's cell, and stacked there they are a spike the data does not hold
    (issue 24: 10 % of an amount column at 32,767). The bound stays the outermost value: nothing
    beyond it is released. Post-processing of public bounds: no budget."""
    width = (column.upper - column.lower) / SPREAD_BINS
    values = np.asarray(values, dtype=float).copy()
    for side in column.spread_clipped:
        at = code == (0 if side == "lower" else cells - 1)
        if not at.any():
            continue
        low, high = ((column.lower, column.lower + width) if side == "lower"
                     else (column.upper - width, column.upper))
        if whole:
            low, high = math.ceil(low), math.floor(high)
            values[at] = low + np.floor(rng.random(int(at.sum())) * (high - low + 1))
        else:
            values[at] = rng.uniform(low, high, int(at.sum()))
    return values


MAX_DECIMALS = 17  # a double's significant digits: more decimals than that carry nothing


def decimals(column: NumericColumn, edges: np.ndarray) -> np.ndarray:
    """Decimals a continuous column's released values carry, per fine cell: its ``precision``
    when declared, else one more than the cell's width needs (a step of at most a tenth of the
    cell, so the uniform draw within it is kept), at least 0. Per cell, not per column: one
    narrow cell (a point mass at 0 among adaptive bins) would otherwise give every value of the
    column 8 decimals. Public: bounds and grid only."""
    widths = np.diff(np.asarray(edges, dtype=float))
    if column.precision is not None:
        return np.full(len(widths), column.precision, dtype=np.int64)
    if column.point_masses and column.adaptive:  # a cell beside a point mass's is ≥ half a
        # fine cell (``bin_edges``): it takes the fine cells' decimals there, as does the point
        # mass's own (its rows are written at the point mass, ``at_point_masses``)
        widths = np.maximum(widths, column.grid_cell_width(np.asarray(edges, float)[:-1]))
    if column.grid_shape is not None and column.adaptive:  # a shaped grid's narrow cells (a
        # bulk octave's) would write more decimals than the data's: Bikeshare's temp/hum 5 where
        # the equal-width grid wrote 4 and the data 2; they keep the equal-width grid's
        widths = np.maximum(widths, (column.upper - column.lower) / FINE_CELLS)
    positive = widths > 0
    needed = np.ceil(-np.log10(np.where(positive, widths, 1.0))) + 1
    # at most MAX_DECIMALS: a point mass's own cell (one float wide, at 0: 5e-324) would
    # otherwise ask for 10^324 (overflow); its rows are written at the point mass anyway
    return np.clip(np.where(positive, needed, 0), 0, MAX_DECIMALS).astype(np.int64)


def _round(values: np.ndarray, digits: np.ndarray) -> np.ndarray:
    """``values`` rounded to ``digits`` decimals each (numpy's round takes one digit count)."""
    scale = 10.0 ** np.asarray(digits, dtype=float)
    return np.round(np.asarray(values, dtype=float) * scale) / scale


def _within(
    values: np.ndarray, low: np.ndarray, high: np.ndarray, last: np.ndarray, digits: np.ndarray
) -> np.ndarray:
    """Rounded ``values`` kept in their bins [low, high) ([low, high] for the last): a value
    rounded onto the next bin's edge steps back one unit of ``digits``, so the released value
    re-encodes to the bin drawn (where the bin holds a value with those decimals)."""
    step = 10.0 ** -np.asarray(digits, dtype=float)
    first = _round(np.ceil(np.round(low / step, 6)) * step, digits)
    top = _round(np.floor(np.round(high / step, 6)) * step, digits)
    # the next bin's edge within float error (a lattice edge 1.7000000000000002 is 1.7): 1.7
    # there re-encodes to that bin, and a cell [1.69, 1.70) wrote half its rows at 1.70
    top = np.where((top >= high - step * 1e-6) & ~last, _round(top - step, digits), top)
    fits = first <= top
    return np.where(fits, np.clip(values, first, np.where(fits, top, first)), values)


def _inward(lower: float, upper: float, digits: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The smallest and largest values with ``digits`` decimals (per row) within [lower, upper]
    (the bounds themselves where none lies between)."""
    scale = 10.0 ** np.asarray(digits, dtype=float)
    low, high = np.ceil(lower * scale - 1e-9) / scale, np.floor(upper * scale + 1e-9) / scale
    fits = low <= high
    return np.where(fits, low, lower), np.where(fits, high, upper)


def point_values(edges: np.ndarray, atoms: np.ndarray, whole: bool = False) -> np.ndarray:
    """Each flagged bin's roundest value (``roundest``), NaN elsewhere."""
    values = np.full(len(edges) - 1, np.nan)
    for cell in np.flatnonzero(atoms[: len(edges) - 1]):
        closed = cell == len(edges) - 2
        high = edges[cell + 1] if closed or not whole else edges[cell + 1] - 1
        values[cell] = roundest(edges[cell], high, closed=closed or whole)
    return values


def roundest(low: float, high: float, closed: bool = False) -> float:
    """The value of [low, high) ([low, high] when ``closed``) with the fewest significant
    digits, the nearest to 0 among those: 0 when the bin holds it, else the multiple of the
    largest step of 10^p, 5·10^(p-1), 2.5·10^(p-1), 10^(p-1), … in it (a bin [95.3, 100.2)
    gives 100, [-2, -1] gives -1, [4.98, 5.03) gives 5, [7.236, 7.266) gives 7.25). Heaped
    values sit on such numbers; a function of the public bin only."""
    if low <= 0 <= high and (closed or high > 0):
        return 0.0
    width = max(high - low, 1e-300)
    top = math.floor(math.log10(max(abs(low), abs(high), width)))
    for power in range(top, math.floor(math.log10(width)) - 2, -1):
        for factor, places in ((1.0, -power), (0.5, 1 - power), (0.25, 2 - power)):
            step = factor * 10.0**power
            first, last = math.ceil(low / step), math.floor(high / step)
            if not closed and last * step >= high:
                last -= 1
            if first <= last:
                k = first if first > 0 else last  # the nearest to 0
                return round(k * step, max(0, places))
    return low


def derive(
    column: CategoricalColumn | NumericColumn, table: pd.DataFrame | dict[str, pd.Series]
) -> pd.Series:
    """``column``'s values from the other columns of ``table``: its source column through the
    schema's public mapping, or its public formula (rounded to the column's ``precision``, to
    whole numbers for an integer column; not clipped to its bounds, so the identity holds on
    every row). NaN where a source is missing; typed as ``read_table`` types the column."""
    rule = column.derived_from
    if isinstance(rule, DerivedFormula):
        formula = rule.parsed
        index = table[formula.columns[0]].index  # a schema's formula reads a column at least
        numbers = pd.Series(formula.evaluate(table), index=index)
        if column.kind == "integer":
            numbers = numbers.round()
        elif column.precision is not None:
            numbers = numbers.round(column.precision)
        numbers[~np.isfinite(numbers)] = np.nan
    else:
        source = table[rule.column]
        values = source.map(rule.values)
        if isinstance(column, CategoricalColumn):
            return values.astype(object).where(source.notna())
        numbers = values.astype(float)
    if column.kind == "continuous":
        return numbers
    whole = column.missing or numbers.isna().any()  # NaN: a data value outside the bounds (log(0))
    return numbers.astype("Int64") if whole else numbers.astype(np.int64)
