"""The DP domain step on small development-suite tables (issue 24 item 4): bounds, discovery, runs.

Tables (development suite only): ISLP College (777 rows), Wage (3,000; and a seeded 700-row
sample), Default (seeded samples of 374 and 823 rows, the sizes of the issue's two held-out tables
that refused their safe draft). Each is drafted with ``schema infer --safe`` (every column auto)
and planned with MST at ε = 1, δ = 1e-5 (the suite's δ), without and with a public row count.

* bounds: for each column whose cells are numbers, its bucket histogram plus the plan's noise
  (20 seeds), read by the old rule (commit a007373: occupied buckets, 0.1 % tail) and the new
  (synthpriv.privacy.bounds.read_bounds); reported: the share of draws with no bound at all (the
  old rule refused the run there), and the mean share of rows outside each bound: what clipping
  puts on the bound cell, the fake spike;
* discovery: for each column whose cells are text, the planned threshold T and the expected share
  of its rows whose value is kept, Σ count·P(count + Z ≥ T) / n (exact: Φ at the discrete
  Gaussian's σ, a continuous approximation), without and with n̂ public;
* runs: one ``synthpriv run`` (MST, evaluation off) of each table's safe draft: completes or not.

    .venv/bin/python benchmarks/domain_small_tables.py   # a few minutes; downloads the ISLP wheel once
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.stats import norm
from suite import islp_frame, islp_wheel  # benchmarks/ is on sys.path when run as a script

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy.bounds import Buckets, read_bounds
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
from synthpriv.schema_infer import infer_schema, schema_yaml

ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "a007373"
SEEDS = 20


def old_bounds():
    """The read-out before this change (commit a007373), loaded from git as a module."""
    source = subprocess.run(["git", "show", f"{OLD_COMMIT}:synthpriv/privacy/bounds.py"],
                            cwd=ROOT, check=True, capture_output=True, text=True).stdout
    path = Path(tempfile.mkdtemp()) / "old_bounds.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location("old_bounds", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["old_bounds"] = module  # its dataclass looks its module up
    spec.loader.exec_module(module)
    return module


def tables(cache: Path) -> dict[str, pd.DataFrame]:
    wheel = islp_wheel(cache)
    wage, default = islp_frame(wheel, "Wage"), islp_frame(wheel, "Default")
    pick = np.random.default_rng(24)
    return {
        "college-777": islp_frame(wheel, "College"),
        "wage-3000": wage,
        "wage-700": wage.iloc[np.sort(pick.choice(len(wage), 700, replace=False))],
        "default-374": default.iloc[np.sort(pick.choice(len(default), 374, replace=False))],
        "default-823": default.iloc[np.sort(pick.choice(len(default), 823, replace=False))],
    }


def job_file(folder: Path, frame: pd.DataFrame, records: int | None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "data.csv", index=False)
    schema, _ = infer_schema(folder / "data.csv", safe=True)
    (folder / "schema.yaml").write_text(schema_yaml(schema))
    config = {"name": folder.name, "data": {"path": "data.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": "mst"},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
    if records is not None:
        config["data"]["public_records"] = records
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def bounds_study(numbers: np.ndarray, sigma: float, old) -> dict:
    """Old and new read-outs of the same noisy histograms (SEEDS draws)."""
    whole = bool(np.all(numbers == np.round(numbers)))
    buckets = Buckets("integer" if whole else "continuous")
    counts = buckets.counts(numbers)
    result = {"none_old": 0, "none_new": 0, "below_old": [], "above_old": [], "below_new": [],
              "above_new": []}
    for seed in range(SEEDS):
        noisy = discrete_gaussian_histogram(counts, sigma, RandomSource.seeded(seed))
        found_old = old.bounds_from_noisy(noisy.astype(float), sigma, old.Buckets(buckets.kind))
        reading = read_bounds(noisy, sigma, buckets)
        for tag, found in (("old", found_old),
                           ("new", None if reading is None else (reading.lower, reading.upper))):
            if found is None:
                result[f"none_{tag}"] += 1
                continue
            result[f"below_{tag}"].append(float(np.mean(numbers < found[0])))
            result[f"above_{tag}"].append(float(np.mean(numbers > found[1])))
    return {key: (float(np.mean(v)) if v else None) if isinstance(v, list) else v / SEEDS
            for key, v in result.items()}


def coverage(values: pd.Series, sigma: float, threshold: float) -> float:
    """Expected share of the rows whose value discovery keeps: Σ c·P(c + Z ≥ T) / n."""
    counts = values.value_counts().to_numpy(dtype=float)
    return float(np.sum(counts * norm.sf((threshold - counts) / sigma)) / counts.sum())


def main() -> None:
    old = old_bounds()
    cache = ROOT / "benchmarks" / ".cache"
    work = Path(tempfile.mkdtemp(prefix="domain-small-"))
    report = {}
    for name, frame in tables(cache).items():
        plans = {}
        for public in (False, True):
            path = job_file(work / f"{name}-{'public' if public else 'safe'}", frame,
                            len(frame) if public else None)
            plan, stages = plan_job(load_job(path))
            plans[public] = (path, plan.stages[0].noise, stages[0][1])
        sigma = plans[False][1]["sigma"]
        entry = {"rows": len(frame), "columns": frame.shape[1],
                 "share": {str(k): v[2] for k, v in plans.items()},
                 "sigma": {str(k): v[1]["sigma"] for k, v in plans.items()},
                 "threshold": {str(k): v[1]["category_threshold"] for k, v in plans.items()},
                 "bounds": {}, "discovery": {}}
        for column in frame.columns:
            cells = frame[column].str.strip()
            numbers = pd.to_numeric(cells, errors="coerce")
            if numbers.notna().mean() > 0.5:
                entry["bounds"][column] = bounds_study(numbers.dropna().to_numpy(float), sigma, old)
            else:
                entry["discovery"][column] = {
                    str(k): coverage(cells[cells != ""], v[1]["sigma"],
                                     v[1]["category_threshold"]) for k, v in plans.items()}
        try:
            run_job(load_job(plans[False][0]), source=RandomSource.seeded(1), evaluate=False)
            entry["run"] = "released"
        except Exception as error:  # noqa: BLE001 (a refusal is the figure measured)
            entry["run"] = f"refused: {error}"
        report[name] = entry
        print(json.dumps({name: entry}, indent=1), flush=True)
    out = ROOT / "benchmarks" / "results" / "domain-small-tables.json"
    out.write_text(json.dumps(report, indent=1))
    print(f"written {out}", file=sys.stderr)


if __name__ == "__main__":
    main()
