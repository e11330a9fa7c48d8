"""Schema: the public domain of every column, declared by a person, never read from the data.

Column kinds:
* ``categorical``: a closed list of categories, or none: then the domain step finds the frequent
  values under DP (category discovery) and reads the rest as the column's ``other`` label, or as
  missing;
* ``integer`` / ``continuous``: public bounds ``[lower, upper]`` (either may be left out: the
  domain step then buys DP bounds) and bins, either ``bins`` equal-width bins over the bounds or
  explicit ``edges`` (first edge = lower, last = upper), or neither (the adaptive domain). A
  continuous column may give ``precision``: the decimals its released values are rounded to.
* ``date`` / ``datetime``: a calendar day or an instant, read as whole days / seconds since the
  epoch (synthpriv.datetimes) and then handled as an integer column (public or DP bounds, the
  fine grid, the adaptive domain); ``format`` (strftime) and ``timezone`` say how cells are
  written, and released values are written the same way. Bounds may be written as dates.
* ``id``: a unique key, never read into the model; the release holds fresh keys of its public
  ``format`` (synthpriv.ids). A repeated value refuses the table (naming column and rows).
* ``text``: free text, never read into the model; released empty, as a public ``placeholder``,
  or drawn uniformly from public ``values`` (no budget: they are public).
* any column with ``ignore: true`` (kind ``ignored``) is kept out of the model and the release;
  ``extra_columns: ignore`` ignores the file's columns the schema does not name.
* ``auto``: the kind itself is left to the run (``synthpriv schema infer`` drafts every column so,
  reading no cell): the domain step decides, under DP, whether the column is categorical, integer
  or continuous (synthpriv.kinds), then finds its domain under DP as for a column of that kind.
  Cells that do not fit the kind decided are read as missing (a fraction in a column decided
  integer is rounded), so no single cell can refuse a run.
Every column says whether missing values may occur; a missing value is a code of its own.
Category labels are compared and released exactly as written (spaces included) unless the
schema sets ``strip_labels: true``.

A column may be ``derived_from`` a categorical column by a public mapping (a code and its label,
a region and its country): it is not modelled, costs no budget and is filled in from its source
after sampling, so every synthetic row keeps the mapping. The data must obey it (checked on read).
A numeric column may instead be ``derived_from: {formula: log(wage)}``, a public formula over other
numeric columns (``synthpriv.formulas``), filled in the same way.

``constraints:`` lists public rules every synthetic row obeys (inequalities, forbidden or allowed
combinations of categories): their models are here, their checks against the schema and their
enforcement when sampling in ``synthpriv.constraints``.
"""

from __future__ import annotations

import difflib
import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import yaml
from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)

from synthpriv.errors import SchemaError
from synthpriv.formulas import Check, Formula, FormulaError, parse_check, parse_formula
from synthpriv.public_lists import LISTS, list_values
from synthpriv.rounds import is_narrow, narrow_values, round_values
from synthpriv.validation import describe_validation_error


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, sorted (linear time: schemas and headers can list
    100,000 names)."""
    return sorted(value for value, count in Counter(values).items() if count > 1)


class _WrittenInt(int):
    """An integer read from a schema file that keeps its text as written (``2003``, ``007``)."""

    written: str


class _WrittenFloat(float):
    """A float read from a schema file that keeps its text as written (``1.50``, not ``1.5``)."""

    written: str


def category_text(value: object) -> object:
    """A category as text. Categories are compared with the data's cells as text, so a YAML
    number in a category list (``categories: [2003, 2004]``) is taken as written in the schema
    file ('2003'; ``1.50`` stays '1.50'), or as Python prints it when the schema did not come from
    a file (an inline schema in a config: 1.50 gives '1.5'). YAML's unquoted booleans and null
    cannot be read back as written: they are refused with the fix (quote them)."""
    if isinstance(value, bool):
        raise ValueError(
            f"a category reads as the boolean {str(value).lower()}: YAML reads unquoted "
            "yes/no/true/false/on/off so. Quote each category as the data writes it ('yes', 'No')"
        )
    if value is None:
        raise ValueError(
            "a category is empty (null, ~ or nothing after '-'). Quote it as the data writes it "
            "('null'); an empty cell is a missing value: set 'missing: true' instead"
        )
    if isinstance(value, int | float):
        return getattr(value, "written", str(value))
    return value


class DerivedFrom(_Strict):
    """A public function of one categorical column: ``values`` maps each of its categories to
    this column's value (a missing source gives a missing value). Numeric keys are read as
    categories are (``category_text``)."""

    column: str
    values: dict[str, str | float]

    @field_validator("values", mode="before")
    @classmethod
    def _keys_as_text(cls, values: object) -> object:
        if isinstance(values, dict):
            return {category_text(key): value for key, value in values.items()}
        return values


class DerivedFormula(_Strict):
    """A public formula over other numeric columns (``log(wage)``, ``casual + registered``;
    the language: ``synthpriv.formulas``): the column is filled in from it after sampling."""

    formula: str

    @field_validator("formula")
    @classmethod
    def _parses(cls, text: str) -> str:
        parse_formula(text)  # FormulaError (a ValueError) names what the language refuses
        return text

    @property
    def parsed(self) -> Formula:
        return parse_formula(self.formula)


def _derived_kind(value: object) -> str:
    """Which form of ``derived_from`` a mapping is (so an error speaks of that form only)."""
    if isinstance(value, DerivedFormula) or (isinstance(value, dict) and "formula" in value):
        return "formula"
    return "mapping"


Derived = Annotated[
    Annotated[DerivedFrom, Tag("mapping")] | Annotated[DerivedFormula, Tag("formula")],
    Discriminator(_derived_kind),
]


class KeptRows(_Strict):
    """The domain step's DP count of the rows holding a discovered column's kept categories: the
    sum of their noisy counts (``noisy_selection``) and its noise σ (σ·√k for k kept values);
    where auto columns ran the kinds pass, that pass's record count n̂ and a σ for it
    (``privacy.domain_budget.records_estimate``, ``records_sigma``). DP outputs
    (post-processing); ``marginals.compress.missing_estimate`` reads them."""

    count: float
    sigma: float = Field(ge=0)
    records: float | None = None
    records_sigma: float | None = Field(default=None, gt=0)


class KeptCount(_Strict):
    """The domain step's noisy count of one kept value of a discovered column (DP partition
    selection, ``noisy_selection``): the count, its noise σ (count units, per person where
    ``data.person`` is set) and the threshold T it passed (public given the kinds decided).
    A DP output (post-processing); ``marginals.compress.with_discovery`` combines it with the
    recipe's 1-way count of the same cell. Conditioned on passing T, a count near T errs high
    (by up to about 0.8σ at T)."""

    count: float
    sigma: float = Field(gt=0)
    threshold: float


class HeapCount(_Strict):
    """The domain step's noisy count of one value heap discovery kept (DP partition selection,
    ``noisy_selection`` at σ_h = the plan's ``heap_sigma``): the value, its count (rows, as
    the fine 1-way marginal counts them) and σ_h. A DP output (post-processing);
    ``marginals.compress.with_heaps`` combines it with the fine 1-way count of the point mass's
    own cell. Conditioned on passing the heap threshold, a count near it errs high."""

    value: float
    count: float
    sigma: float = Field(gt=0)


class WeekdayCounts(_Strict):
    """The domain step's noisy weekday histogram of an auto column decided date
    (``privacy.weekdays``: 7 counts, Monday … Sunday, at σ_w): a DP output, released in the
    manifest's schema, from which the column's ``weekdays`` were decided (post-processing)."""

    counts: list[float] = Field(min_length=7, max_length=7)
    sigma: float = Field(gt=0)


class BucketCount(_Strict):
    """The domain step's noisy count of one DP bounds bucket (``privacy.bounds``: a sign ×
    power-of-two bucket, its values ``lower`` to ``upper`` as ``Buckets.value_range`` gives
    them, before clipping to the column's bounds), at the histogram's σ (count units, per person
    where ``data.person`` is set). A DP output (the bucket histogram is on the ledger already;
    post-processing); ``marginals.compress.with_buckets`` reads it as a measurement of the sum
    of the cells the bucket's rows land in."""

    lower: float
    upper: float
    count: float
    sigma: float = Field(gt=0)


def public_list_categories(written: dict, column: str) -> list[str]:
    """The categories ``categories: {list: NAME}`` (optionally ``extra: [labels]``, e.g. the
    ``other`` label) names on column ``column``: the public list's values (synthpriv.public_lists;
    public knowledge, resolved when the schema is read), then the extra labels. ValueError naming
    the column, the key and the known lists for anything else."""
    name, extra = written.get("list"), written.get("extra", [])
    unknown = sorted(set(written) - {"list", "extra"})
    if unknown or not isinstance(name, str) or not isinstance(extra, list):
        raise ValueError(
            f"column '{column}': categories as a mapping takes 'list: <name>' (and optionally "
            f"'extra: [labels]'), found keys {sorted(written)}. Write e.g. categories: "
            "{list: us_state_code}")
    if name not in LISTS:
        raise ValueError(f"column '{column}': categories: {{list: {name}}} names no public list"
                         + _known_lists_hint(name))
    return list_values(name) + [category_text(label) for label in extra]


class MembershipTest(_Strict):
    """The figures of a list's membership test (synthpriv.list_adoption.membership): DP outputs
    and the public bar."""

    in_list: float
    sigma: float
    bar: float


class AdoptedList(_Strict):
    """The public list the domain step adopted for a discovered column (synthpriv.list_adoption)
    and the number of categories DP discovery kept, all of them in it (DP outputs); when it kept
    none, ``test``: the membership test that adopted it (in-list noisy sum, its σ, the bar)."""

    name: str
    discovered: int = Field(ge=0)
    test: MembershipTest | None = None


def known_lists(lists: list[str] | None) -> list[str] | None:
    """``lists`` (a column's candidate public lists) when every name is a known list; ValueError
    naming the unknown one and the known lists otherwise."""
    for name in lists or []:
        if name not in LISTS:
            raise ValueError(f"lists: '{name}' names no public list" + _known_lists_hint(name))
    return lists


def _known_lists_hint(name: str) -> str:
    """The tail of an unknown-list message: the closest known name, then all of them."""
    guess = difflib.get_close_matches(name, list(LISTS), n=1, cutoff=0.5)
    return (f"{f' (did you mean {guess[0]}?)' if guess else ''}; known lists: "
            f"{', '.join(LISTS)} (docs/schema.md, 'Public lists')")


class CategoricalColumn(_Strict):
    """A column whose values come from a public, closed list of categories: text, compared with
    the data's cells as written (numbers in the list are accepted: ``category_text``), or a named
    public list (``categories: {list: us_state_code}``: ``public_list_categories``). Without
    ``categories`` the domain step discovers them under DP (synthpriv.domain_stage)."""

    name: str
    kind: Literal["categorical"]
    categories: list[str] | None = None
    missing: bool = False
    derived_from: Derived | None = None
    other: str | None = Field(
        default=None, description="the label a value outside the categories is read as (listed "
        "among the categories; with no categories given: the values DP discovery does not keep)",
    )
    unknown_categories: Literal["error", "missing"] | None = Field(
        default=None, description="this column's policy for values outside its categories "
        "(overrides the schema's); the domain step sets 'missing' on discovered columns",
    )
    kept_rows: KeptRows | None = Field(
        default=None, description="set by the DP domain step on a discovered column whose "
        "values not kept are read as missing (a DP output): the noisy count of rows holding the "
        "kept categories and its σ. With the 1-way marginal it tells the adaptive domain "
        "whether the missing code holds rows (dropped categories) or only noise",
    )
    lists: list[str] | None = Field(
        default=None, description="public lists (synthpriv.public_lists) the column may be "
        "written in, most likely first: with no categories given, DP discovery runs and, when "
        "every category it keeps (at least list_adoption.MIN_DISCOVERED) is in one of them, the "
        "first such list becomes the column's categories (post-processing of the DP output)",
    )
    adopted_list: AdoptedList | None = Field(
        default=None, description="set by the DP domain step when it adopted one of 'lists' "
        "(a DP output, released in the manifest's schema): the list and how many categories "
        "discovery kept",
    )
    kept_counts: list[KeptCount | None] | None = Field(
        default=None, description="set by the DP domain step on a discovered column (a DP "
        "output, released in the manifest's schema): one entry per category, the noisy count "
        "discovery kept it with, its σ and the threshold it passed; none for the 'other' label "
        "(its cell also holds the values not kept). The marginals stage combines them with its "
        "1-way counts (no budget: post-processing)",
    )

    @field_validator("lists")
    @classmethod
    def _known(cls, lists: list[str] | None) -> list[str] | None:
        return known_lists(lists)

    @field_validator("other", mode="before")
    @classmethod
    def _other_as_text(cls, other: object) -> object:
        return other if other is None else category_text(other)

    @field_validator("categories", mode="before")
    @classmethod
    def _numbers_as_text(cls, categories: object, info: ValidationInfo) -> object:
        if isinstance(categories, dict):
            return public_list_categories(categories, str(info.data.get("name", "?")))
        if isinstance(categories, list):
            return [category_text(category) for category in categories]
        return categories

    @model_validator(mode="after")
    def _unique(self) -> CategoricalColumn:
        listed = len(self.categories or [])
        if self.kept_counts is not None and len(self.kept_counts) != listed:
            raise ValueError(
                f"kept_counts of '{self.name}' has {len(self.kept_counts)} entries for {listed} "
                "categories: give one per category (null for 'other'), or leave kept_counts out "
                "(the domain step writes it)"
            )
        if self.categories is None:
            if self.other is None and not self.missing:
                raise ValueError(
                    f"'{self.name}' lists no categories, so DP discovery keeps only its frequent "
                    "values; the others need somewhere to go: set 'other: <label>' (e.g. other: "
                    "Other) or 'missing: true', or list its public categories"
                )
            if self.derived_from is not None:
                raise ValueError(f"derived column '{self.name}' needs its categories listed")
            return self
        if not self.categories and not (self.unknown_categories == "missing" and self.missing):
            raise ValueError(
                f"categories of '{self.name}' is an empty list: list its categories, or leave "
                "'categories' out to let DP category discovery find them"
            )
        duplicated = repeated(self.categories)
        if duplicated:
            raise ValueError(f"categories of '{self.name}' repeat {duplicated}; list each once")
        if self.other is not None and self.other not in self.categories:
            raise ValueError(
                f"other: '{self.other}' of '{self.name}' is not one of its categories; list it "
                "among them (values outside the list are read as it)"
            )
        if self.unknown_categories == "missing" and not self.missing:
            raise ValueError(
                f"unknown_categories: missing on '{self.name}' needs 'missing: true'"
            )
        return self

    @property
    def discovered(self) -> bool:
        """True when the schema lists no categories: the domain step discovers them (DP)."""
        return self.categories is None


FINE_CELLS = 1024  # cells of an adaptive column's fine public grid (see NumericColumn.bin_edges)


class GridShape(_Strict):
    """Where an adaptive column's fine cells go: segments [lower, breaks[0]), [breaks[0],
    breaks[1]), …, [breaks[-1], upper] and each one's relative ``mass``; ``synthpriv.grid``
    gives each segment cells in proportion to its mass (at least one; never more than the
    values it holds), equal-width within. The DP domain step writes the noisy mass of the
    column's octaves (a DP output, like the bounds); a person may write one too."""

    breaks: list[float]
    mass: list[float]

    @model_validator(mode="after")
    def _consistent(self) -> GridShape:
        if len(self.mass) != len(self.breaks) + 1:
            raise ValueError(f"grid_shape: {len(self.breaks)} breaks make "
                             f"{len(self.breaks) + 1} segments, but mass lists {len(self.mass)} "
                             "values; give one mass per segment")
        if not all(math.isfinite(b) for b in self.breaks) or any(
                b <= a for a, b in zip(self.breaks, self.breaks[1:], strict=False)):
            raise ValueError(f"grid_shape: breaks must be finite and increase strictly, got "
                             f"{self.breaks}")
        if not all(math.isfinite(m) and m >= 0 for m in self.mass):
            raise ValueError(f"grid_shape: every mass must be a finite number ≥ 0, got "
                             f"{self.mass}")
        return self


class NumericColumn(_Strict):
    """A numeric column with bounds; values outside them are clipped before any query (or read
    as missing: ``outside``). A bound left out is bought under DP by the domain step
    (synthpriv.domain_stage)."""

    name: str
    kind: Literal["integer", "continuous"]
    lower: float | None = None
    upper: float | None = None
    bins: int | None = Field(default=None, ge=1, le=10_000)
    edges: list[float] | None = None
    missing: bool = False
    derived_from: Derived | None = None
    precision: int | None = Field(
        default=None, le=15, description="continuous only: decimals (1 to 15) the released values "
        "are rounded to (post-processing); none: full float precision",
    )
    spread_clipped: list[Literal["lower", "upper"]] = Field(
        default_factory=list, description="sides whose bound the DP domain step chose (set by "
        "it): rows decoded at that bound's own fine cell, where the values beyond the bound are "
        "clipped, are released spread over the range's outermost 1/32 instead of stacked on the "
        "bound (a spike the data does not hold)",
    )
    coerce: bool = Field(
        default=False, description="cells that are not finite numbers are read as missing, and "
        "fractions in an integer column are rounded, instead of refusing the table (set by the "
        "DP kind decision of an 'auto' column; needs missing: true)",
    )
    outside: Literal["clip", "missing"] = Field(
        default="clip", description="what a value outside [lower, upper] becomes before any "
        "query: 'clip' (the nearest bound) or 'missing' (the missing code; needs missing: true). "
        "The domain step sets 'missing' where a continuous column's DP bounds read zeros "
        "only: clipped, every non-zero value would be released as the bound, a value nobody "
        "has (an integer column's bounds become [0, 0.5]: clipped into 0's cell)",
    )
    point_masses: list[float] | None = Field(
        default=None, description="values the column piles up on (0, a top-code, a default "
        "rate), public knowledge or found under DP by the domain step: each gets a fine cell of "
        "its own on the adaptive grid, decoded at exactly that value (adaptive columns only: no "
        "bins or edges)",
    )
    grid_shape: GridShape | None = Field(
        default=None, description="where the adaptive fine grid's cells go (breaks inside the "
        "bounds, a relative mass per segment): set by the DP domain step from its noisy octave "
        "histogram (post-processing), so a column spread over many octaves gets cells where its "
        "mass is; adaptive columns with both bounds only",
    )
    heap_counts: list[HeapCount] | None = Field(
        default=None, description="set by the DP domain step (a DP output, released in the "
        "manifest's schema): the noisy count and σ heap discovery kept each of its point masses "
        "with. The marginals stage combines each with the fine 1-way count of that value's own "
        "cell (no budget: post-processing); declared point masses have none",
    )
    round_counts: list[HeapCount] | None = Field(
        default=None, description="set by the DP domain step (a DP output, released in the "
        "manifest's schema): the noisy count and σ of each of the column's round values "
        "(round_values on its DP bounds and grid shape; a continuous column's small lattice of "
        "its precision, rounds.lattice_values), named before the heap histogram was "
        "noised and released without its threshold (synthpriv.privacy.candidates). The "
        "marginals stage combines each with the fine 1-way count of that value's own cell and "
        "keeps alone on the measured grid those whose count shows a pile (no budget)",
    )

    bucket_counts: list[BucketCount] | None = Field(
        default=None, description="set by the DP domain step (a DP output, released in the "
        "manifest's schema): the noisy counts of the DP bounds' power-of-two buckets that hold "
        "the column's range, and of any bucket beyond a bound that the noise shows. The "
        "marginals stage combines each with the sum of the 1-way cells its rows land in (no "
        "budget: post-processing)",
    )

    @model_validator(mode="after")
    def _check_bucket_counts(self) -> NumericColumn:
        buckets = self.bucket_counts or []
        if buckets and (self.needs_bounds or not self.adaptive):
            raise ValueError(f"'{self.name}': bucket_counts measure an adaptive column's cells "
                             "within its bounds; drop bucket_counts (the domain step writes "
                             "them)")
        if any(b.upper < b.lower for b in buckets) or any(
                b.lower < a.upper for a, b in zip(buckets, buckets[1:], strict=False)):
            raise ValueError(f"'{self.name}': bucket_counts must be disjoint buckets in "
                             "increasing order, each with lower ≤ upper; drop bucket_counts "
                             "(the domain step writes them)")
        return self

    @model_validator(mode="after")
    def _check_grid_shape(self) -> NumericColumn:
        shape, name = self.grid_shape, self.name
        if shape is None:
            return self
        if not self.adaptive or self.needs_bounds:
            raise ValueError(f"'{name}': grid_shape places the adaptive grid's cells within "
                             "the bounds; it needs lower and upper and no 'bins'/'edges' (or "
                             "drop grid_shape)")
        outside = [b for b in shape.breaks if not self.lower < b < self.upper]
        if outside:
            raise ValueError(f"'{name}': grid_shape breaks {outside} are not strictly inside "
                             f"the bounds [{self.lower}, {self.upper}]; drop them")
        if self.kind == "integer" and any(b != round(b) for b in shape.breaks):
            raise ValueError(f"'{name}' is an integer column: grid_shape breaks must be whole "
                             f"numbers, got {shape.breaks}")
        return self

    @model_validator(mode="after")
    def _check_point_masses(self) -> NumericColumn:
        if not self.point_masses:
            if self.heap_counts:
                raise ValueError(f"'{self.name}': heap_counts need point_masses (one per kept "
                                 "heap); drop heap_counts (the domain step writes them)")
            return self
        name = self.name
        if not self.adaptive:
            raise ValueError(f"'{name}': point_masses take cells on the adaptive grid; drop "
                             "'bins'/'edges', or drop point_masses (an explicit edge can make "
                             "a cell [v, v+1) itself)")
        for value in self.point_masses:
            if not math.isfinite(value):
                raise ValueError(f"'{name}': point mass {value} is not a finite number")
            if self.kind == "integer" and value != round(value):
                raise ValueError(f"'{name}' is an integer column: point mass {value} is not a "
                                 "whole number; round it or declare the column continuous")
            if self.precision is not None and round(value, self.precision) != value:
                raise ValueError(f"'{name}': point mass {value} has more than precision = "
                                 f"{self.precision} decimals; round it or raise precision")
            low, high = self.lower, self.upper
            if (low is not None and value < low) or (high is not None and value > high):
                raise ValueError(f"'{name}': point mass {value} lies outside its bounds "
                                 f"[{low}, {high}]; drop it or widen the bounds")
        if len(set(self.point_masses)) != len(self.point_masses):
            raise ValueError(f"'{name}': point_masses repeat a value: {self.point_masses}")
        stray = [h.value for h in self.heap_counts or () if h.value not in self.point_masses]
        if stray:
            raise ValueError(f"'{name}': heap_counts give values {stray} that are not among its "
                             "point_masses; drop them (the domain step writes heap_counts)")
        return self

    @model_validator(mode="after")
    def _check_coerce(self) -> NumericColumn:
        if self.coerce and not self.missing:
            raise ValueError(f"'{self.name}': coerce reads cells that are not numbers as missing, "
                             "so it needs 'missing: true'")
        return self

    @model_validator(mode="after")
    def _check_outside(self) -> NumericColumn:
        if self.outside == "missing" and not self.missing:
            raise ValueError(f"'{self.name}': outside: missing reads values outside the bounds as "
                             "missing, so it needs 'missing: true' (or use outside: clip)")
        return self

    @model_validator(mode="after")
    def _check_precision(self) -> NumericColumn:
        if self.precision is None:
            return self
        if self.kind != "continuous":
            raise ValueError(
                f"'{self.name}': precision applies to continuous columns (an integer column's "
                "values are whole already); remove it, or declare the column continuous"
            )
        if self.precision < 1:
            raise ValueError(
                f"'{self.name}': precision {self.precision} asks for whole values: declare the "
                "column 'kind: integer' instead, or give 1 decimal or more"
            )
        if self.needs_bounds:
            return self
        lower, upper = self.rounded_bounds()
        if lower > upper:
            raise ValueError(
                f"'{self.name}': no value with {self.precision} decimals lies within "
                f"[{self.lower}, {self.upper}]; raise precision or widen the bounds"
            )
        return self

    def rounded_bounds(self) -> tuple[float, float]:
        """The smallest and largest values within [lower, upper] that have ``precision``
        decimals (the bounds themselves without a precision)."""
        if self.precision is None:
            return self.lower, self.upper
        scale = 10.0**self.precision
        return math.ceil(self.lower * scale) / scale, math.floor(self.upper * scale) / scale

    @property
    def needs_bounds(self) -> bool:
        """True when a bound is left out: the domain step buys it under DP."""
        return self.lower is None or self.upper is None

    @model_validator(mode="after")
    def _check_bins(self) -> NumericColumn:
        if self.needs_bounds:
            given = [b for b in (self.lower, self.upper) if b is not None]
            if not all(math.isfinite(b) for b in given):
                raise ValueError(f"'{self.name}' needs finite bounds, got {given}")
            if self.edges is not None:
                raise ValueError(
                    f"edges of '{self.name}' need both bounds: give lower and upper (the first "
                    "and last edge), or drop the edges to let the DP domain step choose the bins"
                )
            if self.derived_from is not None:
                raise ValueError(f"derived column '{self.name}' needs lower and upper")
            return self
        if not (math.isfinite(self.lower) and math.isfinite(self.upper)) or self.lower >= self.upper:
            raise ValueError(
                f"'{self.name}' needs finite bounds with lower < upper, "
                f"got [{self.lower}, {self.upper}]"
            )
        if self.bins is not None and self.edges is not None:
            raise ValueError(f"'{self.name}': give either bins or edges, not both")
        if self.edges is not None:
            edges = self.edges
            if len(edges) < 2 or any(b <= a for a, b in zip(edges, edges[1:], strict=False)):
                raise ValueError(f"edges of '{self.name}' must increase strictly, got {edges}")
            if edges[0] != self.lower or edges[-1] != self.upper:
                raise ValueError(
                    f"edges of '{self.name}' must start at lower={self.lower} and end at "
                    f"upper={self.upper}, got {edges[0]} .. {edges[-1]}"
                )
        return self

    @property
    def adaptive(self) -> bool:
        """True when the schema gives neither ``edges`` nor ``bins``: the column is encoded on a
        fine public grid (``bin_edges``) and the marginals stage chooses its bins from noisy
        1-way counts (synthpriv.marginals.compress)."""
        return self.edges is None and self.bins is None

    def bin_edges(self, rounds: bool = True) -> np.ndarray:
        """Bin edges over [lower, upper]; the last bin is closed on the right.

        Explicit ``edges`` win; ``bins: N`` gives N equal-width bins (one per integer when N is
        the number of integers). Without either, the fine grid of an adaptive column: one cell
        per integer when there are at most FINE_CELLS, else about FINE_CELLS cells — equal-width,
        or placed by ``grid_shape`` (``synthpriv.grid.shaped_edges``: cells in proportion to the
        noisy mass of each octave) — with the bounds (and -1, 0 and 1, for integers) as cells of
        their own, since top-codes, zeros and "-1 = not applicable" codes are where real columns
        pile up. Each of ``point_masses`` v gets a cell of its own too: [v, v+1) for integers,
        [v, nextafter(v)) for continuous columns, which holds v alone; so does each of a wide
        integer column's ``round_values`` (typed amounts: 500, 15,000), unless ``rounds`` is
        false (dates: their day numbers are not typed).
        The grid is public: it depends on the bounds, the grid shape and the point masses only.
        """
        if self.edges is not None:
            return np.asarray(self.edges, dtype=float)
        if self.kind == "integer":
            lower, upper = math.ceil(self.lower), math.floor(self.upper)
            count = upper - lower + 1
            if self.bins == count or (self.bins is None and count <= FINE_CELLS):
                return np.append(np.arange(lower, upper + 1, dtype=float), upper + 1.0)
            if self.bins is None:
                inner = self._base_edges(lower + 1, upper, FINE_CELLS - 2)
                points = [lower, lower + 1, upper, upper + 1]
                points += [p for p in (-1, 0, 1, 2) if lower < p <= upper]
                points += [p + step for p in self.point_masses or () for step in (0, 1)]
                if rounds and len(typed := self.round_values()):
                    inner = _without_slivers(inner, typed)
                    points += [p + step for p in typed for step in (0, 1)]
                return np.unique(np.concatenate([inner, points])).astype(float)
        if not self.adaptive:
            return np.linspace(self.lower, self.upper, (self.bins or FINE_CELLS) + 1)
        edges = self._base_edges(self.lower, self.upper, FINE_CELLS)
        if self.kind == "continuous" and self.point_masses:
            # no sliver beside a point mass's cell: a grid edge closer than half its cell to it
            # goes (a sliver's values would need more decimals than the column's)
            # (nor beside a bound: a point mass within half a cell of one takes the sliver in,
            # [lower, nextafter(v)) or [v, upper], and is written at v: a DP bound of -2⁻¹⁶ below
            # a heap at 0 would otherwise release -0.00001)
            first, last = np.diff(edges)[[0, -1]] / 2  # half the bounds' cells
            cells = [_point_cell(v) for v in self.point_masses]
            points = np.array(
                [left for left, _ in cells if not self.lower < left < self.lower + first]
                + [right for _, right in cells if not self.upper - last < right < self.upper])
            halves = self.grid_cell_width(points) / 2
            near = (np.abs(edges[:, None] - points[None, :]) < halves[None, :]).any(axis=1) \
                if len(points) else np.zeros(len(edges), dtype=bool)
            near[[0, -1]] = False
            edges = np.unique(np.concatenate([edges[~near], points]))
        return edges

    def _base_edges(self, lower: float, upper: float, cells: int) -> np.ndarray:
        """About ``cells`` cells over [lower, upper] before the special cells are added: placed
        by ``grid_shape`` when there is one, else equal-width (integers: rounded edges)."""
        from synthpriv.grid import shaped_edges

        whole = self.kind == "integer"
        if self.grid_shape is None:
            edges = np.linspace(lower, upper, cells + 1)
            return np.round(edges) if whole else edges
        step = 1.0 if whole else None if self.precision is None else 10.0 ** -self.precision
        return shaped_edges(lower, upper, self.grid_shape.breaks, self.grid_shape.mass, cells,
                            step)

    def grid_cell_width(self, values: np.ndarray) -> np.ndarray:
        """The width of the fine cell (before any point mass's own) each of ``values`` lies in:
        the grid's local resolution, from which a continuous column's decimals and the slivers
        beside its point masses are judged. Public: bounds and grid shape only."""
        values = np.asarray(values, dtype=float)
        edges = self._base_edges(self.lower, self.upper, FINE_CELLS)
        cells = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, len(edges) - 2)
        return np.diff(edges)[cells]

    @property
    def narrow_range(self) -> bool:
        """Whether this is an adaptive integer column whose bounds hold a narrow range
        (``rounds.is_narrow``: every value inside is named, none by roundness). Public."""
        if not (self.kind == "integer" and self.adaptive) or self.needs_bounds:
            return False
        return is_narrow(math.ceil(self.lower), math.floor(self.upper))

    def round_values(self) -> np.ndarray:
        """The round values (``synthpriv.rounds``) a wide adaptive integer column's fine grid
        gives cells of their own, or every value of a narrow range (``rounds.narrow_values``);
        empty for other columns, and for a range of at most FINE_CELLS integers that is not
        narrow (each is a fine cell already). Public: bounds and grid shape."""
        if not (self.kind == "integer" and self.adaptive) or self.needs_bounds:
            return np.zeros(0)
        lower, upper = math.ceil(self.lower), math.floor(self.upper)
        if self.narrow_range:
            return narrow_values(lower, upper)
        if upper - lower + 1 <= FINE_CELLS:
            return np.zeros(0)
        shape = self.grid_shape
        return round_values(lower, upper,
                            None if shape is None else shape.breaks,
                            None if shape is None else shape.mass)

    def point_mass_cells(self) -> np.ndarray:
        """Index in ``bin_edges`` of the fine cell each of ``point_masses`` holds alone (empty
        without point masses)."""
        if not self.point_masses or not self.adaptive:
            return np.zeros(0, dtype=np.int64)
        edges = self.bin_edges()
        values = np.asarray(self.point_masses, dtype=float)
        cells = np.searchsorted(edges, values, side="right") - 1
        return np.clip(cells, 0, len(edges) - 2).astype(np.int64)


def _without_slivers(edges: np.ndarray, values: np.ndarray) -> np.ndarray:
    """An integer grid's ``edges`` less those within half their cell of a one-value cell
    [v, v+1) about to be added: no sliver of a few integers beside it, which would be a lone
    cell of the measured grid too and, sharing a coarse cell with v, take an equal share of
    v's mass (a 3-integer cell beside 10,000 held as much as 10,000). Public: the grid only."""
    half = np.diff(edges) / 2
    near = np.zeros(len(edges), dtype=bool)
    for value in values:
        cell = int(np.clip(np.searchsorted(edges, value, side="right") - 1, 0, len(half) - 1))
        near |= (np.abs(edges - value) < half[cell]) | (np.abs(edges - value - 1) < half[cell])
    near[[0, -1]] = False
    return edges[~near]


def _point_cell(value: float) -> tuple[float, float]:
    """The edges of a continuous point mass's own cell: [v, nextafter(v)), which holds v alone
    (at the upper bound the grid then ends one float above it: values are clipped to the bound
    first, so that cell holds the bound alone)."""
    return value, float(np.nextafter(value, np.inf))


WEEKDAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # how `weekdays` is written back


class DatetimeColumn(NumericColumn):
    """A ``date`` (days since 1970-01-01) or ``datetime`` (seconds since 1970-01-01T00:00Z)
    column, handled as an integer column over those numbers (synthpriv.datetimes): bounds may be
    public (written as dates, ``2021-03-04``) or bought under DP like any numeric column."""

    kind: Literal["date", "datetime"]  # type: ignore[assignment]
    format: str | None = Field(
        default=None, description="strftime pattern the cells are written in (and the release "
        "is written in); none: ISO 8601 (2021-03-04, 2021-03-04T10:00:00+01:00)",
    )
    timezone: str | None = Field(
        default=None, description="datetime only: the zone cells without one are read in and "
        "released values are written in (+01:00, Europe/Paris); none: UTC, written without zone",
    )
    weekdays: list[str] | None = Field(
        default=None, description="public knowledge: the days of the week every value falls on "
        "(trading or business days: [Mon, Tue, Wed, Thu, Fri]); the release draws its dates on "
        "these days only (in the column's zone). Names or three-letter abbreviations, any case",
    )
    weekday_counts: WeekdayCounts | None = Field(
        default=None, description="set by the DP domain step for an auto column decided date (a "
        "DP output, released in the manifest's schema): its noisy weekday counts and their σ, "
        "from which its weekdays were decided",
    )
    derived_from: None = None  # type: ignore[assignment]
    precision: None = None  # type: ignore[assignment]
    point_masses: None = None  # type: ignore[assignment]  # not for dates (docs/schema.md)
    grid_shape: None = None  # type: ignore[assignment]  # years, not octaves: equal-width

    @model_validator(mode="before")
    @classmethod
    def _bounds_as_numbers(cls, raw: object) -> object:
        if isinstance(raw, dict) and raw.get("kind") in ("date", "datetime"):
            from synthpriv.datetimes import as_number

            raw = dict(raw)
            for key in ("lower", "upper"):
                raw[key] = as_number(raw.get(key), raw["kind"], raw.get("format"),
                                     raw.get("timezone"))
            if raw.get("edges") is not None:
                raw["edges"] = [as_number(edge, raw["kind"], raw.get("format"),
                                          raw.get("timezone")) for edge in raw["edges"]]
        return raw

    @model_validator(mode="after")
    def _zone_for_datetimes(self) -> DatetimeColumn:
        if self.weekdays is not None:
            from synthpriv.datetimes import weekday_numbers

            try:
                self.weekdays = [WEEKDAY_NAMES[day] for day in weekday_numbers(self.weekdays)]
            except ValueError as error:
                raise ValueError(f"'{self.name}': weekdays: {error}") from None
        if self.timezone is not None and self.kind == "date":
            raise ValueError(f"'{self.name}': timezone applies to datetime columns, not dates")
        if self.timezone is not None:
            from synthpriv.datetimes import zone

            try:
                import pandas as pd

                pd.Timestamp(0, tz=zone(self.timezone))
            except Exception:  # noqa: BLE001 - any refusal of pandas is the same fix
                raise ValueError(f"'{self.name}': timezone '{self.timezone}' is neither an "
                                 "offset (+01:00) nor a zone name (Europe/Paris)") from None
        return self

    def bin_edges(self) -> np.ndarray:
        """The edges of the integer column over the same days/seconds (one grid rule)."""
        twin = self.model_dump(exclude={"format", "timezone", "weekdays", "weekday_counts"}) | {
            "kind": "integer"}
        return NumericColumn.model_validate(twin).bin_edges(rounds=False)


class IdColumn(_Strict):
    """A unique key: never encoded or modelled; the release holds fresh keys drawn from its public
    ``format`` (synthpriv.ids), never a real key. A repeated value refuses the table."""

    name: str
    kind: Literal["id"]
    format: str | None = Field(
        default=None, description="template of a key: 9 digit, A uppercase, a lowercase, X "
        "uppercase or digit, \\ escapes, others literal; none: 16 characters of X",
    )
    missing: bool = False
    refuse_repeats: bool = Field(
        default=True, description="refuse the table when a key repeats (a declared key must be "
        "unique); false for an id decided under DP from an auto column (synthpriv.kinds): a "
        "refusal would turn on one row, and keys are never read anyway",
    )
    derived_from: None = None
    person: bool = Field(
        default=False, description="set by data.person (synthpriv.persons), not by hand: the "
        "column names a person, so keys repeat (a person's rows); its keys are read only to bound "
        "each person's rows and are blanked before anything else sees the table",
    )

    @model_validator(mode="after")
    def _large_space(self) -> IdColumn:
        if self.format is not None:
            from synthpriv.ids import check_format

            check_format(self.name, self.format)
        return self


class TextColumn(_Strict):
    """Free text: never encoded or modelled, never released. The release writes the public
    ``placeholder`` (none: an empty cell), or draws uniformly from public ``values``."""

    name: str
    kind: Literal["text"]
    placeholder: str | None = None
    values: list[str] | None = Field(default=None, min_length=1)
    missing: bool = True
    derived_from: None = None

    @model_validator(mode="after")
    def _one_source(self) -> TextColumn:
        if self.placeholder is not None and self.values is not None:
            raise ValueError(f"'{self.name}': give a placeholder or values, not both")
        return self


class IgnoredColumn(_Strict):
    """A column kept out of the model and out of the release (``ignore: true``); its cells are
    never read. The file may leave it out."""

    name: str
    kind: Literal["ignored"] = "ignored"
    ignore: Literal[True] = True
    derived_from: None = None
    missing: bool = True


UNMODELLED = (IdColumn, TextColumn, IgnoredColumn)


class AutoColumn(_Strict):
    """A column whose kind the run decides under DP (synthpriv.kinds): categorical, integer,
    continuous, date/datetime (in one public format), text or id, from noisy counts of the cells
    that read as text, numbers and dates, and of the values that occur once. Its domain is then
    found under DP too, so it is always ``missing: true`` (a cell that does not fit the kind
    decided is read as missing). Give its kind where it is public knowledge: that saves the
    decision's budget."""

    name: str
    kind: Literal["auto"]
    missing: Literal[True] = True
    derived_from: None = None
    lists: list[str] | None = Field(
        default=None, description="public lists its values may be written in: kept when the "
        "run decides it categorical (see CategoricalColumn.lists)")

    @field_validator("lists")
    @classmethod
    def _known(cls, lists: list[str] | None) -> list[str] | None:
        return known_lists(lists)


def _in_domain(column: CategoricalColumn | NumericColumn, value: str | float) -> bool:
    """Whether ``value`` is one of ``column``'s values (a category, or a number within bounds,
    whole for an integer column)."""
    if isinstance(column, CategoricalColumn):
        return value in column.categories
    if isinstance(value, str) or column.needs_bounds:
        return False
    whole = column.kind != "integer" or float(value).is_integer()
    return whole and column.lower <= value <= column.upper


Column = Annotated[
    CategoricalColumn | NumericColumn | DatetimeColumn | AutoColumn | IdColumn | TextColumn
    | IgnoredColumn, Field(discriminator="kind")]
AnyColumn = (CategoricalColumn | NumericColumn | AutoColumn | IdColumn | TextColumn
             | IgnoredColumn)


# --- Public constraints (the schema's ``constraints:`` list; enforced by synthpriv.constraints) ---


class CheckRule(_Strict):
    """An inequality over numeric columns, a comparison chain of formulas: ``Accept <= Apps``,
    ``Top10 <= Top25 <= 100``, ``Enroll <= Accept + 10``."""

    check: str

    @field_validator("check")
    @classmethod
    def _parses(cls, text: str) -> str:
        parse_check(text)
        return text

    @property
    def parsed(self) -> Check:
        return parse_check(self.check)


def _values_as_text(values: object) -> object:
    """A value or a list of values of a categorical column, as categories are read."""
    if isinstance(values, list):
        return [category_text(v) for v in values]
    return [category_text(values)]


CategoryValues = Annotated[list[str], BeforeValidator(_values_as_text)]


class ForbiddenRule(_Strict):
    """A combination of categorical values no row may have: ``{relationship: Wife, sex: Male}``
    forbids rows with both; a list (``{a: [x, y]}``) forbids each of its values."""

    forbidden: dict[str, CategoryValues] = Field(min_length=1)


class AllowedCombinations(_Strict):
    columns: list[str] = Field(min_length=1)
    values: list[CategoryValues] = Field(min_length=1)


class AllowedRule(_Strict):
    """The only combinations of some categorical columns' values a row may have."""

    allowed: AllowedCombinations


def _rule_kind(value: object) -> str:
    """Which kind of rule an entry is, by its key (so an error speaks of that kind only)."""
    for kind, model in (("forbidden", ForbiddenRule), ("allowed", AllowedRule)):
        if isinstance(value, model) or (isinstance(value, dict) and kind in value):
            return kind
    return "check"


Constraint = Annotated[
    Annotated[CheckRule, Tag("check")] | Annotated[ForbiddenRule, Tag("forbidden")]
    | Annotated[AllowedRule, Tag("allowed")],
    Discriminator(_rule_kind),
]


class Schema(_Strict):
    """Ordered columns and the policy for categories the schema does not list."""

    columns: list[Column] = Field(min_length=1)
    unknown_categories: Literal["error", "missing"] = "error"
    strip_labels: bool = Field(
        default=False, description="read category cells with leading/trailing spaces removed "
        "(' State-gov' as 'State-gov'); off: labels are kept, compared and released as written",
    )
    drafted_by: str | None = Field(
        default=None, description="the tool that drafted this schema from the data (``synthpriv "
        "schema infer`` writes it): a draft's domains may not be public. Delete it once reviewed.",
    )
    extra_columns: Literal["error", "ignore"] = Field(
        default="error", description="'ignore': columns of the file the schema does not name are "
        "not read (kept out of the model and the release); 'error': they refuse the table",
    )
    constraints: list[Constraint] = Field(
        default_factory=list, description="public rules every synthetic row obeys (enforced when "
        "sampling, at no budget: synthpriv.constraints)",
    )

    @field_validator("columns", mode="before")
    @classmethod
    def _ignored(cls, columns: object) -> object:
        """``ignore: true`` on any column makes it kind ``ignored`` (its other keys are moot)."""
        if not isinstance(columns, list):
            return columns
        return [{"name": c.get("name"), "kind": "ignored", "ignore": True}
                if isinstance(c, dict) and c.get("ignore") is True else
                {k: v for k, v in c.items() if k != "ignore"}
                if isinstance(c, dict) and c.get("ignore") is False else c for c in columns]

    @model_validator(mode="after")
    def _unique_names(self) -> Schema:
        names = self.declared_names
        duplicated = repeated(names)
        if duplicated:
            raise ValueError(f"column names repeat {duplicated}; each column is declared once")
        if not self.modelled:
            raise ValueError(
                "no column is modelled (every column is id, text, ignored or derived): there is "
                "nothing to synthesise. Declare at least one categorical, integer, continuous, "
                "date, datetime or auto column")
        if self.unknown_categories == "missing":
            for column in self.columns:
                if (isinstance(column, CategoricalColumn) and not column.missing
                        and column.other is None):
                    raise ValueError(
                        f"unknown_categories: missing maps unknown values of '{column.name}' to "
                        "missing, so that column needs 'missing: true'"
                    )
        for column in self.columns:
            if isinstance(column.derived_from, DerivedFormula):
                self._check_formula(column, column.derived_from)
            elif column.derived_from is not None:
                self._check_derived(column, column.derived_from)
        from synthpriv.constraints import check_rules  # it reads schemas: imported here

        check_rules(self)
        return self

    def numeric_bounds(self, names: Iterable[str], where: str) -> dict[str, tuple[float, float]]:
        """The public bounds of numeric columns ``names``, for a formula or rule (``where``)
        over them; ValueError naming ``where`` for a name that is not a numeric column."""
        bounds = {}
        for name in names:
            try:
                column = self.column(name)
            except KeyError:
                raise ValueError(f"{where}: '{name}' is not a column of this schema "
                                 f"{self.names}") from None
            if isinstance(column, AutoColumn):
                raise ValueError(f"{where}: '{name}' has kind auto (decided under DP at run "
                                 "time); declare its kind and public bounds to use it here")
            if isinstance(column, DatetimeColumn | IdColumn | TextColumn | IgnoredColumn):
                raise ValueError(f"{where}: '{name}' has kind {column.kind}; a formula or rule "
                                 "reads integer and continuous columns only")
            if not isinstance(column, NumericColumn):
                raise ValueError(f"{where}: '{name}' is categorical; a formula reads numeric "
                                 "columns (for categories, use forbidden/allowed constraints)")
            if column.needs_bounds:
                raise ValueError(f"{where}: '{name}' has no public bounds (the domain step buys "
                                 "them under DP); declare its lower and upper bounds to use it "
                                 "in a formula or rule")
            bounds[name] = column.rounded_bounds()
        return bounds

    def _check_formula(self, column: CategoricalColumn | NumericColumn, rule: DerivedFormula) -> None:
        """A formula column is numeric and reads numeric columns that are not derived; a source
        that may be missing makes it missing; the formula is defined over the sources' bounds."""
        where = f"'{column.name}' derived_from formula '{rule.formula}'"
        if not isinstance(column, NumericColumn):
            raise ValueError(f"{where}: a formula gives numbers; declare '{column.name}' integer "
                             "or continuous, or map categories with derived_from column/values")
        formula = rule.parsed
        if not formula.columns:
            raise ValueError(f"{where}: reads no column; a constant is not a derived column")
        bounds = self.numeric_bounds(formula.columns, where)
        for name in formula.columns:
            source = self.column(name)
            if name == column.name or source.derived_from is not None:
                raise ValueError(f"{where}: '{name}' is derived itself; a formula reads modelled "
                                 "columns only")
            if source.missing and not column.missing:
                raise ValueError(f"{where}: '{name}' may be missing, which makes '{column.name}' "
                                 f"missing: set 'missing: true' for '{column.name}'")
        try:
            formula.bounds(bounds)
        except FormulaError as error:
            raise ValueError(f"{where}: {error}") from None

    def _check_derived(self, column: CategoricalColumn | NumericColumn, rule: DerivedFrom) -> None:
        where = f"'{column.name}' derived_from"
        try:
            source = self.column(rule.column)
        except KeyError:
            raise ValueError(f"{where}: '{rule.column}' is not a column of this schema") from None
        if not isinstance(source, CategoricalColumn) or source.derived_from is not None:
            raise ValueError(
                f"{where}: '{rule.column}' must be a categorical column that is not itself derived"
            )
        if source.discovered:
            raise ValueError(
                f"{where}: '{rule.column}' lists no categories; a public mapping needs them listed"
            )
        if source.missing and not column.missing:
            raise ValueError(
                f"{where}: '{rule.column}' may be missing, which makes '{column.name}' missing: "
                f"set 'missing: true' for '{column.name}'"
            )
        unmapped = [c for c in source.categories if c not in rule.values]
        extra = sorted(set(rule.values) - set(source.categories))
        if unmapped or extra:
            raise ValueError(
                f"{where}: 'values' must map every category of '{rule.column}' and nothing else; "
                f"unmapped {unmapped}, not categories {extra}"
            )
        outside = [f"{k}: {v}" for k, v in rule.values.items() if not _in_domain(column, v)]
        if outside:
            raise ValueError(f"{where}: values outside the domain of '{column.name}': {outside}")

    @property
    def names(self) -> list[str]:
        """The columns of the release (and of a table as read): all but the ignored ones."""
        return [c.name for c in self.columns if not isinstance(c, IgnoredColumn)]

    @property
    def declared_names(self) -> list[str]:
        """Every column the schema names, ignored ones included."""
        return [c.name for c in self.columns]

    @property
    def modelled(self) -> list[CategoricalColumn | NumericColumn]:
        """The columns the pipeline models: all but derived, id, text and ignored ones."""
        return [c for c in self.columns
                if c.derived_from is None and not isinstance(c, UNMODELLED)]

    def column(self, name: str) -> AnyColumn:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    @property
    def unresolved(self) -> list[CategoricalColumn | NumericColumn | AutoColumn]:
        """The columns whose domain the DP domain step must find (no bounds, no categories, or
        no kind)."""
        return [c for c in self.columns if isinstance(c, AutoColumn) or (
            c.discovered if isinstance(c, CategoricalColumn) else
            isinstance(c, NumericColumn) and c.needs_bounds)]

    @property
    def auto(self) -> list[str]:
        """The columns whose kind the domain step decides under DP."""
        return [c.name for c in self.columns if isinstance(c, AutoColumn)]

    @property
    def numeric_names(self) -> list[str]:
        return [c.name for c in self.columns if isinstance(c, NumericColumn)]


_FAST_LOADER: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def safe_load_yaml(text: str) -> object:
    """``yaml.safe_load`` with libyaml's C parser when installed: a schema listing 100,000
    categories parses in a second instead of half a minute."""
    return yaml.load(text, Loader=_FAST_LOADER)


def yaml_problem(path: Path | str, error: Exception) -> str:
    """A YAML (or encoding) error as one line naming the file, line and column, and what the
    parser expected there (PyYAML itself names '<unicode string>', not the file)."""
    if isinstance(error, UnicodeDecodeError):
        return f"{path}: not UTF-8 (invalid byte at offset {error.start}). Re-save it as UTF-8."
    mark = getattr(error, "problem_mark", None) or getattr(error, "context_mark", None)
    where = f", line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(error, "problem", None) or str(error)
    context = getattr(error, "context", None)
    detail = f"{problem} ({context})" if context else problem
    return (f"{path}{where}: not valid YAML: {detail}. Check the indentation, colons and "
            "brackets there; quote text that holds ': ' or '#'.")


class _SchemaLoader(_FAST_LOADER):  # type: ignore[misc, valid-type]
    """The safe loader, with numbers that remember their text (``category_text`` reads them)."""


def _written_int(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> int:
    number = _WrittenInt(loader.construct_yaml_int(node))
    number.written = node.value
    return number


def _written_float(loader: yaml.SafeLoader, node: yaml.ScalarNode) -> float:
    number = _WrittenFloat(loader.construct_yaml_float(node))
    number.written = node.value
    return number


_SchemaLoader.add_constructor("tag:yaml.org,2002:int", _written_int)
_SchemaLoader.add_constructor("tag:yaml.org,2002:float", _written_float)


def parse_schema(raw: object, source: str) -> Schema:
    """Validate a schema mapping; errors name the key and the fix."""
    try:
        return Schema.model_validate(raw)
    except ValidationError as error:
        raise SchemaError(describe_validation_error(error, Schema, source)) from None


def load_schema(path: str | Path) -> Schema:
    """Read and validate a schema YAML file."""
    path = Path(path)
    try:
        raw = yaml.load(path.read_text(encoding="utf-8"), Loader=_SchemaLoader)
    except FileNotFoundError:
        where = path if path.is_absolute() else f"'{path}' (resolved: {path.resolve()})"
        raise SchemaError(
            f"schema file not found: {where}. Check the path: in a job config (data.schema) it is "
            "relative to the config's folder, on the command line to the current folder."
        ) from None
    except IsADirectoryError:
        raise SchemaError(f"schema path is a folder, not a YAML file: {path}") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise SchemaError(yaml_problem(path, error)) from None
    return parse_schema(raw, str(path))
