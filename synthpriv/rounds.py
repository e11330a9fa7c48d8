"""Round values of a wide integer column: where typed amounts pile up, chosen from public figures.

People type round amounts (a 15,000 loan, a 500 book budget, a 2,500 fee), and such a pile can
hold 5-20 % of a column yet fall below DP heap discovery's threshold (it scales with the number
of heap columns: loans' 15,000, 470 rows of 8,000, under T_h = 483). The adaptive grid measures a
pile well only when it is a grid cell of its own (``compress._point_cells``); inside a wide grid
cell only the fine 1-way marginal sees it, at a union-bound significance over every fine cell of
the job (about 4.7σ there), and it comes back at 0 %.

The rule (no table consulted; nothing tuned on one):

* segments: the column's ``grid_shape`` segments with their noisy masses (a DP output), or,
  without a shape, the range cut at the powers of two (the DP bounds' buckets) weighted by
  width, the share a uniform column would give them;
* a segment counts when it holds at least ``ROUND_SHARE`` (5 %) of the mass: a value holding
  5 % of a column (issue 24's point-mass target) lies in a segment holding at least that;
* in a segment [a, b), the round values are the multiples of the finest step of the form 10^k
  or 5·10^k that leaves at most ``ROUND_PER_SEGMENT`` (2) of them in [a, b): the leading-digit
  amounts at that segment's scale (an octave [8,192, 16,384): 10,000 and 15,000; [16,384,
  32,768): 20,000 and 30,000; [256, 512): 500);
* at most ``MAX_ROUND_VALUES`` (12) a column, heavier segments first; the bounds, -1, 0 and 1
  are cells of their own already and are left out.

Each round cell is one more cell of the 1-way grid measurement (and splits a grid cell in
three), so the count is kept low: two a segment, not three (College at AIM's σ ≈ 98 on 622 rows,
about 6 a column with three: mean KS 0.195 → 0.207 over 9 seeds; benchmarks/README.md,
"roundcells").

Each becomes a fine cell of one value ([v, v+1): ``NumericColumn.bin_edges``) and a lone cell of
the measured grid tested at MST's 3σ like the other a-priori piles (``compress.lone_measured``):
the roundest as far as the grid's noise affords, and, on DP bounds, those whose candidate count
(the domain step's, synthpriv.privacy.candidates) shows a pile (``compress._round_piles``). Five
a segment (College's `Books` = 600, 16 % of its rows, and loans' 25,000 are not round values
with two) brought 600 back in 2 AIM runs of 12 but cost anes96's `popul` KS in 3 MST runs of 4
(0.06-0.11 → 0.11-0.21: its small round values 5, 10, ..., 60; benchmarks/README.md, "smallpm").
Public: a function of the bounds and the grid shape only (no data; no budget).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

ROUND_SHARE = 0.05  # a segment holding less cannot hold a 5 % pile
ROUND_PER_SEGMENT = 2  # round values per segment, at most
MAX_ROUND_VALUES = 12  # round values per column, at most
# A narrow integer range: at most this many values (the marginals' default max_bins). There
# roundness means nothing (cylinders 3-8, a 1-20 score) and every value inside is named
# (``narrow_values``): a few heavy values among empty neighbours are what a user sees first.
NARROW_VALUES = 32


def round_values(lower: float, upper: float, breaks: Sequence[float] | None = None,
                 mass: Sequence[float] | None = None) -> np.ndarray:
    """The round values strictly inside (lower, upper) of an integer column, sorted (module
    docstring: the rule). ``breaks``/``mass``: the column's grid shape, if it has one."""
    if not (math.isfinite(lower) and math.isfinite(upper)) or upper - lower < 2:
        return np.zeros(0)
    if breaks is None or mass is None:
        breaks = _power_breaks(lower, upper)
        points = [lower, *breaks, upper]
        mass = np.diff(points)
    points = np.array([lower, *breaks, upper], dtype=float)
    weights = np.maximum(np.asarray(mass, dtype=float), 0.0)
    total = float(weights.sum())
    if total <= 0:
        return np.zeros(0)
    chosen: list[float] = []
    for segment in np.argsort(-weights, kind="stable"):
        if weights[segment] < ROUND_SHARE * total:
            break
        a, b = points[segment], points[segment + 1]
        for value in _segment_rounds(a, b):
            if lower < value < upper and value not in (-1.0, 0.0, 1.0) and value not in chosen:
                chosen.append(value)
    return np.sort(np.array(chosen[:MAX_ROUND_VALUES], dtype=float))


def is_narrow(lower: int, upper: int) -> bool:
    """Whether the integer range [lower, upper] holds at most NARROW_VALUES values."""
    return upper - lower + 1 <= NARROW_VALUES


def narrow_values(lower: int, upper: int) -> np.ndarray:
    """Every integer strictly inside (lower, upper) of a narrow range (``is_narrow``) but -1, 0
    and 1 (cells of their own already), sorted; empty for a wider range. Without a grid on a
    narrow range, the measured grid pairs neighbours (ISLP Auto's `cylinders`, 392 rows, DP
    bounds [0, 15]: 8 cells of two values, so 4/5, 6/7 and 8/9 shared each cell's mass equally
    and the release had 5, 7 and 9 at 26 / 10 / 8 % where the table has 0.8 / 0 / 0 %). Named,
    each value gets an unthresholded heap count (synthpriv.privacy.candidates: no added ρ or δ)
    and a value whose count shows a pile is a cell of its own (``compress._round_cells``).
    Public: a function of the bounds only."""
    if not is_narrow(lower, upper):
        return np.zeros(0)
    return np.array([float(v) for v in range(lower + 1, upper) if v not in (-1, 0, 1)])


# A continuous column's lattice (every value with its ``precision``'s decimals inside its bounds)
# is named when it holds at most this many values: the fine grid's cell count (schema.FINE_CELLS),
# so each value has a fine cell to itself (an equal-width grid of 1,024 cells is then finer than
# the lattice; a shaped one caps each segment's cells at one a lattice step).
MAX_LATTICE_VALUES = 1024


def lattice_values(lower: float, upper: float, precision: int | None) -> np.ndarray:
    """Every value with ``precision`` decimals in [lower, upper] (k / 10^precision, the double
    a CSV cell with those digits parses to), sorted; empty without a precision or when there are
    more than ``MAX_LATTICE_VALUES``. A continuous column whose DP precision leaves a small lattice
    holds its rows on these values: prices (1.99, 2.09), rates, shares. Named before the heap
    histogram is noised, each gets an unthresholded count there (synthpriv.privacy.candidates: no
    added ρ or δ), which the marginals stage combines with that value's fine cell
    (``compress.with_round_counts``): a heap of 200 rows of 1,070 is 1.8σ of the fine 1-way
    noise alone (ISLP OJ, ε = 1), so it was never significant and was spread over its grid cell's
    100 values; benchmarks/README.md, "ojheaps". Public: bounds and precision (DP outputs)."""
    if precision is None:
        return np.zeros(0)
    scale = 10**precision
    first, last = math.ceil(lower * scale - 1e-9), math.floor(upper * scale + 1e-9)
    if last - first + 1 > MAX_LATTICE_VALUES or last < first:
        return np.zeros(0)
    return np.array([k / scale for k in range(first, last + 1)], dtype=float)


def most_round(values: np.ndarray, count: int) -> np.ndarray:
    """The ``count`` roundest of ``values`` (most trailing zeros, a 5 counting log10 5 of one:
    100,000 before 50,000 before 10,000; ties: the earlier given first), sorted."""
    if count <= 0 or not len(values):
        return np.zeros(0)
    scores = [_roundness(float(v)) for v in values]
    order = sorted(range(len(values)), key=lambda i: -scores[i])
    return np.sort(np.asarray(values, dtype=float)[order[:count]])


def _roundness(value: float) -> float:
    """log10 of the largest step 10^k or 5·10^k (k ≥ 0) dividing ``value`` (0 if none)."""
    best, step = 0.0, 1.0
    while step <= abs(value):
        if value % step == 0:
            best = math.log10(step)
        step *= 5.0 if _is_power_of_ten(step) else 2.0
    return best


def _segment_rounds(a: float, b: float) -> list[float]:
    """Multiples in [a, b) of the finest step 10^k or 5·10^k (k ≥ 0) leaving at most
    ``ROUND_PER_SEGMENT`` of them there."""
    if b <= a:
        return []
    step = 1.0
    while True:
        first = math.ceil(a / step)
        multiples = [m * step for m in range(first, first + ROUND_PER_SEGMENT + 1)
                     if m * step < b]
        if len(multiples) <= ROUND_PER_SEGMENT:
            return multiples
        step *= 5.0 if _is_power_of_ten(step) else 2.0


def _is_power_of_ten(step: float) -> bool:
    return math.isclose(10 ** round(math.log10(step)), step)


def _power_breaks(lower: float, upper: float) -> list[float]:
    """±2^j strictly inside (lower, upper), ascending (the DP bounds' bucket edges)."""
    magnitude = max(abs(lower), abs(upper))
    top = int(math.ceil(math.log2(magnitude))) if magnitude >= 1 else 0
    powers = [2.0 ** j for j in range(top + 1)]
    candidates = sorted({-p for p in powers} | set(powers))
    return [p for p in candidates if lower < p < upper]
