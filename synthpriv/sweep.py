"""The privacy–utility sweep: run one job at several ε (and repeats), evaluate each, plot.

Each run re-runs the job's pipeline at the given ε with fresh noise (secure randomness; or, when
the config sets a research seed, a distinct seed per run), refuses it as a release would when δ
is not below 1/n̂ (``check_delta``: public or DP counts only, never the exact n), evaluates the
synthetic table against the real one and the holdout, and adds a row to ``tradeoff.csv``. A
non-DP reference on the same training rows (default: sequential CART, synthpop's method, a strong
non-private generator; ``REFERENCES``) is evaluated once and drawn as a horizontal line.
Nothing is released: the synthetic tables stay in memory, and the outputs (which read the real
data) are NOT differentially private.
"""

from __future__ import annotations

import csv
import json
import math
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
from tqdm import tqdm

from synthpriv.chunks import read_input
from synthpriv.config import Job
from synthpriv.errors import ConfigError, DataError
from synthpriv.evaluation.controls import control_generators
from synthpriv.evaluation.evaluate import NOTICE, Claim, evaluate_tables
from synthpriv.evaluation.report import json_ready
from synthpriv.job import SynthesisJob, check_delta, check_public_delta, model_records
from synthpriv.privacy.randomness import RandomSource

COLUMNS = (
    "method", "epsilon", "repeat", "status", "error", "ledger_epsilon", "rows_synthetic",
    "tvd_1way", "tvd_2way", "tvd_3way", "association_diff", "tstr_auc", "trtr_auc", "tstr_r2",
    "sdv_quality", "auc_closest_distance", "auc_density_ratio", "attack_auc_worst",
    "eps_lower_bound", "attack_auc_se", "fit_seconds", "eval_seconds",
)
DP_METHOD = "synthpriv"
# name -> words of every non-DP reference (controls.control_generators names); cart is the default:
# on Adult it reaches 1-way TVD 0.005 and TSTR AUC 0.914 in 6 s, where GaussianCopula reaches 0.16
# and 0.81 (benchmarks/README.md, "A non-DP reference strong enough to mean something").
REFERENCES = {"cart": "sequential CART", "gaussian_copula": "Gaussian copula", "ctgan": "CTGAN"}
DEFAULT_REFERENCE = "cart"
REFERENCE_METHOD = f"{DEFAULT_REFERENCE} (non-DP)"
METRIC_WORDS = {
    "tvd_1way": "1-way TVD", "tvd_2way": "2-way TVD", "tvd_3way": "3-way TVD",
    "tstr_auc": "TSTR AUC", "tstr_r2": "TSTR R²",
    "auc_closest_distance": "closest-distance attack", "auc_density_ratio": "density-ratio attack",
    "eps_lower_bound": "ε lower bound",
}


def parse_epsilons(text: str) -> list[float]:
    """'0.1,0.3,1' -> [0.1, 0.3, 1.0]; a clear error for anything that is not positive and finite."""
    values = []
    for part in text.split(","):
        try:
            value = float(part)
        except ValueError:
            raise ConfigError(
                f"--epsilons: '{part.strip()}' is not a number. Give e.g. 0.1,0.3,1,3,10."
            ) from None
        if not math.isfinite(value) or value <= 0:
            raise ConfigError(f"--epsilons: every ε must be positive and finite, found {part.strip()}.")
        values.append(value)
    return values


@dataclass
class SweepResult:
    rows: list[dict]
    files: dict[str, Path]

    @property
    def failures(self) -> list[dict]:
        return [row for row in self.rows if row["status"] != "ok"]


def headline_figures(report: dict) -> dict:
    """The headline figures of one evaluation report (the sweep's columns; the API's results)."""
    utility = report["utility"]
    marginals = utility["marginals"]
    row: dict = {
        "rows_synthetic": report["data"]["rows_synthetic"],
        "tvd_1way": marginals["1-way"]["mean"],
        "tvd_2way": marginals.get("2-way", {}).get("mean"),
        "tvd_3way": marginals.get("3-way", {}).get("mean"),
        "association_diff": utility["association"]["mean"],
        "sdv_quality": utility.get("sdv_quality", {}).get("score"),
    }
    efficacy = utility.get("ml_efficacy")
    if efficacy:
        gb = efficacy["models"]["gradient_boosting"]
        if efficacy["task"] == "classification":
            row.update(tstr_auc=gb["tstr"]["auc"], trtr_auc=gb["trtr"]["auc"])
        else:
            row.update(tstr_r2=gb["tstr"]["r2"])
    privacy = report.get("privacy")
    if privacy:
        attacks = privacy["release"]["attacks"]
        row.update(
            auc_closest_distance=attacks.get("closest_distance", {}).get("auc"),
            auc_density_ratio=attacks.get("density_ratio", {}).get("auc"),
            attack_auc_worst=privacy["release"]["worst_case"]["auc"],
            attack_auc_se=max(a.get("auc_se") or 0.0 for a in attacks.values()) or None,
            eps_lower_bound=privacy["verdict"]["eps_lower_bound"],
        )
    return row


def _run_source(job: Job, index: int) -> RandomSource:
    """Fresh secure noise; with a research seed in the config, a distinct seed per run."""
    seed = job.config.seed
    return RandomSource.secure() if seed is None else RandomSource.seeded(seed + 7919 * (index + 1))


def run_sweep(
    job: Job,
    epsilons: Sequence[float],
    repeats: int,
    out: Path,
    *,
    reference: str | None = DEFAULT_REFERENCE,
    progress: bool = True,
) -> SweepResult:
    """Run, evaluate and tabulate the job at every ε × repeat; write tradeoff.csv/.json/.png.
    ``reference`` names the non-DP reference (``REFERENCES``), None for none."""
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, got {repeats}.")
    if reference is not None and reference not in REFERENCES:
        raise ConfigError(f"--reference: expected one of {', '.join(REFERENCES)}, found "
                          f"'{reference}'. Or give --no-reference.")
    whole = SynthesisJob(job)
    check_public_delta(job)  # before the data is read; else each run's DP n̂ decides
    real = whole.read()
    train, held_back = whole.split(real)
    holdout = read_input(job.holdout_path, job.schema) if job.holdout_path else held_back
    if holdout is None:
        raise DataError(
            f"{job.source}: the sweep evaluates against real non-members and a test set, but the "
            "config names no holdout. Set data.holdout, or evaluation.holdout_fraction."
        )
    settings = job.config.evaluation.model_copy(
        update={"controls": [], "anonymeter": False,
                "shadow": job.config.evaluation.shadow.model_copy(update={"enabled": False})}
    )
    numeric = job.schema.numeric_names
    budget = job.config.budget
    tasks = [(eps, r) for eps in epsilons for r in range(repeats)]
    rows: list[dict] = []
    bar = tqdm(total=len(tasks) + int(reference is not None), desc="sweep", unit="run",
               disable=not progress)
    for index, (epsilon, repeat) in enumerate(tasks):
        row = {"method": DP_METHOD, "epsilon": epsilon, "repeat": repeat}
        try:
            run_job = SynthesisJob(job.with_budget(epsilon, None), source=_run_source(job, index))
            start = time.perf_counter()
            run = run_job.synthesise(train)
            check_delta(job, model_records(run.state))  # as a release would: on DP n̂ only
            synthetic = run.synthetic.to_frame()  # drawn here: sampling is part of the fit's time
            fit_seconds = time.perf_counter() - start
            ledger_epsilon = run.ledger.epsilon(budget.delta)
            start = time.perf_counter()
            report = evaluate_tables(
                train, synthetic, numeric_columns=numeric, settings=settings, holdout=holdout,
                person=job.config.data.person,
                claim=Claim(ledger_epsilon, budget.delta, budget.neighbouring), progress=False,
                name=f"{job.config.name} ε={epsilon:g} #{repeat}",
            )
            row.update(headline_figures(report), status="ok", ledger_epsilon=ledger_epsilon,
                       fit_seconds=fit_seconds, eval_seconds=time.perf_counter() - start)
        except Exception as error:  # one failing run must not stop the others
            row.update(status="failed", error=f"{type(error).__name__}: {error}")
            tqdm.write(f"sweep: run ε = {epsilon:g}, repeat {repeat} failed: {row['error']}", file=sys.stderr)
        rows.append(row)
        bar.update()
    if reference is not None:  # the non-DP reference never sees the person key (data.person)
        keyless = [t.drop(columns=[job.config.data.person], errors="ignore")
                   if job.config.data.person else t for t in (train, holdout)]
        rows.append(_reference_row(reference, *keyless, numeric, settings, job.config.name))
        bar.update()
    bar.close()
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    files = write_tradeoff(out, rows, job)
    return SweepResult(rows, files)


def _reference_row(reference: str, train, holdout, numeric, settings, name: str) -> dict:
    """The non-DP ``reference`` fitted on ``train`` and evaluated like a run (no ε)."""
    row = {"method": f"{reference} (non-DP)", "epsilon": None, "repeat": 0}
    try:
        start = time.perf_counter()
        synthetic = control_generators()[reference](train, numeric, settings.attack_seed)
        fit_seconds = time.perf_counter() - start
        start = time.perf_counter()
        report = evaluate_tables(train, synthetic, numeric_columns=numeric, settings=settings,
                                 holdout=holdout, claim=None, progress=False, name=f"{name} reference")
        row.update(headline_figures(report), status="ok", fit_seconds=fit_seconds,
                   eval_seconds=time.perf_counter() - start)
    except Exception as error:
        row.update(status="failed", error=f"{type(error).__name__}: {error}")
        tqdm.write(f"sweep: the non-DP reference failed: {row['error']}", file=sys.stderr)
    return row


def write_tradeoff(out: Path, rows: list[dict], job: Job) -> dict[str, Path]:
    """tradeoff.csv (one row per run), tradeoff.json (the same, with the job) and tradeoff.png."""
    paths = {name: out / name for name in ("tradeoff.csv", "tradeoff.json", "tradeoff.png")}
    with paths["tradeoff.csv"].open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=COLUMNS, extrasaction="ignore")
        writer.writeheader()
        for row in rows:
            writer.writerow({c: _cell(row.get(c)) for c in COLUMNS})
    summary = {
        "notice": NOTICE, "job": job.config.name, "recipe": job.config.pipeline.recipe,
        "delta": job.config.budget.delta, "neighbouring": job.config.budget.neighbouring, "runs": rows,
    }
    paths["tradeoff.json"].write_text(json.dumps(json_ready(summary), indent=1) + "\n")
    paths["tradeoff.png"].write_bytes(tradeoff_figure(pd.DataFrame(rows, columns=COLUMNS), job.config.name))
    return paths


def _cell(value: object) -> object:
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return ""
    return f"{value:.6g}" if isinstance(value, float) else value


PANELS = (
    ("marginal fidelity (mean TVD, lower is better)", ("tvd_1way", "tvd_2way", "tvd_3way")),
    ("machine-learning efficacy (gradient boosting)", ("tstr_auc", "tstr_r2")),
    ("membership-inference AUC (0.5 = no advantage)", ("auc_closest_distance", "auc_density_ratio")),
    ("empirical ε lower bound (worst attack)", ("eps_lower_bound",)),
)
ATTACK_AXIS = (0.4, 1.0)  # fixed: AUC noise around 0.5 must not look like a trend


def _reference_words(method: str) -> str:
    name = method.removesuffix(" (non-DP)")
    return f"non-DP reference ({REFERENCES.get(name, name)})"


def _no_advantage_band(ax, dp: pd.DataFrame) -> None:
    """The no-advantage line AUC 0.5 and its 95% band (± 1.96 standard errors of an AUC on this
    many targets, the runs' mean): an AUC inside it is indistinguishable from guessing."""
    ax.axhline(0.5, color="grey", lw=0.8)
    se = dp["attack_auc_se"].dropna() if "attack_auc_se" in dp else pd.Series(dtype=float)
    if not se.empty:
        half = 1.96 * float(se.mean())
        ax.axhspan(0.5 - half, 0.5 + half, color="grey", alpha=0.2,
                   label=f"no advantage: AUC 0.5 ± {half:.3f} (95%)")
    low = min([ATTACK_AXIS[0], *(dp[m].min() - 0.02 for m in PANELS[2][1] if dp[m].notna().any())])
    ax.set_ylim(low, ATTACK_AXIS[1])


def tradeoff_figure(table: pd.DataFrame, name: str) -> bytes:
    """``tradeoff_plot`` as PNG bytes."""
    from synthpriv.evaluation.plots import png

    return png(tradeoff_plot(table, name))


def tradeoff_plot(table: pd.DataFrame, name: str):
    """Utility metrics and attack AUC vs ε: mean over repeats with min–max bars; the non-DP
    reference as a dashed horizontal line; TRTR and ε = ε (the claim) as grey lines; the attack
    panel on a fixed axis from below 0.5 with the no-advantage band. Legends in words."""
    from matplotlib.ticker import NullFormatter

    from synthpriv.evaluation.plots import plt
    from synthpriv.evaluation.readable import axis_formatter

    ok = table[table["status"] == "ok"]
    dp = ok[ok["method"] == DP_METHOD]
    ref = ok[ok["method"] != DP_METHOD]
    figure, axes = plt.subplots(2, 2, figsize=(12, 8.5))
    for ax, (title, metrics) in zip(axes.ravel(), PANELS, strict=True):
        for i, metric in enumerate(metrics):
            values = dp[["epsilon", metric]].dropna()
            if values.empty:
                continue
            colour = f"C{i}"
            grouped = values.groupby("epsilon")[metric].agg(["mean", "min", "max"])
            x = grouped.index.to_numpy(float)
            mean = grouped["mean"].to_numpy()
            spread = np.vstack([mean - grouped["min"].to_numpy(), grouped["max"].to_numpy() - mean])
            ax.errorbar(x, mean, yerr=spread, marker="o", capsize=3, color=colour,
                        label=f"{METRIC_WORDS[metric]} — synthpriv (DP)")
            if metric in ref and ref[metric].notna().any():
                first = ref[ref[metric].notna()].iloc[0]
                ax.axhline(float(first[metric]), color=colour, ls="--", lw=1,
                           label=f"{METRIC_WORDS[metric]} — {_reference_words(first['method'])}")
        if "tstr_auc" in metrics and dp["trtr_auc"].notna().any():
            ax.axhline(float(dp["trtr_auc"].dropna().mean()), color="grey", ls=":",
                       label="trained on real (TRTR)")
        if "auc_closest_distance" in metrics:
            _no_advantage_band(ax, dp)
        if "eps_lower_bound" in metrics and not dp.empty:
            eps = np.geomspace(dp["epsilon"].min(), dp["epsilon"].max(), 50)
            ax.plot(eps, eps, color="grey", ls=":", label="claimed ε (bound must stay below)")
            ax.set_yscale("symlog", linthresh=0.1)
            ax.yaxis.set_major_formatter(axis_formatter())
        ax.set_xscale("log")
        if not dp.empty:  # ticks at the swept ε, written out (not 3 × 10⁻¹)
            ax.set_xticks(sorted(dp["epsilon"].unique()))
        ax.xaxis.set_major_formatter(axis_formatter())
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.set_xlabel("ε (δ fixed)")
        ax.set_title(title, fontsize=10)
        if ax.get_legend_handles_labels()[0]:  # every run failed: an empty panel, no legend
            ax.legend(fontsize=7)
    figure.suptitle(f"Privacy–utility trade-off: {name} (mean, min–max over repeats)", fontsize=12)
    figure.tight_layout()
    return figure
