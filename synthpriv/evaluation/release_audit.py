"""End-to-end audit of the whole release folder, on neighbouring tables at decision boundaries.

``synthpriv.evaluation.audit`` audits the job on a constant categorical table and scores
synthetic.csv (black box) and the captured measurements (white box). This module audits what
that harness never reaches: the DP domain step (bounds, category discovery), the adaptive grid
and bins, model.npz (fitted decoding masses, fine → coarse maps, measurements) and the
manifest's resolved schema. It reuses audit.py's speed-ups (``cached_accounting``), its state
hook (``capture_state``) and ``attack_metrics.empirical_epsilon``; the runs go through the real
``runner.run_job`` with files (config, schema, CSV), fresh OS noise each time (no seed).

Neighbouring tables D / D' = D + one canary row, chosen where an exact count would flip a
decision (the builders below compute the boundary from the plan's public noise scales):

* ``grid_boundary``: n where the adaptive grid's cell count ``int(n̂/(2σ))`` (compress.
  grid_cells) flips between n and n + 1 — the grid n̂ sizes must come from the noisy count;
* ``point_mass``: a numeric column with one value repeated so that with the canary its cell
  passes the point-mass rule (≥ 3σ and a bin's share) and the column's bins regroup;
* ``far_canary``: a canary far beyond the other values of a column without bounds (the DP
  bounds may move with it only as far as their noise allows);
* ``discovered_category``: a category that exists only through the canary, under DP discovery;
* ``dpsgd_canary``: the generator alone on a constant table, with a DP-SGD white box;
* ``person_canary`` (data.person): D' = D + one person with many more rows than k, the
  neighbouring relation per person: certifies ≤ the ledger only if bounding cuts the person to k
  rows and every sensitivity is k.

Every run is scored by every view (``VIEWS``): functions of the release folder an adversary
would compute, each reading one released file (model.npz/model.json, manifest.json's resolved
schema, synthetic.csv) plus, for DP-SGD, the noised gradients (``capture_dpsgd``). Each view's
ε lower bound is taken at level α/k over the k views (Bonferroni), so the largest of them
(``certified``) holds with probability ≥ 1 − 2α, as in audit.py.
"""

from __future__ import annotations

import contextlib
import copy
import json
import math
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from synthpriv import job as job_module
from synthpriv import runner
from synthpriv.config import load_job
from synthpriv.evaluation.attack_metrics import empirical_epsilon
from synthpriv.evaluation.audit import FAST_STAGES, cached_accounting, capture_state
from synthpriv.marginals import compress
from synthpriv.schema import CategoricalColumn, NumericColumn, Schema, parse_schema

ABSENT = -1.0e6  # a view's score when the canary's cell is not in the release at all


@dataclass(frozen=True)
class ReleaseSetting:
    """One neighbouring pair: D (``rows`` over ``schema``), D' = D + ``canary``; the audited
    ``column``; the views scored; public config. ``grid`` holds the two measured grids (cell
    counts k, k + 1) the grid view tells apart, when the setting sits on a grid boundary."""

    name: str
    recipe: str
    epsilon: float
    schema: tuple[dict, ...]
    rows: tuple[tuple, ...]
    canary: tuple
    column: str
    views: tuple[str, ...]
    delta: float = 1e-3
    stages: dict = field(default_factory=dict)
    grid: tuple[float, float] | None = None  # n̂ giving k and k + 1 grid cells
    sigma: float = 0.0  # the stage's public 1-way σ (the grid view rebuilds the grids with it)
    # data.person: the person column and k; the canary is then one person's ``canary_rows`` rows
    person: str | None = None
    rows_per_person: int | None = None
    canary_rows: int = 1

    @property
    def names(self) -> list[str]:
        return [c["name"] for c in self.schema]

    def table(self, with_canary: bool) -> str:
        rows = self.rows + ((self.canary,) * self.canary_rows if with_canary else ())
        lines = [",".join(str(v) for v in row) for row in rows]
        return "\n".join([",".join(self.names), *lines]) + "\n"

    def config(self, data: Path, out: Path) -> dict[str, Any]:
        """The job config (no ``seed``: every run draws fresh OS noise)."""
        persons = {} if self.person is None else {"person": self.person,
                                                  "rows_per_person": self.rows_per_person}
        return {
            "name": f"release-audit-{self.name}",
            "data": {"path": str(data), "schema": {"columns": [dict(c) for c in self.schema]},
                     **persons},
            "budget": {"epsilon": self.epsilon, "delta": self.delta},
            "pipeline": {"recipe": self.recipe,
                         "stages": {k: dict(v) for k, v in self.stages.items()}},
            "evaluation": {"enabled": False},
            "output": {"dir": str(out)},
        }

    @property
    def label(self) -> str:
        return f"{self.name} {self.recipe} eps={self.epsilon:g} n={len(self.rows)}"


def planned_noise(setting: ReleaseSetting) -> dict[str, float]:
    """The recipe stage's public noise figures (σ's, z, C, …) from the plan: no data read."""
    with tempfile.TemporaryDirectory(prefix="release-audit-plan-") as tmp:
        folder = Path(tmp)
        (folder / "d.csv").write_text(setting.table(False))
        (folder / "j.yaml").write_text(yaml.safe_dump(setting.config(folder / "d.csv",
                                                                      folder / "out")))
        plan, _ = job_module.plan_job(load_job(folder / "j.yaml"))
    noise: dict[str, float] = {}
    for stage in plan.stages:
        if stage.stage != "domain":
            noise.update(stage.noise)
    return noise


# --- the settings at decision boundaries ---------------------------------------------------------

MST = {"marginals": {"iterations": 50}}
CONSTANT = {"name": "a", "kind": "categorical", "categories": ["c", "z"]}


def grid_boundary(epsilon: float = 1.0, cells: int = 20, upper: int = 2000) -> ReleaseSetting:
    """D: n rows spread evenly over an integer column [0, upper] (public bounds, fine grid),
    n the largest count with ``int(n/(2σ))`` = ``cells`` − 1: one more row makes the measured
    grid ``cells`` cells. A grid sized by the exact n tells D from D' every time."""
    column = {"name": "x", "kind": "integer", "lower": 0, "upper": upper}
    probe = ReleaseSetting("grid", "mst", epsilon, (column, CONSTANT), ((0, "c"),), (0, "c"),
                           "x", (), stages=MST)
    sigma = planned_noise(probe)["sigma_one_way"]
    n = math.ceil(2 * sigma * cells) - 1
    if compress.grid_cells(n, sigma, 1024) != cells - 1:
        n -= 1
    rows = tuple((round(i * upper / n), "c") for i in range(n))
    return replace(probe, rows=rows, canary=(upper // 2 + 1, "c"), sigma=sigma,
                   views=("model.npz:grid", "model.npz:mass", "manifest.json:schema",
                          "synthetic.csv:cell"),
                   grid=(2 * sigma * (cells - 1) + 0.5, 2 * sigma * cells + 0.5))


def point_mass(epsilon: float = 1.0, values: int = 8) -> ReleaseSetting:
    """D: an integer column 0..values−1 (one fine cell per value, so the measured grid is the
    fine one), one value v heaped ⌈3σ⌉ − 1 times, the others ``u`` times; the canary adds a v,
    so exact counts make v's cell a point mass (≥ 3σ and a bin's share) with it and not without,
    and the other cells regroup over one bin less. ``u`` is the smallest giving that flip."""
    column = {"name": "x", "kind": "integer", "lower": 0, "upper": values - 1}
    probe = ReleaseSetting("point_mass", "mst", epsilon, (column, CONSTANT), ((0, "c"),),
                           (0, "c"), "x", (), stages=MST)
    sigma = planned_noise(probe)["sigma_one_way"]
    heap, v = math.ceil(compress.SIGNIFICANT * sigma) - 1, values // 2
    for u in range(1, 10 * heap):
        exact = np.full(values, float(u))
        exact[v] = heap
        n = exact.sum()
        bins = compress.bin_count(n, sigma), compress.bin_count(n + 1, sigma)
        with_canary = exact.copy()
        with_canary[v] += 1
        before = compress.numeric_groups(exact, bins[0], sigma)
        after = compress.numeric_groups(with_canary, bins[1], sigma)
        if before.max() != after.max():
            break
    else:
        raise ValueError(f"no point-mass boundary for σ = {sigma:.3g}")
    rows = tuple((i, "c") for i, k in enumerate(exact.astype(int)) for _ in range(k))
    return replace(probe, rows=rows, canary=(v, "c"), sigma=sigma,
                   views=("model.npz:mass", "model.npz:bins", "manifest.json:schema",
                          "synthetic.csv:cell"))


def far_canary(epsilon: float = 1.0, records: int = 100, far: int = 1_000_000) -> ReleaseSetting:
    """D: ``records`` values 1..100 in an integer column without bounds (DP bounds); the
    canary's value is ``far``. The DP upper bound may reach it only as often as the domain
    step's noise allows. 100 rows: the canary is then 1 % of the column, more than the 0.5 % a
    DP bound may clip (privacy/bounds.py), so bounds read from exact counts would hold it."""
    column = {"name": "x", "kind": "integer"}
    rows = tuple((1 + i % 100, "c") for i in range(records))
    return ReleaseSetting("far_canary", "mst", epsilon, (column, CONSTANT), rows, (far, "c"), "x",
                          ("model.npz:mass", "model.npz:bins", "manifest.json:schema",
                           "synthetic.csv:cell"), stages=MST)


def discovered_category(epsilon: float = 1.0, records: int = 50) -> ReleaseSetting:
    """D: a categorical column without categories (DP discovery), every value "c"; the canary's
    "z" exists only through it. Kept only when its noisy count passes the threshold set from
    the δ share."""
    column = {"name": "b", "kind": "categorical", "other": "other"}
    rows = tuple(("c", "c") for _ in range(records))
    return ReleaseSetting("discovered_category", "mst", epsilon, (CONSTANT, column), rows,
                          ("c", "z"), "b", ("model.npz:mass", "model.npz:bins",
                                            "manifest.json:schema", "synthetic.csv:cell"),
                          stages=MST)


def dpsgd_canary(epsilon: float = 1.0, records: int = 8) -> ReleaseSetting:
    """D: ``records`` rows ("c", "c") for the generator alone (recipe dpsgd, audit.py's fast
    settings); the canary ("z", "z"). Scored by the DP-SGD white box (``dpsgd_log_ratio``) and
    the released files."""
    columns = (CONSTANT, {**CONSTANT, "name": "b"})
    rows = tuple(("c", "c") for _ in range(records))
    return ReleaseSetting("dpsgd_canary", "dpsgd", epsilon, columns, rows, ("z", "z"), "a",
                          ("white:dpsgd", "model.npz:canary_nll", "manifest.json:schema",
                           "synthetic.csv:cell"), stages=FAST_STAGES["dpsgd"])


def person_canary(epsilon: float = 1.0, records: int = 40, rows_per_person: int = 2,
                  canary_rows: int = 60) -> ReleaseSetting:
    """data.person: D holds ``records`` persons of one row ("c", "c") each; D' adds one person
    with ``canary_rows`` rows ("z", "z") — many more than k = ``rows_per_person``, so bounding
    must cut them to k for the ledger's ε (sensitivity k) to hold. Neighbours per person."""
    person = {"name": "pid", "kind": "id"}
    columns = (person, CONSTANT, {**CONSTANT, "name": "b"})
    rows = tuple((f"p{i}", "c", "c") for i in range(records))
    return ReleaseSetting("person", "mst", epsilon, columns, rows, ("canary", "z", "z"), "a",
                          ("model.npz:mass", "synthetic.csv:cell"), stages=MST, person="pid",
                          rows_per_person=rows_per_person, canary_rows=canary_rows)


SETTINGS: dict[str, Callable[..., ReleaseSetting]] = {
    "grid": grid_boundary, "point_mass": point_mass, "far_canary": far_canary,
    "discovered_category": discovered_category, "dpsgd": dpsgd_canary, "person": person_canary,
}


# --- reading a release folder --------------------------------------------------------------------


@dataclass
class Release:
    """One run's release folder, read as an adversary reads it (files only), and the run's
    captured DP-SGD steps (noised gradients: outputs of the mechanism)."""

    folder: Path
    manifest: dict
    model: dict
    arrays: dict[str, np.ndarray]
    synthetic: pd.DataFrame
    steps: list = field(default_factory=list)
    network: Any = None  # the run's network object (its architecture: public config)

    @classmethod
    def read(cls, folder: Path, steps: list | None = None, network: Any = None) -> Release:
        manifest = json.loads((folder / "manifest.json").read_text())
        model = json.loads((folder / "model.json").read_text())
        with np.load(folder / "model.npz", allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        synthetic = pd.read_csv(folder / "synthetic.csv", dtype=str, keep_default_na=False)
        return cls(folder, manifest, model, arrays, synthetic, steps or [], network)

    @property
    def schema(self) -> Schema:
        """The resolved schema the manifest publishes (DP bounds and categories filled in)."""
        return parse_schema(self.manifest["schema"], "the manifest's resolved schema")

    def fine_code(self, setting: ReleaseSetting) -> int | None:
        """The canary's fine code in the audited column under the released schema; None when
        the release has no cell for it (a category not discovered, a value outside bounds)."""
        column = self.schema.column(setting.column)
        value = setting.canary[setting.names.index(setting.column)]
        if isinstance(column, CategoricalColumn):
            return column.categories.index(value) if value in column.categories else None
        if not column.lower <= float(value) <= column.upper:
            return None
        edges = column.bin_edges()
        return int(np.clip(np.searchsorted(edges, float(value), side="right") - 1, 0,
                           len(edges) - 2))

    def coarsening(self, attribute: str) -> tuple[np.ndarray, np.ndarray] | None:
        """(fine → coarse map, fitted fine masses) of ``attribute`` from model.npz, if coarsened."""
        if attribute not in self.model["coarsened"]:
            return None
        i = self.model["coarsened"].index(attribute)
        return self.arrays[f"coarsening_{i}_map"], self.arrays[f"coarsening_{i}_mass"]


# --- the views: one score per file, higher meaning "D'" -------------------------------------------


def view_mass(release: Release, setting: ReleaseSetting) -> float:
    """model.npz: the fitted decoding mass of the canary's fine cell (the 1-way noisy count of
    its cell when the column is not coarsened); ABSENT when the release has no such cell."""
    code = release.fine_code(setting)
    if code is None:
        return ABSENT
    coarsened = release.coarsening(setting.column)
    if coarsened is not None:
        return float(coarsened[1][code])
    i = release.model["measurements"].index([setting.column])
    return float(release.arrays[f"measurement_{i}_counts"][code])


def view_bins(release: Release, setting: ReleaseSetting) -> float:
    """model.json/model.npz: the audited column's number of coarse cells (its bins, or its
    discovered categories) in the model's domain."""
    return float(release.model["domain"][setting.column])


def grid_breaks(setting: ReleaseSetting, records: float) -> np.ndarray:
    """Fine positions where the measured grid sized by ``records`` starts a new cell."""
    schema = parse_schema({"columns": list(setting.schema)}, "the audited schema")
    from synthpriv.encoding import TableEncoder

    grid = compress.measured_grid(schema, TableEncoder(schema).domain, records, setting.sigma)
    mapping = grid.maps[setting.column]
    return np.flatnonzero(np.diff(mapping) != 0) + 1


def view_grid(release: Release, setting: ReleaseSetting) -> float:
    """model.npz: which measured grid (k or k + 1 cells) the run used, read from where the
    fitted fine masses and the coarse map change (a grid cell's fine cells share its mass):
    +1 if every change sits on a break of the (k + 1)-cell grid and not all on the k-cell one,
    −1 for the reverse, 0 when both or neither fit."""
    coarsened = release.coarsening(setting.column)
    if coarsened is None or setting.grid is None:
        return 0.0
    mapping, mass = coarsened
    changes = set((np.flatnonzero((np.diff(mass) != 0) | (np.diff(mapping) != 0)) + 1).tolist())
    small, large = (set(grid_breaks(setting, n).tolist()) for n in setting.grid)
    return float(changes <= large) - float(changes <= small)


def view_schema(release: Release, setting: ReleaseSetting) -> float:
    """manifest.json: the resolved schema of the audited column — for a numeric one, log2 of
    the width of its (DP or public) bounds plus 1000 when they hold the canary's value; for a
    categorical one, 1 when the canary's category is listed."""
    column = release.schema.column(setting.column)
    value = setting.canary[setting.names.index(setting.column)]
    if isinstance(column, NumericColumn):
        width = math.log2(1.0 + column.upper - column.lower)
        return width + 1000.0 * float(column.lower <= float(value) <= column.upper)
    return float(value in column.categories)


def view_cell(release: Release, setting: ReleaseSetting) -> float:
    """synthetic.csv: the rows in the canary's fine cell of the audited column (0 when the
    release has no such cell)."""
    code = release.fine_code(setting)
    if code is None:
        return 0.0
    column = release.schema.column(setting.column)
    values = release.synthetic[setting.column]
    if isinstance(column, CategoricalColumn):
        return float((values == setting.canary[setting.names.index(setting.column)]).sum())
    numbers = pd.to_numeric(values, errors="coerce").to_numpy(dtype=float)
    edges = column.bin_edges()
    codes = np.clip(np.searchsorted(edges, numbers, side="right") - 1, 0, len(edges) - 2)
    return float((codes == code).sum())


def view_canary_nll(release: Release, setting: ReleaseSetting) -> float:
    """model.npz (generator): minus the released network's negative log-likelihood of the
    canary row (rebuilt from the file by ``model_store.load_model``)."""
    import torch

    from synthpriv.model_store import load_model

    model = load_model(release.folder)
    network = model.model.network
    codes = [release.schema.column(c).categories.index(v) if v in
             release.schema.column(c).categories else 0
             for c, v in zip(setting.names, setting.canary, strict=True)]
    with torch.no_grad():
        return float(-network(torch.tensor([codes], dtype=torch.long))[0])


def view_dpsgd(release: Release, setting: ReleaseSetting) -> float:
    """The DP-SGD white box (``dpsgd_log_ratio`` of the run's captured steps)."""
    return dpsgd_log_ratio(release.steps, setting, release.manifest, release.network)


VIEWS: dict[str, Callable[[Release, ReleaseSetting], float]] = {
    "model.npz:mass": view_mass, "model.npz:bins": view_bins, "model.npz:grid": view_grid,
    "model.npz:canary_nll": view_canary_nll, "manifest.json:schema": view_schema,
    "synthetic.csv:cell": view_cell, "white:dpsgd": view_dpsgd,
}


# --- the DP-SGD white box ------------------------------------------------------------------------


@dataclass(frozen=True)
class DpSgdStep:
    """One DP-SGD step as its optimizer saw it: the parameters before the update, the noised
    sum of clipped gradients (before the division by the expected batch) and, for the noise
    measurement only, the clipped sum itself (never used by a score)."""

    params: tuple[np.ndarray, ...]
    noised: np.ndarray
    clipped: np.ndarray
    noise_std: float  # the std the optimizer was asked for (z·C as Opacus got it)


@contextlib.contextmanager
def capture_dpsgd(enabled: bool = True) -> Iterator[list[DpSgdStep]]:
    """The DP-SGD hook: while open, each ``add_noise`` of Opacus' ghost-clipping optimizer
    appends the step's parameters, noised sum and clipped sum to the list yielded
    (``enabled`` False: nothing is hooked, Opacus is not imported)."""
    steps: list[DpSgdStep] = []
    if not enabled:
        yield steps
        return
    from opacus.optimizers import DPOptimizerFastGradientClipping as Optimizer

    original = Optimizer.add_noise

    def add_noise(self):
        params = tuple(p.detach().cpu().numpy().copy() for p in self.params)
        clipped = np.concatenate([p.summed_grad.detach().cpu().numpy().ravel()
                                  for p in self.params])
        original(self)
        noised = np.concatenate([p.grad.detach().cpu().numpy().ravel() for p in self.params])
        steps.append(DpSgdStep(params, noised, clipped,
                               float(self.noise_multiplier * self.max_grad_norm)))

    Optimizer.add_noise = add_noise
    try:
        yield steps
    finally:
        Optimizer.add_noise = original


def ledger_dpsgd(manifest: dict) -> tuple[float, float, float]:
    """(z, q, C) of the run's DP-SGD as the ledger and the plan record them."""
    events = [e for e in manifest["ledger"]["events"] if "sample_rate" in e]
    if len(events) != 1:
        raise ValueError(f"expected one DP-SGD event on the ledger, found {len(events)}")
    noise = next(s["noise"] for s in manifest["plan"]["stages"] if "max_grad_norm" in s["noise"])
    return float(events[0]["noise_multiplier"]), float(events[0]["sample_rate"]), \
        float(noise["max_grad_norm"])


def measured_noise_std(steps: Sequence[DpSgdStep]) -> float:
    """The std of the noise DP-SGD added, from every captured step: noised − clipped sum, over
    all parameters and steps (the noise is i.i.d. N(0, (z·C)²) per coordinate)."""
    if not steps:
        raise ValueError("no DP-SGD step was captured (is the recipe dpsgd or hybrid?)")
    noise = np.concatenate([s.noised - s.clipped for s in steps])
    return float(np.sqrt(np.mean(noise ** 2)))


def noise_certificate(
    steps: Sequence[DpSgdStep], manifest: dict, delta: float, alpha: float
) -> dict[str, float]:
    """An ε lower bound for DP-SGD from the noise it was measured to add (white box).

    Every coordinate of noised − clipped sum is N(0, s²) with s the std actually used, so
    Σ noise² / s² ~ χ²(N) over the N coordinates of all captured steps: s ≤ s_ub =
    sqrt(Σ noise² / χ²_α(N)) with probability ≥ 1 − α. DP-SGD whose per-example clipped
    gradient reaches norm C (the canary's does: ``_clipped_gradients``) and whose noise is at most
    s_ub is no better than ε(s_ub/C): the ledger's accountant prices that event
    (``SubsampledGaussianEvent(q, s_ub/C, steps)``, PLD or RDP, the tighter) — the bound is
    as tight as the accountant. It assumes Poisson sampling at the q the ledger records."""
    from scipy.stats import chi2

    from synthpriv.privacy.accountant import Ledger, SubsampledGaussianEvent

    noise = np.concatenate([s.noised - s.clipped for s in steps]).astype(float)
    z, q, clip = ledger_dpsgd(manifest)
    upper = float(np.sqrt(np.sum(noise ** 2) / chi2.ppf(alpha, noise.size)))
    event = next(e for e in manifest["ledger"]["events"] if "sample_rate" in e)
    ledger = Ledger(manifest["ledger"]["neighbouring"])
    ledger.record(SubsampledGaussianEvent(q, upper / clip, int(event["steps"])))
    return {"eps_lower_bound": ledger.epsilon(delta), "noise_std": measured_noise_std(steps),
            "noise_std_upper": upper, "ledger_noise_std": z * clip, "coordinates": noise.size}


def _clipped_gradients(network, params, rows: np.ndarray, clip: float) -> np.ndarray:
    """Per-row gradients of the network's loss at ``params``, each clipped to L2 norm ``clip``
    (as DP-SGD clips them)."""
    import torch

    with torch.no_grad():
        for p, value in zip(network.parameters(), params, strict=True):
            p.copy_(torch.as_tensor(value))
    out = []
    for row in rows:
        network.zero_grad(set_to_none=True)
        network(torch.as_tensor(row[None, :], dtype=torch.long)).sum().backward()
        g = np.concatenate([p.grad.detach().numpy().ravel() for p in network.parameters()])
        out.append(g * min(1.0, clip / max(float(np.linalg.norm(g)), 1e-12)))
    return np.array(out)


def dpsgd_log_ratio(
    steps: Sequence[DpSgdStep], setting: ReleaseSetting, manifest: dict, network: Any,
) -> float:
    """Σ over steps of ln p(G | D') − ln p(G | D) of the noised sum G, with the noise the
    ledger claims (σ = z·C) and Poisson sampling at rate q: under D, G ~ Σ_b Bin(b; n, q)·
    N(b·g_r, σ²I) (every row of the constant table has the clipped gradient g_r), under D' the
    canary's clipped g_c joins with probability q. g_r, g_c are computed at the step's
    parameters, which are post-processing of earlier noised sums: the ratio is a function of
    the mechanism's outputs. Exact white box of the DP-SGD part of a run."""
    from scipy.special import logsumexp
    from scipy.stats import binom

    if not steps:
        return 0.0
    z, q, clip = ledger_dpsgd(manifest)
    sigma = z * clip
    network = copy.deepcopy(network)  # evaluated at each step's parameters
    table = np.array([_codes(setting, setting.rows[0])])
    canary = np.array([_codes(setting, setting.canary)])
    n = len(setting.rows)
    log_b = binom.logpmf(np.arange(n + 1), n, q)
    total = 0.0
    for step in steps:
        g_r = _clipped_gradients(network, step.params, table, clip)[0]
        g_c = _clipped_gradients(network, step.params, canary, clip)[0]
        means = np.arange(n + 1)[:, None] * g_r[None, :]
        base = -np.sum((step.noised[None, :] - means) ** 2, axis=1) / (2 * sigma ** 2)
        shifted = -np.sum((step.noised[None, :] - means - g_c) ** 2, axis=1) / (2 * sigma ** 2)
        log_d = logsumexp(log_b + base)
        log_d_prime = logsumexp(np.concatenate([np.log1p(-q) + log_b + base,
                                                np.log(q) + log_b + shifted]))
        total += log_d_prime - log_d
    return float(total)


def _codes(setting: ReleaseSetting, row: tuple) -> list[int]:
    return [list(c["categories"]).index(v) for c, v in zip(setting.schema, row, strict=True)]


# --- the audit -----------------------------------------------------------------------------------


@dataclass
class ReleaseAuditResult:
    """Every run's score in every view, and the ε lower bound each view certifies."""

    setting: ReleaseSetting
    runs: int
    alpha: float
    ledger_epsilon: float
    seconds: float
    scores: dict[str, dict[str, np.ndarray]] = field(repr=False)
    bounds: dict[str, dict] = field(repr=False)
    mutation: str = "none"

    @property
    def certified(self) -> float:
        """max over the views: each bound at level α/k, so this holds w.p. ≥ 1 − 2α."""
        return max(b["eps_lower_bound"] for b in self.bounds.values())

    @property
    def confidence(self) -> float:
        return 1 - 2 * self.alpha

    def summary(self) -> dict[str, Any]:
        return {
            "setting": self.setting.label, "mutation": self.mutation,
            "ledger_epsilon": round(self.ledger_epsilon, 4),
            "certified": round(self.certified, 4), "confidence": self.confidence,
            "by_view": {v: round(b["eps_lower_bound"], 4) for v, b in self.bounds.items()},
            "runs_per_side": self.runs, "seconds": round(self.seconds, 1),
            **{k: round(float(v), 4) for k, v in self.bounds.get("white:dpsgd_noise", {}).items()
               if k != "eps_lower_bound"},
        }


def audit_release_runs(
    setting: ReleaseSetting, runs: int, folder: Path,
    progress: Callable[[str], None] | None = None,
) -> tuple[dict[str, dict[str, np.ndarray]], float, list[DpSgdStep], dict]:
    """``runs`` runs of the real job on D' ("in") and D ("out"), interleaved; every view scored
    on every run's release folder. Returns {view: {"in": scores, "out": scores}}, the ledger's
    ε, every captured DP-SGD step and the last manifest."""
    scores = {v: {"in": np.empty(runs), "out": np.empty(runs)} for v in setting.views}
    captured: list[DpSgdStep] = []
    manifest: dict = {}
    claimed = math.nan
    with (cached_accounting(), capture_state() as states,
          capture_dpsgd(setting.recipe in ("dpsgd", "hybrid")) as steps):
        jobs = {}
        folder.mkdir(parents=True, exist_ok=True)
        for side, with_canary in (("in", True), ("out", False)):
            (folder / f"{side}.csv").write_text(setting.table(with_canary))
            config = setting.config(folder / f"{side}.csv", folder / f"{side}-release")
            (folder / f"{side}.yaml").write_text(yaml.safe_dump(config))
            jobs[side] = load_job(folder / f"{side}.yaml")
        for i in range(runs):
            for side, job in jobs.items():
                result = runner.run_job(job, force=True, evaluate=False)
                if job.config.seed is not None or result.manifest["randomness"]["mode"] != "secure":
                    raise RuntimeError("an audit needs fresh OS noise in every run (no seed)")
                network = getattr(states[-1].model, "network", None)
                states.clear()
                release = Release.read(Path(job.config.output.dir), list(steps), network)
                captured += steps
                steps.clear()
                manifest = release.manifest
                for view in setting.views:
                    scores[view][side][i] = VIEWS[view](release, setting)
                claimed = result.manifest["guarantee"]["epsilon"]
            if progress is not None and (i + 1) % max(1, runs // 10) == 0:
                progress(f"{setting.label}: {i + 1}/{runs} runs per side")
    return scores, float(claimed), captured, manifest


def run_release_audit(
    setting: ReleaseSetting, runs: int, alpha: float = 0.05, folder: Path | None = None,
    progress: Callable[[str], None] | None = None, selection_fraction: float = 0.5,
    mutation: str = "none",
) -> ReleaseAuditResult:
    """Audit ``setting`` with ``runs`` runs per side; each view's bound at level α/k (k views,
    plus the DP-SGD noise certificate when the runs trained a generator), the largest at
    confidence 1 − 2α. ``mutation`` only labels the result (the caller plants it)."""
    start = time.perf_counter()
    with contextlib.ExitStack() as stack:
        if folder is None:
            folder = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="relaudit-")))
        scores, claimed, steps, manifest = audit_release_runs(setting, runs, folder, progress)
    seconds = time.perf_counter() - start
    level = alpha / (len(setting.views) + bool(steps))
    bounds = {
        view: empirical_epsilon(scores[view]["in"], scores[view]["out"], setting.delta, level,
                                np.random.default_rng(index), selection_fraction)
        for index, view in enumerate(setting.views)
    }
    if steps:
        bounds["white:dpsgd_noise"] = noise_certificate(steps, manifest, setting.delta, level)
    return ReleaseAuditResult(setting, runs, alpha, claimed, seconds, scores, bounds, mutation)
