"""The DP kind decision on small tables (issue 24, branch kinds): a date/datetime format is
decided only when its noisy count clears its noise with the multiplicity correction of the
decimals test (the decision takes the largest of len(TIME_FORMATS) noisy counts per column), and
a decimals class that clears its noise makes the column continuous whatever its share."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
from scipy.stats import binom, norm

from synthpriv.config import load_job
from synthpriv.kinds import (
    CLASSES,
    KIND_ERROR,
    TIME_FORMATS,
    decide,
    fraction_noise,
    time_noise,
)
from synthpriv.pipeline import plan_job
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from tests.test_kinds import _job


def _exact(**counts: int) -> np.ndarray:
    """Exact class counts by label (underscores for spaces)."""
    cells = dict.fromkeys(CLASSES, 0)
    for label, count in counts.items():
        cells[label.replace("_", " ")] = count
    return np.array([cells[c] for c in CLASSES], dtype=np.int64)


def _runs(exact: np.ndarray, sigma: float, runs: int, columns: int, seed: int) -> np.ndarray:
    """Seeded noisy class histograms of ``columns`` columns of ``exact`` per run, shaped
    (runs, columns, classes)."""
    noisy = discrete_gaussian_histogram(np.tile(exact, runs * columns), sigma,
                                        RandomSource.seeded(seed))
    return noisy.reshape(runs, columns, len(CLASSES))


def test_numbers_on_a_small_table_are_read_as_a_date_at_most_at_the_stated_rate() -> None:
    """macrodata's case (203 rows of numbers at kind σ 77: 2.6σ): with 14 such auto columns, the
    largest of each column's 30 noise-only date-format counts beat its numbers in most runs
    under the former rule (no bar). Now the share of runs where any column is decided a date
    stays within KIND_ERROR (binomial tolerance)."""
    sigma, runs, columns = 10.0, 2000, 14
    rows = _runs(_exact(whole=26), sigma, runs, columns, seed=31)
    dated = [any(decide(c, sigma, columns=columns) in {f.label for f in TIME_FORMATS}
                 for c in run) for run in rows]
    assert sum(dated) <= binom.isf(1e-9, runs, KIND_ERROR)  # ≤ 15 of 2000


def test_a_date_column_above_its_bar_is_still_found_in_its_format() -> None:
    """A column whose cells are in one date format, (z + 2)σ of them (z = ``time_noise``), is
    decided that format in at least Φ(2) of the draws (binomial tolerance), and never another
    format; with few cells (within the noise) it is not a date at all in most draws."""
    sigma, draws, columns = 10.0, 2000, 5
    label = "date %Y-%m-%d"
    count = math.ceil((time_noise(columns) + 2) * sigma)
    rows = _runs(_exact(**{label: count}), sigma, draws, 1, seed=5)[:, 0]
    decided = [decide(r, sigma, columns=columns) for r in rows]
    assert decided.count(label) >= binom.ppf(1e-9, draws, norm.cdf(2))
    assert not {d for d in decided if d.startswith(("date", "datetime"))} - {label}
    few = _runs(_exact(**{label: 2 * round(sigma)}), sigma, draws, 1, seed=6)[:, 0]
    assert sum(decide(r, sigma, columns=columns) == label for r in few) <= draws // 2


def test_a_column_of_integers_with_some_real_fractions_is_continuous() -> None:
    """OJ ``DiscMM``'s shape on a larger table: 4 % of the cells have 1 decimal, (z + 2)σ of
    them. The decimals class clears its noise in at least Φ(2) of the draws, and the column is
    then continuous (its fractions are released, not rounded away: the former 5 % share rule
    decided it integer in every draw)."""
    sigma, draws, columns = 10.0, 2000, 5
    fractions = math.ceil((fraction_noise(columns) + 2) * sigma)
    whole = 24 * fractions
    rows = _runs(_exact(whole=whole, **{"1_decimal": fractions}), sigma, draws, 1, seed=9)[:, 0]
    continuous = sum(decide(r, sigma, columns=columns) == "continuous" for r in rows)
    assert continuous >= binom.ppf(1e-9, draws, norm.cdf(2))


def _macro_table(rows: int, columns: int, seed: int = 0) -> pd.DataFrame:
    """A small table of numbers, as statsmodels' macrodata: whole, 1- and 3-decimal columns."""
    rng = np.random.default_rng(seed)
    table = {}
    for i in range(columns):
        values = rng.normal(1000, 300, rows)
        table[f"c{i}"] = [f"{v:.{i % 3 + (i % 3 == 2)}f}" for v in values]
    return pd.DataFrame(table)


def test_the_domain_step_reads_no_date_out_of_a_small_table_of_numbers(tmp_path: Path) -> None:
    """Behavioural, through the domain step's kind pass (its own noise, σ from the plan): on a
    200-row table of 14 number columns (its counts within ~3σ of the noise at ε = 1, as
    macrodata's), seeded draws decide no column a date or datetime, beyond KIND_ERROR per draw
    (binomial tolerance). Under the former rule most draws decided one."""
    job = load_job(_job(tmp_path, _macro_table(200, 14), epsilon=1.0))
    plan, stages = plan_job(job)
    stage, stage_plan = stages[0][0], plan.stages[0]
    sigma = stage_plan.noise["kind_sigma"]
    assert time_noise(14) * sigma > 200  # the small-table regime: all 200 rows within the bar
    chunks = [pd.read_csv(job.data_path, dtype=str, keep_default_na=False)]
    draws = 60
    dated = 0
    for seed in range(draws):
        schema = stage._decide_kinds(job, stage_plan, RandomSource.seeded(seed), chunks)
        dated += any(schema.column(name).kind in ("date", "datetime") for name in stage.kinds)
    assert dated <= binom.isf(1e-9, draws, KIND_ERROR)
