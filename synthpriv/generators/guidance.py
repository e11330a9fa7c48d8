"""Guidance by the DP marginals: re-weight candidate rows to agree with target marginals, then
resample. Post-processing of DP outputs (the generator and the marginals model): no budget.

Raking (iterative proportional fitting, Deming & Stephan 1940) finds weights w on the candidate
rows, as close to uniform in KL divergence as possible, whose weighted marginals over the target
cliques equal the targets (where the candidates' support allows it).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synthpriv.domain import Domain


@dataclass(frozen=True)
class Target:
    """A marginal to match: ``probabilities`` over ``clique`` (shaped like its sub-domain)."""

    clique: tuple[str, ...]
    probabilities: np.ndarray


def rake(
    codes: np.ndarray, domain: Domain, targets: Sequence[Target], iterations: int = 30,
    tolerance: float = 1e-4,
) -> np.ndarray:
    """Weights (summing to 1) of the rows ``codes`` whose marginals match ``targets``.

    Cycles through the targets, scaling each cell's rows by target / current. Cells the
    candidates never reach stay at zero (their target mass is spread over the rest by the final
    normalisation). Stops when the largest TVD to a target falls below ``tolerance``.
    """
    rows = codes.shape[0]
    weights = np.full(rows, 1.0 / rows)
    cells = []
    for target in targets:
        axes = list(domain.axes(target.clique))
        shape = domain.project(target.clique).shape
        index = np.ravel_multi_index(codes[:, axes].T, shape) if axes else np.zeros(rows, int)
        goal = np.clip(np.asarray(target.probabilities, dtype=np.float64).ravel(), 0.0, None)
        goal = goal / goal.sum() if goal.sum() > 0 else np.full(goal.size, 1.0 / goal.size)
        cells.append((index, goal))
    for _ in range(iterations):
        worst = 0.0
        for index, goal in cells:
            current = np.bincount(index, weights=weights, minlength=goal.size)
            worst = max(worst, 0.5 * np.abs(current - goal).sum())
            ratio = np.divide(goal, current, out=np.zeros_like(goal), where=current > 0)
            weights *= ratio[index]
            weights /= weights.sum()
        if worst < tolerance:
            break
    return weights


def resample(
    weights: np.ndarray, records: int, rng: np.random.Generator, systematic: bool
) -> np.ndarray:
    """Indices of ``records`` rows drawn with probability ∝ ``weights``.

    ``systematic``: one uniform offset and evenly spaced points on the cumulative weights, so
    each row is drawn ⌊n·w⌋ or ⌈n·w⌉ times (low-variance resampling); else i.i.d. draws.
    """
    cdf = np.cumsum(weights / weights.sum())
    cdf[-1] = 1.0
    points = (rng.random() + np.arange(records)) / records if systematic else rng.random(records)
    drawn = np.searchsorted(cdf, points, side="right")
    return rng.permutation(np.minimum(drawn, len(weights) - 1))


def rake_conditional(
    probabilities: np.ndarray, codes: np.ndarray, column: str, domain: Domain,
    targets: Sequence[Target], iterations: int = 30, tolerance: float = 1e-4,
) -> np.ndarray:
    """Per-row probabilities of ``column``'s codes, rescaled so that, in expectation, the rows
    ``codes`` (whose other columns are fixed) take ``column`` with the targets' conditionals.

    Each target's clique holds ``column`` and columns already set in ``codes``. For every cell
    of the other columns, the expected count of each code is raked towards the rows in that
    cell times the target's p(column | cell), then each row is renormalised to sum to 1
    (iterative proportional fitting with the row constraint). The rows' own context is never
    changed; cells the target gives no mass keep the network's probabilities.
    """
    p = np.array(probabilities, dtype=np.float64, copy=True)
    size = p.shape[1]
    fits = []
    for target in targets:
        others = tuple(a for a in target.clique if a != column)
        goal = np.moveaxis(np.clip(np.asarray(target.probabilities, np.float64), 0.0, None),
                           target.clique.index(column), -1).reshape(-1, size)
        mass = goal.sum(axis=1, keepdims=True)
        conditional = np.divide(goal, mass, out=np.zeros_like(goal), where=mass > 0)
        shape = domain.project(others).shape
        axes = list(domain.axes(others))
        index = np.ravel_multi_index(codes[:, axes].T, shape) if axes else np.zeros(len(p), int)
        rows_in_cell = np.bincount(index, minlength=len(goal))[:, None]
        fits.append((index, rows_in_cell * conditional, mass[:, 0] > 0))
    for _ in range(iterations):
        worst = 0.0
        for index, goal, known in fits:
            current = np.stack([np.bincount(index, weights=p[:, k], minlength=len(goal))
                                for k in range(size)], axis=1)
            worst = max(worst, 0.5 * np.abs(current - goal)[known].sum() / max(len(p), 1))
            ratio = np.divide(goal, current, out=np.ones_like(goal), where=current > 0)
            ratio[~known] = 1.0
            p *= ratio[index]
            total = p.sum(axis=1, keepdims=True)
            p = np.divide(p, total, out=np.full_like(p, 1.0 / size), where=total > 0)
        if worst < tolerance:
            break
    return p
