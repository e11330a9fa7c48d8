"""Metrics of membership-inference attacks and the empirical ε lower bound they imply.

An attack gives every target a score, higher meaning "member". From the scores of members and
non-members we report what the recent literature asks for (Carlini et al. 2022, "Membership
inference attacks from first principles"): the AUC, the TPR at low FPRs, the membership advantage
(max TPR − FPR, Yeom et al. 2018), bootstrap confidence intervals, the ROC curve, and a lower bound
on ε that holds with high confidence (Jagielski et al. 2020, Nasr et al. 2021).

A DP mechanism with parameters (ε, δ) forces every membership test to satisfy
TPR ≤ e^ε·FPR + δ and TNR ≤ e^ε·FNR + δ. An observed test with TPR far above FPR therefore proves
that ε is at least ln((TPR − δ)/FPR); with Clopper–Pearson bounds on the rates, the proof holds with
probability at least 1 − 2α. The bound is a statement about the attack, not about the mechanism: a
weak attack gives a small bound on a leaky mechanism.

The same functions audit our own mechanisms: run the mechanism on neighbouring inputs, score the
outputs, and compare ``empirical_epsilon`` with the ε the ledger claims.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from scipy import stats

MAX_THRESHOLDS = 2000
MAX_ROC_POINTS = 200


def _cp_lower(successes: np.ndarray, trials: np.ndarray, alpha: float) -> np.ndarray:
    """One-sided lower Clopper–Pearson bound at level alpha (0 when there is no success)."""
    k, n = np.asarray(successes, float), np.asarray(trials, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = stats.beta.ppf(alpha, k, n - k + 1)
    return np.where(k > 0, bound, 0.0)


def _cp_upper(successes: np.ndarray, trials: np.ndarray, alpha: float) -> np.ndarray:
    """One-sided upper Clopper–Pearson bound at level alpha (1 when every trial succeeded)."""
    k, n = np.asarray(successes, float), np.asarray(trials, float)
    with np.errstate(invalid="ignore", divide="ignore"):
        bound = stats.beta.ppf(1 - alpha, k + 1, n - k)
    return np.where(k < n, bound, 1.0)


def clopper_pearson(successes: int, trials: int, alpha: float) -> tuple[float, float]:
    """Exact binomial bounds (lower, upper) on a success rate, each one-sided at level alpha.

    P(rate < lower) ≤ alpha and P(rate > upper) ≤ alpha separately; together they form a
    two-sided interval at level 1 − 2α.
    """
    if trials <= 0 or not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials and trials > 0, got {successes}/{trials}")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    return float(_cp_lower(successes, trials, alpha)), float(_cp_upper(successes, trials, alpha))


def _log_ratio(numerator: np.ndarray, denominator: np.ndarray) -> np.ndarray:
    """ln(numerator/denominator), −inf where the numerator is not positive."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(numerator > 0, np.log(np.maximum(numerator, 1e-300) / denominator), -np.inf)


def _epsilon_bounds(tp, fn, fp, tn, delta: float, alpha: float) -> np.ndarray:
    """Vectorised ``epsilon_lower_bound`` over arrays of confusion counts."""
    tp, fn, fp, tn = (np.asarray(x, float) for x in (tp, fn, fp, tn))
    positives, negatives = tp + fn, fp + tn
    tpr_lb, fpr_ub = _cp_lower(tp, positives, alpha), _cp_upper(fp, negatives, alpha)
    tnr_lb, fnr_ub = _cp_lower(tn, negatives, alpha), _cp_upper(fn, positives, alpha)
    eps = np.maximum(_log_ratio(tpr_lb - delta, fpr_ub), _log_ratio(tnr_lb - delta, fnr_ub))
    return np.maximum(eps, 0.0)


def epsilon_lower_bound(
    tp: int, fn: int, fp: int, tn: int, delta: float, alpha: float = 0.05
) -> float:
    """Empirical ε lower bound of a membership test at one threshold: max of
    ln((TPR_lb - δ)/FPR_ub) and ln((TNR_lb - δ)/FNR_ub) (both directions of the DP inequality), with
    one-sided Clopper–Pearson bounds at level alpha; 0 when not positive. (Jagielski et al. 2020,
    Nasr et al. 2021)

    TNR_lb = 1 − FPR_ub and FNR_ub = 1 − TPR_lb, so both directions rest on the same two events and
    the maximum holds with probability ≥ 1 − 2α.
    """
    if min(tp, fn, fp, tn) < 0 or tp + fn == 0 or fp + tn == 0:
        raise ValueError("need non-negative counts with at least one member and one non-member")
    if not 0 <= delta < 1:
        raise ValueError(f"delta must be in [0, 1), got {delta}")
    return float(_epsilon_bounds(tp, fn, fp, tn, delta, alpha))


def _counts_at(scores_in: np.ndarray, scores_out: np.ndarray, thresholds: np.ndarray):
    """(tp, fn, fp, tn) of the test 'member iff score >= threshold' at each threshold."""
    s_in, s_out = np.sort(scores_in), np.sort(scores_out)
    tp = s_in.size - np.searchsorted(s_in, thresholds, side="left")
    fp = s_out.size - np.searchsorted(s_out, thresholds, side="left")
    return tp, s_in.size - tp, fp, s_out.size - fp


def _candidate_thresholds(scores: np.ndarray, max_thresholds: int = MAX_THRESHOLDS) -> np.ndarray:
    """Distinct scores, thinned to at most ``max_thresholds`` evenly spaced in rank."""
    unique = np.unique(scores)
    if unique.size <= max_thresholds:
        return unique
    return unique[np.linspace(0, unique.size - 1, max_thresholds).round().astype(int)]


def _halves(
    n: int, rng: np.random.Generator, fraction: float = 0.5
) -> tuple[np.ndarray, np.ndarray]:
    """A random split of range(n): the first ``fraction`` (at least one), then the rest."""
    perm = rng.permutation(n)
    k = min(max(int(n * fraction), 1), n - 1)
    return perm[:k], perm[k:]


def _finite_scores(scores: np.ndarray, name: str) -> np.ndarray:
    scores = np.asarray(scores, dtype=float).ravel()
    if scores.size < 2 or not np.all(np.isfinite(scores)):
        raise ValueError(f"{name} needs at least two finite scores")
    return scores


def empirical_epsilon(
    scores_in: np.ndarray,
    scores_out: np.ndarray,
    delta: float,
    alpha: float = 0.05,
    rng: np.random.Generator | None = None,
    selection_fraction: float = 0.5,
) -> dict:
    """Choose the threshold on one half of the scores (maximising the point estimate), evaluate the
    bound on the other half (so the threshold is chosen on separate data). Returns eps_lower_bound,
    threshold, counts. ``selection_fraction`` < ½ keeps more runs for the bound; the threshold is
    still the one whose Clopper–Pearson bound on the selection part is largest (scaling that
    part's counts up to the evaluation's size would trust its empty tails too much: a threshold
    with no false positive among few runs often has some among many).

    The "point estimate" maximised on the selection half is the Clopper–Pearson bound itself:
    the raw ratio ln(TPR/FPR) is infinite at every tail threshold with no false positive, so it
    would always pick a threshold that certifies nothing. Halves are drawn separately from
    members and non-members with ``rng`` (default: seed 0, so the result is reproducible).

    The sample size caps the bound: a perfect attack on n held-out scores per class certifies
    only about ln(n / ln(1/α)); ``max_certifiable`` reports that cap for these sizes.
    """
    scores_in = _finite_scores(scores_in, "scores_in")
    scores_out = _finite_scores(scores_out, "scores_out")
    rng = np.random.default_rng(0) if rng is None else rng
    if not 0 < selection_fraction < 1:
        raise ValueError(f"selection_fraction must be in (0, 1), got {selection_fraction}")
    sel_in, ev_in = _halves(scores_in.size, rng, selection_fraction)
    sel_out, ev_out = _halves(scores_out.size, rng, selection_fraction)

    thresholds = _candidate_thresholds(np.concatenate([scores_in[sel_in], scores_out[sel_out]]))
    selection = _epsilon_bounds(
        *_counts_at(scores_in[sel_in], scores_out[sel_out], thresholds), delta, alpha
    )
    best = int(np.argmax(selection))
    threshold = float(thresholds[best])
    tp, fn, fp, tn = (
        int(c[0]) for c in _counts_at(scores_in[ev_in], scores_out[ev_out], np.array([threshold]))
    )
    return {
        "eps_lower_bound": epsilon_lower_bound(tp, fn, fp, tn, delta, alpha),
        "threshold": threshold,
        "counts": {"tp": tp, "fn": fn, "fp": fp, "tn": tn},
        "selection_eps_lower_bound": float(selection[best]),
        "max_certifiable": epsilon_lower_bound(ev_in.size, 0, 0, ev_out.size, delta, alpha),
        "delta": float(delta),
        "alpha": float(alpha),
        "confidence": 1 - 2 * float(alpha),
    }


def auc(scores_members: np.ndarray, scores_non_members: np.ndarray) -> float:
    """Area under the ROC curve = P(member score > non-member score) + ½ P(tie) (Mann–Whitney).

    Counted exactly: per member, the non-members strictly below its score plus those at most
    its score, halved, from one sort of the non-members (the bootstraps call this thousands of
    times; ranking the pooled scores cost about ten times as much on small samples)."""
    s_in = np.asarray(scores_members, float)
    s_out = np.sort(np.asarray(scores_non_members, float))
    below = np.searchsorted(s_out, s_in, side="left").sum()
    at_most = np.searchsorted(s_out, s_in, side="right").sum()
    return float((below + at_most) / (2 * s_in.size * s_out.size))


def auc_standard_error(auc_value: float, n_members: int, n_non_members: int) -> float:
    """Hanley & McNeil (1982) standard error of an AUC estimate; (n1+n0+1)/(12 n1 n0) at AUC ½."""
    a, n1, n0 = auc_value, n_members, n_non_members
    q1, q2 = a / (2 - a), 2 * a * a / (1 + a)
    var = (a * (1 - a) + (n1 - 1) * (q1 - a * a) + (n0 - 1) * (q2 - a * a)) / (n1 * n0)
    return float(np.sqrt(max(var, 0.0)))


def roc_curve(
    scores_members: np.ndarray, scores_non_members: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(fpr, tpr, thresholds) of 'member iff score >= threshold', from (0, 0) to (1, 1).

    Tied scores form one step, so every point is reachable by a threshold.
    """
    s_in, s_out = np.asarray(scores_members, float), np.asarray(scores_non_members, float)
    thresholds = np.unique(np.concatenate([s_in, s_out]))[::-1]
    tp, _, fp, _ = _counts_at(s_in, s_out, thresholds)
    fpr = np.concatenate([[0.0], fp / s_out.size])
    tpr = np.concatenate([[0.0], tp / s_in.size])
    return fpr, tpr, np.concatenate([[np.inf], thresholds])


def tpr_at_fpr(fpr: np.ndarray, tpr: np.ndarray, target_fpr: float) -> float:
    """Largest TPR over thresholds whose FPR does not exceed ``target_fpr`` (no interpolation)."""
    return float(tpr[fpr <= target_fpr + 1e-12].max())


def _downsample_roc(fpr: np.ndarray, tpr: np.ndarray, max_points: int = MAX_ROC_POINTS):
    """At most ``max_points`` ROC points: half even in rank, half log-spaced in FPR, for the
    linear and the log-scale plots; both ends kept."""
    if fpr.size <= max_points:
        return fpr, tpr
    even = np.linspace(0, fpr.size - 1, max_points // 2).round().astype(int)
    positive = fpr[fpr > 0]
    targets = np.geomspace(positive.min(), 1.0, max_points - max_points // 2 - 2)
    logspaced = np.searchsorted(fpr, targets, side="right") - 1
    keep = np.unique(np.concatenate([[0, fpr.size - 1], even, logspaced]))
    return fpr[keep], tpr[keep]


def _summaries(s_in: np.ndarray, s_out: np.ndarray, fprs: Sequence[float]) -> np.ndarray:
    """[AUC, TPR at each FPR] for one sample of scores."""
    fpr, tpr, _ = roc_curve(s_in, s_out)
    return np.array([auc(s_in, s_out)] + [tpr_at_fpr(fpr, tpr, f) for f in fprs])


def _bootstrap_cis(s_in, s_out, fprs, bootstrap: int, rng: np.random.Generator) -> np.ndarray:
    """Percentile 95% intervals, resampling members and non-members separately."""
    draws = np.array(
        [
            _summaries(
                s_in[rng.integers(0, s_in.size, s_in.size)],
                s_out[rng.integers(0, s_out.size, s_out.size)],
                fprs,
            )
            for _ in range(bootstrap)
        ]
    )
    return np.percentile(draws, [2.5, 97.5], axis=0).T


def attack_metrics(
    scores_members: np.ndarray,
    scores_non_members: np.ndarray,
    *,
    delta: float,
    fprs: Sequence[float] = (0.1, 0.01, 0.001),
    bootstrap: int = 200,
    seed: int = 0,
    alpha: float = 0.05,
) -> dict:
    """AUC, TPR at each FPR, membership advantage (max TPR - FPR), bootstrap 95% CIs of AUC and
    TPRs, ROC curve points (downsampled to ≤ 200 points, for plotting), and the empirical ε lower
    bound. Higher score = 'member'.

    TPR at an FPR below 1/n_non_members can only be measured as 'no false positive at all'; the
    result carries ``min_resolvable_fpr`` so a reader can tell. ``bootstrap=0`` skips the CIs.
    ``alpha`` is the one-sided level of the ε bound's Clopper–Pearson bounds (lower it, e.g.
    Bonferroni, when taking the worst case over many targets).
    """
    s_in = _finite_scores(scores_members, "scores_members")
    s_out = _finite_scores(scores_non_members, "scores_non_members")
    fprs = tuple(float(f) for f in fprs)
    rng = np.random.default_rng(seed)
    fpr, tpr, _ = roc_curve(s_in, s_out)
    point = _summaries(s_in, s_out, fprs)
    cis = _bootstrap_cis(s_in, s_out, fprs, bootstrap, rng) if bootstrap > 0 else None
    roc_fpr, roc_tpr = _downsample_roc(fpr, tpr)

    def ci(i: int) -> list[float] | None:
        return None if cis is None else [float(cis[i, 0]), float(cis[i, 1])]

    return {
        "n_members": int(s_in.size),
        "n_non_members": int(s_out.size),
        "auc": float(point[0]),
        "auc_ci": ci(0),
        "auc_se": auc_standard_error(point[0], s_in.size, s_out.size),
        "tpr_at_fpr": {f: float(point[i + 1]) for i, f in enumerate(fprs)},
        "tpr_at_fpr_ci": {f: ci(i + 1) for i, f in enumerate(fprs)},
        "min_resolvable_fpr": 1.0 / s_out.size,
        "advantage": float(np.max(tpr - fpr)),
        "roc": {"fpr": roc_fpr.tolist(), "tpr": roc_tpr.tolist()},
        "empirical_epsilon": empirical_epsilon(s_in, s_out, delta, alpha=alpha, rng=rng),
    }
