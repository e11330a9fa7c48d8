"""Run a job end to end: plan (public), read and encode (sensitive), stages, atomic release."""

from __future__ import annotations

import contextlib
import platform
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from importlib import metadata
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.chunks import file_header, is_parquet, iter_chunks
from synthpriv.config import Job
from synthpriv.domain import CountSource
from synthpriv.domain_stage import conform
from synthpriv.encoding import TableEncoder
from synthpriv.engines import open_counts
from synthpriv.errors import BudgetError
from synthpriv.pipeline import plan_job, resolve_domain, run_stages
from synthpriv.plan_warnings import plan_messages
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.plan import Plan
from synthpriv.privacy.randomness import RandomSource
from synthpriv.release import SYNTHETIC, check_target, release_lock, write_release
from synthpriv.sampling import SyntheticRows
from synthpriv.stage import PipelineState, Stage
from synthpriv.table import read_table

VERSIONED_PACKAGES = ("synthpriv", "numpy", "pandas", "dp-accounting", "torch", "opacus", "sdv")
GUARANTEE = (
    "({epsilon:.4g}, {delta:g})-differential privacy for every individual row, where neighbouring "
    "tables differ by {relation}. The schema (column names, domains, bins) and the config are "
    "public and not protected, except the bounds and categories a DP domain step chose (its "
    "events are in the ledger), which this guarantee covers."
)
SEEDED_STATEMENT = (
    "NO GUARANTEE: this is a seeded run. Whoever knows the seed can recompute the noise and "
    "subtract it, so the release is not differentially private. If the noise were secret (a "
    "research figure only), it would be: "
)
RELATIONS = {"add_remove": "adding or removing one row", "replace_one": "replacing one row"}


def guarantee_figures(guarantee: dict) -> tuple[float, float]:
    """(ε, δ) of a manifest's guarantee: the guarantee itself, or, for a seeded run (which has
    none), what it would be if the noise were secret."""
    if guarantee.get("epsilon") is not None:
        return float(guarantee["epsilon"]), float(guarantee["delta"])
    return float(guarantee["epsilon_if_noise_secret"]), float(guarantee["delta_if_noise_secret"])


@dataclass
class RunResult:
    """A landed release, and what evaluation needs to read beside it (never released)."""

    out_dir: Path
    ledger: Ledger
    plan: Plan
    manifest: dict
    job: Job
    records: int
    _kept: pd.DataFrame | None = None  # the released table when it was sampled in one block
    held_back: pd.DataFrame | None = None  # rows kept from the generator for evaluation only
    _members: pd.DataFrame | None = None  # the rows fitted, when a hold-back split them off

    @cached_property
    def synthetic(self) -> pd.DataFrame:
        """The released table: kept from sampling if it was one block, else read back."""
        if self._kept is not None:
            return self._kept
        return read_table(self.out_dir / SYNTHETIC, self.job.schema)

    @cached_property
    def real(self) -> pd.DataFrame:
        """The rows the generator was fitted on, read whole (for evaluation only)."""
        if self._members is not None:
            return self._members
        path, schema = self.job.data_path, self.job.schema
        if is_parquet(path):
            return pd.concat(list(iter_chunks(path, schema, self.job.config.data.chunk_rows)))
        return read_table(path, schema)


def guarantee_lines(manifest: dict) -> list[str]:
    """What the terminal says of a release's privacy: the guarantee (or, for a seeded run, that
    there is none), and which bound of the ledger it is."""
    guarantee, ledger = manifest["guarantee"], manifest["ledger"]
    epsilon, delta = guarantee_figures(guarantee)
    bounds = ", ".join(
        f"{name.upper()} {ledger[f'epsilon_{name}']:.4f}" if ledger[f"epsilon_{name}"] is not None
        else f"{name.upper()} not valid here (adaptive stage)" for name in ("rdp", "pld")
    )
    if guarantee["epsilon"] is None:
        return [f"privacy: NONE — seeded run, NOT FOR RELEASE (ε = {epsilon:.4f}, δ = {delta:g} "
                f"only if the noise were secret; {guarantee['neighbouring']}; ledger: {bounds})"]
    return [f"privacy: ε = {epsilon:.4f}, δ = {delta:g} ({guarantee['neighbouring']}; ledger: "
            f"{bounds}; reported: {ledger['bound'].upper()})"]


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
    job: Job, plan: Plan, ledger: Ledger, state: PipelineState, source: RandomSource,
    warnings: list[str] | None = None,
) -> dict:
    """The manifest: a fixed allow-list of fields, none computed from the raw table outside a
    mechanism, and never the noise seed. ``warnings``: the plan-time warnings (public inputs
    only). ``constraints`` (with schema constraints) counts the model's draws that broke each
    rule: the sampler fills it in as it draws, and the manifest is written after the rows."""
    budget = job.config.budget
    config = job.config.model_dump(mode="json", by_alias=True, exclude={"seed"})
    reported = ledger.epsilon(budget.delta)
    randomness = (
        {"mode": "seeded", "warning": "SEEDED RUN: reproducible noise, NOT FOR RELEASE. The seed "
         "is not recorded here, but whoever knows it can subtract the noise."}
        if source.is_seeded
        else {"mode": "secure", "source": "operating-system CSPRNG (os.urandom)"}
    )
    guarantee = {
        "epsilon": reported,
        "delta": budget.delta,
        "neighbouring": budget.neighbouring,
        "statement": GUARANTEE.format(
            epsilon=reported, delta=budget.delta, relation=RELATIONS[budget.neighbouring]
        ),
    }
    if source.is_seeded:
        guarantee = {
            "epsilon": None,
            "delta": None,
            "neighbouring": budget.neighbouring,
            "statement": SEEDED_STATEMENT + guarantee["statement"],
            "epsilon_if_noise_secret": reported,
            "delta_if_noise_secret": budget.delta,
        }
    return {
        "synthpriv_manifest": 1,
        "job": job.config.name,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "guarantee": guarantee,
        "ledger": ledger.to_dict(budget.delta),
        "plan": plan.to_dict(),
        "records": {"released": int(len(state.synthetic)), "source": state.records_source},
        "randomness": randomness,
        "config": config,
        "schema": job.schema.model_dump(mode="json"),
        "plan_warnings": warnings or [],
        "constraints": getattr(state.synthetic, "enforcement", None),
        "versions": package_versions(),
    }


@dataclass
class Synthesis:
    """What one run of the stages produced (nothing written yet)."""

    plan: Plan
    ledger: Ledger
    state: PipelineState
    synthetic: SyntheticRows | pd.DataFrame


def synthesise(
    job: Job,
    data: CountSource,
    source: RandomSource,
    planned: tuple[Plan, list[tuple[Stage, float]]] | None = None,
    ledger: Ledger | None = None,
) -> Synthesis:
    """Run the job's stages on ``data`` (encoded counts) with one Ledger; no release.

    ``planned`` = ``plan_job(job)`` when the caller runs the same job many times (stages are
    stateless; planning calibrates noise and takes about a second). A job whose schema leaves a
    domain out comes here resolved (``resolve_domain``), with the ``ledger`` that holds the
    domain step's events.
    """
    plan, stages = plan_job(job) if planned is None else planned
    state = PipelineState(
        context=stages[-1][0].context, encoder=TableEncoder(job.schema), data=data,
        requested_records=job.config.pipeline.records,
    )
    ledger = run_stages(stages, plan, state, source, ledger)
    return Synthesis(plan, ledger, state, state.synthetic)


def synthesise_table(
    job: Job,
    real: pd.DataFrame,
    source: RandomSource,
    planned: tuple[Plan, list[tuple[Stage, float]]] | None = None,
) -> Synthesis:
    """``synthesise`` on a small table held in memory, its synthetic table as one DataFrame in
    ``real``'s column order. The sweep and the shadow-model attack re-run the pipeline so. A
    schema that leaves a domain out is resolved on ``real`` first (the domain step)."""
    planned = plan_job(job) if planned is None else planned
    ledger = Ledger(job.config.budget.neighbouring)
    job, planned = resolve_domain(job, planned, ledger, source, [real])
    real = conform(real, job.schema)
    run = synthesise(job, TableEncoder(job.schema).encode(real), source, planned, ledger)
    table = run.synthetic
    if isinstance(table, SyntheticRows):
        table = pd.concat(list(table), ignore_index=True)
    return Synthesis(run.plan, run.ledger, run.state, table[list(real.columns)])


def job_source(job: Job) -> RandomSource:
    """Secure noise, or seeded noise (NOT FOR RELEASE) when the config sets a seed."""
    seed = job.config.seed
    return RandomSource.secure() if seed is None else RandomSource.seeded(seed)


def holds_back(job: Job, evaluate: bool = True) -> bool:
    """True when the config asks to split non-members off the input (no holdout file) and the
    run evaluates: the held-back rows serve evaluation only, so a run without it (``--no-
    evaluation``, ``evaluate=False``) fits every row."""
    evaluation = job.config.evaluation
    return (
        evaluate and evaluation.holdout_fraction is not None and evaluation.enabled
        and job.config.data.holdout is None
    )


def hold_back(
    job: Job, real: pd.DataFrame, source: RandomSource
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Hold back each row independently with probability ``evaluation.holdout_fraction`` (when
    the config names no holdout file), so the attacks have real non-members; the generator never
    sees them.

    Privacy: the coin of each row is drawn on its own from the OS CSPRNG (``uniform_words``), so
    the fitted set of D ∪ {x} is the fitted set of D plus, possibly, x: an add/remove neighbour of
    the input gives an add/remove neighbour (or the same table) to the stages, and the release
    stays (ε, δ)-DP with respect to the whole input. A split of fixed size round(f·n) would not:
    adding x could *replace* a fitted row by x (privacy review, issue 12). The number of rows
    fitted is therefore Binomial(n, 1 − f), not a function of n, and nothing is refused on it."""
    if not holds_back(job):
        return real, None
    held = bernoulli_mask(len(real), job.config.evaluation.holdout_fraction, source)
    return (real.loc[~held].reset_index(drop=True), real.loc[held].reset_index(drop=True))


def bernoulli_mask(size: int, probability: float, source: RandomSource) -> np.ndarray:
    """``size`` independent coins, each True with probability ``probability`` (to within
    2⁻⁶⁴): a uniform 64-bit word from the source below ⌊p·2⁶⁴⌉."""
    threshold = np.uint64(min(round(probability * 2.0**64), 2**64 - 1))
    return source.uniform_words(size) < threshold


@contextlib.contextmanager
def open_input(
    job: Job, source: RandomSource, evaluate: bool = True
) -> Iterator[tuple[CountSource, pd.DataFrame | None, pd.DataFrame | None]]:
    """The input as a count source (streamed by the configured engine), with the fitted and the
    held-back rows when a hold-back split the table (that path reads the table whole)."""
    encoder = TableEncoder(job.schema)
    if not holds_back(job, evaluate):
        with open_counts(job, encoder) as data:
            yield data, None, None
        return
    members, held = hold_back(job, read_table(job.data_path, job.schema), source)
    yield encoder.encode(members), members, held


def run_job(
    job: Job, *, out: Path | None = None, force: bool = False, source: RandomSource | None = None,
    evaluate: bool = True,
) -> RunResult:
    """Plan, read, synthesise and release one job. Nothing is written unless all succeeds; the
    output's lock is held from the first check to the rename, so of two jobs writing the same
    release the second fails at once. ``evaluate=False`` (the CLI's ``--no-evaluation``): no
    evaluation follows, so ``evaluation.holdout_fraction`` holds nothing back."""
    out_dir = job.output_dir(out)
    check_target(out_dir, force)
    planned = plan_job(job)  # fails on a bad plan before any data is read
    warnings = plan_messages(job, *planned, evaluate, informational=False)
    columns = file_header(job.data_path, job.schema)
    source = job_source(job) if source is None else source
    with release_lock(out_dir):
        check_target(out_dir, force)  # again under the lock: a job that just finished counts
        ledger = Ledger(job.config.budget.neighbouring)
        # DP bounds/categories where the schema gives none (every input row: DP like the rest)
        job, planned = resolve_domain(job, planned, ledger, source)
        with open_input(job, source, evaluate) as (data, members, held_back):
            check_delta(job, data.records)
            run = synthesise(job, data, source, planned, ledger)
        synthetic = run.synthetic
        if isinstance(synthetic, SyntheticRows):
            synthetic.columns = columns
        else:
            synthetic = synthetic[columns]
        manifest = build_manifest(job, run.plan, run.ledger, run.state, source, warnings)
        write_release(out_dir, synthetic, manifest, force)
    kept = synthetic.only_block if isinstance(synthetic, SyntheticRows) else synthetic
    return RunResult(out_dir, run.ledger, run.plan, manifest, job, len(synthetic), kept,
                     held_back, members)
