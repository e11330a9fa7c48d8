"""Schema: the public domain of every column, declared by a person, never read from the data.

Column kinds:
* ``categorical``: a closed list of categories;
* ``integer`` / ``continuous``: public bounds ``[lower, upper]`` and bins, either ``bins`` equal-width
  bins over the bounds or explicit ``edges`` (first edge = lower, last = upper).
Every column says whether missing values may occur; a missing value is a code of its own.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Annotated, Literal

import numpy as np
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from synthpriv.errors import SchemaError
from synthpriv.validation import describe_validation_error


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def repeated(values: Iterable[str]) -> list[str]:
    """The values that occur more than once, sorted (linear time: schemas and headers can list
    100,000 names)."""
    return sorted(value for value, count in Counter(values).items() if count > 1)


class CategoricalColumn(_Strict):
    """A column whose values come from a public, closed list of categories."""

    name: str
    kind: Literal["categorical"]
    categories: list[str] = Field(min_length=1)
    missing: bool = False

    @model_validator(mode="after")
    def _unique(self) -> CategoricalColumn:
        duplicated = repeated(self.categories)
        if duplicated:
            raise ValueError(f"categories of '{self.name}' repeat {duplicated}; list each once")
        return self


class NumericColumn(_Strict):
    """A numeric column with public bounds; values outside them are clipped before any query."""

    name: str
    kind: Literal["integer", "continuous"]
    lower: float
    upper: float
    bins: int | None = Field(default=None, ge=1, le=10_000)
    edges: list[float] | None = None
    missing: bool = False

    @model_validator(mode="after")
    def _check_bins(self) -> NumericColumn:
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

    def bin_edges(self) -> np.ndarray:
        """Bin edges over [lower, upper]; the last bin is closed on the right.

        Integer columns with no explicit binning get one bin per integer when that is at most 100
        bins, else 32 equal-width bins.
        """
        if self.edges is not None:
            return np.asarray(self.edges, dtype=float)
        bins = self.bins
        if self.kind == "integer":
            lower, upper = math.ceil(self.lower), math.floor(self.upper)
            if bins is None and upper - lower + 1 <= 100:
                bins = upper - lower + 1
            if bins == upper - lower + 1:
                return np.append(np.arange(lower, upper + 1, dtype=float), upper + 1.0)
        return np.linspace(self.lower, self.upper, (bins or 32) + 1)


Column = Annotated[CategoricalColumn | NumericColumn, Field(discriminator="kind")]


class Schema(_Strict):
    """Ordered columns and the policy for categories the schema does not list."""

    columns: list[Column] = Field(min_length=1)
    unknown_categories: Literal["error", "missing"] = "error"

    @model_validator(mode="after")
    def _unique_names(self) -> Schema:
        names = self.names
        duplicated = repeated(names)
        if duplicated:
            raise ValueError(f"column names repeat {duplicated}; each column is declared once")
        if self.unknown_categories == "missing":
            for column in self.columns:
                if isinstance(column, CategoricalColumn) and not column.missing:
                    raise ValueError(
                        f"unknown_categories: missing maps unknown values of '{column.name}' to "
                        "missing, so that column needs 'missing: true'"
                    )
        return self

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.columns]

    def column(self, name: str) -> CategoricalColumn | NumericColumn:
        for column in self.columns:
            if column.name == name:
                return column
        raise KeyError(name)

    @property
    def numeric_names(self) -> list[str]:
        return [c.name for c in self.columns if isinstance(c, NumericColumn)]


def safe_load_yaml(text: str) -> object:
    """``yaml.safe_load`` with libyaml's C parser when installed: a schema listing 100,000
    categories parses in a second instead of half a minute."""
    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


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
        raw = safe_load_yaml(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise SchemaError(f"schema file not found: {path}. Check the path in the config.") from None
    except yaml.YAMLError as error:
        raise SchemaError(f"{path}: not valid YAML: {error}") from None
    return parse_schema(raw, str(path))
