"""The heaps' range test of the domain step alone (branch codebounds): per code column of a
suite table's safe draft, over seeded draws, how often the rule fires, R/σ_R, and the rows of
the train split that the heaps' range leaves outside (clipped when it fires). Reads the real
table: a measurement, not a release. Needs the split of ``benchmarks/codebounds.py`` (its
--work folder) or Adult's own.

    PYTHONPATH=. .venv/bin/python benchmarks/codebounds_domain.py fair 40
"""

from __future__ import annotations

import collections
import copy
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource

ROOT = Path(__file__).resolve().parent.parent


def main() -> None:
    table, seeds = sys.argv[1], int(sys.argv[2])
    work = Path(sys.argv[3]) if len(sys.argv) > 3 else Path("/tmp/codebounds-bench")
    folder = work / table
    train = ROOT / "data/adult/adult_train.csv" if table == "adult" else folder / "train.csv"
    config = folder / "job-domain.yaml"
    config.write_text(yaml.safe_dump({
        "name": "domain", "data": {"path": str(train), "schema": str(folder / "schema-safe.yaml")},
        "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": "mst"},
        "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out-domain")}}))
    job = load_job(config)
    plan, stages = plan_job(job)
    stage, stage_plan = stages[0][0], plan.stages[0]
    real = pd.read_csv(train)
    rows: dict[str, list] = collections.defaultdict(list)
    for seed in range(seeds):
        draw = copy.deepcopy(stage)
        draw.resolve(job, stage_plan, Ledger(job.config.budget.neighbouring),
                     RandomSource.seeded(seed))
        for name, found in draw.heap_ranges.items():
            values = pd.to_numeric(real[name], errors="coerce").dropna()
            outside = float(((values < found.lower) | (values > found.upper)).sum())
            rows[name].append((found.residual / found.sigma, found.codes, outside, found.sigma,
                               found.lower, found.upper))
    for name, draws in rows.items():
        ratio = np.array([d[0] for d in draws])
        fired = [d for d in draws if d[1]]
        ranges = collections.Counter((d[4], d[5]) for d in fired).most_common(3)
        clipped = np.mean([d[2] for d in fired]) if fired else float("nan")
        print(f"{name}: {len(draws)} draws with 2+ heaps, fired {len(fired)}, R/σ_R "
              f"{ratio.mean():.2f} ± {ratio.std():.2f}, σ_R {np.mean([d[3] for d in draws]):.1f}, "
              f"train rows outside the range when fired {clipped:.1f}, ranges {ranges}")


if __name__ == "__main__":
    main()
