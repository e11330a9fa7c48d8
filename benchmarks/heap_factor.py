"""The domain step's noise per HEAP_NOISE_FACTOR F on the development suite's safe drafts
(benchmarks/README.md, "heaps"): the default share, σ and category threshold T, and the heap
counts' σ_h, threshold T_h and the rows a heap needs to be kept nearly always (T_h + 2σ_h).
Plans only: reads no cell (the train split's header and row count).

    PYTHONPATH=. .venv/bin/python benchmarks/heap_factor.py --cache /tmp/heaps-cache \\
        --factors 1,1.25,1.5 --tables wage,bikeshare,adult,randhie
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import yaml

import synthpriv.privacy.domain_budget as budget
from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.schema_infer import infer_schema

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--factors", default="1.25")
    parser.add_argument("--tables", default="wage,bikeshare,adult,randhie")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="heap-factor-"))
    for table in args.tables.split(","):
        train = (ROOT / "data/adult/adult_train.csv" if table == "adult"
                 else args.cache / "suite" / table / "train.csv")  # benchmarks/suite.py's split
        rows = sum(1 for _ in train.open()) - 1
        schema, _ = infer_schema(train, safe=True)
        (folder / f"{table}.yaml").write_text(yaml.safe_dump(schema))
        config = {"name": table, "data": {"path": str(train), "schema": str(folder / f"{table}.yaml")},
                  "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": "mst"},
                  "evaluation": {"enabled": False}}
        (folder / f"{table}-job.yaml").write_text(yaml.safe_dump(config))
        for factor in (float(f) for f in args.factors.split(",")):
            budget.HEAP_NOISE_FACTOR = factor
            plan, stages = plan_job(load_job(folder / f"{table}-job.yaml"))
            noise = plan.stages[0].noise
            sigma, threshold = noise["heap_sigma"], noise["heap_threshold"]
            print(f"{table} ({rows:,} rows, {len(schema['columns'])} columns) F = {factor}: share "
                  f"{stages[0][1]:.3f}, σ {noise['sigma']:.1f}, T {noise['category_threshold']:.0f}"
                  f"; σ_h {sigma:.1f}, T_h {threshold:.0f}, T_h + 2σ_h {threshold + 2 * sigma:.0f}"
                  f" ({(threshold + 2 * sigma) / rows:.1%})")


if __name__ == "__main__":
    main()
