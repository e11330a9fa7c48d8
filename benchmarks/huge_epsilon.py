"""TVD of releases against their real table, beside the sampling floor (issue 26, AIM at huge ε).

Each release folder's ``synthetic.csv`` is scored as the utility benchmark scores it (mean TVD over
every 1- and 2-way marginal and 500 sampled 3-way ones, numeric columns in 16 quantile bins of the
real table); the floor is the same figure for ``--floors`` bootstrap resamples of the real table
itself (n rows drawn with replacement): what a perfect model's sample would score. Time and
memory are measured outside, per run (``/usr/bin/time -f "%U %S %e %M"``, benchmarks/README.md).

    PYTHONPATH=. .venv/bin/python benchmarks/huge_epsilon.py configs/adult.yaml /tmp/out-1e6 ...
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

import numpy as np

from synthpriv.config import load_job
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.table import read_table


def tvds(real, synthetic, numeric: list[str]) -> dict[str, float]:
    marginals = evaluate_utility(real, synthetic, numeric_columns=numeric,
                                 quality_report=False)["marginals"]
    return {k: round(marginals[k]["mean"], 5) for k in ("1-way", "2-way", "3-way")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("releases", type=Path, nargs="*")
    parser.add_argument("--floors", type=int, default=3, help="bootstrap resamples for the floor")
    args = parser.parse_args()
    job = load_job(args.config)
    real = read_table(job.data_path, job.schema)
    numeric = job.schema.numeric_names
    for folder in args.releases:
        synthetic = read_table(folder / "synthetic.csv", job.schema)
        print(json.dumps({"release": str(folder), **tvds(real, synthetic, numeric)}), flush=True)
    rng = np.random.default_rng(0)
    floors = [tvds(real, real.iloc[rng.integers(0, len(real), len(real))].reset_index(drop=True),
                   numeric) for _ in range(args.floors)]
    if floors:
        print(json.dumps({"release": "bootstrap floor", **{
            k: f"{statistics.fmean(f[k] for f in floors):.5f} ± "
               f"{statistics.stdev(f[k] for f in floors) if len(floors) > 1 else 0:.5f}"
            for k in ("1-way", "2-way", "3-way")}}))


if __name__ == "__main__":
    main()
