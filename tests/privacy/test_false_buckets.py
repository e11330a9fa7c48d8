"""DP bounds' false buckets are a chance per job (synthpriv.privacy.bounds.FALSE_OCCUPANCY), split
over the job's DP-bounded columns: with 86 of them (ISLP Caravan) a chance per column made a
false far bucket, an upper bound of 2^60 on a column of values 1-10, in some 2-9 % of runs."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import yaml
from scipy import stats

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import FALSE_OCCUPANCY
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import NumericColumn

COLUMNS = 86
LEVEL = 1e-4  # a rule that holds its stated rate fails the check with at most this probability


def test_pure_noise_shows_a_false_bucket_in_at_most_the_stated_share_of_jobs(
        tmp_path: Path) -> None:
    """86 integer columns without bounds, every cell missing: each column's bucket histogram is
    pure noise at the job's σ, so a column that gets bounds from the domain step saw a false
    bucket. At most FALSE_OCCUPANCY of the jobs may (0.1 %, one-sided binomial at LEVEL); per
    column (the threshold of one column's runs, not the job's) it was about 8 % of jobs."""
    schema = {"columns": [{"name": f"c{i}", "kind": "integer", "missing": True}
                          for i in range(COLUMNS)]}
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(schema))
    table = pd.DataFrame({f"c{i}": [None] * 20 for i in range(COLUMNS)}, dtype=float)
    table.to_csv(tmp_path / "t.csv", index=False)
    config = {"name": "wide", "data": {"path": "t.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(tmp_path / "job.yaml")
    planned = plan_job(job)
    assert planned[0].stages[0].noise["bounded_columns"] == COLUMNS  # on the plan
    jobs, false = 150, 0
    for seed in range(jobs):
        resolved, _ = resolve_domain(job, planned, Ledger("add_remove"), RandomSource.seeded(seed),
                                     [table])
        false += any(isinstance(c, NumericColumn) for c in resolved.schema.columns)
    allowed = int(stats.binom(jobs, FALSE_OCCUPANCY).ppf(1 - LEVEL))
    assert false <= allowed, (
        f"{false} of {jobs} jobs of {COLUMNS} columns read a bound from pure noise; the stated "
        f"rate {FALSE_OCCUPANCY:g} a job allows {allowed}")
