"""The shaped fine grid of an adaptive numeric column (``NumericColumn.grid_shape``).

An equal-width grid of 1,024 cells over DP bounds [0, 65,535] puts an amount whose rows sit
between 500 and 20,000 (five octaves of thirteen) in a few dozen cells of 64; the adaptive
domain then groups cells to roughly equal noisy mass and draws uniformly within them, and the
column's log-shape is lost (issue 24 item 4: a released median twice the real one). A grid
shape gives each segment of the range (the DP domain step: each octave the noise shows, and each
run of octaves it does not) cells in proportion to its mass, equal-width within, so every fine
cell holds about the same share of the (noisy) mass wherever the column is: an equal-mass grid
at octave resolution, which the adaptive domain's equal-share decoding then follows.

Rules (arithmetic on public figures, nothing tuned):

* every segment gets one cell per octave it spans (the DP bounds' buckets: a floor, so no
  octave inside the bounds is left without a cell's worth of the range; a run of 16 empty
  octaves below 1 gets 17 equal cells, not cells of 10⁻⁵), then the rest in proportion to its
  mass (largest remainders);
* never more cells than values a segment holds (``step``: 1 for integers, 10^-precision for a
  continuous column with a precision): what one segment cannot take goes to the others, so a
  column whose range fits the cells gets one cell per value, as an equal-width grid would;
* all masses 0: the equal-width grid.

Public: a function of the bounds and the shape only (no data; no budget).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np


def octaves(low: float, high: float, whole: bool) -> int:
    """How many of the DP bounds' public buckets (sign × power of two of the magnitude, one
    around zero: synthpriv.privacy.bounds) [low, high) meets: a segment's floor of cells."""
    smallest = 1.0 if whole else 2.0**-16  # bounds.MIN_EXPONENT: integers 2^0, continuous 2^-16

    def side(a: float, b: float) -> int:  # buckets of the magnitudes in [a, b), 0 ≤ a < b
        a = max(a, smallest)
        if b <= a:
            return 0
        return int(math.floor(math.log2(b) - 1e-12) - math.floor(math.log2(a))) + 1

    if low >= 0:
        count = side(low, high) + (low < smallest)
    elif high <= 0:
        count = side(-high, -low) + (high > -smallest)
    else:
        count = side(0.0, -low) + side(0.0, high) + 1
    return max(count, 1)


def allocate(weights: np.ndarray, total: int, caps: np.ndarray,
             floors: np.ndarray | None = None) -> np.ndarray:
    """Whole cells per segment summing to ``total`` (or to ``caps.sum()`` when that is less):
    ``floors`` each (one by default; at most ``caps``), the rest in proportion to ``weights``
    (≥ 0) by water-filling under ``caps`` (≥ 1) and largest remainders."""
    weights = np.asarray(weights, dtype=float)
    caps = np.asarray(caps, dtype=float)
    floors = np.ones(len(weights)) if floors is None else np.asarray(floors, dtype=float)
    if caps.sum() <= total:
        return caps.astype(np.int64)
    if total < floors.sum():
        raise ValueError(f"a grid of {total} cells cannot give each of {len(weights)} segments "
                         "its floor of cells: give fewer grid_shape breaks")
    share = floors.copy()
    fixed = np.zeros(len(weights), dtype=bool)
    while True:  # water-filling: a segment at its cap is fixed, the rest share what is left
        free = ~fixed
        left = total - caps[fixed].sum() - floors[free].sum()
        weight = weights[free] if weights[free].sum() > 0 else np.ones(free.sum())
        share[free] = floors[free] + left * weight / weight.sum()
        over = free & (share > caps)
        if not over.any():
            break
        fixed |= over
        share[fixed] = caps[fixed]
    cells = np.floor(share + 1e-9).astype(np.int64)
    left = total - int(cells.sum())
    for index in np.argsort(-(share - cells), kind="stable"):  # largest remainders first
        if left <= 0:
            break
        if cells[index] < caps[index]:
            cells[index] += 1
            left -= 1
    return cells


def shaped_edges(lower: float, upper: float, breaks: Sequence[float], mass: Sequence[float],
                 cells: int, step: float | None = None) -> np.ndarray:
    """Edges of about ``cells`` cells over [lower, upper]: the segments [lower, breaks[0]), …,
    [breaks[-1], upper] get cells by ``allocate`` (their ``mass``; at most width/``step``
    each when ``step`` is given), equal-width within (edges rounded to whole numbers when
    ``step`` is 1). A break outside (lower, upper) merges its segment into its neighbour's."""
    points = [lower]
    weights = [0.0]
    for index, value in enumerate(mass):
        start = breaks[index - 1] if index else lower
        if index and lower < start < upper and start > points[-1]:
            points.append(float(start))
            weights.append(0.0)
        weights[-1] += max(float(value), 0.0)
    if sum(weights) <= 0:  # no mass anywhere: the equal-width grid
        edges = np.linspace(lower, upper, cells + 1)
        return np.round(edges) if step == 1.0 else edges
    bounds = np.array(points + [upper], dtype=float)
    widths = np.diff(bounds)
    caps = (np.maximum(np.floor(widths / step + 1e-9), 1) if step is not None
            else np.full(len(widths), math.inf))
    floors = np.minimum([octaves(a, b, step == 1.0) for a, b in zip(bounds[:-1], bounds[1:],
                                                                    strict=True)], caps)
    counts = allocate(np.array(weights), cells, caps, floors)
    pieces = [np.linspace(a, b, n + 1)
              for a, b, n in zip(bounds[:-1], bounds[1:], counts, strict=True)]
    edges = np.unique(np.concatenate(pieces))
    if step is None or step == 1.0:
        return np.unique(np.round(edges)) if step == 1.0 else edges
    return on_lattice(edges, step)


def on_lattice(edges: np.ndarray, step: float) -> np.ndarray:
    """``edges`` with the inner ones rounded to the lattice of ``step`` (10^-precision: the
    doubles a CSV cell with that many decimals parses to), the bounds kept. linspace's edge
    1.0700000000000001 put a data value 1.07 in the cell before it, which then decoded it as
    1.06 (ISLP OJ's prices; branch ojheaps): on the lattice, each value lies in one cell from its
    left edge. A cell is at least ``step`` wide (``allocate``'s caps), so rounding moves an edge
    by at most half a cell; edges that meet are merged. Public: bounds, shape and precision."""
    digits = max(0, round(-math.log10(step)))
    inner = np.round(edges[1:-1], digits)
    inner = inner[(inner > edges[0]) & (inner < edges[-1])]
    return np.unique(np.concatenate([edges[:1], inner, edges[-1:]]))
