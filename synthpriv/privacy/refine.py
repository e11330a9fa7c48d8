"""DP bounds refined inside their end buckets: a noisy histogram over sub-buckets of them.

Why (issue 24, "values outside the real range"): the DP bounds are read from power-of-two
buckets (``privacy.bounds``), so a year column of 1990–2010 gets [1024, 2047], and the adaptive
domain's measured grid (n̂/2σ cells: 8 cells of 128 years on ISLP Weekly, 1,089 rows) cannot
say where inside a cell the rows are: the release drew years uniformly over [1920, 2047], 83 %
of its rows outside the real range (benchmarks/README.md, "outrange"). Nothing the run measured
told more.

Mechanism: once the bounds are read, each side's end bucket that the noise shows (noisy count
≥ EXTEND_NOISE·σ, not a bucket the guard added, not the bucket around zero) is split into
SUB_BUCKETS equal sub-buckets (public given the DP reading: powers of two, whole values for an
integer column), and the exact counts of all of them, one histogram, get discrete Gaussian noise
N_Z(0, σ_r²), σ_r = REFINE_NOISE_FACTOR·z·Δ₂ (``domain_budget``). Each row is in at most one
sub-bucket (the two end buckets are distinct buckets, or the same one split once), so the
histogram has L2 sensitivity Δ₂ (1 under add/remove, √2 under replace-one, × k per person):
one DiscreteGaussianEvent(F_r·z) per heap column, planned with the heap histogram
(``domain_budget.heap_column_weight``) and on the ledger whether or not a side is refined (the
sides chosen depend on DP outputs only: adaptive composition at the plan's ρ).

Read-out (``cut``, post-processing): from the outer edge inward, the outermost sub-buckets are
cut while every prefix of them has a noisy sum below EXTEND_NOISE·σ_r·√k (the tail rule's bar,
on the k sub-buckets cut so far): the cut stops at the first sign of rows, so a tail the
sub-buckets show is kept; a tail thinner than that is clipped onto the new bound, as a bucket's
is onto the bucket bounds (``dp_bounds`` spreads it over the bound's cells). Both sides of a
one-bucket column are cut from their own edge, never across each other.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping

import numpy as np

from synthpriv.privacy.bounds import EXTEND_NOISE, FALSE_TAIL, BoundsReading, Buckets

# Sub-buckets per end bucket (fewer when an integer bucket holds fewer whole values): a year
# column's 21 years fall in one or two of a 1,024-year octave's 32 (32 years each). Finer ones
# split the rows over more sub-buckets, each needing the same 2.5σ_r. Arithmetic, not tuned.
SUB_BUCKETS = 32


def end_buckets(noisy: np.ndarray, sigma: float, buckets: Buckets,
                reading: BoundsReading) -> tuple[int | None, int | None]:
    """The bucket refined on each side (lower, upper), or None: a column read within one
    bucket (first = last: a year's octave, a rate in [0.5, 1)) has it refined on both sides
    when its noisy count (``noisy``, the bounds' histogram at ``sigma``) shows rows
    (≥ EXTEND_NOISE·σ), no guard added it and it is not the bucket around zero (where zeros
    pile). A column over several buckets is not refined: its end buckets hold its tails, which
    a small table spreads too thinly for sub-buckets to see (a 1–15 count's 120 rows at 10–15,
    a capital gain's 275 rows over 65,536–99,999 were cut). Post-processing of DP outputs."""
    bucket = reading.first
    if (reading.last != bucket or any(reading.guarded) or bucket == buckets.zero
            or noisy[bucket] < EXTEND_NOISE * sigma):
        return None, None
    return bucket, bucket


def sub_edges(buckets: Buckets, bucket: int) -> tuple[float, float, int]:
    """(first value, sub-bucket width, sub-buckets) of ``bucket``: SUB_BUCKETS equal ones (an
    integer bucket of fewer whole values: one per value). Public."""
    low, high = buckets.value_range(bucket)
    if buckets.kind == "integer":
        values = int(high - low + 1)
        count = min(SUB_BUCKETS, values)
        return low, float(values // count), count
    return low, (high - low) / SUB_BUCKETS, SUB_BUCKETS


def sub_counts(values: Mapping[float, int], buckets: Buckets, refined: list[int]) -> np.ndarray:
    """Exact counts of the sub-buckets of the distinct buckets ``refined`` (in that order, each
    ``sub_edges``' sub-buckets), from ``values`` (each exact value's count: a row is in one
    value, so in at most one sub-bucket). Never released; only ``refined_counts`` noises it."""
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
    k before the first sub-bucket reaching ``located_bar`` (the rows located) when every
    prefix of those k has a noisy sum below EXTEND_NOISE·σ·√length (they look empty: a sharp
    edge, the outermost one alone below the tail rule's 2.5σ); else none. The prefix test sees a
    tail spread thinly over several sub-buckets; stopping at the located rows keeps the noise
    of the empty ones from hiding them (Weekly's `Year`: 30 empty sub-buckets summed to −900,
    and a prefix test run on cut through its 1,089 rows). A tail the test does not see (under
    2.5σ_r·√k over k sub-buckets) is clipped onto the new bound. A 2.5σ_r bar on each single
    sub-bucket as well stopped 1 cut in 6 on pure noise (30 tests). Post-processing."""
    noisy = np.asarray(noisy, dtype=float)
    strong = np.flatnonzero(noisy >= located_bar(noisy.size) * sigma)
    if strong.size == 0:  # the sub-buckets do not show where the rows are: cut nothing
        return 0
    before = noisy[:strong[0]]
    prefix = np.cumsum(before) >= EXTEND_NOISE * sigma * np.sqrt(np.arange(1, before.size + 1))
    if prefix.any():
        return 0  # signs of rows before the first strong sub-bucket: no sharp edge, no cut
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


def refined_bounds(noisy: np.ndarray, sigma: float, buckets: Buckets,
                   ends: tuple[int | None, int | None],
                   bounds: tuple[float, float]) -> tuple[float, float]:
    """``bounds`` with each refined side (``ends``, from ``end_buckets``) moved in past the
    sub-buckets ``cut`` drops (``noisy``: the noised ``sub_counts`` of the distinct buckets of
    ``ends`` in order, σ = ``sigma``). A one-bucket column is cut from both edges, never across
    (at least one sub-bucket stays). Post-processing of DP outputs: no budget, no event."""
    lower, upper = bounds
    distinct = list(dict.fromkeys(b for b in ends if b is not None))
    offsets, at = {}, 0
    for bucket in distinct:
        offsets[bucket] = at
        at += sub_edges(buckets, bucket)[2]
    one = buckets.kind == "integer"
    low_cut = high_cut = 0
    if ends[0] is not None:
        first, width, count = sub_edges(buckets, ends[0])
        part = noisy[offsets[ends[0]]:offsets[ends[0]] + count]
        low_cut = min(cut(part, sigma), count - 1)
        lower = max(lower, first + low_cut * width)
    if ends[1] is not None:
        first, width, count = sub_edges(buckets, ends[1])
        part = noisy[offsets[ends[1]]:offsets[ends[1]] + count]
        room = count - 1 - (low_cut if ends[0] == ends[1] else 0)
        high_cut = min(cut(part[::-1], sigma), room)
        upper = min(upper, first + (count - high_cut) * width - (1.0 if one else 0.0))
    return lower, (upper if upper > lower else lower + 1.0)
