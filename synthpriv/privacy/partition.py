"""DP partition selection: which values of a column are frequent enough to release as categories.

Mechanism (Gaussian thresholding; Korolova et al. 2009, Desfontaines et al. 2022): every value
present in the column gets its exact count plus discrete Gaussian noise N_Z(0, σ²); a value is
kept when its noisy count is ≥ an integer threshold T. Only kept values are released.

Sensitivity. Each row holds one value per column, so the histogram of present values has L2
sensitivity Δ₂ = 1 under add/remove (√2 under replace-one: a replaced row moves one unit between
two values): the noisy counts of the values both tables hold are a DiscreteGaussianEvent. A value
only one of the two tables holds is the δ part (``selection_delta``), a ThresholdEvent:

* add/remove: the added row's value, if new, has count 1; the rest of the output has the same
  distribution on both tables, so a coupling gives δ = P(1 + Z ≥ T) = P(Z ≥ T − 1).
* replace-one: the row's old value may vanish and its new value appear. Compare each table's
  output with the mechanism that noises every value of the union (count 0 where absent): that
  one is the Gaussian mechanism above, and differs from the real one only when a count-0 value
  passes, with probability P(Z ≥ T) on either side; moving across costs
  δ = (1 + e^ε) · P(Z ≥ T), with ε the job's target ε (the reported ε is never above it).

Why this composes (checked a second time, 2026-11-23). Let M̃ be the whole job with this step
replaced by the noisy histogram over the union U of both tables' values. The later stages read
only this step's output, so the whole transcript of M differs from M̃'s in total variation by at
most the chance that this step differs: P(Z ≥ T) on each side (each side has at most one count-0
value in U, per column; a row holds one value per column, so the δ adds over columns, one
ThresholdEvent each). M̃ is what the ledger accounts: (ε, δ_rest)-DP with the Gaussian at L2
sensitivity √2. Then P[M(D) ∈ S] ≤ P[M̃(D) ∈ S] + p ≤ e^ε (P[M(D') ∈ S] + p) + δ_rest + p, which is
δ_rest + (1 + e^ε)·p. Under add/remove the direct coupling is tighter: the tables share every
count but the new value's, so the step is (0, P(Z ≥ T − 1)) for such a pair and the Gaussian event
the ledger also charges only over-counts it.

Per person (data.person; each person keeps at most k rows: synthpriv.persons). The person's k
rows move the counts of the values both tables hold by L2 ≤ k (all k in one value): the Gaussian
event is priced at sensitivity k (σ/Δ₂ with Δ₂ = k, or k·√2 under replace-one). A person can now
bring up to k values the other table lacks (one per row), each of count ≤ k, so the add/remove
coupling above (one new value of count 1) no longer holds; the M̃ argument does: on a side, at
most k values of U have count 0, so that side's p ≤ k·P(Z ≥ T). Under add/remove only the
smaller table has such values, so δ = δ_rest + e^ε·k·P(Z ≥ T) covers both directions; under
replace-one, δ_rest + (1 + e^ε)·k·P(Z ≥ T).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any

import numpy as np

from synthpriv.privacy.discrete_gaussian import sample_discrete_gaussian
from synthpriv.privacy.randomness import RandomSource

_SUPPORT_SIGMAS = 60  # the pmf beyond ±60σ is below e^-1800: nothing a double can hold


@functools.lru_cache(maxsize=2)
def discrete_gaussian_tails(sigma: float) -> tuple[np.ndarray, int]:
    """``(tails, offset)``: tails[k + offset] = P(Z ≥ k) for Z ~ N_Z(0, σ²), k over ±60σ.

    Exact up to floating point: the pmf exp(−k²/2σ²)/Σ_j exp(−j²/2σ²) summed from the top.
    Cached per σ (read-only): ``selection_threshold`` bisects over T at one σ, and the array
    holds 120σ cells — rebuilt at every step it made planning an all-auto Adult at ε = 0.01
    take minutes (σ ≈ 4,000; 4,253 rebuilds, 200 CPU s of 225)."""
    if not (sigma > 0 and math.isfinite(sigma)):
        raise ValueError(f"sigma must be positive and finite, got {sigma}")
    offset = int(math.ceil(_SUPPORT_SIGMAS * sigma)) + 2
    k = np.arange(-offset, offset + 1, dtype=float)
    weights = np.exp(-(k**2) / (2.0 * sigma**2))
    pmf = weights / weights.sum()
    tails = np.minimum(np.cumsum(pmf[::-1])[::-1], 1.0)
    tails.setflags(write=False)
    return tails, offset


def selection_delta(
    sigma: float, threshold: int, neighbouring: str, epsilon: float, rows_per_person: int = 1
) -> float:
    """δ of releasing the values whose noisy count (noise N_Z(0, σ²)) is ≥ ``threshold``, for
    one column (see the module docstring for each relation; per person, ``rows_per_person``
    k > 1, see "Per person" there)."""
    tails, offset = discrete_gaussian_tails(sigma)

    def tail(k: int) -> float:
        index = k + offset
        return 1.0 if index <= 0 else (0.0 if index >= len(tails) else float(tails[index]))

    if neighbouring not in ("add_remove", "replace_one"):
        raise ValueError(f"unknown neighbouring relation {neighbouring!r}")
    if rows_per_person > 1:  # up to k count-0 values of the union on a side (M̃ argument)
        sides = math.exp(epsilon) if neighbouring == "add_remove" else 1.0 + math.exp(epsilon)
        return sides * rows_per_person * tail(threshold)
    if neighbouring == "add_remove":
        return tail(threshold - 1)
    return (1.0 + math.exp(epsilon)) * tail(threshold)


def selection_threshold(
    sigma: float, delta: float, neighbouring: str, epsilon: float, rows_per_person: int = 1
) -> tuple[int, float]:
    """The smallest integer threshold T ≥ 1 whose ``selection_delta`` is ≤ ``delta``, and that δ.
    """
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")

    def spent(threshold: int) -> float:
        return selection_delta(sigma, threshold, neighbouring, epsilon, rows_per_person)

    low, high = 1, 2
    while spent(high) > delta:
        low, high = high, high * 2
    while high - low > 1:  # the δ decreases with T: bisect for the first T within delta
        middle = (low + high) // 2
        if spent(middle) > delta:
            low = middle
        else:
            high = middle
    threshold = low if spent(low) <= delta else high
    return threshold, spent(threshold)


def noisy_selection(
    counts: Mapping[str, int], sigma: float, threshold: int, source: RandomSource
) -> dict[str, int]:
    """The values of ``counts`` (values present, exact counts ≥ 1) whose count plus N_Z(0, σ²)
    is ≥ ``threshold``, in sorted order, each with its noisy count (Gaussian thresholding
    releases the kept values' noisy counts: the DiscreteGaussianEvent covers them). Record
    DiscreteGaussianEvent(σ/Δ₂) and ThresholdEvent(selection_delta(σ, threshold, ...)) for it;
    values that fail, and their counts, are never released."""
    return named_selection(counts, (), sigma, threshold, source)[0]


def named_selection(
    counts: Mapping[Hashable, int], named: Sequence[Hashable], sigma: float, threshold: int,
    source: RandomSource, key: Callable[[Hashable], Any] | None = None,
) -> tuple[dict, dict]:
    """``noisy_selection`` over the values present ∪ ``named`` (values fixed before the counts
    are read, from public figures or DP outputs, never from ``counts``), one draw each in
    ``key`` order: (the values whose noisy count is ≥ ``threshold``; every named value's noisy
    count, passing or not, a value absent from the table counted 0). A named value is noised on
    both neighbouring tables, so its count needs no threshold and adds nothing to the
    ThresholdEvent's δ; the histogram's sensitivity and events are ``noisy_selection``'s
    (synthpriv.privacy.candidates says why)."""
    if any(counts[v] < 1 for v in counts):
        raise ValueError("partition selection takes the values present (counts ≥ 1) only")
    values = sorted(set(counts) | set(named), key=key)
    exact = np.array([counts.get(v, 0) for v in values], dtype=np.int64)
    noisy = exact + sample_discrete_gaussian(sigma, exact.shape, source)
    kept = {v: int(n) for v, n in zip(values, noisy, strict=True) if n >= threshold}
    drawn = dict(zip(values, (int(n) for n in noisy), strict=True))
    return kept, {v: drawn[v] for v in named}


def select_partitions(
    counts: Mapping[str, int], sigma: float, threshold: int, source: RandomSource
) -> list[str]:
    """The kept values of ``noisy_selection``, sorted (the same draws)."""
    return list(noisy_selection(counts, sigma, threshold, source))
