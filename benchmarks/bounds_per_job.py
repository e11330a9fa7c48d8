"""DP bounds with the false-bucket chance per job, not per column (branch fixes4): what splitting
FALSE_OCCUPANCY over a job's DP-bounded columns costs small tables and buys wide ones.

Tables (development suite only): ISLP Wage at 2,400 and 700 rows (seeded samples) and ISLP
Caravan (5,822 rows, 86 columns). Each is drafted with ``schema infer --safe`` (every column
auto) and planned with MST at ε = 1, δ = 1e-5 (the suite's): the domain step's σ and the job's m
columns that may get DP bounds (the plan's ``bounded_columns``). For each column whose cells are
numbers, DRAWS seeded draws of its bucket histogram plus that noise, read by ``read_bounds`` with
the false-bucket chance

* per column (``columns=1``: FALSE_OCCUPANCY a column, the rule before),
* per job at FALSE_OCCUPANCY (``columns=m``: the rule now),
* per job at 10 × FALSE_OCCUPANCY (``columns=m/10``: the alternative weighed).

Reported per column and rule: the mean share of its rows outside the bounds read (clipped onto
them), the share of draws where more than 1 % is (CLIP_SHARE clips up to 0.5 % a side by
design), with no bound at all, and with bounds narrower than the per-column rule's on the same
noise (the cost); per table and rule, the share of draws (a draw of every column: a job) where
some column read a far false bucket: a bound more than two buckets outside the column's occupied
buckets (not the guard's bucket, nor a guard down to 0).

    PYTHONPATH=. .venv/bin/python benchmarks/bounds_per_job.py [--draws 400]
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from domain_small_tables import job_file  # benchmarks/ is on sys.path when run as a script
from suite import islp_frame, islp_wheel

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy.bounds import FALSE_OCCUPANCY, Buckets, read_bounds
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource

ROOT = Path(__file__).resolve().parent.parent
CUT = 0.01  # a support is cut when more than this share of a column's rows is outside it


def tables(cache: Path) -> dict[str, pd.DataFrame]:
    wheel = islp_wheel(cache)
    wage = islp_frame(wheel, "Wage")
    pick = np.random.default_rng(24)
    return {
        "wage-2400": wage.iloc[np.sort(pick.choice(len(wage), 2400, replace=False))],
        "wage-700": wage.iloc[np.sort(np.random.default_rng(24).choice(len(wage), 700,
                                                                       replace=False))],
        "caravan-5822": islp_frame(wheel, "Caravan"),
    }


def far(reading, counts: np.ndarray, buckets: Buckets) -> bool:
    """A bound more than two buckets outside the occupied ones (a guard to 0 excepted)."""
    occupied = np.flatnonzero(counts)
    low, high = occupied[0], occupied[-1]
    zero = buckets.zero
    low_far = reading.first < low - 2 and not (reading.first == zero and low > zero)
    high_far = reading.last > high + 2 and not (reading.last == zero and high < zero)
    return bool(low_far or high_far)


def study(frame: pd.DataFrame, sigma: float, rules: dict[str, float], draws: int) -> dict:
    """Every rule's read-outs of the same noisy histograms of each numeric column."""
    columns = {}
    for name in frame.columns:
        numbers = pd.to_numeric(frame[name].str.strip(), errors="coerce")
        if numbers.notna().mean() > 0.5:
            values = numbers.dropna().to_numpy(float)
            kind = "integer" if np.all(values == np.round(values)) else "continuous"
            columns[name] = (values, Buckets(kind))
    far_jobs = {rule: np.zeros(draws, bool) for rule in rules}
    per_column = {}
    for index, (name, (values, buckets)) in enumerate(columns.items()):
        counts = buckets.counts(values)
        clipped = {rule: np.full(draws, np.nan) for rule in rules}
        narrower = {rule: 0 for rule in rules}
        for seed in range(draws):
            # independent noise per column and draw, as a job's columns get
            source = RandomSource.seeded(seed * 1000 + index)
            noisy = discrete_gaussian_histogram(counts, sigma, source)
            readings = {rule: read_bounds(noisy.astype(float), sigma, buckets, m)
                        for rule, m in rules.items()}
            before = readings["per column"]
            for rule, reading in readings.items():
                if reading is None:
                    continue
                clipped[rule][seed] = np.mean((values < reading.lower) | (values > reading.upper))
                far_jobs[rule][seed] |= far(reading, counts, buckets)
                narrower[rule] += before is not None and (
                    reading.lower > before.lower or reading.upper < before.upper)
        per_column[name] = {rule: {
            "mean_share_clipped": float(np.nanmean(c)) if np.isfinite(c).any() else None,
            "draws_cut": float(np.mean(c > CUT)),  # NaN (no bound) counts as not cut here
            "draws_no_bound": float(np.mean(np.isnan(c))),
            "draws_narrower_than_per_column": narrower[rule] / draws}
            for rule, c in clipped.items()}
    return {"numeric_columns": len(columns),
            "jobs_with_a_far_false_bucket": {r: float(f.mean()) for r, f in far_jobs.items()},
            "columns": per_column}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--draws", type=int, default=400)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="bounds-per-job-"))
    report = {}
    for name, frame in tables(ROOT / "benchmarks" / ".cache").items():
        plan, _ = plan_job(load_job(job_file(work / name, frame, None)))
        noise = plan.stages[0].noise
        sigma, m = noise["sigma"], int(noise["bounded_columns"])
        rules = {"per column": 1, f"per job {FALSE_OCCUPANCY:g}": m,
                 f"per job {10 * FALSE_OCCUPANCY:g}": m / 10}
        report[name] = {"rows": len(frame), "sigma": sigma, "bounded_columns": m,
                        **study(frame, sigma, rules, args.draws)}
        print(json.dumps({name: report[name]}, indent=1), flush=True)
    out = ROOT / "benchmarks" / "results" / "bounds-per-job.json"
    out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
