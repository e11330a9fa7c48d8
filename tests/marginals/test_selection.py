"""Private selection: with ε → ∞ it picks the truly best marginals; ledger events match the plan."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.independent import IndependentModel
from synthpriv.marginals.measurement import Measurement
from synthpriv.marginals.selection import (
    downward_closure,
    mst_select,
    workload_weights,
)
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext


def chain_data(rows: int, seed: int) -> Dataset:
    """a → b → c strongly dependent; d, e independent noise."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, rows)
    b = (a + (rng.random(rows) < 0.1)) % 4
    c = (b + (rng.random(rows) < 0.1)) % 4
    d, e = rng.integers(0, 4, rows), rng.integers(0, 4, rows)
    domain = Domain(("a", "b", "c", "d", "e"), (4,) * 5)
    return Dataset(np.stack([a, b, c, d, e], axis=1), domain)


def test_mst_with_huge_epsilon_picks_the_true_maximum_spanning_tree() -> None:
    data = chain_data(5000, seed=0)
    truth = [Measurement((a,), data.marginal([a]), 1.0) for a in data.domain.attributes]
    model = IndependentModel.from_measurements(data.domain, truth)
    tree = mst_select(data, model.project, epsilon=1e6, sensitivity=1.0,
                      rng=np.random.default_rng(0))
    assert len(tree) == 4
    assert ("a", "b") in tree and ("b", "c") in tree


def test_mst_with_tiny_epsilon_is_close_to_uniform() -> None:
    data = chain_data(2000, seed=1)
    truth = [Measurement((a,), data.marginal([a]), 1.0) for a in data.domain.attributes]
    model = IndependentModel.from_measurements(data.domain, truth)
    picks = [mst_select(data, model.project, 1e-9, 1.0, np.random.default_rng(s))[0]
             for s in range(200)]
    # 10 pairs equally likely: ("a", "b") is first about 20 times in 200 (std ≈ 4.2).
    assert 5 <= picks.count(("a", "b")) <= 40


def test_workload_weights_and_closure() -> None:
    closure = downward_closure([("a", "b", "c")])
    assert len(closure) == 7
    weights = workload_weights([("a",), ("a", "b")], [("a", "b"), ("b", "c")])
    assert weights == {("a",): 1.0, ("a", "b"): 3.0}


def small_state(selection: str) -> tuple[MarginalsStage, PipelineState]:
    data = chain_data(3000, seed=2)
    schema = parse_schema({"columns": [
        {"name": a, "kind": "integer", "lower": 0, "upper": 3} for a in data.domain.attributes
    ]}, "t")
    encoder = TableEncoder(schema)
    context = PlanContext(encoder.domain, "add_remove", 1e-6)
    stage = MarginalsStage({"selection": selection, "iterations": 200,
                            "aim_round_iterations": 20}, context, "t")
    return stage, PipelineState(context, encoder, data)


@pytest.mark.parametrize("selection", ["mst", "aim"])
def test_ledger_events_spend_exactly_the_planned_zcdp(selection: str) -> None:
    stage, state = small_state(selection)
    plan = stage.plan(0.5)
    ledger = Ledger()
    stage.run(state, plan, ledger, RandomSource.seeded(4))
    spent = sum(
        e.count / (2 * e.noise_multiplier**2) if e.kind == "discrete_gaussian"
        else e.count * e.epsilon**2 / 8
        for e in ledger.events
    )
    assert spent == pytest.approx(0.5, rel=1e-9)
    assert ledger.epsilon(1e-6) <= 1.0001 * plan_epsilon(plan)
    selected = [e for e in ledger.events if e.kind == "exponential"]
    assert selected, "selection must be recorded"


def plan_epsilon(plan) -> float:
    ledger = Ledger()
    ledger.extend(plan.events)
    return ledger.epsilon(1e-6)


def test_correlated_model_beats_independent_baseline_at_large_budget() -> None:
    errors = {}
    for selection in ("one_way", "mst"):
        stage, state = small_state(selection)
        stage.run(state, stage.plan(50.0), Ledger(), RandomSource.seeded(5))
        truth = state.data.marginal(["a", "b"])
        errors[selection] = np.abs(state.model.project(["a", "b"]) - truth).sum()
    assert errors["mst"] < 0.1 * errors["one_way"]
