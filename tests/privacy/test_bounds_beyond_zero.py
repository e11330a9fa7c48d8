"""The DP bounds' read-out step 1c (synthpriv.privacy.bounds.beyond_zero) on the real mechanism
(exact bucket counts + discrete Gaussian noise, seeded): a column whose core is its pile of zeros
alone but whose DP count of number cells shows many more values is no longer read "zeros only"
(every non-zero value released missing); a column of zeros only stays so; pure noise beyond the
zero bucket seeds at most at the seed's stated rate."""

from __future__ import annotations

import math

import numpy as np

from synthpriv.privacy.bounds import FALSE_SEED, Buckets, Present, beyond_zero, read_bounds
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource

BUCKETS = Buckets("integer")
SIGMA = 32.6  # anes96's plan (755 train rows, safe draft, ε = 1)
COLUMNS = 10  # anes96's DP-bounded columns (safe draft)


def _popul(seed: int = 5) -> np.ndarray:
    """755 values like anes96's ``popul`` (town size in 1,000s): 183 zeros, the other 572 spread
    evenly in log over 1–8,191 (13 octaves, ~44 a bucket: none near 2.5σ alone)."""
    rng = np.random.default_rng(seed)
    return np.concatenate([np.zeros(183), np.floor(2.0 ** rng.uniform(0, 13, 572))])


def _present(cells: int, source: RandomSource) -> Present:
    """The DP count of number cells as the domain step reads it (whole and fraction counts of
    the kind histogram, kind σ = 2σ, summed: σ·2·√2)."""
    noisy = discrete_gaussian_histogram(np.array([cells, 0]), 2 * SIGMA, source)
    return Present(float(noisy.sum()), 2 * SIGMA * math.sqrt(2))


def _readings(values: np.ndarray, draws: int, cells: int | None = None):
    counts = BUCKETS.counts(values)
    for seed in range(draws):
        source = RandomSource.seeded(seed)
        noisy = discrete_gaussian_histogram(counts, SIGMA, source).astype(float)
        present = _present(len(values) if cells is None else cells, source)
        yield noisy, read_bounds(noisy, SIGMA, BUCKETS, COLUMNS, present), present


def test_a_thin_spread_beside_a_pile_of_zeros_is_not_read_as_zeros_only() -> None:
    """popul-like column, 300 draws. On 2a5ff45 the core is the zero bucket alone and no other
    bucket passes 2.5σ, so the reading was zeros only in 59 % of draws (76 % of the rows then
    released missing) and [0, 1] in most others (the rest clipped onto 1); the bounds held 38 %
    of the values on average. With step 1c: zeros only (or no bounds: the zero bucket's 5.6σ
    misses the core's threshold now and then) in ≤ 30 % of draws (20 % measured: 4 binomial
    s.e. of margin), the bounds hold ≥ 65 % of the values on average (75 %), and step 1c's
    window never holds the zero bucket or joins negative noise to it (a window of pure noise on
    the negative side alone seeds with ≤ FALSE_SEED: ≤ 3 draws). Fails without step 1c (59 %
    zeros only, 38 % held)."""
    values = _popul()
    pairs = list(_readings(values, 300))
    readings = [r for _, r, _ in pairs]
    bounded = [r for r in readings if r is not None]
    zero = BUCKETS.zero
    windows = [np.flatnonzero(beyond_zero(noisy, SIGMA, zero, present, COLUMNS)) - zero
               for noisy, _, present in pairs]
    missed = 1 - sum(not r.zeros_only for r in bounded) / len(readings)
    inside = np.mean([np.mean((values >= r.lower) & (values <= r.upper)) for r in bounded])
    assert missed <= 0.30, f"zeros only or no bounds in {missed:.1%} of draws"
    assert inside >= 0.65, f"bounds hold {inside:.1%} of the values on average"
    assert sum(w.size > 0 and w[0] <= 0 for w in windows) <= 3


def test_a_column_of_zeros_is_widened_no_more_than_the_tail_rule_and_seed_allow() -> None:
    """755 zeros, 500 draws: the tail rule's one bucket next to zero passes 2.5σ by noise with
    probability Φ(−2.5) = FALSE_SEED (as on 2a5ff45: 2 of 500), and step 1c's gate (the count
    less the zero bucket's, noise √(σ_m² + σ²)) and then its seed on pure noise add ≤ FALSE_SEED
    more: widened in ≤ 2·FALSE_SEED + 3 binomial s.e. of draws. Fails if the zero bucket's pile
    is left in the seed's windows (every draw would seed the buckets next to zero)."""
    draws = 500
    readings = [r for _, r, _ in _readings(np.zeros(755), draws)]
    widened = sum(r is not None and not r.zeros_only for r in readings)
    rate = 2 * FALSE_SEED
    assert widened / draws <= rate + 3 * math.sqrt(rate * (1 - rate) / draws), (
        f"{widened} of {draws} draws widened a column of zeros")


def test_pure_noise_beyond_zero_seeds_at_most_at_the_stated_rate() -> None:
    """Zeros only, but the count of cells says 600 more values exist (the gate open: what a
    false gate pass looks like): the masked histogram beyond zero is pure noise, and the seed
    keeps a window of it (a reading other than without the count) in ≤ FALSE_SEED (0.6 %) of
    draws, + 3 binomial s.e. over 3,000 draws.
    Fails if the seed's threshold is lowered (z from one width's windows: ≈ 3 % of draws)."""
    counts = BUCKETS.counts(np.zeros(755))
    widened = 0
    draws = 3_000
    for seed in range(draws):
        source = RandomSource.seeded(seed)
        noisy = discrete_gaussian_histogram(counts, SIGMA, source).astype(float)
        reading = read_bounds(noisy, SIGMA, BUCKETS, COLUMNS, Present(755.0 + 600.0, 1.0))
        without = read_bounds(noisy, SIGMA, BUCKETS, COLUMNS)
        widened += reading != without
    bound = FALSE_SEED + 3 * math.sqrt(FALSE_SEED * (1 - FALSE_SEED) / draws)
    assert widened / draws <= bound, f"{widened} of {draws} draws seeded from noise"


def test_a_core_beyond_zero_reads_as_without_the_count() -> None:
    """A 60 %-zero column whose non-zero values fill one octave (the core shows it): step 1c
    never runs, the reading is the same with and without the DP count of cells, in 100 draws."""
    values = np.concatenate([np.zeros(450), np.full(300, 40.0)])
    counts = BUCKETS.counts(values)
    for seed in range(100):
        source = RandomSource.seeded(seed)
        noisy = discrete_gaussian_histogram(counts, SIGMA, source).astype(float)
        present = _present(len(values), source)
        assert read_bounds(noisy, SIGMA, BUCKETS, COLUMNS, present) == read_bounds(
            noisy, SIGMA, BUCKETS, COLUMNS)


def test_the_gate_keeps_step_1c_off_a_column_with_no_value_beyond_zero() -> None:
    """755 zeros with their real DP count of cells (all of them zeros): the gate reads the count
    less the zero bucket's, ≈ 0, and opens with probability ≤ column_false_occupancy /
    FALSE_SEED (≈ 1 %); with the seed's ≤ FALSE_SEED after it, step 1c changes the reading in
    ≤ column_false_occupancy = 10⁻⁴ of draws: at most 2 of 3,000 (0.3 expected). Fails if the
    gate reads the whole count of cells (755 ≫ its threshold: the seed then runs on every draw
    and keeps noise at its own rate, ≈ 0.2 %: 7 of 3,000 expected)."""
    counts = BUCKETS.counts(np.zeros(755))
    changed = 0
    for seed in range(3_000):
        source = RandomSource.seeded(seed)
        noisy = discrete_gaussian_histogram(counts, SIGMA, source).astype(float)
        present = _present(755, source)
        changed += read_bounds(noisy, SIGMA, BUCKETS, COLUMNS, present) != read_bounds(
            noisy, SIGMA, BUCKETS, COLUMNS)
    assert changed <= 2, f"step 1c changed the reading of a column of zeros in {changed} draws"

