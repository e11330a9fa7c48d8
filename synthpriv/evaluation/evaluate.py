"""Evaluate one synthetic table against the real one: utility, attacks, controls, verdict.

Every figure goes into one JSON-serialisable dict (the report's ``report.json``). NOT
differentially private: it reads the real training table and the holdout directly, so it is never
part of a release (see ``synthpriv.evaluation.job`` for where it is written).

The verdict compares the worst empirical ε lower bound over the attacks with the ε the ledger
claims. An empirical bound above the claim is impossible for a correct mechanism (up to the
2α failure probability of the bound) and is reported as a bug signal.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd

from synthpriv.config import EvaluationConfig
from synthpriv.constraints import breaking, count_report
from synthpriv.evaluation.attacks import anonymeter_risks, run_membership_attacks
from synthpriv.evaluation.controls import control_generators
from synthpriv.evaluation.discretize import Discretizer
from synthpriv.evaluation.marginal_attack import marginal_attack
from synthpriv.evaluation.readable import number
from synthpriv.evaluation.sampling import SampleSizes, Source, sample_tables
from synthpriv.evaluation.scored import left_out, left_out_note, public_values
from synthpriv.evaluation.shadow import Generator, IdentityGenerator, shadow_attack
from synthpriv.evaluation.utility import evaluate_utility, marginal_tvd
from synthpriv.evaluation.values import csv_cells, value_fidelity
from synthpriv.progress import Parts
from synthpriv.schema import Constraint, Schema

NOTICE = (
    "This evaluation reads the real training table and the holdout. It is NOT differentially "
    "private and NOT part of the DP release: keep it with the data holder, never publish it "
    "with the synthetic data."
)
DEFAULT_DELTA = 1e-5
HOLDOUT_FIX_CONFIG = ("Name data.holdout, or set evaluation.holdout_fraction to hold back part of "
                      "the input from the generator.")
HOLDOUT_FIX_CLI = ("Give real rows the generator did not see with synthpriv evaluate's "
                   "--holdout H.csv.")
N_SHOWN_COLUMNS = 3


@dataclass(frozen=True)
class Claim:
    """The (ε, δ) a release claims (the ledger's, or a manifest's)."""

    epsilon: float
    delta: float
    neighbouring: str = "add_remove"
    source: str = "ledger"


def _bin_labels(discretizer: Discretizer, column: str) -> list[str]:
    """A readable label for every code of ``column``: bins [a, b), where an edge placed just
    above a point mass p (``quantile_edges``: the next float after p) reads as p with the
    bound flipped, so a point mass's own bin is "= p" and the bins beside it "≤ p" / "(p, b)"
    (not "< 4.94e-324" for the values 0)."""
    if column not in discretizer.edges:
        return [*discretizer.categories[column], "missing", "unseen"]
    edges = discretizer.edges[column]
    if not edges.size:
        return ["all", "missing"]
    below = np.nextafter(edges, -np.inf)  # p, if the edge is the float right after p
    after_mass = [(_short(p) and not _short(e)) or 0 < abs(e) < np.finfo(float).tiny
                  for e, p in zip(edges, below, strict=True)]
    shown = [_shown(p if mass else e) for e, p, mass in zip(edges, below, after_mass, strict=True)]
    labels = [f"≤ {shown[0]}" if after_mass[0] else f"< {shown[0]}"]
    for i in range(len(edges) - 1):
        if after_mass[i + 1] and below[i + 1] == edges[i]:
            labels.append(f"= {shown[i + 1]}")
        else:
            left = f"({shown[i]}" if after_mass[i] else f"[{shown[i]}"
            right = f"{shown[i + 1]}]" if after_mass[i + 1] else f"{shown[i + 1]})"
            labels.append(f"{left}, {right}")
    labels.append(f"> {shown[-1]}" if after_mass[-1] else f"≥ {shown[-1]}")
    return [*labels, "missing"]


def _shown(value: float) -> str:
    """A bin edge as a reader writes it (118,000, not 1.18e+05)."""
    return number(value)


def _short(value: float) -> bool:
    """True when ``value`` has a short decimal form (15 significant digits): a data value or a
    round quantile, not the next float after one."""
    return float(f"{value:.15g}") == value


def column_fidelity(
    real: pd.DataFrame, synthetic: pd.DataFrame, numeric_columns: Sequence[str], bins: int = 16
) -> dict[str, Any]:
    """1-way TVD of every column (worst first), and the real vs synthetic distributions of the
    ``N_SHOWN_COLUMNS`` least and most faithful columns, for plotting."""
    discretizer = Discretizer.fit(real, numeric_columns, bins)
    real_codes = discretizer.transform(real)
    synth_codes = discretizer.transform(synthetic[list(real.columns)])
    one_way = marginal_tvd(
        real_codes, synth_codes, 1, sizes=discretizer.sizes, columns=discretizer.columns,
        n_worst=len(discretizer.columns),
    )
    ranked = [{"column": w["columns"][0], "tvd": w["tvd"]} for w in one_way["worst"]]
    shown = ranked[:N_SHOWN_COLUMNS] + [
        c for c in ranked[-N_SHOWN_COLUMNS:] if c not in ranked[:N_SHOWN_COLUMNS]
    ]
    distributions = []
    for entry in shown:
        j = discretizer.columns.index(entry["column"])
        size = discretizer.sizes[j]
        real_p = np.bincount(real_codes[:, j], minlength=size) / len(real_codes)
        synth_p = np.bincount(synth_codes[:, j], minlength=size) / len(synth_codes)
        keep = (real_p > 0) | (synth_p > 0)
        labels = np.array(_bin_labels(discretizer, entry["column"]), dtype=object)
        distributions.append({
            **entry,
            "faithful": "least" if entry in ranked[:N_SHOWN_COLUMNS] else "most",
            "numeric": entry["column"] in discretizer.edges,
            "labels": labels[keep].tolist(),
            "real": real_p[keep].tolist(),
            "synthetic": synth_p[keep].tolist(),
        })
    return {"columns": ranked, "distributions": distributions}


def _attack_suite(
    members: pd.DataFrame, non_members: pd.DataFrame, synthetic: pd.DataFrame,
    numeric_columns: Sequence[str], settings: EvaluationConfig, delta: float,
) -> dict:
    start = time.perf_counter()
    result = run_membership_attacks(
        members, non_members, synthetic, None, numeric_columns=numeric_columns, delta=delta,
        seed=settings.attack_seed, n_targets=settings.attack_targets, bootstrap=settings.bootstrap,
    )
    result["seconds"] = time.perf_counter() - start
    return result


def cache_anonymeter_kernels() -> None:
    """Keep anonymeter's numba kernels (its Gower-distance nearest neighbours) compiled on disk,
    as ``@jit(cache=True)`` would: numba compiled them anew in every process, the largest part of
    anonymeter's time on a sampled evaluation (measured in benchmarks/README.md, "Evaluation at
    scale"). numba recompiles when the source or the machine changes. A no-op if anonymeter
    or its kernels are missing."""
    try:
        import anonymeter.evaluators  # noqa: F401  (imports the kernels' module without a cycle)
        from anonymeter.neighbors import mixed_types_kneighbors as kernels
    except Exception:
        return
    for name in ("gower_distance", "_nearest_neighbors"):
        kernel = getattr(kernels, name, None)
        if kernel is not None and hasattr(kernel, "enable_caching"):
            with contextlib.suppress(Exception):
                kernel.enable_caching()


def evaluate_privacy(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    holdout: pd.DataFrame,
    *,
    numeric_columns: Sequence[str],
    settings: EvaluationConfig,
    claim: Claim | None,
    shadow_generator: Generator | None = None,
    progress: bool = True,
    shadow_real: pd.DataFrame | None = None,
    person: str | None = None,
) -> dict:
    """Membership attacks on the release, the same attacks on the positive controls, anonymeter
    risks, the attack built for marginal recipes and (opt-in) the shadow-model attack.
    Members = ``real``, non-members = ``holdout``; the marginal and shadow attacks draw their own
    tables from ``shadow_real`` (default ``real``). ``person`` (data.person): the column of the
    real rows that names their person; the shadow and marginal attacks then add or remove whole
    persons, and the row attacks score one row per person."""
    delta = claim.delta if claim is not None else DEFAULT_DELTA
    pool = real if shadow_real is None else shadow_real
    persons = pool[person] if person is not None and person in pool.columns else None
    if person is not None:  # members are persons: one row each, scored as independent trials
        real, holdout, synthetic = (one_row_per_person(t, person) for t in (real, holdout, synthetic))
    parts = Parts(["attacks on the release", *(["anonymeter"] if settings.anonymeter else []),
                   *(f"control {name}" for name in settings.controls)], progress)
    with parts.part("attacks on the release"):
        release = _attack_suite(real, holdout, synthetic, numeric_columns, settings, delta)
    privacy: dict[str, Any] = {
        "members": "training rows" if person is None else "training persons (one row each)",
        "non_members": "holdout rows" if person is None else "holdout persons (one row each)",
        "delta": delta,
        "release": release,
    }
    if settings.anonymeter:
        with parts.part("anonymeter"):
            privacy["anonymeter"] = _anonymeter(real, synthetic, holdout, settings)
    controls: dict[str, dict] = {}
    makers = control_generators()
    for name in settings.controls:
        with parts.part(f"control {name}"):
            controls[name] = _control(makers[name], real, holdout, numeric_columns, settings, delta)
    parts.close()
    privacy["controls"] = controls
    if settings.marginal_attack.enabled:  # per person: whole persons in or out (their rows)
        privacy["marginal_attack"] = _marginal_attack(
            pool, shadow_generator, numeric_columns, settings, claim, delta, progress,
            person if persons is not None else None,
        )
    shadow = settings.shadow
    if shadow.enabled:
        if shadow_generator is None:
            privacy["shadow"] = {"skipped": "the shadow attack re-runs a pipeline; none was given "
                                 "(external synthetic data)"}
        else:
            generators: dict[str, Generator] = {"pipeline": shadow_generator}
            if shadow.identity_control:
                generators["identity"] = IdentityGenerator()
            privacy["shadow"] = shadow_attack(
                pool, generators, numeric_columns=numeric_columns,
                neighbouring=claim.neighbouring if claim else "add_remove",  # type: ignore[arg-type]
                delta=delta, shadow_tables=shadow.shadow_tables,
                vulnerable_targets=shadow.vulnerable_targets, random_targets=shadow.random_targets,
                records=shadow.records, workers=shadow.workers, seed=settings.attack_seed,
                bootstrap=settings.bootstrap, progress=progress, persons=persons,
            )
    privacy["verdict"] = verdict(privacy, claim)
    return privacy


def one_row_per_person(table: pd.DataFrame, person: str) -> pd.DataFrame:
    """The first row of each person of ``table`` (the synthetic table's fresh keys: every row),
    without the person column: a person's rows are all members or all held back, so the row
    attacks score one row per person (clustered rows are not independent trials), and no attack
    reads the key itself."""
    if person not in table.columns:
        return table
    keys = table[person]
    first = ~keys.duplicated() | keys.isna()
    return table.loc[first].drop(columns=[person]).reset_index(drop=True)


def _anonymeter(real: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame,
                settings: EvaluationConfig) -> dict:
    """anonymeter's risks, or why they are missing (a third-party evaluator must not sink the
    report), with the seconds they took."""
    start = time.perf_counter()
    cache_anonymeter_kernels()
    try:
        risks = anonymeter_risks(real, synthetic, holdout, n_attacks=settings.anonymeter_attacks,
                                 seed=settings.attack_seed, secret=settings.target)
    except Exception as error:
        risks = {"available": False, "reason": f"anonymeter failed: {error!r}"}
    risks["seconds"] = time.perf_counter() - start
    return risks


def _control(make, real: pd.DataFrame, holdout: pd.DataFrame, numeric_columns: Sequence[str],
             settings: EvaluationConfig, delta: float) -> dict:
    """One positive control (``make``: generator(train, numeric, seed)) attacked like the
    release; its failure is reported (e.g. SDV refusing a table) and the rest go on."""
    start = time.perf_counter()
    try:
        fake = make(real, list(numeric_columns), settings.attack_seed)
    except Exception as error:
        return {"failed": f"{type(error).__name__}: {error}"}
    generated = time.perf_counter() - start
    result = _attack_suite(real, holdout, fake, numeric_columns, settings, delta)
    result["generator_seconds"] = generated
    return result


def _marginal_attack(
    real: pd.DataFrame, generator: Generator | None, numeric_columns: Sequence[str],
    settings: EvaluationConfig, claim: Claim | None, delta: float, progress: bool,
    person: str | None = None,
) -> dict:
    """The attack built for marginal recipes (``evaluation.marginal_attack``) on the pipeline,
    and on the identity control; skipped, with the reason, for external synthetic data.
    ``person``: ``real``'s person column (data.person): the targets are whole persons."""
    if generator is None:
        return {"skipped": "the marginal attack re-runs the pipeline; none was given (external "
                           "synthetic data)"}
    config = settings.marginal_attack
    generators: dict[str, Generator] = {"pipeline": generator}
    if config.identity_control:
        generators["identity"] = IdentityGenerator()
    return marginal_attack(
        real, generators, numeric_columns=numeric_columns,
        neighbouring=claim.neighbouring if claim else "add_remove",  # type: ignore[arg-type]
        delta=delta, shadow_tables=config.shadow_tables, records=config.records,
        targets=config.targets, max_order=config.max_order, workers=config.workers,
        seed=settings.attack_seed, bootstrap=settings.bootstrap, progress=progress, person=person,
    )


def verdict(privacy: dict, claim: Claim | None) -> dict:
    """Worst empirical ε lower bound over the attacks on the release (and the shadow and marginal
    attacks on the pipeline), next to the claimed ε; ``bug_signal`` when the bound exceeds the claim."""
    bounds = {
        f"release/{name}": metrics["empirical_epsilon"]["eps_lower_bound"]
        for name, metrics in privacy["release"]["attacks"].items()
    }
    pipeline = privacy.get("shadow", {}).get("generators", {}).get("pipeline")
    if pipeline is not None:
        bounds["shadow/pipeline"] = pipeline["worst_case"]["eps_lower_bound"]
    marginal = privacy.get("marginal_attack", {}).get("generators", {}).get("pipeline")
    if marginal is not None:
        bounds["marginal/pipeline"] = marginal["worst_case"]["eps_lower_bound"]
    worst_attack = max(bounds, key=bounds.get)
    worst = bounds[worst_attack]
    result: dict[str, Any] = {
        "eps_lower_bound": worst, "attack": worst_attack, "bounds": bounds,
        "claimed_epsilon": None if claim is None else claim.epsilon,
        "claim": None if claim is None else asdict(claim),
        "bug_signal": bool(claim is not None and worst > claim.epsilon),
    }
    if claim is None:
        result["message"] = (
            f"empirical ε lower bound {worst:.3f} ({worst_attack}); no claimed ε to compare with."
        )
    elif result["bug_signal"]:
        result["message"] = (
            f"BUG SIGNAL: the attacks certify ε ≥ {worst:.3f} ({worst_attack}), above the claimed "
            f"ε = {claim.epsilon:.4g}. A correct DP mechanism makes this fail with probability "
            "≤ 10%: check the mechanism, the sensitivity and the ledger before releasing."
        )
    else:
        result["message"] = (
            f"empirical ε lower bound {worst:.3f} ({worst_attack}) ≤ claimed ε = "
            f"{claim.epsilon:.4g}: consistent (attacks give lower bounds, never proofs of privacy)."
        )
    return result


def evaluate_tables(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    *,
    numeric_columns: Sequence[str],
    settings: EvaluationConfig,
    holdout: pd.DataFrame | None = None,
    **options: Any,
) -> dict:
    """``evaluate_sources`` on tables held in memory (the options are its own)."""
    return evaluate_sources(
        {"real": real, "synthetic": synthetic, "holdout": holdout}, None,
        numeric_columns=numeric_columns, settings=settings, **options,
    )


def evaluate_sources(
    sources: dict[str, Source | None],
    schema: Schema | None,
    *,
    numeric_columns: Sequence[str],
    settings: EvaluationConfig,
    holdout_source: str | None = None,
    claim: Claim | None = None,
    shadow_generator: Generator | None = None,
    name: str = "synthetic",
    progress: bool = True,
    sizes: SampleSizes | None = None,
    constraints: Sequence[Constraint] = (),
    holdout_fix: str = HOLDOUT_FIX_CONFIG,
    person: str | None = None,
) -> dict:
    """The whole evaluation as one JSON-serialisable dict (see the module docstring).
    ``person`` (data.person): the real rows' person column, for the attacks per person.

    ``sources``: the "real", "synthetic" and (optional) "holdout" tables, each in memory or a
    CSV/Parquet file read in chunks and checked against ``schema``. No table is held whole:
    each is kept as a seeded uniform sample of the largest part's size
    (``synthpriv.evaluation.sampling.sample_tables``), and each part reads at most ``sizes`` rows
    of it (default: ``default_sizes(settings)``); ``report["data"]["sampled"]`` and a note say
    which parts read a sample and how many rows. Counted exactly over every row: the tables'
    rows, and per rule of ``constraints`` (the schema's public rules) the real and synthetic rows
    that break it. ``holdout_fix``: how to give a holdout, for the notes (a job config's keys, or
    ``synthpriv evaluate``'s ``--holdout`` option).
    """
    started = time.perf_counter()
    rules = list(constraints)
    broken: dict[str, np.ndarray] = {}

    def count_broken(table: str, rows: pd.DataFrame) -> None:
        if table != "holdout":
            broken[table] = broken.get(table, 0) + breaking(rules, rows).sum(axis=0)

    sizes = default_sizes(settings) if sizes is None else sizes
    samples = sample_tables(sources, schema, sizes, count_broken if rules else None)
    columns = list(samples.largest("real").columns)
    for table in ("synthetic", "holdout"):
        if table in samples and list(samples.samples[table].rows.columns) != columns:
            samples.samples[table].rows = samples.samples[table].rows[columns]
    has_holdout = "holdout" in samples
    attack_rows = {name: (lambda name=name: samples.rows(name, "attacks"))
                   for name in ("real", "synthetic", "holdout")}
    left = left_out(columns, schema, person)  # id, text, ignored: the one rule (scored.py)
    # read before the cut: the values' copy check still reads the left-out columns
    value_rows = {name: samples.rows(name, "marginals") for name in ("real", "synthetic")}
    if left:  # the person key stays in the attack rows: the attacks per person group by it
        kept = [c for c in columns if c not in left or c == person]
        held = {name: rows()[kept] for name, rows in attack_rows.items()
                if name in samples and settings.attacks and "holdout" in samples}
        attack_rows.update({name: (lambda rows=rows: rows) for name, rows in held.items()})
        columns = [c for c in columns if c not in left]
        for sample in samples.samples.values():  # no other figure reads a left-out column
            sample.rows = sample.rows[columns]
        samples._whole.clear()
    notes = [left_out_note(left)] if left else []
    if settings.target in left:
        notes.append(f"evaluation.target '{settings.target}' is not scored ({left[settings.target]}):"
                     " machine-learning efficacy (TSTR) was skipped; name a modelled column")
        settings = settings.model_copy(update={"target": None})
    read_seconds = time.perf_counter() - started
    report: dict[str, Any] = {
        "synthpriv_evaluation": 1,
        "name": name,
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "notice": NOTICE,
        "differentially_private": False,
        "claim": None if claim is None else asdict(claim),
        "data": {
            "rows_real": samples.total("real"), "rows_synthetic": samples.total("synthetic"),
            "rows_holdout": samples.total("holdout") if has_holdout else None,
            "holdout_source": holdout_source, "numeric_columns": list(numeric_columns),
            "left_out": left,
            "read_seconds": read_seconds,
        },
        "settings": settings.model_dump(mode="json"),
        "notes": notes,
    }
    start = time.perf_counter()
    parts = Parts(["utility", "values"], progress)
    with parts.part("utility"):
        report["utility"] = evaluate_utility(
            samples.largest("real"), samples.largest("synthetic"), numeric_columns=numeric_columns,
            target=settings.target, holdout=samples.largest("holdout") if has_holdout else None,
            quality_report=settings.quality_report, seed=settings.attack_seed, samples=samples,
        )
        report["column_fidelity"] = column_fidelity(
            samples.rows("real", "marginals"), samples.rows("synthetic", "marginals"),
            numeric_columns)
    with parts.part("values"):
        report["values"] = value_fidelity(
            value_rows["real"], value_rows["synthetic"], numeric_columns,
            real_cells=csv_cells(sources.get("real"), sizes.marginals),
            synthetic_cells=csv_cells(sources.get("synthetic"), sizes.marginals),
            left_out=left, public={name: public_values(schema, name) for name in left},
        )
    parts.close()
    del value_rows
    copied = report["values"]["summary"]["left_out_copied"]
    if copied:
        report["notes"].append(
            "LEAK SIGNAL: the release holds real values of columns it never models ("
            + ", ".join(f"'{name}': {count}" for name, count in copied.items())
            + " distinct real values). Fresh keys and placeholders never equal a real value "
            "by chance: check how the release wrote these columns before publishing it.")
    efficacy = report["utility"].get("ml_efficacy")
    if efficacy:
        report["notes"].append(f"machine-learning efficacy for '{efficacy['target']}' is a "
                               f"{efficacy['task']} task: {efficacy['metric']}")
    report["utility"]["seconds"] = time.perf_counter() - start
    if rules:
        report["constraints"] = count_report(
            rules, broken["real"], samples.total("real"), broken["synthetic"],
            samples.total("synthetic"))
        report["notes"] += report["constraints"]["notes"]
    if settings.target is not None and not has_holdout:
        report["notes"].append("no holdout: machine-learning efficacy (TSTR) was skipped; it "
                               f"tests on real rows the generator did not see. {holdout_fix}")
    if not settings.attacks:
        report["notes"].append("attacks disabled in the config (evaluation.attacks: false)")
    elif not has_holdout or samples.total("holdout") < 4:
        report["notes"].append(
            f"no holdout: membership attacks need real non-members. {holdout_fix}"
        )
    else:
        report["privacy"] = evaluate_privacy(
            attack_rows["real"](), attack_rows["synthetic"](), attack_rows["holdout"](),
            numeric_columns=numeric_columns,
            settings=settings, claim=claim, shadow_generator=shadow_generator, progress=progress,
            person=person,
        )
    if holdout_source == "held back from the input":
        report["notes"].append(
            "the holdout is a random share of the input held back from the generator "
            "(evaluation.holdout_fraction): the release was fitted without those rows"
        )
    report["data"]["sampled"] = samples.summary()
    note = samples.note()
    if note:
        report["notes"].append(note)
    report["seconds"] = time.perf_counter() - started
    return report


def default_sizes(settings: EvaluationConfig) -> SampleSizes:
    """The default sample sizes, seeded with ``attack_seed``; every row when the config turns
    sampling off (``evaluation.sample: false``, if the config has that key)."""
    if getattr(settings, "sample", True) is False:
        return SampleSizes.disabled(settings.attack_seed)
    return SampleSizes(seed=settings.attack_seed)
