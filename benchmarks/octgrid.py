"""Before/after of the shaped fine grid (branch octgrid, issue 24 item 4): the same jobs, seeds
and safe drafts run on two code trees, scored on the wide numeric columns.

Per (table, recipe, seed): the suite's train split (``suite.prepare``, 80/20, seeded) with its
safe draft (``schema infer --safe``: names and kinds only, the DP domain step buys the rest),
ε = 1, ``synthpriv run`` in a subprocess with PYTHONPATH (and cwd) at ``--code``; then, scored
here from synthetic.csv: per numeric column the KS distance to the train split, the 10/25/50/
75/90 % quantiles of the ``WIDE`` columns (real and released), the release's minimum, and the
mean 2-way TVD (``evaluate_utility``, 16 bins). Records go to ``--out``/runs.jsonl (one line a
run, with the code tree's commit), the summary to ``--out``/summary.md.

    PYTHONPATH=/work/wt-octgrid .venv/bin/python benchmarks/octgrid.py --code /work/main \\
        --label before --tables hhs_breaches,wage --recipes mst,aim --seeds 1,2,3
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.stats import ks_2samp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import suite  # noqa: E402  (benchmarks/suite.py: tables, splits, drafts, scoring reads)

from synthpriv.evaluation.utility import evaluate_utility  # noqa: E402
from synthpriv.schema import load_schema  # noqa: E402

WIDE = {"hhs_breaches": ["Individuals.Affected"], "loans": ["annual_income", "total_credit_limit",
        "total_collection_amount_ever", "loan_amount", "balance"],
        "adult": ["fnlwgt", "capital-gain"], "wage": ["wage"],
        "bikeshare": ["casual", "registered", "bikers"]}
QUANTILES = (0.1, 0.25, 0.5, 0.75, 0.9)


def run(code: Path, prepared: suite.Prepared, recipe: str, seed: int, folder: Path,
        max_seconds: float) -> dict:
    """One job on the code tree ``code``; its figures (or status and error)."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = len(pd.read_csv(prepared.train, usecols=[0]))
    config = suite.job_config(prepared, recipe, 1.0, rows) | {
        "seed": seed, "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    started = time.perf_counter()
    env = os.environ | {"PYTHONPATH": str(code)}
    try:
        done = subprocess.run([sys.executable, "-m", "synthpriv.cli", "run",
                               str(folder / "job.yaml"), "--no-evaluation", "--force"], cwd=code,
                              env=env, capture_output=True, text=True, timeout=max_seconds)
    except subprocess.TimeoutExpired:
        return {"status": "timeout"}
    if done.returncode != 0:
        return {"status": "error", "error": done.stderr.strip().splitlines()[-1:]}
    seconds = time.perf_counter() - started
    release = next((folder / "out").rglob("synthetic.csv"))
    return {"status": "ok", "seconds": seconds, **score(prepared, release)}


def score(prepared: suite.Prepared, release: Path) -> dict:
    """KS per numeric column, quantiles of the wide ones, mean 2-way TVD."""
    draft = prepared.schema_path.with_name("schema-draft.yaml")
    if not draft.exists():
        suite.draft_schema(prepared.train, draft)
    schema = load_schema(draft)
    real, fake = suite.read_scored(prepared.train, schema), suite.read_scored(release, schema)
    numeric = schema.numeric_names
    ks = {}
    for name in numeric:
        a, b = real[name].dropna(), fake[name].dropna()
        ks[name] = float(ks_2samp(a, b).statistic) if len(a) and len(b) else None
    wide = {}
    for name in WIDE.get(prepared.table.name, []):
        a, b = real[name].dropna(), fake[name].dropna()
        wide[name] = {"real": [float(a.quantile(q)) for q in QUANTILES],
                      "released": [float(b.quantile(q)) for q in QUANTILES] if len(b) else None,
                      "min": [float(a.min()), float(b.min()) if len(b) else None],
                      "whole": bool(len(b) == 0 or (b == b.round()).all())}
    marginals = evaluate_utility(real, fake, numeric_columns=numeric,
                                 quality_report=False)["marginals"]
    return {"ks": ks, "wide": wide, "tvd_2": marginals["2-way"]["mean"]}


def summary(records: list[dict]) -> str:
    """A markdown table: per table, recipe, label and wide column the mean KS (± sd over seeds)
    and the mean released quartiles against the real ones; the mean 2-way TVD."""
    lines = ["| table | recipe | code | runs | column | KS | real 10/25/50/75/90 % | released "
             "(mean over runs) | 2-way TVD | mean KS, all numeric |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    for record in records:
        if record["status"] == "ok":
            groups.setdefault((record["table"], record["recipe"], record["label"]),
                              []).append(record)
    for (table, recipe, label), runs in sorted(groups.items()):
        tvd = [r["tvd_2"] for r in runs]
        every = [statistics.fmean(v for v in r["ks"].values() if v is not None) for r in runs]
        for name in WIDE.get(table, []):
            ks = [r["ks"][name] for r in runs if r["ks"].get(name) is not None]
            released = [r["wide"][name]["released"] for r in runs if r["wide"][name]["released"]]
            real = runs[0]["wide"][name]["real"]
            lines.append(
                f"| {table} | {recipe} | {label} | {len(runs)} | {name} | {_mean(ks, 3)} | "
                f"{' / '.join(f'{v:,.0f}' for v in real)} | "
                f"{' / '.join(f'{v:,.0f}' for v in np.mean(released, axis=0)) if released else '–'}"
                f" | {_mean(tvd, 4)} | {_mean(every, 3)} |")
    return "\n".join(lines) + "\n"


def formats(records: list[dict], work: Path) -> str:
    """How the releases kept in ``work`` write their numeric cells (``value_fidelity``'s format
    checks, as the suite's yardstick): per table, recipe and code, the mean count of columns
    with more decimals than any real cell, integers written as floats, negatives where the real
    column has none, and fake spikes; per wide column the most decimals written (real: most)."""
    from synthpriv.evaluation.values import csv_cells, value_fidelity

    lines = ["| table | recipe | code | more decimals / int as float / negative columns | fake "
             "spikes | wide columns: most decimals released (real) |", "|---|---|---|---|---|---|"]
    groups: dict[tuple, list[dict]] = {}
    drafts: dict[str, suite.Prepared] = {}
    for record in records:
        if record["status"] != "ok":
            continue
        folder = work / record["table"] / f"{record['label']}-{record['recipe']}-{record['seed']}"
        if record["table"] not in drafts:
            drafts[record["table"]] = suite.prepare(suite.TABLES[record["table"]], work,
                                                    ROOT / "benchmarks/.cache", "draft")
        prepared = drafts[record["table"]]
        schema = load_schema(prepared.schema_path)
        release = folder / "out" / "synthetic.csv"
        real, fake = suite.read_scored(prepared.train, schema), suite.read_scored(release, schema)
        values = value_fidelity(real, fake, schema.numeric_names,
                                real_cells=csv_cells(prepared.train, None),
                                synthetic_cells=csv_cells(release, None))
        groups.setdefault((record["table"], record["recipe"], record["label"]), []).append(values)
    for (table, recipe, label), runs in sorted(groups.items()):
        counts = " / ".join(f"{statistics.fmean(v['summary'][key] for v in runs):.1f}" for key in (
            "more_decimals_columns", "integer_as_float_columns", "negative_columns"))
        spikes = statistics.fmean(v["summary"]["fake_spikes"] for v in runs)
        wide = ", ".join(
            f"{name} {max(v['columns'][name]['format']['synthetic_max_decimals'] for v in runs)}"
            f" ({runs[0]['columns'][name]['format']['real_max_decimals']})"
            for name in WIDE.get(table, []) if runs[0]["columns"][name].get("format"))
        lines.append(f"| {table} | {recipe} | {label} | {counts} | {spikes:.1f} | {wide} |")
    return "\n".join(lines) + "\n"


def _mean(values: list[float], digits: int) -> str:
    if not values:
        return "–"
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{statistics.fmean(values):.{digits}f} ± {spread:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", type=Path, required=True, help="the code tree to run")
    parser.add_argument("--label", required=True, help="before / after")
    parser.add_argument("--tables", default="hhs_breaches,wage")
    parser.add_argument("--recipes", default="mst,aim")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--max-seconds", type=float, default=900)
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/octgrid")
    parser.add_argument("--work", type=Path, default=Path("/tmp/octgrid-work"))
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--summary-only", action="store_true")
    parser.add_argument("--formats", action="store_true", help="also score how the kept "
                        "releases write their cells (formats.md)")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    runs = args.out / "runs.jsonl"
    if not args.summary_only:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=args.code,
                                capture_output=True, text=True).stdout.strip()
        for name in args.tables.split(","):
            prepared = suite.prepare(suite.TABLES[name], args.work, args.cache, "safe")
            for recipe in args.recipes.split(","):
                for seed in (int(s) for s in args.seeds.split(",")):
                    folder = args.work / name / f"{args.label}-{recipe}-{seed}"
                    record = {"table": name, "recipe": recipe, "seed": seed,
                              "label": args.label, "commit": commit,
                              **run(args.code, prepared, recipe, seed, folder, args.max_seconds)}
                    with runs.open("a") as handle:
                        handle.write(json.dumps(record) + "\n")
                    shown = {k: record[k] for k in ("status", "tvd_2") if k in record}
                    print(name, recipe, seed, args.label, shown, record.get("wide", ""),
                          flush=True)
    records = [json.loads(line) for line in runs.read_text().splitlines() if line.strip()]
    (args.out / "summary.md").write_text(summary(records))
    print(summary(records))
    if args.formats:
        (args.out / "formats.md").write_text(formats(records, args.work))
        print(formats(records, args.work))


if __name__ == "__main__":
    main()
