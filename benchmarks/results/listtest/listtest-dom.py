"""Domain step only: the State decision per seed (hhs safe draft, eps 1)."""
import sys
from pathlib import Path

import pandas as pd
import yaml

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema_infer import infer_schema, schema_yaml

train, folder, column = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
folder.mkdir(parents=True, exist_ok=True)
schema, _ = infer_schema(train, safe=True)
(folder / "schema.yaml").write_text(schema_yaml(schema))
table = pd.read_csv(train)
config = {"name": "state", "data": {"path": str(train), "schema": str(folder / "schema.yaml")},
          "budget": {"epsilon": 1.0, "delta": min(1e-5, 0.1 / len(table))}, "pipeline": {"recipe": "aim"},
          "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
(folder / "job.yaml").write_text(yaml.safe_dump(config))
job = load_job(folder / "job.yaml")
for seed in map(int, sys.argv[4:]):
    planned = plan_job(job)
    ledger = Ledger(job.config.budget.neighbouring)
    resolved, _ = resolve_domain(job, planned, ledger, RandomSource.seeded(seed), None)
    c = resolved.schema.column(column)
    print(seed, len(c.categories or []), getattr(c, "adopted_list", None), flush=True)
