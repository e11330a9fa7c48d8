"""How tight is the ledger's ρ → (ε, δ) conversion for a zCDP filter (AIM)?

    .venv/bin/python benchmarks/audit_conversion.py --epsilons 1,4 --delta 0.1
    .venv/bin/python benchmarks/audit_conversion.py --epsilons 1,4 --delta 1e-5

(both lines' output: benchmarks/results/audit-conversion.txt)

AIM spends through a zCDP filter, so the ledger knows of it only that it is ρ-zCDP: D_α ≤ α·ρ
at every order α > 1, both ways, for every pair of neighbours. It converts ρ to ε with
dp-accounting's RDP accountant (Canonne, Kamath & Steinke 2020, Prop. 12 — also Asoodeh et al.
2021, eq. 20 — minimised over its grid of orders). Per ledger ε this prints, at the ρ the ledger
turns into that ε:

* ``ledger``: that ε (``accountant.rdp_epsilon`` of one ``ZCDPEvent``);
* ``cks``: the same bound minimised over continuous orders (what a finer grid would give);
* ``optimal``: the least ε valid for *every* ρ-zCDP mechanism. For any pair of output
  distributions (P, Q) and any ε, δ(ε) = sup_A P(A) − e^ε·Q(A) is attained by the set
  A = {P/Q > e^ε}; the Bernoulli pair (P(A), Q(A)) is a post-processing of (P, Q), so its Rényi
  divergences are no larger (data processing) and it is itself a ρ-zCDP pair with the same δ(ε).
  Hence the optimal δ(ε) is a supremum over Bernoulli pairs (p, q) with D_α(p‖q), D_α(q‖p) ≤ α·ρ
  for all α — computed here numerically (the orders on a finite grid, which only enlarges the
  feasible set, so the figure errs upward; q on a grid refined by a bounded search). Riess et
  al. 2026 (arXiv 2602.04562) prove the same optimality for RDP profiles in f-DP terms.
* ``gaussian``: the exact ε of the Gaussian mechanism of that ρ (dp-accounting's PLD): the most a
  white-box audit of Gaussian measurements carrying all of ρ can certify.

``optimal`` is what a tighter valid conversion could report instead of ``ledger``; the gap from
``optimal`` down to ``gaussian`` is the price of knowing only ρ (a zCDP filter), not of the
conversion.
"""

from __future__ import annotations

import argparse
import math

import numpy as np
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import optimize

from synthpriv.privacy.accountant import ZCDPEvent, rdp_epsilon

ORDERS = np.concatenate([1 + np.logspace(-4, 0, 200), np.linspace(2, 50, 300),
                         np.logspace(math.log10(50), 4, 100)])


def ledger_epsilon(rho: float, delta: float) -> float:
    """The ledger's ε of a ρ-zCDP filter at ``delta``."""
    return rdp_epsilon([ZCDPEvent(rho)], delta, "add_remove")


def ledger_rho(epsilon: float, delta: float) -> float:
    """The ρ whose ledger ε at ``delta`` is ``epsilon`` (what a plan reserves for AIM)."""
    return optimize.brentq(lambda r: ledger_epsilon(r, delta) - epsilon, 1e-6, 100)


def cks_epsilon(rho: float, delta: float) -> float:
    """CKS 2020 Prop. 12 for ρ-zCDP, minimised over continuous orders α > 1."""
    def bound(a: float) -> float:
        return a * rho + math.log1p(-1 / a) - math.log(delta * a) / (a - 1)

    return float(optimize.minimize_scalar(bound, bounds=(1.001, 1e4), method="bounded").fun)


def _bernoulli_renyi(p: float, q: float) -> np.ndarray:
    """D_α(Bern(p) ‖ Bern(q)) at every order of ``ORDERS``."""
    with np.errstate(divide="ignore"):
        terms = np.logaddexp(ORDERS * math.log(p) + (1 - ORDERS) * math.log(q),
                             ORDERS * math.log1p(-p) + (1 - ORDERS) * math.log1p(-q))
    return terms / (ORDERS - 1)


def _largest_p(q: float, rho: float) -> float:
    """The largest p ≥ q with both Bernoulli divergences ≤ α·ρ at every order (the feasible p
    form an interval containing q: both divergences are convex functions of p through
    exp((α − 1)·D))."""
    limit = ORDERS * rho + 1e-12
    lo, hi = q, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if mid < 1 and np.all(_bernoulli_renyi(mid, q) <= limit) and np.all(
                _bernoulli_renyi(q, mid) <= limit):
            lo = mid
        else:
            hi = mid
    return lo


def optimal_delta(epsilon: float, rho: float, points: int = 400) -> float:
    """sup over ρ-zCDP Bernoulli pairs of p − e^ε·q: the optimal δ(ε) of ρ-zCDP (q searched on
    ``points`` log-spaced values, then refined between the best one's neighbours)."""
    def gain(q: float) -> float:
        return _largest_p(q, rho) - math.exp(epsilon) * q

    grid = np.logspace(-10, -1e-5, points)
    values = [gain(q) for q in grid]
    i = int(np.argmax(values))
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
    refined = optimize.minimize_scalar(lambda q: -gain(q), bounds=(lo, hi), method="bounded",
                                       options={"xatol": 1e-14})
    return max(values[i], -float(refined.fun), 0.0)


def optimal_epsilon(rho: float, delta: float) -> float:
    """The least ε with optimal_delta(ε) ≤ ``delta``."""
    return float(optimize.brentq(lambda e: optimal_delta(e, rho) - delta, 0.0, 50.0, xtol=1e-4))


def gaussian_epsilon(rho: float, delta: float) -> float:
    """Exact ε at ``delta`` of the Gaussian mechanism that is exactly ρ-zCDP (σ/Δ = 1/√(2ρ))."""
    return pld_lib.from_gaussian_mechanism(1 / math.sqrt(2 * rho)).get_epsilon_for_delta(delta)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--epsilons", default="1,4", help="ledger ε values")
    parser.add_argument("--delta", type=float, default=0.1)
    args = parser.parse_args(argv)
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        rho = ledger_rho(epsilon, args.delta)
        figures = {"ledger": ledger_epsilon(rho, args.delta), "cks": cks_epsilon(rho, args.delta),
                   "optimal": optimal_epsilon(rho, args.delta),
                   "gaussian": gaussian_epsilon(rho, args.delta)}
        print(f"ledger ε {epsilon:g} at δ {args.delta:g}: ρ {rho:.4f}; " + "; ".join(
            f"{k} {v:.4f} ({v / figures['ledger']:.1%})" for k, v in figures.items()), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
