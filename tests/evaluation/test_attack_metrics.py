"""Membership-attack metrics and the empirical ε lower bound, against independent computations."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import optimize, stats

from synthpriv.evaluation.attack_metrics import (
    attack_metrics,
    auc,
    auc_standard_error,
    clopper_pearson,
    empirical_epsilon,
    epsilon_lower_bound,
)


def gdp_epsilon(mu: float, delta: float) -> float:
    """ε of a μ-GDP mechanism at δ: the root of Φ(−ε/μ + μ/2) − e^ε Φ(−ε/μ − μ/2) = δ."""

    def gap(eps: float) -> float:
        return (
            stats.norm.cdf(-eps / mu + mu / 2)
            - math.exp(eps) * stats.norm.cdf(-eps / mu - mu / 2)
            - delta
        )

    return optimize.brentq(gap, 0.0, 100.0)


def test_clopper_pearson_matches_beta_quantiles_and_edge_formulas():
    lo, hi = clopper_pearson(30, 100, 0.05)
    assert lo == pytest.approx(stats.beta.ppf(0.05, 30, 71), rel=1e-12)
    assert hi == pytest.approx(stats.beta.ppf(0.95, 31, 70), rel=1e-12)
    # closed forms at the edges: upper(0 of n) = 1 − α^(1/n), lower(n of n) = α^(1/n)
    assert clopper_pearson(0, 50, 0.05) == (0.0, pytest.approx(1 - 0.05 ** (1 / 50)))
    assert clopper_pearson(50, 50, 0.05) == (pytest.approx(0.05 ** (1 / 50)), 1.0)
    with pytest.raises(ValueError):
        clopper_pearson(5, 3, 0.05)


def test_epsilon_lower_bound_hand_computed_symmetric_case():
    delta, alpha = 1e-5, 0.05
    tpr_lb = stats.beta.ppf(alpha, 900, 101)  # 900 of 1000 members flagged
    fpr_ub = stats.beta.ppf(1 - alpha, 101, 900)  # 100 of 1000 non-members flagged
    expected = math.log((tpr_lb - delta) / fpr_ub)
    assert 2.0 < expected < math.log(0.9 / 0.1)  # below the point estimate ln(TPR/FPR)
    assert epsilon_lower_bound(900, 100, 100, 900, delta, alpha) == pytest.approx(
        expected, rel=1e-9
    )


def test_epsilon_lower_bound_uses_the_other_direction_when_it_is_stronger():
    # 990/1000 members above the threshold but also 500/1000 non-members: the first direction
    # gives ln(~1.9); the complement (TNR 0.5 vs FNR 0.01) gives far more.
    delta, alpha = 1e-5, 0.05
    first = math.log((stats.beta.ppf(alpha, 990, 11) - delta) / stats.beta.ppf(1 - alpha, 501, 500))
    second = math.log(
        (stats.beta.ppf(alpha, 500, 501) - delta) / stats.beta.ppf(1 - alpha, 11, 990)
    )
    assert second > first + 1
    assert epsilon_lower_bound(990, 10, 500, 500, delta, alpha) == pytest.approx(second, rel=1e-9)


def test_epsilon_lower_bound_is_zero_without_signal_and_rejects_bad_counts():
    assert epsilon_lower_bound(500, 500, 500, 500, 1e-5) == 0.0
    assert epsilon_lower_bound(0, 1000, 0, 1000, 1e-5) == 0.0
    with pytest.raises(ValueError):
        epsilon_lower_bound(-1, 10, 10, 10, 1e-5)


def test_empirical_epsilon_on_gaussian_scores_is_a_valid_nontrivial_bound():
    mu, delta, n = 1.0, 1e-5, 50_000
    rng = np.random.default_rng(0)
    result = empirical_epsilon(
        rng.normal(mu, 1, n), rng.normal(0, 1, n), delta, rng=np.random.default_rng(1)
    )
    true_eps = gdp_epsilon(mu, delta)  # ≈ 4.38: no threshold test can certify more
    assert 1.0 < result["eps_lower_bound"] <= true_eps
    counts = result["counts"]
    # evaluated on the held-out half only
    assert counts["tp"] + counts["fn"] == n - n // 2
    assert counts["fp"] + counts["tn"] == n - n // 2
    assert result["eps_lower_bound"] == pytest.approx(
        epsilon_lower_bound(**counts, delta=delta, alpha=0.05)
    )


def test_empirical_epsilon_is_zero_for_identical_distributions():
    rng = np.random.default_rng(2)
    bounds = [
        empirical_epsilon(rng.normal(size=20_000), rng.normal(size=20_000), 1e-5, rng=rng)[
            "eps_lower_bound"
        ]
        for _ in range(3)
    ]
    assert max(bounds) <= 0.05


def test_empirical_epsilon_false_certificates_stay_below_two_alpha():
    # With identical distributions the true ε is 0, so any positive bound is a false certificate;
    # the guarantee is P(false certificate) ≤ 2α. Choosing the threshold on the evaluated scores
    # themselves would break it (about 45% here, from trying ~1000 thresholds).
    alpha, trials = 0.1, 200
    rng = np.random.default_rng(8)
    false = sum(
        empirical_epsilon(rng.normal(size=1000), rng.normal(size=1000), 0.0, alpha, rng=rng)[
            "eps_lower_bound"
        ]
        > 0
        for _ in range(trials)
    )
    assert false / trials <= 2 * alpha


def test_attack_metrics_perfect_separation():
    m = attack_metrics(np.arange(100, 200.0), np.arange(100.0), delta=1e-5, bootstrap=20)
    assert m["auc"] == 1.0
    assert m["advantage"] == 1.0
    assert all(v == 1.0 for v in m["tpr_at_fpr"].values())
    assert m["auc_ci"] == [1.0, 1.0]
    eps = m["empirical_epsilon"]
    # a perfect test on 50 held-out scores per class certifies about the sample-size cap (the
    # threshold, a score from the selection half, may leave one held-out member below it)
    assert eps["max_certifiable"] - 0.1 < eps["eps_lower_bound"] <= eps["max_certifiable"]
    cap = math.log((0.05 ** (1 / 50) - 1e-5) / (1 - 0.05 ** (1 / 50)))
    assert eps["max_certifiable"] == pytest.approx(cap)


def test_attack_metrics_identical_distributions_auc_half_within_three_standard_errors():
    rng = np.random.default_rng(3)
    n1, n0 = 3000, 2000
    m = attack_metrics(rng.normal(size=n1), rng.normal(size=n0), delta=1e-5, seed=4)
    se_null = math.sqrt((n1 + n0 + 1) / (12 * n1 * n0))
    assert abs(m["auc"] - 0.5) < 3 * se_null
    assert m["auc_se"] == pytest.approx(se_null, rel=0.01)
    lo, hi = m["auc_ci"]
    assert lo < 0.5 < hi
    # a percentile bootstrap interval should be about ±1.96 standard errors wide
    assert 0.75 < (hi - lo) / (2 * 1.96 * se_null) < 1.3
    assert m["advantage"] < 4 * math.sqrt(1 / n1 + 1 / n0)
    assert m["empirical_epsilon"]["eps_lower_bound"] == 0.0


def test_attack_metrics_binormal_auc_and_tpr_at_fpr_match_theory():
    mu, n = 1.0, 4000
    rng = np.random.default_rng(5)
    m = attack_metrics(rng.normal(mu, 1, n), rng.normal(0, 1, n), delta=1e-5, bootstrap=50)
    true_auc = stats.norm.cdf(mu / math.sqrt(2))
    assert abs(m["auc"] - true_auc) < 3 * auc_standard_error(true_auc, n, n)
    for fpr in (0.1, 0.01):
        z = stats.norm.ppf(1 - fpr)
        tpr = stats.norm.cdf(mu - z)
        slope = stats.norm.pdf(z - mu) / stats.norm.pdf(z)  # ROC slope at this FPR
        se = math.sqrt(tpr * (1 - tpr) / n + slope**2 * fpr * (1 - fpr) / n)
        assert abs(m["tpr_at_fpr"][fpr] - tpr) < 4 * se
        lo, hi = m["tpr_at_fpr_ci"][fpr]
        assert lo <= m["tpr_at_fpr"][fpr] <= hi


def test_roc_points_are_downsampled_monotone_and_span_the_square():
    rng = np.random.default_rng(6)
    m = attack_metrics(rng.normal(0.5, 1, 5000), rng.normal(0, 1, 5000), delta=1e-5, bootstrap=0)
    fpr, tpr = np.array(m["roc"]["fpr"]), np.array(m["roc"]["tpr"])
    assert len(fpr) <= 200
    assert (fpr[0], tpr[0]) == (0.0, 0.0) and (fpr[-1], tpr[-1]) == (1.0, 1.0)
    assert np.all(np.diff(fpr) >= 0) and np.all(np.diff(tpr) >= 0)
    assert fpr[1] < 1e-3  # the low-FPR region is kept for log-scale plots
    assert m["auc_ci"] is None


def test_auc_counts_ties_as_half():
    assert auc(np.array([1.0, 1.0]), np.array([1.0, 1.0])) == 0.5
    assert auc(np.array([2.0, 1.0]), np.array([1.0, 0.0])) == pytest.approx(0.875)


def test_auc_is_the_pairwise_mann_whitney_count():
    """Against its definition, every (member, non-member) pair counted: 1 if the member scores
    higher, ½ on a tie; with many ties (integer scores) and unequal sizes."""
    rng = np.random.default_rng(16)
    for n_in, n_out in ((1, 1), (3, 7), (40, 25), (200, 301)):
        s_in, s_out = rng.integers(0, 6, n_in).astype(float), rng.integers(0, 6, n_out).astype(float)
        pairs = (s_in[:, None] > s_out[None, :]) + 0.5 * (s_in[:, None] == s_out[None, :])
        assert auc(s_in, s_out) == pytest.approx(pairs.mean(), abs=1e-12)
        assert auc(s_out, s_in) == pytest.approx(1 - pairs.mean(), abs=1e-12)
