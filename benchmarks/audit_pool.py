"""Pool the saved scores of audit runs of one setting and bound ε again (and re-split them).

    .venv/bin/python benchmarks/audit_pool.py --delta 0.1 --claimed 0.9992 \\
        benchmarks/results/audit-scores/aim-eps1-tight/chunk*/*.npz

An audit's runs are independent draws of the same job on D and D', so the score files that
``benchmarks/audit.py --scores`` saves for one setting (e.g. several shorter audits run one after
another, each of which saves its scores when it ends) concatenate into one larger audit. This
prints the white-box, black-box and certified (larger) ε lower bounds of the pooled runs with
``empirical_epsilon`` at the audit's levels (each view at α/2, split seed 0 for the white box and
1 for the black box, as ``run_audit``), and with ``--resplits K`` the mean, least and largest
certified bound over K other random splits: the spread of the single figure.

In Gaussian-DP terms (``synthpriv.evaluation.gdp_audit``), under ``gdp``: the white box's μ lower
bound from every pooled run at the fixed threshold ``--gdp-threshold`` (0, the midpoint of a
log-likelihood-ratio score; distribution-free, confidence 1 − α), the ledger's μ = √(2ρ) for
``--rho`` (the ``ledger_rho`` that ``benchmarks/audit.py`` prints) and the share; the bound as ε
at δ if the mechanism's trade-off curve is Gaussian (``eps_if_gaussian``; the Gaussian curve of
the ledger's μ gives ``eps_at_ledger_mu``, the most such an audit can show), the
distribution-free (ε, δ) bound of the same test (``eps_dp_same_test``), and the parametric
estimate (``gaussian_shift_estimate``: valid only for Gaussian scores).

    .venv/bin/python benchmarks/audit_pool.py --delta 0.1 --claimed 0.9992 --rho 0.268051 \\
        benchmarks/results/audit-scores/aim-eps1-tight/chunk*/*.npz
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from synthpriv.evaluation.attack_metrics import empirical_epsilon
from synthpriv.evaluation.gdp_audit import (
    gaussian_mu,
    gaussian_shift_estimate,
    gdp_epsilon,
    gdp_mu_lower_bound,
)

VIEWS = ("white", "black")


def pooled_scores(files: list[Path]) -> dict[str, np.ndarray]:
    """The files' scores concatenated, per key (white_in, white_out, black_in, black_out)."""
    loaded = [np.load(f) for f in files]
    keys = [f"{view}_{side}" for view in VIEWS for side in ("in", "out")]
    return {k: np.concatenate([s[k] for s in loaded]) for k in keys}


def certified(scores: dict[str, np.ndarray], delta: float, alpha: float, fraction: float,
              seeds: tuple[int, int] = (0, 1)) -> dict[str, float]:
    """White-box and black-box bounds (each at level α/2) and their maximum."""
    bounds = {
        view: empirical_epsilon(scores[f"{view}_in"], scores[f"{view}_out"], delta, alpha / 2,
                                np.random.default_rng(seed), fraction)
        for view, seed in zip(VIEWS, seeds, strict=True)
    }
    out = {view: bounds[view]["eps_lower_bound"] for view in VIEWS}
    return {**out, "certified": max(out.values()),
            "max_certifiable": bounds["white"]["max_certifiable"]}


def gdp_figures(scores: dict[str, np.ndarray], delta: float, alpha: float,
                threshold: float | None, rho: float | None) -> dict[str, float]:
    """The white box's GDP figures (see the module docstring); μ bound at confidence 1 − α."""
    bound = gdp_mu_lower_bound(scores["white_in"], scores["white_out"], alpha, threshold, delta)
    estimate = gaussian_shift_estimate(scores["white_in"], scores["white_out"], alpha)
    out = {"mu_lower_bound": bound["mu_lower_bound"], "confidence": bound["confidence"],
           "threshold": bound["threshold"], "runs_evaluated": bound["runs_evaluated"]["in"],
           "eps_if_gaussian": bound["eps_gaussian"], "eps_dp_same_test": bound["eps_lower_bound_dp"],
           "mu_estimate_if_gaussian_scores": estimate["mu_estimate"],
           "mu_estimate_lower_if_gaussian_scores": estimate["mu_estimate_lower"]}
    if rho is not None:
        mu = gaussian_mu(rho)
        out.update(ledger_mu=mu, mu_share=bound["mu_lower_bound"] / mu,
                   eps_at_ledger_mu=gdp_epsilon(mu, delta))
    return {k: round(v, 4) if isinstance(v, float) else v for k, v in out.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("files", nargs="+", type=Path, help=".npz score files of one setting")
    parser.add_argument("--delta", type=float, required=True)
    parser.add_argument("--claimed", type=float, help="the ledger's ε, for the share")
    parser.add_argument("--alpha", type=float, default=0.05, help="confidence is 1 - 2·alpha")
    parser.add_argument("--selection-fraction", type=float, default=0.5)
    parser.add_argument("--resplits", type=int, default=0)
    parser.add_argument("--rho", type=float, help="the ledger's zCDP ρ, for the GDP share")
    parser.add_argument("--gdp-threshold", default="0",
                        help="the white box's fixed test threshold, or 'select' (half the runs)")
    args = parser.parse_args(argv)
    scores = pooled_scores(args.files)
    result = {"files": len(args.files), "runs_per_side": int(scores["white_in"].size),
              **certified(scores, args.delta, args.alpha, args.selection_fraction)}
    if args.resplits:
        again = [certified(scores, args.delta, args.alpha, args.selection_fraction,
                           (2 * k + 2, 2 * k + 3))["certified"] for k in range(args.resplits)]
        result["resplit_certified"] = {"mean": float(np.mean(again)), "min": float(min(again)),
                                       "max": float(max(again)), "splits": args.resplits}
    if args.claimed:
        result["share"] = result["certified"] / args.claimed
    threshold = None if args.gdp_threshold == "select" else float(args.gdp_threshold)
    result["gdp"] = gdp_figures(scores, args.delta, args.alpha, threshold, args.rho)
    print(json.dumps({k: round(v, 4) if isinstance(v, float) else v for k, v in result.items()}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
