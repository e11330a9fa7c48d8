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

import numpy as np
import pandas as pd

from synthpriv.datetimes import format_times
from synthpriv.domain import Dataset, Domain
from synthpriv.ids import KeyMaker
from synthpriv.schema import (
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
        # values outside a numeric column's bounds, clipped, by column: the operator's terminal
        # shows the counts (they read the raw table); they reach no release or manifest
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

    def _bin(self, column: NumericColumn, values: np.ndarray) -> np.ndarray:
        edges = self._edges[column.name]
        outside = int(np.count_nonzero((values < column.lower) | (values > column.upper)))
        if outside:  # for the operator's terminal only (``clipped``): never released
            self.clipped[column.name] = self.clipped.get(column.name, 0) + outside
        clipped = np.clip(values, column.lower, column.upper)
        bins = np.searchsorted(edges, clipped, side="right") - 1
        return np.clip(bins, 0, len(edges) - 2)

    def decode(self, codes: np.ndarray, rng: np.random.Generator) -> pd.DataFrame:
        """Typed values for codes: categories, a value drawn uniformly within the bin (integers
        within the bin's integers; a continuous column with a ``precision`` rounded to it, within
        its bounds), NaN for the missing code, derived columns from their source.
        Post-processing: costs no budget."""
        columns = {}
        for j, column in enumerate(self.schema.modelled):
            code = codes[:, j]
            missing = column.missing & (code == self.domain.shape[j] - 1)
            if isinstance(column, CategoricalColumn):
                categories = np.array(column.categories + [""], dtype=object)
                values = pd.Series(categories[np.where(missing, len(column.categories), code)])
                columns[column.name] = values.where(~missing)
            else:
                columns[column.name] = self._draw_in_bin(column, np.where(missing, 0, code), rng,
                                                         missing)
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
        missing: np.ndarray,
    ) -> pd.Series:
        edges = self._edges[column.name]
        low, high = edges[code], edges[code + 1]
        if column.kind == "continuous":
            values = rng.uniform(low, high)
            if column.precision is not None:  # as the data writes them: no spurious decimals
                values = np.round(values, column.precision)
            series = pd.Series(np.clip(values, *column.rounded_bounds()))
            return series.mask(missing)
        first = np.ceil(low)
        last = np.where(code == len(edges) - 2, np.floor(high), np.ceil(high) - 1)
        last = np.maximum(last, first)
        values = first + np.floor(rng.random(len(code)) * (last - first + 1))
        values = np.clip(values, math.ceil(column.lower), math.floor(column.upper))
        series = pd.Series(values.astype(np.int64))
        return series.astype("Int64").mask(missing) if column.missing else series


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
