"""The Gaussian-DP audit bound against independent computations: dp-accounting's PLD of the
Gaussian mechanism, Beta quantiles, and samples of known μ (Gaussian and randomised response)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from scipy import stats

from synthpriv.evaluation.gdp_audit import (
    discrete_gaussian_midpoint_mu,
    gaussian_mu,
    gaussian_shift_estimate,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_from_rates,
    gdp_mu_lower_bound,
)


@pytest.mark.parametrize("mu", [0.3, 0.73, 1.75, 3.0])
@pytest.mark.parametrize("delta", [0.1, 1e-5])
def test_gdp_epsilon_is_the_gaussian_mechanisms_exact_epsilon(mu: float, delta: float) -> None:
    """μ-GDP is the Gaussian mechanism of sensitivity 1 and σ = 1/μ: dp-accounting's PLD of it
    gives the same ε at δ, and δ(ε) inverts it."""
    expected = pld_lib.from_gaussian_mechanism(1 / mu).get_epsilon_for_delta(delta)
    assert gdp_epsilon(mu, delta) == pytest.approx(expected, rel=1e-5, abs=1e-6)
    assert gdp_delta(mu, gdp_epsilon(mu, delta)) == pytest.approx(delta, rel=1e-6)


def test_gdp_epsilon_is_zero_when_the_total_variation_is_within_delta() -> None:
    tv = stats.norm.cdf(0.25) - stats.norm.cdf(-0.25)  # μ = 0.5 at ε = 0
    assert gdp_delta(0.5, 0.0) == pytest.approx(tv)
    assert gdp_epsilon(0.5, tv + 1e-6) == 0.0
    assert gdp_epsilon(0.5, tv - 1e-3) > 0.0
    assert gaussian_mu(0.268) == pytest.approx(math.sqrt(0.536))


def test_mu_from_rates_inverts_the_gaussian_trade_off() -> None:
    """A test of N(0, 1) against N(μ, 1) at threshold t has FPR Φ(−t), FNR Φ(t − μ)."""
    for mu, t in ((0.7, 0.35), (1.7, 0.2), (2.5, 2.0)):
        assert float(gdp_mu_from_rates(stats.norm.sf(t), stats.norm.cdf(t - mu))) == \
            pytest.approx(mu)
    assert float(gdp_mu_from_rates(0.5, 0.5)) == 0.0
    assert float(gdp_mu_from_rates(0.7, 0.6)) == 0.0  # worse than guessing: no evidence


def test_the_bound_at_given_counts_uses_upper_clopper_pearson_bounds_at_half_alpha() -> None:
    scores_in = np.array([1.0] * 70 + [-1.0] * 30)  # tp 70, fn 30 at threshold 0
    scores_out = np.array([1.0] * 20 + [-1.0] * 80)  # fp 20, tn 80
    result = gdp_mu_lower_bound(scores_in, scores_out, alpha=0.1, threshold=0.0, delta=0.1)
    fpr_upper = stats.beta.ppf(0.95, 21, 80)
    fnr_upper = stats.beta.ppf(0.95, 31, 70)
    assert result["counts"] == {"tp": 70, "fn": 30, "fp": 20, "tn": 80}
    assert result["fpr_upper"] == pytest.approx(fpr_upper)
    assert result["mu_lower_bound"] == pytest.approx(
        stats.norm.ppf(1 - fpr_upper) - stats.norm.ppf(fnr_upper))
    assert result["confidence"] == pytest.approx(0.9)
    assert result["eps_gaussian"] == pytest.approx(gdp_epsilon(result["mu_lower_bound"], 0.1))
    # the distribution-free (ε, δ) bound of the same test: ln((1 − δ − FNR_ub)/FPR_ub)
    assert result["eps_lower_bound_dp"] == pytest.approx(
        max(math.log((1 - 0.1 - fnr_upper) / fpr_upper), 0.0))


def test_perfectly_separated_scores_certify_the_cap() -> None:
    """No error among n runs per side: each rate's upper bound is 1 − (α/2)^(1/n), so μ ≥
    2Φ⁻¹((α/2)^(1/n)), which is also what ``max_certifiable`` reports."""
    n, alpha = 50, 0.05
    result = gdp_mu_lower_bound(np.ones(n), np.zeros(n), alpha, threshold=0.5)
    cap = 2 * stats.norm.ppf((alpha / 2) ** (1 / n))
    assert result["mu_lower_bound"] == pytest.approx(cap)
    assert result["max_certifiable"] == pytest.approx(cap)


def _samples(kind: str, n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray, float]:
    """Scores on D' and on D of a mechanism whose least μ is known, and that μ."""
    if kind == "gaussian":
        return rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n), 1.0
    p = math.e / (1 + math.e)  # randomised response at ε₀ = 1: its curve's point (1 − p, 1 − p)
    return ((rng.random(n) < p).astype(float), (rng.random(n) < 1 - p).astype(float),
            2 * stats.norm.ppf(p))


@pytest.mark.parametrize("kind", ["gaussian", "randomised_response"])
def test_the_bound_exceeds_the_true_mu_no_more_often_than_alpha(kind: str) -> None:
    """Over 600 audits of 300 runs per side at α = 0.2 (a level where misses are frequent enough
    to count), the bound exceeds the mechanism's μ in at most α of them (plus 3 binomial
    standard errors). The scores of randomised response are binary, far from Gaussian."""
    rng, alpha, trials = np.random.default_rng(7), 0.2, 600
    misses = 0
    for _ in range(trials):
        s_in, s_out, mu = _samples(kind, 300, rng)
        misses += gdp_mu_lower_bound(s_in, s_out, alpha, threshold=0.5)["mu_lower_bound"] > mu
    assert misses / trials <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / trials)


def test_the_bound_approaches_mu_with_many_runs() -> None:
    rng = np.random.default_rng(3)
    s_in, s_out = rng.normal(1.0, 1.0, 200_000), rng.normal(0.0, 1.0, 200_000)
    fixed = gdp_mu_lower_bound(s_in, s_out, 0.05, threshold=0.5)["mu_lower_bound"]
    assert 0.97 < fixed < 1.0
    selected = gdp_mu_lower_bound(s_in[:40_000], s_out[:40_000], 0.05)
    assert 0.93 < selected["mu_lower_bound"] < 1.0
    assert selected["runs_evaluated"] == {"in": 20_000, "out": 20_000}  # the other half chose


def test_the_bound_is_distribution_free_but_the_estimate_is_not() -> None:
    """A monotone map of the scores (and of the threshold) leaves every test, hence the bound,
    unchanged; the Gaussian estimate moves with it."""
    rng = np.random.default_rng(5)
    s_in, s_out = rng.normal(1.0, 1.0, 5_000), rng.normal(0.0, 1.0, 5_000)
    raw = gdp_mu_lower_bound(s_in, s_out, 0.05, threshold=0.5)
    mapped = gdp_mu_lower_bound(np.exp(3 * s_in), np.exp(3 * s_out), 0.05,
                                threshold=math.exp(1.5))
    assert mapped["mu_lower_bound"] == raw["mu_lower_bound"]
    estimate = gaussian_shift_estimate(s_in, s_out)
    assert estimate["mu_estimate"] == pytest.approx(1.0, abs=0.05)
    assert estimate["mu_estimate_lower"] < estimate["mu_estimate"]
    skewed = gaussian_shift_estimate(np.exp(3 * s_in), np.exp(3 * s_out))["mu_estimate"]
    assert abs(skewed - 1.0) > 0.3


def test_clear_errors() -> None:
    with pytest.raises(ValueError, match="threshold must be finite"):
        gdp_mu_lower_bound(np.ones(3), np.zeros(3), threshold=math.nan)
    with pytest.raises(ValueError, match="alpha must be in"):
        gdp_mu_lower_bound(np.ones(3), np.zeros(3), alpha=1.5)
    with pytest.raises(ValueError, match="at least two finite scores"):
        gdp_mu_lower_bound(np.ones(1), np.zeros(3))
    with pytest.raises(ValueError, match="no spread"):
        gaussian_shift_estimate(np.ones(3), np.ones(3))
    with pytest.raises(ValueError, match="delta must be in"):
        gdp_epsilon(1.0, 0.0)


def test_the_discrete_gaussians_midpoint_mu() -> None:
    """One discrete Gaussian of σ = 1 shifted by one: the ratio is ≥ 0 on D iff Y ≥ 1, so FPR =
    FNR = (1 − P(Y = 0))/2, P(Y = 0) = 1/Σ_k e^(−k²/2), and μ = 2Φ⁻¹(1 − FPR) — above the
    continuous 1/σ. At large σ the composition is the continuous √(Σ 1/σ²)."""
    theta = sum(math.exp(-k * k / 2) for k in range(-40, 41))
    fpr = (1 - 1 / theta) / 2
    assert discrete_gaussian_midpoint_mu([1.0]) == pytest.approx(2 * stats.norm.isf(fpr))
    assert discrete_gaussian_midpoint_mu([1.0]) > 1.04
    assert discrete_gaussian_midpoint_mu([20.0, 30.0, 30.0]) == pytest.approx(
        math.sqrt(1 / 400 + 2 / 900), rel=1e-3)
    with pytest.raises(ValueError, match="positive noise scales"):
        discrete_gaussian_midpoint_mu([])
