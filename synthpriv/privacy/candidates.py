"""Heap discovery with named candidates: the noisy counts of values fixed before the counts are read.

Heap discovery (synthpriv.domain_stage) is Gaussian thresholding (``partition.noisy_selection``):
every value present gets its exact count plus N_Z(0, σ_h²), and only the values passing T_h are
released, because a value only one of two neighbouring tables holds must not show (the δ of a
ThresholdEvent). On a small table T_h is far above the piles a user sees (College, 622 rows:
σ_h ≈ 49, T_h = 268, `Books` = 500 holds 139 rows).

A value named in advance needs no threshold. ``candidates`` is a list fixed before this
histogram's noise is drawn, from public figures and earlier DP outputs only (the domain step
passes the round values of a column's DP bounds and grid shape, ``rounds.round_values``). Each
candidate gets a noise draw whether the table holds it or not (count 0), and its noisy count is
released whatever it is. This is one histogram over (values present) ∪ (candidates):

* sensitivity: a row is in one value, so the whole histogram has L2 sensitivity Δ₂ (1 under
  add/remove, √2 under replace-one, × k per person), the same as discovery's; the heap
  histogram's DiscreteGaussianEvent (σ_h / Δ₂) covers every cell released, candidates included
  (a Gaussian histogram's cost does not depend on how many of its cells are released);
* threshold: ``partition``'s argument compares the output with the histogram noised over the
  union U of both tables' values; here over U ∪ candidates, and the outputs differ only when a
  count-0 value of U outside the candidates passes T_h: the same ThresholdEvent's δ (a candidate
  is noised on both tables, so it adds nothing to it).

So the candidates' counts cost no ρ and no δ beyond the heap histogram's events, which the
ledger holds already (its label says so: ``domain_budget.HEAP_LABEL``). What they buy: the
round values' own fine cells get a second noisy count (``marginals.compress.with_round_counts``)
and the adaptive grid keeps alone those whose count shows a pile (``compress._round_cells``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from synthpriv.privacy.discrete_gaussian import sample_discrete_gaussian
from synthpriv.privacy.randomness import RandomSource


def heap_selection(
    counts: Mapping[float, int], candidates: Sequence[float], sigma: float, threshold: int,
    source: RandomSource,
) -> tuple[dict[float, int], dict[float, int]]:
    """Heap discovery over ``counts`` (values present, exact counts ≥ 1) with the named
    ``candidates`` (fixed before this call from public figures or DP outputs, never from
    ``counts``): one N_Z(0, σ²) draw per value of present ∪ candidates. Returns (the values
    whose noisy count is ≥ ``threshold``, as ``partition.noisy_selection``; every candidate's
    noisy count, passing or not). Privacy: the module docstring (the heap histogram's events;
    sensitivity Δ₂: a row is in one value). Without candidates, the same draws as
    ``noisy_selection``."""
    named = sorted({float(v) for v in candidates})
    values = sorted(set(counts) | set(named))
    if any(counts[v] < 1 for v in counts):
        raise ValueError("heap discovery takes the values present (counts ≥ 1) only")
    exact = np.array([counts.get(v, 0) for v in values], dtype=np.int64)
    noisy = exact + sample_discrete_gaussian(sigma, exact.shape, source)
    drawn = dict(zip(values, (int(n) for n in noisy), strict=True))
    kept = {v: n for v, n in drawn.items() if n >= threshold}
    return kept, {v: drawn[v] for v in named}
