"""Point masses from the bounds' one-value buckets (``bounds.bucket_piles``): an integer column's
buckets {0}, {1} and {−1} hold one value each, so their noisy counts are DP counts of that value;
one clearing BUCKET_PILE·σ becomes a point mass (post-processing). Checked against the
definition: the rule on given noisy counts, and through the domain step a pile of zeros under heap
discovery's threshold is declared at the rate its bucket's noise gives (binomial bounds)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import BUCKET_PILE, Buckets, bucket_piles
from synthpriv.privacy.randomness import RandomSource
from tests.privacy.test_heap_discovery import _job


def test_one_value_buckets_clearing_the_bar_become_point_masses() -> None:
    buckets = Buckets("integer")
    noisy = np.zeros(buckets.size)
    sigma = 10.0
    noisy[buckets.zero] = BUCKET_PILE * sigma  # at the bar: kept
    noisy[buckets.zero + 1] = BUCKET_PILE * sigma - 1  # below it
    noisy[buckets.zero - 1] = 100.0
    noisy[buckets.zero + 2] = 1000.0  # {2, 3}: two values, never a pile
    assert bucket_piles(noisy, sigma, buckets) == [-1.0, 0.0]
    assert bucket_piles(noisy, sigma, Buckets("continuous")) == []  # its zero bucket spans


def test_a_zero_pile_is_declared_at_the_rate_its_noise_gives(tmp_path: Path) -> None:
    """x: zeros in floor(3σ) rows (σ: the bounds' noise; heap discovery keeps them < 1 %) and
    values spread over 2…4,999. 0 is a point mass when its bucket's noisy count reaches 3σ:
    probability Φ((floor(3σ) − 3σ)/σ) ≈ 0.5 per seed; over 40 seeds within 4 binomial sd. A pile
    read from the exact count would never (or always) be declared."""
    schema = {"columns": [{"name": "g", "kind": "categorical", "categories": ["a", "b"]},
                          {"name": "x", "kind": "integer"}]}
    rows = 3000
    probe = pd.DataFrame({"g": ["a"] * rows, "x": np.arange(rows)})
    _, plan, _ = _job(tmp_path / "plan", probe, schema)  # the plan: public figures only
    sigma = plan.noise["sigma"]
    zeros = math.floor(BUCKET_PILE * sigma)
    rng = np.random.default_rng(3)
    x = np.concatenate([np.zeros(zeros), rng.integers(2, 5000, rows - zeros)])
    table = pd.DataFrame({"g": np.where(np.arange(rows) % 2, "a", "b"), "x": x})
    job, plan, stage = _job(tmp_path / "job", table, schema)
    draws = 40
    declared = 0
    for seed in range(draws):
        resolved = stage.resolve(job, plan, Ledger(job.config.budget.neighbouring),
                                 RandomSource.seeded(seed), chunks=[table])
        declared += 0.0 in (resolved.schema.column("x").point_masses or [])
    by_bucket = float(stats.norm.cdf((zeros - BUCKET_PILE * sigma) / sigma))
    by_heap = float(stats.norm.sf((plan.noise["heap_threshold"] - zeros) / plan.noise["heap_sigma"]))
    assert by_heap < 0.01  # the pile is under heap discovery's threshold
    expected = 1 - (1 - by_bucket) * (1 - by_heap)  # independent noises
    spread = 4 * math.sqrt(expected * (1 - expected) / draws)
    assert abs(declared / draws - expected) <= spread, (declared, expected, sigma)
