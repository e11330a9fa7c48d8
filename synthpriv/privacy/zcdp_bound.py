"""The RDP bound of a ρ-zCDP composition in closed form, with no dp-accounting import.

Every event of the marginal recipes is ρ-zCDP (Gaussian and discrete Gaussian releases, 1/(2z²)
each; exponential-mechanism selections, ε²/8; an adaptive stage's reservation, ρ): their
composition is Σρ-zCDP, i.e. Rényi DP of order α at α·Σρ for every α > 1 (Bun & Steinke 2016,
Def. 1.1). The Ledger's RDP accountant (dp-accounting's ``RdpAccountant``) holds exactly that
curve at its default orders and converts it to (ε, δ) by Canonne, Kamath & Steinke 2020,
Prop. 12 (also Asoodeh et al. 2020, eq. 20), minimised over the orders:

    ε(δ) = max(0, min_α  α·ρ + log(1 − 1/α) − log(δ·α)/(α − 1)),

with ε = 0 at an order whose RDP r has δ² > 1 − e^(−r) (the KL bound δ ≤ √(1 − e^(−KL))).
This module repeats that arithmetic on the same orders, so a plan of zCDP events is priced as
the Ledger's RDP bound prices it (tests/privacy/test_zcdp_bound.py checks both agree to 1e-9
on many (ρ, δ)) in microseconds and without importing dp-accounting, whose package import
loads its PLD accountant and scipy.signal (issue 26).
"""

from __future__ import annotations

import math

# dp-accounting's rdp_privacy_accountant.DEFAULT_RDP_ORDERS (the test checks they are the same).
RDP_ORDERS: tuple[float, ...] = tuple(
    [1 + x / 10.0 for x in range(1, 100)] + list(range(11, 64)) + [128, 256, 512, 1024]
)


def zcdp_epsilon(rho: float, delta: float) -> float:
    """ε at ``delta`` of a ρ-zCDP mechanism by the RDP-to-(ε, δ) conversion at RDP_ORDERS (see
    the module docstring): what the Ledger's RDP accountant reports for zCDP events of total
    ``rho``. inf for δ ≤ 0 or ρ = inf; 0 for ρ = 0."""
    if not rho >= 0:
        raise ValueError(f"rho must be >= 0, got {rho}")
    if not 0 < delta < 1:
        return math.inf if delta <= 0 else 0.0
    best = math.inf
    for order in RDP_ORDERS:
        rdp = order * rho
        if delta**2 + math.expm1(-rdp) > 0:
            return 0.0  # the KL bound alone gives δ at ε = 0
        if order > 1.01:  # the conversion is unstable (and useless) as α → 1
            best = min(best, rdp + math.log1p(-1 / order) - math.log(delta * order) / (order - 1))
    return max(0.0, best)
