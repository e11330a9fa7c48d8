"""What bounds TSTR AUC on Adult: the public binning, and how well DP-SGD alone predicts the target.

1. Binning ceiling: the real train split, encoded with the job's schema and decoded back (values
   drawn within their bins, as every release decodes them), scored like a synthetic table. No
   DP method built on that encoding can beat it. Then, for each numeric column, the same with
   that one column left exact: what its bins cost.
2. DP income head: the generator's conditional network p(target | all other columns), trained
   with DP-SGD on the real rows at several ε (standalone, δ of the job), scored by AUC on the
   holdout. The hybrid recipe's completion can add no more to TSTR than this network knows.

    .venv/bin/python benchmarks/tstr_bounds.py configs/adult.yaml --epsilons 0.3,1,3 --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

import numpy as np
import torch
from sklearn.metrics import roc_auc_score

from synthpriv.config import load_job
from synthpriv.encoding import TableEncoder
from synthpriv.evaluation.utility import ml_efficacy
from synthpriv.generators.autoregressive import AutoregressiveModel
from synthpriv.generators.dpsgd import DpSgdSettings, train_dp_sgd
from synthpriv.privacy.accountant import Ledger, SubsampledGaussianEvent
from synthpriv.table import read_table

SAMPLE_RATE, EPOCHS, CLIP = 0.05, 20.0, 3.0


def gbm_auc(train, holdout, target: str, numeric: list[str]) -> float:
    scores = ml_efficacy(train, holdout, target, numeric)
    return scores["models"]["gradient_boosting"]["auc"]


def binning_ceiling(job, real, holdout) -> dict:
    encoder, target = TableEncoder(job.schema), job.config.evaluation.target
    numeric = job.schema.numeric_names
    decoded = encoder.decode(encoder.encode(real).codes, np.random.default_rng(0))
    result = {"real": gbm_auc(real, holdout, target, numeric),
              "binned": gbm_auc(decoded, holdout, target, numeric), "one_column_exact": {}}
    for column in numeric:
        mixed = decoded.copy()
        mixed[column] = real[column].to_numpy()
        result["one_column_exact"][column] = gbm_auc(mixed, holdout, target, numeric)
    return result


def noise_for(epsilon: float, delta: float, steps: int) -> float:
    """Smallest noise multiplier whose DP-SGD run (alone) costs at most ε (the Ledger's)."""
    def cost(z: float) -> float:
        ledger = Ledger()
        ledger.record(SubsampledGaussianEvent(SAMPLE_RATE, z, steps))
        return ledger.epsilon(delta)
    low, high = 0.3, 100.0
    while high / low > 1.001:
        middle = (low * high) ** 0.5
        low, high = (middle, high) if cost(middle) > epsilon else (low, middle)
    return high


def income_head_auc(job, real, holdout, epsilon: float, seed: int) -> float:
    encoder, target = TableEncoder(job.schema), job.config.evaluation.target
    names = list(encoder.domain.attributes)
    t = names.index(target)
    if encoder.domain.shape[t] != 2:
        raise SystemExit(f"{target}: the income head's AUC needs a binary target")
    order = [j for j in range(len(names)) if j != t] + [t]
    steps = int(np.ceil(EPOCHS / SAMPLE_RATE))
    settings = DpSgdSettings(SAMPLE_RATE, noise_for(epsilon, job.config.budget.delta, steps),
                             CLIP, steps)
    codes = encoder.encode(real).codes
    torch.manual_seed(seed)
    network = AutoregressiveModel(encoder.domain.shape, order, given=len(names) - 1)
    train_dp_sgd(network, torch.as_tensor(codes), SAMPLE_RATE * len(codes), settings,
                 np.random.default_rng(seed), torch.Generator().manual_seed(seed))
    test = encoder.encode(holdout).codes
    positive = 1  # the schema's second income category, '>50K'
    probabilities = network.probabilities(test, len(names) - 1)[:, positive]
    return float(roc_auc_score(test[:, t] == positive, probabilities))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--epsilons", default="0.3,1,3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--output", type=Path, default=Path("benchmarks/results/tstr-bounds.json"))
    args = parser.parse_args()
    job = load_job(args.config)
    real = read_table(job.data_path, job.schema)
    holdout = read_table(job.holdout_path, job.schema)
    torch.set_num_threads(1)
    ceiling = binning_ceiling(job, real, holdout)
    print(f"GBM AUC: real {ceiling['real']:.4f}, binned and decoded {ceiling['binned']:.4f}")
    for column, auc in ceiling["one_column_exact"].items():
        print(f"  {column} exact, the rest binned: {auc:.4f}")
    heads = {}
    for epsilon in [float(e) for e in args.epsilons.split(",")]:
        aucs = [income_head_auc(job, real, holdout, epsilon, seed) for seed in range(args.repeats)]
        heads[str(epsilon)] = {"auc": aucs, "mean": statistics.fmean(aucs),
                               "std": statistics.stdev(aucs) if len(aucs) > 1 else 0.0}
        print(f"DP income head at ε = {epsilon:g}: AUC {heads[str(epsilon)]['mean']:.4f} "
              f"± {heads[str(epsilon)]['std']:.4f}", flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"command": " ".join(sys.argv), "binning": ceiling,
                                       "income_head": heads, "sample_rate": SAMPLE_RATE,
                                       "epochs": EPOCHS, "max_grad_norm": CLIP}, indent=2) + "\n")
    print(f"results: {args.output}")


if __name__ == "__main__":
    main()
