"""What a release says of itself: the manifest (an allow-list of fields), its guarantee and the
package versions; and ``run_job``, the one-call shell over the job object (synthpriv.job)."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from synthpriv.config import Job
from synthpriv.plan import Plan
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState

if TYPE_CHECKING:
    from synthpriv.job import RunResult

VERSIONED_PACKAGES = ("synthpriv", "numpy", "pandas", "dp-accounting", "torch", "opacus", "sdv")
GUARANTEE = (
    "({epsilon:.4g}, {delta:g})-differential privacy for every individual row, where neighbouring "
    "tables differ by {relation}. The schema (column names, domains, bins) and the config are "
    "public and not protected, except the kinds, bounds and categories a DP domain step chose "
    "(its events are in the ledger), which this guarantee covers."
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
        "constraints": None if state.synthetic is None else state.synthetic.enforcement,
        "versions": package_versions(),
    }


def run_job(
    job: Job, *, out: Path | None = None, force: bool = False, source: RandomSource | None = None,
    evaluate: bool = True,
) -> RunResult:
    """Plan, read, synthesise and release one job: ``SynthesisJob(job).run`` (synthpriv.job)."""
    from synthpriv.job import SynthesisJob

    return SynthesisJob(job, source=source).run(out, force=force, evaluate=evaluate)
