"""Utility benchmark: run a job at several ε with fresh noise, evaluate each release on Adult.

Figures (as in issue #3): mean TVD over all 1-way, all 2-way and all (or a seeded sample of) 3-way
marginals, numeric columns in 16 quantile bins of the real train split; TSTR AUC of a gradient-
boosted classifier for the target, tested on the real holdout. Mean and spread over repeats.

    .venv/bin/python benchmarks/utility_benchmark.py configs/adult-aim.yaml --epsilons 1,3 --repeats 3

Several configs are run interleaved (A, B, A, B, ...: the machine's load falls on each alike):

    .venv/bin/python benchmarks/utility_benchmark.py configs/adult-aim.yaml configs/adult.yaml \
        --epsilons 1 --repeats 6 --output benchmarks/results/utility-adult-no-edges.json
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

from synthpriv.config import load_job
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.runner import run_job
from synthpriv.table import read_table

FIGURES = ("tvd_1", "tvd_2", "tvd_3", "tstr_auc", "seconds", "cpu_seconds", "epsilon")


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (steadier than wall time on a shared machine)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def measure(config: Path, epsilon: float) -> dict:
    job = load_job(config).with_budget(epsilon, None)
    with tempfile.TemporaryDirectory() as folder:
        started, cpu_started = time.perf_counter(), cpu_seconds()
        result = run_job(job, out=Path(folder) / "release", force=True)
        seconds, cpu = time.perf_counter() - started, cpu_seconds() - cpu_started
    holdout = read_table(job.holdout_path, job.schema)
    utility = evaluate_utility(
        result.real, result.synthetic, numeric_columns=job.schema.numeric_names,
        target=job.config.evaluation.target, holdout=holdout, quality_report=False,
    )
    marginals = utility["marginals"]
    return {
        "tvd_1": marginals["1-way"]["mean"],
        "tvd_2": marginals["2-way"]["mean"],
        "tvd_3": marginals["3-way"]["mean"],
        "tstr_auc": utility["ml_efficacy"]["models"]["gradient_boosting"]["tstr"]["auc"],
        "trtr_auc": utility["ml_efficacy"]["models"]["gradient_boosting"]["trtr"]["auc"],
        "seconds": seconds,
        "cpu_seconds": cpu,
        "epsilon": result.ledger.epsilon(job.config.budget.delta),
    }


def summarise(runs: list[dict]) -> dict:
    summary = {}
    for figure in FIGURES:
        values = [run[figure] for run in runs]
        spread = statistics.stdev(values) if len(values) > 1 else 0.0
        summary[figure] = {"mean": statistics.fmean(values), "std": spread}
    return summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("configs", type=Path, nargs="+", help="several: run interleaved")
    parser.add_argument("--epsilons", default="1,3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, help="JSON file for the results")
    args = parser.parse_args()
    if len(set(args.configs)) != len(args.configs):
        parser.error("a config is given twice: give each once (--repeats runs it again)")
    print("| config | ε | TVD 1-way | TVD 2-way | TVD 3-way | TSTR AUC (GBM) | fit+sample s | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    results = {str(config): {"config": str(config), "command": " ".join(sys.argv), "runs": {}}
               for config in args.configs}
    for epsilon in [float(e) for e in args.epsilons.split(",")]:
        runs: dict[Path, list[dict]] = {config: [] for config in args.configs}
        for _ in range(args.repeats):
            for config in args.configs:
                runs[config].append(measure(config, epsilon))
        for config in args.configs:
            summary = summarise(runs[config])
            results[str(config)]["runs"][str(epsilon)] = {"runs": runs[config], "summary": summary}
            cells = " | ".join(
                f"{summary[f]['mean']:.4f} ± {summary[f]['std']:.4f}"
                for f in ("tvd_1", "tvd_2", "tvd_3", "tstr_auc")
            )
            print(f"| {config.stem} | {epsilon:g} | {cells} | {summary['seconds']['mean']:.1f} | "
                  f"{summary['cpu_seconds']['mean']:.1f} |", flush=True)
    single = len(args.configs) == 1
    output = args.output or Path("benchmarks/results") / f"utility-{args.configs[0].stem}.json"
    output.parent.mkdir(parents=True, exist_ok=True)
    document = results[str(args.configs[0])] if single else list(results.values())
    output.write_text(json.dumps(document, indent=2) + "\n")
    print(f"results: {output}")


if __name__ == "__main__":
    main()
