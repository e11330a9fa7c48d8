"""The hold-back split (evaluation.holdout_fraction) against the add/remove definition.

A fixed-size split (n − round(f·n) rows fitted) lets one added row *replace* a fitted row; the
split must instead hold back each row on its own coin, so that the fitted set of D ∪ {x} is the
fitted set of D plus, possibly, x (privacy review, issue 12, item 1)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.job import bernoulli_mask, hold_back
from synthpriv.privacy.randomness import RandomSource

from .conftest import job_config

FRACTION = 0.25


def holdback_job(tmp_path: Path):
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(
        tmp_path / "data.csv", tmp_path / "out",
        evaluation={"enabled": True, "holdout_fraction": FRACTION},
    )))
    (tmp_path / "data.csv").write_text("age,city,income\n1,Paris,1\n")
    return load_job(config)


def table(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"age": np.arange(rows), "city": "Paris", "income": 1.0})


def test_adding_a_row_adds_it_to_the_fitted_set_or_to_the_held_back_set(tmp_path: Path) -> None:
    """Same coins for the shared rows (same seed): D' = D + x fits D's fitted rows plus maybe x.
    For f = 0.2 the review's n = 32,562 made round(f·n) jump by one; any n must pass."""
    job = holdback_job(tmp_path)
    for n in (7, 8, 41, 402):  # several n so that round(f·n) jumps between n and n + 1 for some
        base = table(n)
        extra = pd.concat([base, pd.DataFrame({"age": [-1], "city": ["Nice"], "income": [5.0]})],
                          ignore_index=True)
        for seed in range(5):
            fitted, held = hold_back(job, base, RandomSource.seeded(seed))
            fitted_x, held_x = hold_back(job, extra, RandomSource.seeded(seed))
            assert fitted_x["age"].tolist() in (fitted["age"].tolist(),
                                                fitted["age"].tolist() + [-1])
            assert held_x["age"].tolist() in (held["age"].tolist(), held["age"].tolist() + [-1])
            assert len(fitted_x) + len(held_x) == n + 1


def test_rows_kept_are_binomial_not_a_function_of_n(tmp_path: Path) -> None:
    """Secure coins: over 200 splits of 400 rows, the kept count has the Binomial(400, 0.75)
    mean 300 and variance 75. The mean of 200 draws has std √(75/200) ≈ 0.61 (tolerance 5σ);
    the sample variance of 200 draws has std ≈ 75·√(2/199) ≈ 7.5 (tolerance 5σ). A fixed-size
    split gives variance 0."""
    job = holdback_job(tmp_path)
    rows = table(400)
    kept = np.array([len(hold_back(job, rows, RandomSource.secure())[0]) for _ in range(200)])
    assert abs(kept.mean() - 300) < 5 * 0.61
    assert abs(kept.var(ddof=1) - 75) < 5 * 7.5


@pytest.mark.parametrize("probability", [0.0, 0.1, 0.5, 0.9])
def test_bernoulli_mask_frequency(probability: float) -> None:
    """Frequency of 10⁵ coins within 5 binomial standard deviations of p."""
    mask = bernoulli_mask(100_000, probability, RandomSource.seeded(3))
    std = np.sqrt(probability * (1 - probability) / 100_000)
    assert abs(mask.mean() - probability) <= 5 * std + 1e-12
