"""The DP bounds' read-out step 1e (synthpriv.privacy.bounds.spread_tails) on the real
mechanism (exact bucket counts + discrete Gaussian noise, seeded): a heavy tail spread thinly
over several octaves, each below the tail rule's 2.5σ, is kept (College's F.Undergrad lost ~25 %
of its rows above the bound, branch collegeks), and a column with no rows beyond its support is
widened by the windows no more often than the stated rate."""

from __future__ import annotations

import math

import numpy as np

from synthpriv.privacy.bounds import (
    EXTEND_NOISE,
    FALSE_TAIL,
    Buckets,
    _grown,
    read_bounds,
    spread_tails,
    tail_threshold,
)
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource

SIGMA = 20.0


def _tailed(rows_per_octave: int) -> np.ndarray:
    """A count column: 2,000 rows over [64, 1023] (4 octaves) and ``rows_per_octave`` rows in
    each of the 4 octaves above, [1024, 16383], spread evenly inside each."""
    rng = np.random.default_rng(5)
    bulk = rng.integers(64, 1024, 2000)
    tail = [rng.integers(2**j, 2**(j + 1), rows_per_octave) for j in range(10, 14)]
    return np.concatenate([bulk, *tail]).astype(float)


def test_pure_noise_beyond_the_support_widens_it_at_most_at_the_stated_rate() -> None:
    """No rows beyond a count column's 4 octaves, 2,000 draws: the windows beyond each side of
    the support the tail rule left hold pure noise, and pass (any bucket added) with probability
    ≤ FALSE_TAIL per side (union bound over TAIL_WINDOWS): ≤ 2·FALSE_TAIL + 3 binomial s.e. of
    draws. Fails if the threshold dropped the √w (mutation bounds-tail-window-no-sqrt) or the
    union bound (bounds-tail-window-no-union). 17 of 2,000 measured, against ≤ 39."""
    buckets, draws = Buckets("integer"), 2000
    counts = buckets.counts(_tailed(0))
    true = counts > 0
    fired = 0
    for seed in range(draws):
        noisy = discrete_gaussian_histogram(counts, SIGMA, RandomSource.seeded(seed))
        noisy = noisy.astype(float)
        grown = _grown(true, noisy >= EXTEND_NOISE * SIGMA, buckets.zero)
        fired += bool((spread_tails(noisy, SIGMA, grown, buckets.zero) & ~grown).any())
    rate = 2 * FALSE_TAIL
    assert fired / draws <= rate + 3 * math.sqrt(rate * (1 - rate) / draws), fired


def test_a_tail_spread_over_four_octaves_below_the_tail_rule_is_kept() -> None:
    """30 rows (1.5σ) in each of 4 octaves above the bulk: no bucket of the tail reaches 2.5σ,
    their sum over the 4 scores 6σ / σ√4 = 3.0 ≥ tail_threshold (2.87). On the exact counts
    (no noise) the bounds hold the whole tail; without step 1e they stop at the bulk's top (or
    the guard's one bucket more). Over 200 seeded draws the bounds hold ≥ 50 % of the tail on
    average (60 % measured; without step 1e 30 %, the tail rule's own passes and the guard:
    mutation bounds-tail-window-off)."""
    buckets = Buckets("integer")
    values = _tailed(30)
    tail = values >= 1024
    counts = buckets.counts(values).astype(float)
    assert (counts[buckets.index(np.array([1024.0]))[0]:] < EXTEND_NOISE * SIGMA).all()
    assert tail_threshold() <= 4 * 30 / (SIGMA * 2)  # the 4 octaves pass their window
    exact = read_bounds(counts, SIGMA, buckets)
    assert exact is not None and exact.upper >= values.max(), exact
    held = []
    for seed in range(200):
        noisy = discrete_gaussian_histogram(counts.astype(np.int64), SIGMA,
                                            RandomSource.seeded(seed)).astype(float)
        reading = read_bounds(noisy, SIGMA, buckets)
        assert reading is not None
        held.append(np.mean(values[tail] <= reading.upper))
    assert np.mean(held) >= 0.5, f"the bounds held {np.mean(held):.0%} of the tail on average"
