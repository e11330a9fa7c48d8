"""Calibrate the domain step: DP bounds and DP category discovery from one zCDP ρ and a δ.

The step measures one histogram per column it resolves (public buckets for bounds, present
values for categories), each of L2 sensitivity Δ₂ (1 under add/remove, √2 under replace-one:
each row is in one bucket/value per column). k such histograms with noise σ = z·Δ₂ each cost
k/(2z²) zCDP, so z = √(k/(2ρ)). Category discovery adds, per column, the δ of its threshold
(synthpriv.privacy.partition), which the plan splits out of the job's δ.

A column of kind ``auto`` adds ``KIND_STATISTICS`` = 2 statistics (synthpriv.kinds), each at
``KIND_NOISE_FACTOR`` times the noise: the histogram of its cell classes (sensitivity Δ₂, each
cell in one class, a function of its own text: the fractions' decimals classes that decide a
continuous column's precision add classes, not ρ) and its count of singletons (text cells whose
value occurs once; sensitivity ``singleton_sensitivity``: 1 under add/remove, 2 under
replace-one). A kind needs shares, not counts, so each costs 1/KIND_NOISE_FACTOR² of a domain
histogram. With k_a such columns, ρ = (k + 2·k_a/F²)/(2z²). Each auto column then needs a domain
histogram too (bounds or categories, whichever kind it is decided; none when it is decided text
or id: its weight then goes to the columns decided categorical, see "Reallocation" below): it
counts among the k, and among the columns whose discovery threshold takes a share of δ (it may
be decided categorical). A person-level bound k (several rows per person) multiplies
``histogram_l2_sensitivity`` and ``singleton_sensitivity``: those two functions are the one
place to change.

Heap discovery. Each auto column and each numeric column whose bounds are bought (not date or
datetime: ``heaps``) adds one histogram of its exact values (sensitivity Δ₂, each row in one
value) at ``HEAP_NOISE_FACTOR`` times the noise, thresholded by partition selection at that σ:
the kept values become the column's ``point_masses`` (synthpriv.domain_stage). A heap worth a
cell of its own holds ≥ ~5 % of the rows, so coarser noise suffices: each costs 1/F² of a domain
histogram, ρ = (k + 2·k_a/F_K² + h/F²)/(2z²), and its threshold takes an equal share of the same
δ split as the category thresholds (one ThresholdEvent per column). An auto column decided
categorical, text or id, and a column decided date, runs no heap histogram.

Reallocation (``realised_domain_noise``). The step runs in two passes: (1) the kind statistics
of the auto columns; (2) per column its domain histogram (bounds or categories) and its heap
histogram. The plan fixes pass (2)'s ρ₂ = (k + h/F²)/(2z²) before any data is read, but what
pass (2) runs depends on the kinds pass (1) decided (DP outputs): an auto column decided
categorical runs no heap histogram, one decided date none either (its bounds refinement and
weekday histogram take the heap column's two slots: ``date_refine_multiplier``,
``weekday_multiplier``), one decided text or id neither histogram. By
adaptive composition (Bun & Steinke 2016, Lemma 2.3: M₂ may be chosen
from M₁'s output y when M₂(·, y) is ρ₂-zCDP for every y), pass (2) may give the weight of what
does not run to what does: for every outcome y, the auto columns decided categorical share the
unused weight U(y) (their own heaps included) equally, each measured at weight
w_c = 1 + U(y)/n_c (σ_c = σ/√w_c; 1 + 1/F² when every auto column is decided categorical),
so Σ_i 1/(2σ_i²) over what runs (in Δ₂ units) is ρ₂ exactly. Every other histogram keeps the
plan's noise. Sensitivity unchanged: each row is in one value of each column (Δ₂ as above).

δ likewise: the discovery thresholds the outcome does not run (an auto column not decided
categorical, a heap histogram not run) give their δ (the plan's ThresholdEvents) to the
categorical columns' thresholds, equally; each takes the smallest integer T_c whose δ at σ_c
is within its share, so Σ δ_i ≤ the plan's for every y (the coupling of
synthpriv.privacy.partition holds given y: the thresholds run are fixed once y is).

The ledger records the events that ran, and, labelled "planned, not run", whatever of the plan
this outcome left unused (with no column decided categorical: the plan's histograms that did
not run, and the δ the integer thresholds left). So every outcome's ledger holds the plan's ρ₂
and δ exactly, and the reported ε does not depend on the kinds decided: the guarantee is the
worst case over y, which is the plan's (an outcome that spent less reports no less). The RDP
bound is then the plan's exactly (it depends on Σρ only): proven. The PLD bound composes
discrete Gaussians whose Σ 1/z² is the plan's; continuous Gaussians' composition depends on
that sum only, under full adaptivity too (Dong, Roth & Su 2022; Smith & Thakurta 2022), and the
discrete Gaussian's privacy curve is the continuous one's up to terms that vanish fast as σ
grows (Canonne, Kamath & Steinke 2020) — hence REALLOCATE_MIN_MULTIPLIER. That part is checked
numerically, not proven: over every outcome of small cases (tests/privacy/test_domain_realloc.py)
each outcome's PLD ε is the plan's within the accountant's pessimistic discretisation (up to
0.35 % below it, never above it by more than 4e-11 relative): pessimistic bounds on one curve.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass, field

import numpy as np

from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    Ledger,
    PrivacyEvent,
    ThresholdEvent,
    zcdp_rho,
)
from synthpriv.privacy.mechanisms import histogram_l1_sensitivity, histogram_l2_sensitivity
from synthpriv.privacy.partition import selection_threshold

KIND_NOISE_FACTOR = 2.0  # an auto column's kind statistics: twice the domain histograms' noise
KIND_STATISTICS = 2  # per auto column: its class histogram and its singleton count
# F: a column's exact-value (heap) counts carry F times the domain histograms' noise (σ_h = F·σ,
# 1/F² of a histogram's ρ). Chosen from the noise arithmetic: a heap is kept half the time at the
# threshold T_h ≈ 5.4·σ_h and nearly always (97.7 %) at T_h + 2σ_h ≈ 7.4·F·σ rows. On the
# development suite's safe drafts (every column auto, default share, ε = 1, δ = 1e-5) F = 1.25
# gives T_h + 2σ_h = 282 rows on Wage (2,400 train rows: 11.8 %; its 7 years hold 12–17 % each),
# 332 on Bikeshare (6,916: 4.8 %; windspeed 0.1343 holds 9.9 %), 269 on randhie (16,152: 1.7 %;
# lncoins 3.258096 holds 20 %), 332 on Adult (32,561: 1.0 %): a heap of 5 % (worth a cell of
# its own) is kept nearly always on the development tables but Wage. Its cost: the domain σ and
# the category threshold T rise ~7–9 % (Wage T 151 → 165) and the recipe keeps 0.584 of ρ
# instead of 0.667 (the default domain share grows by the heap histograms' ρ). F = 1.5 (σ +5 %,
# the recipe 0.607) missed Wage's 2009 (12.4 %) about one draw in 9: T_h + 2σ_h = 13.8 %; F = 1
# costs the recipe 18 % of its ρ. Measured: benchmarks/README.md, "heaps"; never tuned on a
# held-out table.
HEAP_NOISE_FACTOR = 1.25
# F_r: each heap column also gets a refinement histogram (``privacy.refine``: sub-buckets of the
# one bucket its DP bounds were read from, each row in at most one: sensitivity Δ₂) at F_r times
# the noise, 1/F_r² of a domain histogram's ρ. It runs exactly when the column's heap histogram
# does, so both share one weight per heap column (``heap_column_weight``) and the reallocation
# below moves them together. 4: a year column of 1,089 rows (ISLP Weekly, σ ≈ 31) shows in one
# sub-bucket at ≈ 9σ_r (located at 3.8σ_r), and the domain σ rises ≈ 0.6 % on an all-auto table
# (1/16 per column). F_r = 2 raised it 2.4 % on Wage, whose `year` then lost its heaps' range
# (5σ_R went from 99 % to 101 % of SEEN_TAIL × its rows: benchmarks/README.md, "outrange").
# Arithmetic and that one measured cliff, not tuned on a release's figures.
REFINE_NOISE_FACTOR = 4.0
REFINE_LABEL = "DP bounds refinement (sub-bucket counts of the end buckets) of "


def heap_column_weight() -> float:
    """The weight (in domain histograms at z) of one heap column's two histograms: its heap
    histogram (1/F²) and its bounds refinement (1/F_r²)."""
    return 1.0 / HEAP_NOISE_FACTOR**2 + 1.0 / REFINE_NOISE_FACTOR**2


# An auto column decided date runs no heap histogram (no point masses in a date) and no integer
# refinement; its heap-column weight (1/F² + 1/F_r², in domain histograms at z) goes to its two
# date histograms, one on each of the plan's slots: its bounds refinement (``privacy.refine``,
# end years split into parts) at the heap's z_d = F·z, and its weekday histogram
# (``privacy.weekdays``: 7 counts) at the refinement's F_r·z. Σ 1/z² is the plan's for that
# column (1/(F·z)² + 1/(F_r·z)²: the same ρ), and each runs at a multiplier the plan already
# holds, so every outcome's PLD bound is the plan's at any z (no REALLOCATE_MIN_MULTIPLIER
# case). Why this split: the refinement needs the weight (a guard year of 253 rows, ISLP NYSE,
# is cut at z_d ≈ 1.2·z but not at F_r·z: benchmarks/README.md, "daterange"; F·z raises its σ_d
# 5 % over the whole weight's z/√(1/F² + 1/F_r²)); a weekday histogram needs little: its 7
# cells hold n/7 rows each (NYSE: 1,200 against a keep bar of 2·3.1·σ_w ≈ 640 at F_r·z). Plan
# figures on NYSE and police, not tuned on a release (benchmarks/README.md, "dpweekdays").
DATE_REFINE_LABEL = "DP date bounds refinement (sub-bucket counts of the end years) of "
WEEKDAY_LABEL = "DP weekdays (7 weekday counts) of "


def date_refine_multiplier(z: float) -> float:
    """The noise multiplier of an auto date column's refinement histogram for the plan's z:
    the heap histogram's (F·z), whose slot it takes."""
    return HEAP_NOISE_FACTOR * z


def weekday_multiplier(z: float) -> float:
    """The noise multiplier of an auto date column's weekday histogram for the plan's z: the
    integer refinement's (F_r·z), whose slot it takes."""
    return REFINE_NOISE_FACTOR * z


def date_refine_sigma(sigma: float, multiplier: float) -> float:
    """σ_d = z_d·Δ₂ of an auto date column's refinement, from the domain histograms' σ = z·Δ₂
    and z (``multiplier``): Δ₂ is the histogram's L2 sensitivity, each row in at most one
    sub-bucket."""
    return date_refine_multiplier(multiplier) * sigma / multiplier


def weekday_sigma(sigma: float, multiplier: float) -> float:
    """σ_w = F_r·z·Δ₂ of an auto date column's weekday histogram, from σ = z·Δ₂ and z
    (``multiplier``): Δ₂ is its L2 sensitivity, each row on one weekday."""
    return weekday_multiplier(multiplier) * sigma / multiplier


def date_events(z: float, dates: list[str] | tuple[str, ...],
                weekday_dates: list[str] | tuple[str, ...] = ()) -> list[PrivacyEvent]:
    """The events of the date columns ``dates`` (auto ones decided date, or declared ones with
    neither bound public): per column one bounds refinement histogram at
    ``date_refine_multiplier`` and one weekday histogram at ``weekday_multiplier`` of the plan's
    z (sensitivity Δ₂: each row in at most one sub-bucket, on one weekday); Σ 1/z² per column is
    a heap column's weight (``heap_column_weight``). ``weekday_dates`` (declared, both bounds
    public, no ``weekdays``): the weekday histogram only (weight 1/F_r²). None when both are
    empty.

    A declared date column runs the same histograms as an auto one decided date (branch
    declareddate, issue 24: before it, a declared ``kind: date`` kept its guard years and
    released weekend dates on a weekday-only table, 28 % on ISLP NYSE with its bounds public
    too); its weight is planned (``plan_domain_noise``, ``domain_share``), so the plan's ρ and δ
    are stated up front."""
    events: list[PrivacyEvent] = []
    if dates:
        events.append(DiscreteGaussianEvent(date_refine_multiplier(z), len(dates),
                                            label=DATE_REFINE_LABEL + ", ".join(dates)))
    if weekly := list(dates) + list(weekday_dates):
        events.append(DiscreteGaussianEvent(weekday_multiplier(z), len(weekly),
                                            label=WEEKDAY_LABEL + ", ".join(weekly)))
    return events
# the heap histograms' event: their cells released are the kept heaps and, unthresholded, the
# round values named from the DP bounds (synthpriv.privacy.candidates: same noise, no added ρ/δ)
HEAP_LABEL = "DP heaps (exact-value counts; named round values' counts unthresholded) of "


def singleton_sensitivity(neighbouring: str, rows_per_person: int = 1) -> float:
    """Sensitivity of one column's count of singletons (text cells whose value occurs exactly
    once): adding or removing a row moves one value's count by 1, which makes or unmakes at most
    one singleton (1); replace-one moves two values' counts (2). Per person (k rows, data.person)
    the rows touch at most k distinct values, each making or unmaking at most one singleton
    (k; 2k under replace-one). That is a histogram's L1 sensitivity (one number, so L1 = L2 for
    it), named where the relations are mapped."""
    return histogram_l1_sensitivity(neighbouring, rows_per_person)


@dataclass
class DomainNoise:
    """The step's calibrated noise: multiplier z, σ = z·Δ₂ per bucket/value count, the kind
    histograms' σ (``kind_sigma``, when auto columns are decided) and their singleton counts'
    (``singleton_sigma``), the discovery threshold and its δ per column, and the events the
    step will record."""

    multiplier: float
    sigma: float
    threshold: int | None
    delta_per_column: float
    events: list[PrivacyEvent] = field(default_factory=list)
    kind_sigma: float | None = None
    singleton_sigma: float | None = None
    heap_sigma: float | None = None
    heap_threshold: int | None = None
    heap_delta: float = 0.0  # δ of one column's heap threshold
    refine_sigma: float | None = None  # σ of the bounds refinement's sub-bucket counts


def plan_domain_noise(
    rho: float, bounds: list[str], categories: list[str], delta: float, neighbouring: str,
    epsilon: float, kinds: list[str] | tuple[str, ...] = (), rows_per_person: int = 1,
    heaps: list[str] | tuple[str, ...] = (), kind_multiplier: float | None = None,
    dates: list[str] | tuple[str, ...] = (), weekday_dates: list[str] | tuple[str, ...] = (),
) -> DomainNoise:
    """Noise for DP bounds of the columns ``bounds``, DP categories of ``categories`` and the
    kind, then the bounds or categories, of the auto columns ``kinds``, from zCDP ``rho``; the
    discovery thresholds (``categories`` and ``kinds``) spend at most ``delta`` in all (split
    equally), under the job's target ``epsilon`` (replace-one's δ depends on it). Per person
    (``rows_per_person`` k > 1: data.person) every histogram's sensitivity is k times a row's
    and the thresholds' δ is the per-person one (synthpriv.privacy.partition). ``heaps``: the
    columns whose exact-value counts are measured at ``HEAP_NOISE_FACTOR`` × σ and thresholded
    (heap discovery, see the module docstring); their thresholds share ``delta`` too.
    ``kind_multiplier``: the kind statistics' multiplier fixed from outside (the small-table
    branch, ``SmallTableBranch``: the kinds pass at the default plan's noise); the rest of
    ``rho`` then sets z. None: z from the whole of ``rho``, the kinds at KIND_NOISE_FACTOR·z.
    ``dates``: the declared date/datetime columns among ``bounds`` with neither bound public;
    ``weekday_dates``: those with both bounds public and no ``weekdays`` (``date_events``: an
    auto date's two histograms at a heap column's weight; its weekday histogram alone)."""
    histograms = len(bounds) + len(categories) + len(kinds)
    if rho <= 0 or histograms + len(weekday_dates) == 0:
        raise ValueError("the domain step needs ρ > 0 and at least one column")
    kind_weight = KIND_STATISTICS * len(kinds) / KIND_NOISE_FACTOR**2
    heap_weight = ((len(heaps) + len(dates)) * heap_column_weight()
                   + len(weekday_dates) / REFINE_NOISE_FACTOR**2)
    if kind_multiplier is None or not kinds:
        multiplier = math.sqrt((histograms + kind_weight + heap_weight) / (2.0 * rho))
        kind_multiplier = KIND_NOISE_FACTOR * multiplier
    else:  # the kinds cost KIND_STATISTICS·k_a/(2·z_k²); pass (2) gets what is left of rho
        rest = rho - KIND_STATISTICS * len(kinds) / (2.0 * kind_multiplier**2)
        if rest <= 0:
            raise ValueError(f"the domain step's ρ = {rho:.6g} does not cover its kinds pass")
        multiplier = math.sqrt((histograms + heap_weight) / (2.0 * rest))
    sensitivity = histogram_l2_sensitivity(neighbouring, rows_per_person)
    sigma = multiplier * sensitivity
    parts = [f"bounds (bucket histograms) of {', '.join(bounds)}"] * bool(bounds) + [
        f"categories (value counts) of {', '.join(categories)}"] * bool(categories) + [
        f"bounds or categories of {', '.join(kinds)}"] * bool(kinds)
    # one event for all the histograms of one noise: the PLD accountant composes it once
    events: list[PrivacyEvent] = [
        DiscreteGaussianEvent(multiplier, histograms, label="DP domain: " + "; ".join(parts))
    ] if histograms else []
    kind_sigma = singleton_sigma = None
    if kinds:
        kind_sigma = kind_multiplier * sensitivity
        singleton_sigma = kind_multiplier * singleton_sensitivity(neighbouring, rows_per_person)
        events += [
            DiscreteGaussianEvent(kind_multiplier, len(kinds), label="DP kinds (cell class "
                                  "counts: text/number decimals/date formats) of "
                                  + ", ".join(kinds)),
            DiscreteGaussianEvent(kind_multiplier, len(kinds), label="DP kinds (singleton "
                                  "counts: near-unique text and ids) of " + ", ".join(kinds))]
    threshold, per_column = None, 0.0
    discovered = list(categories) + list(kinds)
    shares = len(discovered) + len(heaps)  # one δ split over every thresholded histogram
    if discovered:
        threshold, per_column = selection_threshold(
            sigma, delta / shares, neighbouring, epsilon, rows_per_person)
        events += [ThresholdEvent(per_column, label=f"category threshold: {name}")
                   for name in discovered]
    noise = DomainNoise(multiplier, sigma, threshold, per_column, events, kind_sigma,
                        singleton_sigma)
    if heaps:
        heap_multiplier = HEAP_NOISE_FACTOR * multiplier
        noise.heap_sigma = heap_multiplier * sensitivity
        noise.heap_threshold, noise.heap_delta = selection_threshold(
            noise.heap_sigma, delta / shares, neighbouring, epsilon, rows_per_person)
        events.append(DiscreteGaussianEvent(
            heap_multiplier, len(heaps), label=HEAP_LABEL
            + ", ".join(heaps)))
        events += [ThresholdEvent(noise.heap_delta, label=f"heap threshold: {name}")
                   for name in heaps]
        noise.refine_sigma = REFINE_NOISE_FACTOR * multiplier * sensitivity
        events.append(DiscreteGaussianEvent(REFINE_NOISE_FACTOR * multiplier, len(heaps),
                                            label=REFINE_LABEL + ", ".join(heaps)))
    events += date_events(multiplier, dates, weekday_dates)
    return noise


# Reallocate only when every outcome's reallocated histograms keep z_c = σ_c/Δ₂ ≥ this (decided
# from the plan's public figures, the same for every outcome): there a discrete Gaussian's
# privacy curve is the continuous one's of the same σ (Σ 1/z² alone sets the composition), so
# every outcome's PLD bound is the plan's within its discretisation (checked over every outcome
# of small cases, tests/privacy/test_domain_realloc.py); below it (a huge ε) the curves part
# (z_c = 0.8: +0.3 % ε) and every outcome runs as planned. Not tuned on any table.
REALLOCATE_MIN_MULTIPLIER = 2.0
DECIDED = ("categorical", "numeric", "date", "none")  # what pass (2) runs for an auto column


@dataclass
class RealisedNoise:
    """What pass (2) runs for one outcome of the kinds (``realised_domain_noise``): the auto
    columns decided categorical measured at ``category_sigma`` (σ_c), thresholded at
    ``category_threshold`` (T_c) with δ ``category_delta`` each, their weight ``weight`` (w_c,
    in domain histograms), and the step's events for the ledger: those that ran plus, labelled
    "planned, not run", what the plan held that this outcome left unused."""

    category_sigma: float | None
    category_threshold: int | None
    category_delta: float
    weight: float
    events: list[PrivacyEvent] = field(default_factory=list)
    multiplier: float = 0.0  # the plan's z (every histogram not reallocated keeps it)


def realised_domain_noise(
    rho: float, bounds: list[str], categories: list[str], delta: float, neighbouring: str,
    epsilon: float, kinds: list[str] | tuple[str, ...], decided: dict[str, str],
    rows_per_person: int = 1, heaps: list[str] | tuple[str, ...] = (),
    kind_multiplier: float | None = None, declared_dates: list[str] | tuple[str, ...] = (),
    weekday_dates: list[str] | tuple[str, ...] = (),
) -> RealisedNoise:
    """The reallocated pass (2) for the kinds ``decided`` (auto column → one of ``DECIDED``: DP
    outputs of pass (1)), from the plan's public inputs (``plan_domain_noise``'s arguments):
    the unused weight and threshold δ go, in equal shares, to the auto columns decided
    categorical (module docstring, "Reallocation"). Privacy cost: the plan's ρ and δ for every
    outcome, no more (its events are the plan's totals; checked here, ValueError otherwise).
    ``declared_dates``, ``weekday_dates``: ``plan_domain_noise``'s ``dates`` and
    ``weekday_dates`` (run as planned in every outcome)."""
    unknown = sorted(set(kinds) ^ set(decided)) + sorted(
        f"{name}: {kind}" for name, kind in decided.items() if kind not in DECIDED)
    if unknown:
        raise ValueError(f"decided kinds must name every auto column once as one of {DECIDED}; "
                         f"wrong: {unknown}")
    plan = plan_domain_noise(rho, bounds, categories, delta, neighbouring, epsilon, kinds,
                             rows_per_person, heaps, kind_multiplier, declared_dates,
                             weekday_dates)
    sensitivity = plan.sigma / plan.multiplier  # Δ₂, as the plan has it
    z, heap_weight = plan.multiplier, heap_column_weight()
    heap_z = HEAP_NOISE_FACTOR * z
    named = {kind: [n for n in kinds if decided[n] == kind] for kind in DECIDED}
    cats = named["categorical"]
    # unused weight (in domain histograms at z): a categorical column's heap (a date's: its
    # refinement and weekdays take it, date_refine_multiplier and weekday_multiplier),
    # a text or id column's histogram and heap
    unused_heaps = [n for n in heaps if n in decided and decided[n] != "numeric"]
    dates = [n for n in heaps if decided.get(n) == "date"]
    date_z, weekday_z = date_refine_multiplier(z), weekday_multiplier(z)
    # a date's refinement and weekday histograms' weight (in histograms at z): its heap column's
    date_used = (z / date_z) ** 2 + (z / weekday_z) ** 2
    unused_domain = named["none"]
    unused = len(unused_domain) + heap_weight * len(unused_heaps) - date_used * len(dates)
    unused_delta = (plan.delta_per_column * (len(kinds) - len(cats))
                    + plan.heap_delta * len(unused_heaps))
    planned = list(categories)  # discovered at the plan's σ and T
    # the largest weight any outcome gives (one column categorical, the others text or id)
    most = 1.0 + (len(kinds) - 1) + heap_weight * len([n for n in heaps if n in decided])
    if z / math.sqrt(most) < REALLOCATE_MIN_MULTIPLIER:
        planned, cats = planned + cats, []  # noise too small to move: as planned, every outcome
    measured = list(bounds) + planned + named["numeric"] + named["date"]
    events: list[PrivacyEvent] = []
    if measured:
        events.append(DiscreteGaussianEvent(z, len(measured), label="DP domain (bounds or "
                                            "categories) of " + ", ".join(measured)))
    events += [e for e in plan.events if e.label.startswith("DP kinds")]
    events += [ThresholdEvent(plan.delta_per_column, label=f"category threshold: {name}")
               for name in planned]
    realised = RealisedNoise(None, None, 0.0, 0.0, multiplier=z)
    events += date_events(z, list(declared_dates) + dates, weekday_dates)  # declared: as planned
    if cats:
        realised.weight = 1.0 + unused / len(cats)  # unused counts their own heaps
        cat_z = z / math.sqrt(realised.weight)
        realised.category_sigma = cat_z * sensitivity
        realised.category_threshold, realised.category_delta = selection_threshold(
            realised.category_sigma, plan.delta_per_column + unused_delta / len(cats),
            neighbouring, epsilon, rows_per_person)
        events.append(DiscreteGaussianEvent(
            cat_z, len(cats), label=f"DP categories of {', '.join(cats)} (each at weight "
            f"{realised.weight:.3f}: the plan's unused histograms reallocated)"))
        events += [ThresholdEvent(realised.category_delta, label=f"category threshold: {name} "
                                  "(reallocated)") for name in cats]
    ran_heaps = [n for n in heaps if n not in unused_heaps]
    if ran_heaps:
        events.append(DiscreteGaussianEvent(
            heap_z, len(ran_heaps), label=HEAP_LABEL
            + ", ".join(ran_heaps)))
        events += [ThresholdEvent(plan.heap_delta, label=f"heap threshold: {name}")
                   for name in ran_heaps]
        events.append(DiscreteGaussianEvent(REFINE_NOISE_FACTOR * z, len(ran_heaps),
                                            label=REFINE_LABEL + ", ".join(ran_heaps)))
    if not cats:  # nothing takes the unused weight: the plan's events that did not run
        if unused_domain:
            events.append(DiscreteGaussianEvent(
                z, len(unused_domain), label="planned, not run (decided text or id): DP domain "
                "of " + ", ".join(unused_domain)))
        # a date's heap and refinement weights are in its date refinement and weekdays
        idle_heaps = [n for n in unused_heaps if n not in dates]
        if idle_heaps:
            events.append(DiscreteGaussianEvent(
                heap_z, len(idle_heaps), label="planned, not run: DP heaps of "
                + ", ".join(idle_heaps)))
        if idle_refines := [n for n in unused_heaps if n not in dates]:  # a date's ran
            events.append(DiscreteGaussianEvent(
                REFINE_NOISE_FACTOR * z, len(idle_refines), label="planned, not run: "
                + REFINE_LABEL + ", ".join(idle_refines)))
    planned_delta = sum(e.delta for e in plan.events if isinstance(e, ThresholdEvent))
    spent_delta = sum(e.delta for e in events if isinstance(e, ThresholdEvent))
    if spent_delta > planned_delta * (1 + 1e-12):
        raise ValueError(f"internal error: the reallocated thresholds spend δ = {spent_delta:.6g}"
                         f", above the plan's {planned_delta:.6g}")
    if planned_delta - spent_delta > 0:
        events.append(ThresholdEvent(planned_delta - spent_delta, label="planned, not spent: "
                                     "the δ of the thresholds this outcome did not run"))
    planned_rho = sum(zcdp_rho(e) for e in plan.events if not isinstance(e, ThresholdEvent))
    spent_rho = sum(zcdp_rho(e) for e in events if not isinstance(e, ThresholdEvent))
    if not math.isclose(spent_rho, planned_rho, rel_tol=1e-9):
        raise ValueError(f"internal error: the reallocated domain step holds ρ = {spent_rho:.6g}"
                         f", the plan {planned_rho:.6g}")
    realised.events = events
    return realised


ONE_WAY_SHARE = 1 / 3  # MST's first third: the 1-way marginals of all d columns (McKenna et al.)


def domain_share(histograms: int, columns: int, kinds: int = 0, heaps: int = 0,
                 weekday_dates: int = 0) -> float:
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
    development-suite table). The threshold then scales as 1/√ρ (ε). It does not follow a
    public n̂: raising the share until T is 5 % of n̂ (up to half of ρ) was measured no better on
    Wage at 2,400 and 700 rows — 2-way TVD 0.199 against 0.157 and 0.334 against 0.313, MST,
    ε = 1 (benchmarks/README.md, "DP bounds and discovery on small tables"): the recipe loses
    more than discovery gains. With a declared n̂ where DP bounds would leave columns blank, the
    plan then raises it (``small_table_share``). ``kinds`` auto columns
    (counted among the ``histograms`` too) add their KIND_STATISTICS kind statistics at
    1/KIND_NOISE_FACTOR² of a histogram's ρ each, and ``heaps`` heap histograms
    1/HEAP_NOISE_FACTOR² + 1/REFINE_NOISE_FACTOR² each (with their bounds refinement; a declared
    date column without public bounds counts as one: its refinement and weekday histograms,
    ``date_events``), and ``weekday_dates`` declared dates with public bounds a weekday histogram
    each (1/REFINE_NOISE_FACTOR²). Public: k, d and the numbers of auto and heap columns only."""
    if histograms + weekday_dates <= 0 or columns <= 0:
        raise ValueError("the domain share needs at least one column")
    weight = (histograms + KIND_STATISTICS * kinds / KIND_NOISE_FACTOR**2
              + heaps * heap_column_weight()
              + weekday_dates / REFINE_NOISE_FACTOR**2) * ONE_WAY_SHARE / columns
    return weight / (1.0 + weight)


# The small-table rule (``small_table_share``). On development tables of 200–800 rows (ISLP
# Hitters, Credit, Boston, Publication, College, statsmodels star98; safe draft, AIM, ε = 1) the
# default share (0.42 when every column is auto) left columns blank that 0.75 gave bounds, and
# 0.75 lowered mean KS (blank = 1) and 2-way TVD there; 0.9 starved the recipe (benchmarks/
# README.md, "tiny"). Tuned on those development tables only; never on a held-out table.
SMALL_TABLE_SHARE = 0.75
SMALL_TABLE_NEED = 0.25  # the rule applies from this share of n̂ (one-octave bounds count)


def small_table_share(share: float, bounds_rows: float | None, records: int | None) -> float:
    """The domain step's share of ρ with the small-table rule: ``SMALL_TABLE_SHARE`` (or ``share``
    if larger) when the public row count ``records`` (n̂, data.public_records) is declared and
    DP bounds at the default ``share`` would need ``bounds_rows`` ≥ ``SMALL_TABLE_NEED``·n̂ rows
    in one octave of a column's values (the plan's occupancy threshold at its σ); else ``share``.
    Why: below that, whole columns get no bounds and are released blank, which costs a user more
    than the noisier marginals the recipe then measures. Public only (n̂, the plan's σ, the
    columns): the plan, made before any data is read, fixes the share and the total ρ; the
    ledger records the plan's events at that share."""
    if records is None or bounds_rows is None or bounds_rows < SMALL_TABLE_NEED * records:
        return share
    return max(share, SMALL_TABLE_SHARE)


# The small-table rule without a public row count (branch dpn, issue 24): the same rule, its
# branch chosen from a DP row count n̂ read in the run.
#
# Plan (no data read): two branches, each over the job's whole ρ (the default plan's calibrated
# total t): the default (domain share s₀, e.g. 0.42) and the small-table branch (share
# SMALL_TABLE_SHARE). Both run the kinds pass (pass 1) at the same noise, the default plan's
# (``kind_multiplier``), so its ρ₁ is the same in both. The branch is then chosen from n̂ =
# ``records_estimate`` of pass 1's noisy class totals (post-processing of a DP output): the small
# branch when n̂ ≤ ``small_table_below`` (the rule's public threshold: the default plan's one-octave
# bounds count over SMALL_TABLE_NEED). Both branches give the rest (pass 2 and the recipe) the
# same ρ − ρ₁ (its split differs), and the same δ (the domain thresholds' split is the plan's).
#
# Privacy. The run is M₁ (pass 1, ρ₁-zCDP) then M₂(·, y) with y = M₁'s output: every M₂(·, y) is
# (t − ρ₁)-zCDP, whichever branch y picks, so the run is t-zCDP by adaptive composition (Bun &
# Steinke 2016, Lemma 2.3; the zCDP filter of Feldman & Zrnic 2021 with the branch as the
# adaptive choice, as AIM's rounds are accounted: ZCDPFilter) and the thresholds' δ adds. So the
# RDP/zCDP bound, a function of Σρ and the thresholds' δ alone, is the same for both branches and
# valid for the adaptive run. The PLD bound of the realised branch is not: the branches mix
# Gaussians and exponential mechanisms in different proportions, and a PLD (f-DP) bound of one
# composition does not hold for a composition chosen from the data. Hence the rule is live only
# when the plan is priced by the zCDP closed form (``calibration.priced_in_closed_form``: AIM,
# MST), and the domain step then records pass 2 through a ZCDPFilter (``record_branch``), so the
# ledger reports the RDP bound only, the plan's figure, in either branch. A plan priced by PLD
# (independent, DP-SGD) keeps the default share.
# δ: the discovery thresholds' δ is each integer threshold's (≤ its share of δ), which differs
# between the branches' σ. δ adds under adaptive composition, so the run is priced at the larger
# of the two: the branch that spends less carries the difference as a ThresholdEvent
# ``BRANCH_PAD`` (``branch_padding``). The small branch's domain thresholds split only the δ the
# default's spend, so it spends no more and the default plan keeps its calibration; were its
# recipe's thresholds to spend more, the job's scale is calibrated on the worse branch
# (pipeline.small_table_branch). So both branches' ledgers hold the same Σρ and the same δ: the
# same RDP ε, within the budget, whichever branch runs.
BRANCH_PAD = "planned, not spent: the other small-table branch's larger thresholds δ"


def total_rho(domain_rho: float, domain_share: float) -> float:
    """The job's total zCDP ρ from its domain step's ρ and share (the plan's figures): the scale
    both small-table branches share (``pipeline.small_table_branch``)."""
    return domain_rho / domain_share


def thresholds_delta(events: list[PrivacyEvent]) -> float:
    """The δ the partition thresholds among ``events`` spend."""
    return sum(e.delta for e in events if isinstance(e, ThresholdEvent))


def branch_padding(events: list[PrivacyEvent], other: list[PrivacyEvent]) -> list[PrivacyEvent]:
    """The ``BRANCH_PAD`` threshold event that brings ``events``' thresholds δ to ``other``'s
    when it is larger (none otherwise): both branches then spend the larger δ."""
    gap = thresholds_delta(other) - thresholds_delta(events)
    return [ThresholdEvent(gap, label=BRANCH_PAD)] if gap > 0 else []
# n̂ reads each column's class counts above this many σ_k (a noise-only class passes 3σ with
# probability 0.13 %): arithmetic, not tuned on any table
RECORDS_CLEAR = 3.0


def records_estimate(histograms: list[np.ndarray], sigma: float) -> float:
    """n̂: the median over the auto columns of each one's noisy count of non-empty cells, read
    from its noisy class histogram (pass 1, noise ``sigma`` per class: DP outputs) as the sum of
    the classes above RECORDS_CLEAR·σ. Post-processing only. Summing every class would carry
    σ·√|CLASSES| (~5σ) per column; the classes a column's cells fill are few, so the cleared sum
    carries ~σ·√(its classes) and misses only classes of < 3σ cells. The median over columns
    needs no more budget and no single column moves it far. A column with missing cells counts
    fewer rows, which leans to the small branch: DP bounds see only the cells holding values."""
    if not histograms:
        raise ValueError("the DP row count needs at least one auto column's noisy class counts")
    cleared = [float(np.sum(h[h > RECORDS_CLEAR * sigma])) for h in map(np.asarray, histograms)]
    return float(statistics.median(cleared))


def records_sigma(histograms: list[np.ndarray], sigma: float) -> float:
    """A σ for ``records_estimate`` (public given its DP inputs): the median of k column sums,
    each with noise σ·√c (c its classes cleared; the largest c taken), has a standard deviation
    of about √(π/2)·σ·√c/√k for large k (the sample median of normals) and less for small k
    (k = 1: σ√c; k = 2: the mean, σ√c/√2; k = 3: 0.67·σ√c against the formula's 0.72), so the
    formula overstates it: a larger σ lowers the estimate's weight where it is combined
    (marginals.compress.missing_estimate). Assumes every column holds every row (a column with
    blanks or rows in a class below RECORDS_CLEAR·σ counts fewer: the median errs low)."""
    cleared = [int(np.sum(h > RECORDS_CLEAR * sigma)) for h in map(np.asarray, histograms)]
    return float(sigma * math.sqrt(max(max(cleared), 1) * math.pi / (2 * len(histograms))))


def small_table_below(bounds_rows: float) -> float:
    """The n̂ at or below which the small-table branch runs: DP bounds at the default share would
    need ``bounds_rows`` ≥ SMALL_TABLE_NEED·n̂ rows in one octave (``small_table_share``'s test,
    with the DP n̂ for the public one). Public: the default plan's figure only."""
    return bounds_rows / SMALL_TABLE_NEED


def record_branch(ledger: Ledger, events: list[PrivacyEvent], label: str) -> None:
    """Record the domain step's ``events`` when its pass 2 was chosen from n̂: the kinds pass
    (fixed before any data was read) and the thresholds' δ as they are, pass 2's zCDP events
    through a ZCDPFilter reserved at their ρ, so the ledger reports the RDP bound only (valid
    under the adaptive branch; see the argument above)."""
    fixed = [e for e in events if isinstance(e, ThresholdEvent) or e.label.startswith("DP kinds")]
    adaptive = [e for e in events if not any(e is f for f in fixed)]
    ledger.extend(fixed)
    if adaptive:
        budget = ledger.open_filter(sum(zcdp_rho(e) for e in adaptive), label)
        for event in adaptive:
            budget.record(event)
