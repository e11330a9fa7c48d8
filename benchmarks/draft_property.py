"""``schema infer`` (the data-read draft) → ``run`` on one table: the run must accept the draft of
its own file, and no value of a column drafted id or text may reach the release.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/draft_property.py [name-substring ...]

runs it on every development-suite table (benchmarks/dev_tables.py) whose name contains one of
the substrings, and prints one line per table (seconds, kinds drafted, or the refusal).
tests/test_draft_property.py runs the same check (generated tables fast, real ones slow).
"""

from __future__ import annotations

import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import pandas as pd
import yaml

from synthpriv.chunks import table_header
from synthpriv.config import load_job
from synthpriv.runner import run_job
from synthpriv.schema_infer import infer_schema, schema_yaml
from synthpriv.table import delimited, file_rows, header_delimiter, header_names


def draft_and_run(text: str, folder: Path, recipe: str = "independent",
                  epsilon: float = 1.0) -> dict:
    """Draft the CSV ``text``'s schema from its cells, run the recipe on it, and check the
    release: the kinds drafted and the values of id/text columns found in the release (must be
    none). Raises what the run raises."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.csv").write_text(text, encoding="utf-8")
    draft, notes = infer_schema(folder / "data.csv")
    (folder / "schema.yaml").write_text(schema_yaml(draft, notes=notes))
    delimiter = header_delimiter(table_header(folder / "data.csv"))  # the draft note's line
    config = {"name": "draft", "data": {"path": "data.csv", "schema": "schema.yaml",
                                        "delimiter": delimiter},
              "budget": {"epsilon": epsilon, "delta": 1e-6}, "pipeline": {"recipe": recipe},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}, "seed": 1}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    run_job(load_job(folder / "job.yaml"))
    cells = file_rows(delimited(folder / "data.csv", delimiter))
    real = pd.DataFrame(cells[1:], columns=header_names(cells[0]), dtype=str)
    released = pd.read_csv(folder / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    leaked = {}
    for column in draft["columns"]:
        if column["kind"] in ("id", "text"):
            values = set(real[column["name"]]) - {""}
            found = values & set(released[column["name"]])
            if found:
                leaked[column["name"]] = sorted(found)[:3]
    return {"kinds": Counter(c["kind"] for c in draft["columns"]), "leaked": leaked,
            "rows": len(released)}


def main(patterns: list[str]) -> int:
    from dev_tables import all_tables  # run as a script: benchmarks/ is on the path

    failures = 0
    for name, text in all_tables():
        if patterns and not any(p in name for p in patterns):
            continue
        start = time.perf_counter()
        with tempfile.TemporaryDirectory() as folder:
            try:
                result = draft_and_run(text, Path(folder))
                line = f"ok {dict(result['kinds'])}" + (
                    f" LEAKED {result['leaked']}" if result["leaked"] else "")
                failures += bool(result["leaked"])
            except Exception as error:  # noqa: BLE001 - a scratch report of every refusal
                line = f"REFUSED {type(error).__name__}: {str(error)[:300]}"
                failures += 1
        print(f"{name}: {time.perf_counter() - start:.1f}s {line}", flush=True)
    return failures


if __name__ == "__main__":
    sys.exit(1 if main(sys.argv[1:]) else 0)
