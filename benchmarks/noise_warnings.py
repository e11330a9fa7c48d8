"""Which development tables get the 'mostly noise' warning, at plan time and after the run.

For each table (benchmarks/dev_tables.py, names matching a pattern): the CSV as a user has it,
the default `schema infer` draft (header only, every column auto), a job at ε = 1 (δ default),
then `synthpriv plan` and, with ``--run``, `synthpriv run --no-evaluation`, each in a child
process on the code at ``--tree`` (a checkout's root: before/after comparisons). One JSON line
per table: rows, columns, the plan's and the run's 'WARNING: stage' lines about noise, and the
CPU seconds of each child (user + sys). Development tables only (issue 24's suite):

    PYTHONPATH=. .venv/bin/python benchmarks/noise_warnings.py islp/,statsmodels/ --tree /tmp/x \
        --out results.jsonl [--run]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import resource
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from dev_tables import all_tables  # noqa: E402


def child(tree: Path, folder: Path, *args: str) -> tuple[list[str], float]:
    """Run `synthpriv ARGS` on ``tree``'s code in ``folder``: its noise WARNING lines, CPU s."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "synthpriv.cli", *args], cwd=folder,
                          env={**os.environ, "PYTHONPATH": str(tree)}, capture_output=True,
                          text=True, timeout=1800)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in done.stderr.splitlines()
             if line.startswith("WARNING: stage 'marginals'")]
    if done.returncode != 0:
        lines.append(f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1][:200]}")
    return lines, round(cpu, 2)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("patterns")
    parser.add_argument("--tree", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--run", action="store_true")
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    patterns = args.patterns.split(",")
    with args.out.open("a") as out:
        for name, text in all_tables():
            if not any(p in name for p in patterns):
                continue
            frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
            with tempfile.TemporaryDirectory() as work:
                folder = Path(work)
                (folder / "table.csv").write_text(text)
                schema = subprocess.run([sys.executable, "-m", "synthpriv.cli", "schema", "infer",
                                         "table.csv"], cwd=folder, capture_output=True, text=True,
                                        env={**os.environ, "PYTHONPATH": str(args.tree)})
                (folder / "schema.yaml").write_text(schema.stdout)
                (folder / "job.yaml").write_text(
                    "name: t\ndata:\n  path: table.csv\n  schema: schema.yaml\n"
                    f"budget:\n  epsilon: {args.epsilon}\n")
                plan, plan_cpu = child(args.tree, folder, "plan", "job.yaml")
                record = {"table": name, "rows": len(frame), "columns": frame.shape[1],
                          "tree": str(args.tree), "epsilon": args.epsilon, "plan": plan,
                          "plan_cpu": plan_cpu}
                if args.run:
                    record["run"], record["run_cpu"] = child(
                        args.tree, folder, "run", "job.yaml", "--no-evaluation")
            print(json.dumps(record), file=out, flush=True)
            print(name, len(frame), record.get("plan"), record.get("run"), flush=True)


if __name__ == "__main__":
    main()
