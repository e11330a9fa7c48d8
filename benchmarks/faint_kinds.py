"""How often the DP kind step reads each column of a development table as what its cells are
(branch faint, issue 24 "the private path collapses small tables"): the run's own plan (safe
draft, default recipe, ε = 1, δ = 1e-6) gives the kind σ and the number of auto columns; each
column's exact class counts (synthpriv.kinds.class_counts) get ``--draws`` seeded discrete
Gaussian draws at that σ, and ``kinds.decide`` reads each draw, as the domain step does.

    PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/faint_kinds.py [name-substring ...] \\
        [--draws 1000] [--max-rows 2000] [--max-columns 200] [--json out.json]

``PYTHONPATH`` chooses the code whose rule is measured (a ``git archive`` of main for the
"before"). A column's cells are called (``value_sweep.real_type``) integer, number, date or
text; a decision is *right* when it matches (integer → integer, number → continuous, text →
categorical/text/id, date → a date or datetime format), *numeric* when an integer or number
column is read integer or continuous. Columns with no cells are left out. Per table: the mean
share of right decisions over its columns, the share of number columns read categorical/text
(released all missing), and of text columns read numeric. NOT differentially private (it reads
the real cells): a development tool, for choosing a rule on the development tables only.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from dev_tables import all_tables  # noqa: E402
from value_sweep import read_cells, real_type, text_delimiter  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.kinds import CLASSES, class_counts, decide  # noqa: E402
from synthpriv.pipeline import plan_job  # noqa: E402
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram  # noqa: E402
from synthpriv.privacy.randomness import RandomSource  # noqa: E402
from synthpriv.schema_infer import infer_schema, schema_yaml  # noqa: E402

TEXT_KINDS = ("categorical", "text", "id")


def kind_noise(text: str, folder: Path) -> tuple[float, int]:
    """(kind σ, number of auto columns) of the table's default job, from its plan (no data)."""
    (folder / "data.csv").write_text(text, encoding="utf-8")
    draft, notes = infer_schema(folder / "data.csv", safe=True)
    (folder / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    config = {"name": "faint", "data": {"path": "data.csv", "schema": "schema.yaml",
                                        "delimiter": text_delimiter(text)},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "evaluation": {"enabled": False}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(folder / "job.yaml")
    plan, _ = plan_job(job)
    return float(plan.stages[0].noise["kind_sigma"]), len(job.schema.auto)


def right(real: str, kind: str) -> bool:
    if real == "integer":
        return kind == "integer"
    if real == "number":
        return kind == "continuous"
    if real == "date":
        return kind.startswith(("date ", "datetime "))
    return kind in TEXT_KINDS


def table_rates(name: str, text: str, draws: int, seed: int) -> dict:
    cells = read_cells(io.StringIO(text), text_delimiter(text))
    with tempfile.TemporaryDirectory() as folder:
        sigma, columns = kind_noise(text, Path(folder))
    source = RandomSource.seeded(seed)
    rows = []
    for column in cells.columns:
        real = real_type(cells[column])
        exact = class_counts(cells[column])
        if exact.sum() == 0:
            continue
        noisy = discrete_gaussian_histogram(np.tile(exact, draws), sigma, source)
        kinds = [decide(r, sigma, columns=columns) for r in noisy.reshape(draws, len(CLASSES))]
        rows.append({"column": column, "real": real, "cells": int(exact.sum()),
                     "right": float(np.mean([right(real, k) for k in kinds])),
                     "read_text": float(np.mean([k in TEXT_KINDS for k in kinds])),
                     "read_numeric": float(np.mean([k in ("integer", "continuous")
                                                    for k in kinds]))})
    numbers = [r for r in rows if r["real"] in ("integer", "number")]
    texts = [r for r in rows if r["real"] == "text"]
    return {"table": name, "rows": len(cells), "auto_columns": columns, "kind_sigma": sigma,
            "right": float(np.mean([r["right"] for r in rows])) if rows else None,
            "numbers_read_text": float(np.mean([r["read_text"] for r in numbers]))
            if numbers else None,
            "text_read_numeric": float(np.mean([r["read_numeric"] for r in texts]))
            if texts else None,
            "columns": rows}


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("names", nargs="*")
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--max-rows", type=int, default=2000)
    parser.add_argument("--max-columns", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json")
    args = parser.parse_args(argv)
    results = []
    print("| table | rows | auto columns | kind σ | right | number columns read text | "
          "text columns read numeric |\n|---|---|---|---|---|---|---|")
    for name, text in all_tables():
        if args.names and not any(n in name for n in args.names):
            continue
        rows = text.count("\n")
        if rows > args.max_rows + 1 or text.split("\n", 1)[0].count(",") >= args.max_columns:
            continue
        try:
            result = table_rates(name, text, args.draws, args.seed)
        except Exception as error:  # noqa: BLE001 - a table the draft or plan refuses is named
            print(f"| {name} | {rows} | refused: {type(error).__name__} | | | | |")
            continue
        results.append(result)
        fmt = lambda v: "–" if v is None else f"{v:.3f}"  # noqa: E731
        print(f"| {name} | {result['rows']} | {result['auto_columns']} | "
              f"{result['kind_sigma']:.1f} | {fmt(result['right'])} | "
              f"{fmt(result['numbers_read_text'])} | {fmt(result['text_read_numeric'])} |",
              flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
