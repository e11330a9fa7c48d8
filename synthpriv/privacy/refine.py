"""DP bounds refined inside one octave: a noisy histogram over sub-buckets of the bucket.

Why (issue 24, "values outside the real range"): the DP bounds are read from power-of-two
buckets (``privacy.bounds``), so a year column of 1990–2010 gets [1024, 2047], and the adaptive
domain's measured grid (n̂/2σ cells: 8 cells of 128 years on ISLP Weekly, 1,089 rows) cannot
say where inside a cell the rows are: the release drew years uniformly over [1920, 2047], 83 %
of its rows outside the real range (benchmarks/README.md, "outrange"). Nothing the run measured
told more.

Mechanism: when an integer column's bounds were read from one bucket that the noise shows
(``refined_bucket``), that bucket is split into SUB_BUCKETS equal sub-buckets (public given the
DP reading: whole values, powers of two), and their exact counts, one histogram, get discrete
Gaussian noise N_Z(0, σ_r²), σ_r = REFINE_NOISE_FACTOR·z·Δ₂ (``domain_budget``). Each row is in
at most one sub-bucket, so the histogram has L2 sensitivity Δ₂ (1 under add/remove, √2 under
replace-one, × k per person): one DiscreteGaussianEvent(F_r·z) per heap column, planned with
the heap histogram (``domain_budget.heap_column_weight``) and on the ledger whether or not the
column is refined (which column is refined depends on DP outputs only: adaptive composition at
the plan's ρ).

Read-out (post-processing): from each outer edge, the sub-buckets before the first one that
locates the rows are cut when the edge is sharp (``cut``), and only when the sub-buckets kept
account for the bucket's noisy count (``refined_bounds``). A tail inside the octave that none of
these tests sees is clipped onto the new bound, as a bucket's is onto the bucket bounds
(``dp_bounds`` spreads it over the bound's cells).

Dates (``date_runs`` … ``refined_date_bounds``): a date's buckets are calendar years, often with
a guard year beyond the data (ISLP NYSE ran to 1987-12-31, its data to 1986-12-31). An auto
column decided date gets one histogram over the sub-buckets of its end years (the guard year
with its neighbour), months, quarters or whole years (``date_parts``), at σ_d = z_d·Δ₂
(``domain_budget.date_refine_multiplier``: the date's heap-column weight, its heap histogram
not run), each row in at most one sub-bucket (sensitivity Δ₂); the read-out is ``cut`` and the
residual test above (benchmarks/README.md, "daterange").
"""

from __future__ import annotations

import functools
import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from synthpriv.privacy.bounds import (
    EXTEND_NOISE,
    FALSE_TAIL,
    BoundsReading,
    Buckets,
    YearBuckets,
)

# The first located sub-bucket must hold SHARP times the located bar for a cut: a year column's
# block of rows jumps from nothing to all of them (Weekly: ≈ 9σ_r), where a column spread over
# its octave, or a tapering tail, first passes the bar by a little (a uniform octave of 160 rows a
# sub-bucket, 3.3σ_r, lost its last sub-bucket when the bar alone decided). Arithmetic.
SHARP = 2.0
# Sub-buckets of the bucket (fewer when it holds fewer whole values): a year column's 21 years
# fall in one or two of a 1,024-year octave's 32 (32 years each). Finer ones split the rows
# over more sub-buckets, each needing the same bar. Arithmetic, not tuned.
SUB_BUCKETS = 32


# A date's end years are split into equal parts of whole days: months, quarters or the whole
# year (DATE_PARTS), the finest in which the run's fullest year, its rows spread evenly (its
# noisy count from the bounds' histogram: a DP output), would show a sharp edge (SHARP times
# the located bar at σ_d in each part). A date column spreads its rows over its years, so a
# fixed split locates nothing on a small table: ISLP NYSE (253 trading days a year) holds 21
# rows a month against σ_d ≈ 30 — but a whole year of 253 rows next to an empty guard year
# is a sharp edge at σ_d; openintro's police table (≈ 2,200 rows a year, σ_d ≈ 46) shows its
# quarters, not its months. Chosen from DP outputs only (adaptive composition: the histogram's
# partition is fixed before its noise is drawn; sensitivity Δ₂ whatever it is). Arithmetic on
# the rule's own bars, not tuned on a release.
DATE_PARTS = (12, 4, 1)
DAY_SECONDS = 86400.0


@dataclass(frozen=True)
class DateRun:
    """Year buckets refined together (ascending), the sides of the bounds they may move
    (lower, upper) and how many parts each year is split into. Public given the DP reading."""

    years: tuple[int, ...]
    sides: tuple[bool, bool]
    parts: int = 1


def date_runs(reading: BoundsReading, noisy: np.ndarray, sigma: float) -> list[DateRun]:
    """The year buckets a date column's refinement splits: the first year (and the next when
    the guard added the first: an empty guard year shows no rows, so the cut needs the year
    the rows start in) for the lower bound, the last one likewise for the upper; one run with
    both sides where they meet. Each run's parts: ``date_parts`` of its fullest year's noisy
    count (``noisy``: the bounds' histogram; ``sigma``: the refinement's σ_d). Post-processing
    of DP outputs."""
    low_end = min(reading.first + int(reading.guarded[0]), reading.last)
    high_start = max(reading.last - int(reading.guarded[1]), reading.first)
    if low_end + 1 >= high_start:
        spans = [(range(reading.first, reading.last + 1), (True, True))]
    else:
        spans = [(range(reading.first, low_end + 1), (True, False)),
                 (range(high_start, reading.last + 1), (False, True))]
    return [DateRun(tuple(years), sides,
                    date_parts(float(np.max(noisy[list(years)])), sigma, len(years)))
            for years, sides in spans]


def date_parts(count: float, sigma: float, years: int) -> int:
    """The finest of DATE_PARTS in which ``count`` rows spread evenly over a year give each
    part SHARP times the located bar of the run's ``years``·parts sub-buckets at ``sigma``;
    the coarsest (a whole year) when none does. Arithmetic on DP outputs."""
    for parts in DATE_PARTS:
        if count / parts >= SHARP * located_bar(parts * years) * sigma:
            return parts
    return DATE_PARTS[-1]


def date_sub_starts(buckets: YearBuckets, bucket: int, parts: int) -> np.ndarray:
    """The first day (second) of each of a year's ``parts`` sub-buckets, then the next year's
    first: whole days, so a datetime's sub-buckets are counted from its days. Public."""
    low, high = buckets.value_range(bucket)
    unit = DAY_SECONDS if buckets.kind == "datetime" else 1.0
    days = (high - low + 1) / unit
    return low + unit * np.ceil(np.arange(parts + 1) * days / parts)


def date_sub_counts(values: Mapping[float, int], buckets: YearBuckets,
                    runs: list[DateRun]) -> np.ndarray:
    """Exact counts of the sub-buckets of the runs' years (in order, each year's
    ``date_sub_starts``), from ``values`` (each exact day's or second's count). The runs'
    years are distinct, so a row is in one value, in at most one sub-bucket: L2 sensitivity Δ₂
    for the histogram. Never released: the domain step noises it."""
    exact = np.fromiter(values.keys(), dtype=float, count=len(values))
    rows = np.fromiter(values.values(), dtype=np.int64, count=len(values))
    parts = []
    for run in runs:
        for year in run.years:
            starts = date_sub_starts(buckets, year, run.parts)
            inside = (exact >= starts[0]) & (exact < starts[-1])
            at = np.searchsorted(starts, exact[inside], side="right") - 1
            parts.append(np.bincount(at, weights=rows[inside],
                                     minlength=run.parts).astype(np.int64))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def refined_date_bounds(noisy: np.ndarray, sigma: float, buckets: YearBuckets, run: DateRun,
                        held: tuple[float, float], bounds: tuple[float, float],
                        ) -> tuple[float, float]:
    """``bounds`` moved in on the run's sides past the sub-buckets ``cut`` drops from its outer
    edges (``noisy``: the run's noised ``date_sub_counts``, σ = ``sigma``), never across each
    other, when the kept sub-buckets account for the run's rows (``held``: its years' summed
    noisy bucket counts and that sum's σ), as ``refined_bounds``. Whole days (seconds): a
    bound is a sub-bucket's first value or the one before the next one's. Post-processing of
    DP outputs: no budget, no event."""
    noisy = np.asarray(noisy, dtype=float)
    starts = np.concatenate([date_sub_starts(buckets, y, run.parts)[:-1] for y in run.years]
                            + [date_sub_starts(buckets, run.years[-1], run.parts)[-1:]])
    count = noisy.size
    low_cut = min(cut(noisy, sigma), count - 1) if run.sides[0] else 0
    high_cut = min(cut(noisy[::-1], sigma), count - 1 - low_cut) if run.sides[1] else 0
    kept = noisy[low_cut:count - high_cut]
    residual = held[0] - float(kept.sum())
    if residual >= EXTEND_NOISE * math.hypot(held[1], sigma * math.sqrt(kept.size)):
        return bounds
    lower = max(bounds[0], float(starts[low_cut]))
    upper = min(bounds[1], float(starts[count - high_cut]) - 1.0)
    return lower, (upper if upper > lower else lower + 1.0)


def refined_bucket(noisy: np.ndarray, sigma: float, buckets: Buckets,
                   reading: BoundsReading) -> int | None:
    """The bucket refined, or None: an integer column read within one bucket (first = last: a
    year's octave) when its noisy count (``noisy``, the bounds' histogram at ``sigma``) shows
    rows (≥ EXTEND_NOISE·σ), no guard added a bucket and it is not the bucket around zero.
    Not a column over several buckets: its end buckets hold its tails, which sub-buckets
    cannot see on a small table (a 1–15 count's 120 rows at 10–15, a capital gain's 275 rows
    over 65,536–99,999 were cut). Not a continuous column: a one-octave amount tapers (Wage's
    `logwage` in [4, 8) lost its top 10 % above 5.125 and its KS went from 0.05 to 0.175),
    where a year column's edges are sharp. Post-processing of DP outputs."""
    bucket = reading.first
    if (buckets.kind != "integer" or reading.last != bucket or any(reading.guarded)
            or bucket == buckets.zero or noisy[bucket] < EXTEND_NOISE * sigma):
        return None
    return bucket


def sub_edges(buckets: Buckets, bucket: int) -> tuple[float, float, int]:
    """(first value, sub-bucket width, sub-buckets) of an integer ``bucket`` (the only kind
    ``refined_bucket`` picks): SUB_BUCKETS equal ones, or one per value when it holds fewer
    whole values. Public. (A continuous split was dead code, removed: the end-bucket trial of
    branch intrange, which used one, cut nothing on the development tables at σ_r:
    benchmarks/README.md "intrange".)"""
    low, high = buckets.value_range(bucket)
    values = int(high - low + 1)
    count = min(SUB_BUCKETS, values)
    return low, float(values // count), count


def sub_counts(values: Mapping[float, int], buckets: Buckets, refined: list[int]) -> np.ndarray:
    """Exact counts of the sub-buckets of the distinct buckets ``refined`` (in that order, each
    ``sub_edges``' sub-buckets), from ``values`` (each exact value's count: a row is in one
    value, so in at most one sub-bucket). Never released: the domain step noises it."""
    parts = []
    exact = np.fromiter(values.keys(), dtype=float, count=len(values))
    rows = np.fromiter(values.values(), dtype=np.int64, count=len(values))
    held = buckets.index(exact) if exact.size else np.zeros(0, dtype=np.int64)
    for bucket in refined:
        first, width, count = sub_edges(buckets, bucket)
        inside = held == bucket
        at = np.clip(np.floor((exact[inside] - first) / width), 0, count - 1).astype(np.int64)
        parts.append(np.bincount(at, weights=rows[inside], minlength=count).astype(np.int64))
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int64)


def cut(noisy: np.ndarray, sigma: float) -> int:
    """How many sub-buckets to cut from the start of ``noisy`` (ordered outer edge first): the
    k before the first sub-bucket reaching ``located_bar``·σ (the rows located) when that one
    holds SHARP times the bar and every prefix of those k has a noisy sum below
    ``located_bar``·σ·√length (they look empty: a sharp edge); else none. Stopping at the
    located rows keeps the noise of the empty sub-buckets from hiding them (Weekly's `Year`:
    30 empty sub-buckets summed to −900, and a prefix test run on cut through its 1,089 rows);
    the prefix test sees a tail spread over several sub-buckets. The bar is the union
    bound's over a bucket's prefixes: at the tail rule's 2.5σ√k, pure noise stopped 2 cuts in
    10 somewhere among 30 empty sub-buckets. A tail the test does not see is clipped onto the
    new bound unless the bucket's count shows it (``refined_bounds``). Post-processing."""
    noisy = np.asarray(noisy, dtype=float)
    bar = located_bar(noisy.size) * sigma
    strong = np.flatnonzero(noisy >= bar)
    if strong.size == 0:  # the sub-buckets do not show where the rows are: cut nothing
        return 0
    before = noisy[:strong[0]]
    prefix = np.cumsum(before) >= bar * np.sqrt(np.arange(1, before.size + 1))
    if prefix.any() or noisy[strong[0]] < SHARP * bar:
        return 0  # rows before the located ones, or a gradual rise: no sharp edge, no cut
    return int(strong[0])


@functools.lru_cache(maxsize=64)  # public figures only
def located_bar(count: int) -> float:
    """How many σ_r one of a bucket's ``count`` sub-buckets must reach for the cut to run:
    pure noise reaches it in any of them with probability ≤ FALSE_TAIL (union bound; 3.8 for
    32). Below it the sub-buckets do not locate the bucket's rows (a small table's 400 rows
    over 56 ages: 7 a sub-bucket at σ_r ≈ 70), and a cut would stop wherever the noise first
    passed 2.5σ_r, clipping real rows (Carseats' `Age` [25, 80] cut to [40, 65])."""
    from scipy.stats import norm

    return float(norm.isf(FALSE_TAIL / max(count, 1)))


def refined_bounds(noisy: np.ndarray, sigma: float, buckets: Buckets, bucket: int,
                   held: tuple[float, float], bounds: tuple[float, float]) -> tuple[float, float]:
    """``bounds`` moved in past the sub-buckets ``cut`` drops from each edge of ``bucket``
    (``noisy``: its noised ``sub_counts``, σ = ``sigma``), never across each other (one
    sub-bucket at least stays), when the sub-buckets kept account for the bucket's rows: its
    noisy count and σ from the bounds' histogram (``held``) less their sum is below
    EXTEND_NOISE times that difference's σ (√(σ_b² + k·σ²), k kept; independent noises), the
    ``EndTest`` arithmetic: rows the cut would clip are rows of the bucket on no kept
    sub-bucket. Else ``bounds``. Post-processing of DP outputs: no budget, no event."""
    first, width, count = sub_edges(buckets, bucket)
    noisy = np.asarray(noisy, dtype=float)
    low_cut = min(cut(noisy, sigma), count - 1)
    high_cut = min(cut(noisy[::-1], sigma), count - 1 - low_cut)
    kept = noisy[low_cut:count - high_cut]
    residual = held[0] - float(kept.sum())
    if residual >= EXTEND_NOISE * math.hypot(held[1], sigma * math.sqrt(kept.size)):
        return bounds
    one = 1.0 if buckets.kind == "integer" else 0.0
    lower = max(bounds[0], first + low_cut * width)
    upper = min(bounds[1], first + (count - high_cut) * width - one)
    return lower, (upper if upper > lower else lower + 1.0)
