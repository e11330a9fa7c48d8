"""Before/after figures for the heaps' range (branch codebounds, issue 24: "values that look like
the input"): safe-draft jobs (every column ``auto``) run with the same seeds on two code trees,
and per run the released values of each code column (whole numbers, at most 16 distinct values
in the train split: years, Likert scales, flags) that fall outside the train split's range, the
bounds the domain step chose (the manifest's schema), its 1-way TVD on exact values (which a
tail clipped onto a heap raises too), and for Wage the table's mean 2-way TVD
(synthpriv.evaluation.utility). Seeded runs share the domain step's noise draws across the two
trees (the rule draws nothing), so a bound differs only where the rule fired. Reads the real
table: a measurement, not a release.

    .venv/bin/python benchmarks/codebounds.py --code base=/tmp/cb-base --code new=. \
        --tables wage --recipes aim,mst --seeds 1-8
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from suite import TABLES, prepare  # noqa: E402

from synthpriv.evaluation.utility import evaluate_utility  # noqa: E402

CODE_VALUES = 16  # a code column: whole numbers, at most this many distinct values (as bounds.py)


def code_columns(real: pd.DataFrame) -> list[str]:
    """The train split's columns of at most CODE_VALUES distinct whole numbers."""
    found = []
    for name in real.columns:
        values = pd.to_numeric(real[name], errors="coerce").dropna()
        if len(values) == real[name].notna().sum() > 0 and (values == values.round()).all() \
                and values.nunique() <= CODE_VALUES:
            found.append(name)
    return found


def tvd_one(real: pd.Series, synthetic: pd.Series) -> float:
    """Total variation distance of two columns' exact values (missing as a value)."""
    p = real.value_counts(normalize=True, dropna=False)
    q = synthetic.value_counts(normalize=True, dropna=False)
    return float(0.5 * p.sub(q, fill_value=0.0).abs().sum())


def run(code: Path, train: Path, schema: Path, recipe: str, seed: int, work: Path) -> Path:
    """One seeded job on ``code`` (PYTHONPATH), from /tmp (a source tree's cwd would shadow it)."""
    work.mkdir(parents=True, exist_ok=True)
    config = {"name": "codebounds", "data": {"path": str(train), "schema": str(schema)},
              "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": recipe},
              "evaluation": {"enabled": False}, "output": {"dir": str(work / "out")},
              "seed": seed}
    (work / "job.yaml").write_text(yaml.safe_dump(config))
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "run", str(work / "job.yaml"),
                    "--force", "--quiet"], cwd="/tmp", env=env, check=True,
                   capture_output=True)
    return work / "out"


def measure(out: Path, real: pd.DataFrame, codes: list[str], wage: bool) -> dict:
    synthetic = pd.read_csv(out / "synthetic.csv")
    schema = {c["name"]: c for c in json.loads((out / "manifest.json").read_text())["schema"][
        "columns"]}
    figures: dict = {"bounds": {n: [c.get("lower"), c.get("upper")] for n, c in schema.items()
                                if c.get("lower") is not None}}
    for name in codes:
        values = pd.to_numeric(synthetic[name], errors="coerce").dropna()
        low, high = real[name].min(), real[name].max()
        figures[f"outside:{name}"] = float(((values < low) | (values > high)).mean())
        figures[f"tvd_1:{name}"] = tvd_one(real[name], synthetic[name])  # clipped tails too
    if wage:
        numeric = [n for n in real.columns if pd.api.types.is_numeric_dtype(real[n])]
        utility = evaluate_utility(real, synthetic, numeric_columns=numeric,
                                   quality_report=False, max_three_way=1)
        figures["tvd_2"] = utility["marginals"]["2-way"]["mean"]
    return figures


def summary(path: Path) -> str:
    """Per table, recipe, code tree and figure: the mean over seeds, and the range, markdown."""
    frame = pd.DataFrame([json.loads(line) for line in path.read_text().splitlines()])
    lines = ["| table | recipe | figure | " + " | ".join(sorted(frame["code"].unique())) + " |",
             "|---|---|---|" + "---|" * frame["code"].nunique()]
    for (table, recipe), group in frame.groupby(["table", "recipe"], sort=False):
        figures = [c for c in group.columns if c.startswith(("outside:", "tvd_"))
                   and group[c].notna().any()]
        for figure in figures:
            cells = []
            for _, runs in sorted(group.groupby("code")):
                values = runs[figure].dropna()
                cells.append(f"{values.mean():.4f} ({values.min():.3f}–{values.max():.3f}, "
                             f"{len(values)} runs)")
            lines.append(f"| {table} | {recipe} | {figure} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--code", action="append", default=[], metavar="LABEL=PATH")
    parser.add_argument("--tables", default="wage")
    parser.add_argument("--recipes", default="aim,mst")
    parser.add_argument("--seeds", default="1-8", help="first-last")
    parser.add_argument("--work", type=Path, default=Path("/tmp/codebounds-bench"))
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/codebounds.jsonl")
    parser.add_argument("--summary", action="store_true", help="print the table of --out")
    args = parser.parse_args()
    if args.summary:
        print(summary(args.out))
        return
    first, last = (int(s) for s in args.seeds.split("-"))
    codes = dict(item.split("=", 1) for item in args.code)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tables = TABLES
    for table_name in args.tables.split(","):
        prepared = prepare(tables[table_name], args.work, ROOT / "benchmarks/.cache", "safe")
        real = pd.read_csv(prepared.train)
        columns = code_columns(real)
        for recipe in args.recipes.split(","):
            for seed in range(first, last + 1):
                for label, path in codes.items():
                    out = run(Path(path).resolve(), prepared.train, prepared.schema_path,
                              recipe, seed, args.work / f"{table_name}-{recipe}-{seed}-{label}")
                    record = {"table": table_name, "recipe": recipe, "seed": seed,
                              "code": label, **measure(out, real, columns, table_name == "wage")}
                    with args.out.open("a") as handle:
                        handle.write(json.dumps(record) + "\n")
                    print(json.dumps({k: v for k, v in record.items() if k != "bounds"}),
                          flush=True)


if __name__ == "__main__":
    main()
