"""Budget arithmetic lives in synthpriv/privacy/ only (issue 14, item 4): the named conversions
agree with independently computed numbers, the plan calibration with the analytic Gaussian,
and no module outside the privacy package writes a ρ ↔ σ ↔ ε formula of its own."""

from __future__ import annotations

import ast
import math
import re
from pathlib import Path

import dp_accounting as dpa
import numpy as np
import pytest
from scipy import optimize, stats

import synthpriv
from synthpriv.privacy.accountant import GaussianEvent, Ledger
from synthpriv.privacy.calibration import RELATIVE_TOLERANCE, calibrate_scale
from synthpriv.privacy.conversions import (
    composed_gaussian_multiplier,
    exponential_epsilon,
    exponential_rho,
    gaussian_noise_multiplier,
    gaussian_rho,
    gaussian_sigma,
)

PACKAGE = Path(synthpriv.__file__).parent
# Names a budget quantity goes by in this code base. A conversion takes a square root, a power
# or a quotient of one of them; multiplying by a share or a sensitivity, or adding ρs, is not.
BUDGET_NAME = re.compile(r"rho|epsilon|multiplier", re.IGNORECASE)


def _names(node: ast.AST) -> list[str]:
    return [n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else n.arg
            for n in ast.walk(node) if isinstance(n, ast.Name | ast.Attribute | ast.arg)]


def inline_conversions(source: str) -> list[str]:
    """Expressions in ``source`` that look like budget arithmetic: sqrt/exp/log of, or a power or
    quotient involving, a name that holds a ρ, an ε or a noise multiplier."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, ast.Call | ast.BinOp):
            continue
        budget = any(BUDGET_NAME.search(n) for n in _names(node))
        if isinstance(node, ast.Call) and budget:
            name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
                node.func, "id", "")
            if name in ("sqrt", "exp", "log") and any(
                    any(BUDGET_NAME.search(n) for n in _names(a)) for a in node.args):
                found.append(ast.unparse(node))
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow | ast.Div) and budget:
            found.append(ast.unparse(node))
    return found


def test_no_module_outside_privacy_writes_budget_arithmetic() -> None:
    offending = {
        str(path.relative_to(PACKAGE)): hits
        for path in sorted(PACKAGE.rglob("*.py"))
        if "privacy" not in path.relative_to(PACKAGE).parts
        and (hits := inline_conversions(path.read_text()))
    }
    assert not offending, f"use synthpriv.privacy.conversions instead: {offending}"


@pytest.mark.parametrize("formula", [
    "multiplier = math.sqrt(d / (2 * rho))",
    "epsilon = np.sqrt(8 * self.rho_select / (d - 1))",
    "rho = count / (2 * plan.noise_multiplier ** 2)",
    "cost = epsilon**2 / 8",
])
def test_the_scan_sees_an_inline_conversion(formula: str) -> None:
    assert inline_conversions(formula), formula


def test_the_scan_leaves_shares_and_sensitivities_alone() -> None:
    assert not inline_conversions("rest = rho - fraction * rho\nsigma = multiplier * l2\n")


def test_gaussian_conversions_match_the_definition_and_dp_accounting() -> None:
    # σ = Δ/√(2ρ) for one release: ρ = 1/8, Δ = 2 gives σ = 4; k releases share ρ equally
    assert gaussian_sigma(0.125, 2.0) == pytest.approx(4.0, rel=1e-15)
    assert gaussian_noise_multiplier(0.5) == 1.0
    assert gaussian_noise_multiplier(0.5, count=9) == pytest.approx(3.0, rel=1e-15)
    assert gaussian_rho(gaussian_noise_multiplier(0.37, 5), 5) == pytest.approx(0.37, rel=1e-12)
    # dp-accounting's own Gaussian (RDP α/(2z²) at every order) against its zCDP event of ρ
    for rho in (1e-3, 0.1, 2.0):
        z = gaussian_noise_multiplier(rho)
        gaussian = dpa.rdp.RdpAccountant().compose(dpa.GaussianDpEvent(z)).get_epsilon(1e-6)
        zcdp = dpa.rdp.RdpAccountant().compose(dpa.ZCDpEvent(rho)).get_epsilon(1e-6)
        assert gaussian == pytest.approx(zcdp, rel=1e-9)


def test_exponential_rho_bounds_the_renyi_divergence_of_a_bounded_range_mechanism() -> None:
    """ε²/8 (Cesar & Rogers 2021) against the Rényi divergences, computed directly, of
    two-outcome mechanisms whose log-likelihood ratios span a range of ε (the worst case)."""
    for epsilon in (0.1, 0.5, 1.0, 2.0):
        assert exponential_epsilon(exponential_rho(epsilon, 3), 3) == pytest.approx(epsilon)
        rho = exponential_rho(epsilon)
        assert rho == pytest.approx(epsilon**2 / 8, rel=1e-15)
        worst = 0.0
        for p in np.linspace(0.01, 0.99, 99):
            # ratios e^a, e^(a−ε) with p·e^a + (1−p)·e^(a−ε) = 1
            a = -math.log(p + (1 - p) * math.exp(-epsilon))
            q = np.array([p, 1 - p])
            big_p = q * np.exp([a, a - epsilon])
            for alpha in (1.5, 2.0, 4.0, 8.0):
                divergence = math.log((big_p**alpha * q ** (1 - alpha)).sum()) / (alpha - 1)
                worst = max(worst, divergence / alpha)
        assert worst <= rho * (1 + 1e-12)
        assert worst >= 0.9 * rho  # and the bound is nearly attained: tight, not loose


def test_composed_gaussian_is_one_gaussian_of_the_summed_precision() -> None:
    assert composed_gaussian_multiplier([(2.0, 1), (2.0, 3)]) == pytest.approx(1.0)
    assert composed_gaussian_multiplier([]) is None


def analytic_gaussian_delta(z: float, epsilon: float) -> float:
    """δ(ε) of the Gaussian mechanism with multiplier z (Balle & Wang 2018, Thm. 8)."""
    return (stats.norm.cdf(1 / (2 * z) - epsilon * z)
            - math.exp(epsilon) * stats.norm.cdf(-1 / (2 * z) - epsilon * z))


@pytest.mark.parametrize("epsilon", [0.3, 1.0])
def test_calibration_matches_the_analytic_gaussian(epsilon: float) -> None:
    """One Gaussian release at ρ = t: the largest t that fits ε at δ, by dp-accounting's
    calibration on the Ledger, against the exact Gaussian curve solved independently."""
    delta = 1e-6

    def events_at(t: float) -> list[GaussianEvent]:
        return [GaussianEvent(gaussian_noise_multiplier(t))]

    t = calibrate_scale(events_at, epsilon, delta, "add_remove")
    exact_z = optimize.brentq(lambda z: analytic_gaussian_delta(z, epsilon) - delta, 0.05, 100)
    exact_t = 1 / (2 * exact_z**2)
    ledger = Ledger()
    ledger.extend(events_at(t))
    assert ledger.epsilon(delta) <= epsilon
    # below the exact optimum (the PLD is pessimistic), and close to it
    assert exact_t * (1 - 10 * RELATIVE_TOLERANCE) <= t <= exact_t * (1 + 1e-9)
