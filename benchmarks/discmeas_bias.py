"""Does the selection bias of DP discovery's kept counts matter when they are combined with the
recipe's 1-way counts (``compress.with_discovery``)? A simulation of the 1-way estimate alone, on
the true value counts of a suite table's categorical columns (data-read draft) with the safe
draft's planned noise at ε = 1 (σ_d and T of discovery after reallocation, σ_r of the recipe's
1-way marginals: MST's, AIM's first rounds'): per draw, discovery keeps the values whose noisy
count passes T, and each column's 1-way counts are estimated

* ``recipe``: the recipe's noisy count alone (main);
* ``margin M``: combined by inverse variance where the kept count is ≥ T + M·σ_d (M = 0: every
  kept count; M = 2: where the bias of conditioning on T is below 0.01σ_d).

Reported per column: the mean L1 error of the kept values' cells (rows) and the mean bias
(estimate − true, when kept) of the values whose true count is within 2σ_d of T, over
``--draws`` draws. Post-processing
only; reads the train split's exact counts (a benchmark, not a release).

    PYTHONPATH=. .venv/bin/python benchmarks/discmeas_bias.py --table adult --draws 400
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from safe_gap import both_drafts  # noqa: E402
from suite import TABLES, job_config, read_scored  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.marginals.compress import inverse_variance  # noqa: E402
from synthpriv.pipeline import plan_job  # noqa: E402

MARGINS = (0.0, 1.0, 2.0)


def planned_noise(table: str, cache: Path) -> tuple[dict, dict[str, float], list[str]]:
    """The true counts of each categorical column and, per recipe, σ_d, T and σ_r from the safe
    draft's plan (public figures)."""
    work, draft, safe, scoring = both_drafts(table, cache, "discmeas-bias-")
    real = read_scored(draft.train, scoring)
    noise = {}
    for recipe, key in (("mst", "sigma_one_way"), ("aim", "sigma_first_rounds")):
        path = work / f"{recipe}.yaml"
        path.write_text(yaml.safe_dump(job_config(safe, recipe, 1.0, len(real))))
        plan, _ = plan_job(load_job(path))
        stages = {s.stage: s for s in plan.stages}
        domain = stages["domain"].noise
        noise[recipe] = {"sigma_d": domain["category_sigma_reallocated"],
                         "threshold": domain["category_threshold_reallocated"],
                         "sigma_r": stages["marginals"].noise[key]}
    categorical = [c.name for c in scoring.modelled if c.name not in set(scoring.numeric_names)]
    counts = {name: real[name].value_counts().to_numpy(dtype=float) for name in categorical}
    return counts, noise, categorical


def simulate(true: np.ndarray, sigma_d: float, threshold: float, sigma_r: float, draws: int,
             rng: np.random.Generator) -> dict[str, tuple[float, float]]:
    """Mean L1 error over kept cells and mean bias near T, per estimator (module docstring)."""
    errors = {"recipe": [], **{f"margin {m:g}": [] for m in MARGINS}}
    near = {k: [] for k in errors}
    for _ in range(draws):
        discovered = true + rng.normal(0, sigma_d, len(true))
        kept = discovered >= threshold
        recipe = true + rng.normal(0, sigma_r, len(true))
        close = kept & (np.abs(true - threshold) < 2 * sigma_d)
        estimates = {"recipe": recipe}
        for margin in MARGINS:
            use = kept & (discovered >= threshold + margin * sigma_d)
            combined, _ = inverse_variance(recipe, sigma_r ** 2, np.where(use, discovered, 0.0),
                                           np.where(use, sigma_d ** 2, np.inf))
            estimates[f"margin {margin:g}"] = combined
        for name, estimate in estimates.items():
            errors[name].append(np.abs(estimate - true)[kept].sum())
            near[name].extend((estimate - true)[close])
    return {k: (float(np.mean(errors[k])), float(np.mean(near[k])) if near[k] else 0.0)
            for k in errors}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="adult", help=", ".join(TABLES))
    parser.add_argument("--draws", type=int, default=400)
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    args = parser.parse_args()
    counts, noise, categorical = planned_noise(args.table, args.cache)
    rng = np.random.default_rng(0)
    for recipe, figures in noise.items():
        print(f"{args.table} {recipe}: σ_d {figures['sigma_d']:.1f}, T {figures['threshold']:.0f}"
              f", σ_r {figures['sigma_r']:.1f}")
        for name in categorical:
            result = simulate(counts[name], figures["sigma_d"], figures["threshold"],
                              figures["sigma_r"], args.draws, rng)
            print(f"  {name:16s} " + "; ".join(
                f"{k}: L1 {v[0]:7.1f}, bias near T {v[1]:+6.1f}" for k, v in result.items()))


if __name__ == "__main__":
    main()
