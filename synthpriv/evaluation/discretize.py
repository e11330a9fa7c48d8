"""One shared discretisation of a real and a synthetic table, fitted on the real one.

Marginal-based utility figures (total variation distance of k-way marginals) need both tables on
the same finite grid. ``Discretizer.fit`` learns that grid from the REAL table, so its bin edges
and category lists depend on real records: they are not differentially private and must not be
released alongside a synthetic table.

Codes per column:

- numeric: quantile bins of the real column (``np.quantile`` edges, deduplicated). A value that
  fills several quantiles (a point mass such as capital-loss == 0 or hours-per-week == 40) gets a
  bin of its own, otherwise deduplication would merge it with its neighbours and, for a column
  that is mostly one value, leave a single uninformative bin. Values outside the real range go to
  the end bins; missing values get the last code.
- categorical: the sorted real categories, then one code for missing values and one "unseen" code
  for categories that occur only in the table being transformed (e.g. invented by a generator).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd


def _as_numbers(values: pd.Series) -> np.ndarray:
    """Float values with missing (NaN, empty or non-numeric cells) as NaN."""
    return pd.to_numeric(values, errors="coerce").to_numpy(dtype=np.float64)


def _label(value: object) -> str | float:
    """One category label: blank strings are missing (NaN), integral floats print as integers."""
    if isinstance(value, str):
        return value if value.strip() else np.nan
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return str(int(value))
    return str(value)


def as_labels(values: pd.Series) -> pd.Series:
    """Category labels as strings, missing (NaN/None/empty string) as NaN.

    A categorical column that went through NaN (int -> float) must still match: 13.0 -> "13".
    Labels are computed once per distinct value (``pd.factorize``), which keeps this fast.
    """
    codes, uniques = pd.factorize(values, use_na_sentinel=True)
    labels = np.array([_label(u) for u in uniques] + [np.nan], dtype=object)  # -1 -> NaN
    return pd.Series(labels[codes], index=values.index, dtype=object)


def quantile_edges(values: np.ndarray, bins: int) -> np.ndarray:
    """Interior bin edges from the quantiles of ``values`` (NaN ignored); bins are [e_i, e_i+1).

    Returns at most ``bins - 1`` edges. A value hit by several quantiles is a point mass and gets
    its own bin via an extra edge just above it (``np.nextafter``).
    """
    if bins < 1:
        raise ValueError(f"bins must be at least 1, got {bins}")
    finite = values[np.isfinite(values)]
    if finite.size == 0:
        return np.empty(0)
    quantiles = np.quantile(finite, np.linspace(0.0, 1.0, bins + 1))
    unique, counts = np.unique(quantiles, return_counts=True)
    point_masses = unique[counts > 1]
    edges = np.union1d(unique, np.nextafter(point_masses, np.inf))
    return edges[1:-1]


@dataclass(frozen=True)
class Discretizer:
    """A fixed grid of integer codes per column, learned from the real table.

    ``edges[c]`` (numeric) are interior edges: codes ``0..len(edges)`` for the bins, then one
    code for missing. ``categories[c]`` (categorical) are the real labels: codes for them, then
    missing, then unseen.
    """

    columns: tuple[str, ...]
    edges: dict[str, np.ndarray]
    categories: dict[str, tuple[str, ...]]

    @classmethod
    def fit(cls, real: pd.DataFrame, numeric_columns: Sequence[str], bins: int = 16) -> Discretizer:
        """Learn bin edges (numeric columns) and category lists (the rest) from ``real``."""
        unknown = set(numeric_columns) - set(real.columns)
        if unknown:
            raise ValueError(f"numeric columns not in the table: {sorted(unknown)}")
        numeric = set(numeric_columns)
        edges = {c: quantile_edges(_as_numbers(real[c]), bins) for c in real.columns if c in numeric}
        categories = {
            c: tuple(sorted(as_labels(real[c]).dropna().unique())) for c in real.columns if c not in numeric
        }
        return cls(tuple(real.columns), edges, categories)

    @property
    def sizes(self) -> tuple[int, ...]:
        """Number of codes per column, in ``columns`` order (missing/unseen codes included)."""
        return tuple(self.size(c) for c in self.columns)

    def size(self, column: str) -> int:
        """Number of codes of ``column``."""
        if column in self.edges:
            return len(self.edges[column]) + 2
        return len(self.categories[column]) + 2

    def missing_code(self, column: str) -> int:
        """The code that missing values of ``column`` get."""
        if column in self.edges:
            return len(self.edges[column]) + 1
        return len(self.categories[column])

    def unseen_code(self, column: str) -> int:
        """The code of categories absent from the real table (categorical columns only)."""
        if column in self.edges:
            raise KeyError(f"{column!r} is numeric and has no unseen code")
        return len(self.categories[column]) + 1

    def transform(self, df: pd.DataFrame) -> np.ndarray:
        """Integer codes of shape (rows, columns), columns in ``self.columns`` order."""
        missing_columns = set(self.columns) - set(df.columns)
        if missing_columns:
            raise ValueError(f"table lacks columns: {sorted(missing_columns)}")
        codes = np.empty((len(df), len(self.columns)), dtype=np.int64)
        for j, column in enumerate(self.columns):
            codes[:, j] = self._encode(column, df[column])
        return codes

    def _encode(self, column: str, values: pd.Series) -> np.ndarray:
        if column in self.edges:
            numbers = _as_numbers(values)
            codes = np.searchsorted(self.edges[column], numbers, side="right")
            return np.where(np.isnan(numbers), self.missing_code(column), codes)
        labels = as_labels(values)
        lookup = {label: i for i, label in enumerate(self.categories[column])}
        codes = labels.map(lookup)
        codes[labels.notna() & codes.isna()] = self.unseen_code(column)
        codes[labels.isna()] = self.missing_code(column)
        return codes.to_numpy(dtype=np.int64)
