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
