"""Shadow-model membership attack (TAPAS, Houssiau et al. 2022; Stadler et al. 2022, "GroundHog").

The attacker may re-run the generator (threat model: auxiliary data + ``rerun``). For a target
record t it trains the same pipeline, at the same ε, on many shadow tables with and without t,
describes each synthetic output by features, fits a classifier "was t in?", and is measured on
fresh shadow tables it never trained on. This attacks the *mechanism* for that target, so its
empirical ε lower bound is a real audit of the ledger's ε: every test table is an independent run.

Design:

* Targets: the most vulnerable records of the real training table, i.e. those with the largest
  mean distance to their 5 nearest neighbours (Meeus et al. 2023, "Achilles' heels"), plus a few
  random ones.
* Shadow tables: ``records`` rows drawn from the training table minus the targets; each target is
  put in with probability ½, independently (add_remove: the target is added; replace_one: it
  replaces a row). For one target the other targets are background, so "with t" and "without t"
  are neighbouring tables under the job's relation whatever the background is. Each run therefore
  serves every target, and a target is in exactly half the training and half the test tables.
* Features of a synthetic output S for target t: summary statistics of S (target-independent);
  the share of rows of S matching t in each column, in each pair of columns, and within 0, 1, 2
  mismatches overall (on a 16-bin discretisation fitted on the real table); and Gower distances
  from t to S (nearest, mean of the 5 nearest, share within 0.02 / 0.05).
* Classifier: a random forest per target. Empirical ε per target at level α/T (Bonferroni over
  the T targets), so the worst case over targets holds with probability ≥ 1 − 2α.

Cost: ``shadow_tables`` runs of the generator on ``records``-row tables, run by one worker pool
(processes, started once, shared by every generator attacked), with a progress bar.
"""

from __future__ import annotations

import multiprocessing
import time
import warnings
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from itertools import combinations
from typing import TYPE_CHECKING, Literal, Protocol

import numpy as np
import pandas as pd
from sklearn.ensemble import RandomForestClassifier
from tqdm import tqdm

from synthpriv.evaluation.attack_metrics import attack_metrics
from synthpriv.evaluation.attacks import MixedTypeDistance, ThreatModel
from synthpriv.evaluation.discretize import Discretizer

if TYPE_CHECKING:
    from synthpriv.config import Job
    from synthpriv.job import Planned

NEIGHBOURS = 5
VULNERABILITY_CANDIDATES = 2000
ALPHA = 0.05
Generator = Callable[[pd.DataFrame, int], pd.DataFrame]


# --------------------------------------------------------------------------- generators


class PipelineGenerator:
    """The job's own pipeline, at the job's ε, on a given table (seeded noise: audit only,
    never released). One job object, planned once (planning calibrates noise and takes ~1 s;
    ``planned``, the run's own plan of this job, skips it); worker processes receive it planned."""

    def __init__(self, job: Job, planned: Planned | None = None) -> None:
        from synthpriv.job import SynthesisJob

        self.job = SynthesisJob(job, planned=planned)

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        from synthpriv.privacy.randomness import RandomSource

        return self.job.synthesise(table, RandomSource.seeded(seed)).synthetic.to_frame()


@dataclass(frozen=True)
class IdentityGenerator:
    """Positive control: releases its training rows."""

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        return table.reset_index(drop=True)


# --------------------------------------------------------------------------- targets


def vulnerability(
    pool: pd.DataFrame,
    distance: MixedTypeDistance,
    candidates: np.ndarray,
    k: int = NEIGHBOURS,
    chunk: int = 200,
) -> np.ndarray:
    """Mean Gower distance of each candidate row of ``pool`` to its ``k`` nearest other rows
    (Meeus et al. 2023): isolated records are the ones a generator can leak."""
    k = min(k, len(pool) - 1)
    scores = np.empty(candidates.size)
    for start in range(0, candidates.size, chunk):
        part = candidates[start : start + chunk]
        d = distance.pairwise(pool.iloc[part], pool)
        d[np.arange(part.size), part] = np.inf  # not its own neighbour
        scores[start : start + chunk] = np.partition(d, k - 1, axis=1)[:, :k].mean(axis=1)
    return scores


def choose_targets(
    pool: pd.DataFrame, distance: MixedTypeDistance, vulnerable: int, random: int,
    rng: np.random.Generator,
) -> pd.DataFrame:
    """Row positions of the targets, with their kind and vulnerability score."""
    n_candidates = min(len(pool), VULNERABILITY_CANDIDATES)
    candidates = np.sort(rng.choice(len(pool), size=n_candidates, replace=False))
    scores = vulnerability(pool, distance, candidates)
    order = np.argsort(-scores, kind="stable")
    chosen = [int(r) for r in candidates[order[:vulnerable]]]
    n_vulnerable = len(chosen)
    rest = np.setdiff1d(np.arange(len(pool)), chosen)
    chosen += [int(r) for r in rng.choice(rest, size=min(random, rest.size), replace=False)]
    score_of = dict(zip(candidates.tolist(), scores.tolist(), strict=True))
    return pd.DataFrame(
        {
            "row": np.asarray(chosen, dtype=np.int64),
            "kind": ["vulnerable"] * n_vulnerable + ["random"] * (len(chosen) - n_vulnerable),
            "vulnerability": [score_of.get(r, np.nan) for r in chosen],
        }
    )


# --------------------------------------------------------------------------- features


@dataclass(frozen=True)
class FeatureMap:
    """Features of a synthetic output relative to each target (fitted on the real table)."""

    discretizer: Discretizer
    distance: MixedTypeDistance

    def summary(self, synthetic: pd.DataFrame) -> np.ndarray:
        """Target-independent statistics: per numeric column mean, std, quartiles and missing
        share of the scaled values; per categorical value its frequency."""
        u, missing = self.distance.scaled(synthetic)
        u = np.where(missing, np.nan, u)
        stats = []
        if u.shape[1]:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # an all-missing column
                stats = [
                    np.nanmean(u, axis=0), np.nanstd(u, axis=0),
                    *np.nanquantile(u, [0.25, 0.5, 0.75], axis=0), missing.mean(axis=0),
                ]
        one_hot = self.distance.encode(synthetic).one_hot.mean(axis=0)
        return np.nan_to_num(np.concatenate([*stats, one_hot]))

    def features(self, synthetic: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray:
        """(targets × features): summary, marginal match shares around the target, distances."""
        if len(synthetic) == 0:
            raise ValueError("the generator returned an empty table")
        codes = self.discretizer.transform(synthetic)
        target_codes = self.discretizer.transform(targets)
        match = codes[None, :, :] == target_codes[:, None, :]  # target, row, column
        d = codes.shape[1]
        one_way = match.mean(axis=1)
        two_way = np.stack(
            [(match[:, :, i] & match[:, :, j]).mean(axis=1) for i, j in combinations(range(d), 2)],
            axis=1,
        ) if d > 1 else np.empty((len(targets), 0))
        mismatches = d - match.sum(axis=2)
        near = np.stack([(mismatches <= m).mean(axis=1) for m in (0, 1, 2)], axis=1)
        dist = np.sort(self.distance.pairwise(targets, synthetic), axis=1)
        k = min(NEIGHBOURS, dist.shape[1])
        distances = np.stack(
            [dist[:, 0], dist[:, :k].mean(axis=1), (dist <= 0.02).mean(axis=1), (dist <= 0.05).mean(axis=1)],
            axis=1,
        )
        summary = np.tile(self.summary(synthetic), (len(targets), 1))
        return np.hstack([summary, one_way, two_way, near, distances])


# --------------------------------------------------------------------------- shadow runs


@dataclass(frozen=True)
class ShadowDesign:
    """Which rows each shadow table holds: a base sample, and which targets are in.

    ``base``: (tables, records) positions in the pool; ``members``: (tables, targets) bool;
    ``slots``: (tables, targets) positions of ``base`` a member target replaces (replace_one).
    """

    base: np.ndarray
    members: np.ndarray
    slots: np.ndarray
    seeds: np.ndarray
    neighbouring: Literal["add_remove", "replace_one"]

    def table(self, pool: pd.DataFrame, targets: pd.DataFrame, j: int,
              persons: Sequence[pd.DataFrame] | None = None) -> pd.DataFrame:
        """Shadow table ``j``: its base rows and its member targets — each target's row, or,
        per person (``persons``: all rows of each target's person), all of that person's rows,
        so "with t" and "without t" differ by one whole person."""
        rows = self.base[j].copy()
        inside = np.flatnonzero(self.members[j])
        base = pool.iloc[rows].reset_index(drop=True)
        if self.neighbouring == "replace_one":
            keep = np.setdiff1d(np.arange(len(rows)), self.slots[j, inside])
            base = base.iloc[keep]
        if persons is not None:
            return pd.concat([base, *(persons[t] for t in inside)], ignore_index=True)
        return pd.concat([base, targets.iloc[inside]], ignore_index=True)


def design(
    pool_size: int, n_targets: int, tables: int, records: int, neighbouring: str,
    rng: np.random.Generator,
) -> ShadowDesign:
    """Balanced design: every target is in exactly half of the first (training) half of the
    tables and half of the second (test) half, independently across targets."""
    if records > pool_size:
        raise ValueError(f"shadow tables of {records} rows need a pool that large, have {pool_size}")
    base = np.stack([rng.choice(pool_size, size=records, replace=False) for _ in range(tables)])
    half = tables // 2
    members = np.zeros((tables, n_targets), dtype=bool)
    for part in (slice(0, half), slice(half, tables)):
        size = len(range(tables)[part])
        for t in range(n_targets):
            members[part, t] = rng.permutation(np.arange(size) < size // 2)
    slots = np.stack([rng.choice(records, size=n_targets, replace=False) for _ in range(tables)])
    seeds = rng.integers(0, 2**62, size=tables)
    return ShadowDesign(base, members, slots, seeds, neighbouring)  # type: ignore[arg-type]


class Features(Protocol):
    """What a shadow run reports: (targets × features) of one synthetic output. ``FeatureMap``
    here; the cell counts of :mod:`synthpriv.evaluation.marginal_attack`."""

    def features(self, synthetic: pd.DataFrame, targets: pd.DataFrame) -> np.ndarray: ...


_WORKER: dict = {}


def _init_worker(pool: pd.DataFrame, targets: pd.DataFrame, features: Features,
                 persons: Sequence[pd.DataFrame] | None = None) -> None:
    _WORKER.update(pool=pool, targets=targets, features=features, persons=persons)


def _shadow_run(generator: Generator, shadow: ShadowDesign, j: int) -> np.ndarray:
    """Features (targets × features) of one shadow run, in the worker."""
    table = shadow.table(_WORKER["pool"], _WORKER["targets"], j, _WORKER.get("persons"))
    synthetic = generator(table, int(shadow.seeds[j]))
    return _WORKER["features"].features(synthetic[list(table.columns)], _WORKER["targets"])


class ShadowRunner:
    """One worker pool for every shadow run of every generator attacked (``workers`` processes,
    spawned once; ``workers == 1`` runs in this process)."""

    def __init__(self, pool: pd.DataFrame, targets: pd.DataFrame, features: Features, workers: int,
                 persons: Sequence[pd.DataFrame] | None = None):
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        if workers > 1:
            self._executor = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
                initargs=(pool, targets, features, persons),
            )
        else:
            _init_worker(pool, targets, features, persons)

    def run(self, generator: Generator, shadow: ShadowDesign, label: str, progress: bool) -> np.ndarray:
        """Features of every shadow table: (tables, targets, features)."""
        n = len(shadow.seeds)
        bar = tqdm(total=n, desc=f"shadow attack: {label}", unit="run", disable=not progress)
        try:
            if self._executor is None:
                out = []
                for j in range(n):
                    out.append(_shadow_run(generator, shadow, j))
                    bar.update()
            else:
                futures = [self._executor.submit(_shadow_run, generator, shadow, j) for j in range(n)]
                for future in futures:
                    future.add_done_callback(lambda _: bar.update())
                out = [future.result() for future in futures]
        finally:
            bar.close()
        return np.stack(out)

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(cancel_futures=True)
        _WORKER.clear()

    def __enter__(self) -> ShadowRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# --------------------------------------------------------------------------- the attack


def _score_target(features: np.ndarray, labels: np.ndarray, train: np.ndarray, seed: int) -> np.ndarray:
    """Classifier scores on the test tables after training on the training tables."""
    model = RandomForestClassifier(n_estimators=200, min_samples_leaf=2, random_state=seed, n_jobs=1)
    model.fit(features[train], labels[train])
    return model.predict_proba(features[~train])[:, list(model.classes_).index(True)]


def shadow_attack(
    pool: pd.DataFrame,
    generators: dict[str, Generator],
    *,
    numeric_columns: Sequence[str],
    neighbouring: Literal["add_remove", "replace_one"],
    delta: float,
    shadow_tables: int = 200,
    vulnerable_targets: int = 3,
    random_targets: int = 2,
    records: int = 1000,
    workers: int = 1,
    seed: int = 0,
    bootstrap: int = 200,
    progress: bool = True,
    persons: Sequence | None = None,
) -> dict:
    """Run the shadow-model attack against each generator in ``generators`` (name -> callable
    (table, seed) -> synthetic table) on shadow tables drawn from ``pool`` (the real training
    table). Same targets and same shadow tables for every generator, one worker pool for all.

    Returns per generator: per-target ``attack_metrics`` on the fresh test tables, the pooled
    metrics over targets and the worst case (max AUC, max empirical ε at level α/targets).

    Per person (``persons``: each pool row's person key, data.person): a target is a whole
    person — the chosen row's person, one target per person — put in or left out with all its
    rows, and no row of a target person is in any base table, so each pair of shadow tables
    differs by one person (add/remove; the pipeline then bounds that person to k rows itself).
    """
    started = time.perf_counter()
    rng = np.random.default_rng(seed)
    pool = pool.reset_index(drop=True)
    distance = MixedTypeDistance.fit(pool, numeric_columns)
    chosen = choose_targets(pool, distance, vulnerable_targets, random_targets, rng)
    if len(chosen) == 0:
        raise ValueError("the shadow attack needs at least one target")
    groups = None
    if persons is None:
        rest = pool.drop(index=chosen["row"]).reset_index(drop=True)
    else:
        if neighbouring != "add_remove":
            raise ValueError("the shadow attack per person adds or removes a whole person: "
                             "use neighbouring add_remove with data.person")
        keys = pd.Series(np.asarray(persons, dtype=object)).astype(str).to_numpy()
        first = ~pd.Series(keys[chosen["row"]]).duplicated().to_numpy()
        chosen = chosen.loc[first].reset_index(drop=True)  # one target per person
        target_keys = keys[chosen["row"]]
        groups = [pool.loc[keys == key].reset_index(drop=True) for key in target_keys]
        rest = pool.loc[~np.isin(keys, target_keys)].reset_index(drop=True)
    targets = pool.iloc[chosen["row"]].reset_index(drop=True)
    records = min(records, len(rest))
    shadow = design(len(rest), len(targets), shadow_tables, records, neighbouring, rng)
    features = FeatureMap(Discretizer.fit(pool, numeric_columns), distance)
    alpha = ALPHA / len(targets)
    train = np.arange(shadow_tables) < shadow_tables // 2
    results: dict[str, dict] = {}
    with ShadowRunner(rest, targets, features, workers, groups) as runner:
        for name, generator in generators.items():
            start = time.perf_counter()
            x = runner.run(generator, shadow, name, progress)
            per_target, pooled_in, pooled_out = [], [], []
            for t, info in enumerate(chosen.itertuples(index=False)):
                labels = shadow.members[:, t]
                scores = _score_target(x[:, t, :], labels, train, seed + t)
                truth = labels[~train]
                pooled_in.append(scores[truth])
                pooled_out.append(scores[~truth])
                metrics = attack_metrics(
                    scores[truth], scores[~truth], delta=delta, bootstrap=bootstrap, seed=seed,
                    alpha=alpha,
                )
                per_target.append(
                    {"row": int(info.row), "kind": info.kind,
                     "vulnerability": None if np.isnan(info.vulnerability) else float(info.vulnerability),
                     **metrics}
                )
            pooled = attack_metrics(
                np.concatenate(pooled_in), np.concatenate(pooled_out), delta=delta,
                bootstrap=bootstrap, seed=seed,
            )
            by_auc = max(range(len(per_target)), key=lambda i: per_target[i]["auc"])
            by_eps = max(
                range(len(per_target)),
                key=lambda i: per_target[i]["empirical_epsilon"]["eps_lower_bound"],
            )
            results[name] = {
                "targets": per_target,
                "pooled": pooled,
                "worst_case": {
                    "auc": per_target[by_auc]["auc"],
                    "auc_target_row": per_target[by_auc]["row"],
                    "eps_lower_bound": per_target[by_eps]["empirical_epsilon"]["eps_lower_bound"],
                    "eps_target_row": per_target[by_eps]["row"],
                },
                "seconds": time.perf_counter() - start,
            }
    return {
        "threat_model": asdict(ThreatModel("auxiliary", "rerun")),
        "neighbouring": neighbouring,
        "target": "a whole person (all its rows)" if groups is not None else "one row",
        "shadow_tables": shadow_tables,
        "train_tables": int(train.sum()),
        "test_tables": int((~train).sum()),
        "records_per_table": records,
        "alpha_per_target": alpha,
        "generators": results,
        "seconds": time.perf_counter() - started,
    }
