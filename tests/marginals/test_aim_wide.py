"""AIM's settings for wide tables follow the number of columns (public): capped rounds and a
uniformly sampled workload."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np
import pytest

from synthpriv.marginals.aim import (
    AimSettings,
    aim_rounds,
    sampled_combinations,
    sampled_workload,
)
from synthpriv.marginals.selection import workload


def test_rounds_are_sixteen_per_column_up_to_the_cap() -> None:
    settings = AimSettings()
    assert aim_rounds(settings, 14) == 224  # Adult: unchanged
    assert aim_rounds(settings, 86) == 400  # Caravan: 1,376 without the cap
    assert aim_rounds(AimSettings(max_rounds=10_000), 86) == 1376


def test_a_large_workload_is_a_uniform_sample_of_its_marginals() -> None:
    queries = list(combinations(range(30), 3))  # 4,060 triples
    assert sampled_workload(queries[:500], 1000, np.random.default_rng(0)) == queries[:500]
    seen: Counter = Counter()
    for seed in range(40):
        sample = sampled_workload(queries, 1000, np.random.default_rng(seed))
        assert len(sample) == len(set(sample)) == 1000 and set(sample) <= set(queries)
        seen.update(sample)
    # each triple is drawn with probability 1000/4060 per sample: 9.85 times in 40, std ≈ 2.7
    counts = np.array([seen[q] for q in queries])
    assert abs(counts.mean() - 40 * 1000 / 4060) < 0.1
    assert counts.max() < 9.85 + 6 * 2.7


@pytest.mark.parametrize(("columns", "degree"), [(30, 3), (60, 2), (5, 3), (40, 1)])
def test_the_unlisted_sample_is_the_listed_one(columns: int, degree: int) -> None:
    """Same draw, same marginals, same order as sampling the listed workload: a table AIM ran
    before runs byte for byte as before."""
    names = [f"c{i}" for i in range(columns)]
    for seed in range(3):
        listed = sampled_workload(workload(names, degree), 1000, np.random.default_rng(seed))
        assert sampled_combinations(names, degree, 1000, np.random.default_rng(seed)) == listed


def test_a_wide_workload_is_sampled_without_listing_it() -> None:
    """2,308 columns (Khan): 2·10⁹ triples, never listed; the sample is 1,000 distinct sorted
    triples of distinct columns, spread over the columns."""
    names = [f"c{i:04d}" for i in range(2308)]
    sample = sampled_combinations(names, 3, 1000, np.random.default_rng(0))
    assert len(set(sample)) == 1000 and sample == sorted(sample)
    assert all(len(set(q)) == 3 and list(q) == sorted(q) for q in sample)
    firsts = np.array([names.index(q[0]) for q in sample])
    # the first column of a uniform triple has median about 2308·(1 − 2^(−1/3)) ≈ 476
    assert 400 < np.median(firsts) < 560
