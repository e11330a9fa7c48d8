"""Run a job end to end: plan (public), read and encode (sensitive), stages, atomic release."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.config import Job
from synthpriv.encoding import TableEncoder
from synthpriv.errors import BudgetError, DataError
from synthpriv.pipeline import plan_job, run_stages
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.plan import Plan
from synthpriv.privacy.randomness import RandomSource
from synthpriv.release import check_target, release_lock, write_release
from synthpriv.stage import PipelineState, Stage
from synthpriv.table import read_table

VERSIONED_PACKAGES = ("synthpriv", "numpy", "pandas", "dp-accounting", "torch", "opacus", "sdv")
GUARANTEE = (
    "({epsilon:.4g}, {delta:g})-differential privacy for every individual row, where neighbouring "
    "tables differ by {relation}. The schema (column names, domains, bins) and the config are "
    "public and not protected."
)
RELATIONS = {"add_remove": "adding or removing one row", "replace_one": "replacing one row"}


@dataclass
class RunResult:
    out_dir: Path
    ledger: Ledger
    plan: Plan
    synthetic: pd.DataFrame
    manifest: dict
    real: pd.DataFrame
    held_back: pd.DataFrame | None = None  # rows kept from the generator for evaluation only


def package_versions() -> dict[str, str]:
    versions = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = "not installed"
    return versions


def check_delta(job: Job, records: int) -> None:
    """Refuse δ ≥ 1/n unless the config allows it (the standard guidance is δ ≪ 1/n)."""
    budget = job.config.budget
    n = job.config.data.public_records or records
    if budget.delta >= 1.0 / n and not budget.allow_large_delta:
        raise BudgetError(
            f"budget.delta = {budget.delta:g} is not below 1/n = {1.0 / n:.3g} for this table: such a "
            "δ allows releasing a whole row. Choose δ ≪ 1/n (e.g. 1e-6), or set "
            "budget.allow_large_delta: true if you know why."
        )


def build_manifest(
    job: Job, plan: Plan, ledger: Ledger, state: PipelineState, source: RandomSource
) -> dict:
    """The manifest: a fixed allow-list of fields, none computed from the raw table outside a
    mechanism, and never the noise seed."""
    budget = job.config.budget
    config = job.config.model_dump(mode="json", by_alias=True, exclude={"seed"})
    reported = ledger.epsilon(budget.delta)
    randomness = (
        {"mode": "seeded", "warning": "SEEDED RUN: reproducible noise, NOT FOR RELEASE. The seed "
         "is not recorded here, but whoever knows it can subtract the noise."}
        if source.is_seeded
        else {"mode": "secure", "source": "operating-system CSPRNG (os.urandom)"}
    )
    return {
        "synthpriv_manifest": 1,
        "job": job.config.name,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "guarantee": {
            "epsilon": reported,
            "delta": budget.delta,
            "neighbouring": budget.neighbouring,
            "statement": GUARANTEE.format(
                epsilon=reported, delta=budget.delta, relation=RELATIONS[budget.neighbouring]
            ),
        },
        "ledger": ledger.to_dict(budget.delta),
        "plan": plan.to_dict(),
        "records": {"released": int(len(state.synthetic)), "source": state.records_source},
        "randomness": randomness,
        "config": config,
        "schema": job.schema.model_dump(mode="json"),
        "versions": package_versions(),
    }


@dataclass
class Synthesis:
    """What one run of the stages produced (nothing written yet)."""

    plan: Plan
    ledger: Ledger
    state: PipelineState
    synthetic: pd.DataFrame


def synthesise(
    job: Job,
    real: pd.DataFrame,
    source: RandomSource,
    planned: tuple[Plan, list[tuple[Stage, float]]] | None = None,
) -> Synthesis:
    """Run the job's stages on ``real`` (already read and checked) with one Ledger; no release.

    ``planned`` = ``plan_job(job)`` when the caller runs the same job many times (stages are
    stateless; planning calibrates noise and takes about a second). The evaluation's shadow-model
    attack and the sweep re-run the same pipeline through this.
    """
    plan, stages = plan_job(job) if planned is None else planned
    encoder = TableEncoder(job.schema)
    state = PipelineState(
        context=stages[0][0].context, encoder=encoder, data=encoder.encode(real),
        requested_records=job.config.pipeline.records,
    )
    ledger = run_stages(stages, plan, state, source)
    return Synthesis(plan, ledger, state, state.synthetic[list(real.columns)])


def job_source(job: Job) -> RandomSource:
    """Secure noise, or seeded noise (NOT FOR RELEASE) when the config sets a seed."""
    seed = job.config.seed
    return RandomSource.secure() if seed is None else RandomSource.seeded(seed)


def hold_back(
    job: Job, real: pd.DataFrame, source: RandomSource
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Split off ``evaluation.holdout_fraction`` of the rows when the config names no holdout
    file, so the attacks have real non-members; the generator never sees them. The split is
    data-independent, so the release stays (ε, δ)-DP with respect to the whole input table."""
    evaluation = job.config.evaluation
    fraction = evaluation.holdout_fraction
    if fraction is None or not evaluation.enabled or job.config.data.holdout is not None:
        return real, None
    order = source.numpy_generator().permutation(len(real))
    cut = int(round(fraction * len(real)))
    if cut < 2 or len(real) - cut < 2:
        raise DataError(
            f"evaluation.holdout_fraction = {fraction:g} of {len(real)} rows leaves fewer than two "
            "rows on one side. Choose a fraction that keeps both parts at two rows or more."
        )
    keep, held = np.sort(order[cut:]), np.sort(order[:cut])
    return real.iloc[keep].reset_index(drop=True), real.iloc[held].reset_index(drop=True)


def run_job(
    job: Job, *, out: Path | None = None, force: bool = False, source: RandomSource | None = None
) -> RunResult:
    """Plan, read, synthesise and release one job. Nothing is written unless all succeeds."""
    out_dir = job.output_dir(out)
    check_target(out_dir, force)
    planned = plan_job(job)  # fails on a bad plan before any data is read
    real = read_table(job.data_path, job.schema)
    check_delta(job, len(real))
    source = job_source(job) if source is None else source
    real, held_back = hold_back(job, real, source)
    run = synthesise(job, real, source, planned)
    manifest = build_manifest(job, run.plan, run.ledger, run.state, source)
    with release_lock(out_dir):
        write_release(out_dir, run.synthetic, manifest, force)
    return RunResult(out_dir, run.ledger, run.plan, run.synthetic, manifest, real, held_back)
