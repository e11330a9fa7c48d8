"""What a white-box audit of a marginal recipe can certify, in the Gaussian model of its score.

    .venv/bin/python benchmarks/audit_model.py --epsilons 1,4 --delta 0.1 --runs 1500,3000,6000,12000

For a ledger ε at δ of a recipe accounted as ρ-zCDP (AIM's filter: the RDP bound on the reserved
ρ), a white box that sees measurements carrying a share ``--measured`` of ρ sees the canary as a
Gaussian shift of μ = √(2·share·ρ) noise units (each count's log-likelihood ratio, summed).
Printed per ε: ρ, μ, the ε that shift has at δ (dp-accounting's Gaussian PLD: what infinitely
many runs could certify at most), and the mean (least–largest) over ``--trials`` simulated audits
of the bound ``empirical_epsilon`` certifies with ``runs`` runs per side, at each selection
fraction. ``--measured`` may also be the share a real audit's white-box scores show: (their mean
difference over their standard deviation)² / (2ρ).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import optimize

from synthpriv.evaluation.attack_metrics import empirical_epsilon
from synthpriv.privacy.accountant import ZCDPEvent, rdp_epsilon


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilons", default="1,4")
    parser.add_argument("--delta", type=float, default=0.1)
    parser.add_argument("--measured", default="0.9,0.99", help="shares of ρ the white box sees")
    parser.add_argument("--runs", default="1500,3000,6000,12000", help="runs per side")
    parser.add_argument("--fractions", default="0.5,0.2", help="selection fractions")
    parser.add_argument("--trials", type=int, default=20)
    parser.add_argument("--alpha", type=float, default=0.05, help="each view at alpha/2")
    args = parser.parse_args(argv)
    rng = np.random.default_rng(0)
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        rho = optimize.brentq(
            lambda r, e=epsilon: rdp_epsilon([ZCDPEvent(r)], args.delta, "add_remove") - e,
            1e-6, 100)
        for share in (float(s) for s in args.measured.split(",")):
            mu = math.sqrt(2 * share * rho)
            cap = pld_lib.from_gaussian_mechanism(1 / mu).get_epsilon_for_delta(args.delta)
            cells = []
            for runs in (int(r) for r in args.runs.split(",")):
                for fraction in (float(f) for f in args.fractions.split(",")):
                    bounds = [
                        empirical_epsilon(rng.normal(mu, 1, runs), rng.normal(0, 1, runs),
                                          args.delta, args.alpha / 2, np.random.default_rng(t),
                                          fraction)["eps_lower_bound"]
                        for t in range(args.trials)
                    ]
                    cells.append(f"{runs}/{fraction:g}: {np.mean(bounds):.2f} "
                                 f"({min(bounds):.2f}–{max(bounds):.2f})")
            print(f"ε {epsilon:g} (ρ {rho:.3f}), measured share {share:g}: μ {mu:.3f}, "
                  f"at most {cap:.3f} ({cap / epsilon:.0%}); certified (runs/selection "
                  f"fraction: mean) " + "; ".join(cells), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
