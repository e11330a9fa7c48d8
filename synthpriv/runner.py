"""What a release says of itself: the manifest (an allow-list of fields), its guarantee and the
package versions; and ``run_job``, the one-call shell over the job object (synthpriv.job)."""

from __future__ import annotations

import platform
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import TYPE_CHECKING

from synthpriv.config import Job
from synthpriv.persons import relation_label, relation_phrase
from synthpriv.plan import Plan
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState

if TYPE_CHECKING:
    from synthpriv.job import RunResult

VERSIONED_PACKAGES = ("synthpriv", "numpy", "pandas", "dp-accounting", "torch", "opacus", "sdv")
GUARANTEE = (
    "({epsilon:.4g}, {delta:g})-differential privacy for every {unit}, where neighbouring "
    "tables differ by {relation}. The schema (column names, domains, bins) and the config are "
    "public and not protected, except the kinds, bounds and categories a DP domain step chose "
    "(its events are in the ledger), which this guarantee covers. It speaks of tables whose every row "
    "fits the schema: a row that does not (a missing value where the schema allows none, a "
    "category not listed under unknown_categories: error, a non-number in a numeric column, a "
    "fraction in an integer column, a derived column that disagrees with its source, a malformed "
    "row) or an empty table makes the run refuse, so this release's existence tells that there is no such "
    "row; that is safe only because the schema is public (declared without reading the data). "
    "A column of kind auto refuses no cell: one that does not fit the kind decided is missing."
)
# Why a release has no guarantee, by the condition under which it would: the statement's opening
# and the terminal's reason. The manifest's figure is then ``epsilon_if_<conditions>`` (joined by
# ``_and_``), e.g. ``epsilon_if_noise_secret`` for a seeded run.
NO_GUARANTEE = {
    "noise_secret": (
        "NO GUARANTEE: this is a seeded run. Whoever knows the seed can recompute the noise and "
        "subtract it, so the release is not differentially private.",
        "seeded run, NOT FOR RELEASE", "the noise were secret"),
    "schema_public": (
        "NO GUARANTEE: the schema is a draft read from the data (drafted_by: {drafted_by}) and "
        "was never marked reviewed: its kinds, bounds and categories (exact minima and maxima "
        "among them, copied into this manifest) were read from the rows outside any mechanism, "
        "so the domain is not covered and the release is not differentially private.",
        "domain read from the data (draft schema), NOT COVERED", "the schema were public"),
}
RELATIONS = {"add_remove": "adding or removing one row", "replace_one": "replacing one row"}
CONDITIONAL = "epsilon_if_"


def guarantee_conditions(guarantee: dict) -> list[str]:
    """The conditions a manifest's guarantee holds under only (``noise_secret``,
    ``schema_public``): none for a release with a guarantee."""
    if guarantee.get("epsilon") is not None:
        return []
    key = next(k for k in guarantee if k.startswith(CONDITIONAL))
    return key[len(CONDITIONAL):].split("_and_")


def guarantee_figures(guarantee: dict) -> tuple[float, float]:
    """(ε, δ) of a manifest's guarantee: the guarantee itself, or, for a seeded run or a draft
    schema (which have none), what it would be if the noise were secret and the schema public."""
    conditions = guarantee_conditions(guarantee)
    if not conditions:
        return float(guarantee["epsilon"]), float(guarantee["delta"])
    suffix = "_and_".join(conditions)
    return float(guarantee[CONDITIONAL + suffix]), float(guarantee[f"delta_if_{suffix}"])


def only_if(guarantee: dict) -> str:
    """'the noise were secret and the schema were public': when the figures would hold."""
    return " and ".join(NO_GUARANTEE[c][2] for c in guarantee_conditions(guarantee))


def guarantee_lines(manifest: dict) -> list[str]:
    """What the terminal says of a release's privacy: the guarantee (or, for a seeded run or a
    draft schema, that there is none, and why), and which bound of the ledger it is."""
    guarantee, ledger = manifest["guarantee"], manifest["ledger"]
    epsilon, delta = guarantee_figures(guarantee)
    bounds = ", ".join(
        f"{name.upper()} {ledger[f'epsilon_{name}']:.4f}" if ledger[f"epsilon_{name}"] is not None
        else f"{name.upper()} {_missing(ledger)}" for name in ("rdp", "pld")
    )
    conditions = guarantee_conditions(guarantee)
    if conditions:
        why = "; ".join(NO_GUARANTEE[c][1] for c in conditions)
        return [f"privacy: NONE — {why} (ε = {epsilon:.4f}, δ = {delta:g} only if "
                f"{only_if(guarantee)}; {_relation(guarantee)}; ledger: {bounds})"]
    return [f"privacy: ε = {epsilon:.4f}, δ = {delta:g} ({_relation(guarantee)}; ledger: "
            f"{bounds}; reported: {ledger['bound'].upper()})", _bounds_note(ledger)]


def _missing(ledger: dict) -> str:
    """Why the ledger shows no PLD figure: an adaptive stage, or an ε above PLD_MAX_EPSILON."""
    return ("not valid here (adaptive stage)" if ledger.get("adaptive") else
            "not computed (RDP above PLD_MAX_EPSILON)")


def _relation(guarantee: dict) -> str:
    """The neighbouring relation as the terminal shows it (per person with data.person)."""
    return guarantee.get("relation", guarantee["neighbouring"])


def _bounds_note(ledger: dict) -> str:
    """Why the ledger shows two figures and reports one: a line for the terminal."""
    valid = [name for name in ("rdp", "pld") if ledger.get(f"epsilon_{name}") is not None]
    if len(valid) < 2 and not ledger.get("adaptive") and "bounds_note" in ledger:
        return f"  ({ledger['bounds_note']})"  # PLD not computed at this ε
    if len(valid) < 2:
        return (f"  ({valid[0].upper() if valid else 'one'} is the only accountant that bounds "
                "these events as they were chosen (adaptive stages), so it is reported)")
    return ("  (RDP and PLD are two proofs of an upper bound on the same ε: each holds, so the "
            "smaller is reported; the larger is a looser proof, not more privacy spent)")


def build_guarantee(job: Job, reported: float, seeded: bool) -> dict:
    """The manifest's guarantee: (ε, δ) and its statement; for a seeded run (anyone with the seed
    can subtract the noise) or a schema still marked ``drafted_by`` (its domain read from the
    rows), none: ``epsilon`` null and the figure only as ``epsilon_if_<conditions>``."""
    budget, data = job.config.budget, job.config.data
    k = data.contribution_bound
    unit = "individual row" if data.person is None else (
        f"person (data.person '{data.person}'; each person's rows were bounded to at most {k}, "
        "chosen at random, before anything was counted)")
    statement = GUARANTEE.format(
        epsilon=reported, delta=budget.delta, unit=unit,
        relation=relation_phrase(RELATIONS[budget.neighbouring], data.person, k))
    person = {} if data.person is None else {
        "unit": "person", "person_column": data.person, "rows_per_person": k,
        "relation": relation_label(budget.neighbouring, data.person, k)}
    conditions = [c for c, holds in (("noise_secret", seeded),
                                     ("schema_public", job.schema.drafted_by is not None)) if holds]
    if not conditions:
        return {"epsilon": reported, "delta": budget.delta, "neighbouring": budget.neighbouring,
                **person, "statement": statement}
    reasons = " ".join(NO_GUARANTEE[c][0] for c in conditions)
    wording = " and ".join(NO_GUARANTEE[c][2] for c in conditions)
    suffix = "_and_".join(conditions)
    return {
        "epsilon": None, "delta": None, "neighbouring": budget.neighbouring, **person,
        "statement": (reasons.format(drafted_by=job.schema.drafted_by) + f" If {wording} (a "
                      "research figure only), it would be: " + statement),
        CONDITIONAL + suffix: reported, f"delta_if_{suffix}": budget.delta,
    }


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
    guarantee = build_guarantee(job, reported, source.is_seeded)
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
