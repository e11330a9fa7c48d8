"""One recipe on one table with a given schema: mean TVD 1/2/3-way, TSTR AUC and seconds over repeats.

The A/B of the adaptive domain on Adult (issue 13): the hand-tuned schema, the same with
``adaptive_domain: false``, the schema ``synthpriv schema infer`` drafts, and the one ``schema infer
--safe`` drafts (bounds and categories bought by the DP domain step), side by side. Stage
options are a JSON mapping; the code measured is whatever ``synthpriv`` imports (PYTHONPATH=<a
checkout> measures another commit):

    A=data/adult
    .venv/bin/python benchmarks/schema_ab.py $A/adult_train.csv $A/adult_test.csv $A/schema.yaml \
        income aim 1 2 '{"marginals": {"adaptive_domain": false}}'
"""

from __future__ import annotations

import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from synthpriv.config import load_job
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.runner import run_job
from synthpriv.table import read_table

DELTA = 1e-6


def measure(train: Path, test: Path, schema: Path, target: str, recipe: str, epsilon: float,
            stages: dict) -> list[float]:
    """TVD 1/2/3-way, TSTR AUC and seconds of one fresh-noise release."""
    with tempfile.TemporaryDirectory() as folder:
        config = Path(folder) / "job.yaml"
        config.write_text(yaml.safe_dump({
            "name": "ab", "data": {"path": str(train.resolve()), "schema": str(schema.resolve())},
            "budget": {"epsilon": epsilon, "delta": DELTA},
            "pipeline": {"recipe": recipe, "stages": stages}, "evaluation": {"enabled": False},
        }))
        job = load_job(config)
        started = time.perf_counter()
        result = run_job(job, out=Path(folder) / "out", force=True)
        seconds = time.perf_counter() - started
        # the real rows as the input writes them (a schema with a DP domain reads values it does
        # not keep as 'other' or missing: scored on the raw rows, that loss shows)
        real = read_table(train, job.schema) if job.schema.unresolved else result.real
        utility = evaluate_utility(real, result.synthetic,
                                   numeric_columns=job.schema.numeric_names, target=target,
                                   holdout=read_table(test, job.schema), quality_report=False)
    marginals = utility["marginals"]
    tstr = utility["ml_efficacy"]["models"]["gradient_boosting"]["tstr"]["auc"]
    return [marginals["1-way"]["mean"], marginals["2-way"]["mean"], marginals["3-way"]["mean"],
            tstr, seconds]


def main() -> None:
    train, test, schema, target, recipe = sys.argv[1:6]
    epsilon, repeats = float(sys.argv[6]), int(sys.argv[7])
    stages = json.loads(sys.argv[8]) if len(sys.argv) > 8 else {}
    runs = [measure(Path(train), Path(test), Path(schema), target, recipe, epsilon, stages)
            for _ in range(repeats)]
    means = [statistics.fmean(column) for column in zip(*runs, strict=True)]
    spread = statistics.stdev([run[3] for run in runs]) if repeats > 1 else 0.0
    print(f"{Path(schema).name} {recipe} ε={epsilon:g} δ={DELTA:g} ({repeats} runs): TVD "
          f"{means[0]:.4f} / {means[1]:.4f} / {means[2]:.4f}, TSTR {means[3]:.3f} ± {spread:.3f}, "
          f"{means[4]:.0f} s")


if __name__ == "__main__":
    main()
