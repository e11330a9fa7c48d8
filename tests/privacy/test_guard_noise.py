"""The guard's buckets towards zero add no noise to the octave shape (``bounds.guard_noise``).

Definition: the buckets the read-out's guard added between the support and the bucket around 0
(outside the support) keep their noisy counts in ``octave_shape`` only when their sum S reaches
EXTEND_NOISE·σ·√k (pure noise there passes with probability Φ(−2.5) ≈ 0.6 %) or half the noisy
count c of the support's bucket next to them (S nearer to c, the neighbour's density continued
down to 0, than to empty). The guard away
from zero (one bucket outward) and the support's own buckets are untouched. Post-processing of
the noisy histogram: the functions get noisy counts and σ only.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm

from synthpriv.privacy.bounds import (
    EXTEND_NOISE,
    BoundsReading,
    Buckets,
    guard_noise,
    octave_shape,
    read_bounds,
)

SIGMA = 10.0
BUCKETS = Buckets("integer")
ZERO = BUCKETS.zero


def _histogram(guard: list[float]) -> np.ndarray:
    """Mass in 2^9..2^13 (512..16,383), ``guard`` in the 9 buckets 2^0..2^8 below it."""
    noisy = np.zeros(BUCKETS.size)
    noisy[ZERO + 10:ZERO + 15] = [300, 250, 200, 150, 100]
    noisy[ZERO + 1:ZERO + 10] = guard
    return noisy


def test_the_guard_towards_zero_is_dropped_below_its_bar_and_kept_above() -> None:
    quiet = _histogram([3, -5, 8, 0, 2, -1, 4, 12, 1])  # 24 < 2.5σ·√9 = 75
    reading = read_bounds(quiet, SIGMA, BUCKETS)
    assert reading.guarded[0] and reading.first == ZERO and reading.lower == 0.0
    kept = np.zeros(BUCKETS.size, dtype=bool)
    kept[ZERO + 10:ZERO + 15] = True
    dropped = guard_noise(quiet, SIGMA, kept, reading, ZERO)
    assert np.array_equal(np.flatnonzero(dropped), np.arange(ZERO + 1, ZERO + 10))
    shape = octave_shape(quiet, SIGMA, BUCKETS, reading)
    assert shape[0] == (0.0, 0.0) and shape[1] == (512.0, 300.0)  # the support untouched
    bar = EXTEND_NOISE * SIGMA * math.sqrt(9)
    loud = _histogram([40, 35, 8, 0, 2, -1, 4, 3, 1])  # 92 ≥ 75, no bucket joins the support
    assert bar <= 92 and read_bounds(loud, SIGMA, BUCKETS) == reading
    assert not guard_noise(loud, SIGMA, kept, reading, ZERO).any()
    assert octave_shape(loud, SIGMA, BUCKETS, reading)[0] == (0.0, 92.0)


def test_a_guard_reading_as_the_neighbours_density_continued_keeps_its_noise() -> None:
    """The run [0, 512) is as wide as its neighbour [512, 1,024): a sum S ≥ c/2 (c the
    neighbour's noisy count) reads nearer to that density continued than to empty (an id column
    uniform down to 1) and keeps its share; S < c/2 and under 2.5σ√k is dropped."""
    noisy = np.zeros(BUCKETS.size)
    noisy[ZERO + 10:ZERO + 13] = [100, 200, 400]
    noisy[ZERO + 1:ZERO + 10] = [5, 5, 5, 5, 5, 10, 10, 10, 5]  # 60 ≥ 100/2, < 75
    reading = read_bounds(noisy, SIGMA, BUCKETS)
    assert reading.guarded[0] and reading.first == ZERO
    assert octave_shape(noisy, SIGMA, BUCKETS, reading)[0] == (0.0, 60.0)
    noisy[ZERO + 1:ZERO + 10] = [5, 5, 5, 5, 5, 0, 5, 5, 5]  # 40 < 100/2
    assert read_bounds(noisy, SIGMA, BUCKETS) == reading
    assert octave_shape(noisy, SIGMA, BUCKETS, reading)[0] == (0.0, 0.0)


def test_the_guard_away_from_zero_and_unguarded_sides_keep_their_noise() -> None:
    noisy = np.zeros(BUCKETS.size)
    noisy[ZERO + 10:ZERO + 13] = [300, 250, 200]
    noisy[ZERO + 13] = 20  # below 2.5σ: the guard's one bucket outward
    kept = np.zeros(BUCKETS.size, dtype=bool)
    kept[ZERO + 10:ZERO + 13] = True
    away = BoundsReading(512.0, 8191.0, ZERO + 10, ZERO + 13, (False, False), (False, True))
    assert not guard_noise(noisy, SIGMA, kept, away, ZERO).any()
    assert octave_shape(noisy, SIGMA, BUCKETS, away)[-1] == (4096.0, 20.0)
    # a negative column guarded up to zero: the buckets between it and 0 are the guard's
    negative = np.zeros(BUCKETS.size)
    negative[ZERO - 13:ZERO - 10] = [200, 250, 300]  # magnitudes 2^12..2^10
    negative[ZERO - 10:ZERO] = [5, -3, 9, 1, 0, 2, 4, -1, 6, 3]  # 26 < 2.5σ·√10
    below = np.zeros(BUCKETS.size, dtype=bool)
    below[ZERO - 13:ZERO - 10] = True
    towards = BoundsReading(-8191.0, 0.0, ZERO - 13, ZERO, (False, False), (False, True))
    dropped = guard_noise(negative, SIGMA, below, towards, ZERO)
    assert np.array_equal(np.flatnonzero(dropped), np.arange(ZERO - 10, ZERO))


def test_pure_noise_in_the_guard_keeps_its_mass_at_the_stated_rate() -> None:
    """Φ(−2.5) ≈ 0.62 % of draws: over 4,000 seeded draws at most 1.2 % (≈ 4.7 sd above) and at
    least 0.2 %. Without the √k (a 2.5σ bar for 9 buckets' sum) about 20 % pass."""
    rng = np.random.default_rng(7)
    kept = np.zeros(BUCKETS.size, dtype=bool)
    kept[ZERO + 10:ZERO + 15] = True
    reading = BoundsReading(0.0, 16383.0, ZERO, ZERO + 14, (False, False), (True, False))
    draws = 4000
    passed = 0
    for _ in range(draws):
        noisy = _histogram(list(rng.normal(0.0, SIGMA, 9)))
        passed += not guard_noise(noisy, SIGMA, kept, reading, ZERO).any()
    rate = passed / draws
    assert abs(norm.sf(EXTEND_NOISE) - 0.0062) < 1e-3
    assert 0.002 <= rate <= 0.012, rate
