"""Split a total (ε, δ) across stages and calibrate each stage's noise to fit it.

Budgets are split in zCDP ρ (which adds up under composition): stage i gets ρ_i = share_i · t.
The planner finds the largest t whose planned events, composed by the Ledger's own accountants,
stay within the target ε at δ. Stages with fixed noise (set explicitly in the config) cost what
they cost; if they alone exceed the budget, the plan is infeasible and the job refuses to start.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from synthpriv.errors import BudgetError
from synthpriv.privacy.accountant import PrivacyEvent
from synthpriv.privacy.calibration import (  # noqa: F401  (composed_epsilon: old import path)
    RELATIVE_TOLERANCE,
    calibrate_scale,
    composed_epsilon,
)
from synthpriv.stage import Stage, StagePlan


@dataclass(frozen=True)
class Plan:
    """Each stage's plan and the composed (ε, δ) of all planned events (immutable)."""

    stages: tuple[StagePlan, ...]
    epsilon: float
    delta: float
    target_epsilon: float
    neighbouring: str

    def __post_init__(self) -> None:
        object.__setattr__(self, "stages", tuple(self.stages))

    def to_dict(self) -> dict:
        return {
            "target_epsilon": self.target_epsilon,
            "planned_epsilon": self.epsilon,
            "delta": self.delta,
            "neighbouring": self.neighbouring,
            "stages": [
                {"stage": s.stage, "share": s.share, "rho": s.rho, "noise": dict(s.noise),
                 "fixed_noise": s.fixed}
                for s in self.stages
            ],
        }


def make_plan(
    stages: Sequence[tuple[Stage, float]], epsilon: float, delta: float, neighbouring: str
) -> Plan:
    """Calibrate every stage so the composed ε of the plan is ≤ ``epsilon`` (and within
    RELATIVE_TOLERANCE of the largest budget that fits)."""
    def plans_at(t: float) -> list[StagePlan]:
        plans = []
        for stage, share in stages:
            plan = stage.plan(share * t if stage.spends_budget else 0.0)
            plans.append(replace(plan, share=share))
        return plans

    def events_at(t: float) -> list[PrivacyEvent]:
        return [e for p in plans_at(t) for e in p.events]

    fixed_cost = composed_epsilon(events_at(0.0), delta, neighbouring)
    if fixed_cost > epsilon:
        raise BudgetError(
            f"the stages with fixed noise alone spend ε = {fixed_cost:.4g} at δ = {delta:g}, more "
            f"than the budget ε = {epsilon:g}. Raise budget.epsilon or the fixed noise, or remove "
            "the fixed noise so the planner can calibrate it."
        )
    adjustable = [p for p in plans_at(1.0) if p.share > 0 and not p.fixed and p.events]
    if not adjustable:
        plans = plans_at(0.0)
        return Plan(plans, fixed_cost, delta, epsilon, neighbouring)
    low = calibrate_scale(events_at, epsilon, delta, neighbouring)
    if low == 0.0:
        raise BudgetError(
            f"budget ε = {epsilon:g} at δ = {delta:g} is too small for this plan. Raise "
            "budget.epsilon or use a recipe with fewer stages."
        )
    plans = plans_at(low)
    planned = composed_epsilon([e for p in plans for e in p.events], delta, neighbouring)
    return Plan(plans, planned, delta, epsilon, neighbouring)
