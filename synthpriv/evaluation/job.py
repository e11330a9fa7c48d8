"""The evaluation step of a job: after the release lands, evaluate it and write the report.

Where: ``<release>.evaluation/`` beside the release folder (``out/adult.evaluation/`` for
``out/adult/``), never inside it. The release folder holds only what is DP (synthetic.csv, the
model and the manifest) and can be shipped whole; the evaluation reads the real table and must
stay with the data holder.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from synthpriv.config import EvaluationConfig, Job
from synthpriv.errors import ConfigError
from synthpriv.evaluation.evaluate import HOLDOUT_FIX_CLI, Claim, evaluate_sources
from synthpriv.evaluation.report import check_report_folder, write_report
from synthpriv.evaluation.sampling import Source
from synthpriv.evaluation.scored import blank_columns_note
from synthpriv.evaluation.shadow import PipelineGenerator
from synthpriv.evaluation.utility import efficacy_summary
from synthpriv.job import RunResult
from synthpriv.release import SYNTHETIC
from synthpriv.runner import guarantee_figures, only_if
from synthpriv.schema import Schema, load_schema


def evaluation_dir(release_dir: Path) -> Path:
    """``<release>.evaluation`` beside the release folder."""
    release_dir = Path(release_dir).resolve()
    return release_dir.parent / f"{release_dir.name}.evaluation"


@dataclass
class Evaluation:
    report: dict
    folder: Path
    files: dict[str, Path]


def evaluate_job(job: Job, result: RunResult, *, progress: bool = True) -> Evaluation:
    """Evaluate a job's release against its real table and holdout; write the report.

    The tables are streamed from their files (the input, the holdout, the release's
    synthetic.csv) and held as samples (``evaluate_sources``); the rows a hold-back split off
    the input are in memory already and are sampled there."""
    holdout: Source | None = None
    source = None
    if job.holdout_path is not None:
        holdout, source = job.holdout_path, "data.holdout"
    elif result.held_back is not None:
        holdout, source = result.held_back, "held back from the input"
    real: Source = result.real if result.held_back is not None else job.data_path
    guarantee = result.manifest["guarantee"]
    epsilon, delta = guarantee_figures(guarantee)
    conditional = guarantee["epsilon"] is None  # a seeded run or a draft schema: no guarantee
    claim = Claim(epsilon, delta, guarantee["neighbouring"],
                  f"ledger, if {only_if(guarantee)}" if conditional else "ledger")
    sources = {"real": real, "synthetic": result.out_dir / SYNTHETIC, "holdout": holdout}
    report = evaluate_sources(
        sources, result.job.schema, numeric_columns=result.job.schema.numeric_names,
        settings=job.config.evaluation, holdout_source=source, claim=claim,
        shadow_generator=PipelineGenerator(job, result.planned), name=job.config.name, progress=progress,
        constraints=result.job.schema.constraints, person=job.config.data.person,
    )
    report["domain_warnings"] = domain_warnings(job.schema, result.job.schema)
    folder = evaluation_dir(result.out_dir)
    return Evaluation(report, folder, write_report(folder, report))


def domain_warnings(declared: Schema, resolved: Schema) -> list[str]:
    """The domain step's warnings for the report (``domain_stage.domain_lines``: the columns
    released all missing because nothing in them was above the noise), so that a blank column
    is explained where a reader of report.html looks, not only on the run's terminal. Read from
    the declared schema and the release's schema only (public, and DP outputs)."""
    from synthpriv.domain_stage import domain_lines

    return [line.removeprefix("WARNING: ") for line in domain_lines(declared, resolved)
            if line.startswith("WARNING")]


def summary_lines(report: dict) -> list[str]:
    """A few lines for the terminal: utility headline, attacks, the ε comparison."""
    utility = report["utility"]
    marginals = utility["marginals"]
    tvd = ", ".join(f"{k} {marginals[k]['mean']:.3f}" for k in ("1-way", "2-way", "3-way") if k in marginals)
    lines = [f"utility: mean TVD {tvd}; association difference {utility['association']['mean']:.3f}"]
    efficacy = utility.get("ml_efficacy")
    if efficacy:
        lines.append(f"utility: {efficacy_summary(efficacy)}")
    if "sdv_quality" in utility:
        score = utility["sdv_quality"]["score"]
        lines.append(f"utility: SDMetrics quality score {score:.3f}" if score is not None else
                     "utility: SDMetrics quality score not defined (no scored column has a value "
                     "in both the real table and the release)")
    if blank_columns_note(report.get("domain_warnings", [])):
        lines.append(f"note: {blank_columns_note(report['domain_warnings'])}")
    privacy = report.get("privacy")
    if privacy:
        worst = privacy["release"]["worst_case"]
        controls = "; ".join(
            f"{name} {result['worst_case']['auc']:.3f}" if "failed" not in result else f"{name} failed"
            for name, result in privacy["controls"].items()
        )
        lines.append(f"attacks on the release: worst AUC {worst['auc']:.3f} ({worst['auc_attack']})"
                     + (f"; positive controls: {controls}" if controls else ""))
        shadow = privacy.get("shadow", {}).get("generators")
        if shadow:
            lines.append("shadow attack AUC (pooled): " + "; ".join(
                f"{name} {result['pooled']['auc']:.3f}" for name, result in shadow.items()))
        marginal = privacy.get("marginal_attack", {}).get("generators")
        if marginal:
            unit = "rows" if privacy["marginal_attack"].get("target", "one row") == "one row" else "persons"
            lines.append(f"attack built for marginal recipes, mean AUC on the exposed {unit}: " + "; ".join(
                f"{name} {result['mean_auc']:.3f}" for name, result in marginal.items()))
        lines.append(privacy["verdict"]["message"])
    lines += [f"note: {note}" for note in report["notes"]]
    return lines


def _manifest_claim(synthetic_path: Path) -> Claim | None:
    """The claim of a synthpriv release, if ``synthetic_path`` sits beside its manifest.json."""
    manifest = synthetic_path.parent / "manifest.json"
    if not manifest.is_file():
        return None
    try:
        guarantee = json.loads(manifest.read_text())["guarantee"]
        epsilon, delta = guarantee_figures(guarantee)
        return Claim(epsilon, delta, guarantee["neighbouring"], "manifest")
    except (ValueError, KeyError, TypeError):
        return None


def _settings(target: str | None, controls: str, anonymeter: bool) -> EvaluationConfig:
    names = [c.strip() for c in controls.split(",") if c.strip()]
    try:
        return EvaluationConfig(target=target, controls=names, anonymeter=anonymeter)
    except ValidationError:
        raise ConfigError(
            f"--controls: expected names among identity, gaussian_copula, cart, ctgan; found {names}."
        ) from None


def evaluate_files(
    real: Path,
    synthetic: Path,
    schema: Path,
    *,
    holdout: Path | None = None,
    target: str | None = None,
    out: Path | None = None,
    controls: str = "identity,gaussian_copula",
    anonymeter: bool = True,
    progress: bool = True,
) -> Evaluation:
    """Evaluate any synthetic CSV (from synthpriv or another tool) against the real CSV.

    The tables are streamed and checked with ``schema`` and held as samples
    (``evaluate_sources``). A synthpriv release's manifest beside the
    synthetic CSV supplies the claimed ε to compare with; then the report goes to
    ``<release>.evaluation`` beside it, otherwise to ``<synthetic stem>.evaluation`` in the current
    folder, unless ``out`` says where.
    """
    settings = _settings(target, controls, anonymeter)
    table_schema = load_schema(schema)
    if target is not None and target not in table_schema.names:
        raise ConfigError(f"--target '{target}' is not a column of the schema {table_schema.names}.")
    claim = _manifest_claim(Path(synthetic).resolve())
    if out is None:
        synthetic = Path(synthetic).resolve()
        out = evaluation_dir(synthetic.parent) if claim else Path.cwd() / f"{synthetic.stem}.evaluation"
    check_report_folder(out)  # a release or a user's file there: refused before any work
    report = evaluate_sources(
        {"real": real, "synthetic": synthetic, "holdout": holdout}, table_schema,
        numeric_columns=table_schema.numeric_names, settings=settings,
        holdout_source=None if holdout is None else str(holdout), claim=claim,
        name=Path(synthetic).name, progress=progress, constraints=table_schema.constraints,
        holdout_fix=HOLDOUT_FIX_CLI,
    )
    return Evaluation(report, Path(out).resolve(), write_report(Path(out), report))
