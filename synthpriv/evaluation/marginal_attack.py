"""A membership attack built for marginal-based synthesizers: the target's cells, counted.

After MAMA-MIA (Golob et al. 2025, "Privacy vulnerabilities in marginals-based synthetic data")
and the query-based attacks of TAPAS (Houssiau et al. 2022). A marginal recipe releases a table
drawn from noisy marginal counts; a record moves every count of its own cells by one (add_remove)
against the noise σ and against the other rows in the cell. So the attack looks only where a
record can show: in the synthetic table's counts of the target's cells.

Threat model: auxiliary data (real rows of the population: the training table minus the targets)
and ``rerun`` (it knows the recipe and its settings, and re-runs the job's own pipeline at the
job's ε on tables of its choice). The strongest that :class:`ThreatModel` names.

* **Exposed targets.** For a record x and a set S of columns, its *query* is the number of rows
  matching x on S (on the evaluation's quantile bins); every 1- … ``max_order``-way S is one
  query. Exposure = Σ_S 1 / (rows of the pool in x's cell of S): a record alone in its cells moves
  them by 100 %. The ``targets`` most exposed rows of the training table are attacked.
* **Shadow runs.** The shadow machinery of :mod:`synthpriv.evaluation.shadow` (``design``,
  ``ShadowRunner``): ``shadow_tables`` runs of the generator on tables of ``records`` pool rows,
  each target in half of the training tables and half of the test tables, independently.
* **Score.** Per target, a Gaussian likelihood ratio with a diagonal covariance fitted on the
  training tables: Σ_S w_S (x_S − (μ_in,S + μ_out,S)/2), w_S = (μ_in,S − μ_out,S) / v_S — each
  query weighted by its estimated shift over its noise variance. v_S is the pooled within-class
  variance shrunk toward one count² (``PRIOR_TABLES`` pseudo-tables), so that a query constant in
  the few training tables cannot get an infinite weight.
* **Measured on fresh test tables.** Per target: AUC, TPR at low FPR and the Clopper–Pearson ε
  lower bound at level α/targets (Bonferroni, as the shadow attack); over targets, the mean AUC
  with a 95 % interval from a bootstrap over test tables (resampling whole tables keeps the
  correlation between targets that share a run). The attack *has power* when that interval's
  lower end exceeds ½.

* **Per person** (``person``, data.person: the guarantee is per person). A target is a person: all
  of its rows are in a shadow table or none is, and no row of a target person is in any base
  table (the shadow attack's design), so "with t" and "without t" differ by one whole person; the
  pipeline bounds that person to k rows itself. The person's exposure is the sum of its rows'
  exposures, and its query for S is the sum over its rows of the synthetic count in each row's
  cell (Σ_i x_{cell_S(r_i)} = Σ_c m_c x_c, m_c = the person's rows in cell c): the optimal linear
  statistic when each cell's count moves by the person's rows in it under independent noise of
  equal variance. The person key itself is never a query (the release writes fresh keys).

Cost: ``shadow_tables`` runs of the pipeline on ``records``-row tables, plus counting; the
identity control (the shadow table released as is) shows what the attack finds when nothing hides
the record, for free. NOT differentially private (reads the real table), like every attack here.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import Literal

import numpy as np
import pandas as pd

from synthpriv.evaluation.attack_metrics import attack_metrics, auc
from synthpriv.evaluation.attacks import ThreatModel
from synthpriv.evaluation.discretize import Discretizer
from synthpriv.evaluation.shadow import ALPHA, Generator, ShadowRunner, design

PRIOR_TABLES = 2.0  # pseudo-tables of variance 1 count² that each query's variance is shrunk to
POWER_LEVEL = 0.95  # the mean AUC's two-sided bootstrap interval


@dataclass(frozen=True)
class CellQueries:
    """The count of rows in a target's cell of every 1- … max_order-way marginal."""

    discretizer: Discretizer
    subsets: tuple[tuple[int, ...], ...]

    @classmethod
    def fit(cls, real: pd.DataFrame, numeric_columns: Sequence[str], max_order: int) -> CellQueries:
        """Bins fitted on ``real`` (16 quantile bins per numeric column); every column set of
        size 1 … ``max_order``."""
        discretizer = Discretizer.fit(real, numeric_columns)
        d = len(discretizer.columns)
        subsets = tuple(s for k in range(1, max_order + 1) for s in combinations(range(d), k))
        return cls(discretizer, subsets)

    def names(self) -> list[str]:
        columns = self.discretizer.columns
        return [" × ".join(columns[i] for i in s) for s in self.subsets]

    def counts(self, table: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray:
        """(targets × queries): rows of ``table`` in each target's cell of each marginal."""
        if len(table) == 0:
            raise ValueError("the generator returned an empty table")
        codes = self.discretizer.transform(table)
        target_codes = self.discretizer.transform(targets)
        sizes = self.discretizer.sizes
        out = np.empty((len(targets), len(self.subsets)))
        for q, subset in enumerate(self.subsets):
            dims = [sizes[i] for i in subset]
            cells, counts = np.unique(np.ravel_multi_index(codes[:, subset].T, dims), return_counts=True)
            wanted = np.ravel_multi_index(target_codes[:, subset].T, dims)
            at = np.minimum(np.searchsorted(cells, wanted), cells.size - 1)
            out[:, q] = np.where(cells[at] == wanted, counts[at], 0)
        return out

    def features(self, synthetic: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray:
        """What a shadow run reports to :class:`ShadowRunner`: the synthetic table's counts."""
        return self.counts(synthetic, targets)


@dataclass(frozen=True)
class PersonCellQueries:
    """Per person: each target person's counts summed over its rows (``owner``: the target
    index of each row of the targets table, ``persons``: how many target persons)."""

    queries: CellQueries
    owner: np.ndarray
    persons: int

    def features(self, synthetic: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray:
        """(persons × queries): Σ over the person's rows of the synthetic count in the row's cell."""
        per_row = self.queries.counts(synthetic, targets)
        out = np.zeros((self.persons, per_row.shape[1]))
        np.add.at(out, self.owner, per_row)
        return out


def exposed_targets(pool: pd.DataFrame, queries: CellQueries, n_targets: int) -> pd.DataFrame:
    """The ``n_targets`` rows of ``pool`` with the highest exposure Σ_S 1/count_S (their own
    row included in the count), most exposed first: positions and exposures."""
    exposure = (1.0 / queries.counts(pool, pool)).sum(axis=1)
    order = np.argsort(-exposure, kind="stable")[:n_targets]
    return pd.DataFrame({"row": order.astype(np.int64), "exposure": exposure[order]})


def exposed_persons(
    pool: pd.DataFrame, keys: pd.Series, queries: CellQueries, n_targets: int
) -> tuple[pd.DataFrame, list[pd.DataFrame], pd.DataFrame]:
    """The ``n_targets`` persons (``keys``: each pool row's person; a missing key is one person,
    as the bounding counts it) with the highest exposure Σ over their rows, most exposed first,
    one person always left for the background: (their first row's position, row count and
    exposure; each person's rows; the pool without any target person's rows)."""
    exposure = (1.0 / queries.counts(pool, pool)).sum(axis=1)
    codes, _ = pd.factorize(keys, use_na_sentinel=False)
    per_person = np.bincount(codes, weights=exposure)
    order = np.argsort(-per_person, kind="stable")[:min(n_targets, per_person.size - 1)]
    first = np.array([np.flatnonzero(codes == c)[0] for c in order], dtype=np.int64)
    rows = np.bincount(codes)[order]
    chosen = pd.DataFrame({"row": first, "rows": rows.astype(np.int64), "exposure": per_person[order]})
    groups = [pool.loc[codes == c].reset_index(drop=True) for c in order]
    rest = pool.loc[~np.isin(codes, order)].reset_index(drop=True)
    return chosen, groups, rest


def fit_likelihood_ratio(x: np.ndarray, labels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(weights, centre) of the diagonal Gaussian log-likelihood ratio "in" vs "out" fitted on
    ``x`` (tables × queries): weight = shift / variance, the variance shrunk toward 1."""
    mu_in, mu_out = x[labels].mean(axis=0), x[~labels].mean(axis=0)
    residual = x - np.where(labels[:, None], mu_in, mu_out)
    variance = ((residual**2).sum(axis=0) + PRIOR_TABLES) / (len(x) - 2 + PRIOR_TABLES)
    return (mu_in - mu_out) / variance, (mu_in + mu_out) / 2


def mean_auc_interval(
    scores: np.ndarray, truth: np.ndarray, bootstrap: int, rng: np.random.Generator
) -> list[float] | None:
    """Percentile interval (``POWER_LEVEL``) of the mean per-target AUC, resampling test tables
    (rows of ``scores``/``truth``, tables × targets); None when ``bootstrap`` is 0 or no resample
    holds both classes for any target."""
    if bootstrap <= 0:
        return None
    means = []
    for _ in range(bootstrap):
        rows = rng.integers(0, len(scores), len(scores))
        aucs = [
            auc(scores[rows, t][truth[rows, t]], scores[rows, t][~truth[rows, t]])
            for t in range(scores.shape[1])
            if 0 < truth[rows, t].sum() < len(rows)
        ]
        if aucs:
            means.append(np.mean(aucs))
    if not means:  # every resample drew one class only (a handful of test tables)
        return None
    tail = 100 * (1 - POWER_LEVEL) / 2
    return [float(np.percentile(means, tail)), float(np.percentile(means, 100 - tail))]


def _attack_one(
    x: np.ndarray, shadow_members: np.ndarray, train: np.ndarray, chosen: pd.DataFrame,
    names: list[str], *, delta: float, alpha: float, bootstrap: int, seed: int,
) -> dict:
    """Per-target results, the mean AUC with its interval and the worst case, for one generator's
    features ``x`` (tables × targets × queries)."""
    per_target, test_scores = [], []
    for t, info in enumerate(chosen.itertuples(index=False)):
        labels = shadow_members[:, t]
        weights, centre = fit_likelihood_ratio(x[train, t], labels[train])
        scores = (x[~train, t] - centre) @ weights
        test_scores.append(scores)
        truth = labels[~train]
        shift = x[train, t][labels[train]].mean(axis=0) - x[train, t][~labels[train]].mean(axis=0)
        top = np.argsort(-np.abs(weights), kind="stable")[:3]
        per_target.append({
            **{key: value.item() if hasattr(value, "item") else value
               for key, value in info._asdict().items()},
            "top_queries": [{"columns": names[q], "shift": float(shift[q]), "weight": float(weights[q])}
                            for q in top],
            **attack_metrics(scores[truth], scores[~truth], delta=delta, bootstrap=bootstrap,
                             seed=seed, alpha=alpha),
        })
    scores, truth = np.stack(test_scores, axis=1), shadow_members[~train]
    interval = mean_auc_interval(scores, truth, bootstrap, np.random.default_rng(seed))
    mean_auc = float(np.mean([t["auc"] for t in per_target]))
    by_eps = max(per_target, key=lambda t: t["empirical_epsilon"]["eps_lower_bound"])
    return {
        "targets": per_target,
        "mean_auc": mean_auc,
        "mean_auc_ci": interval,
        "power": interval is not None and interval[0] > 0.5,
        "worst_case": {
            "auc": max(t["auc"] for t in per_target),
            "eps_lower_bound": by_eps["empirical_epsilon"]["eps_lower_bound"],
            "eps_target_row": by_eps["row"],
            "max_certifiable": by_eps["empirical_epsilon"]["max_certifiable"],
        },
    }


def marginal_attack(
    pool: pd.DataFrame,
    generators: dict[str, Generator],
    *,
    numeric_columns: Sequence[str],
    neighbouring: Literal["add_remove", "replace_one"],
    delta: float,
    shadow_tables: int = 8,
    records: int = 300,
    targets: int = 10,
    max_order: int = 2,
    workers: int = 1,
    seed: int = 0,
    bootstrap: int = 200,
    progress: bool = True,
    person: str | None = None,
) -> dict:
    """Attack the ``targets`` most exposed rows of ``pool`` (the real training table) through
    each generator (name -> (table, seed) -> synthetic table), on the same shadow tables.
    ``person`` (data.person): the column of ``pool`` naming each row's person; the targets are
    then the most exposed persons, added or removed with all their rows (module docstring).

    Returns per generator the per-target metrics on the fresh test tables (most exposed first),
    the mean AUC over targets with its bootstrap interval, ``power`` (that interval above ½) and
    the worst case (max AUC, max ε lower bound at level α/targets).
    """
    started = time.perf_counter()
    if shadow_tables < 8:
        raise ValueError(f"the marginal attack needs at least 8 shadow tables, got {shadow_tables}")
    rng = np.random.default_rng(seed)
    pool = pool.reset_index(drop=True)
    # the person key is never a query: the queries read the modelled columns only
    queries = CellQueries.fit(pool if person is None else pool.drop(columns=[person]),
                              numeric_columns, max_order)
    features: CellQueries | PersonCellQueries = queries
    groups = None
    if person is None:
        chosen = exposed_targets(pool, queries, min(targets, len(pool) - 1))
        target_rows = pool.iloc[chosen["row"]].reset_index(drop=True)
        rest = pool.drop(index=chosen["row"]).reset_index(drop=True)
    else:
        if neighbouring != "add_remove":
            raise ValueError("the marginal attack per person adds or removes a whole person: use "
                             f"neighbouring add_remove with data.person, got {neighbouring!r}")
        chosen, groups, rest = exposed_persons(pool, pool[person], queries, targets)
        target_rows = pd.concat(groups, ignore_index=True) if groups else pool.iloc[:0]
        owner = np.repeat(np.arange(len(groups)), [len(g) for g in groups])
        features = PersonCellQueries(queries, owner, len(groups))
    if len(chosen) == 0:
        raise ValueError("the marginal attack needs at least one target")
    records = min(records, len(rest))
    shadow = design(len(rest), len(chosen), shadow_tables, records, neighbouring, rng)
    train = np.arange(shadow_tables) < shadow_tables // 2
    alpha = ALPHA / len(chosen)
    names = queries.names()
    results: dict[str, dict] = {}
    with ShadowRunner(rest, target_rows, features, workers, groups) as runner:
        for name, generator in generators.items():
            start = time.perf_counter()
            x = runner.run(generator, shadow, f"marginal attack on {name}", progress)
            results[name] = _attack_one(
                x, shadow.members, train, chosen, names, delta=delta, alpha=alpha,
                bootstrap=bootstrap, seed=seed,
            )
            results[name]["seconds"] = time.perf_counter() - start
    return {
        "threat_model": asdict(ThreatModel("auxiliary", "rerun")),
        "knows": (
            "the recipe and its settings (re-runs the job's pipeline at the job's ε), real rows of "
            "the population (the training table minus the targets), and the targets' values"
            + ("" if person is None else " (every row of each target person)")
        ),
        "neighbouring": neighbouring,
        "target": "one row" if person is None else "a whole person (all its rows)",
        "shadow_tables": shadow_tables,
        "train_tables": int(train.sum()),
        "test_tables": int((~train).sum()),
        "records_per_table": records,
        "queries": len(queries.subsets),
        "max_order": max_order,
        "alpha_per_target": alpha,
        "generators": results,
        "seconds": time.perf_counter() - started,
    }
