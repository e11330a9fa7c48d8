"""End-to-end privacy audit: the real job, many times, on neighbouring tables; an ε lower bound.

The harness writes a config, a schema and a CSV to a folder and calls ``runner.run_job`` (the path
``synthpriv run`` takes: plan, read the file, hold-back, engine, stages, manifest, atomic release)
``runs`` times on D and ``runs`` times on D', with fresh OS noise each time (no ``seed:``). D is
``records`` rows equal to ("c", …, "c") over categorical columns {c, z} (or the rows a setting
gives); D' is D plus the canary ("z", …, "z") under add/remove, or D with its last row replaced by
the canary under replace-one: an outlier in an otherwise constant table, the worst case for a
histogram.

Two scores per run, higher meaning "D'":
* black box: the number of cells of ``synthetic.csv`` that hold the canary's value;
* white box (``white_box_score``): the log-likelihood ratio of D' to D of what the run's
  mechanisms output. The release holds the noisy measurements with their σ (``model.json`` and
  ``model.npz``, ``synthpriv.model_store``), but not what AIM's selections saw — each round's
  model, candidates and weights are intermediate — so the harness reads each run's pipeline state
  through ``capture_state`` (a wrapper of ``SynthesisJob.run_stages``: the same measurements the
  model files hold, without a round trip through files) and AIM's rounds through
  ``capture_aim_rounds`` (wrappers of ``aim.aim_scores`` and ``aim.exponential_mechanism`` that
  keep the round's public inputs — model, candidates, weights, σ, ε — and its choice). For
  marginal recipes: every noisy marginal's Gaussian log-likelihood ratio in the canary's cell
  (and the displaced row's, when the canary may displace one), plus, for AIM, each selection's
  ln P_D'(chosen) − ln P_D(chosen) with AIM's scores of D and of D' against that round's model;
  for a generator alone, the network's log-likelihood of the canary row.

``empirical_epsilon`` (attack_metrics: threshold chosen on one half of the runs, or a given
``selection_fraction``, Clopper–Pearson bounds on the rest) turns each pair of score samples
into an ε lower bound; each view is bounded at level α/2, so the larger of the two (``certified``)
holds with probability ≥ 1 − 2α. A correct mechanism keeps ``certified`` ≤ the ledger's ε except
with that probability.

In Gaussian-DP terms (``gdp_audit.gdp_mu_lower_bound``, ``AuditResult.gdp``): the white box's
μ lower bound at confidence 1 − α, distribution-free, from the test "D' iff score ≥ 0" — the
white box of the marginal recipes is a log-likelihood ratio, whose midpoint is 0, fixed before
any run, so every run evaluates it (for a generator alone, a threshold chosen on half the runs).
It is compared with the ledger's μ = √(2ρ), ρ the zCDP the ledger records (``ledger_rho``): the
shift that ρ allows a composition of Gaussian measurements; and with ``discrete_mu``, the exact μ
of that test on the ledger's discrete Gaussian measurements, which a correct white box approaches
(slightly above √(2ρ) at small σ: the discrete Gaussian's curve is not exactly G_{1/σ}).

Speed: ``run_job`` plans the job and converts the ledger to ε on every run (each up to a second).
These, and the manifest's package versions, are deterministic functions of public inputs
(config, event list, environment), so ``cached_accounting`` memoises them during an audit;
nothing the mechanisms draw is cached.
"""

from __future__ import annotations

import contextlib
import functools
import math
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from synthpriv import job as job_module
from synthpriv import runner
from synthpriv.config import load_job
from synthpriv.evaluation.attack_metrics import empirical_epsilon
from synthpriv.evaluation.gdp_audit import (
    discrete_gaussian_midpoint_mu,
    gaussian_mu,
    gdp_mu_lower_bound,
)
from synthpriv.privacy import accountant
from synthpriv.stage import PipelineState

CATEGORIES = ("c", "z")  # the table's value, the canary's value
RECIPES = ("independent", "mst", "aim", "dpsgd", "hybrid")
# Small, fast stage settings for audits (public config, reported with every result).
FAST_STAGES: dict[str, dict[str, dict[str, Any]]] = {
    "independent": {},
    "mst": {"marginals": {"iterations": 50}},
    "aim": {"marginals": {"aim_rounds_per_attribute": 2, "aim_round_iterations": 20,
                          "iterations": 50}},
    "dpsgd": {"generator": {"epochs": 2, "sample_rate": 0.5, "hidden": 4, "max_grad_norm": 1.0}},
    "hybrid": {"marginals": {"aim_rounds_per_attribute": 2, "aim_round_iterations": 20,
                             "iterations": 50},
               "generator": {"epochs": 2, "sample_rate": 0.5, "hidden": 4}},
}
# Settings of the marginal recipes that let the white box see (nearly) all they spend, for the
# tightness audits: no adaptive domain (it can merge the canary's value into the table's, under
# twice the noise variance); MST spends 1 % of ρ choosing its one possible tree (was a third);
# AIM puts 99 % of each round's ρ on its measurements (was 90 %: on a constant table its
# selection leaks little) and runs its estimator 5 steps a round and at the end (was 20 and 50:
# the estimate is post-processing, and the white box reads the model each selection used, so
# its ratio stays exact; a run costs 0.045 s of CPU instead of 0.075). Public config: each is a
# valid setting of the recipe.
TIGHT_STAGES: dict[str, dict[str, dict[str, Any]]] = {
    "independent": {},
    "mst": {"marginals": {"iterations": 50, "mst_selection_fraction": 0.01,
                          "adaptive_domain": False}},
    "aim": {"marginals": {**FAST_STAGES["aim"]["marginals"], "aim_gaussian_fraction": 0.99,
                          "adaptive_domain": False, "aim_round_iterations": 5,
                          "iterations": 5}},
}


@dataclass(frozen=True)
class AuditSetting:
    """One audited configuration: recipe, budget, table size and the data-touching options."""

    recipe: str
    epsilon: float
    delta: float = 1e-3
    records: int = 8
    columns: int = 2
    neighbouring: str = "add_remove"
    holdout_fraction: float | None = None  # hold-back (evaluation.holdout_fraction)
    engine: str = "local"  # data.engine; "dask" runs on one in-process cluster per audit
    # budget.allow_large_delta: audits run tiny tables at a large δ (0.1) by design; the δ < 1/n̂
    # guidance check (job.check_delta, on a noisy n̂) would refuse some runs at random
    allow_large_delta: bool = True
    stages: Mapping[str, Mapping[str, Any]] | None = None  # default: FAST_STAGES[recipe]
    rows: tuple[tuple[str, ...], ...] | None = None  # D's rows (values in CATEGORIES); default
    # ``records`` rows of "c" in every one of ``columns`` columns
    white_box: str = "all"  # "selection": the white box scores AIM's selections only

    @property
    def base_rows(self) -> tuple[tuple[str, ...], ...]:
        """D's rows: ``rows``, or ``records`` rows equal to ("c", …, "c")."""
        if self.rows is not None:
            return self.rows
        return ((CATEGORIES[0],) * self.columns,) * self.records

    @property
    def label(self) -> str:
        parts = [self.recipe, f"eps={self.epsilon:g}"]
        if self.rows is not None:
            parts.append(f"{len(self.rows)} given rows")
        if self.white_box != "all":
            parts.append(f"white box: {self.white_box}")
        if self.neighbouring != "add_remove":
            parts.append(self.neighbouring)
        if self.holdout_fraction is not None:
            parts.append(f"holdback={self.holdout_fraction:g}")
        if self.engine != "local":
            parts.append(self.engine)
        return " ".join(parts)

    @property
    def white_box_threshold(self) -> float | None:
        """The white box's test threshold fixed before any run, for the GDP bound: 0 where the
        white box is a log-likelihood ratio (every recipe with measurements; for Gaussian
        measurements its means are ±μ²/2, so 0 is their midpoint); None for the generator alone
        (the network's log-likelihood has no known midpoint: chosen on half of the runs)."""
        return None if self.recipe == "dpsgd" else 0.0

    @property
    def displaces(self) -> bool:
        """Whether the canary may take a table row's place in what is fitted: replace-one, or a
        hold-back split (a correct one never does; the fixed-size split of old did). The white
        box then also scores the table's cell, which such a displacement lowers."""
        return self.neighbouring == "replace_one" or self.holdout_fraction is not None

    @property
    def column_names(self) -> list[str]:
        width = self.columns if self.rows is None else len(self.rows[0])
        return [f"a{j}" for j in range(width)]

    def table_rows(self, with_canary: bool) -> tuple[tuple[str, ...], ...]:
        """D (``with_canary`` False) or D': D plus the canary ("z", …, "z"), or under
        replace-one D with its last row replaced by it."""
        rows = self.base_rows
        if not with_canary:
            return rows
        canary = (CATEGORIES[1],) * len(self.column_names)
        return rows + (canary,) if self.neighbouring == "add_remove" else rows[:-1] + (canary,)

    def table(self, with_canary: bool) -> str:
        """D (``with_canary`` False) or D' as CSV text."""
        lines = [",".join(row) for row in self.table_rows(with_canary)]
        return "\n".join([",".join(self.column_names), *lines]) + "\n"

    def config(self, data: Path, out: Path, scheduler: str | None = None) -> dict[str, Any]:
        """The job config (no ``seed``: every run draws fresh OS noise)."""
        stages = FAST_STAGES[self.recipe] if self.stages is None else self.stages
        evaluation: dict[str, Any] = {"enabled": False}
        if self.holdout_fraction is not None:  # the split runs when evaluation is on
            evaluation = {"enabled": True, "holdout_fraction": self.holdout_fraction}
        data_section: dict[str, Any] = {
            "path": str(data), "engine": self.engine,
            "schema": {"columns": [{"name": c, "kind": "categorical", "categories": list(CATEGORIES)}
                                   for c in self.column_names]},
        }
        if scheduler is not None:
            data_section["scheduler"] = scheduler
        return {
            "name": "audit",
            "data": data_section,
            "budget": {"epsilon": self.epsilon, "delta": self.delta,
                       "neighbouring": self.neighbouring,
                       "allow_large_delta": self.allow_large_delta},
            "pipeline": {"recipe": self.recipe,
                         "stages": {k: dict(v) for k, v in stages.items()}},
            "evaluation": evaluation,
            "output": {"dir": str(out)},
        }


def _finite(value: float, digits: int) -> float | None:
    """``value`` rounded, or None (JSON null) when it is nan: a ledger without a zCDP ρ."""
    return round(value, digits) if math.isfinite(value) else None


@dataclass
class AuditResult:
    """Scores of every run and the ε lower bounds they certify."""

    setting: AuditSetting
    runs: int
    alpha: float
    ledger_epsilon: float
    seconds: float
    white: dict = field(repr=False, default_factory=dict)
    black: dict = field(repr=False, default_factory=dict)
    scores: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    ledger: dict = field(repr=False, default_factory=dict)  # the last run's manifest ledger
    gdp: dict = field(repr=False, default_factory=dict)  # white box, ``gdp_mu_lower_bound``

    @property
    def ledger_rho(self) -> float:
        """The ledger's zCDP ρ (``ledger_rho``); nan without one."""
        return ledger_rho(self.ledger)

    @property
    def ledger_mu(self) -> float:
        """μ = √(2ρ) of the ledger's ρ: the shift its measurements would allow as continuous
        Gaussians (discrete ones: ``discrete_mu``)."""
        return gaussian_mu(self.ledger_rho) if math.isfinite(self.ledger_rho) else math.nan

    @property
    def discrete_mu(self) -> float:
        """``discrete_gaussian_midpoint_mu`` of the ledger's discrete Gaussian measurements (the
        last run's): what a correct white box's bound at threshold 0 approaches, selections
        aside; nan when the ledger has none or the relation is not add/remove."""
        sigmas = ledger_sigmas(self.ledger)
        if not sigmas or self.setting.neighbouring != "add_remove":
            return math.nan
        return discrete_gaussian_midpoint_mu(sigmas)

    @property
    def certified(self) -> float:
        """max(white, black): each bound at level α/2, so this holds w.p. ≥ 1 − 2α."""
        return max(self.white["eps_lower_bound"], self.black["eps_lower_bound"])

    @property
    def confidence(self) -> float:
        return 1 - 2 * self.alpha

    def summary(self) -> dict[str, Any]:
        return {
            "setting": self.setting.label, "claimed_epsilon": round(self.ledger_epsilon, 4),
            "certified_white": round(self.white["eps_lower_bound"], 4),
            "certified_black": round(self.black["eps_lower_bound"], 4),
            "certified": round(self.certified, 4), "confidence": self.confidence,
            "runs_per_side": self.runs, "seconds": round(self.seconds, 1),
            "max_certifiable": round(self.white["max_certifiable"], 4),
            "ledger_rho": _finite(self.ledger_rho, 6), "ledger_mu": _finite(self.ledger_mu, 4),
            "discrete_mu": _finite(self.discrete_mu, 4),
            "gdp_mu_white": round(self.gdp["mu_lower_bound"], 4),
            "gdp_mu_share": _finite(self.gdp["mu_lower_bound"] / self.ledger_mu, 4),
            "gdp_eps_if_gaussian": round(self.gdp["eps_gaussian"], 4),
            "gdp_threshold": self.gdp["threshold"], "gdp_confidence": self.gdp["confidence"],
        }


# --- the white-box hook and the speed-ups (public computations only) ---------------------------


@contextlib.contextmanager
def capture_state() -> Iterator[list[PipelineState]]:
    """The white-box hook: while open, every ``SynthesisJob.run_stages`` call (one per
    ``run_job``) appends its pipeline state (measurements, model) to the list yielded. Nothing
    is released."""
    states: list[PipelineState] = []
    original = job_module.SynthesisJob.run_stages

    @functools.wraps(original)
    def run_stages(*args, **kwargs):
        run = original(*args, **kwargs)
        states.append(run.state)
        return run

    job_module.SynthesisJob.run_stages = run_stages
    try:
        yield states
    finally:
        job_module.SynthesisJob.run_stages = original


@contextlib.contextmanager
def cached_accounting() -> Iterator[None]:
    """Memoise ``plan_job`` as the job object calls it (keyed by the job's config but its file
    paths, and its folder: the plan reads no file) and the manifest's package versions: functions
    of public inputs only, so every run's release, ledger and manifest are unchanged; only the
    repeated computation is skipped (with the ledger's own memo of its bounds,
    ``accountant._composed_bounds``, about 3/4 of a small run's time)."""
    plan_job = job_module.plan_job
    versions = runner.package_versions
    plans: dict[str, Any] = {}

    def cached_plan(job):  # D's and D' 's jobs differ only in their files: one plan
        key = job.config.model_dump_json(exclude={"data": {"path"}, "output": {"dir"}})
        key += str(job.base_dir)
        if key not in plans:
            plans[key] = plan_job(job)
        return plans[key]

    job_module.plan_job = cached_plan
    runner.package_versions = functools.cache(versions)
    try:
        yield
    finally:
        job_module.plan_job, runner.package_versions = plan_job, versions


@contextlib.contextmanager
def dask_scheduler(setting: AuditSetting) -> Iterator[str | None]:
    """One in-process Dask cluster for the whole audit when the setting uses the dask engine
    (starting one per run would take seconds); the jobs reach it through ``data.scheduler``."""
    if setting.engine != "dask":
        yield None
        return
    from distributed import LocalCluster

    with LocalCluster(n_workers=1, threads_per_worker=1, processes=False,
                      dashboard_address=None) as cluster:
        yield cluster.scheduler_address


# --- scores --------------------------------------------------------------------------------------


def black_box_score(synthetic: Any, setting: AuditSetting) -> float:
    """Cells of the released table that hold the canary's value (``synthetic`` is the table
    read back from ``synthetic.csv``)."""
    return float((synthetic[setting.column_names].astype(str) == CATEGORIES[1]).to_numpy().sum())


def _hypothesis_codes(
    setting: AuditSetting, state: PipelineState, with_canary: bool
) -> np.ndarray:
    """D's (or D' 's) rows as codes of the domain the run measured on: the categories' codes,
    through the adaptive domain's maps when the run chose one (a DP output, public)."""
    rows = setting.table_rows(with_canary)
    codes = np.array([[CATEGORIES.index(v) for v in row] for row in rows], dtype=np.int64)
    if state.coarsening is not None:
        maps = state.coarsening.maps
        codes = np.stack([np.asarray(maps[a])[codes[:, j]]
                          for j, a in enumerate(setting.column_names)], axis=1)
    return codes


def _fitted_share(setting: AuditSetting) -> float:
    """Expected share of the table's rows that the stages fit (less the hold-back)."""
    return 1 - (setting.holdout_fraction or 0.0)


def measurement_log_ratio(state: PipelineState, setting: AuditSetting) -> float:
    """Σ over the noisy marginals of ln p(y | D') − ln p(y | D) for a (discrete) Gaussian count:
    the canary adds one to its cell, ((y − T) ² − (y − T − 1)²)/(2σ²) with T D's count there
    (expected, less the hold-back); where the canary may displace D's last row (``displaces``)
    and lands in another cell, that cell loses one. Exact for add/remove without hold-back."""
    codes = _hypothesis_codes(setting, state, with_canary=False)
    share, columns = _fitted_share(setting), setting.column_names
    canary_row = _hypothesis_codes(setting, state, with_canary=True)[-1]
    score = 0.0
    for m in state.measurements:
        if not m.clique:
            continue
        axes = [columns.index(a) for a in m.clique]
        counts = np.zeros(np.shape(m.noisy_counts))
        np.add.at(counts, tuple(codes[:, axes].T), share)
        sigma = np.broadcast_to(np.asarray(m.sigma, float), counts.shape)
        canary, displaced = tuple(canary_row[axes]), tuple(codes[-1, axes])
        excess = m.noisy_counts[canary] - counts[canary]
        score += (2 * excess - 1) / (2 * sigma[canary] ** 2)
        if setting.displaces and canary != displaced:
            excess = m.noisy_counts[displaced] - counts[displaced]
            score += (-2 * excess - 1) / (2 * sigma[displaced] ** 2)
    return float(score)


@dataclass(frozen=True)
class AimRound:
    """What one AIM selection round used that is public (post-processing of earlier noisy
    measurements: the model, σ, ε; the candidates and weights from the domain) and its output."""

    model: Any
    allowed: list
    weights: dict
    sigma: float
    epsilon: float
    chosen: int
    scores: Callable[..., np.ndarray]  # aim_scores, to score the hypotheses D and D'


@contextlib.contextmanager
def capture_aim_rounds() -> Iterator[list[AimRound]]:
    """The white-box hook on AIM's selection: while open, each round's public inputs
    (``aim.aim_scores``' model, candidates, weights, σ — not its true counts) and the
    exponential mechanism's ε and output are appended to the list yielded."""
    from synthpriv.marginals import aim

    rounds: list[AimRound] = []
    pending: list[tuple] = []
    scores, mechanism = aim.aim_scores, aim.exponential_mechanism

    def aim_scores(truth, model, allowed, weights, sigma, *args, **kwargs):
        pending.append((model, list(allowed), weights, sigma))
        return scores(truth, model, allowed, weights, sigma, *args, **kwargs)

    def exponential_mechanism(values, epsilon, sensitivity, rng):
        chosen = mechanism(values, epsilon, sensitivity, rng)
        rounds.append(AimRound(*pending.pop(), epsilon, chosen, scores))
        return chosen

    aim.aim_scores, aim.exponential_mechanism = aim_scores, exponential_mechanism
    try:
        yield rounds
    finally:
        aim.aim_scores, aim.exponential_mechanism = scores, mechanism


def selection_log_ratio(
    rounds: list[AimRound], state: PipelineState, setting: AuditSetting
) -> float:
    """Σ over AIM's rounds of ln P_D'(chosen) − ln P_D(chosen) under the exponential mechanism as
    the ledger charges it: P(i) ∝ exp(ε·s_i/(2Δ)), s = AIM's scores of D or D' against the
    round's model, Δ = max allowed weight × the histogram's L1 sensitivity."""
    if not rounds:
        return 0.0
    from scipy.special import log_softmax

    from synthpriv.domain import Dataset
    from synthpriv.privacy.mechanisms import exponential_logits, histogram_l1_sensitivity

    share, l1 = _fitted_share(setting), histogram_l1_sensitivity(setting.neighbouring)
    tables = {side: _hypothesis_codes(setting, state, side) for side in (False, True)}
    score = 0.0
    for r in rounds:
        delta = max(r.weights[c] for c in r.allowed) * l1
        log_p = []
        for side in (False, True):
            data = Dataset(tables[side], r.model.domain)
            truth = {c: share * data.marginal(c) for c in r.allowed}
            scores = r.scores(truth, r.model, r.allowed, r.weights, r.sigma)
            logits = exponential_logits(scores, r.epsilon, delta)
            log_p.append(log_softmax(logits)[r.chosen])
        score += log_p[1] - log_p[0]
    return float(score)


def white_box_score(
    state: PipelineState, setting: AuditSetting, rounds: list[AimRound] | None = None,
) -> float:
    """The white-box view of one run: for marginal recipes the log-likelihood ratio of D' to D
    of every noisy marginal (``measurement_log_ratio``) and of AIM's selections when ``rounds``
    (``capture_aim_rounds``) are given — of the selections only when the setting's
    ``white_box`` is "selection" (an audit of the selection mechanism, whose ratio the
    measurements' noise would blur); for a generator alone, the network's log-likelihood of
    the canary row."""
    if setting.white_box == "selection":
        return selection_log_ratio(rounds or [], state, setting)
    if state.measurements:
        return measurement_log_ratio(state, setting) + selection_log_ratio(rounds or [], state,
                                                                            setting)
    network = getattr(state.model, "network", None)
    if network is None:
        raise ValueError(f"no white-box view of recipe {setting.recipe!r}: no measurements, no network")
    import torch

    with torch.no_grad():
        canary = torch.ones((1, len(setting.column_names)), dtype=torch.long)
        return float(-network(canary)[0])


# --- the audit -----------------------------------------------------------------------------------

_ZCDP_EVENTS = {cls.kind: cls for cls in (  # the ledger's event kinds that have a zCDP bound
    accountant.GaussianEvent, accountant.DiscreteGaussianEvent, accountant.ExponentialEvent,
    accountant.ZCDPEvent)}


def ledger_rho(ledger: Mapping[str, Any]) -> float:
    """The zCDP ρ of a manifest's ``ledger``: each fixed event's (``accountant.zcdp_rho``) plus
    each zCDP filter's reserved ρ (AIM's rounds spend through one); nan when an event has no
    zCDP bound (DP-SGD, thresholds) or there is no ledger."""
    if not ledger:
        return math.nan
    rho = sum(float(f["reserved_rho"]) for f in ledger.get("adaptive", []))
    for event in ledger["events"]:
        cls = _ZCDP_EVENTS.get(event["kind"])
        if cls is None:
            return math.nan
        rho += accountant.zcdp_rho(cls(**{k: v for k, v in event.items() if k != "kind"}))
    return rho


def ledger_sigmas(ledger: Mapping[str, Any]) -> list[float]:
    """The noise multipliers of a manifest ledger's discrete Gaussian histogram releases (fixed
    and inside zCDP filters), one per release: under add/remove each moves one cell by one."""
    events = list(ledger["events"])
    for spent in ledger.get("adaptive", []):
        events += spent["events"]
    return [float(e["noise_multiplier"]) for e in events if e["kind"] == "discrete_gaussian"
            for _ in range(int(e["count"]))]



def audit_runs(
    setting: AuditSetting, runs: int, folder: Path, progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, np.ndarray], float, dict]:
    """``runs`` runs of the job on D and on D' (interleaved, so machine load hits both alike).
    Returns the scores {white_in, white_out, black_in, black_out}, the ledger's ε and the last
    run's manifest ledger."""
    scores = {k: np.empty(runs) for k in ("white_in", "white_out", "black_in", "black_out")}
    claimed, ledger = math.nan, {}
    with (dask_scheduler(setting) as scheduler, cached_accounting(), capture_state() as states,
          capture_aim_rounds() as rounds):
        jobs = {}
        folder.mkdir(parents=True, exist_ok=True)
        for side, with_canary in (("in", True), ("out", False)):
            (folder / f"{side}.csv").write_text(setting.table(with_canary))
            config = setting.config(folder / f"{side}.csv", folder / f"{side}-release", scheduler)
            (folder / f"{side}.yaml").write_text(yaml.safe_dump(config))
            jobs[side] = load_job(folder / f"{side}.yaml")
        evaluate = setting.holdout_fraction is not None
        for i in range(runs):
            for side, job in jobs.items():
                result = runner.run_job(job, force=True, evaluate=evaluate)
                if job.config.seed is not None or result.manifest["randomness"]["mode"] != "secure":
                    raise RuntimeError("an audit needs fresh OS noise in every run (no seed)")
                state = states.pop()
                scores[f"white_{side}"][i] = white_box_score(state, setting, rounds)
                rounds.clear()
                scores[f"black_{side}"][i] = black_box_score(result.synthetic, setting)
                claimed = result.manifest["guarantee"]["epsilon"]
                ledger = result.manifest["ledger"]
            if progress is not None and (i + 1) % max(1, runs // 10) == 0:
                progress(f"{setting.label}: {i + 1}/{runs} runs per side")
    return scores, float(claimed), ledger


def run_audit(
    setting: AuditSetting, runs: int, alpha: float = 0.05, folder: Path | None = None,
    progress: Callable[[str], None] | None = None, selection_fraction: float = 0.5,
) -> AuditResult:
    """Audit ``setting`` with ``runs`` runs per side; ε bounds at confidence 1 − 2·alpha (the
    threshold chosen on ``selection_fraction`` of the runs, the bound computed on the rest), and
    the white box's GDP μ bound at 1 − alpha (at ``white_box_threshold``, all runs; else chosen
    on ``selection_fraction`` of them)."""
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="audit-")))
        scores, claimed, ledger = audit_runs(setting, runs, folder, progress)
    seconds = time.perf_counter() - start
    bounds = {
        view: empirical_epsilon(scores[f"{view}_in"], scores[f"{view}_out"], setting.delta,
                                alpha / 2, np.random.default_rng(index), selection_fraction)
        for index, view in enumerate(("white", "black"))
    }
    gdp = gdp_mu_lower_bound(scores["white_in"], scores["white_out"], alpha,
                             setting.white_box_threshold, setting.delta,
                             np.random.default_rng(2), selection_fraction)
    return AuditResult(setting, runs, alpha, claimed, seconds, bounds["white"], bounds["black"],
                       scores, ledger, gdp)
