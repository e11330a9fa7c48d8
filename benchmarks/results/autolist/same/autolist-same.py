"""Release bytes at a fixed seed from the safe draft of a table (run with PYTHONPATH = a code tree)."""

import hashlib
import sys
from pathlib import Path

import yaml

from synthpriv.config import load_job
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
from synthpriv.schema_infer import infer_schema, schema_yaml

train, folder, recipe = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
folder.mkdir(parents=True, exist_ok=True)
schema, _ = infer_schema(train, safe=True)
(folder / "schema.yaml").write_text(schema_yaml(schema))
config = {
    "name": "same",
    "data": {"path": str(train), "schema": str(folder / "schema.yaml")},
    "budget": {"epsilon": 1.0, "delta": 1e-5},
    "pipeline": {"recipe": recipe},
    "evaluation": {"enabled": False},
    "output": {"dir": str(folder / "out")},
}
(folder / "job.yaml").write_text(yaml.safe_dump(config))
job = load_job(folder / "job.yaml")
result = run_job(job, source=RandomSource.seeded(7), evaluate=False, force=True)
for path in sorted((folder / "out").rglob("*.csv")):
    print(path.relative_to(folder), hashlib.sha256(path.read_bytes()).hexdigest()[:16])
for c in result.job.schema.columns:
    if getattr(c, "lists", None) or getattr(c, "adopted_list", None):
        print("lists:", c.name, c.lists, c.adopted_list, len(c.categories or []))
