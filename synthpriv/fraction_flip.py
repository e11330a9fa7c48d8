"""A zero-heavy column of fractions decided ``integer`` by the kinds pass, read back as continuous
(branch zerofrac, issue 24 "values that look like the input").

ISLP OJ's ``DiscCH``, ``PctDiscMM``, ``PctDiscCH`` and ``DiscMM`` hold 70–78 % zeros and fractions
0.03–0.8 spread over one or two decimals classes; at ε = 1 (kind σ 88, 1,070 rows) no decimals
class clears the kinds test's z·σ (381 cells), so they are decided integer, their values rounded,
their DP bounds read "zeros only" and every fraction released as 0. The kinds pass's histogram is
not the only DP output that sees them: the DP bounds of a column decided integer count its
rounded values, and a fraction of magnitude below 1.5 is rounded into the one-value buckets {−1},
{0}, {1}, which thus hold more cells than the whole class. ``rounded_fractions`` tests that;
``fraction_domain`` gives the column's domain when it passes. Post-processing of two DP outputs
(the kinds pass's class histogram and the bounds' bucket histogram): no budget, no event, no
draw (a release with the rule off and on differs only in the columns it flips).
"""

from __future__ import annotations

import math

import numpy as np

from synthpriv.kinds import CLASSES, DECIMAL_CAP, FRACTION_CLASSES, fraction_noise
from synthpriv.privacy.bounds import BUCKET_PILE, BoundsReading, Buckets, YearBuckets


def rounded_fractions(noisy: np.ndarray, sigma: float, rounded: float, rounded_sigma: float,
                      columns: int = 1) -> int | None:
    """The index in FRACTION_CLASSES of the decimals class a column decided integer passes the
    test below on, None when it passes on none. ``noisy``: its class histogram (CLASSES order, σ
    ``sigma`` each); ``rounded``: the noisy count of its DP bounds' buckets {−1}, {0} and {1}
    (the integer grid, values rounded as the column is read), ``rounded_sigma`` that count's σ
    (the bounds' σ·√3); ``columns``: the run's auto columns (public).

    Every cell those buckets count is a number; with no fraction cell each one is also in the
    whole class, so E[rounded − whole] ≤ 0, while a fraction of magnitude below 1.5 is rounded
    into them and counted there, not in whole: OJ's ``DiscCH`` (838 whole zeros, 232 fractions
    0.1–0.5) shows rounded − whole ≈ 232 at σ ≈ 117 besides its decimals classes (113 and 119
    cells at σ 88, under the kinds test's 381). The test adds the two independent estimates of
    one class's cells, rounded − whole + that class's count, and passes when the sum clears
    ``fraction_noise(columns)`` of its σ, √(rounded_sigma² + 2σ²): a column with no fraction
    passes on some class of some auto column with probability ≤ KIND_ERROR a run (union bound
    over columns × classes, as the decimals test: the two together ≤ 2·KIND_ERROR), one whose
    whole values lie outside {−1, 0, 1} (Adult's ``capital-gain``) less often still. Rates at
    OJ's σ from its exact counts (20,000 simulated draws; benchmarks/README.md "zerofrac"):
    PctDiscMM 0.53, DiscMM 0.34, PctDiscCH 0.13, DiscCH 0.05, against 0.24 / 0.06 / 0.04 / 0.00
    for the decimals test alone. Arithmetic, not tuned on a table."""
    counts = dict(zip(CLASSES, np.asarray(noisy, dtype=float), strict=True))
    excess = float(rounded) - counts["whole"]
    scores = [excess + counts[label] for label in FRACTION_CLASSES]
    best = int(np.argmax(scores))
    bar = fraction_noise(columns) * math.sqrt(rounded_sigma**2 + 2.0 * sigma**2)
    return best if scores[best] > bar else None


def fraction_domain(name: str, domain: dict, reading: BoundsReading | None, noisy: np.ndarray,
                    sigma: float, grid: Buckets | YearBuckets, classes: np.ndarray,
                    kind_sigma: float, columns: int = 1) -> dict | None:
    """The domain of auto column ``name``, decided integer with DP ``domain`` (read as
    ``reading`` from the bucket counts ``noisy`` at ``sigma`` on ``grid``), when its class
    histogram ``classes`` (σ ``kind_sigma``) and those buckets pass ``rounded_fractions``: the
    column is continuous at the passing class's decimals (DECIMAL_CAP and more: full precision),
    within the whole bounds widened by the half unit its fractions were rounded across (0 stays
    the lower bound of a non-negative column; a zeros-only reading keeps its upper bound 0.5,
    the fractions rounded to 0), with 0 a point mass when it was one (a heap or the {0}
    bucket's pile) and the whole class shows cells (≥ BUCKET_PILE·σ: the zeros a discount column
    holds). Nothing else read on rounded values carries over: heap, round and bucket counts
    and the octave shape count the fractions at the values they were rounded to (OJ's
    ``DiscMM`` 0.54 and 0.8 as a pile at 1). None when the test fails or the column is not
    integer on the integer grid. Post-processing of DP outputs only (module docstring)."""
    if (reading is None or domain.get("kind", "integer") != "integer"
            or not isinstance(grid, Buckets) or grid.kind != "integer"):
        return None
    ones = [grid.zero - 1, grid.zero, grid.zero + 1]
    rounded = float(np.sum(np.asarray(noisy, dtype=float)[ones]))
    found = rounded_fractions(classes, kind_sigma, rounded, sigma * math.sqrt(3.0), columns)
    if found is None:
        return None
    lower, upper = float(domain["lower"]), float(domain["upper"])
    whole = float(classes[CLASSES.index("whole")])
    zero = 0.0 in (domain.get("point_masses") or []) and whole >= BUCKET_PILE * kind_sigma
    return {"name": name, "kind": "continuous", "missing": True, "coerce": True,
            "precision": found + 1 if found < DECIMAL_CAP else None,
            "lower": lower - 0.5 if lower != 0.0 else lower,
            "upper": upper if reading.zeros_only else upper + 0.5,
            "spread_clipped": [], "point_masses": [0.0] if zero else None}
