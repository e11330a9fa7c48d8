"""A table's safe draft (a column's ``lists`` as the draft writes them), the recipe ``$RECIPE``
(default AIM), ε = 1, fixed seeds: the released COLUMN's value counts as JSON lines.

    PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/list_state.py TRAIN_CSV FOLDER LABEL \
        COLUMN SEED [SEED ...]

Branches autolist (hhs_breaches `State`, loans `state`) and listtest ran it (as copies in
benchmarks/results/); ``list_state_analyse.py`` reads its output. NOT a release tool: seeded.
"""

import json
import os
import sys
from pathlib import Path

import pandas as pd
import yaml

from synthpriv.config import load_job
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
from synthpriv.schema_infer import infer_schema, schema_yaml

train, folder, label = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
column = sys.argv[4]
folder.mkdir(parents=True, exist_ok=True)
schema, _ = infer_schema(train, safe=True)
(folder / "schema.yaml").write_text(schema_yaml(schema))
rows = len(pd.read_csv(train))
for seed in map(int, sys.argv[5:]):
    config = {
        "name": "state",
        "data": {"path": str(train), "schema": str(folder / "schema.yaml")},
        "budget": {"epsilon": 1.0, "delta": min(1e-5, 0.1 / rows)},
        "pipeline": {"recipe": os.environ.get("RECIPE", "aim")},
        "evaluation": {"enabled": False},
        "output": {"dir": str(folder / f"out{seed}")},
    }
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    result = run_job(
        load_job(folder / "job.yaml"), source=RandomSource.seeded(seed), evaluate=False, force=True
    )
    released = pd.read_csv(folder / f"out{seed}" / "synthetic.csv", keep_default_na=False, dtype=str)[column]
    chosen = result.job.schema.column(column)
    print(
        json.dumps(
            {
                "label": label,
                "seed": seed,
                "counts": released.value_counts().to_dict(),
                "categories": len(chosen.categories or []),
                "adopted": None
                if getattr(chosen, "adopted_list", None) is None
                else chosen.adopted_list.model_dump(),
            }
        ),
        flush=True,
    )
