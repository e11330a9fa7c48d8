"""The plan's ε against the run's Ledger (issues 25, 26): equal for the marginal recipes at
every ε, never below it anywhere, and found fast at huge ε."""

from __future__ import annotations

from pathlib import Path

import pytest

from synthpriv.config import load_job
from synthpriv.errors import BudgetError
from synthpriv.pipeline import plan_job
from synthpriv.plan import RELATIVE_TOLERANCE
from synthpriv.privacy.accountant import (
    PLD_MAX_EPSILON,
    DiscreteGaussianEvent,
    ExponentialEvent,
    Ledger,
    ZCDPEvent,
)
from synthpriv.privacy.calibration import calibrate_scale, composed_epsilon, plan_epsilon
from synthpriv.privacy.conversions import exponential_epsilon, gaussian_noise_multiplier

CONFIGS = Path(__file__).resolve().parents[2] / "configs"


def ledger_of(events: list, neighbouring: str) -> Ledger:
    ledger = Ledger(neighbouring)
    ledger.extend(events)
    return ledger


@pytest.mark.parametrize("config", ["adult.yaml", "adult-mst.yaml"])
@pytest.mark.parametrize("epsilon", [0.3, 1.0, 10.0, 1e4, 1e7])
def test_the_plans_epsilon_is_the_ledgers(config: str, epsilon: float) -> None:
    """AIM (a zCDP reservation) and MST (exponential selections) from ε = 0.3 to 1e7: the
    Ledger on the planned events reports exactly the plan's ε, within the budget and close."""
    plan, _ = plan_job(load_job(CONFIGS / config).with_budget(epsilon, None))
    events = [e for stage in plan.stages for e in stage.events]
    spent = ledger_of(events, plan.neighbouring).epsilon(plan.delta)
    assert plan.epsilon == pytest.approx(spent, rel=1e-9)
    assert epsilon * (1 - 0.01) <= spent <= epsilon * (1 + 1e-9)


def test_a_plan_where_pld_is_tighter_is_conservative_never_weaker() -> None:
    """Discrete Gaussians with one cheap selection: the Ledger's PLD beats RDP there, so the
    plan (priced by RDP) reports more than the Ledger; never less."""
    events = [DiscreteGaussianEvent(2.0, 40), ExponentialEvent(1e-4)]
    ledger = ledger_of(events, "add_remove")
    bounds = ledger.epsilon_bounds(1e-6)
    assert bounds["pld"] < bounds["rdp"]
    assert plan_epsilon(events, 1e-6, "add_remove") == pytest.approx(bounds["rdp"], rel=1e-9)
    assert plan_epsilon(events, 1e-6, "add_remove") > ledger.epsilon(1e-6)


def test_gaussian_releases_alone_are_priced_by_the_ledger_pld_included() -> None:
    events = [DiscreteGaussianEvent(2.0, 40)]
    ledger = ledger_of(events, "replace_one")
    assert ledger.epsilon_bounds(1e-6)["pld"] < ledger.epsilon_bounds(1e-6)["rdp"]
    assert plan_epsilon(events, 1e-6, "replace_one") == ledger.epsilon(1e-6)


@pytest.mark.parametrize("epsilon", [1e4, 3e5, 1e7])
def test_calibration_at_huge_epsilon_takes_few_steps(epsilon: float) -> None:
    """MST-like events (thirds of t) up to ε = 1e7: the search ends in a bounded number of
    plan evaluations, within the budget and within RELATIVE_TOLERANCE of the largest t."""
    calls = []

    def events_at(t: float) -> list:
        calls.append(t)
        return [DiscreteGaussianEvent(gaussian_noise_multiplier(t / 3, 14), 14),
                ExponentialEvent(exponential_epsilon(t / 3, 13), 13),
                DiscreteGaussianEvent(gaussian_noise_multiplier(t / 3, 13), 13)]

    t = calibrate_scale(events_at, epsilon, 1e-6, "add_remove")
    assert len(calls) < 60
    assert composed_epsilon(events_at(t), 1e-6, "add_remove") <= epsilon
    assert composed_epsilon(events_at(t * (1 + RELATIVE_TOLERANCE)), 1e-6, "add_remove") > epsilon


def test_a_cost_that_does_not_grow_is_refused_in_one_line() -> None:
    with pytest.raises(BudgetError, match=r"^budget ε = 10: .*does not grow with its budget[^\n]*$"):
        calibrate_scale(lambda t: [ZCDPEvent(1e-3)], 10.0, 1e-6, "add_remove")


@pytest.mark.parametrize(("epsilon", "skipped"), [(10.0, False), (1e4, True)])
def test_the_ledger_skips_pld_only_above_its_limit(epsilon: float, skipped: bool) -> None:
    """At ε = 1e4 the Ledger reports RDP alone (its PLD grid would take minutes: issue 25) and
    says so in the manifest; at ε = 10 it composes both."""
    rho = epsilon / 3  # RDP ε of ρ-zCDP is above ρ
    events = [DiscreteGaussianEvent(gaussian_noise_multiplier(rho / 2, 14), 14),
              ExponentialEvent(exponential_epsilon(rho / 2, 13), 13)]
    record = ledger_of(events, "add_remove").to_dict(1e-6)
    assert (record["epsilon_rdp"] > PLD_MAX_EPSILON) == skipped
    assert (record["epsilon_pld"] is None) == skipped
    assert ("PLD is not computed" in record["bounds_note"]) == skipped
    assert record["epsilon"] == (record["epsilon_rdp"] if skipped else
                                 min(record["epsilon_rdp"], record["epsilon_pld"]))
