"""AIM's settings for wide tables follow the number of columns (public): capped rounds and a
uniformly sampled workload."""

from __future__ import annotations

from collections import Counter
from itertools import combinations

import numpy as np

from synthpriv.marginals.aim import AimSettings, aim_rounds, sampled_workload


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
