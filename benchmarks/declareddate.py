"""A date column declared ``kind: date``/``datetime`` against the same column left ``auto``
(issue 24, branch declareddate): the default release (safe draft, default recipe, ε = 1, as
``value_sweep.released``) with one date column of the draft replaced as a person would write it:

- ``auto``: the safe draft as drafted (the DP kind step decides the date);
- ``declared``: ``{kind: date|datetime, format}``, no bounds (the domain step buys them);
- ``bounds``: the same with ``lower``/``upper`` the real first and last date (what the data-read
  draft writes; public knowledge in this experiment), no ``weekdays``.

Per run one JSON line in ``daterange.py``'s shape (its ``figures``: per date column the share
outside the real range, KS, off-day share, weekday TVD, decided weekdays; the table's 2-way
TVD), so ``daterange.py --pair before.jsonl after.jsonl`` summarises two trees seed by seed.

    nice -n 10 env PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/declareddate.py \\
        --table islp/NYSE --column date --variant declared --seeds 0,1,2 --tag before

NOT differentially private (reads the real table for the ``bounds`` variant and the figures):
a development tool; none of these tables is held out.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from daterange import as_numbers, figures, table_text  # noqa: E402
from value_sweep import read_cells, text_delimiter  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.datetimes import format_times  # noqa: E402
from synthpriv.runner import run_job  # noqa: E402
from synthpriv.schema_infer import infer_schema, schema_yaml  # noqa: E402


def declared_entry(folder: Path, column: str, variant: str) -> dict | None:
    """The date column as the data-read draft writes it (kind, format, zone), without its bounds
    and weekdays for ``declared``, with its bounds for ``bounds``; None for ``auto``."""
    if variant == "auto":
        return None
    read, _ = infer_schema(folder / "data.csv")
    entry = next(c for c in read["columns"] if c["name"] == column)
    if entry["kind"] not in ("date", "datetime"):
        raise ValueError(f"the data-read draft calls {column!r} {entry['kind']}, not a date")
    keep = ("name", "kind", "format", "timezone", "missing")
    kept = {key: entry[key] for key in keep if key in entry}
    if variant == "bounds":
        kept |= {"lower": entry["lower"], "upper": entry["upper"]}
    return kept


def release(text: str, folder: Path, column: str, variant: str, seed: int) -> tuple:
    """The default release with ``column`` written as ``variant`` says; its cells and the run's
    resolved schema."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.csv").write_text(text, encoding="utf-8")
    draft, notes = infer_schema(folder / "data.csv", safe=True)
    if (entry := declared_entry(folder, column, variant)) is not None:
        draft["columns"] = [entry if c["name"] == column else c for c in draft["columns"]]
    (folder / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    config = {"name": "declared", "data": {"path": "data.csv", "schema": "schema.yaml",
                                           "delimiter": text_delimiter(text)},
              "budget": {"epsilon": 1.0, "delta": 1e-6},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")},
              "seed": seed}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    run_job(load_job(folder / "job.yaml"))
    manifest = json.loads((folder / "out" / "manifest.json").read_text())
    return read_cells(folder / "out" / "synthetic.csv"), manifest


def end_years(cells) -> dict:
    """The released dates' first and last year and the share in each (what a user sees at the
    ends)."""
    days = as_numbers(cells.fillna(""), "date").dropna()
    if days.empty:
        return {}
    years = format_times(days, "date", "%Y").astype(int)
    return {"first_year": int(years.min()), "last_year": int(years.max()),
            "first_year_share": float((years == years.min()).mean()),
            "last_year_share": float((years == years.max()).mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", required=True)
    parser.add_argument("--column", required=True)
    parser.add_argument("--variant", choices=("auto", "declared", "bounds"), required=True)
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--tag", default="x")
    parser.add_argument("--work", default="/tmp/declareddate-runs")
    args = parser.parse_args()
    text = table_text(args.table)
    real = read_cells(io.StringIO(text))
    for seed in (int(s) for s in args.seeds.split(",")):
        folder = (Path(args.work) / args.tag
                  / f"{args.table.replace('/', '_')}_{args.variant}_{seed}")
        shutil.rmtree(folder, ignore_errors=True)
        cells, manifest = release(text, folder, args.column, args.variant, seed)
        found = figures(real, cells, manifest["schema"])
        column = found["columns"].get(args.column, {})
        column |= end_years(cells[args.column])
        ledger = manifest["ledger"]
        print(json.dumps({"table": f"{args.table} [{args.variant}]", "seed": seed,
                          "tag": args.tag, "epsilon": ledger.get("epsilon"),
                          **found}), flush=True)


if __name__ == "__main__":
    main()
