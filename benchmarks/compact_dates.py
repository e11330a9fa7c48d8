"""Compact dates (``19580329``) on first contact: statsmodels' co2 (2,284 weekly rows, `date`
written %Y%m%d, `co2` with 2.6 % missing), its safe draft (every column auto), ε = 1, the
default recipe, run with each code tree given. Prints per tree and seed: the kind the run
decided for `date`, the share of released `date` cells that are real days (%Y%m%d), the KS
distance between the real and released dates (as days; cells that are no day count as missing
and are left out), the share of released dates outside the real range, the TVD of the (date,
co2) joint cut at the real deciles (the date as its %Y%m%d number in both trees), and the mean
2-way TVD of the project's evaluation (not comparable across trees: an integer `date` and a
date `date` are binned differently).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/compact_dates.py --trees OLD,NEW --seeds 0,1,2

Reads the real table to score (NOT private; a development table: statsmodels ships it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from dev_tables import STATSMODELS, wheel  # noqa: E402


def _days(cells: pd.Series) -> np.ndarray:
    parsed = pd.to_datetime(cells.astype("string").str.replace(r"\.0$", "", regex=True),
                            format="%Y%m%d", errors="coerce")
    return ((parsed - pd.Timestamp("1970-01-01")).dt.days).to_numpy(dtype=float)


def _ks(a: np.ndarray, b: np.ndarray) -> float:
    a, b = np.sort(a[~np.isnan(a)]), np.sort(b[~np.isnan(b)])
    grid = np.union1d(a, b)
    return float(np.abs(np.searchsorted(a, grid, "right") / len(a)
                        - np.searchsorted(b, grid, "right") / len(b)).max())


def _joint_tvd(real: pd.DataFrame, released: pd.DataFrame) -> float:
    """TVD of the (date, co2) joint cut at the real deciles, a missing value a cell of its own;
    the date as its %Y%m%d number either way (monotone in time, whether a tree released a day)."""
    def cells(frame: pd.DataFrame) -> pd.Series:
        parts = []
        for column in ("date", "co2"):
            values = pd.to_numeric(frame[column], errors="coerce")
            edges = np.unique(np.nanquantile(pd.to_numeric(real[column], errors="coerce"),
                                             np.linspace(0, 1, 11)))
            code = np.searchsorted(edges[1:-1], values, side="right").astype(float)
            parts.append(pd.Series(np.where(values.isna(), -1, code)).astype(int).astype(str))
        return parts[0] + "|" + parts[1]
    a, b = cells(real).value_counts(normalize=True), cells(released).value_counts(normalize=True)
    return float(a.sub(b, fill_value=0).abs().sum() / 2)


def release(folder: Path, tree: Path, seed: int) -> dict:
    name = f"co2-{tree.name}-{seed}"
    (folder / "job.yaml").write_text(
        f"name: {name}\ndata:\n  path: co2.csv\n  schema: schema.yaml\nbudget:\n  epsilon: 1.0\n"
        f"seed: {seed}\noutput:\n  dir: {folder / name}\n")
    env = {**os.environ, "PYTHONPATH": str(tree)}
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "schema", "infer", "co2.csv"],
                   check=True, cwd=folder, env=env, stdout=(folder / "schema.yaml").open("w"),
                   stderr=subprocess.DEVNULL)
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "run", "job.yaml", "--force"],
                   check=True, capture_output=True, cwd=folder, env=env)
    real = pd.read_csv(folder / "co2.csv", dtype=str)
    released = pd.read_csv(folder / name / "synthetic.csv", dtype=str)
    manifest = json.loads((folder / name / "manifest.json").read_text())
    kind = next(c["kind"] for c in manifest["schema"]["columns"] if c["name"] == "date")
    report = json.loads((folder / f"{name}.evaluation" / "report.json").read_text())
    real_days, days = _days(real["date"]), _days(released["date"].dropna())
    outside = (days < np.nanmin(real_days)) | (days > np.nanmax(real_days))
    return {"tree": tree.name, "seed": seed, "date_kind": kind,
            "date_co2_tvd": _joint_tvd(real, released),
            "real_days_share": float(np.mean(~np.isnan(days))),
            "date_ks": _ks(real_days, days), "outside_share": float(np.mean(outside)),
            "two_way": report["utility"]["marginals"]["2-way"]["mean"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", required=True, help="comma-separated code trees")
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="compact-dates-") as tmp:
        folder = Path(tmp)
        with zipfile.ZipFile(wheel(*STATSMODELS)) as archive:
            (folder / "co2.csv").write_bytes(archive.read("statsmodels/datasets/co2/co2.csv"))
        for seed in (int(s) for s in args.seeds.split(",")):
            for tree in args.trees.split(","):
                print(json.dumps(release(folder, Path(tree).resolve(), seed)), flush=True)


if __name__ == "__main__":
    main()
