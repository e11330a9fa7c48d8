"""The DP bounds' guard on a thin column of both signs (synthpriv.privacy.bounds ``spread``: the
guard's octave test with SPREAD_NOISE), on the real mechanism (exact bucket counts + discrete
Gaussian noise, seeded). ISLP OJ's PriceDiff (1,070 rows in [−0.67, 0.64], 22 % negative, 7 %
zero; σ = 44 at 18 DP-bounded columns) got [0.125, 0.5] in 6 of 10 seeds and 32 % of its
released rows at 0.13 (issue 24 item 4: no fake spike at a clipping bound)."""

from __future__ import annotations

import numpy as np

from synthpriv.privacy.bounds import (
    EXTEND_NOISE,
    SPREAD_NOISE,
    Buckets,
    read_bounds,
    spread,
)
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource

SIGMA, COLUMNS = 44.0, 18  # ISLP OJ's plan (1,070 rows, safe draft, ε = 1)


def _price_diff() -> np.ndarray:
    """1,070 values shaped as OJ's PriceDiff: 22 % in [−0.67, −0.03], 7 % at 0, the rest in
    [0.02, 0.64] (most in [0.125, 0.5)), two decimals."""
    rng = np.random.default_rng(3)
    negative = -np.round(rng.uniform(0.03, 0.67, 239), 2)
    positive = np.round(np.r_[rng.uniform(0.02, 0.125, 78), rng.uniform(0.125, 0.5, 601),
                              rng.uniform(0.5, 0.64, 77)], 2)
    return np.r_[negative, np.zeros(75), positive]


def test_a_thin_column_is_not_bounded_inside_its_bulk() -> None:
    """200 draws. Main's read-out left the lower bound at 0.125 in 51 % of the draws (only
    [0.25, 0.5) passed the core's threshold, so the support [0.125, 0.5) did not count as
    spread and the guard kept it): 0.125 clips the zeros, the small positives and the negatives
    onto it (a fake spike at 0.13), and 0.5 clips the 7 % above. With two buckets ≥ 3σ counted
    as spread the guard takes the lower side to 0 (a value the column holds) and the upper one
    an octave up: 3 % of draws inside (a neighbour under 3σ), 0 % of rows above (main: 3.6 %).
    Fails if the guard's octave test ignores SPREAD_NOISE."""
    values, buckets = _price_diff(), Buckets("continuous")
    counts = buckets.counts(values)
    readings = [read_bounds(discrete_gaussian_histogram(counts, SIGMA, RandomSource.seeded(seed))
                            .astype(float), SIGMA, buckets, COLUMNS) for seed in range(200)]
    inside = np.mean([r.lower > 0 for r in readings])
    above = np.mean([np.mean(values > r.upper) for r in readings])
    assert inside <= 0.08, f"a lower bound inside the bulk in {inside:.0%} of draws"
    assert above <= 0.01, f"{above:.1%} of the rows above the upper bound on average"


def test_two_buckets_above_spread_noise_count_as_spread() -> None:
    """The guard's octave test: a core of one bucket and a neighbour the tail rule kept at
    ≥ SPREAD_NOISE·σ is spread; a neighbour between 2.5σ and SPREAD_NOISE·σ (what noise gives
    an empty bucket 0.6 % of the time) is not (mutation bounds-spread-at-tail-rule)."""
    buckets = Buckets("continuous")
    noisy = np.zeros(buckets.size)
    core, near = buckets.zero + 15, buckets.zero + 14
    noisy[core] = 10 * SIGMA
    kept = np.zeros(buckets.size, dtype=bool)
    kept[[near, core]] = True
    noisy[near] = SPREAD_NOISE * SIGMA
    assert spread(noisy, SIGMA, kept, np.array([core]))
    noisy[near] = (EXTEND_NOISE + SPREAD_NOISE) / 2 * SIGMA
    assert not spread(noisy, SIGMA, kept, np.array([core]))
