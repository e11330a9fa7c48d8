"""The domain step's mechanisms against their definitions: bucket and value-count histograms of
L2 sensitivity 1 (√2 under replace-one) by brute force over every neighbour of small tables; the
discrete Gaussian tails and the partition-selection δ against independent sums; the kept-set
probability at the threshold (seeded, tolerance from the binomial); the threshold's δ on the
ledger."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import pytest

from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    Ledger,
    ThresholdEvent,
    pld_epsilon,
    rdp_epsilon,
    zcdp_rho,
)
from synthpriv.privacy.bounds import (
    MAX_EXPONENT,
    Buckets,
    bounds_from_noisy,
    occupancy_threshold,
)
from synthpriv.privacy.domain_budget import plan_domain_noise
from synthpriv.privacy.partition import (
    discrete_gaussian_tails,
    select_partitions,
    selection_delta,
    selection_threshold,
)
from synthpriv.privacy.randomness import RandomSource

VALUES = [-(2.0**70), -5.5, -1.0, 0.0, 1e-9, 0.75, 1.0, 3.0, 4.0, 1000.0, 2.0**64, np.nan]


@pytest.mark.parametrize("kind", ["integer", "continuous"])
def test_every_value_falls_in_the_bucket_whose_range_holds_it(kind: str) -> None:
    buckets = Buckets(kind)
    values = np.array([v for v in VALUES if not np.isnan(v)
                       and (kind == "continuous" or float(v).is_integer())])
    for value, bucket in zip(values, buckets.index(values), strict=True):
        low, high = buckets.value_range(int(bucket))
        clipped = np.clip(value, -(2.0**MAX_EXPONENT), 2.0**MAX_EXPONENT)
        assert 0 <= bucket < buckets.size
        assert low <= clipped <= high or abs(value) >= 2.0**MAX_EXPONENT, (value, bucket)
    # the ranges increase (continuous ones touch: each bucket is half-open)
    ranges = [buckets.value_range(b) for b in range(buckets.size)]
    assert all(a[1] <= b[0] and a[0] < b[0] for a, b in itertools.pairwise(ranges))
    assert buckets.counts(np.array(VALUES)).sum() == sum(not np.isnan(v) for v in VALUES)


def _neighbours(table: tuple, pool: list, relation: str):
    """Every add/remove or replace-one neighbour of ``table`` over values ``pool``."""
    if relation == "add_remove":
        for i in range(len(table)):
            yield table[:i] + table[i + 1:]
        for value in pool:
            yield table + (value,)
    else:
        for i, value in itertools.product(range(len(table)), pool):
            yield table[:i] + (value,) + table[i + 1:]


@pytest.mark.parametrize("relation, bound", [("add_remove", 1.0), ("replace_one", math.sqrt(2))])
def test_bucket_histogram_sensitivity_by_brute_force(relation: str, bound: float) -> None:
    """Max over every table of ≤ 3 rows (values incl. missing, tiny, huge, negative) and every
    neighbour of the L2 distance between their bucket counts: exactly the stated sensitivity."""
    buckets, worst = Buckets("continuous"), 0.0
    for size in range(4):
        for table in itertools.product(VALUES, repeat=size):
            counts = buckets.counts(np.array(table, dtype=float))
            for other in _neighbours(table, VALUES, relation):
                distance = np.linalg.norm(counts - buckets.counts(np.array(other, dtype=float)))
                worst = max(worst, distance)
    assert worst == pytest.approx(bound)


@pytest.mark.parametrize("relation, bound", [("add_remove", 1.0), ("replace_one", math.sqrt(2))])
def test_value_counts_sensitivity_by_brute_force(relation: str, bound: float) -> None:
    """The value counts category discovery noises, over the union of the values present (a value
    one table lacks counts 0): L2 distance between neighbours at most the stated sensitivity."""
    pool, worst = ["a", "b", " a", None], 0.0
    for size in range(4):
        for table in itertools.product(pool, repeat=size):
            counts = Counter(v for v in table if v is not None)
            for other in _neighbours(table, pool, relation):
                theirs = Counter(v for v in other if v is not None)
                keys = set(counts) | set(theirs)
                distance = math.sqrt(sum((counts[k] - theirs[k]) ** 2 for k in keys))
                worst = max(worst, distance)
    assert worst == pytest.approx(bound)


def _tail_exact(sigma: float, k: int) -> float:
    """P(Z ≥ k) for the discrete Gaussian, summed independently (Python floats, wide support)."""
    support = range(-int(80 * sigma) - 5, int(80 * sigma) + 6)
    weights = {j: math.exp(-j * j / (2 * sigma * sigma)) for j in support}
    return math.fsum(w for j, w in weights.items() if j >= k) / math.fsum(weights.values())


@pytest.mark.parametrize("sigma", [0.7, 3.0, 41.5])
def test_tails_match_an_independent_sum(sigma: float) -> None:
    tails, offset = discrete_gaussian_tails(sigma)
    for k in [-3, 0, 1, 2, int(3 * sigma), int(6 * sigma) + 1]:
        assert tails[k + offset] == pytest.approx(_tail_exact(sigma, k), rel=1e-9, abs=1e-300)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_threshold_is_the_smallest_within_delta(relation: str) -> None:
    sigma, delta, epsilon = 12.3, 1e-7, 1.0
    threshold, spent = selection_threshold(sigma, delta, relation, epsilon)
    assert spent <= delta < selection_delta(sigma, threshold - 1, relation, epsilon)
    tail = _tail_exact(sigma, threshold - 1 if relation == "add_remove" else threshold)
    factor = 1.0 if relation == "add_remove" else 1 + math.e
    assert spent == pytest.approx(factor * tail, rel=1e-9)


def test_a_value_of_count_one_is_kept_with_probability_delta() -> None:
    """Add/remove: the δ of selection is the chance that a value only one table holds (count 1)
    is released. Measured over 6,000 seeded draws at a threshold where it is large enough to see;
    tolerance 4 binomial standard deviations."""
    sigma, threshold, draws = 2.0, 4, 6000
    delta = selection_delta(sigma, threshold, "add_remove", 1.0)
    source = RandomSource.seeded(13)
    counts = {f"v{i}": 1 for i in range(draws)}
    kept = len(select_partitions(counts, sigma, threshold, source))
    assert abs(kept / draws - delta) <= 4 * math.sqrt(delta * (1 - delta) / draws)


def test_kept_set_probability_at_the_threshold() -> None:
    """A value whose count equals the threshold is kept when its noise is ≥ 0: probability
    P(Z ≥ 0) = (1 + P(Z = 0))/2, exactly from the pmf. 6,000 seeded values, 4σ of the binomial."""
    sigma, threshold, draws = 5.0, 30, 6000
    p = _tail_exact(sigma, 0)
    kept = select_partitions({f"v{i}": threshold for i in range(draws)}, sigma, threshold,
                             RandomSource.seeded(5))
    assert abs(len(kept) / draws - p) <= 4 * math.sqrt(p * (1 - p) / draws)
    assert kept == sorted(kept)


def test_bounds_read_from_the_buckets_the_counts_occupy() -> None:
    """Noise-free counts (σ tiny): ages 17..90 occupy [16, 32) .. [64, 128): bounds [16, 127];
    non-negative gains with zeros: [0, 2^17 − 1]; a continuous column around zero."""
    ages = Buckets("integer")
    counts = ages.counts(np.repeat(np.arange(17, 91), 50).astype(float))
    assert bounds_from_noisy(counts.astype(float), 1e-3, ages) == (16.0, 127.0)
    gains = ages.counts(np.array([0.0] * 900 + [99999.0] * 100))
    assert bounds_from_noisy(gains.astype(float), 1e-3, ages) == (0.0, 2.0**17 - 1)
    scores = Buckets("continuous")
    counts = scores.counts(np.array([-3.2] * 100 + [0.4] * 100))
    assert bounds_from_noisy(counts.astype(float), 1e-3, scores) == (-4.0, 0.5)
    assert bounds_from_noisy(np.zeros(ages.size), 1.0, ages) is None


def test_bounds_ignore_buckets_below_the_occupancy_threshold() -> None:
    """A bucket whose noisy count is below the threshold is noise: it moves no bound."""
    buckets, sigma = Buckets("integer"), 10.0  # 7,400 rows: 2σ below 0.5 %, so no guard
    noisy = buckets.counts(np.repeat(np.arange(17, 91), 100).astype(float)).astype(float)
    far = int(buckets.index(np.array([2.0**40]))[0])
    noisy[far] = occupancy_threshold(sigma, buckets.size) * 0.99  # alone: neighbours are 0
    assert bounds_from_noisy(noisy, sigma, buckets) == (16.0, 127.0)


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_domain_plan_spends_its_rho_and_its_delta(relation: str) -> None:
    rho, delta = 0.003, 1e-7
    noise = plan_domain_noise(rho, ["age", "income"], ["job", "city", "sex"], delta, relation, 1.0)
    gaussian = [e for e in noise.events if isinstance(e, DiscreteGaussianEvent)]
    thresholds = [e for e in noise.events if isinstance(e, ThresholdEvent)]
    assert sum(zcdp_rho(e) for e in gaussian) == pytest.approx(rho)
    assert [e.count for e in gaussian] == [5] and len(thresholds) == 3
    assert "age, income" in gaussian[0].label and "job, city, sex" in gaussian[0].label
    assert sum(e.delta for e in thresholds) <= delta
    sensitivity = 1.0 if relation == "add_remove" else math.sqrt(2)
    assert noise.sigma == pytest.approx(math.sqrt(5 / (2 * rho)) * sensitivity)


def test_threshold_delta_is_taken_out_of_the_job_delta() -> None:
    """ε at δ with a ThresholdEvent of δ_t is ε of the other events at δ − δ_t (both accountants),
    and no finite ε once the thresholds spend all of δ."""
    events = [DiscreteGaussianEvent(5.0, 4)]
    delta, spent = 1e-6, 4e-7
    ledger = Ledger("add_remove")
    ledger.extend(events + [ThresholdEvent(spent, label="t")])
    assert ledger.epsilon(delta) == pytest.approx(
        min(rdp_epsilon(events, delta - spent, "add_remove"),
            pld_epsilon(events, delta - spent, "add_remove")))
    assert ledger.to_dict(delta)["delta_thresholds"] == pytest.approx(spent)
    assert math.isinf(rdp_epsilon(events + [ThresholdEvent(delta)], delta, "add_remove"))
    with pytest.raises(ValueError):
        Ledger().record(ThresholdEvent(0.0))


def _kept_set_distribution(counts: dict[str, int], universe: list[str], sigma: float,
                           threshold: int) -> dict[frozenset[str], float]:
    """Exact distribution of the released set: each present value kept independently with
    probability P(count + Z ≥ T); an absent value is never kept."""
    keep = {v: (_tail_exact(sigma, threshold - counts[v]) if counts.get(v, 0) > 0 else 0.0)
            for v in universe}
    distribution = {}
    for chosen in itertools.product([False, True], repeat=len(universe)):
        p = math.prod(keep[v] if c else 1 - keep[v] for v, c in zip(universe, chosen, strict=True))
        distribution[frozenset(v for v, c in zip(universe, chosen, strict=True) if c)] = p
    return distribution


def _hockey_stick(p: dict, q: dict, epsilon: float) -> float:
    """δ(ε) = Σ_S max(0, P(S) − e^ε Q(S)): the smallest δ for which the pair is (ε, δ)-close."""
    return math.fsum(max(0.0, p[s] - math.exp(epsilon) * q.get(s, 0.0)) for s in p)


def _gaussian_delta_shift(sigma: float, epsilon: float) -> float:
    """δ(ε) of the discrete Gaussian N_Z(0, σ²)² against the same shifted by (1, −1) (the
    histogram of a replaced row, L2 sensitivity √2), summed exactly over the lattice."""
    support = np.arange(-int(40 * sigma) - 3, int(40 * sigma) + 4)
    pmf = np.exp(-(support.astype(float) ** 2) / (2 * sigma**2))
    pmf /= pmf.sum()
    shifted_up, shifted_down = np.roll(pmf, 1), np.roll(pmf, -1)  # pmf of Z+1, Z−1
    joint_p = np.outer(pmf, pmf)
    joint_q = np.outer(shifted_up, shifted_down)
    return float(np.maximum(0.0, joint_p - math.exp(epsilon) * joint_q).sum())


@pytest.mark.parametrize("before, after", [
    ({"a": 1, "c": 3}, {"b": 1, "c": 3}),          # a vanishes, b appears
    ({"a": 2, "c": 3}, {"a": 1, "b": 1, "c": 3}),  # only b appears
    ({"a": 1, "b": 2}, {"b": 3}),                  # only a vanishes
])
def test_replace_one_selection_delta_bounds_the_exact_divergence(before, after) -> None:
    """Replace-one partition selection against the definition: for neighbouring tables whose
    supports differ, the exact δ(ε) between the released-set distributions (both directions) is
    at most the Gaussian's own δ(ε) at sensitivity √2 plus the ThresholdEvent's (1 + e^ε)·P(Z ≥ T)
    — the bound the ledger reports (module docstring). It would fail if the factor were dropped
    to P(Z ≥ T): the first pair alone leaks about P(Z ≥ T − 1)."""
    sigma, threshold, epsilon = 2.0, 3, 1.0  # small σ and T: the threshold term dominates
    universe = sorted(set(before) | set(after))
    p = _kept_set_distribution(before, universe, sigma, threshold)
    q = _kept_set_distribution(after, universe, sigma, threshold)
    bound = (_gaussian_delta_shift(sigma, epsilon)
             + selection_delta(sigma, threshold, "replace_one", epsilon))
    exact = max(_hockey_stick(p, q, epsilon), _hockey_stick(q, p, epsilon))
    assert 0 < exact <= bound
    if before == {"a": 1, "c": 3}:
        assert exact > _gaussian_delta_shift(sigma, epsilon) + _tail_exact(sigma, threshold)
