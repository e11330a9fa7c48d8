"""The planner: calibration hits the target within its tolerance and never exceeds it."""

from __future__ import annotations

import pytest

from synthpriv.config import load_job
from synthpriv.errors import BudgetError
from synthpriv.pipeline import plan_job
from synthpriv.plan import RELATIVE_TOLERANCE
from synthpriv.privacy.accountant import Ledger


@pytest.mark.parametrize("epsilon", [0.1, 1.0, 10.0])
def test_calibration_hits_the_target_and_never_exceeds_it(write_job, epsilon: float) -> None:
    job = load_job(write_job({"budget": {"epsilon": epsilon, "delta": 1e-6}}))
    plan, _ = plan_job(job)
    ledger = Ledger()
    ledger.extend(e for stage in plan.stages for e in stage.events)
    spent = ledger.epsilon(1e-6)
    assert spent == pytest.approx(plan.epsilon)
    assert spent <= epsilon
    # Within tolerance: ε grows at most linearly-ish in ρ near the target, so a relative
    # gap of RELATIVE_TOLERANCE in ρ is well under 1% in ε.
    assert spent >= epsilon * (1 - 0.01)
    assert RELATIVE_TOLERANCE <= 1e-3


def test_more_budget_means_less_noise(write_job) -> None:
    small, _ = plan_job(load_job(write_job({"budget": {"epsilon": 0.5, "delta": 1e-6}})))
    large, _ = plan_job(load_job(write_job({"budget": {"epsilon": 2.0, "delta": 1e-6}})))
    assert small.stages[0].noise["sigma_one_way"] > 3 * large.stages[0].noise["sigma_one_way"]


def test_fixed_noise_beyond_the_budget_refuses_to_start(write_job) -> None:
    job = load_job(write_job({"pipeline": {"recipe": "independent",
                                           "stages": {"marginals": {"sigma": 0.5}}}}))
    with pytest.raises(BudgetError, match=r"fixed noise alone spend ε = .* more than the budget"):
        plan_job(job)


def test_fixed_noise_within_the_budget_is_kept(write_job) -> None:
    job = load_job(write_job({"pipeline": {"recipe": "independent",
                                           "stages": {"marginals": {"sigma": 50.0}}}}))
    plan, _ = plan_job(job)
    assert plan.stages[0].noise["sigma_one_way"] == 50.0
    assert plan.epsilon < 1.0


def test_a_stage_plan_cannot_be_changed_once_made(write_job) -> None:
    """Immutable plans (issue 14, item 4): no field, event list or noise figure can be altered
    after planning, and a plan survives pickling (to the shadow attack's workers) unchanged."""
    import copy
    import dataclasses
    import pickle

    plan, _ = plan_job(load_job(write_job({"pipeline": {"recipe": "mst"}})))
    stage = plan.stages[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        stage.rho = 2 * stage.rho
    with pytest.raises(dataclasses.FrozenInstanceError):
        plan.epsilon = 0.0
    with pytest.raises(AttributeError):
        stage.events.append(stage.events[0])
    for change in (lambda n: n.__setitem__("sigma_one_way", 1.0), lambda n: n.update(x=1.0),
                   lambda n: n.pop("sigma_one_way"), lambda n: n.clear()):
        with pytest.raises(TypeError, match="cannot be changed once planned"):
            change(stage.noise)
    with pytest.raises(TypeError):
        plan.stages[0] = stage
    assert pickle.loads(pickle.dumps(plan)) == plan == copy.deepcopy(plan)
