"""The privacy–utility sweep: run one job at several ε (and repeats), evaluate each, plot.

Each run re-runs the job's pipeline at the given ε with fresh noise (secure randomness; or, when
the config sets a research seed, a distinct seed per run), refuses it as a release would when δ
is not below 1/n̂ (``check_delta``: public or DP counts only, never the exact n), evaluates the
synthetic table against the real one and the holdout, and adds a row to ``tradeoff.csv``. A
non-DP reference (SDV's GaussianCopula on the same training rows) is evaluated once and drawn
as a horizontal line.
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
from synthpriv.evaluation.controls import sdv_generator
from synthpriv.evaluation.evaluate import NOTICE, Claim, evaluate_tables
from synthpriv.evaluation.report import json_ready
from synthpriv.job import SynthesisJob, check_delta, check_public_delta, model_records
from synthpriv.privacy.randomness import RandomSource

COLUMNS = (
    "method", "epsilon", "repeat", "status", "error", "ledger_epsilon", "rows_synthetic",
    "tvd_1way", "tvd_2way", "tvd_3way", "association_diff", "tstr_auc", "trtr_auc", "tstr_r2",
    "sdv_quality", "auc_closest_distance", "auc_density_ratio", "attack_auc_worst",
    "eps_lower_bound", "fit_seconds", "eval_seconds",
)
DP_METHOD = "synthpriv"
REFERENCE_METHOD = "gaussian_copula (non-DP)"


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
    reference: bool = True,
    progress: bool = True,
) -> SweepResult:
    """Run, evaluate and tabulate the job at every ε × repeat; write tradeoff.csv/.json/.png."""
    if repeats < 1:
        raise ConfigError(f"--repeats must be at least 1, got {repeats}.")
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
    bar = tqdm(total=len(tasks) + int(reference), desc="sweep", unit="run", disable=not progress)
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
    if reference:  # the non-DP reference never sees the person key (data.person)
        keyless = [t.drop(columns=[job.config.data.person], errors="ignore")
                   if job.config.data.person else t for t in (train, holdout)]
        rows.append(_reference_row(*keyless, numeric, settings, budget.delta, job.config.name))
        bar.update()
    bar.close()
    out = Path(out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    files = write_tradeoff(out, rows, job)
    return SweepResult(rows, files)


def _reference_row(train, holdout, numeric, settings, delta: float, name: str) -> dict:
    row = {"method": REFERENCE_METHOD, "epsilon": None, "repeat": 0}
    try:
        start = time.perf_counter()
        synthetic = sdv_generator("gaussian_copula", train, numeric, settings.attack_seed)
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
    ("membership-inference AUC (0.5 = guessing)", ("auc_closest_distance", "auc_density_ratio")),
    ("empirical ε lower bound (worst attack)", ("eps_lower_bound",)),
)


def tradeoff_figure(table: pd.DataFrame, name: str) -> bytes:
    """Utility metrics and attack AUC vs ε: mean over repeats with min–max bars; the non-DP
    reference as a dashed horizontal line; TRTR and ε = ε (the claim) as grey lines."""
    from synthpriv.evaluation.plots import plt, png

    ok = table[table["status"] == "ok"]
    dp = ok[ok["method"] == DP_METHOD]
    ref = ok[ok["method"] == REFERENCE_METHOD]
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
                        label=f"{metric} (synthpriv)")
            if metric in ref and ref[metric].notna().any():
                ax.axhline(float(ref[metric].dropna().iloc[0]), color=colour, ls="--", lw=1,
                           label=f"{metric} ({REFERENCE_METHOD})")
        if "tstr_auc" in metrics and dp["trtr_auc"].notna().any():
            ax.axhline(float(dp["trtr_auc"].dropna().mean()), color="grey", ls=":",
                       label="trained on real (TRTR)")
        if "auc_closest_distance" in metrics:
            ax.axhline(0.5, color="grey", lw=0.8, label="chance")
        if "eps_lower_bound" in metrics and not dp.empty:
            eps = np.geomspace(dp["epsilon"].min(), dp["epsilon"].max(), 50)
            ax.plot(eps, eps, color="grey", ls=":", label="claimed ε (bound must stay below)")
            ax.set_yscale("symlog", linthresh=0.1)
        ax.set_xscale("log")
        ax.set_xlabel("ε (δ fixed)")
        ax.set_title(title, fontsize=10)
        if ax.get_legend_handles_labels()[0]:  # every run failed: an empty panel, no legend
            ax.legend(fontsize=7)
    figure.suptitle(f"Privacy–utility trade-off: {name} (mean, min–max over repeats)", fontsize=12)
    figure.tight_layout()
    return png(figure)
