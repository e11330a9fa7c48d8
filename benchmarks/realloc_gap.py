"""Category discovery after the domain step's reallocation (branch realloc): the safe draft's
2-way TVD and the categories it keeps, per seed, on one suite table.

Runs the suite's safe draft (``schema infer``: every column ``auto``) and, with ``--draft``, the
data-read draft, MST or AIM, ε = 1, seeds 100, 101, … (as ``safe_gap.py``), and records per run
the 2-way TVD, the ledger's ε, the domain step's planned threshold T and the categories kept of
the ``--watch`` columns (the resolved schema: DP outputs). Run it with PYTHONPATH at the code to
measure (main for "before", the branch for "after"); the same seeds give the same draws up to the
domain step's category noise. Development-suite tables only (none is held out).

    PYTHONPATH=. .venv/bin/python benchmarks/realloc_gap.py --table wage --recipe mst \\
        --seeds 3 --watch race,maritl --label after --out benchmarks/results/realloc.jsonl
    .venv/bin/python benchmarks/realloc_gap.py --summarize benchmarks/results/realloc*.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from safe_gap import column_tvd, two_way  # noqa: E402
from suite import TABLES, job_config, prepare, read_scored  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.privacy.randomness import RandomSource  # noqa: E402
from synthpriv.runner import run_job  # noqa: E402
from synthpriv.schema import CategoricalColumn, load_schema  # noqa: E402


def summarize(paths: list[Path]) -> None:
    """Markdown tables from the records in ``paths``: per table, recipe, schema and label the
    mean 2-way TVD (min–max), the safe/data-read ratio (the draft's runs of the same table and
    recipe, any label), each watched column's mean 1-way TVD and its values kept in some runs
    only (value: runs kept / runs)."""
    records = [json.loads(line) for path in paths for line in path.read_text().splitlines()]
    groups: dict[tuple, list[dict]] = {}
    for r in records:
        groups.setdefault((r["table"], r["recipe"], r["mode"], r["label"]), []).append(r)
    drafts = {(t, rc): np.mean([r["tvd_2"] for r in rs]) for (t, rc, m, _), rs in groups.items()
              if m == "draft"}
    paired = {}
    for (table, recipe, mode, label), rs in groups.items():
        other = groups.get((table, recipe, mode, "before"))
        if label == "after" and other:
            before = {r["seed"]: r["tvd_2"] for r in other}
            paired[(table, recipe, mode)] = [r["tvd_2"] - before[r["seed"]] for r in rs
                                             if r["seed"] in before]
    print("| table | recipe | schema | code | runs | 2-way TVD mean (min–max) | / data-read | "
          "watched 1-way TVD | values kept in some runs only |")
    print("|---|---|---|---|---|---|---|---|---|")
    for (table, recipe, mode, label), rs in sorted(groups.items()):
        tvd = [r["tvd_2"] for r in rs]
        ratio = np.mean(tvd) / drafts[(table, recipe)] if (table, recipe) in drafts else None
        one_way = "; ".join(f"{c} {np.mean([r['one_way'][c] for r in rs]):.3f}"
                            for c in rs[0]["one_way"])
        partial = []
        for column in rs[0]["kept"]:
            kept = Counter(v for r in rs for v in r["kept"].get(column, []))
            some = [f"{column}={v.strip()} {k}/{len(rs)}" for v, k in sorted(kept.items())
                    if k < len(rs)]
            partial += some if len(some) <= 3 else [f"{column}: {len(some)} values"]
            partial.append(f"{column}: {np.mean([len(r['kept'][column]) for r in rs]):.1f} kept")
        print(f"| {table} | {recipe} | {mode} | {label} | {len(rs)} | {np.mean(tvd):.4f} "
              f"({min(tvd):.4f}–{max(tvd):.4f}) | {'' if ratio is None else f'{ratio:.2f}'} | "
              f"{one_way} | {'; '.join(partial)} |")
    print("\n| table | recipe | after − before, same seeds: mean ± standard error (runs) |")
    print("|---|---|---|")
    for (table, recipe, _), diffs in sorted(paired.items()):
        error = np.std(diffs, ddof=1) / np.sqrt(len(diffs)) if len(diffs) > 1 else float("nan")
        print(f"| {table} | {recipe} | {np.mean(diffs):+.4f} ± {error:.4f} ({len(diffs)}) |")


def main() -> None:
    """Command line: one record per run appended to ``--out`` and printed."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="wage", help=", ".join(TABLES))
    parser.add_argument("--recipe", default="mst")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--first-seed", type=int, default=100)
    parser.add_argument("--watch", default="", help="columns whose kept categories to record")
    parser.add_argument("--draft", action="store_true", help="also run the data-read draft")
    parser.add_argument("--label", default="", help="written into each record (before/after)")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/realloc.jsonl")
    parser.add_argument("--summarize", type=Path, nargs="+",
                        help="print the tables of these records' files and exit")
    args = parser.parse_args()
    if args.summarize:
        summarize(args.summarize)
        return
    work = Path(tempfile.mkdtemp(prefix="realloc-gap-"))
    table = TABLES[args.table]
    draft = prepare(table, work, args.cache, "draft")
    scoring = load_schema(draft.schema_path)
    real = read_scored(draft.train, scoring)
    test = read_scored(draft.test, scoring)
    numeric = set(scoring.numeric_names)
    watch = [w for w in args.watch.split(",") if w]
    modes = ["draft", "safe"] if args.draft else ["safe"]
    for mode in modes:
        prepared = draft if mode == "draft" else prepare(table, work, args.cache, "safe")
        config = job_config(prepared, args.recipe, 1.0, len(real))
        config_path = prepared.schema_path.with_suffix(f".{mode}.job.yaml")
        config_path.write_text(yaml.safe_dump(config))
        for seed in range(args.first_seed - 100, args.first_seed - 100 + args.seeds):
            start = time.process_time()
            result = run_job(load_job(config_path), source=RandomSource.seeded(100 + seed),
                             evaluate=False, force=True)
            csv = work / f"{mode}-{seed}.csv"
            result.synthetic.to_csv(csv, index=False)
            synthetic = read_scored(csv, scoring)
            schema = result.job.schema
            kept = {name: list(schema.column(name).categories or [])
                    for name in watch if isinstance(schema.column(name), CategoricalColumn)}
            domain = next((s for s in result.plan.stages if s.stage == "domain"), None)
            events = [e for e in result.manifest["ledger"]["events"]
                      if "categor" in e.get("label", "")]
            record = {
                "label": args.label, "table": args.table, "recipe": args.recipe, "mode": mode,
                "seed": 100 + seed, "tvd_2": two_way(real, synthetic, test, scoring,
                                                    table.target),
                "one_way": {name: column_tvd(real[name], synthetic[name], name in numeric)
                            for name in watch},
                "kept": kept, "epsilon": result.manifest["ledger"]["epsilon"],
                "planned_threshold": None if domain is None
                else domain.noise.get("category_threshold"),
                "category_events": events, "cpu_seconds": time.process_time() - start}
            with args.out.open("a", encoding="utf-8") as handle:
                handle.write(json.dumps(record) + "\n")
            print(f"{args.label} {args.table} {args.recipe} {mode} seed {100 + seed}: 2-way "
                  f"{record['tvd_2']:.4f}, ε {record['epsilon']:.4f}, kept "
                  + "; ".join(f"{k}: {len(v)} {v}" for k, v in kept.items()), flush=True)


if __name__ == "__main__":
    main()
