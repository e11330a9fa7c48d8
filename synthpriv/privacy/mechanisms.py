"""DP mechanisms. They know nothing of budgets: callers pass the noise scale the plan chose and
record the event they ran in the Ledger.

Adjacency is declared once per job (``neighbouring``). For a histogram (a marginal's counts):
* add/remove one row changes one cell by 1: L1 = L2 sensitivity 1;
* replace one row moves one unit between two cells: L1 sensitivity 2, L2 sensitivity √2;
* per person (data.person, at most k rows each after bounding: synthpriv.persons), all of it
  times k: a person's k rows may fall in one cell.
"""

from __future__ import annotations

import math

import numpy as np

from synthpriv.privacy.discrete_gaussian import sample_discrete_gaussian
from synthpriv.privacy.randomness import RandomSource


def histogram_l2_sensitivity(neighbouring: str, rows_per_person: int = 1) -> float:
    """L2 sensitivity of one histogram (marginal) query under the neighbouring relation, for
    a unit of ``rows_per_person`` rows (1: a row; k: a person, data.person): a person's k rows
    may all fall in one cell, so adding one moves one count by k (L2 = k), and replacing one
    moves k units out of one cell into another (L2 = k·√2)."""
    if neighbouring == "add_remove":
        return float(_bound(rows_per_person))
    if neighbouring == "replace_one":
        return _bound(rows_per_person) * math.sqrt(2.0)
    raise ValueError(f"unknown neighbouring relation {neighbouring!r}")


def histogram_l1_sensitivity(neighbouring: str, rows_per_person: int = 1) -> float:
    """L1 sensitivity of one histogram (marginal) query under the neighbouring relation, for a
    unit of ``rows_per_person`` rows: k (add/remove one person), 2k (replace one)."""
    if neighbouring == "add_remove":
        return float(_bound(rows_per_person))
    if neighbouring == "replace_one":
        return 2.0 * _bound(rows_per_person)
    raise ValueError(f"unknown neighbouring relation {neighbouring!r}")


def _bound(rows_per_person: int) -> int:
    if rows_per_person < 1 or int(rows_per_person) != rows_per_person:
        raise ValueError(f"rows_per_person must be a positive integer, got {rows_per_person}")
    return int(rows_per_person)


def discrete_gaussian_histogram(
    counts: np.ndarray, sigma: float, source: RandomSource
) -> np.ndarray:
    """``counts`` (integers) plus i.i.d. discrete Gaussian noise N_Z(0, σ²) in every cell.

    Exact integer noise, no floating-point leakage (Canonne, Kamath & Steinke 2020). For a
    histogram of L2 sensitivity Δ it is (Δ/σ)²/2-zCDP: record DiscreteGaussianEvent(σ/Δ).
    """
    integer_counts = np.rint(counts).astype(np.int64)
    if not np.array_equal(integer_counts, counts):
        raise ValueError("discrete Gaussian noise is added to integer counts only")
    noise = sample_discrete_gaussian(sigma, integer_counts.shape, source)
    return (integer_counts + noise).astype(np.float64)


def exponential_logits(scores: np.ndarray, epsilon: float, sensitivity: float) -> np.ndarray:
    """ε · score_i / (2Δ): the exponential mechanism's log-weights (its log-probabilities up to
    one constant), for the mechanism itself and for audits that score its choices."""
    return epsilon * np.asarray(scores, dtype=float) / (2.0 * sensitivity)


def exponential_mechanism(
    scores: np.ndarray, epsilon: float, sensitivity: float, rng: np.random.Generator
) -> int:
    """Index i drawn with probability ∝ exp(ε · score_i / (2Δ)).

    ε-DP, and ε-bounded-range hence ε²/8-zCDP (Cesar & Rogers 2021): record ExponentialEvent(ε).
    ``sensitivity`` Δ bounds how much any one score changes between neighbours. Implemented by
    Gumbel-max over floating-point logits (documented caveat: not an exact sampler).
    """
    scores = np.asarray(scores, dtype=float)
    if scores.ndim != 1 or scores.size == 0 or not np.isfinite(scores).all():
        raise ValueError("exponential mechanism needs a non-empty vector of finite scores")
    logits = exponential_logits(scores, epsilon, sensitivity)
    return int(np.argmax(logits + rng.gumbel(size=scores.size)))
