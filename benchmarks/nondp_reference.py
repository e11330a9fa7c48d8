"""Candidates for the sweep's non-DP reference on Adult: utility and seconds of each.

A reference says what a good non-private generator reaches on the same training rows, so a DP
curve can be read against it. Candidates: SDV's GaussianCopula (the former reference), sequential
CART (synthpop's method, ``cart_generator``, the new reference), optionally SDV's CTGAN (slow).
Each is fitted on the job's training table and scored like a sweep run (mean 1/2/3-way TVD on 16
quantile bins, TSTR AUC of gradient boosting on the holdout).

    PYTHONPATH=. .venv/bin/python benchmarks/nondp_reference.py configs/adult.yaml --ctgan \
        --output benchmarks/results/nondp-reference-adult.json
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

from synthpriv.config import load_job
from synthpriv.evaluation.controls import cart_generator, sdv_generator
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.job import SynthesisJob
from synthpriv.table import read_table


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def score(job, train, synthetic, holdout) -> dict:
    utility = evaluate_utility(train, synthetic, numeric_columns=job.schema.numeric_names,
                               target=job.config.evaluation.target, holdout=holdout,
                               quality_report=False)
    marginals = utility["marginals"]
    gb = utility["ml_efficacy"]["models"]["gradient_boosting"]
    return {"tvd_1": marginals["1-way"]["mean"], "tvd_2": marginals["2-way"]["mean"],
            "tvd_3": marginals["3-way"]["mean"], "tstr_auc": gb["tstr"]["auc"],
            "trtr_auc": gb["trtr"]["auc"]}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--ctgan", action="store_true", help="also SDV's CTGAN (minutes)")
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    results = []
    first = load_job(args.config)
    train = SynthesisJob(first).read()
    holdout = read_table(first.holdout_path, first.schema)
    numeric = first.schema.numeric_names
    candidates = {"gaussian_copula": lambda: sdv_generator("gaussian_copula", train, numeric, 0),
                  "cart": lambda: cart_generator(train, numeric, 0)}
    if args.ctgan:
        candidates["ctgan"] = lambda: sdv_generator("ctgan", train, numeric, 0)
    for name, fit in candidates.items():
        started, cpu = time.perf_counter(), cpu_seconds()
        synthetic = fit()
        row = {"reference": name, "seconds": time.perf_counter() - started,
               "cpu_seconds": cpu_seconds() - cpu, **score(first, train, synthetic, holdout)}
        print(json.dumps(row), file=sys.stderr, flush=True)
        results.append(row)
    if args.output:
        args.output.write_text(json.dumps(results, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
