"""AIM: adaptive, workload-aware selection and measurement of marginals (McKenna et al. 2022).

Rounds pick, with the exponential mechanism, the candidate marginal whose current model error is
largest relative to the noise it would be measured with, measure it with the discrete Gaussian
mechanism, and refit the model. The model size is capped (growing with the budget spent), and the
noise is annealed: when a measurement barely changes the model, later rounds use half the noise.
AIM chooses its noise, its annealing and its number of rounds from earlier noisy outputs, so it
spends through a zCDP filter (``ZCDPFilter``) opened on the ledger with the stage's ρ: every event
is recorded there, the rounds together spend exactly that ρ, and the ledger accounts the reserved ρ
(the bound that holds under adaptivity).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from synthpriv.domain import CountSource, Domain
from synthpriv.marginals.estimation import GraphicalModel, estimate
from synthpriv.marginals.junction_tree import SizeScreen
from synthpriv.marginals.measurement import Measurement, measure_marginal
from synthpriv.marginals.selection import (
    Clique,
    downward_closure,
    workload,
    workload_weights,
)
from synthpriv.marginals.settings import ONE_WAY_MOST, one_way_batch
from synthpriv.privacy.accountant import ExponentialEvent, ZCDPFilter
from synthpriv.privacy.budget import RoundBudget
from synthpriv.privacy.mechanisms import exponential_mechanism
from synthpriv.privacy.randomness import RandomSource
from synthpriv.progress import inner

BIAS = math.sqrt(2.0 / math.pi)  # E|N(0, σ²)| = σ·sqrt(2/π): expected L1 error of pure noise
# The fits' early stop never asks for more than this precision (records; estimation.estimate's
# ``resolution``): the release's counts are whole records, so a model closer than a fraction of a
# record² per cell shows nothing more in the sample. It matters only when σ < 1 record (a huge ε:
# ~1e3 and above on Adult), where a stop in σ² units ran every fit to its iteration cap.
RESOLUTION = 1.0


def announce_precise(sigma: float) -> None:
    """Say on the terminal that the fits stop at ``RESOLUTION`` (public: σ comes from the plan
    and the annealing, post-processing of noisy outputs)."""
    print(f"note: AIM's measurement noise σ = {sigma:.3g} is below {RESOLUTION:g} record: its "
          f"model fits stop at a precision of {RESOLUTION:g} record per cell, not of σ (the "
          "precise-noise path; the noise and the budget are unchanged)", file=sys.stderr)


@dataclass(frozen=True)
class AimSettings:
    workload_degree: int = 3
    rounds_per_attribute: int = 16
    gaussian_fraction: float = 0.9
    max_model_cells: int = 2_000_000
    round_iterations: int = 100
    final_iterations: int = 1000
    max_rounds: int = 400
    max_workload: int = 1000
    one_way_multiplier: float | None = None  # the 1-way round's (``budget.first_round_noise``)


def aim_rounds(settings: AimSettings, attributes: int) -> int:
    """Rounds AIM plans for: ``rounds_per_attribute`` per column (McKenna et al. 2022: 16),
    capped at ``max_rounds`` so a wide table (Caravan: 86 columns, 1,376 rounds) neither takes
    hours nor spreads its budget over rounds too noisy to tell marginals apart. Public: it
    depends on the number of columns only."""
    return min(settings.rounds_per_attribute * attributes, settings.max_rounds)


def sampled_workload(
    queries: list[Clique], limit: int, rng: np.random.Generator
) -> list[Clique]:
    """The workload, or a uniform sample of ``limit`` of its marginals when it is larger (all
    3-way marginals of 86 columns are 102,340; scoring and counting every candidate under them
    each round is what makes AIM slow on wide tables). Public randomness: no data is read."""
    if len(queries) <= limit:
        return queries
    picked = np.sort(rng.choice(len(queries), size=limit, replace=False))
    return [queries[i] for i in picked]


def sampled_combinations(
    attributes: Sequence[str], degree: int, limit: int, rng: np.random.Generator
) -> list[Clique]:
    """``sampled_workload(workload(attributes, degree), limit, rng)`` without listing the
    workload: the same draw from ``rng`` and the same marginals in the same order, each picked
    index unranked into its combination (``combinations``' lexicographic order). A wide table's
    3-way workload is never held in memory (2,000 columns: 1.3·10⁹ triples, over 20 GB as a
    list). Public randomness: no data is read."""
    k = min(degree, len(attributes))
    total = math.comb(len(attributes), k)
    if total <= limit:
        return workload(attributes, degree)
    picked = np.sort(rng.choice(total, size=limit, replace=False))
    return [tuple(attributes[i] for i in _unranked(int(r), len(attributes), k)) for r in picked]


def _unranked(rank: int, n: int, k: int) -> list[int]:
    """The ``rank``-th k-subset of range(n) in ``itertools.combinations``' order."""
    chosen, x = [], 0
    for slots in range(k, 0, -1):
        while rank >= (starting := math.comb(n - x - 1, slots - 1)):
            rank -= starting
            x += 1
        chosen.append(x)
        x += 1
    return chosen


@dataclass(frozen=True)
class Sensitivity:
    """Histogram sensitivities under the job's neighbouring relation."""

    l1: float
    l2: float


def _within_size(
    domain: Domain, model: GraphicalModel, measured: list[Clique], candidates: list[Clique],
    limit: float,
) -> list[Clique]:
    """Candidates whose addition keeps the model at most ``limit`` cells, and every candidate
    inside a clique of the current junction tree: it leaves the model as it is (AIM's "free"
    cliques, McKenna et al. 2022, always allowed; the 1-way marginals are among them, so the list
    is never empty). Only the others are triangulated anew (the costly part, cached by graph in
    ``model_cells``), and not even those larger than ``limit`` alone: the triangulation holds
    every clique of the graph inside one of its cliques, so its cells are at least the
    candidate's. The measured graph is built once per round (``SizeScreen``), not per candidate.
    Public: it reads the domain and the cliques measured so far, never the data."""
    hosts = [frozenset(c) for c in model.cliques]
    screen = SizeScreen(domain, measured)
    allowed = []
    for candidate in candidates:
        members = frozenset(candidate)
        if any(members <= host for host in hosts) or (
            domain.size(candidate) <= limit and screen.cells(candidate) <= limit
        ):
            allowed.append(candidate)
    return allowed


def candidate_marginals(model: GraphicalModel, allowed: list[Clique]) -> dict[Clique, np.ndarray]:
    """The model's marginal of every allowed candidate, largest cliques first: a candidate that
    lies inside a larger one already computed is summed from that small table, the rest come
    from ``model.project`` (across junction-tree cliques: a contraction). Equal to
    ``model.project`` of each up to rounding (the model's marginals are consistent); post-
    processing of the model only, so it touches no score sensitivity."""
    found: dict[Clique, np.ndarray] = {}
    inside: dict[frozenset[str], Clique] = {}  # a clique -> a computed candidate one larger
    for clique in sorted(allowed, key=len, reverse=True):
        larger = inside.get(frozenset(clique))
        if larger is None:
            values = model.project(clique)
        else:
            dropped = next(k for k, a in enumerate(larger) if a not in clique)
            values = found[larger].sum(axis=dropped)
            kept = tuple(a for a in larger if a in clique)
            if kept != clique:
                values = values.transpose([kept.index(a) for a in clique])
        found[clique] = values
        if len(clique) > 1:
            for k in range(len(clique)):
                inside.setdefault(frozenset(clique[:k] + clique[k + 1:]), clique)
    return found


def aim_scores(
    truth: dict[Clique, np.ndarray], model: GraphicalModel, allowed: list[Clique],
    weights: dict[Clique, float], sigma: float,
) -> np.ndarray:
    """AIM's quality score of each allowed candidate c:
    ``w_c · (||M_c(D) − M_c(model)||_1 − sqrt(2/π)·σ·cells(c))``.

    The model and σ are post-processing of earlier noisy measurements, so only ``M_c(D)`` depends
    on the data: its L1 distance to any fixed table changes by at most the histogram's L1
    sensitivity Δ1, hence score c by at most ``w_c·Δ1`` (``aim_score_sensitivity``). The model's
    marginals are computed together (``candidate_marginals``: post-processing of the model).
    """
    estimates = candidate_marginals(model, allowed)
    return np.array([
        weights[c] * (np.abs(truth[c] - estimates[c]).sum() - BIAS * sigma * truth[c].size)
        for c in allowed
    ])


def aim_score_sensitivity(
    allowed: list[Clique], weights: dict[Clique, float], l1_sensitivity: float
) -> float:
    """The exponential mechanism's Δ for ``aim_scores``: max over candidates of w_c · Δ1."""
    return max(weights[c] for c in allowed) * l1_sensitivity


def run_aim(
    data: CountSource,
    settings: AimSettings,
    sensitivity: Sensitivity,
    source: RandomSource,
    budget: ZCDPFilter,
    adapt: Callable[[CountSource, list[Measurement]], tuple[CountSource, list[Measurement]]]
    | None = None,
) -> tuple[list[Measurement], GraphicalModel]:
    """Spend the zCDP filter ``budget`` on AIM's rounds; return the measurements and the model.
    The rounds spend through a ``RoundBudget`` on the filter: the filter (the ledger's) is the
    only tally of what was spent.

    ``adapt`` (post-processing) may replace the data source and the 1-way measurements by coarser
    ones once those are measured (the adaptive domain); the rounds then run on its domain.
    """
    rng = source.numpy_generator()
    rounds = aim_rounds(settings, len(data.domain))
    spend = RoundBudget(budget, rounds, settings.gaussian_fraction)
    multiplier = spend.multiplier  # σ / Δ2 of one measurement
    if one_way_batch(rounds, len(data.domain), settings.gaussian_fraction):  # a wide table
        multiplier = spend.spend_batch(len(data.domain), rounds, ONE_WAY_MOST)
    elif settings.one_way_multiplier is not None:  # a small table's 1-way round (settings.py)
        multiplier = spend.spend_first(len(data.domain), rounds, settings.one_way_multiplier)
    data.marginals([(a,) for a in data.domain.attributes])  # one pass counts them all
    measurements = [
        measure_marginal(data, (a,), multiplier * sensitivity.l2, sensitivity.l2, source, budget)
        for a in data.domain.attributes
    ]
    if adapt is not None:
        data, measurements = adapt(data, measurements)
    domain = data.domain
    queries = sampled_combinations(domain.attributes, settings.workload_degree,
                                   settings.max_workload, rng)
    # A marginal larger than the model may ever be is never measured: skip it (and its counts).
    candidates = [c for c in downward_closure(queries) if domain.size(c) <= settings.max_model_cells]
    weights = workload_weights(candidates, queries)
    truth = data.marginals(candidates)  # one pass over the data for every candidate
    model = estimate(domain, measurements, iterations=settings.round_iterations,
                     max_cells=settings.max_model_cells, resolution=RESOLUTION)
    announced = False
    while not spend.exhausted:
        multiplier, epsilon = spend.next_round()
        sigma = multiplier * sensitivity.l2
        if sigma < RESOLUTION and not announced:
            announce_precise(sigma)
            announced = True
        limit = spend.spent_fraction_after_round(settings.max_model_cells)
        allowed = _within_size(domain, model, [m.clique for m in measurements], candidates, limit)
        scores = aim_scores(truth, model, allowed, weights, sigma)
        score_sensitivity = aim_score_sensitivity(allowed, weights, sensitivity.l1)
        chosen = allowed[exponential_mechanism(scores, epsilon, score_sensitivity, rng)]
        budget.record(ExponentialEvent(epsilon, 1, label="AIM selection"))
        measurements.append(measure_marginal(data, chosen, sigma, sensitivity.l2, source, budget))
        before = model.project(chosen)
        model = estimate(domain, measurements, iterations=settings.round_iterations,
                         max_cells=settings.max_model_cells, warm_start=model,
                         resolution=RESOLUTION)
        if np.abs(model.project(chosen) - before).sum() <= BIAS * sigma * before.size:
            spend.anneal()
        inner("AIM round", len(measurements) - len(domain.attributes), spent=spend.spent_fraction)
    model = estimate(domain, measurements, iterations=settings.final_iterations,
                     max_cells=settings.max_model_cells, warm_start=model, resolution=RESOLUTION)
    return measurements, model
