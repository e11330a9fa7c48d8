"""Gaussian-DP (μ-GDP) lower bounds from an audit's two score samples.

A mechanism is μ-GDP (Dong, Roth & Su 2022) when every test of D against D' (or D' against D)
with false-positive rate FPR has false-negative rate FNR ≥ G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ). One
test whose rates are bounded above, FPR ≤ p̄ and FNR ≤ q̄, therefore proves the mechanism is not
μ-GDP for any μ < Φ⁻¹(1 − p̄) − Φ⁻¹(q̄) (the f-DP audit of Nasr et al. 2023, "Tight auditing of
differentially private machine learning"). ``gdp_mu_lower_bound`` bounds the rates with one-sided
Clopper–Pearson bounds at α/2 each, so it holds with probability ≥ 1 − α.

**Validity (distribution-free).** The bound holds for any score distribution, given that (i) the
runs are independent draws on D and D', and (ii) the threshold does not depend on the runs that
evaluate it: fixed before the audit (e.g. 0 for a log-likelihood-ratio score), or chosen on a
disjoint random split. G_μ is symmetric, so the same bound covers the test's reverse direction.

Why a fixed threshold at the middle: the error of Φ⁻¹(rate) from n runs is least near rate ½, and
for Gaussian scores of shift μ the two rates' errors sum least at FPR = FNR, the midpoint of the
two means. For the white box's log-likelihood ratio of Gaussian measurements (means ±μ²/2) that
midpoint is 0, known before any run: every run then evaluates, none is spent choosing.

Two readings of the same bound need more than the data, and are labelled so:

* ``gdp_epsilon(μ, δ)``: the ε at δ of the μ-GDP trade-off curve. It is a valid ε lower bound only
  if the mechanism's curve is a Gaussian one (true for a composition of Gaussian mechanisms, the
  white box's measurements; not for every mechanism). The distribution-free (ε, δ) bound of the
  same counts is ``attack_metrics.epsilon_lower_bound`` (``eps_lower_bound_dp`` below).
* ``gaussian_shift_estimate``: the standardised mean difference with a normal-theory lower end,
  an *estimate* valid only if the scores are Gaussian with equal variances on both sides.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

from synthpriv.evaluation.attack_metrics import (
    _candidate_thresholds,
    _counts_at,
    _cp_upper,
    _finite_scores,
    _halves,
    epsilon_lower_bound,
)
from synthpriv.privacy.conversions import gaussian_mu, gdp_delta, gdp_epsilon  # noqa: F401 - re-exported


def _llr_distribution(sigmas: Sequence[float], sign: int) -> tuple[np.ndarray, np.ndarray]:
    """Values and probabilities of Σ_j (2·Y_j + sign)/(2σ_j²), Y_j ~ N_Z(0, σ_j²) independent:
    the log-likelihood ratio of one-count shifts, under D' (sign +1) or D (sign −1). Each pmf
    is cut at |k| ≤ 12σ + 2 (the mass beyond is below e⁻⁷²) and atoms below 1e-16 dropped."""
    values, probs = np.zeros(1), np.ones(1)
    for sigma in sigmas:
        k = np.arange(-math.ceil(12 * sigma) - 2, math.ceil(12 * sigma) + 3)
        pmf = np.exp(-k.astype(float) ** 2 / (2 * sigma * sigma))
        pmf /= pmf.sum()
        summed = np.round((values[:, None] + (2 * k + sign) / (2 * sigma * sigma)).ravel(), 9)
        values, inverse = np.unique(summed, return_inverse=True)
        probs = np.bincount(inverse, (probs[:, None] * pmf[None, :]).ravel())
        keep = probs > 1e-16
        values, probs = values[keep], probs[keep]
    return values, probs


def discrete_gaussian_midpoint_mu(sigmas: Sequence[float]) -> float:
    """The exact μ of the test "log-likelihood ratio ≥ 0" (``gdp_mu_from_rates`` of its rates)
    between compositions of discrete Gaussians N_Z(0, σ_j²) and N_Z(1, σ_j²): what a white box
    that reads these measurements (one count moved by one in each: add/remove) approaches at
    threshold 0. For continuous Gaussians it is √(Σ 1/σ_j²) = √(2ρ); discrete ones give slightly
    more at small σ (σ = 1: 1.046): the discrete Gaussian is 1/(2σ²)-zCDP like the continuous
    one, but its trade-off curve is not exactly G_{1/σ}."""
    if not sigmas or min(sigmas) <= 0:
        raise ValueError(f"need positive noise scales, got {list(sigmas)}")
    on_d, p_d = _llr_distribution(sigmas, -1)
    on_d1, p_d1 = _llr_distribution(sigmas, +1)
    return float(gdp_mu_from_rates(p_d[on_d >= 0].sum(), p_d1[on_d1 < 0].sum()))


def gdp_mu_from_rates(fpr: np.ndarray | float, fnr: np.ndarray | float) -> np.ndarray:
    """The least μ whose trade-off curve allows a test with these rates:
    Φ⁻¹(1 − FPR) − Φ⁻¹(FNR), floored at 0 (μ = 0 allows FPR + FNR ≥ 1)."""
    with np.errstate(invalid="ignore", divide="ignore"):
        mu = stats.norm.isf(np.asarray(fpr, float)) - stats.norm.ppf(np.asarray(fnr, float))
    return np.maximum(np.nan_to_num(mu, nan=0.0), 0.0)


def _mu_bounds(tp, fn, fp, tn, alpha: float) -> np.ndarray:
    """μ lower bounds of the tests with these counts: each rate's upper bound at level α/2."""
    tp, fn, fp, tn = (np.asarray(x, float) for x in (tp, fn, fp, tn))
    return gdp_mu_from_rates(_cp_upper(fp, fp + tn, alpha / 2), _cp_upper(fn, fn + tp, alpha / 2))


def gdp_mu_lower_bound(
    scores_in: np.ndarray,
    scores_out: np.ndarray,
    alpha: float = 0.05,
    threshold: float | None = None,
    delta: float | None = None,
    rng: np.random.Generator | None = None,
    selection_fraction: float = 0.5,
) -> dict:
    """A lower bound on μ, valid with probability ≥ 1 − α for any scores (see the module).

    ``threshold``: the test "D' iff score ≥ threshold", fixed before the scores were drawn (then
    every run evaluates it). None: the threshold whose bound is largest on a random
    ``selection_fraction`` of each side (``rng``, default seed 0) is evaluated on the rest.
    With ``delta``, also reports ``eps_gaussian`` (``gdp_epsilon`` of the bound: valid if the
    mechanism's curve is Gaussian) and ``eps_lower_bound_dp`` (the distribution-free (ε, δ)
    bound of the same counts, at the same confidence).
    """
    scores_in = _finite_scores(scores_in, "scores_in")
    scores_out = _finite_scores(scores_out, "scores_out")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    ev_in, ev_out = np.arange(scores_in.size), np.arange(scores_out.size)
    if threshold is None:
        if not 0 < selection_fraction < 1:
            raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
        rng = np.random.default_rng(0) if rng is None else rng
        sel_in, ev_in = _halves(scores_in.size, rng, selection_fraction)
        sel_out, ev_out = _halves(scores_out.size, rng, selection_fraction)
        candidates = _candidate_thresholds(np.concatenate([scores_in[sel_in],
                                                           scores_out[sel_out]]))
        selected = _mu_bounds(*_counts_at(scores_in[sel_in], scores_out[sel_out], candidates),
                              alpha)
        threshold = float(candidates[int(np.argmax(selected))])
    elif not math.isfinite(threshold):
        raise ValueError(f"threshold must be finite, got {threshold}")
    counts = [int(c[0]) for c in _counts_at(scores_in[ev_in], scores_out[ev_out],
                                            np.array([threshold]))]
    tp, fn, fp, tn = counts
    result = {
        "mu_lower_bound": float(_mu_bounds(tp, fn, fp, tn, alpha)),
        "threshold": float(threshold),
        "counts": dict(zip(("tp", "fn", "fp", "tn"), counts, strict=True)),
        "fpr_upper": float(_cp_upper(fp, fp + tn, alpha / 2)),
        "fnr_upper": float(_cp_upper(fn, fn + tp, alpha / 2)),
        "max_certifiable": float(_mu_bounds(tp + fn, 0, 0, fp + tn, alpha)),
        "runs_evaluated": {"in": tp + fn, "out": fp + tn},
        "alpha": float(alpha),
        "confidence": 1 - float(alpha),
    }
    if delta is not None:
        result["eps_gaussian"] = gdp_epsilon(result["mu_lower_bound"], delta)
        result["eps_lower_bound_dp"] = epsilon_lower_bound(tp, fn, fp, tn, delta, alpha / 2)
        result["delta"] = float(delta)
    return result


def gaussian_shift_estimate(
    scores_in: np.ndarray, scores_out: np.ndarray, alpha: float = 0.05
) -> dict:
    """ESTIMATE, not a bound: (mean_in − mean_out)/pooled sd and its normal-theory lower end at
    1 − α (standard error √(1/n₁ + 1/n₀ + d²/(2(n₁ + n₀))), Hedges & Olkin 1985). It is a lower
    confidence bound on μ only if both samples are Gaussian with one variance; use
    ``gdp_mu_lower_bound`` for a statement that needs no such assumption."""
    s_in = _finite_scores(scores_in, "scores_in")
    s_out = _finite_scores(scores_out, "scores_out")
    n1, n0 = s_in.size, s_out.size
    pooled = math.sqrt(((n1 - 1) * s_in.var(ddof=1) + (n0 - 1) * s_out.var(ddof=1)) / (n1 + n0 - 2))
    if pooled == 0:
        raise ValueError("the scores have no spread: a Gaussian shift is undefined")
    d = float((s_in.mean() - s_out.mean()) / pooled)
    se = math.sqrt(1 / n1 + 1 / n0 + d * d / (2 * (n1 + n0)))
    return {"mu_estimate": d, "mu_estimate_lower": d - float(stats.norm.isf(alpha)) * se,
            "standard_error": se, "assumption": "Gaussian scores, equal variances"}
