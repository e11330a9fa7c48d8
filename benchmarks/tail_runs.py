"""Release-level check of the DP bounds' tail runs (issue 24 item 4; branch tailruns): a table's
safe draft (``schema infer``: every column auto) run with two code trees, per numeric column of
the data-read draft: the KS distance between the real train split and the release (present
values), the share of real rows outside the released [min, max] (what the bounds clipped, the
noise's hidden tail aside), whether the column came out all missing; per run the suite's 2-way
TVD (``safe_gap.two_way``: numeric columns in 16 quantile bins).

Each run is ``synthpriv run`` in a subprocess with the tree on PYTHONPATH (ε = 1, the default
δ, ``seed``); the suite's train/test split (benchmarks/suite.py). Development-suite tables only.

    .venv/bin/python benchmarks/tail_runs.py --trees OLD,NEW --table college --recipes mst,aim \
        --seeds 0,1,2 --output benchmarks/results/tail-runs.json

Each record also holds the release's sha256: two trees that should release the same bytes (a
change that only acts where the thresholds show nothing, on Adult) can be compared exactly.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.stats import ks_2samp

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from safe_gap import two_way  # noqa: E402
from suite import TABLES, prepare, read_scored  # noqa: E402

from synthpriv.schema import load_schema  # noqa: E402


def release(tree: Path, train: Path, schema: Path, work: Path, recipe: str, seed: int) -> Path:
    """One seeded run of the safe draft with the code at ``tree``; the release's CSV."""
    job = {"name": "tailruns", "data": {"path": str(train), "schema": str(schema)},
           "budget": {"epsilon": 1.0}, "pipeline": {"recipe": recipe}, "seed": seed}
    (work / "job.yaml").write_text(yaml.safe_dump(job))
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "run", str(work / "job.yaml"),
                    "--no-evaluation", "--out", str(work / "out"), "--force"],
                   env={**os.environ, "PYTHONPATH": str(tree)}, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, cwd=work)
    return work / "out" / "synthetic.csv"


def column_figures(real: pd.Series, released: pd.Series) -> dict:
    """KS distance, share of real rows outside the released range, all missing or not."""
    real, released = real.dropna(), released.dropna()
    if released.empty:
        return {"ks": 1.0, "outside": 1.0, "all_missing": True}
    outside = float(((real < released.min()) | (real > released.max())).mean())
    return {"ks": float(ks_2samp(real, released).statistic), "outside": outside,
            "all_missing": False}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", required=True, help="comma-separated code trees")
    parser.add_argument("--table", default="college")
    parser.add_argument("--recipes", default="mst,aim")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="tail-runs-"))
    table = TABLES[args.table]
    draft, safe = prepare(table, work, args.cache, "draft"), prepare(table, work, args.cache, "safe")
    scoring = load_schema(draft.schema_path)
    real, test = read_scored(draft.train, scoring), read_scored(draft.test, scoring)
    numeric = [name for name in scoring.numeric_names if name != table.target]
    records = []
    for recipe in args.recipes.split(","):
        for tree in args.trees.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                folder = work / f"{recipe}-{Path(tree).name}-{seed}"
                folder.mkdir()
                csv = release(Path(tree).resolve(), safe.train, safe.schema_path, folder, recipe,
                              seed)
                synthetic = read_scored(csv, scoring)
                record = {"table": args.table, "recipe": recipe, "tree": tree, "seed": seed,
                          "sha256": hashlib.sha256(csv.read_bytes()).hexdigest(),
                          "tvd_2": two_way(real, synthetic, test, scoring, table.target),
                          "columns": {name: column_figures(real[name], synthetic[name])
                                      for name in numeric}}
                records.append(record)
                print(json.dumps(record), flush=True)
    if args.output:
        args.output.write_text(json.dumps(records, indent=1))
    print("| recipe | tree | 2-way TVD | mean KS | mean share outside | worst column (outside) |"
          " columns all missing (per run) |")
    print("|---|---|---|---|---|---|---|")
    for recipe in args.recipes.split(","):
        for tree in args.trees.split(","):
            rows = [r for r in records if r["recipe"] == recipe and r["tree"] == tree]
            cells = [c for r in rows for c in r["columns"].values() if not c["all_missing"]]
            worst = {name: np.mean([r["columns"][name]["outside"] for r in rows
                                    if not r["columns"][name]["all_missing"]] or [np.nan])
                     for name in numeric}
            name = max(worst, key=lambda k: -1 if np.isnan(worst[k]) else worst[k])
            missing = [sorted(k for k, c in r["columns"].items() if c["all_missing"])
                       for r in rows]
            print(f"| {recipe} | {Path(tree).name} | {np.mean([r['tvd_2'] for r in rows]):.4f} ± "
                  f"{np.std([r['tvd_2'] for r in rows]):.4f} | "
                  f"{np.mean([c['ks'] for c in cells]):.3f} | "
                  f"{np.mean([c['outside'] for c in cells]):.3f} | {name} "
                  f"({worst[name]:.3f}) | {'; '.join(', '.join(m) or '—' for m in missing)} |")


if __name__ == "__main__":
    main()
