"""The DP kind step alone (branch precision): on many seeded draws of ``DomainStage._decide_kinds``
on a suite table's safe draft (every column ``auto``, ε = 1, the suite's δ, AIM's plan), per
column: its real decimals (the data-read draft's ``decimals`` over its cells: 0 for whole
numbers), how often each kind is decided, and the precisions decided for it. Runs on whatever
``synthpriv`` is first on PYTHONPATH (main's has no precision: "-"), so before/after compare the
same draws of the same seeds. Reads the real table: a measurement, not a release.

    PYTHONPATH=. .venv/bin/python benchmarks/kind_draws.py college,wage,bikeshare,adult 200

A name that is no suite table is a development table (``benchmarks/dev_tables.py``, e.g.
``statsmodels/macrodata/macrodata``, ``islp/OJ``): drawn as ``benchmarks/value_sweep.py`` runs
it (the whole table, its safe draft, δ = 1e-6, the default recipe).
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import pandas as pd
import yaml

from synthpriv.chunks import iter_chunks
from synthpriv.config import load_job
from synthpriv.draft_columns import decimals
from synthpriv.kinds import present_cells
from synthpriv.pipeline import plan_job
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema_infer import infer_schema, schema_yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from suite import DELTA, TABLES, prepare  # noqa: E402


def dev_table(name: str, work: Path) -> tuple[Path, Path]:
    """The development table ``name`` (dev_tables' name) as a CSV under ``work`` and its safe
    draft (``schema infer``, no flag), as value_sweep runs it."""
    from dev_tables import all_tables

    text = next((t for n, t in all_tables() if n == name), None)
    if text is None:
        raise SystemExit(f"no suite or development table named {name!r}: a name from "
                         "benchmarks/suite.py's TABLES or benchmarks/dev_tables.py's list")
    folder = work / name.replace("/", "_")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.csv").write_text(text, encoding="utf-8")
    draft, notes = infer_schema(folder / "train.csv", safe=True)
    (folder / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    return folder / "train.csv", folder / "schema.yaml"


def safe_domain_step(table: str, work: Path, label: str, rows: int | None = None) -> tuple:
    """The job, domain stage, its plan and the table's chunks for ``table``'s safe draft (ε = 1,
    the suite's δ, AIM's plan; ``rows``: a seeded subsample of the train split), the run's
    files under ``work/table`` named by ``label``. A development table (not in the suite):
    whole, δ = 1e-6, as value_sweep runs it."""
    if table in TABLES:
        prepared = prepare(TABLES[table], work, ROOT / "benchmarks/.cache", "safe")
        train, schema_path, delta = prepared.train, prepared.schema_path, DELTA
    else:
        train, schema_path = dev_table(table, work)
        delta = 1e-6
        table = table.replace("/", "_")
    if rows is not None:  # a subsample (seeded), for speed on a large table
        frame = pd.read_csv(train, dtype=str, keep_default_na=False)
        train = work / table / f"train-{rows}.csv"
        frame.sample(n=min(rows, len(frame)), random_state=0).to_csv(train, index=False)
    n = len(pd.read_csv(train, usecols=[0]))
    config = work / table / f"job-{label}.yaml"
    config.write_text(yaml.safe_dump({
        "name": label, "data": {"path": str(train), "schema": str(schema_path)},
        "budget": {"epsilon": 1.0, "delta": min(delta, 0.1 / n)},
        "pipeline": {"recipe": "aim"}, "evaluation": {"enabled": False},
        "output": {"dir": str(work / table / f"out-{label}")}}))
    job = load_job(config)
    plan, stages = plan_job(job)
    chunks = list(iter_chunks(job.data_path, job.schema, job.config.data.chunk_rows))
    return job, stages[0][0], plan.stages[0], chunks


def draws(table: str, count: int, work: Path, rows: int | None) -> tuple[dict, dict, dict]:
    """Per column of ``table``'s safe draft: its real decimals, and over ``count`` seeded draws
    of the kind step the kinds and the precisions decided (Counters)."""
    job, stage, stage_plan, chunks = safe_domain_step(table, work, "kinds", rows)
    print(f"<!-- {table}: {sum(len(c) for c in chunks)} rows, {len(stage.kinds)} auto columns, "
          f"kind σ {stage_plan.noise['kind_sigma']:.1f} -->", file=sys.stderr, flush=True)
    real = {}
    for name in stage.kinds:
        cells = present_cells(pd.concat([chunk[name] for chunk in chunks]))
        numbers = pd.to_numeric(cells, errors="coerce")
        real[name] = decimals(cells[numbers.notna()]) if numbers.notna().mean() > 0.5 else None
    kinds: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    precisions: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
    for seed in range(count):
        decided = stage._decide_kinds(job, stage_plan, RandomSource.seeded(seed), chunks)
        for name in stage.kinds:
            column = decided.column(name)
            kinds[name][column.kind] += 1
            if column.kind == "continuous":
                precisions[name][getattr(column, "precision", "-")] += 1
    return real, kinds, precisions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", help="comma-separated suite tables")
    parser.add_argument("draws", type=int)
    parser.add_argument("--rows", type=int, help="subsample the train split to this many rows")
    parser.add_argument("--work", type=Path, default=Path("/tmp/kind-draws-work"))
    args = parser.parse_args()
    print("| table | column | real decimals | kinds decided | precisions (continuous) |")
    print("|---|---|---|---|---|")
    for table in args.tables.split(","):
        real, kinds, precisions = draws(table, args.draws, args.work, args.rows)
        for name in real:
            shown = ", ".join(f"{k} {n}" for k, n in kinds[name].most_common())
            precise = ", ".join(f"{p} ×{n}" for p, n in sorted(precisions[name].items(),
                                                                key=lambda item: str(item[0])))
            real_decimals = "text" if real[name] is None else real[name]
            print(f"| {table} | `{name}` | {real_decimals} | {shown} | {precise} |", flush=True)


if __name__ == "__main__":
    main()
