"""Values outside a code column's real range (issue 24 item 4): before/after of the DP bounds'
guard rule for integer columns of at most CODE_VALUES values (synthpriv/privacy/bounds.py).

For each table's suite train split (benchmarks/suite.py: ``TABLES``, ``split``), the safe draft
(``schema infer``: every column auto), a seeded job at ε = 1 per tree and seed, run with that
tree on PYTHONPATH; per integer column whose real values span at most 16 whole numbers, the
share of released values outside the real [min, max], and the column's 1-way TVD.

    .venv/bin/python benchmarks/guard_codes.py --trees OLD,NEW --tables anes96,fair \
        --seeds 0,1,2,3 --recipe aim
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

import suite  # noqa: E402

CODES = 16


def release(tree: Path, train: Path, work: Path, recipe: str, seed: int) -> pd.DataFrame:
    """One seeded safe-draft run of ``train`` with the code at ``tree``."""
    environment = {**os.environ, "PYTHONPATH": str(tree)}
    schema = work / "schema.yaml"
    with schema.open("w") as handle:
        subprocess.run([sys.executable, "-m", "synthpriv.cli", "schema", "infer", str(train)],
                       env=environment, stdout=handle, stderr=subprocess.DEVNULL, check=True,
                       cwd=work)  # not the caller's folder: `-m` puts it first on sys.path
    job = {"name": "guard", "data": {"path": str(train), "schema": str(schema)},
           "budget": {"epsilon": 1.0}, "pipeline": {"recipe": recipe}, "seed": seed}
    (work / "job.yaml").write_text(yaml.safe_dump(job))
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "run", str(work / "job.yaml"),
                    "--no-evaluation", "--out", str(work / "out"), "--force"],
                   env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   check=True, cwd=work)
    return pd.read_csv(work / "out" / "synthetic.csv")


def code_columns(real: pd.DataFrame) -> list[str]:
    """Integer columns whose real values span at most CODES whole numbers."""
    names = []
    for name in real.columns:
        values = pd.to_numeric(real[name], errors="coerce").dropna()
        if len(values) and (values == values.round()).all() and \
                values.max() - values.min() + 1 <= CODES:
            names.append(name)
    return names


def figures(real: pd.DataFrame, synthetic: pd.DataFrame, names: list[str]) -> dict:
    out = {}
    for name in names:
        values = pd.to_numeric(real[name], errors="coerce").dropna()
        released = pd.to_numeric(synthetic[name], errors="coerce").dropna()
        outside = float(((released < values.min()) | (released > values.max())).mean()) \
            if len(released) else 0.0
        shares = pd.concat([values.value_counts(normalize=True),
                            released.value_counts(normalize=True)], axis=1).fillna(0.0)
        out[name] = {"outside": outside,
                     "tvd": float(0.5 * (shares.iloc[:, 0] - shares.iloc[:, 1]).abs().sum())}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", required=True, help="comma-separated code trees")
    parser.add_argument("--tables", default="anes96")
    parser.add_argument("--seeds", default="0,1,2,3")
    parser.add_argument("--recipe", default="aim")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    cache = ROOT / "benchmarks" / ".cache"
    records = []
    for table in args.tables.split(","):
        real, _ = suite.split(suite.table_frame(suite.TABLES[table], cache))
        names = code_columns(real)
        with tempfile.TemporaryDirectory() as folder:
            train = Path(folder) / "train.csv"
            real.to_csv(train, index=False)
            for tree in args.trees.split(","):
                for seed in (int(s) for s in args.seeds.split(",")):
                    work = Path(folder) / f"{Path(tree).name}-{seed}"
                    work.mkdir()
                    synthetic = release(Path(tree).resolve(), train, work, args.recipe, seed)
                    record = {"table": table, "tree": tree, "seed": seed,
                              "columns": figures(real, synthetic, names)}
                    records.append(record)
                    print(json.dumps(record), flush=True)
    if args.output:
        args.output.write_text(json.dumps(records, indent=1))
    print("| table | column | tree | outside real range (mean, min–max) | 1-way TVD (mean ± sd) |")
    print("|---|---|---|---|---|")
    for table in args.tables.split(","):
        rows = [r for r in records if r["table"] == table]
        for name in rows[0]["columns"] if rows else []:
            for tree in args.trees.split(","):
                cells = [r["columns"][name] for r in rows if r["tree"] == tree]
                outside = [c["outside"] for c in cells]
                tvd = [c["tvd"] for c in cells]
                print(f"| {table} | {name} | {Path(tree).name} | {statistics.mean(outside):.3f} "
                      f"({min(outside):.3f}–{max(outside):.3f}) | {statistics.mean(tvd):.3f} ± "
                      f"{statistics.stdev(tvd) if len(tvd) > 1 else 0:.3f} |")


if __name__ == "__main__":
    main()
