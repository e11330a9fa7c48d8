"""Calibrate the domain step: DP bounds and DP category discovery from one zCDP ρ and a δ.

The step measures one histogram per column it resolves (public buckets for bounds, present
values for categories), each of L2 sensitivity Δ₂ (1 under add/remove, √2 under replace-one:
each row is in one bucket/value per column). k such histograms with noise σ = z·Δ₂ each cost
k/(2z²) zCDP, so z = √(k/(2ρ)). Category discovery adds, per column, the δ of its threshold
(synthpriv.privacy.partition), which the plan splits out of the job's δ.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from synthpriv.privacy.accountant import DiscreteGaussianEvent, PrivacyEvent, ThresholdEvent
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.partition import selection_threshold


@dataclass
class DomainNoise:
    """The step's calibrated noise: multiplier z, σ = z·Δ₂ per bucket/value count, the
    discovery threshold and its δ per column, and the events the step will record."""

    multiplier: float
    sigma: float
    threshold: int | None
    delta_per_column: float
    events: list[PrivacyEvent] = field(default_factory=list)


def plan_domain_noise(
    rho: float, bounds: list[str], categories: list[str], delta: float, neighbouring: str,
    epsilon: float,
) -> DomainNoise:
    """Noise for DP bounds of the columns ``bounds`` and DP categories of ``categories`` from
    zCDP ``rho``; the discovery thresholds spend at most ``delta`` in all (split equally), under
    the job's target ``epsilon`` (replace-one's δ depends on it)."""
    histograms = len(bounds) + len(categories)
    if rho <= 0 or histograms == 0:
        raise ValueError("the domain step needs ρ > 0 and at least one column")
    multiplier = math.sqrt(histograms / (2.0 * rho))
    sigma = multiplier * histogram_l2_sensitivity(neighbouring)
    parts = [f"bounds (bucket histograms) of {', '.join(bounds)}"] * bool(bounds) + [
        f"categories (value counts) of {', '.join(categories)}"] * bool(categories)
    # one event for all the histograms (one noise): the PLD accountant composes it once
    events: list[PrivacyEvent] = [
        DiscreteGaussianEvent(multiplier, histograms, label="DP domain: " + "; ".join(parts))]
    threshold, per_column = None, 0.0
    if categories:
        threshold, per_column = selection_threshold(
            sigma, delta / len(categories), neighbouring, epsilon)
        events += [ThresholdEvent(per_column, label=f"category threshold: {name}")
                   for name in categories]
    return DomainNoise(multiplier, sigma, threshold, per_column, events)


ONE_WAY_SHARE = 1 / 3  # MST's first third: the 1-way marginals of all d columns (McKenna et al.)


def domain_share(histograms: int, columns: int) -> float:
    """The domain step's share of the job's ρ when ``budget.domain_share`` is not given: the share
    that gives each of its ``histograms`` (one per column it resolves) the noise of a 1-way
    marginal measured with a third of the budget split over the ``columns`` (MST's 1-way round).

    With f = 1/(3d), ρ_domain = s·ρ and the recipe's (1 − s)·ρ, equal noise means
    s·ρ / k = f·(1 − s)·ρ, so s = k·f / (1 + k·f): 0.25 when every column is resolved, less when
    the schema gives some domains. Why that noise: the step counts the same columns one at a time
    as a recipe's 1-way round does, and a category it drops is lost for good, so its counts should
    be no noisier than the 1-way marginals MST measures; AIM measures its first 1-way marginals
    far noisier (one of 16·d rounds each), and matching those kept almost nothing on small tables
    (benchmarks/README.md, "The domain step's share"; chosen on Adult's first 2,000 rows, a
    development-suite table). The threshold then scales as 1/√ρ (ε); it
    cannot follow n̂, which is not known when the plan splits the budget. Public: k, d only."""
    if histograms <= 0 or columns <= 0:
        raise ValueError("the domain share needs at least one column")
    weight = histograms * ONE_WAY_SHARE / columns
    return weight / (1.0 + weight)
