"""Private selection against its privacy claims: the exponential mechanism's choice frequencies
at the ε and Δ it is given, AIM's score sensitivity by brute force over neighbouring tables, and
the selection events on the ledger (every selection run is charged, at the ε it ran at). The
mutations these must catch are in benchmarks/privacy_mutations.py."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from synthpriv.domain import Dataset, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.aim import AimSettings, Sensitivity, aim_score_sensitivity, aim_scores, run_aim
from synthpriv.marginals.selection import downward_closure, workload, workload_weights
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    ExponentialEvent,
    Ledger,
    ZCDPFilter,
    zcdp_rho,
)
from synthpriv.privacy.mechanisms import exponential_mechanism
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext
from tests.privacy.test_noise_scales import brute_force_sensitivity, variance_interval

DOMAIN = Domain.from_sizes({"a": 2, "b": 3, "c": 2})


def test_exponential_mechanism_chooses_with_probability_exp_eps_score_over_two_delta() -> None:
    """Two candidates whose scores differ by s: the better is chosen with probability
    1 / (1 + exp(−ε·s/(2Δ))). Checked at a fixed seed within a 99.99 % binomial interval."""
    epsilon, sensitivity, gap, draws = 0.5, 2.0, 8.0, 4000
    rng = np.random.default_rng(17)
    picks = sum(exponential_mechanism(np.array([0.0, gap]), epsilon, sensitivity, rng)
                for _ in range(draws))
    expected = 1.0 / (1.0 + np.exp(-epsilon * gap / (2.0 * sensitivity)))
    low, high = stats.binom(draws, expected).ppf([5e-5, 1 - 5e-5])
    assert low <= picks <= high, (
        f"the better candidate was chosen {picks} times in {draws}; ε·s/(2Δ) = "
        f"{epsilon * gap / (2 * sensitivity):g} expects {expected * draws:.0f} ({low:.0f}–{high:.0f})")


class FixedModel:
    """A model independent of the table (AIM's model is post-processing of earlier noisy
    measurements): uniform counts summing to ``total`` on every marginal."""

    def __init__(self, domain: Domain, total: float) -> None:
        self.domain, self.total = domain, total

    def project(self, clique) -> np.ndarray:
        shape = self.domain.project(clique).shape
        return np.full(shape, self.total / np.prod(shape))


def _neighbours(codes: np.ndarray, relation: str):
    values = np.array(np.meshgrid(*[range(s) for s in DOMAIN.shape], indexing="ij")).reshape(
        len(DOMAIN), -1).T
    if relation == "add_remove":
        for value in values:
            yield np.vstack([codes, value])
        for i in range(len(codes)):
            yield np.delete(codes, i, axis=0)
    else:
        for i in range(len(codes)):
            for value in values:
                other = codes.copy()
                other[i] = value
                yield other


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_aim_scores_move_by_at_most_their_sensitivity_between_neighbours(relation: str) -> None:
    codes = np.random.default_rng(3).integers(0, 2, (10, 3))
    queries = workload(DOMAIN.attributes, 2)
    candidates = downward_closure(queries)
    weights = workload_weights(candidates, queries)
    model = FixedModel(DOMAIN, 10.5)

    def scores(rows: np.ndarray) -> np.ndarray:
        return aim_scores(Dataset(rows, DOMAIN).marginals(candidates), model, candidates,
                          weights, sigma=1.0)

    base = scores(codes)
    moved = max(float(np.abs(scores(other) - base).max()) for other in _neighbours(codes, relation))
    l1 = brute_force_sensitivity(relation)[0]
    bound = aim_score_sensitivity(candidates, weights, l1)
    assert moved <= bound * (1 + 1e-12), (
        f"an AIM score moved by {moved:g} between {relation} neighbours, above the Δ = {bound:g} "
        "the exponential mechanism is given")
    assert moved == pytest.approx(bound)  # attained: the bound is the sensitivity


def _tiny_aim(relation: str, rho: float = 0.5):
    codes = np.random.default_rng(8).integers(0, 2, (300, 3))
    data = Dataset(codes, DOMAIN)
    l1, l2 = brute_force_sensitivity(relation)
    budget = ZCDPFilter(rho, "AIM rounds")
    settings = AimSettings(rounds_per_attribute=2, round_iterations=5, final_iterations=5)
    measurements, _ = run_aim(data, settings, Sensitivity(l1, l2), RandomSource.seeded(4), budget)
    return data, measurements, budget, l2


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_aim_charges_every_selection_and_measures_at_the_recorded_noise(relation: str) -> None:
    data, measurements, budget, l2 = _tiny_aim(relation)
    selections = [e for e in budget.events if isinstance(e, ExponentialEvent)]
    gaussians = [e for e in budget.events if isinstance(e, DiscreteGaussianEvent)]
    rounds = len(measurements) - len(DOMAIN)  # the first d measurements are the 1-way marginals
    assert rounds >= 1
    assert len(selections) == rounds, (
        f"AIM ran {rounds} selections but the filter holds {len(selections)} selection events")
    assert len(gaussians) == len(measurements)
    assert sum(zcdp_rho(e) for e in budget.events) == pytest.approx(budget.rho, rel=1e-6)
    # each measurement's noise, standardised by what its event records (z·Δ₂), pooled
    standardised = np.concatenate([
        ((m.noisy_counts - data.marginal(m.clique)) / (e.noise_multiplier * l2)).ravel()
        for m, e in zip(measurements, gaussians, strict=True)])
    low, high = variance_interval(len(standardised))
    assert low < float(np.var(standardised, ddof=1)) < high


@pytest.mark.parametrize("relation", ["add_remove", "replace_one"])
def test_mst_charges_the_ledger_all_the_rho_its_plan_reserved(relation: str) -> None:
    """MST's events are fixed in advance: the ledger after a run must hold exactly the plan's ρ,
    the selections at the ε of the plan (not a smaller one)."""
    domain = Domain.from_sizes({"a": 3, "b": 4, "c": 2, "d": 2})
    codes = np.random.default_rng(1).integers(0, 2, (400, 4))
    schema = parse_schema({"columns": [
        {"name": n, "kind": "categorical", "categories": [str(i) for i in range(s)]}
        for n, s in domain.to_dict().items()]}, "test")
    encoder = TableEncoder(schema)
    context = PlanContext(encoder.domain, relation, 1e-6)
    stage = MarginalsStage({"selection": "mst", "iterations": 10}, context, "test")
    plan = stage.plan(0.2)
    ledger = Ledger(relation)
    stage.run(PipelineState(context, encoder, Dataset(codes, encoder.domain)), plan, ledger,
              RandomSource.seeded(2))
    assert sum(zcdp_rho(e) for e in ledger.events) == pytest.approx(plan.rho, rel=1e-9)
    planned = [e.epsilon for e in plan.events if isinstance(e, ExponentialEvent)]
    recorded = [e.epsilon for e in ledger.events if isinstance(e, ExponentialEvent)]
    assert recorded == pytest.approx(planned) and planned[0] == plan.noise["selection_epsilon"]
