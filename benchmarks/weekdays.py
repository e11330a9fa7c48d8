"""Public `weekdays` on a date column: ISLP NYSE (6,051 trading days, 1962–1986), its safe draft
with `date` declared `kind: date` (DP bounds), with and without `weekdays: [Mon … Fri]`, ε = 1, the
default recipe. Prints, per seed: the share of released dates on a weekend (the real table: 0), the
date column's KS and 1-way TVD and the mean 2-way TVD (the project's evaluation), and how often the
released `day_of_week` names the released date's weekday (real: always; independent: 1 in 5).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/weekdays.py --seeds 0,1,2

Reads the real table to score (NOT private; a development table: ISLP ships it).
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

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from suite import islp_wheel  # noqa: E402

NAMES = {"mon": 0, "tues": 1, "wed": 2, "thur": 3, "fri": 4}


def release(folder: Path, weekdays: bool, seed: int) -> dict:
    """One run in ``folder`` (NYSE.csv there); its figures."""
    columns = [{"name": name, "kind": "auto"} for name in
               ("day_of_week", "DJ_return", "log_volume", "log_volatility", "train")]
    date = {"name": "date", "kind": "date"} | ({"weekdays": ["Mon", "Tue", "Wed", "Thu", "Fri"]}
                                               if weekdays else {})
    (folder / "schema.yaml").write_text(yaml.safe_dump({"columns": [date, *columns]}))
    name = f"nyse-{'wd' if weekdays else 'plain'}-{seed}"
    (folder / "job.yaml").write_text(yaml.safe_dump({
        "name": name, "data": {"path": "NYSE.csv", "schema": "schema.yaml"},
        "budget": {"epsilon": 1.0}, "seed": seed, "output": {"dir": str(folder / name)}}))
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "run", str(folder / "job.yaml"),
                    "--force"], check=True, capture_output=True, cwd=folder,
                   env={**os.environ, "PYTHONPATH": str(ROOT)})  # this checkout's synthpriv
    synthetic = pd.read_csv(folder / name / "synthetic.csv")
    report = json.loads((folder / f"{name}.evaluation" / "report.json").read_text())
    marginals = report["utility"]["marginals"]
    one_way = {tuple(w["columns"]): w["tvd"] for w in marginals["1-way"]["worst"]}
    dates = pd.to_datetime(synthetic["date"])
    named = synthetic["day_of_week"].map(NAMES)
    return {"seed": seed, "weekdays": weekdays,
            "weekend_share": float(dates.dt.dayofweek.isin([5, 6]).mean()),
            "date_ks": report["values"]["columns"]["date"]["distance"],
            "date_tvd": one_way.get(("date",)), "two_way": marginals["2-way"]["mean"],
            "day_of_week_agrees": float((named == dates.dt.dayofweek).mean())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0,1,2")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="weekdays-") as tmp:
        folder = Path(tmp)
        with zipfile.ZipFile(islp_wheel(ROOT / "benchmarks" / ".cache")) as archive:
            (folder / "NYSE.csv").write_bytes(archive.read("ISLP/data/NYSE.csv"))
        for seed in (int(s) for s in args.seeds.split(",")):
            for weekdays in (False, True):
                print(json.dumps(release(folder, weekdays, seed)), flush=True)


if __name__ == "__main__":
    main()
