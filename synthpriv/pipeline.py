"""Build a recipe's stages, plan them, and run them in order with one Ledger. Nothing else."""

from __future__ import annotations

import math
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from dataclasses import replace

import pandas as pd

from synthpriv.config import Job
from synthpriv.domain_stage import (
    DomainStage,
    SmallTableBranch,
    bounds_rows,
    planning_domain,
    with_domain_step,
)
from synthpriv.errors import ConfigError
from synthpriv.persons import relation_label
from synthpriv.plan import Plan, make_plan, plan_at, stage_plans
from synthpriv.privacy.accountant import Ledger, UnboundedError, unrun_events
from synthpriv.privacy.calibration import calibrate_scale, plan_epsilon, priced_in_closed_form
from synthpriv.privacy.domain_budget import (
    branch_padding,
    small_table_below,
    small_table_share,
    thresholds_delta,
    total_rho,
)
from synthpriv.privacy.randomness import RandomSource
from synthpriv.recipe import Recipe, load_recipe
from synthpriv.schema import AutoColumn, NumericColumn
from synthpriv.stage import STAGES, PipelineState, PlanContext, Stage

# Stage name → the module that registers it. A module is imported only when a recipe names its
# stage: the generator stage imports torch and opacus (seconds), which an AIM job never needs.
STAGE_MODULES = {
    "marginals": "synthpriv.marginals.stage",
    "generator": "synthpriv.generators.stage",
    "sample": "synthpriv.sampling",
}
STAGES.declare(STAGE_MODULES)


def build_stages(job: Job, recipe: Recipe, context: PlanContext) -> list[tuple[Stage, float]]:
    """The recipe's stages with the config's option overrides applied, and their shares."""
    overrides = dict(job.config.pipeline.stages)
    stages = []
    for entry in recipe.stages:
        if entry.stage not in STAGES:
            raise ConfigError(
                f"recipe '{recipe.name}' names an unknown stage '{entry.stage}'. "
                f"Known stages: {STAGES.names}."
            )
        options = {**entry.options, **overrides.pop(entry.stage, {})}
        stages.append((STAGES[entry.stage](options, context, job.source), entry.share))
    if overrides:
        raise ConfigError(
            f"{job.source}: pipeline.stages names stage(s) {sorted(overrides)} that recipe "
            f"'{recipe.name}' does not run. Its stages: {[s.stage for s in recipe.stages]}."
        )
    return stages


def plan_context(job: Job) -> PlanContext:
    budget = job.config.budget
    return PlanContext(
        domain=planning_domain(job.schema),
        neighbouring=budget.neighbouring,
        delta=budget.delta,
        # data.person: the bounded table's row count is not public (it depends on each person's
        # rows), so the stages use their noisy count of it, never data.public_records
        public_records=None if job.config.data.person is not None else job.config.data.public_records,
        # public: the config's k with data.person (every sensitivity × k); None: per row
        rows_per_person=None if job.config.data.person is None else job.config.data.contribution_bound,
        # an auto column may be decided numeric: it then adapts (so the plan buys n̂ for it)
        adaptive=frozenset(c.name for c in job.schema.modelled
                           if (isinstance(c, NumericColumn) and c.adaptive)
                           or isinstance(c, AutoColumn)),
    )


def plan_job(job: Job) -> tuple[Plan, list[tuple[Stage, float]]]:
    """Plan the job from public information only (config, schema, recipe)."""
    context = plan_context(job)
    recipe = load_recipe(job.config.pipeline.recipe, job.base_dir)
    stages = with_domain_step(job, context, build_stages(job, recipe, context))
    check_contracts(job, recipe.name, [stage for stage, _ in stages])
    plan = _calibrated(job, recipe, stages)
    records = context.public_records
    if (isinstance(stages[0][0], DomainStage) and job.config.budget.domain_share is None
            and records is not None):
        # the small-table rule (privacy.domain_budget.small_table_share): public figures only
        default = plan.stages[0]
        share = small_table_share(default.share, bounds_rows(default.noise), records)
        if share != default.share:
            stages = with_domain_step(job, context, build_stages(job, recipe, context), share)
            plan = _calibrated(job, recipe, stages)
            stated = replace(plan.stages[0], noise={  # the rule's figures, in the plan
                **plan.stages[0].noise, "default_share": default.share,
                "default_bounds_rows": bounds_rows(default.noise)})
            plan = replace(plan, stages=[stated, *plan.stages[1:]])
    elif (isinstance(stages[0][0], DomainStage) and job.config.budget.domain_share is None
          and records is None):
        plan = small_table_branch(job, recipe, context, plan, stages)
    return plan, stages


def small_table_branch(job: Job, recipe: Recipe, context: PlanContext, plan: Plan,
                       stages: list[tuple[Stage, float]]) -> Plan:
    """Without a public row count: the small-table rule's branch, planned now (no data read)
    and chosen in the run from the DP n̂ (privacy.domain_budget, "The small-table rule without a
    public row count": the privacy argument). Attached to the domain step (``small``) and stated
    in the plan's domain row (``small_table_below``: n̂ at or below which it runs, its share and
    σ). Live only with auto columns (their kinds pass gives n̂), DP bounds to buy, and a plan
    priced by the zCDP closed form (its bound is the same for both branches); else ``plan``."""
    default, domain = plan.stages[0], stages[0][0]
    rows = bounds_rows(default.noise)
    if not domain.kinds or rows is None or not priced_in_closed_form(events_of(plan)):
        return plan
    below = small_table_below(rows)
    share = small_table_share(default.share, rows, math.floor(below))
    if share == default.share:
        return plan
    small = with_domain_step(job, context, build_stages(job, recipe, context), share)
    small[0][0].kind_scale = default.share / share  # the kinds pass as the default plans it
    # its thresholds split the δ the default's spend (integer thresholds spend ≤ their share):
    # so it never spends more, and the default plan (every large table's) stays as calibrated
    small[0][0].delta = thresholds_delta(list(default.events))
    budget = job.config.budget
    scale = total_rho(default.rho, default.share)  # the default plan's total ρ: both branches'

    def events(branch: list[tuple[Stage, float]], t: float) -> list:
        return [e for p in stage_plans(branch, t) for e in p.events]

    if thresholds_delta(events(small, scale)) > thresholds_delta(events(stages, scale)):
        # the small branch spends the larger δ (its recipe's thresholds): calibrate the
        # job's scale on it (the worse)
        scale = calibrate_scale(lambda t: max(events(stages, t), events(small, t),
                                              key=thresholds_delta),
                                budget.epsilon, budget.delta, budget.neighbouring)
    plans = [replace(plan_at(branch, scale, budget.epsilon, budget.delta, budget.neighbouring),
                     unit=plan.unit) for branch in (stages, small)]
    padded = []
    for mine, other in (plans, plans[::-1]):
        pad = branch_padding(list(events_of(mine)), list(events_of(other)))
        domain_plan = replace(mine.stages[0], events=(*mine.stages[0].events, *pad))
        stages_ = [domain_plan, *mine.stages[1:]]
        padded.append(replace(mine, stages=stages_, epsilon=plan_epsilon(
            [e for p in stages_ for e in p.events], budget.delta, budget.neighbouring)))
    if max(p.epsilon for p in padded) > budget.epsilon * (1 + 1e-9):
        raise RuntimeError(f"internal error: a small-table branch costs ε = "
                           f"{max(p.epsilon for p in padded)} > {budget.epsilon}")
    default_plan, branch = padded
    below = small_table_below(bounds_rows(default_plan.stages[0].noise))  # at the final scale
    domain.small = SmallTableBranch(branch, small, below)
    figures = {"small_table_below": below, "small_table_share": share,
               "small_table_sigma": branch.stages[0].noise["sigma"]}
    return replace(default_plan, stages=[
        replace(default_plan.stages[0], noise={**default_plan.stages[0].noise, **figures}),
        *default_plan.stages[1:]])


def events_of(plan: Plan) -> list:
    """Every planned event of ``plan``'s stages."""
    return [e for stage in plan.stages for e in stage.events]


def _calibrated(job: Job, recipe: Recipe, stages: list[tuple[Stage, float]]) -> Plan:
    """``make_plan`` of the job's stages, with the error a relation it cannot bound raises."""
    budget = job.config.budget
    try:
        plan = make_plan(stages, budget.epsilon, budget.delta, budget.neighbouring)
        plan = replace(plan, unit=relation_label(budget.neighbouring, job.config.data.person,
                                                 job.config.data.contribution_bound))
    except UnboundedError as error:
        raise ConfigError(
            f"{job.source}: recipe '{recipe.name}' cannot be accounted under budget.neighbouring: "
            f"{budget.neighbouring} ({error}). Use budget.neighbouring: add_remove with this "
            "recipe, or a recipe whose events all have a bound under replace_one (aim, mst, "
            "independent, dpsgd)."
        ) from None
    return plan


def check_contracts(job: Job, recipe: str, stages: list[Stage]) -> None:
    """Refuse, before any data is read, a recipe whose stages cannot run in its order: each
    stage's ``requires`` must be provided by the engine (counts; rows only on the local engine)
    or by a stage before it, and the recipe must end with synthetic rows to release."""
    check_person_level(job, recipe, stages)
    available = {"counts"}
    if job.config.data.engine == "dask":
        needing = [stage.name for stage in stages if stage.needs_rows]
        if needing:
            raise ConfigError(
                f"{job.source}: recipe '{recipe}' has stage(s) {needing}, which train on the "
                "rows; the 'dask' engine keeps rows on its workers (only counts come back). Use "
                "data.engine: local with this recipe, or a marginal recipe (aim, mst, "
                "independent)."
            )
    else:
        available.add("rows")
    for stage in stages:
        missing = sorted(stage.requires - available)
        if missing:
            raise ConfigError(f"{job.source}: recipe '{recipe}': {stage.missing(missing[0])}.")
        available |= stage.provides
    if "synthetic" not in available:
        raise ConfigError(
            f"{job.source}: recipe '{recipe}' releases nothing: no stage provides the synthetic "
            "rows. End the recipe with the 'sample' stage."
        )


def check_person_level(job: Job, recipe: str, stages: list[Stage]) -> None:
    """With data.person, refuse (before any data is read) a stage whose sensitivity does not
    follow the per-person bound (``Stage.person_level``): it would run at row level, and the
    guarantee per person would be false."""
    person = job.config.data.person
    row_level = [stage.name for stage in stages if not stage.person_level]
    if person is not None and row_level:
        raise ConfigError(
            f"{job.source}: data.person is set, but recipe '{recipe}' has stage(s) {row_level} "
            "whose sensitivity is one row's, not one person's. Use a recipe whose stages are "
            "all person-level (aim, mst, independent, dpsgd, hybrid) with data.person, or remove "
            "data.person for a per-row guarantee.")


def resolve_domain(
    job: Job, planned: tuple[Plan, list[tuple[Stage, float]]], ledger: Ledger,
    source: RandomSource, chunks: list[pd.DataFrame] | None = None,
) -> tuple[Job, tuple[Plan, list[tuple[Stage, float]]]]:
    """Run the plan's domain step, if it has one (synthpriv.domain_stage), on the job's table
    (or ``chunks`` of it), recording in ``ledger``: the job with its DP domain, and its stages
    rebuilt on it (their size checks see the real domain; the plan's noise stays as planned)."""
    plan, stages = planned
    if not stages or not isinstance(stages[0][0], DomainStage):
        return job, planned
    domain_step = stages[0]
    resolved = domain_step[0].resolve(job, plan.stages[0], ledger, source, chunks)
    if (small := domain_step[0].small) is not None:  # the branch n̂ chose, stated (n̂ is DP)
        if domain_step[0].small_taken:
            plan, stages = small.plan, small.stages
            domain_step = (domain_step[0], stages[0][1])
        chosen = {**plan.stages[0].noise, "small_table_below": small.below,
                  "dp_records": domain_step[0].records_estimate,
                  "small_table_taken": float(domain_step[0].small_taken)}
        plan = replace(plan, stages=[replace(plan.stages[0], noise=chosen), *plan.stages[1:]])
    rebuilt = build_stages(resolved, load_recipe(job.config.pipeline.recipe, job.base_dir),
                           plan_context(resolved))
    return resolved, (plan, [domain_step] + [
        (stage, share) for (stage, _), (_, share) in zip(rebuilt, stages[1:], strict=True)])


def run_stages(
    stages: list[tuple[Stage, float]], plan: Plan, state: PipelineState, source: RandomSource,
    ledger: Ledger | None = None, step: Callable[[str], AbstractContextManager] | None = None,
) -> Ledger:
    """Run every stage in order; each records what it ran in the one Ledger returned (``ledger``
    when given: the domain step's events are in it already). ``step`` (the job object's timer)
    wraps each stage's run as ``stage:<name>``."""
    ledger = Ledger(plan.neighbouring) if ledger is None else ledger
    for (stage, _share), stage_plan in zip(stages, plan.stages, strict=True):
        start = len(ledger.accounted_events)
        with (step or _untimed)(f"stage:{stage.name}"):
            stage.run(state, stage_plan, ledger, source)
        if not isinstance(stage, DomainStage):  # the domain step records its plan in resolve
            # what the plan fixed but the stage did not run (a column decided text or id is
            # not modelled): recorded, so the ledger holds the plan whatever the kinds decided
            ledger.extend(unrun_events(stage_plan.events, ledger.accounted_since(start),
                                       f"stage '{stage.name}'"))
    spent = ledger.epsilon(plan.delta)
    if spent > plan.target_epsilon * (1 + 1e-9):
        raise RuntimeError(
            f"internal error: the stages spent ε = {spent} > budget {plan.target_epsilon}; "
            "nothing was released"
        )
    return ledger


def _untimed(name: str) -> AbstractContextManager:
    return nullcontext()
