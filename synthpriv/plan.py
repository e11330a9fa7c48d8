"""Split a total (ε, δ) across stages and calibrate each stage's noise to fit it.

Budgets are split in zCDP ρ (which adds up under composition): stage i gets ρ_i = share_i · t.
The planner finds the largest t whose planned events, priced as the Ledger prices them (or
above it: ``calibration.plan_epsilon``), stay within the target ε at δ. Stages with fixed noise
(set explicitly in the config) cost what they cost; if they alone exceed the budget, the plan is
infeasible and the job refuses to start.
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
    plan_epsilon,
)
from synthpriv.stage import Stage, StagePlan


@dataclass(frozen=True, repr=False)
class Plan:
    """Each stage's plan and the composed (ε, δ) of all planned events (immutable). Printed, it
    reads as ``synthpriv plan`` prints it (``describe``); in a notebook, as a table."""

    stages: tuple[StagePlan, ...]
    epsilon: float
    delta: float
    target_epsilon: float
    neighbouring: str
    unit: str = ""  # the relation as printed: "add_remove, per person (up to k rows)" (data.person)

    def __post_init__(self) -> None:
        object.__setattr__(self, "stages", tuple(self.stages))

    def describe(self, delta_is_default: bool = False) -> str:
        """The plan as ``synthpriv plan`` prints it; ``delta_is_default``: the config gave no δ."""
        default = " (default: budget.delta not given)" if delta_is_default else ""
        lines = [
            f"budget: ε = {self.target_epsilon:g}, δ = {self.delta:g}{default} "
            f"({self.unit or self.neighbouring})",
            f"{'stage':<12} {'share':>6} {'rho (zCDP)':>12}  noise",
        ]
        for stage in self.stages:
            lines.append(f"{stage.stage:<12} {stage.share:>6.2f} {stage.rho:>12.5g}  "
                         f"{_noise_text(stage)}")
        lines.append(f"composed plan: ε = {self.epsilon:.4f} at δ = {self.delta:g}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return self.describe()

    def _repr_html_(self) -> str:
        """The plan as an HTML table (Jupyter shows it so)."""
        from html import escape

        rows = "".join(
            f"<tr><td>{escape(s.stage)}</td><td>{s.share:.2f}</td><td>{s.rho:.5g}</td>"
            f"<td>{escape(_noise_text(s))}</td></tr>" for s in self.stages)
        return (f"<p>budget: ε = {self.target_epsilon:g}, δ = {self.delta:g} "
                f"({escape(self.unit or self.neighbouring)}); composed plan: ε = {self.epsilon:.4f}</p>"
                "<table><tr><th>stage</th><th>share</th><th>ρ (zCDP)</th><th>noise</th></tr>"
                f"{rows}</table>")

    def to_dict(self) -> dict:
        return {
            "target_epsilon": self.target_epsilon,
            "planned_epsilon": self.epsilon,
            "delta": self.delta,
            "neighbouring": self.neighbouring,
            **({"unit": self.unit} if self.unit and self.unit != self.neighbouring else {}),
            "stages": [
                {"stage": s.stage, "share": s.share, "rho": s.rho, "noise": dict(s.noise),
                 "fixed_noise": s.fixed}
                for s in self.stages
            ],
        }


def _noise_text(stage: StagePlan) -> str:
    noise = ", ".join(f"{k} = {v:.4g}" for k, v in stage.noise.items()) or "none (no data access)"
    return noise + (" [fixed by config]" if stage.fixed else "")


def make_plan(
    stages: Sequence[tuple[Stage, float]], epsilon: float, delta: float, neighbouring: str
) -> Plan:
    """Calibrate every stage so the composed ε of the plan is ≤ ``epsilon`` (and within
    RELATIVE_TOLERANCE of the largest budget that fits)."""
    def plans_at(t: float) -> list[StagePlan]:
        return stage_plans(stages, t)

    def events_at(t: float) -> list[PrivacyEvent]:
        return [e for p in plans_at(t) for e in p.events]

    fixed_cost = plan_epsilon(events_at(0.0), delta, neighbouring)
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
    return plan_at(stages, low, epsilon, delta, neighbouring)


def stage_plans(stages: Sequence[tuple[Stage, float]], t: float) -> list[StagePlan]:
    """Each stage planned on its share of the scale ``t`` (zCDP ρ; fixed-noise stages on 0)."""
    plans = []
    for stage, share in stages:
        plan = stage.plan(share * t if stage.spends_budget else 0.0)
        plans.append(replace(plan, share=share))
    return plans


def plan_at(
    stages: Sequence[tuple[Stage, float]], t: float, epsilon: float, delta: float,
    neighbouring: str,
) -> Plan:
    """The plan of ``stages`` at the scale ``t`` (``make_plan``'s calibrated one, or another
    branch's at the same t: pipeline's small-table branch), priced as ``make_plan`` prices it."""
    plans = stage_plans(stages, t)
    planned = plan_epsilon([e for p in plans for e in p.events], delta, neighbouring)
    return Plan(plans, planned, delta, epsilon, neighbouring)
