"""The DP kind decision of an ``auto`` column: categorical, integer or continuous.

Each cell of an auto column falls in at most one of three public classes: ``text`` (not a finite
number), ``fraction`` (a finite number that is not whole) and ``whole`` (a whole number). Empty
cells and common missing markers (``MISSING_MARKERS``: NA, NaN, null, …; compared without case)
fall in none. The domain step (synthpriv.domain_stage) counts the three classes of each auto
column and adds discrete Gaussian noise; ``decide`` then reads the kind from the noisy counts and
the public noise scale alone, so the kind is post-processing of a DP histogram.

Sensitivity: a row holds one cell per column, in at most one class, so adding or removing a row
changes one count of a column's histogram by 1 (L2 sensitivity 1; √2 under replace-one).

The decision rule (constants below; chosen from the noise arithmetic, not tuned on any table):
* categorical when the noisy text count is at least the noisy count of numbers: most cells that
  are not missing are text (a column of codes written as numbers reads as integer: declare it
  categorical where that is public knowledge);
* else continuous when the noisy fractions exceed both ``FRACTION_SHARE`` of the noisy numbers
  and ``FRACTION_NOISE``·σ (an integer column, with no fraction at all, then reads as continuous
  with probability Φ(−3) ≈ 0.1 % per run); a column decided integer rounds the few fractions
  it may hold;
* else integer.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CLASSES = ("text", "fraction", "whole")
MISSING_MARKERS = frozenset({"na", "n/a", "nan", "null", "none", "?", "-", ".", "..."})
FRACTION_SHARE = 0.05
FRACTION_NOISE = 3.0


def class_counts(cells: pd.Series) -> np.ndarray:
    """How many of ``cells`` (text, NaN for missing) fall in each of CLASSES (exact counts:
    the domain step adds the noise)."""
    text = cells.dropna().astype(str).str.strip()
    text = text[(text != "") & ~text.str.lower().isin(MISSING_MARKERS)]
    numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    finite = np.isfinite(numbers)
    whole = finite & (numbers == np.round(numbers))
    return np.array([int((~finite).sum()), int((finite & ~whole).sum()), int(whole.sum())],
                    dtype=np.int64)


def decide(noisy: np.ndarray, sigma: float) -> str:
    """The kind read from one column's noisy class counts (``noisy``, in CLASSES order) and their
    noise scale ``sigma``: post-processing only (the module docstring gives the rule)."""
    text, fraction, whole = np.maximum(np.asarray(noisy, dtype=float), 0.0)
    numbers = fraction + whole
    if text >= numbers:
        return "categorical"
    if fraction > max(FRACTION_SHARE * numbers, FRACTION_NOISE * sigma):
        return "continuous"
    return "integer"


def decided_column(name: str, kind: str) -> dict:
    """The schema entry of auto column ``name`` decided ``kind``: its domain is then found under
    DP (no bounds, no categories), and cells that do not fit the kind are read as missing."""
    if kind == "categorical":
        return {"name": name, "kind": kind, "missing": True, "unknown_categories": "missing"}
    return {"name": name, "kind": kind, "missing": True, "coerce": True}
