"""The marginals stage measures with the noise the plan says and records what it ran."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

ATTRIBUTES = 20
CODES = 50


def state_for(rows: int, seed: int) -> PipelineState:
    schema = parse_schema(
        {"columns": [{"name": f"c{i}", "kind": "integer", "lower": 0, "upper": CODES - 1}
                     for i in range(ATTRIBUTES)]},
        "test",
    )
    encoder = TableEncoder(schema)
    codes = np.random.default_rng(seed).integers(0, CODES, size=(rows, ATTRIBUTES))
    context = PlanContext(encoder.domain, "add_remove", 1e-6)
    return PipelineState(context, encoder, Dataset(codes, encoder.domain))


@pytest.mark.parametrize("rho", [0.01, 1.0])
def test_measured_noise_has_the_planned_standard_deviation(rho: float) -> None:
    state = state_for(5000, seed=0)
    stage = MarginalsStage({"selection": "one_way"}, state.context, "test")
    plan = stage.plan(rho)
    sigma = plan.noise["sigma_one_way"]
    assert sigma == pytest.approx(np.sqrt(ATTRIBUTES / (2 * rho)))
    ledger = Ledger()
    stage.run(state, plan, ledger, RandomSource.seeded(11))
    noise = np.concatenate([
        m.noisy_counts - state.data.marginal(m.clique) for m in state.measurements
    ])
    cells = noise.size  # 1,000 cells
    # The sample variance of n Gaussian draws has relative std sqrt(2/(n-1)); allow 4 of them.
    assert abs(noise.var() / sigma**2 - 1) < 4 * np.sqrt(2 / (cells - 1))
    assert abs(noise.mean()) < 4 * sigma / np.sqrt(cells)
    assert np.array_equal(noise, np.round(noise))  # discrete Gaussian: integer noise
    assert len(ledger.events) == ATTRIBUTES
    assert all(isinstance(e, DiscreteGaussianEvent) for e in ledger.events)
    assert sum(1 / (2 * e.noise_multiplier**2) for e in ledger.events) == pytest.approx(rho)


def test_replace_one_doubles_the_histogram_variance() -> None:
    state = state_for(100, seed=1)
    add_remove = MarginalsStage({}, state.context, "test").plan(0.5)
    replace_context = PlanContext(state.context.domain, "replace_one", 1e-6)
    replace = MarginalsStage({}, replace_context, "test").plan(0.5)
    assert replace.noise["sigma_one_way"] ** 2 == pytest.approx(
        2 * add_remove.noise["sigma_one_way"] ** 2
    )


def test_independent_model_keeps_one_way_marginals_at_high_budget() -> None:
    state = state_for(20000, seed=2)
    stage = MarginalsStage({}, state.context, "test")
    stage.run(state, stage.plan(1e4), Ledger(), RandomSource.seeded(0))
    model = state.model
    assert model.total == pytest.approx(20000, abs=5)
    for attribute in ("c0", "c7"):
        truth = state.data.marginal([attribute]) / 20000
        np.testing.assert_allclose(model.project([attribute]) / model.total, truth, atol=1e-3)
