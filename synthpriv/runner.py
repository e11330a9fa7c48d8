"""Run a job end to end: plan (public), read and encode (sensitive), stages, atomic release."""

from __future__ import annotations

import platform
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cached_property
from importlib import metadata
from pathlib import Path

import pandas as pd

from synthpriv.chunks import file_header, is_parquet, iter_chunks
from synthpriv.config import Job
from synthpriv.encoding import TableEncoder
from synthpriv.engines import open_counts
from synthpriv.errors import BudgetError
from synthpriv.pipeline import plan_job, run_stages
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.plan import Plan
from synthpriv.privacy.randomness import RandomSource
from synthpriv.release import SYNTHETIC, check_target, release_lock, write_release
from synthpriv.sampling import SyntheticRows
from synthpriv.stage import PipelineState
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
    """A finished run. ``synthetic`` and ``real`` are loaded on first use (a large release is
    never held in memory by the run itself): prefer the files for large tables."""

    out_dir: Path
    ledger: Ledger
    plan: Plan
    manifest: dict
    job: Job
    records: int
    _kept: pd.DataFrame | None = None

    @cached_property
    def synthetic(self) -> pd.DataFrame:
        """The released table: kept from sampling if it was one block, else read back."""
        if self._kept is not None:
            return self._kept
        return read_table(self.out_dir / SYNTHETIC, self.job.schema)

    @cached_property
    def real(self) -> pd.DataFrame:
        """The sensitive input, read whole (for evaluation: not part of the release)."""
        path, schema = self.job.data_path, self.job.schema
        if is_parquet(path):
            return pd.concat(list(iter_chunks(path, schema, self.job.config.data.chunk_rows)))
        return read_table(path, schema)


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


def run_job(
    job: Job, *, out: Path | None = None, force: bool = False, source: RandomSource | None = None
) -> RunResult:
    """Plan, read, synthesise and release one job. Nothing is written unless all succeeds."""
    out_dir = job.output_dir(out)
    check_target(out_dir, force)
    plan, stages = plan_job(job)
    columns = file_header(job.data_path, job.schema)
    encoder = TableEncoder(job.schema)
    if source is None:
        seed = job.config.seed
        source = RandomSource.secure() if seed is None else RandomSource.seeded(seed)
    with open_counts(job, encoder) as data:
        check_delta(job, data.records)
        state = PipelineState(
            context=stages[0][0].context, encoder=encoder, data=data,
            requested_records=job.config.pipeline.records,
        )
        ledger = run_stages(stages, plan, state, source)
    synthetic = state.synthetic
    if isinstance(synthetic, SyntheticRows):
        synthetic.columns = columns
    else:
        synthetic = synthetic[columns]
    manifest = build_manifest(job, plan, ledger, state, source)
    with release_lock(out_dir):
        write_release(out_dir, synthetic, manifest, force)
    kept = synthetic.only_block if isinstance(synthetic, SyntheticRows) else synthetic
    return RunResult(out_dir, ledger, plan, manifest, job, len(synthetic), kept)
