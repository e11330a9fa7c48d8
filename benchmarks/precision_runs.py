"""Decimals of released values on the safe draft (branch precision): seeded full runs (every
column ``auto``, ε = 1, the suite's δ) of suite tables, per recipe; per numeric column of the
data-read draft, the most decimals its real cells write and its released cells write, and the
share of released values with more decimals than any real cell; per run, the suite's mean 2-way
TVD and mean KS (``suite.score``). Runs on whatever ``synthpriv`` is first on PYTHONPATH, so
before/after are the same command with main's or the branch's code (``--label``). Reads the real
table: a measurement, not a release.

    PYTHONPATH=/work/main python benchmarks/precision_runs.py college,wage --label before
    PYTHONPATH=. python benchmarks/precision_runs.py college,wage --label after
    python benchmarks/precision_runs.py --summary   # the markdown tables from runs.jsonl

``--no-precision`` runs the code with the decided precision switched off (``decide_precision``
returns None: same kinds, same domain draws), for paired on/off runs of the same seeds.
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from suite import DELTA, TABLES, prepare, score  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.draft_columns import decimals  # noqa: E402
from synthpriv.schema import load_schema  # noqa: E402

OUT = Path("/tmp/precision-runs")


def subsample(path: Path, rows: int, to: Path) -> Path:
    """``rows`` rows of the CSV at ``path`` (seeded), written as text to ``to``."""
    frame = pd.read_csv(path, dtype=str, keep_default_na=False)
    frame.sample(n=min(rows, len(frame)), random_state=0).to_csv(to, index=False)
    return to


def cell_places(cells: pd.Series) -> pd.Series:
    """Each cell's decimals (the data-read draft's ``decimals``, one distinct text at a time)."""
    places = {cell: decimals(pd.Series([cell])) for cell in cells.unique()}
    return cells.map(places)


def column_decimals(real_csv: Path, released_csv: Path, names: list[str]) -> dict:
    """Per column: real max decimals, released max decimals, share of released values with
    more decimals than any real cell."""
    real = pd.read_csv(real_csv, dtype=str, keep_default_na=False)
    released = pd.read_csv(released_csv, dtype=str, keep_default_na=False)
    found = {}
    for name in names:
        real_cells = real[name].str.strip()
        real_cells = real_cells[pd.to_numeric(real_cells, errors="coerce").notna()]
        out = released[name].str.strip()
        out = out[pd.to_numeric(out, errors="coerce").notna()]
        most = int(cell_places(real_cells).max()) if len(real_cells) else 0
        places = cell_places(out)
        found[name] = {"real": most, "released": int(places.max()) if len(places) else None,
                       "extra": float((places > most).mean()) if len(places) else None}
    return found


def run(table: str, recipe: str, seed: int, rows: int | None, label: str) -> dict:
    """One seeded run on ``table``'s safe draft; its decimals and scores."""
    from synthpriv.runner import run_job

    work = OUT / f"work-{label}"  # one per label: before and after may run at once
    safe = prepare(TABLES[table], work, ROOT / "benchmarks/.cache", "safe")
    draft = prepare(TABLES[table], work, ROOT / "benchmarks/.cache", "draft")
    train, test = safe.train, safe.test
    if rows is not None:
        train = subsample(train, rows, work / table / f"train-{rows}.csv")
        test = subsample(test, rows, work / table / f"test-{rows}.csv")
    n = len(pd.read_csv(train, usecols=[0]))
    config = work / table / f"job-precision-{label}-{recipe}-{seed}.yaml"
    out_dir = OUT / "releases" / f"{table}-{recipe}-{seed}-{label}"
    config.write_text(yaml.safe_dump({
        "name": "precision", "seed": seed,
        "data": {"path": str(train), "schema": str(safe.schema_path), "holdout": str(test)},
        "budget": {"epsilon": 1.0, "delta": min(DELTA, 0.1 / n)},
        "pipeline": {"recipe": recipe},
        "evaluation": {"enabled": False, "target": TABLES[table].target},
        "output": {"dir": str(out_dir)}}))
    job = load_job(config)
    result = run_job(job, out=out_dir, force=True)
    schema = load_schema(draft.schema_path)
    synthetic = result.out_dir / "synthetic.csv"
    scores = score(train, synthetic, test, schema, TABLES[table].target)
    manifest = json.loads((result.out_dir / "manifest.json").read_text())
    decided = {c["name"]: (c["kind"], c.get("precision")) for c in manifest["schema"]["columns"]}
    columns = column_decimals(train, synthetic, schema.numeric_names)
    for name, entry in columns.items():
        entry["kind"], entry["precision"] = decided.get(name, (None, None))
    return {"table": table, "recipe": recipe, "seed": seed, "label": label, "rows": n,
            "tvd_2": scores["tvd_2"], "mean_ks": scores["mean_ks"], "columns": columns}


def summary(records: list[dict]) -> None:
    """Markdown: per table and recipe, mean 2-way TVD and mean KS per label; per column, the
    decimals real / released (most over runs) and the mean share of extra-decimal values."""
    cells = collections.defaultdict(list)
    for record in records:
        cells[(record["table"], record["recipe"], record["label"])].append(record)
    labels = sorted({r["label"] for r in records}, reverse=True)  # before, after
    print("| table | recipe | " + " | ".join(f"{lab}: 2-way TVD | {lab}: mean KS | {lab}: seeds"
                                              for lab in labels) + " |")
    print("|---|---|" + "---|---|---|" * len(labels))
    pairs = sorted({(t, r) for t, r, _ in cells})
    for table, recipe in pairs:
        line = [table, recipe]
        for lab in labels:
            runs = cells.get((table, recipe, lab), [])
            line += [f"{statistics.mean(r['tvd_2'] for r in runs):.4f}" if runs else "-",
                     f"{statistics.mean(r['mean_ks'] for r in runs):.3f}" if runs else "-",
                     ",".join(str(r["seed"]) for r in runs)]
        print("| " + " | ".join(line) + " |")
    if len(labels) == 2:  # paired: the same seeds under both labels
        print()
        print("| table | recipe | paired seeds | 2-way TVD: " + " − ".join(labels)
              + " (± se) | mean KS: " + " − ".join(labels) + " (± se) |")
        print("|---|---|---|---|---|")
        for table, recipe in pairs:
            runs = [{r["seed"]: r for r in cells.get((table, recipe, lab), [])} for lab in labels]
            seeds = sorted(set(runs[0]) & set(runs[1]))
            if len(seeds) < 2:
                continue
            line = [table, recipe, str(len(seeds))]
            for figure in ("tvd_2", "mean_ks"):
                diffs = [runs[0][s][figure] - runs[1][s][figure] for s in seeds]
                line.append(f"{statistics.mean(diffs):+.4f} ± "
                            f"{statistics.stdev(diffs) / len(diffs) ** 0.5:.4f}")
            print("| " + " | ".join(line) + " |")
    print()
    print("| table | recipe | column | real decimals | " + " | ".join(
        f"{lab}: kinds (precision) | {lab}: released decimals (most) | {lab}: extra-decimal "
        "share (mean)" for lab in labels) + " |")
    print("|---|---|---|---|" + "---|---|---|" * len(labels))
    for table, recipe in pairs:
        names = next(iter(cells[(table, recipe, labels[0])] or cells[(table, recipe, labels[-1])])
                     )["columns"]
        for name in names:
            line = [table, recipe, f"`{name}`", str(names[name]["real"])]
            for lab in labels:
                runs = [r["columns"][name] for r in cells.get((table, recipe, lab), [])]
                kinds = collections.Counter(f"{c['kind']}" + (f" ({c['precision']})"
                                                              if c["precision"] else "")
                                            for c in runs)
                extra = [c["extra"] for c in runs if c["extra"] is not None]
                line += [", ".join(f"{k} ×{n}" for k, n in kinds.items()),
                         str(max((c["released"] or 0) for c in runs)) if runs else "-",
                         f"{statistics.mean(extra):.1%}" if extra else "-"]
            print("| " + " | ".join(line) + " |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="?", default="", help="comma-separated suite tables")
    parser.add_argument("--recipes", default="aim,mst")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--rows", type=int, help="subsample train and test to this many rows")
    parser.add_argument("--label", default="after")
    parser.add_argument("--summary", action="store_true")
    parser.add_argument("--no-precision", action="store_true",
                        help="switch the decided precision off (paired on/off runs)")
    parser.add_argument("--records", type=Path, default=OUT / "runs.jsonl")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    records_path = args.records
    if args.no_precision:
        from synthpriv import domain_stage

        domain_stage.decide_precision = lambda *_args, **_kwargs: None
    if args.summary:
        summary([json.loads(line) for line in records_path.read_text().splitlines()])
        return
    for table in args.tables.split(","):
        for recipe in args.recipes.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                record = run(table, recipe, seed, args.rows, args.label)
                with records_path.open("a") as handle:
                    handle.write(json.dumps(record) + "\n")
                print(table, recipe, seed, args.label, f"TVD {record['tvd_2']:.4f}",
                      f"KS {record['mean_ks']:.3f}", flush=True)


if __name__ == "__main__":
    main()
