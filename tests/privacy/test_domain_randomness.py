"""The domain step's decisions are random as its mechanisms say: a value or bucket at the
threshold is kept with the probability its noise gives (never deterministically, as exact counts
would make it), and a new value of count 1 passes the discovery threshold with the δ the ledger
records, the δs of all columns within the job's δ share. Mutations in
benchmarks/privacy_mutations.py."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger, ThresholdEvent
from synthpriv.privacy.bounds import Buckets, occupancy_threshold
from synthpriv.privacy.domain_budget import plan_domain_noise
from synthpriv.privacy.partition import discrete_gaussian_tails, select_partitions
from synthpriv.privacy.randomness import RandomSource

LEVEL = 1e-4  # a correct mechanism fails a check with at most this probability (two-sided)


def _keep_probability(count: int, threshold: float, sigma: float) -> float:
    """P(count + Z ≥ threshold), Z ~ N_Z(0, σ²): Z must reach the integer ⌈threshold − count⌉."""
    tails, offset = discrete_gaussian_tails(sigma)
    return float(tails[math.ceil(threshold - count) + offset])


def _within(hits: int, draws: int, probability: float) -> bool:
    low, high = stats.binom(draws, probability).ppf([LEVEL / 2, 1 - LEVEL / 2])
    return low <= hits <= high


def test_a_value_is_kept_with_the_probability_its_noisy_count_passes() -> None:
    sigma, threshold, draws = 3.0, 10, 600
    counts = {"below": 8, "at": 10, "above": 12}
    kept = {value: 0 for value in counts}
    for seed in range(draws):
        for value in select_partitions(counts, sigma, threshold, RandomSource.seeded(seed)):
            kept[value] += 1
    for value, count in counts.items():
        expected = _keep_probability(count, threshold, sigma)
        assert _within(kept[value], draws, expected), (
            f"value of count {count} kept {kept[value]} times in {draws}; the noise N_Z(0, "
            f"{sigma:g}²) keeps it with probability {expected:.3f}")


@pytest.mark.parametrize("columns", [1, 3])
def test_new_values_pass_with_the_recorded_delta_within_the_delta_share(columns: int) -> None:
    """A value only one neighbour holds has count 1; it is released with probability
    P(1 + Z ≥ T), which the ThresholdEvent of its column must cover; the columns' events sum to
    at most the δ share. A large δ share makes the probability measurable."""
    share, draws = 0.06, 4000
    noise = plan_domain_noise(0.05, [], [f"c{i}" for i in range(columns)], share, "add_remove",
                              1.0)
    deltas = [e.delta for e in noise.events if isinstance(e, ThresholdEvent)]
    assert len(deltas) == columns and sum(deltas) <= share * (1 + 1e-12)
    passed = sum(bool(select_partitions({"new": 1}, noise.sigma, noise.threshold,
                                        RandomSource.seeded(seed))) for seed in range(draws))
    assert _within(passed, draws, deltas[0]), (
        f"a new value of count 1 passed the threshold {passed} times in {draws}; the ledger "
        f"records δ = {deltas[0]:.4f} for it")


def test_dp_bounds_at_the_occupancy_threshold_depend_on_the_noise(tmp_path: Path) -> None:
    """A bucket holding about as many rows as the occupancy threshold sets the upper bound in
    about half of the runs: read from noisy counts, the bound is random, with the probability
    the noise gives; read from exact counts it would be fixed."""
    schema = {"columns": [{"name": "weight", "kind": "integer"},
                          {"name": "colour", "kind": "categorical", "categories": ["a", "b"]}]}
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "bounds", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    buckets = Buckets("integer")
    rng = np.random.default_rng(0)
    body = rng.integers(1, 100, 600)
    pd.DataFrame({"weight": body, "colour": "a"}).to_csv(tmp_path / "train.csv", index=False)
    job = load_job(tmp_path / "job.yaml")
    planned = plan_job(job)
    sigma = planned[0].stages[0].noise["sigma"]
    threshold = occupancy_threshold(sigma, buckets.size)
    far = math.ceil(threshold)  # rows at 1000, in the bucket [512, 1023]
    table = pd.DataFrame({"weight": np.concatenate([body, np.full(far, 1000)]), "colour": "a"})
    draws, high = 40, 0
    for seed in range(draws):
        resolved, _ = resolve_domain(job, planned, Ledger("add_remove"), RandomSource.seeded(seed),
                                     [table])
        upper = resolved.schema.column("weight").upper
        assert upper < 512 or upper >= 1023  # the far bucket is in the support, or not at all
        high += upper >= 1023  # (on a small table the guard may add one bucket beyond either)
    expected = _keep_probability(far, threshold, sigma)
    assert _within(high, draws, expected), (
        f"the bucket of {far} rows at the threshold {threshold:.2f} set the upper bound in {high} "
        f"of {draws} runs; its noise gives probability {expected:.3f}")
