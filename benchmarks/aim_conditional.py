"""Where AIM's TSTR comes from: the fitted model's own p(target | x) against GBMs on its samples.

For each fit (fresh secure noise, the job's budget): the AUC on the holdout of the model's exact
conditional of the target given every other column (from its junction-tree marginals), and of a
gradient-boosted classifier trained on n, 4n and 10n rows drawn from that same model, rounded
and i.i.d.

    .venv/bin/python benchmarks/aim_conditional.py configs/adult.yaml --fits 2 [--epsilon 10]
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
from sklearn.metrics import roc_auc_score

from synthpriv.config import load_job
from synthpriv.encoding import TableEncoder
from synthpriv.evaluation.utility import ml_efficacy
from synthpriv.job import SynthesisJob
from synthpriv.marginals.estimation import GraphicalModel
from synthpriv.privacy.randomness import RandomSource
from synthpriv.table import read_table

MULTIPLES = (1, 4, 10)


def exact_log_odds(model: GraphicalModel, codes: np.ndarray, target: str, positive: int) -> np.ndarray:
    """log p(target = positive | x) - log p(target = other | x) for binary targets: the cliques'
    marginals over the separators' (the model's factorisation), terms without the target cancel."""
    names = list(model.domain.attributes)
    tree = model.tree
    factors = [(1.0, m) for m in model.marginals]
    factors += [(-1.0, model.marginals[i].project(tree.separator[i]))
                for i in range(len(tree.cliques)) if tree.separator[i]]
    score = np.zeros((len(codes), 2))
    for sign, factor in factors:
        attributes = list(factor.domain.attributes)
        if target not in attributes:
            continue
        axes = [names.index(a) for a in attributes]
        for k in range(2):
            cells = codes[:, axes].copy()
            cells[:, attributes.index(target)] = k
            score[:, k] += sign * np.log(np.maximum(factor.values[tuple(cells.T)], 1e-12))
    return score[:, positive] - score[:, 1 - positive]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--fits", type=int, default=2)
    parser.add_argument("--epsilon", type=float, help="override the job's ε")
    parser.add_argument("--output", type=Path,
                        default=Path("benchmarks/results/aim-conditional.json"))
    args = parser.parse_args()
    job = load_job(args.config).with_budget(args.epsilon, None)
    target = job.config.evaluation.target
    encoder = TableEncoder(job.schema)
    real, holdout = read_table(job.data_path, job.schema), read_table(job.holdout_path, job.schema)
    test = encoder.encode(holdout).codes
    column = list(encoder.domain.attributes).index(target)
    if encoder.domain.shape[column] != 2:
        raise SystemExit(f"{target}: the exact log-odds need a binary target")
    positive = 1  # the schema's second category ('>50K' on Adult)
    planned, fits = SynthesisJob(job), []
    for fit in range(args.fits):
        model = planned.synthesise(real, RandomSource.secure()).state.model
        if not isinstance(model, GraphicalModel):
            raise SystemExit(f"{args.config}: the recipe's model is not a graphical model")
        rng = np.random.default_rng(fit)  # benchmark draws only, never released
        result = {"exact_conditional_auc": float(roc_auc_score(
            test[:, column] == positive, exact_log_odds(model, test, target, positive)))}
        for multiple in MULTIPLES:
            rows = int(model.total) * multiple
            for method, draw in (("rounded", model.sample_rounded), ("iid", model.sample)):
                synthetic = encoder.decode(draw(rows, rng), rng)
                scores = ml_efficacy(synthetic, holdout, target, job.schema.numeric_names)
                result[f"gbm_{method}_x{multiple}"] = scores["models"]["gradient_boosting"]["auc"]
        fits.append(result)
        print(json.dumps(result), flush=True)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps({"command": " ".join(sys.argv), "fits": fits}, indent=2)
                           + "\n")
    print(f"results: {args.output}")


if __name__ == "__main__":
    main()
