"""Membership-inference attacks against a released synthetic table.

Each attack scores target records, higher meaning "this record was in the training table"; the
scores go to :func:`synthpriv.evaluation.attack_metrics.attack_metrics`. What an attacker may know
is a :class:`ThreatModel`, kept apart from the attacks as in TAPAS (Houssiau et al. 2022); every
attack declares the weakest threat model it needs (``attack.required_threat_model``).

Attacks here:

* ``closest_distance_attack``: a record close to some synthetic row is guessed to be a member
  (Chen et al. 2020, "GAN-Leaks", full black-box). This is an *attack* with an AUC, not a
  pass/fail "distance to closest record" test: a large DCR proves nothing about privacy.
* ``density_ratio_attack``: DOMIAS (van Breugel et al. 2023), the ratio of the synthetic data's
  density to the population's density at the record, which calibrates away records that are
  merely typical.
* ``anonymeter_risks``: singling-out, linkability and inference risks from ``anonymeter``
  (Giomi et al. 2023), the GDPR-oriented view.

The attacks every evaluation runs on the release are listed in ``MEMBERSHIP_ATTACKS`` (name →
a function of one :class:`AttackInputs` returning a score per target); adding one is a function
decorated with ``@_registered(name, attack)``. The attack that re-runs the generator on shadow
datasets (``"rerun"``) is in :mod:`synthpriv.evaluation.shadow`, the one built for marginal
recipes in :mod:`synthpriv.evaluation.marginal_attack`. Every attack gives a lower bound on what
an attacker can do, never an upper bound.
"""

from __future__ import annotations

import contextlib
import logging
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Literal, NamedTuple

import numpy as np
import pandas as pd
from scipy.special import logsumexp

from synthpriv.evaluation.attack_metrics import attack_metrics

DataKnowledge = Literal["auxiliary", "exact_minus_target"]
GeneratorKnowledge = Literal["synthetic_only", "rerun"]
_DATA_LEVELS: tuple[str, ...] = ("auxiliary", "exact_minus_target")
_GENERATOR_LEVELS: tuple[str, ...] = ("synthetic_only", "rerun")
MEMORY_BUDGET_MB = 64


# --------------------------------------------------------------------------- threat model


@dataclass(frozen=True)
class ThreatModel:
    """What the attacker knows, ordered from weak to strong on each axis (after TAPAS).

    data_knowledge: ``"auxiliary"`` = a reference sample from the same population, disjoint from
    the training table; ``"exact_minus_target"`` = the whole training table except the target.
    generator_knowledge: ``"synthetic_only"`` = only the released synthetic table;
    ``"rerun"`` = may also train the generator (same algorithm and settings) on data of its choice.
    """

    data_knowledge: DataKnowledge = "auxiliary"
    generator_knowledge: GeneratorKnowledge = "synthetic_only"

    def __post_init__(self) -> None:
        if self.data_knowledge not in _DATA_LEVELS:
            raise ValueError(f"data_knowledge must be one of {_DATA_LEVELS}")
        if self.generator_knowledge not in _GENERATOR_LEVELS:
            raise ValueError(f"generator_knowledge must be one of {_GENERATOR_LEVELS}")

    def permits(self, required: ThreatModel) -> bool:
        """True if an attacker under this threat model knows at least what ``required`` needs."""
        return _DATA_LEVELS.index(self.data_knowledge) >= _DATA_LEVELS.index(
            required.data_knowledge
        ) and _GENERATOR_LEVELS.index(self.generator_knowledge) >= _GENERATOR_LEVELS.index(
            required.generator_knowledge
        )


def _requires(threat_model: ThreatModel) -> Callable[[Callable], Callable]:
    """Mark an attack with the weakest threat model under which it can run."""

    def mark(attack: Callable) -> Callable:
        attack.required_threat_model = threat_model  # type: ignore[attr-defined]
        return attack

    return mark


# --------------------------------------------------------------------------- mixed-type distance


class EncodedTable(NamedTuple):
    """A table as the distance sees it.

    one_hot: 0/1 indicators, one block per categorical column (slots: seen values, missing,
    unseen); numeric: three columns per numeric column, (u/2, (1−u)/2, missing/2) with u the value
    scaled to [0, 1] by the reference range. The L1 distance between two encoded rows is the sum of
    the per-column Gower terms.
    """

    one_hot: np.ndarray
    numeric: np.ndarray


@dataclass(frozen=True, eq=False)
class MixedTypeDistance:
    """Gower distance fitted on a reference table, the mean over columns of
    numeric: |x − y| / range (values clipped to the reference range),
    categorical: 0 if equal else 1; missing equals missing, missing vs present is 1. Values
    unseen in the reference are equal to each other (one 'unseen' slot) and differ from every
    seen value.
    """

    numeric_columns: tuple[str, ...]
    categorical_columns: tuple[str, ...]
    lows: np.ndarray
    ranges: np.ndarray
    categories: tuple[tuple, ...]

    @classmethod
    def fit(
        cls,
        reference: pd.DataFrame,
        numeric_columns: Sequence[str],
        categorical_columns: Sequence[str] | None = None,
    ) -> MixedTypeDistance:
        """Learn numeric ranges and categorical values from ``reference``; columns not named
        numeric are categorical unless ``categorical_columns`` says which."""
        unknown = set(numeric_columns) - set(reference.columns)
        if unknown:
            raise ValueError(f"numeric columns not in the table: {sorted(unknown)}")
        numeric = tuple(c for c in reference.columns if c in set(numeric_columns))
        if categorical_columns is None:
            categorical = tuple(c for c in reference.columns if c not in set(numeric))
        else:
            categorical = tuple(categorical_columns)
        values = reference[list(numeric)].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        lows = np.nan_to_num(np.nanmin(values, axis=0, initial=np.inf), posinf=0.0)
        highs = np.nan_to_num(np.nanmax(values, axis=0, initial=-np.inf), neginf=0.0)
        ranges = np.where(highs > lows, highs - lows, 1.0)
        cats = tuple(tuple(pd.unique(reference[c].dropna())) for c in categorical)
        return cls(numeric, categorical, lows, ranges, cats)

    @property
    def n_columns(self) -> int:
        return len(self.numeric_columns) + len(self.categorical_columns)

    def codes(self, table: pd.DataFrame) -> np.ndarray:
        """Integer codes of the categorical columns: seen values, then 'missing', then 'unseen'."""
        out = np.empty((len(table), len(self.categorical_columns)), dtype=np.int64)
        for j, (col, cats) in enumerate(
            zip(self.categorical_columns, self.categories, strict=True)
        ):
            values = table[col]
            codes = pd.Categorical(values, categories=list(cats)).codes.astype(np.int64)
            unseen = np.where(codes < 0, len(cats) + 1, codes)
            out[:, j] = np.where(values.isna().to_numpy(), len(cats), unseen)
        return out

    def scaled(self, table: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        """Numeric columns scaled to [0, 1] by the reference range, and their missing mask."""
        cols = list(self.numeric_columns)
        values = table[cols].apply(pd.to_numeric, errors="coerce").to_numpy(float)
        missing = np.isnan(values)
        u = np.clip((values - self.lows) / self.ranges, 0.0, 1.0)
        return np.where(missing, 0.0, u), missing

    def encode(self, table: pd.DataFrame) -> EncodedTable:
        """The encoding whose L1 distance is n_columns × Gower (see :class:`EncodedTable`)."""
        codes = self.codes(table)
        offsets = np.cumsum([0] + [len(c) + 2 for c in self.categories])
        one_hot = np.zeros((len(table), offsets[-1]), dtype=np.float32)
        if codes.size:
            rows = np.repeat(np.arange(len(table)), codes.shape[1])
            one_hot[rows, (codes + offsets[:-1]).ravel()] = 1.0
        u, missing = self.scaled(table)
        present = ~missing
        numeric = np.stack([u * present / 2, (1 - u) * present / 2, missing / 2], axis=2)
        return EncodedTable(one_hot, numeric.reshape(len(table), -1))

    def pairwise(self, a: pd.DataFrame, b: pd.DataFrame) -> np.ndarray:
        """Dense Gower distance matrix between the rows of two (small) tables."""
        ea, eb = self.encode(a), self.encode(b)
        total = len(self.categorical_columns) - (ea.one_hot @ eb.one_hot.T).astype(np.float64)
        for k in range(ea.numeric.shape[1]):
            total += np.abs(ea.numeric[:, k, None] - eb.numeric[None, :, k])
        return total / self.n_columns

    def nearest(
        self,
        queries: pd.DataFrame,
        candidates: pd.DataFrame,
        *,
        memory_mb: float = MEMORY_BUDGET_MB,
    ) -> tuple[np.ndarray, np.ndarray]:
        """Gower distance from each query to its nearest candidate, and that candidate's position.

        Exact, by blocking: candidates with the same categorical values as the query are found by
        hashing; if one lies within one mismatch (distance 1/n_columns), nothing else can beat it.
        Otherwise candidates differing in at most one categorical column are tried the same way
        (within two mismatches). The queries left go through :func:`_nearest_dense`, in chunks
        sized to ``memory_mb``.
        """
        if len(candidates) == 0:
            raise ValueError("nearest needs at least one candidate")
        q, c = self.encode(queries), self.encode(candidates)
        q_codes, c_codes = self.codes(queries), self.codes(candidates)
        n_cat = q_codes.shape[1]
        max_pairs = max(1, int(memory_mb * 2**20 / 64))
        dist = np.full(len(queries), np.inf)
        index = np.full(len(queries), -1, dtype=np.int64)
        todo = np.arange(len(queries))
        for level, dropped_columns in _blocking_levels(n_cat):
            complete = np.ones(todo.size, dtype=bool)
            for dropped in dropped_columns:
                keep = [j for j in range(n_cat) if j != dropped]
                q_key, c_key = _row_keys(q_codes[np.ix_(todo, keep)], c_codes[:, keep])
                d, i, skipped = _nearest_in_blocks(
                    (q_codes[todo], q.numeric[todo]),
                    (c_codes, c.numeric),
                    q_key,
                    c_key,
                    dropped,
                    max_pairs,
                )
                complete &= ~skipped
                better = d < dist[todo]
                dist[todo[better]], index[todo[better]] = d[better], i[better]
            todo = todo[~complete | (dist[todo] > level + 1)]
        if todo.size:
            sub = EncodedTable(q.one_hot[todo], q.numeric[todo])
            dist[todo], index[todo] = _nearest_dense(sub, c, n_cat, memory_mb)
        return dist / self.n_columns, index


def _blocking_levels(n_cat: int) -> list[tuple[int, list[int | None]]]:
    """(level, categorical column left out of the key) for each blocking pass: level 0 matches
    every categorical column, level 1 all but one (skipped with fewer than three columns, where
    the blocks would be most of the table)."""
    if n_cat == 0:
        return []
    return [(0, [None])] + ([(1, list(range(n_cat)))] if n_cat >= 3 else [])


def _row_keys(q_codes: np.ndarray, c_codes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """One integer per distinct row of codes, shared by queries and candidates."""
    both = np.vstack([q_codes, c_codes])
    radix = both.max(axis=0, initial=0) + 1 if both.size else np.ones(both.shape[1], np.int64)
    if np.prod([float(r) for r in radix]) < 2.0**62:
        weights = np.cumprod(np.concatenate([[1], radix[:-1]])).astype(np.int64)
        keys = both @ weights
    else:
        keys = np.unique(both, axis=0, return_inverse=True)[1].ravel()
    return keys[: len(q_codes)], keys[len(q_codes) :]


def _l1(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(a - b).sum(axis=-1)


def _segment_argmin(values: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """Position of the minimum of ``values`` in each of consecutive segments of length ``counts``
    (all positive)."""
    starts = np.cumsum(counts) - counts
    mins = np.minimum.reduceat(values, starts)
    hits = np.flatnonzero(values == np.repeat(mins, counts))
    return hits[np.searchsorted(hits, starts)]


def _nearest_in_blocks(q: tuple, c: tuple, q_key, c_key, dropped: int | None, max_pairs: int):
    """Nearest candidate, with its exact L1, among those sharing the query's key.

    ``q`` and ``c`` are (codes, numeric encoding); keys cover every categorical column except
    ``dropped``, so a pair's distance is [codes differ at ``dropped``] + numeric L1. Queries
    whose key is absent get inf; those whose key is shared by more than ``max_pairs`` candidates
    get inf and are flagged as skipped. Pairs are made in batches of at most ``max_pairs``,
    against candidates sorted by key (contiguous reads).
    """
    (q_codes, q_num), (c_codes, c_num) = q, c
    dist = np.full(len(q_key), np.inf)
    index = np.full(len(q_key), -1, dtype=np.int64)
    order = np.argsort(c_key, kind="stable")
    lo = np.searchsorted(c_key[order], q_key, side="left")
    counts = np.searchsorted(c_key[order], q_key, side="right") - lo
    skipped = counts > max_pairs
    counts[skipped] = 0
    q_cols, c_cols = np.ascontiguousarray(q_num.T), np.ascontiguousarray(c_num[order].T)
    c_dropped = None if dropped is None else c_codes[order, dropped]
    ends = np.cumsum(counts)
    start = 0
    while start < len(q_key):
        stop = int(np.searchsorted(ends, ends[start] - counts[start] + max_pairs, side="right"))
        rows = np.arange(start, stop)
        rows = rows[counts[rows] > 0]
        start = stop
        if rows.size == 0:
            continue
        qi = np.repeat(rows, counts[rows])
        first = np.repeat(np.cumsum(counts[rows]) - counts[rows] - lo[rows], counts[rows])
        pos = np.arange(qi.size) - first  # position in the key-sorted candidates
        exact = np.zeros(qi.size)
        if c_dropped is not None:
            exact += q_codes[qi, dropped] != c_dropped[pos]
        for k in range(q_cols.shape[0]):
            exact += np.abs(q_cols[k, qi] - c_cols[k, pos])
        at = _segment_argmin(exact, counts[rows])
        dist[rows], index[rows] = exact[at], order[pos[at]]
    return dist, index, skipped


def _nearest_dense(q: EncodedTable, c: EncodedTable, n_cat: int, memory_mb: float):
    """Exact L1 nearest neighbours of every query against all candidates, by chunks of queries."""
    rows = max(1, int(memory_mb * 2**20 / (48 * len(c.numeric))))
    c_sq = np.einsum("ij,ij->i", c.numeric, c.numeric)
    c_onehot_t = np.ascontiguousarray(c.one_hot.T)
    c_numeric_t = np.ascontiguousarray(c.numeric.T)
    dist = np.empty(len(q.numeric))
    index = np.empty(len(q.numeric), dtype=np.int64)
    for start in range(0, len(q.numeric), rows):
        part = slice(start, start + rows)
        chunk = EncodedTable(q.one_hot[part], q.numeric[part])
        dist[part], index[part] = _nearest_chunk(chunk, c, c_onehot_t, c_numeric_t, c_sq, n_cat)
    return dist, index


def _nearest_chunk(q, c, c_onehot_t, c_numeric_t, c_sq, n_cat: int):
    """Exact nearest neighbours in L1 for a chunk of queries, mostly by matrix products.

    The categorical part of L1 (the number of mismatches) is a matrix product. The numeric part
    obeys L1 ≥ √2·L2 on this encoding, and L2 is a matrix product too; so compute the lower
    bound LB = mismatches + √2·L2 for all pairs, take the exact distance of each query's best-LB
    candidate as an upper bound UB, and compute exact L1 only for the pairs with LB < UB.
    """
    mismatches = n_cat - q.one_hot @ c_onehot_t  # float32, exact small integers
    lower = q.numeric @ c_numeric_t  # becomes the lower bound, in place
    lower *= -2.0
    lower += c_sq
    lower += np.einsum("ij,ij->i", q.numeric, q.numeric)[:, None]
    np.maximum(lower, 0.0, out=lower)
    np.sqrt(lower, out=lower)
    lower *= np.sqrt(2.0)
    lower += mismatches
    rows = np.arange(len(lower))
    best = lower.argmin(axis=1)
    upper = mismatches[rows, best] + _l1(q.numeric, c.numeric[best])
    qi, ci = np.nonzero(lower < (upper - 1e-9)[:, None])
    del lower
    if qi.size:
        exact = mismatches[qi, ci].astype(np.float64)
        for k in range(q.numeric.shape[1]):
            exact += np.abs(q.numeric[qi, k] - c.numeric[ci, k])
        who, counts = np.unique(qi, return_counts=True)
        at = _segment_argmin(exact, counts)
        better = exact[at] < upper[who]
        upper[who[better]] = exact[at[better]]
        best[who[better]] = ci[at[better]]
    return upper, best


# --------------------------------------------------------------------------- attacks


@_requires(ThreatModel("auxiliary", "synthetic_only"))
def closest_distance_attack(
    targets: pd.DataFrame, synthetic: pd.DataFrame, distance: MixedTypeDistance
) -> np.ndarray:
    """Membership score = minus the Gower distance to the nearest synthetic row.

    A membership-inference *attack*, to be judged by its AUC / TPR at low FPR / empirical ε over
    members and non-members. It is not a "DCR test": a distance threshold says nothing on its own.
    """
    dist, _ = distance.nearest(targets, synthetic)
    return -dist


@dataclass(frozen=True)
class MixedKernel:
    """Product kernel for mixed data: Aitchison–Aitken on categorical columns, Gaussian on
    standardised numeric columns (the kernel of statsmodels' KDEMultivariate).

    For a column with c values the categorical kernel is (1 − λ) on a match and λ/(c − 1) otherwise,
    with λ = (c − 1)/(e^w + c − 1), i.e. a match weighs e^w times a given mismatch in every column.
    ``match_log_odds`` = w, ``bandwidth`` = h in standard deviations.
    """

    match_log_odds: float
    bandwidth: float


MATCH_LOG_ODDS_GRID = (1.0, 2.0, 3.0, 4.5, 6.0, 8.0)
BANDWIDTH_GRID = (0.03, 0.06, 0.12, 0.25, 0.5, 1.0)


class _KernelFeatures(NamedTuple):
    one_hot: np.ndarray  # categorical indicators, as in EncodedTable
    z: np.ndarray  # standardised numerics, missing at the mean (0)
    z_sq: np.ndarray


def _kernel_features(
    table: pd.DataFrame, distance: MixedTypeDistance, mean: np.ndarray, std: np.ndarray
) -> _KernelFeatures:
    values = table[list(distance.numeric_columns)].apply(pd.to_numeric, errors="coerce")
    z = np.nan_to_num((values.to_numpy(float) - mean) / std)
    return _KernelFeatures(distance.encode(table).one_hot, z, np.einsum("ij,ij->i", z, z))


def _log_kernel_sums(
    queries: _KernelFeatures,
    data: _KernelFeatures,
    kernels: Sequence[MixedKernel],
    slot_counts: np.ndarray,
    memory_mb: float = MEMORY_BUDGET_MB,
) -> np.ndarray:
    """log Σ_s K(x, s) for every query x and kernel; shape (n_kernels, n_queries).

    The log kernel is an affine function of (number of matching categorical columns m, squared
    numeric distance), and both are matrix products, so the sums are exact and BLAS-fast. With
    several kernels (the bandwidth selection's grid) each bandwidth exponentiates the distances
    once: Σ_s e^{w·m_s − sq_s/2h²} = Σ_m e^{w·m} S_h(m), S_h(m) the sum over the rows with m
    matches (``_grouped_by_matches``), so every match weight of that bandwidth is a sum over
    the few m (36 → 6 exponentials per pair on the default grid).
    """
    out = np.empty((len(kernels), len(queries.z)))
    rows = max(1, int(memory_mb * 2**20 / (64 * max(1, len(data.z)))))
    d = queries.z.shape[1]
    grouped = len(kernels) > 1 and _groups_are_exact(kernels, len(slot_counts))
    for start in range(0, len(queries.z), rows):
        part = slice(start, start + rows)
        matches = (queries.one_hot[part] @ data.one_hot.T).astype(np.float64)
        sq = queries.z_sq[part, None] + data.z_sq[None, :] - 2.0 * (queries.z[part] @ data.z.T)
        sq = np.maximum(sq, 0.0)
        if grouped:
            out[:, part] = _grouped_by_matches(matches, sq, kernels, slot_counts, d)
            continue
        for k, kern in enumerate(kernels):
            log_kernel = sq * (-0.5 / (kern.bandwidth * kern.bandwidth))
            log_kernel += kern.match_log_odds * matches
            out[k, part] = _log_normaliser(kern, slot_counts, d) + _logsumexp_rows(log_kernel)
    return out


# Below e^-745 a float64 is 0: the grouped sums shift each row by its nearest numeric distance
# only, so a row whose extra matches outweigh that (w·m above this) could be lost; the direct
# sum shifts by the exact row maximum and is used instead.
_GROUPED_LOG_RANGE = 600.0


def _groups_are_exact(kernels: Sequence[MixedKernel], categorical_columns: int) -> bool:
    return max(k.match_log_odds for k in kernels) * categorical_columns <= _GROUPED_LOG_RANGE


def _log_normaliser(kernel: MixedKernel, slot_counts: np.ndarray, d: int) -> float:
    """log of the product kernel's normalising constant (categorical and Gaussian parts)."""
    w, h = kernel.match_log_odds, kernel.bandwidth
    return -np.log(np.exp(w) + slot_counts - 1).sum() - d * np.log(np.sqrt(2 * np.pi) * h)


def _grouped_by_matches(
    matches: np.ndarray, sq: np.ndarray, kernels: Sequence[MixedKernel], slot_counts: np.ndarray,
    d: int,
) -> np.ndarray:
    """(n_kernels, n_queries) log kernel sums of one chunk, one exponential per bandwidth:
    S_h[i, m] = Σ_{s: m_is = m} e^{−(sq_is − min_s sq_is)/2h²} by one weighted bincount, then
    log Σ_m e^{w·m} S_h[i, m] for every match weight w of that bandwidth."""
    queries, groups = sq.shape[0], len(slot_counts) + 1
    cell = (np.arange(queries)[:, None] * groups + np.rint(matches).astype(np.intp)).ravel()
    nearest = sq.min(axis=1)
    shifted = sq - nearest[:, None]
    out = np.empty((len(kernels), queries))
    for h in sorted({k.bandwidth for k in kernels}):
        scale = -0.5 / (h * h)
        sums = np.bincount(cell, weights=np.exp(shifted * scale).ravel(),
                           minlength=queries * groups).reshape(queries, groups)
        with np.errstate(divide="ignore"):
            log_sums = np.log(sums)
        for k, kern in enumerate(kernels):
            if kern.bandwidth == h:
                out[k] = (_log_normaliser(kern, slot_counts, d) + nearest * scale
                          + logsumexp(log_sums + kern.match_log_odds * np.arange(groups), axis=1))
    return out


def _logsumexp_rows(z: np.ndarray) -> np.ndarray:
    """log Σ_j exp(z_ij) for each row, overwriting ``z``."""
    top = z.max(axis=1, keepdims=True)
    z -= top
    np.exp(z, out=z)
    return np.log(z.sum(axis=1)) + top[:, 0]


def _select_kernel(
    reference: _KernelFeatures, slot_counts: np.ndarray, rng: np.random.Generator, max_rows: int
) -> MixedKernel:
    """Kernel maximising the held-out log-likelihood of half the reference under the other half."""
    n = len(reference.z)
    perm = rng.permutation(n)[: 2 * max_rows]
    fit, held = perm[: len(perm) // 2], perm[len(perm) // 2 :]

    def take(idx: np.ndarray) -> _KernelFeatures:
        return _KernelFeatures(*(a[idx] for a in reference))

    grid = [MixedKernel(w, h) for w in MATCH_LOG_ODDS_GRID for h in BANDWIDTH_GRID]
    loglik = _log_kernel_sums(take(held), take(fit), grid, slot_counts).mean(axis=1)
    return grid[int(np.argmax(loglik))]


@_requires(ThreatModel("auxiliary", "synthetic_only"))
def density_ratio_attack(
    targets: pd.DataFrame,
    synthetic: pd.DataFrame,
    reference: pd.DataFrame,
    *,
    numeric_columns: Sequence[str],
    kernel: MixedKernel | None = None,
    seed: int = 0,
    max_selection_rows: int = 1000,
) -> np.ndarray:
    """DOMIAS membership score: log p_synthetic(x) − log p_reference(x).

    Both densities are kernel density estimates with the same mixed-type product kernel
    (:class:`MixedKernel`); if ``kernel`` is None it is chosen by held-out likelihood on
    ``reference`` (at most ``max_selection_rows`` per half, drawn with ``seed``). Why this
    estimator: it is exact (no tree or sampling approximation), has one smoothing parameter per
    data type, treats categorical values as categories rather than points on a line, and costs two
    matrix products per chunk. The reference sample must not contain the targets.
    """
    distance = MixedTypeDistance.fit(pd.concat([reference, synthetic]), numeric_columns)
    values = reference[list(distance.numeric_columns)].apply(pd.to_numeric, errors="coerce")
    mean = values.mean().to_numpy(float)
    std = values.std().fillna(1.0).to_numpy(float)
    std = np.where(std > 0, std, 1.0)
    slot_counts = np.array([len(c) + 2 for c in distance.categories], dtype=float)
    ref = _kernel_features(reference, distance, mean, std)
    if kernel is None:
        kernel = _select_kernel(ref, slot_counts, np.random.default_rng(seed), max_selection_rows)
    tgt = _kernel_features(targets, distance, mean, std)
    syn = _kernel_features(synthetic, distance, mean, std)
    log_syn = _log_kernel_sums(tgt, syn, [kernel], slot_counts)[0] - np.log(len(synthetic))
    log_ref = _log_kernel_sums(tgt, ref, [kernel], slot_counts)[0] - np.log(len(reference))
    return log_syn - log_ref


# --------------------------------------------------------------------------- anonymeter


def _risk_summary(evaluator, confidence_level: float) -> dict:
    """Risk, its confidence interval and the raw success rates of one anonymeter evaluator."""
    risk = evaluator.risk(confidence_level=confidence_level)
    results = evaluator.results(confidence_level=confidence_level)
    rate = lambda r: None if r is None else {"value": float(r.value), "error": float(r.error)}  # noqa: E731
    return {
        "risk": float(risk.value),
        "ci": [float(risk.ci[0]), float(risk.ci[1])],
        "attack_rate": rate(results.attack_rate),
        "baseline_rate": rate(results.baseline_rate),
        "control_rate": rate(results.control_rate),
    }


def _with_global_seed(seed: int, run: Callable[[], dict]) -> dict:
    """Run ``run`` with numpy's legacy global RNG seeded, then restore it.

    anonymeter draws the targets and the baseline guesses of its inference attack from the global
    RNG, with no way to pass a generator.
    """
    state = np.random.get_state()  # noqa: NPY002 (anonymeter uses the legacy RNG)
    np.random.seed(seed)  # noqa: NPY002
    try:
        return run()
    finally:
        np.random.set_state(state)  # noqa: NPY002


class _Collect(logging.Handler):
    """A logging handler that keeps each record's message."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextlib.contextmanager
def _quiet_logger(name: str) -> Iterator[list[str]]:
    """Keep logger ``name``'s warnings off the console (they would reach the root handler opacus
    installs at import and print mid-run) and yield them as a list, for the report."""
    logger = logging.getLogger(name)
    collect = _Collect()
    propagate = logger.propagate
    logger.addHandler(collect)
    logger.propagate = False
    try:
        yield collect.messages
    finally:
        logger.removeHandler(collect)
        logger.propagate = propagate


def anonymeter_risks(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    control: pd.DataFrame,
    *,
    n_attacks: int,
    seed: int,
    secret: str | None = None,
    confidence_level: float = 0.95,
) -> dict:
    """Singling-out (univariate), linkability and inference risks from ``anonymeter``.

    ``real`` is the training table, ``control`` real rows not used for training. Linkability gives
    each half of the columns to the attacker as one auxiliary table; inference guesses ``secret``
    (default: the last column) from all the others. Risks are anonymeter's excess success over
    the control, with ``confidence_level`` intervals. Targets are drawn with ``seed``, which
    makes linkability and inference reproducible; singling-out is not quite (anonymeter 1.1 lists
    rare values in polars' unordered group-by order), and its random-guess baselines are not all
    seedable (they enter no risk, only ``baseline_rate``). Without anonymeter the result says why.
    anonymeter's warnings and log warnings go into the result's ``warnings``, not to the console.
    """
    try:
        from anonymeter.evaluators import (
            InferenceEvaluator,
            LinkabilityEvaluator,
            SinglingOutEvaluator,
        )
    except Exception as exc:  # ImportError, or a broken optional dependency (numba, polars)
        return {"available": False, "reason": f"anonymeter unavailable: {exc!r}"}

    rng = np.random.default_rng(seed)
    n = min(n_attacks, len(real), len(control))
    targets = real.sample(n, random_state=rng).reset_index(drop=True)
    controls = control.sample(n, random_state=rng).reset_index(drop=True)
    columns = list(real.columns)
    secret = columns[-1] if secret is None else secret
    half = len(columns) // 2

    # anonymeter rescales the control's singling-out count, with unseeded sampling, unless the
    # control has as many distinct rows as the real table: give it exactly that many.
    real_rows, control_rows = real.drop_duplicates(), control.drop_duplicates()
    if len(control_rows) > len(real_rows):
        control_rows = control_rows.sample(len(real_rows), random_state=rng)

    def run() -> dict:
        singling = SinglingOutEvaluator(
            real_rows, synthetic, n_attacks=n_attacks, control=control_rows, seed=seed
        ).evaluate(mode="univariate")
        linkability = LinkabilityEvaluator(
            targets,
            synthetic,
            aux_cols=(columns[:half], columns[half:]),
            n_attacks=n,
            control=controls,
        ).evaluate(n_jobs=1)
        inference = InferenceEvaluator(
            targets,
            synthetic,
            aux_cols=[c for c in columns if c != secret],
            secret=secret,
            regression=bool(pd.api.types.is_numeric_dtype(real[secret])),
            n_attacks=n,
            control=controls,
        ).evaluate(n_jobs=1)
        return {
            "singling_out": _risk_summary(singling, confidence_level),
            "linkability": _risk_summary(linkability, confidence_level),
            "inference": {"secret": secret, **_risk_summary(inference, confidence_level)},
        }

    with warnings.catch_warnings(record=True) as caught, _quiet_logger("anonymeter") as logged:
        warnings.simplefilter("always")
        risks = _with_global_seed(seed, run)
    return {
        "available": True,
        "n_attacks": n,
        **risks,
        "warnings": sorted({str(w.message) for w in caught} | set(logged)),
    }


# --------------------------------------------------------------------------- runner


def identity_generator(train: pd.DataFrame) -> pd.DataFrame:
    """Positive control: a 'generator' that releases its training rows unchanged."""
    return train.reset_index(drop=True).copy()


@dataclass(frozen=True)
class AttackInputs:
    """What a membership attack on the release reads: the targets (members first, then as many
    non-members), the synthetic table, the attacker's reference sample (disjoint from the
    targets), the fitted mixed-type distance, the numeric columns and a seed."""

    targets: pd.DataFrame
    synthetic: pd.DataFrame
    reference: pd.DataFrame
    distance: MixedTypeDistance
    numeric_columns: Sequence[str]
    seed: int


MEMBERSHIP_ATTACKS: dict[str, Callable[[AttackInputs], np.ndarray]] = {}


def _registered(name: str, attack: Callable) -> Callable[[Callable], Callable]:
    """List an adapter ``AttackInputs -> scores`` in ``MEMBERSHIP_ATTACKS`` under ``name``, with
    the threat model of the ``attack`` it calls."""

    def mark(adapter: Callable[[AttackInputs], np.ndarray]) -> Callable:
        adapter.required_threat_model = attack.required_threat_model  # type: ignore[attr-defined]
        MEMBERSHIP_ATTACKS[name] = adapter
        return adapter

    return mark


@_registered("closest_distance", closest_distance_attack)
def _closest_distance(inputs: AttackInputs) -> np.ndarray:
    return closest_distance_attack(inputs.targets, inputs.synthetic, inputs.distance)


@_registered("density_ratio", density_ratio_attack)
def _density_ratio(inputs: AttackInputs) -> np.ndarray:
    return density_ratio_attack(inputs.targets, inputs.synthetic, inputs.reference,
                                numeric_columns=inputs.numeric_columns, seed=inputs.seed)


def _balanced_targets(
    members: pd.DataFrame, non_members: pd.DataFrame, n: int, rng: np.random.Generator
) -> tuple[pd.DataFrame, pd.DataFrame, np.ndarray]:
    """``n`` members and ``n`` non-members drawn without replacement; also the unused
    non-member positions."""
    pick_in = rng.choice(len(members), size=n, replace=False)
    order_out = rng.permutation(len(non_members))
    return members.iloc[pick_in], non_members.iloc[order_out[:n]], order_out[n:]


def run_membership_attacks(
    members: pd.DataFrame,
    non_members: pd.DataFrame,
    synthetic: pd.DataFrame,
    reference: pd.DataFrame | None,
    *,
    numeric_columns: Sequence[str],
    delta: float,
    seed: int,
    threat_model: ThreatModel = ThreatModel(),
    n_targets: int | None = None,
    bootstrap: int = 200,
) -> dict:
    """Run the attacks of ``MEMBERSHIP_ATTACKS`` the threat model permits on balanced
    member/non-member targets.

    ``members`` are training rows of the generator, ``non_members`` rows from the same population
    that were not. ``reference`` is the attacker's auxiliary sample, which must be disjoint from
    the targets; if None, the non-members not drawn as targets serve as reference (then at most
    half the non-members become targets). Returns ``attack_metrics`` per attack, the seconds each
    took, and the worst case over attacks (max AUC, max empirical ε).
    """
    rng = np.random.default_rng(seed)
    cap_out = len(non_members) // 2 if reference is None else len(non_members)
    n = min(len(members), cap_out, n_targets or len(members))
    if n < 2:
        raise ValueError("need at least two member and two non-member targets")
    tgt_in, tgt_out, unused = _balanced_targets(members, non_members, n, rng)
    if reference is None:
        reference = non_members.iloc[unused]
    targets = pd.concat([tgt_in, tgt_out], ignore_index=True)
    distance = MixedTypeDistance.fit(pd.concat([reference, synthetic]), numeric_columns)
    inputs = AttackInputs(targets, synthetic, reference, distance, numeric_columns, seed)
    results: dict[str, dict] = {}
    for name, attack in MEMBERSHIP_ATTACKS.items():
        if not threat_model.permits(attack.required_threat_model):
            continue
        start = time.perf_counter()
        scores = attack(inputs)
        seconds = time.perf_counter() - start
        metrics = attack_metrics(
            scores[:n], scores[n:], delta=delta, bootstrap=bootstrap, seed=seed
        )
        results[name] = {**metrics, "seconds": seconds}
    return {
        "threat_model": asdict(threat_model),
        "n_targets_per_class": n,
        "attacks": results,
        "worst_case": _worst_case(results),
    }


def _worst_case(results: dict[str, dict]) -> dict:
    """Strongest attack by AUC and by empirical ε."""
    if not results:
        return {}
    by_auc = max(results, key=lambda k: results[k]["auc"])
    by_eps = max(results, key=lambda k: results[k]["empirical_epsilon"]["eps_lower_bound"])
    return {
        "auc": results[by_auc]["auc"],
        "auc_attack": by_auc,
        "eps_lower_bound": results[by_eps]["empirical_epsilon"]["eps_lower_bound"],
        "eps_attack": by_eps,
    }
