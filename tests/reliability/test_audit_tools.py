"""The audit's analysis tools: pooling saved scores (benchmarks/audit_pool.py) and the optimal
conversion of ρ-zCDP to (ε, δ) (benchmarks/audit_conversion.py), each against numbers computed
independently of it."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest

from synthpriv.evaluation.audit import AuditSetting, run_audit

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_pooling_one_audits_scores_gives_its_own_bounds(tmp_path) -> None:
    """The pooled bound of one saved audit is that audit's bound (same levels, same splits), and
    pooling two files is the bound of their concatenation."""
    pool = _load("audit_pool")
    # δ = 0.1 on 8 and 9 rows: above 1/n̂ whenever the noisy count reaches 10 (the δ check reads
    # the DP n̂, not the exact n), so the pooling test lifts it; the δ check is not its subject
    result = run_audit(AuditSetting("independent", 4.0, 0.1, allow_large_delta=True), runs=12)
    np.savez(tmp_path / "a.npz", **result.scores)
    alone = pool.certified(pool.pooled_scores([tmp_path / "a.npz"]), 0.1, 0.05, 0.5)
    assert alone["white"] == result.white["eps_lower_bound"]
    assert alone["black"] == result.black["eps_lower_bound"]
    assert alone["certified"] == result.certified
    shifted = {k: v + (1.0 if k.endswith("_in") else 0.0) for k, v in result.scores.items()}
    np.savez(tmp_path / "b.npz", **shifted)
    both = pool.pooled_scores([tmp_path / "a.npz", tmp_path / "b.npz"])
    assert both["white_in"].tolist() == result.scores["white_in"].tolist() + shifted[
        "white_in"].tolist()


def test_the_optimal_zcdp_conversion_is_attained_by_randomised_response() -> None:
    """Randomised response with ε₀ = 1 is ε₀·tanh(ε₀/2)-zCDP (the tight pure-DP → zCDP
    conversion, attained by randomised response: T. Steinke, "Tight RDP & zCDP bounds from pure
    DP", differentialprivacy.org, 2022) and its δ at ε = 0 is its total variation tanh(ε₀/2). So
    the optimal δ(0) of that ρ is at least tanh(½) = 0.46212; the Bernoulli search finds it."""
    conversion = _load("audit_conversion")
    rho = math.tanh(0.5)
    assert conversion.optimal_delta(0.0, rho, points=80) == pytest.approx(math.tanh(0.5), abs=1e-4)


@pytest.mark.slow
def test_the_optimal_conversion_lies_between_the_gaussian_and_the_ledger() -> None:
    """At the ρ the ledger turns into ε = 1 at δ = 0.1: the ledger's conversion is valid, so the
    optimal δ at the ledger's ε is at most 0.1; the Gaussian mechanism of that ρ is ρ-zCDP with
    δ = 0.1 at its exact ε (dp-accounting's PLD, 0.650), so the optimal δ there is at least 0.1."""
    conversion = _load("audit_conversion")
    rho = conversion.ledger_rho(1.0, 0.1)
    assert conversion.optimal_delta(conversion.ledger_epsilon(rho, 0.1), rho) <= 0.1
    assert conversion.optimal_delta(conversion.gaussian_epsilon(rho, 0.1), rho) >= 0.1


def test_the_pooled_gdp_figures_are_the_audits() -> None:
    """``audit_pool``'s GDP figures of one audit's scores at threshold 0 are ``run_audit``'s: the
    same μ bound (all runs, 95 %), the ledger's μ for the ρ the audit read from its manifest."""
    pool = _load("audit_pool")
    result = run_audit(AuditSetting("independent", 4.0, 0.1), runs=60)
    figures = pool.gdp_figures(result.scores, 0.1, 0.05, 0.0, result.ledger_rho)
    assert result.gdp["mu_lower_bound"] > 0
    assert figures["mu_lower_bound"] == round(result.gdp["mu_lower_bound"], 4)
    assert figures["ledger_mu"] == round(result.ledger_mu, 4)
    assert figures["mu_share"] == round(result.gdp["mu_lower_bound"] / result.ledger_mu, 4)
