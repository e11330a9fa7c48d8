"""The guard's buckets towards zero add no noise to the octave shape (``bounds.guard_noise``).

Definition: the buckets the read-out's guard added between the support and the bucket around 0
(outside the support) keep their noisy counts in ``octave_shape`` only when their sum reaches
EXTEND_NOISE·σ·√k (pure noise there passes with probability Φ(−2.5) ≈ 0.6 %) or when they read
nearer to the support's next bucket's density continued down to 0 than to empty (a
likelihood-ratio test: Σ S_i·e_i ≥ Σ e_i²/2, e_i = c·2^-i). The guard away
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
    """The support's bucket next to the guard, [512, 1,024), reads c = 40: continued at the same
    rows per value down to 0 it expects e_i = 40·2^-i in the guard's i-th bucket outward. Counts
    near those (Σ S_i·e_i ≥ Σ e_i²/2) keep their share, though their sum is under 2.5σ√9; counts
    nearer empty are dropped."""
    noisy = np.zeros(BUCKETS.size)
    noisy[ZERO + 10:ZERO + 13] = [40, 200, 400]
    continued = [20, 10, 5, 3, 1, 1, 0, 0, 0]  # i = 1 (256-511) … 9 (1): sum 40 < 75
    noisy[ZERO + 1:ZERO + 10] = continued[::-1]
    reading = read_bounds(noisy, SIGMA, BUCKETS)
    assert reading.guarded[0] and reading.first == ZERO
    kept = np.zeros(BUCKETS.size, dtype=bool)
    kept[ZERO + 10:ZERO + 13] = True
    expected = 40 * 0.5 ** np.arange(1, 10)
    assert np.dot(continued, expected) >= np.dot(expected, expected) / 2
    assert not guard_noise(noisy, SIGMA, kept, reading, ZERO).any()
    assert octave_shape(noisy, SIGMA, BUCKETS, reading)[0] == (0.0, 40.0)
    empty = [5, 2, 1, 0, 0, 3, 0, 0, 1]  # the same 3σ-wide noise, nearer empty
    noisy[ZERO + 1:ZERO + 10] = empty[::-1]
    assert read_bounds(noisy, SIGMA, BUCKETS) == reading
    assert np.dot(empty, expected) < np.dot(expected, expected) / 2
    assert guard_noise(noisy, SIGMA, kept, reading, ZERO).sum() == 9
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
