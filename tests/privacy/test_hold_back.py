"""The hold-back split (evaluation.holdout_fraction) keeps add/remove neighbours neighbours: each
row is held back on its own coin, so the number of fitted rows is Binomial(n, 1 − f), never a
fixed round((1 − f)·n) (with a fixed size, adding a row can replace a fitted one: privacy
review, issue 12). Mutations in benchmarks/privacy_mutations.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy import stats

from synthpriv.config import load_job
from synthpriv.job import hold_back
from synthpriv.privacy.randomness import RandomSource
from tests.evaluation.tiny import SCHEMA, tiny_table


def _job(folder: Path, fraction: float):
    (folder / "schema.yaml").write_text(yaml.safe_dump(SCHEMA))
    tiny_table(50, 1).to_csv(folder / "train.csv", index=False)
    config = {"name": "split", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": True, "holdout_fraction": fraction},
              "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return load_job(folder / "job.yaml")


def test_each_row_is_held_back_on_its_own_coin(tmp_path: Path) -> None:
    rows, fraction, draws = 400, 0.25, 300
    job = _job(tmp_path, fraction)
    real = pd.DataFrame({"row": np.arange(rows)})
    fitted = []
    held_first = 0
    for seed in range(draws):
        kept, held = hold_back(job, real, RandomSource.seeded(seed))
        assert held is not None and sorted([*kept["row"], *held["row"]]) == list(range(rows))
        fitted.append(len(kept))
        held_first += 0 in set(held["row"])
    fitted = np.array(fitted)
    # the count of fitted rows: mean and variance of Binomial(n, 1 − f) (chi-square interval)
    mean, variance = rows * (1 - fraction), rows * fraction * (1 - fraction)
    assert abs(fitted.mean() - mean) < 4 * np.sqrt(variance / draws)
    low, high = stats.chi2(draws - 1).ppf([5e-5, 1 - 5e-5]) / (draws - 1)
    ratio = float(fitted.var(ddof=1)) / variance
    assert low < ratio < high, (
        f"the number of fitted rows has variance {fitted.var(ddof=1):.1f} over {draws} splits; "
        f"independent coins give {variance:.1f} (a fixed-size split gives 0)")
    # and any one row is held back with probability f
    assert stats.binom(draws, fraction).ppf(5e-5) <= held_first <= \
        stats.binom(draws, fraction).ppf(1 - 5e-5)
