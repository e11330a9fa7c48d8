"""DP bounds of a numeric column from a noisy histogram over public, data-independent buckets.

Date and datetime columns (days / seconds since 1970) use ``YearBuckets`` instead: one bucket per
calendar year of TIME_YEARS and one outer bucket each side (same mechanism, same read-out; no
bucket around zero). The rest of this docstring is about numeric columns.

Buckets (after OpenDP's private bounds): the sign of a value and the power of two of its
magnitude. A value x with 2^j ≤ |x| < 2^(j+1) falls in the bucket (sign x, j), for j from
MIN_EXPONENT (0 for integer columns, −16 for continuous ones) to MAX_EXPONENT − 1; magnitudes
below 2^MIN_EXPONENT share one bucket around zero, and magnitudes of 2^MAX_EXPONENT or more fall
in the outermost buckets. Nothing about the buckets depends on the data, so no public outer range
is assumed: every double has its bucket.

Mechanism: the exact bucket counts plus discrete Gaussian noise N_Z(0, σ²) per bucket. Each row
falls in exactly one bucket (a missing value in none), so the histogram has L2 sensitivity 1
under add/remove (√2 under replace-one): a DiscreteGaussianEvent(σ/Δ₂), priced like any 1-way
marginal. Reading the bounds from the noisy counts (``bounds_from_noisy``) is post-processing.

The read-out (``read_bounds``), a DP quantile on the noisy histogram's CDF:

1. *support*: the buckets whose noisy count passes the occupancy threshold (≈ 4.6σ for a job
   with one DP-bounded column, 5.1σ with 11, 5.5σ with 86) or, when none does, the runs of 2
   (else 4, else 8) adjacent buckets whose noisy sum passes theirs (the same multiple of
   σ·√width). FALSE_OCCUPANCY is a chance per job: pure noise passes any threshold of any run of
   any of the job's m DP-bounded columns with probability ≤ FALSE_OCCUPANCY (union bound over all
   of them, each column FALSE_OCCUPANCY / m; m is public, the schema's columns that may get DP
   bounds). Per column, a job of 86 such columns (ISLP Caravan) got a false far bucket, an upper
   bound of 2^60, in about 8.6 % of its runs. Each kept run is cut to its outermost buckets of
   noisy count ≥ EXTEND_NOISE·σ (2.5σ); then, outward from the outermost of them, each next bucket ≥
   2.5σ. A
   tail is contiguous with the bulk: testing the one bucket next to it needs no union bound
   over the ~130 others, so a thin tail of 2.5σ rather than 4.6σ is kept, and an empty neighbour
   passes with probability Φ(−2.5) ≈ 0.6 % (at worst doubling the range: a year column's
   1,024 integers become 3,072 in about one run in 80). The runs find a column
   spread thinly over several octaves, which no single bucket shows on a small table. The 2.5σ
   rule never extends from the zero bucket down to negative values: non-negative columns
   (counts, amounts with many zeros) are common, and a column 97.5 % zero would otherwise get
   −1 as its lower bound one run in 160; a negative run above the threshold is kept as ever;
1b. *seed*: when no run passes, a column whose values spread thinly (a count of 600 rows over
   8 octaves, ~75 rows each: College's Apps, F.Undergrad) would be released all missing,
   though the run knows under DP that it holds values: an auto column's kind histogram gives a
   noisy count m̂ of its number cells (``Present``, σ_m = its σ·√2). The thresholds guard
   against noise showing mass where there is none; when m̂ ≥ k·σ_m the mass is somewhere, and
   the question is only where. The seed keeps the window of 1 to SEED_WIDTH (16) adjacent
   buckets with the largest score, noisy sum / σ√width, when that score is ≥ z (4.5 for an
   integer column's 129 buckets): pure noise reaches z in any of the ~1,900 windows with
   probability ≤ FALSE_SEED = Φ(−2.5) ≈ 0.6 % (union bound; 0.24 % in 20,000 simulated
   draws), so wherever the data are, the seed lands on buckets holding none at most that
   often. k (``presence_threshold``) makes a column with no value pass with probability ≤
   column_false_occupancy / FALSE_SEED, so that such a column gets bounds from the seed with
   probability ≤ column_false_occupancy (the two noises are independent): the core's rate
   again (k = 2.4 at 18 DP-bounded columns). A real window of m rows over w octaves scores
   m/σ√w: 600 rows over 8 octaves at College's σ = 43.8 score 4.8. The tail rule, quantile
   and guard then run from the seed as from a core. Declared numeric columns (no kind
   histogram) get no seed. Post-processing of the same two DP outputs: no budget, no event;
1c. *beyond zero*: when the core is the bucket around zero alone (a pile of zeros) and the
   rest spreads too thinly for any run, the reading was "zeros only" and every non-zero value
   was released missing (anes96's ``popul``: 24 % zeros, the other 76 % over 13 octaves, 755
   rows). The DP count of cells less the zero bucket's noisy count is a DP count of the
   non-zero values (noise √(σ_m² + σ²)); gated and seeded as in step 1b over the windows that
   do not hold the zero bucket (``beyond_zero``), the window found joins the core. Same rates as
   step 1b, same two DP outputs: no budget, no event;
1d. *mirror*: a support on one side of zero only (after steps 1-1c and the tail rule) is
   tested for the other sign: the best of 4 windows (the mirror of its span, the same
   magnitudes of the other sign, w buckets; or it one bucket wider at either end or both), when
   its noisy sum is ≥ ``mirror_threshold``·σ√w, has its buckets ≥ 2.5σ (else its largest) join
   the support, and the tail rule runs outward from them. A column of returns spread over ~6
   octaves a side lost one side in a third of the draws (ISLP Weekly, 1,089 rows: bounds
   stopping at 0 and half the column clipped onto it). Pure noise passes any of the 4 windows
   with probability ≤ MIRROR_SHARE · column_false_occupancy (union bound), so a non-negative
   column gets a negative bound from it 10× less often than a false far bucket.
   Post-processing of the same histogram: no budget, no event;
1e. *tail windows* (``spread_tails``): once the tail rule stops on a side, the windows of the
   next 2, 4 and 8 buckets beyond it (TAIL_WINDOWS, never across zero) are tested on their
   noisy sum; the narrowest reaching ``tail_threshold``·σ√w (2.87) joins the support, the tail
   rule runs on from it, and the windows are tested again beyond. A heavy tail spread over
   several octaves, each under 2.5σ, was cut by the tail rule and clipped by the quantile
   (College's F.Undergrad and Enroll lost ~25 % of their rows above the bound). Pure noise
   beyond a side passes the first windows with probability ≤ FALSE_TAIL = Φ(−2.5) ≈ 0.6 %
   (union bound over the 3; later windows are tested only after a pass): the tail rule's own
   per-side rate. Post-processing of the same histogram: no budget, no event;
2. *quantile*: over the noisy counts of the support, the first and last buckets where the
   cumulative mass passes CLIP_SHARE (0.5 %) from each end: at most that share of the noisy
   kept mass is clipped on each side by choice;
3. *guard*: a side whose edge was set by the noise rather than by the quantile (nothing was
   trimmed there) is widened when the column spreads over more than one octave (``spread``: the thresholds
   show two buckets or more, or the support spans three, or two of its buckets hold ≥
   SPREAD_NOISE·σ = 3σ: one false 2.5σ pass next to a year column's one bucket must not count)
   and the tail the noise
   may hide there (up to EXTEND_NOISE·σ rows a bucket) exceeds CLIP_SHARE of the noisy total —
   on small tables, not on large ones: by one bucket away from zero (an upper bound doubles),
   and towards zero down to 0 itself, never across it (a positive column's lower bound becomes
   0, which widens a range spanning two octaves or more by a third at most). Such a tail would
   be clipped onto the bound, and the fine grid keeps a bound as a cell of its own, which
   the adaptive domain then reads as a point mass that is not in the data (issue 24: 25 % of an
   amount column at 4,095). A column within one octave (years 1024–2047, a rate in [0.5, 1))
   keeps its range, so its fine grid keeps one cell per value. Nor is an integer column whose
   kept range holds at most CODE_VALUES whole values (codes, flags, Likert scales) widened away
   from zero: its hidden tail is clipped onto a value it holds.

4. *heaps' range* (``heap_range``, run by the domain step once heap discovery has kept a
   column's heaps): when the kept heaps' noisy counts account for the noisy mass of the kept
   buckets within 2.5σ of their difference, and that σ is small enough to see a tail of a
   quarter of the rows (SEEN_TAIL), the bounds become [smallest heap, largest heap], widened to
   a bucket of the support beyond the heaps (a year column of 7 values: [2003, 2009], not the
   octave [1024, 2047], whose other 1,016 values drew rows from noise); each side only where
   the buckets whose rows it would clip show none (``EndTest``: no tail piled onto an end heap).
   Post-processing of the same histogram and the heaps' noisy counts.

Why a histogram and not an exponential-mechanism quantile (Smith 2011; JointExp, Gillenwater et
al. 2021) or an unbounded search (Durfee 2023): those need a public range or a pure-DP
AboveThreshold event, and their rank error is (2/ε)·ln(candidates) per quantile at the ε a
column gets here (ε ≈ √(8ρ) ≈ 0.06 for ρ ≈ 4·10⁻⁴: ≈ 350 rows), against σ ≈ 35 per bucket for
the histogram at the same ρ; the histogram is also one Gaussian event the ledger already prices
exactly. Octaves rather than finer buckets: a finer public grid splits a thin tail over more
buckets, each needing the same 4.6σ (quarter-octaves would need ≈ 2× the rows per octave to see
a tail), and the fine grid and adaptive domain resolve the values inside the bounds anyway.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

MAX_EXPONENT = 64
MIN_EXPONENT = {"integer": 0, "continuous": -16}
# Chance per job that noise alone makes some empty bucket of any of its DP-bounded columns look
# occupied (split equally over them: ``column_false_occupancy``). A false bucket far out is a
# bound of 2^60 on a column of values 1-10; a rate, not tuned on any table.
FALSE_OCCUPANCY = 1e-3
# A bucket next to the support is kept when its noisy count is ≥ 2.5σ: an empty one passes with
# probability Φ(−2.5) ≈ 0.6 % per side (2σ, 2.3 %, doubled a year column's range in 4 % of draws
# at Wage's σ: chosen from that arithmetic, not from any table's figures).
EXTEND_NOISE = 2.5
# Share of the noisy kept mass each bound may clip by choice, on each side: below 1/(2·32), so
# a clipped tail holds less than half of one of the adaptive domain's 32 bins and cannot become
# a bin, a "point mass", of its own (synthpriv/marginals/compress.py; arithmetic, not tuned).
CLIP_SHARE = 0.005
# The seed (read-out step 1b, ``seed``): when no run passes its occupancy threshold but the
# column's DP count of numeric cells shows data, the window of up to SEED_WIDTH adjacent buckets
# whose noisy sum stands highest above its noise (sum / σ√width) is kept if that score is ≥
# ``seed_threshold``: pure noise scores that high in any of the windows with probability ≤
# FALSE_SEED (union bound over them), so the seed lands on buckets holding no data at most that
# often wherever the data are. FALSE_SEED is the rate of one false tail bucket, Φ(−EXTEND_NOISE)
# ≈ 0.6 %; SEED_WIDTH 16 octaves (a factor 65,536) holds a count or an amount of a few hundred
# rows that no run of 8 shows. Arithmetic, not tuned on any table.
FALSE_SEED = float(0.5 * math.erfc(EXTEND_NOISE / math.sqrt(2)))
SEED_WIDTH = 16
# Runs of adjacent buckets tested for occupancy: a column spread over several octaves may hold
# too few rows in any one of them (700 rows of an amount over 7 octaves: ≈ 160 at most, at the
# threshold for σ = 35) but plenty in a run of them; the union bound over all runs raises the
# one-bucket threshold from 4.3σ to 4.6σ (integers). Up to 8 octaves: a factor 256.
WINDOWS = (1, 2, 4, 8)
# The guard (read-out step 3) does not widen away from zero an integer column whose kept range
# holds at most this many whole values (0/1 flags, Likert scales, small counts: buckets up to
# [8, 15]). There a hidden tail clipped onto the bound lands on a value the column holds (1, 7),
# where the guard would add as many values again that it may never hold, each drawing rows from
# noise: anes96's 0/1 `vote` got [0, 3] and released 2 and 3 in 4.5 % of rows, `TVnews` 0–7 got
# [0, 15] and released 8–15 in 9.9 % (755 rows, ε = 1, statsmodels, a development-suite table;
# benchmarks/README.md "guard"). Towards zero the guard stays: a 0–7 count whose 0s and 1s hide
# under the noise would otherwise be clipped onto 2 (27 % of its rows), against a few fake 0s in
# a 1–7 scale. Arithmetic, not tuned: [8, 15] is the last bucket a person reads as codes.
CODE_VALUES = 16
# The mirror test (read-out step 1d, ``mirrored``) passes pure noise at this share of a column's
# false-bucket rate: a false pass gives a count or an amount negative values, a fault every
# reader of the release sees, so it is held 10× rarer than a false far bucket (the job's total
# false rate stays ≤ 1.1 · FALSE_OCCUPANCY). Arithmetic, not tuned on any table.
MIRROR_SHARE = 0.1
# The mirror windows tested: the mirror of the support's span, and it one bucket wider towards
# zero, away from zero, or both (a side of fewer rows, or shifted by an octave, still shows).
MIRROR_WIDENINGS = 4
# The guard's "more than one octave" (``spread``) also holds when two buckets of the support show
# ≥ SPREAD_NOISE·σ: an empty bucket next to a one-octave column (a year) passes 3σ with
# probability Φ(−3) ≈ 0.13 % (the tail rule's 2.5σ: 0.6 %), so a one-octave column counts as
# spread by a false neighbour at most that often. ISLP OJ's PriceDiff (1,070 rows, σ = 44) showed
# [0.25, 0.5) alone to the core and [0.125, 0.25) at 3.3-5σ to the tail rule in 6 of 10 seeds:
# not spread, its lower bound stayed 0.125 and 37 % of its rows were clipped onto it (32 % of the
# release at 0.13). Arithmetic (a rate below the tail rule's), not tuned on that table.
SPREAD_NOISE = 3.0
# The tail windows (read-out step 1e, ``spread_tails``): beyond each side of the support, the
# next 2, 4 and 8 buckets, each tested on its noisy sum; a heavy tail spread over several
# octaves (each below the tail rule's 2.5σ) shows in their sum. Pure noise beyond a side passes
# any of them with probability ≤ FALSE_TAIL = Φ(−EXTEND_NOISE) ≈ 0.6 % (union bound): the
# one-bucket tail rule's own per-side rate, so a side is widened from noise by the two rules
# together at most ≈ 1.2 % of the time. Arithmetic, not tuned on any table.
TAIL_WINDOWS = (2, 4, 8)
FALSE_TAIL = FALSE_SEED


@dataclass(frozen=True)
class Buckets:
    """The public buckets of one column kind, in increasing order of value."""

    kind: str

    @property
    def zero(self) -> int:
        """The bucket around zero (the tail and guard rules never cross it)."""
        return self.octaves

    @property
    def low(self) -> int:
        return MIN_EXPONENT[self.kind]

    @property
    def octaves(self) -> int:
        return MAX_EXPONENT - self.low

    @property
    def size(self) -> int:
        """Number of buckets: the octaves of each sign and the bucket around zero."""
        return 2 * self.octaves + 1

    def index(self, values: np.ndarray) -> np.ndarray:
        """The bucket of each (finite, non-missing) value."""
        values = np.asarray(values, dtype=float)
        _, exponent = np.frexp(np.abs(values))  # |x| = m·2^e, m in [0.5, 1): ⌊log2|x|⌋ = e − 1
        octave = np.clip(exponent.astype(np.int64) - 1 - self.low, 0, self.octaves - 1)
        small = np.abs(values) < 2.0**self.low
        middle = self.octaves
        return np.where(small, middle, np.where(values > 0, middle + 1 + octave,
                                                 middle - 1 - octave))

    def value_range(self, bucket: int) -> tuple[float, float]:
        """The smallest and largest value a bucket holds (integers: whole values; the outermost
        buckets: up to ±2^MAX_EXPONENT, where their values are clipped)."""
        middle = self.octaves
        one = 1.0 if self.kind == "integer" else 0.0
        if bucket == middle:
            edge = 2.0**self.low
            return (0.0, 0.0) if self.kind == "integer" else (-edge, edge)
        j = self.low + abs(bucket - middle) - 1
        inner, outer = 2.0**j, 2.0**(j + 1) - one  # magnitudes of the bucket
        return (inner, outer) if bucket > middle else (-outer, -inner)

    def counts(self, values: np.ndarray) -> np.ndarray:
        """Exact int64 count of the values in each bucket (NaN: missing, in none)."""
        values = np.asarray(values, dtype=float)
        present = values[~np.isnan(values)]
        return np.bincount(self.index(present), minlength=self.size).astype(np.int64)


# Calendar years of the public buckets of date/datetime columns (``YearBuckets``); dates before
# or after fall in one outer bucket each, whose values run to OUTER_YEARS (pandas' range holds them)
TIME_YEARS = (1900, 2100)
OUTER_YEARS = (1700, 2250)


@dataclass(frozen=True)
class YearBuckets:
    """The public buckets of a ``date`` (days since 1970-01-01) or ``datetime`` (seconds) column:
    one per calendar year of TIME_YEARS (UTC), one below and one above. Octaves of days since
    1970 would put 1992–2014 in one bucket and 2014–2059 in the next (a column of 2009–2015
    dates got bounds 1992–2014); years give a date column a range of whole years around its
    data, as octaves give an amount a range within a factor of two. Public and fixed in code:
    each value in exactly one bucket, so sensitivity 1 as for ``Buckets``."""

    kind: str  # "date" or "datetime"
    zero: None = None  # no bucket around zero: the guard widens both sides outward

    @property
    def edges(self) -> np.ndarray:
        """First day (second) of each year from OUTER_YEARS[0], the years of TIME_YEARS and the
        one after, to OUTER_YEARS[1]."""
        years = [OUTER_YEARS[0], *range(TIME_YEARS[0], TIME_YEARS[1] + 2), OUTER_YEARS[1]]
        days = (pd.to_datetime([f"{y}-01-01" for y in years]) - pd.Timestamp("1970-01-01")).days
        return days.to_numpy(dtype=float) * (86400.0 if self.kind == "datetime" else 1.0)

    @property
    def size(self) -> int:
        return len(self.edges) - 1

    def index(self, values: np.ndarray) -> np.ndarray:
        """The bucket of each (non-missing) value; values beyond OUTER_YEARS in the outer ones
        (whose ranges stop there: such values are clipped)."""
        inner = self.edges[1:-1]
        return np.searchsorted(inner, np.asarray(values, dtype=float), side="right")

    def value_range(self, bucket: int) -> tuple[float, float]:
        """The first and last day (second) of a bucket."""
        return float(self.edges[bucket]), float(self.edges[bucket + 1] - 1)

    def counts(self, values: np.ndarray) -> np.ndarray:
        """Exact int64 count of the values in each bucket (NaN: missing, in none)."""
        values = np.asarray(values, dtype=float)
        present = values[~np.isnan(values)]
        return np.bincount(self.index(present), minlength=self.size).astype(np.int64)


# A one-value bucket's pile (``bucket_piles``): an integer column's buckets {0} and {±1} hold one
# value each, so their noisy counts (the bounds' histogram, public buckets noised whatever the
# table holds: no threshold, no δ) are DP counts of that value. One clearing BUCKET_PILE·σ (the
# adaptive domain's lone-cell bar) becomes a point mass: a pile of zeros under heap discovery's
# threshold (anes96 `popul`, 24 % zeros over [0, 8191]) kept a cell of its own instead of
# sharing [0, k] with its neighbours. Arithmetic, not tuned on a table.
BUCKET_PILE = 3.0


def bucket_piles(noisy: np.ndarray, sigma: float, buckets: Buckets | YearBuckets) -> list[float]:
    """The values of an integer column's one-value buckets ({0}, {1}, {−1}) whose noisy count
    (``noisy``, the bounds' histogram at ``sigma``) is ≥ BUCKET_PILE·σ: point masses read from a
    DP output (post-processing: no budget, no event). Empty for other kinds (their bucket around
    zero spans an interval)."""
    if not isinstance(buckets, Buckets) or buckets.kind != "integer":
        return []
    middle = buckets.zero
    return [float(buckets.value_range(b)[0]) for b in (middle - 1, middle, middle + 1)
            if noisy[b] >= BUCKET_PILE * sigma]


def column_false_occupancy(columns: int) -> float:
    """The chance of a false bucket allowed to each of a job's ``columns`` DP-bounded columns:
    FALSE_OCCUPANCY / columns, so that over all of them a job sees one with probability ≤
    FALSE_OCCUPANCY (union bound). ``columns``: public, from the schema (the columns that may get
    DP bounds: numeric ones without bounds and auto ones), never from the data."""
    if columns < 1:
        raise ValueError(f"a job's DP-bounded columns: expected at least 1, found {columns}")
    return FALSE_OCCUPANCY / columns


@functools.lru_cache(maxsize=256)  # a pure function of public figures; the Gaussian tail is slow
def occupancy_threshold(sigma: float, buckets: int, width: int = 1, columns: int = 1) -> float:
    """The noisy sum above which a run of ``width`` adjacent buckets counts as occupied: pure
    noise (σ√width) passes it in any of the runs of every width in WINDOWS over ``buckets``
    buckets with probability ≤ ``column_false_occupancy(columns)`` (Gaussian tail, union bound
    over all runs), ``columns`` the job's DP-bounded columns."""
    from scipy.stats import norm  # here: scipy.stats costs a plan ~0.3 s of imports (issue 26)

    runs = sum(max(buckets - w + 1, 0) for w in WINDOWS)
    return sigma * math.sqrt(width) * float(norm.isf(column_false_occupancy(columns) / runs))


@dataclass(frozen=True)
class Present:
    """A DP count of a column's cells that hold a value, and its noise scale: for an auto
    column, the noisy count of the number classes (or of the date format) of its kind histogram
    (synthpriv.kinds), read before its bucket histogram and with noise of its own. A DP output:
    the seed (``seed``) reads it as evidence that the column holds data somewhere."""

    count: float
    sigma: float


@functools.lru_cache(maxsize=64)  # public figures only
def seed_threshold(buckets: int) -> float:
    """The score (noisy sum / σ√width) the seed's best window needs: pure noise reaches it in
    any window of width 1 to SEED_WIDTH over ``buckets`` buckets with probability ≤ FALSE_SEED
    (Gaussian tail, union bound over the windows). 4.5 for the 129 buckets of an integer
    column."""
    from scipy.stats import norm

    windows = sum(max(buckets - w + 1, 0) for w in range(1, SEED_WIDTH + 1))
    return float(norm.isf(FALSE_SEED / windows))


@functools.lru_cache(maxsize=64)
def presence_threshold(columns: int) -> float:
    """How many of its σ the DP count of a column's cells (``Present``) must reach for the seed
    to run: a column holding no value passes it with probability ≤ column_false_occupancy /
    FALSE_SEED, so that with the seed's FALSE_SEED on its pure-noise histogram (independent
    noise) it gets bounds from noise with probability ≤ ``column_false_occupancy(columns)``,
    the core's rate again (2.4 at 18 DP-bounded columns, 2.9 at 86)."""
    from scipy.stats import norm

    return float(norm.isf(min(column_false_occupancy(columns) / FALSE_SEED, 0.5)))


def seed(noisy: np.ndarray, sigma: float, present: Present | None = None,
         columns: int = 1) -> np.ndarray:
    """Where the data are when no run passes its occupancy threshold but the column's DP count
    of cells (``present``) is ≥ ``presence_threshold(columns)`` of its σ (module docstring, step
    1b): the window of 1 to SEED_WIDTH adjacent buckets with the largest noisy sum / σ√width,
    when that is ≥ ``seed_threshold``. Not cut to its buckets ≥ EXTEND_NOISE·σ as the core's
    runs are: a window holds an end bucket only when its noisy count raises the score (≈ half
    the window's mean count or more), and a column spread thinly enough to need the seed has few
    or no buckets ≥ 2.5σ (cut, College's P.Undergrad lost 9 % of its rows below the bounds, 1 %
    uncut; benchmarks/README.md "smallcols"). All False otherwise, or when ``present`` is None
    (a declared numeric column: no kind histogram). Post-processing of DP outputs."""
    noisy = np.asarray(noisy, dtype=float)
    kept = np.zeros(noisy.size, dtype=bool)
    if present is None or present.count < presence_threshold(columns) * present.sigma:
        return kept
    best, start, width = -np.inf, 0, 1
    for w in range(1, min(SEED_WIDTH, noisy.size) + 1):
        scores = np.convolve(noisy, np.ones(w), mode="valid") / (sigma * math.sqrt(w))
        at = int(np.argmax(scores))
        if scores[at] > best:
            best, start, width = float(scores[at]), at, w
    if best >= seed_threshold(noisy.size):
        kept[start:start + width] = True
    return kept


def origin(noisy: np.ndarray, sigma: float, columns: int = 1,
          present: Present | None = None, zero: int | None = None) -> np.ndarray:
    """The buckets the support grows from: the ``core``, or when it is empty the ``seed``; when
    the core is the bucket around zero alone (``zero``), also the seed of the rest
    (``beyond_zero``)."""
    kept = core(noisy, sigma, columns)
    if not kept.any():
        return seed(noisy, sigma, present, columns)
    if zero is not None and present is not None and np.flatnonzero(kept).tolist() == [zero]:
        kept |= beyond_zero(noisy, sigma, zero, present, columns)
    return kept


def beyond_zero(noisy: np.ndarray, sigma: float, zero: int, present: Present,
                columns: int = 1) -> np.ndarray:
    """The ``seed`` of a column whose core is its pile at zero alone (module docstring, step
    1c): the column's DP count of cells less the zero bucket's noisy count is a DP count of its
    non-zero values (independent noises: σ² adds), gated and seeded as step 1b with no window
    holding the zero bucket (its pile is known and must score nothing; a window across it joined
    the negative side's noise to a non-negative column: a lower bound of −7 in 1 draw of 300).
    A 24 %-zero count spread thinly over 13 octaves (anes96's ``popul``, 755 rows at σ = 32.6)
    otherwise read "zeros only" and released its other 76 % as missing. A column with no
    non-zero value passes the gate with probability ≤ column_false_occupancy / FALSE_SEED and
    its masked pure-noise histogram seeds with probability ≤ FALSE_SEED: ≤
    column_false_occupancy, the core's rate (as step 1b).
    Post-processing of the same two DP outputs: no budget, no event."""
    rest = Present(present.count - float(noisy[zero]), math.hypot(present.sigma, sigma))
    masked = np.asarray(noisy, dtype=float).copy()
    masked[zero] = -np.inf  # no window holds the known pile, nor joins both signs across it
    return seed(masked, sigma, rest, columns)


@dataclass(frozen=True)
class BoundsReading:
    """What the read-out chose (post-processing of one noisy histogram): the bounds, the bucket
    range kept, and on each side whether the quantile trimmed noisy mass (True) or the edge of
    the support set it (False) and whether a guard bucket was added. ``zeros_only``: only the
    bucket around zero was kept (bounds [0, 1]), so any other value is one the noise hid."""

    lower: float
    upper: float
    first: int
    last: int
    trimmed: tuple[bool, bool]
    guarded: tuple[bool, bool]
    zeros_only: bool = False


def core(noisy: np.ndarray, sigma: float, columns: int = 1) -> np.ndarray:
    """The buckets the occupancy thresholds show (module docstring, step 1, before the 2.5σ tail
    rule): the single buckets that pass theirs or, when none does, the runs of the narrowest
    width in WINDOWS of which some pass theirs, each cut to its outermost buckets of noisy count
    ≥ EXTEND_NOISE·σ. All False when no run passes. ``columns``: the job's DP-bounded columns
    (``occupancy_threshold``)."""
    noisy = np.asarray(noisy, dtype=float)
    kept = np.zeros(noisy.size, dtype=bool)
    evident = noisy >= EXTEND_NOISE * sigma
    for width in WINDOWS:  # the narrowest runs that show anything: wider ones only if none do
        if width > noisy.size or kept.any():
            break
        sums = np.convolve(noisy, np.ones(width), mode="valid")
        threshold = occupancy_threshold(sigma, noisy.size, width, columns)
        for start in np.flatnonzero(sums >= threshold):
            inside = np.flatnonzero(evident[start:start + width])
            if inside.size:
                kept[start + inside[0]:start + inside[-1] + 1] = True
    return kept


def support(noisy: np.ndarray, sigma: float,
            buckets: Buckets | YearBuckets | None = None, columns: int = 1,
            present: Present | None = None) -> np.ndarray:
    """Which buckets hold data as the noise lets us see it: the ``core`` (else the ``seed``,
    from ``present``), then, outward from its outermost buckets, each next bucket ≥
    EXTEND_NOISE·σ (never from the zero bucket down to negatives; ``buckets`` says which it is,
    the middle one by default); then, for a support on one sign only, the other sign's buckets
    its ``mirrored`` test shows, grown by the same rule; then each side through the tail windows
    that pass (``spread_tails``). All False when neither shows anything.
    ``columns``: the job's DP-bounded columns (``occupancy_threshold``)."""
    noisy = np.asarray(noisy, dtype=float)
    # the zero bucket: the tail rule never extends from it to negatives (years have none)
    middle = noisy.size // 2 if buckets is None else buckets.zero
    kept = origin(noisy, sigma, columns, present, middle)
    if not kept.any():
        return kept
    evident = noisy >= EXTEND_NOISE * sigma
    kept = _grown(kept, evident, middle)
    if buckets is None or isinstance(buckets, Buckets):  # years have no sign to mirror
        other = mirrored(noisy, sigma, kept, middle, columns)
        if other.any():
            kept |= _grown(other, evident, middle)
    return spread_tails(noisy, sigma, kept, middle)


def spread(noisy: np.ndarray, sigma: float, kept: np.ndarray, shown: np.ndarray) -> bool:
    """Whether a column spreads over more than one octave as the noise lets us see it (the
    guard's test, step 3): the thresholds show two buckets or more (``shown``, the ``origin``'s
    buckets), or the support (``kept``) spans three, or two of its buckets hold ≥ SPREAD_NOISE·σ.
    One false tail pass next to a one-octave column (a year) must not count: a 2.5σ pass next to
    it is what noise gives 0.6 % of empty buckets, a 3σ one 0.13 %. Post-processing."""
    occupied = np.flatnonzero(kept)
    noisy = np.asarray(noisy, dtype=float)
    return bool(shown[-1] > shown[0] or occupied[-1] - occupied[0] >= 2
                or np.count_nonzero(noisy[kept] >= SPREAD_NOISE * sigma) >= 2)


def _grown(kept: np.ndarray, evident: np.ndarray, middle: int | None) -> np.ndarray:
    """``kept`` with each next bucket outward from its outermost ones added while ``evident``
    (the tail rule), never from the zero bucket ``middle`` down to negatives."""
    kept = kept.copy()
    first, last = int(np.argmax(kept)), int(kept.size - 1 - np.argmax(kept[::-1]))
    while first > 0 and first != middle and evident[first - 1]:
        first -= 1
        kept[first] = True
    while last < kept.size - 1 and evident[last + 1]:
        last += 1
        kept[last] = True
    return kept


@functools.lru_cache(maxsize=8)  # public figures only
def tail_threshold(windows: int = len(TAIL_WINDOWS)) -> float:
    """How many of its σ (σ√w) the noisy sum of one of a side's ``windows`` tail windows must
    reach (step 1e): pure noise beyond a side passes any of them with probability ≤ FALSE_TAIL
    (Gaussian tail, union bound over the windows; 2.87 for the 3 of TAIL_WINDOWS)."""
    from scipy.stats import norm

    return float(norm.isf(FALSE_TAIL / windows))


def tail_window(noisy: np.ndarray, sigma: float, edge: int, step: int,
                stop: int) -> tuple[int, int] | None:
    """The narrowest window of the next w buckets (w in TAIL_WINDOWS) beyond ``edge`` in
    direction ``step`` (±1), none past bucket ``stop``, whose noisy sum is ≥ tail_threshold·σ√w,
    cut to its first k buckets of largest noisy sum less σ per bucket (a bucket joins only if
    the rows it adds outweigh an octave more of bound: a tail ending inside the window does not
    carry its empty outer buckets; cut at the largest sum / σ√k instead, College's F.Undergrad
    got an upper bound two octaves past its data in 3.4 % of draws, 1.8 % so): (its nearest
    bucket, the k-th), or None when none passes (step 1e). Post-processing."""
    available = (stop - edge) * step
    threshold = tail_threshold()
    for w in sorted({min(w, available) for w in TAIL_WINDOWS if available > 0}):
        window = noisy[edge + step * np.arange(1, w + 1)]  # nearest first
        if window.sum() >= threshold * sigma * math.sqrt(w):
            k = int(np.argmax(np.cumsum(window - sigma)))
            return edge + step, edge + step * (k + 1)
    return None


def spread_tails(noisy: np.ndarray, sigma: float, kept: np.ndarray,
                 middle: int | None) -> np.ndarray:
    """``kept`` (a support after the tail rule) extended on each side through the buckets of a
    passing ``tail_window`` beyond its outermost bucket, then grown by the tail rule again, until
    no window passes (module docstring, step 1e). A heavy tail spread over several octaves puts
    fewer than 2.5σ rows in each, so the tail rule stopped early and the quantile clipped the
    rest onto the upper bound (College's F.Undergrad and Enroll: ~25 % of their rows; branch
    collegeks). Windows never cross zero: a side away from the zero bucket ``middle`` stops at
    it, a side at it never extends to negatives. Pure noise beyond a side (no rows there) passes
    the first windows tested with probability ≤ FALSE_TAIL (union bound over TAIL_WINDOWS),
    and later windows are tested only after a pass, so a side is extended from noise alone at
    most at that rate: the tail rule's own per-side rate again. Post-processing of the same
    noisy histogram: no budget, no event."""
    noisy = np.asarray(noisy, dtype=float)
    kept = kept.copy()
    if not kept.any():
        return kept
    evident = noisy >= EXTEND_NOISE * sigma
    size = noisy.size
    for step in (-1, 1):
        while True:
            edge = int(np.argmax(kept)) if step < 0 else int(size - 1 - np.argmax(kept[::-1]))
            if middle is None:
                stop = 0 if step < 0 else size - 1
            elif edge == middle:
                stop = middle if step < 0 else size - 1  # never from zero to negatives
            else:
                stop = middle if (edge - middle) * step < 0 else (0 if step < 0 else size - 1)
            found = tail_window(noisy, sigma, edge, step, stop)
            if found is None:
                break
            near, far = found
            kept[min(near, far):max(near, far) + 1] = True
            kept = _grown(kept, evident, middle)
    return kept


@functools.lru_cache(maxsize=64)  # public figures only
def mirror_threshold(columns: int, windows: int = 1) -> float:
    """How many of its σ (σ√width) the noisy sum over one of a support's ``windows`` mirror
    windows must reach (step 1d): pure noise passes any of them with probability ≤
    MIRROR_SHARE · column_false_occupancy (union bound; 4.1 for one DP-bounded column and 4
    windows, 4.7 for 10 columns)."""
    from scipy.stats import norm

    return float(norm.isf(MIRROR_SHARE * column_false_occupancy(columns) / windows))


def mirrored(noisy: np.ndarray, sigma: float, kept: np.ndarray, zero: int,
             columns: int = 1) -> np.ndarray:
    """The other sign's buckets of a support that lies on one side of zero (module docstring,
    step 1d): the best-scoring (noisy sum / σ√w) of the MIRROR_WIDENINGS windows around the
    mirror of its span (the same magnitudes, the other sign; as is, or one bucket wider towards
    or away from zero, or both), when its score is ≥ ``mirror_threshold``: its buckets ≥
    EXTEND_NOISE·σ, else its largest one. All False when the support holds both signs or none,
    or the test fails. A column of returns (1,089 rows of ISLP Weekly, ± a few %, σ = 31 at 9
    DP-bounded columns) spreads over ~6 octaves a side, so that one side's best bucket missed
    the core's 5σ in a third of the draws: the bounds stopped at 0 and half the column was
    clipped onto it (a fake spike at 0.0 holding 40-55 % of the release). Pure noise passes
    any of its windows with probability ≤ MIRROR_SHARE · column_false_occupancy (a
    non-negative count gets a negative lower bound 10× less often than a false far bucket).
    Post-processing of the same noisy histogram: no budget, no event."""
    noisy = np.asarray(noisy, dtype=float)
    out = np.zeros(noisy.size, dtype=bool)
    side = np.flatnonzero(kept)
    side = side[side != zero]
    if side.size == 0 or (side < zero).any() == (side > zero).any():
        return out
    low, high = 2 * zero - int(side.max()), 2 * zero - int(side.min())
    inner, outer = (low, high) if low > zero else (high, low)  # nearest zero, farthest
    step = 1 if low > zero else -1
    ends = {(a, b) for a in (inner, inner - step) for b in (outer, outer + step)
            if a != zero and 0 <= b < noisy.size}  # the mirror, one bucket wider each way
    best, chosen = -np.inf, None
    for a, b in ends:
        start, stop = min(a, b), max(a, b)
        score = noisy[start:stop + 1].sum() / (sigma * math.sqrt(stop - start + 1))
        if score > best:
            best, chosen = score, (start, stop)
    if chosen is None or best < mirror_threshold(columns, MIRROR_WIDENINGS):
        return out
    low, high = chosen
    window = noisy[low:high + 1]
    evident = window >= EXTEND_NOISE * sigma
    out[low:high + 1] = evident if evident.any() else window == window.max()
    return out


def read_bounds(noisy: np.ndarray, sigma: float, buckets: Buckets | YearBuckets,
                columns: int = 1, present: Present | None = None) -> BoundsReading | None:
    """The bounds read from noisy bucket counts (post-processing; the module docstring's three
    steps). None when no bucket is above the noise: the caller falls back to a public rule.
    ``columns``: the job's DP-bounded columns, over which the false-bucket chance is split;
    ``present``: the column's DP count of cells, for the seed (step 1b), or None."""
    noisy = np.asarray(noisy, dtype=float)
    kept = np.where(support(noisy, sigma, buckets, columns, present),
                    np.maximum(noisy, 0.0), 0.0)
    total = kept.sum()
    if total <= 0:
        return None
    occupied = np.flatnonzero(kept > 0)
    below, above = np.cumsum(kept), np.cumsum(kept[::-1])[::-1]
    first = int(np.argmax(below > CLIP_SHARE * total))
    last = int(len(kept) - 1 - np.argmax(above[::-1] > CLIP_SHARE * total))
    trimmed = (first > occupied[0], last < occupied[-1])
    middle = buckets.zero
    # more than one octave: the thresholds show two buckets or more, or the support spans three
    # (one false tail pass next to a one-octave column — a year — must not count as spread)
    shown = np.flatnonzero(origin(noisy, sigma, columns, present, middle))
    spreads = spread(noisy, sigma, kept > 0, shown)
    hidden = EXTEND_NOISE * sigma > CLIP_SHARE * total  # a tail the noise hides may be too large
    # a few codes: away from zero, clipping lands on a value the column holds (CODE_VALUES)
    codes = isinstance(buckets, Buckets) and buckets.kind == "integer" and (
        buckets.value_range(last)[1] - buckets.value_range(first)[0] + 1 <= CODE_VALUES)
    guarded = [False, False]
    # away from zero: one bucket outward; towards zero: down to zero itself, never across
    # (a few codes: never away from zero; towards zero even within one bucket, as [2, 7] holds
    # a count's hidden 0s and 1s: down to 0 adds at most a few values, not a year's 2,000)
    if hidden and not trimmed[0] and first > 0 and first != middle:
        towards = middle is not None and first > middle
        if (spreads and not codes) or (towards and (spreads or codes)):
            first, guarded[0] = (middle if towards else first - 1), True
    if hidden and not trimmed[1] and last < len(kept) - 1 and last != middle:
        towards = middle is not None and last < middle
        if (spreads and not codes) or (towards and (spreads or codes)):
            last, guarded[1] = (middle if towards else last + 1), True
    lower = 0.0 if guarded[0] and first == middle else buckets.value_range(first)[0]
    upper = 0.0 if guarded[1] and last == middle else buckets.value_range(last)[1]
    zeros_only = first == last == middle
    if zeros_only:  # only the bucket around zero shows: the column reads as zeros
        lower, upper = 0.0, 0.0  # (a continuous one's ±2⁻¹⁶ would release 1.5e-05 and negatives)
    if math.isclose(upper, lower):  # one value (zero): bounds need lower < upper
        upper = lower + 1.0
    return BoundsReading(lower, upper, first, last, trimmed, (guarded[0], guarded[1]), zeros_only)


def octave_shape(noisy: np.ndarray, sigma: float, buckets: Buckets | YearBuckets,
                 reading: BoundsReading | None, columns: int = 1,
                 present: Present | None = None) -> tuple[tuple[float, float], ...]:
    """The noisy mass of the buckets ``reading`` kept (first to last), for the column's fine
    grid (``NumericColumn.grid_shape``, synthpriv.grid): (first value, mass) per segment, in
    increasing order. Each bucket the noise shows — in the ``support`` the bounds were read
    from, with a noisy count ≥ EXTEND_NOISE·σ — is a segment of its own (a lone bucket ≥ 2.5σ
    apart from the support is what noise gives 0.6 % of empty buckets: weighted, one such
    bucket of 10⁻⁴ got 30 cells and values with 7 decimals); each run of the others is one segment,
    since the noise cannot tell their masses apart (the grid is equal-width inside it, as
    without a shape; 16 octaves below 1 of a continuous column get no cells of 10⁻⁵). The
    bucket around zero is never a segment of its own and adds no mass: what it holds is a pile
    at 0 (the grid's cell holding 0 and a point mass carry it), not mass spread over ±2⁻¹⁶ —
    weighted, it gave 80 % zeros 770 cells of 4·10⁻⁸ and values with 9 decimals. Mass: a
    segment's noisy counts summed, then projected to ≥ 0 (summed after projecting, a run of 20
    empty octaves gathered 20 × 0.4σ of noise). The guard's buckets towards zero
    (``guard_noise``) add their noise only when it shows a hidden tail. Empty for date buckets
    (years, equal-width already) and for a zeros-only reading or none. Post-processing of the
    noisy histogram only: no budget, nothing else read. ``columns``, ``present``: as the reading
    was read with."""
    if reading is None or reading.zeros_only or not isinstance(buckets, Buckets):
        return ()
    noisy = np.asarray(noisy, dtype=float)
    kept = support(noisy, sigma, buckets, columns, present)
    shows = kept & (noisy >= EXTEND_NOISE * sigma)
    noisy = np.where(guard_noise(noisy, sigma, kept, reading, buckets.zero), 0.0, noisy)
    segments: list[list[float]] = []
    run = False  # whether the last segment is a run of buckets below the noise
    carried: float | None = None  # the zero bucket's first value, for the segment after it
    for bucket in range(reading.first, reading.last + 1):
        start = buckets.value_range(bucket)[0]
        if bucket == buckets.zero:
            carried = start
            continue
        shown = bool(shows[bucket])
        if shown or not run:
            segments.append([start if carried is None else carried, 0.0])
        carried = None
        segments[-1][1] += float(noisy[bucket])
        run = not shown
    return tuple((start, max(mass, 0.0)) for start, mass in segments)


def guard_noise(noisy: np.ndarray, sigma: float, kept: np.ndarray, reading: BoundsReading,
                zero: int) -> np.ndarray:
    """The buckets the guard added towards zero (read-out step 3: from the support down to the
    bucket around 0, outside ``kept``, the support) whose noisy counts ``octave_shape`` drops.
    The guard widens the bounds so that a tail the noise may hide there is not clipped onto a
    bound; it does not show one, and their noise, summed into the shape, gave the empty octaves
    below a column's support a share of the fine cells, which the decoding's equal share within
    the first measured grid cell filled with that share of the cell's rows: Ecdat's breach sizes
    (real minimum 500) released 3.6-9.5 % of their values below 500 in 4 of 11 seeds when the run
    [0, 512) read 42-134 rows (noise of 9 octaves, σ√9 ≈ 99 at σ ≈ 33; 26 real rows, all at
    500-511; benchmarks/README.md, "hhsfinal": 16 of 31 seeds at ≥ 3 % before, 1 after).

    Which of two readings the guard's noisy counts are nearer to (a likelihood-ratio test, equal
    priors, independent noise σ a bucket): *empty*, or the neighbour's density continued down to
    0 — the support's bucket next to the guard, [s, 2s) with noisy count c, continued at the same
    rows per value, expects c·2^-i rows in the guard's i-th bucket outward (i = 1, 2, …: each is
    half as wide as the one before). With e_i those expectations and S_i the noisy counts, the
    guard keeps its noise when Σ S_i·e_i ≥ Σ e_i² / 2, or when its sum shows a hidden tail on
    its own (Σ S_i ≥ EXTEND_NOISE·σ·√k, the tail rule's 2.5σ, passed by pure noise with
    probability 0.6 %); else it is dropped. A column uniform down to 1 (an id) keeps its share
    unless the noise reads it nearer empty; the plain sum tested against c/2 dropped it in 5 of
    11 seeds (Ecdat's `rownames`, 11 % of rows in 1-127: KS +0.009, 2-way TVD +0.005; "hhsfinal").
    Dropped, the run keeps its floor of one cell per octave (``synthpriv.grid``) and the grid
    cell's rows go to the octaves the noise shows. Post-processing of the noisy histogram."""
    guard = np.zeros(len(noisy), dtype=bool)
    inside = np.flatnonzero(kept)
    if not inside.size:
        return guard
    neighbour = None
    if reading.guarded[0] and reading.first == zero and inside[0] > zero:
        guard[zero + 1:inside[0]], neighbour = True, inside[0]
    if reading.guarded[1] and reading.last == zero and inside[-1] < zero:
        guard[inside[-1] + 1:zero], neighbour = True, inside[-1]
    if neighbour is None:
        return guard
    total = float(noisy[guard].sum())
    hidden = total >= EXTEND_NOISE * sigma * math.sqrt(max(guard.sum(), 1))
    run = np.flatnonzero(guard)
    outward = np.abs(run - neighbour)  # 1 next to the support, k at the bucket next to zero
    expected = max(float(noisy[neighbour]), 0.0) * 0.5 ** outward
    continued = float(noisy[run] @ expected) >= float(expected @ expected) / 2.0
    return guard if not (hidden or continued) else np.zeros(len(noisy), dtype=bool)


def bounds_from_noisy(
    noisy: np.ndarray, sigma: float, buckets: Buckets | YearBuckets, columns: int = 1,
    present: Present | None = None,
) -> tuple[float, float] | None:
    """[lower, upper] from noisy bucket counts (``read_bounds``), or None when no bucket is
    above the noise. ``columns``: the job's DP-bounded columns (public, from the schema);
    ``present``: the column's DP count of cells (the seed), or None."""
    reading = read_bounds(noisy, sigma, buckets, columns, present)
    return None if reading is None else (reading.lower, reading.upper)


# The heaps' range (``HeapRange.codes``) runs only where its test sees a tail holding this share
# of the column's rows: 2 × 2.5σ_R ≤ SEEN_TAIL × the kept buckets' noisy total, so that a tail of
# that share or more is clipped onto the heaps with probability ≤ Φ(−2.5) ≈ 0.6 %. Where the noise
# is a large part of the table it is not: anes96 (755 rows, ε = 1) has σ_R ≈ 78, 5σ_R ≈ 52 % of
# its rows, and a 2.5σ_R test there clipped 30-40 % of a 1-7 scale's rows onto two heaps in 20-75
# % of draws (DoleLR, ClinLR; benchmarks/README.md "codebounds"). A judgement, set from the
# arithmetic of the development suite's tables (Wage 22 %, Fair 10-16 %, anes96 ≥ 52 %), not
# from any release's figures.
SEEN_TAIL = 0.25
# The end test (``EndTest``): a side of the heaps' range takes its end heap's value only when
# the residual of the buckets whose rows it would clip is below END_TEST times its σ: the tail
# rule's and the whole-range test's 2.5, so a column whose heaps share one bucket (a year) fires
# as before but for the selection lift (``selected_count``). Arithmetic, not tuned on a table;
# lower thresholds were measured and not chosen (benchmarks/README.md "heaprange", 200 draws:
# 1.5σ on plain counts cut loans' piles onto 4 to ≈ 3 draws but sent Wage's `year` back to its
# octave in 14 and loans' `term` in 14, against 6 and 0 here).
END_TEST = EXTEND_NOISE


@dataclass(frozen=True)
class EndTest:
    """What the noise says of the rows one side of the heaps' range would clip (``heap_range``):
    the noisy counts of the buckets from the reading's outermost one on that side to the one
    holding the heaps' bound (or, when a shown bucket widened the bound to its far edge, to the
    one before it), minus the noisy counts of the heaps in them, and its σ (b·σ² + k·σ_h², b
    buckets and k heaps). Each row beyond the bound is in one of those buckets and on none of
    those heaps, so the residual is at least the rows clipped onto that side's bound (plus the
    rows between heaps in those buckets: the test errs towards keeping the reading's bound)."""

    residual: float
    sigma: float
    lift: float = 0.0  # the heaps' selection lift, Σ (noisy count − ``selected_count``), in it

    def holds(self) -> bool:
        """Whether the side may take the heaps' bound: its residual is below END_TEST times its
        σ (the rule ``HeapRange.codes`` applies to the whole range, here on the buckets whose
        rows are clipped onto the bound). No bucket beyond: nothing to clip."""
        return self.sigma == 0.0 or self.residual < END_TEST * self.sigma


@dataclass(frozen=True)
class HeapRange:
    """What the noise says of a column's cells off its heaps, inside the buckets its bounds were
    read from (``heap_range``): the range of the kept heaps there (widened to the buckets beyond
    them that the noise shows), the residual (the
    buckets' noisy counts summed, minus the heaps' noisy counts), the residual's σ, the
    buckets' noisy total, the reading's own bounds, and the end test of each side (``EndTest``,
    lower then upper)."""

    lower: float
    upper: float
    residual: float
    sigma: float
    total: float
    outer: tuple[float, float] = (-math.inf, math.inf)
    ends: tuple[EndTest, EndTest] = (EndTest(0.0, 0.0), EndTest(0.0, 0.0))

    @property
    def seen(self) -> bool:
        """Whether the test sees a tail of SEEN_TAIL of the rows: 2 × 2.5σ_R ≤ SEEN_TAIL × the
        buckets' noisy total (a tail of 5σ_R rows passes the test with probability ≈ 0.6 %)."""
        return 2 * EXTEND_NOISE * self.sigma <= SEEN_TAIL * self.total

    @property
    def codes(self) -> bool:
        """Whether the column reads as "a few codes": the test sees a tail (``seen``) and the
        residual is below EXTEND_NOISE (2.5) times its σ, the rule by which the tail rule keeps
        no bucket next to the support (a bucket below 2.5σ is one the noise cannot tell from
        empty; the cells off the heaps are one such bucket here). A column with no cell off its
        heaps passes with probability Φ(2.5) ≈ 99.4 % (more when a heap's count is biased up by
        its selection); one whose off-heap cells hold 5σ_R rows with probability Φ(−2.5) ≈
        0.6 %. The 2.5: arithmetic, not tuned on any table."""
        return self.seen and self.residual < EXTEND_NOISE * self.sigma

    @property
    def bounds(self) -> tuple[float, float]:
        """The column's bounds when it reads as codes: per side, the heaps' bound where that
        side's end test holds, else the reading's own (``outer``). The whole-range test bounds
        how many rows the range may miss, not where they are: loans' `num_mort_accounts` (heaps
        0-4, 5.5 % of rows at 5-14, all in the end buckets) passed it in 3 runs of 4 and
        released 4 at twice its share. The end test looks at the buckets whose rows are clipped
        onto the bound, with the noise of those buckets and heaps only (σ 110 against σ_R 235
        there); a year column whose heaps share one bucket tests the whole range's residual
        (but for the selection lift of a heap near its threshold: Wage's `year` kept [2003,
        2009] in 189 of 200 draws, against 193 on main). Post-processing of the same two DP
        outputs."""
        return (self.lower if self.ends[0].holds() else self.outer[0],
                self.upper if self.ends[1].holds() else self.outer[1])


def heap_range(noisy: np.ndarray, sigma: float, buckets: Buckets | YearBuckets,
               reading: BoundsReading | None, heaps: dict[float, int], heap_sigma: float,
               columns: int = 1, present: Present | None = None,
               heap_threshold: float | None = None) -> HeapRange | None:
    """The heaps' range test (issue 24: a year column of 7 values came back spread over its
    octave, 1024–2047): ``heaps`` (heap discovery's kept values and their noisy counts, each at
    ``heap_sigma``) are subtracted from the noisy counts (``noisy``, σ = ``sigma`` each) of the
    buckets ``reading`` kept (first to last). Each row is in one bucket and one value, so the
    residual estimates the rows of those buckets that sit on no kept heap, unbiased but for the
    selection's (a kept count is ≥ its threshold), with σ_R² = b·σ² + k·σ_h² (b buckets, k
    heaps: independent noises). When it is below 2.5σ_R and 5σ_R is at most SEEN_TAIL of the
    buckets' noisy total (``HeapRange.codes``) the bounds may become [smallest heap, largest
    heap] (widened to a bucket beyond the heaps that the noise shows: ``_shown_beyond``), each
    side only where the buckets whose rows it would clip show none (``EndTest``, ``_end_test``):
    no cell beyond them is left to draw rows from noise, and no tail piles onto an end heap.
    Values between heaps keep their cells.
    None when the rule has nothing to test: no reading, a zeros-only one, date buckets, or fewer
    than 2 kept heaps in the buckets (one heap: bounds need lower < upper, and a cell beside it
    would carry noise again). ``columns``, ``present``: as the reading was read with;
    ``heap_threshold``: the count at which heap discovery kept the heaps (the end tests read a
    kept count through ``selected_count``), or None (plain noisy counts).
    Post-processing of two DP outputs (the bucket histogram and the heaps' noisy counts): no
    budget, no event."""
    if reading is None or reading.zeros_only or not isinstance(buckets, Buckets):
        return None
    values = np.array(sorted(heaps), dtype=float)
    if values.size == 0:
        return None
    inside = values[(buckets.index(values) >= reading.first)
                    & (buckets.index(values) <= reading.last)]
    if inside.size < 2:
        return None
    noisy = np.asarray(noisy, dtype=float)
    width = reading.last - reading.first + 1
    total = float(np.sum(noisy[reading.first:reading.last + 1]))
    residual, variance = off_heaps([(total, math.sqrt(width) * sigma)],
                                   [(heaps[v], heap_sigma) for v in inside])
    spread = math.sqrt(variance)
    shown = support(noisy, sigma, buckets, columns, present)
    lower, upper = _shown_beyond(shown, buckets, reading, inside)
    held = buckets.index(inside)
    ends = []
    for side, (bound, heap) in enumerate(((lower, inside[0]), (upper, inside[-1]))):
        # the buckets from the reading's outermost on this side to the one holding the bound
        # (its rows beyond the bound are clipped onto it); a bound widened to a shown bucket's
        # far edge holds that bucket's rows, so the buckets beyond it only
        edge = int(buckets.index(np.array([bound]))[0])
        if bound != heap:
            edge += -1 if side == 0 else 1
        first, last = (reading.first, edge) if side == 0 else (edge, reading.last)
        ends.append(_end_test(noisy, sigma, heaps, inside[(held >= first) & (held <= last)],
                              first, last, heap_sigma, heap_threshold))
    return HeapRange(lower, upper, residual, spread, total, (reading.lower, reading.upper),
                     (ends[0], ends[1]))


def _end_test(noisy: np.ndarray, sigma: float, heaps: dict[float, int], held: np.ndarray,
              first: int, last: int, heap_sigma: float, threshold: float | None) -> EndTest:
    """The ``EndTest`` of buckets ``first`` to ``last`` (noisy counts at σ = ``sigma`` each) and
    the kept heaps ``held`` in them (noisy counts at ``heap_sigma``, kept at ``threshold``:
    each counted as ``selected_count``; None: as it is); none (``first`` past ``last``):
    nothing to clip, a test that holds. Post-processing."""
    if first > last:
        return EndTest(0.0, 0.0)
    counts = [float(heaps[v]) for v in held]
    lift = 0.0 if threshold is None else sum(
        count - selected_count(count, threshold, heap_sigma) for count in counts)
    residual, variance = off_heaps([(float(np.sum(noisy[first:last + 1])),
                                     math.sqrt(last - first + 1) * sigma)],
                                   [(count, heap_sigma) for count in counts])
    return EndTest(residual + lift, math.sqrt(variance), lift)


def off_heaps(buckets: Sequence[tuple[float, float]],
              heaps: Sequence[tuple[float, float]]) -> tuple[float, float]:
    """The rows of some buckets that sit on none of the kept heaps in them, and its variance:
    Σ bucket counts − Σ heap counts, σ_R² = Σσ_b² + Σσ_h² (``(count, σ)`` pairs; each row is
    in one bucket and on at most one value, the noises independent). Unbiased but for the
    heaps' selection (a kept count is ≥ its threshold). The one arithmetic of ``heap_range``'s
    whole-range test, its end tests (``_end_test``) and the marginals' bound heaps
    (``compress._bound_heaps``). Post-processing of DP outputs."""
    residual = sum(c for c, _ in buckets) - sum(c for c, _ in heaps)
    return float(residual), float(sum(s ** 2 for _, s in buckets) + sum(s ** 2 for _, s in heaps))


@functools.lru_cache(maxsize=4096)  # a pure function of a DP output and public figures
def selected_count(count: float, threshold: float, sigma: float) -> float:
    """A kept heap's count, read from its noisy ``count`` knowing it was kept because that count
    passed ``threshold`` (noise N(0, ``sigma``²)): the c at which a count kept at ``threshold``
    lands at ``count`` or above half the time (median-unbiased under the selection), floored at
    0. A heap far above its threshold keeps its count (Wage's years, 3.5σ above: within 1 row);
    one just above it was most likely kept by its noise, and its count says little (loans'
    `num_mort_accounts` = 4, 429 rows at a threshold of 483, σ 85: kept counts of 499 / 520 /
    550 read 196 / 408 / 506). Post-processing of the count and public figures."""
    from scipy.optimize import brentq
    from scipy.stats import norm  # here: scipy.stats costs a plan ~0.3 s of imports (issue 26)

    def above(c: float) -> float:  # log P(noisy ≥ count | kept, c) − log ½: increasing in c
        return float(norm.logsf((count - c) / sigma) - norm.logsf((threshold - c) / sigma)
                     - math.log(0.5))

    if count <= threshold or above(0.0) >= 0.0:  # kept at the threshold itself: nothing known
        return 0.0
    return float(brentq(above, 0.0, count + sigma))


def _shown_beyond(shown: np.ndarray, buckets: Buckets, reading: BoundsReading,
                  heaps: np.ndarray) -> tuple[float, float]:
    """The heaps' range, widened on each side to the outermost kept bucket beyond the heaps'
    buckets that the noise shows (``shown``: the ``support`` the bounds were read from, its
    core and its tail rule's buckets ≥ EXTEND_NOISE·σ, not a lone 2.5σ pass among the 16 empty
    octaves below 1 of a continuous column): data on no heap, such as Fair's `rate_marriage` =
    1, 80 rows at σ = 28, below the heap threshold. Its value range's far end becomes the bound
    (0 for the bucket around zero, as in ``read_bounds``). Post-processing of the noisy
    histogram."""
    held = buckets.index(heaps)
    lower, upper = float(heaps[0]), float(heaps[-1])
    shown = [int(b) for b in np.flatnonzero(shown) if reading.first <= b <= reading.last]
    below = [b for b in shown if b < held.min()]
    above = [b for b in shown if b > held.max()]
    if below:
        lower = 0.0 if below[0] == buckets.zero else buckets.value_range(below[0])[0]
    if above:
        upper = 0.0 if above[-1] == buckets.zero else buckets.value_range(above[-1])[1]
    return lower, upper


def carried_buckets(noisy: np.ndarray, sigma: float, buckets: Buckets | YearBuckets,
                    reading: BoundsReading | None, lower: float, upper: float, columns: int = 1,
                    present: Present | None = None) -> list[tuple[float, float, float]]:
    """The buckets whose noisy counts the marginals stage reads as measurements of the column's
    cells (``marginals.compress.with_buckets``), each as (first value, last value, noisy count):
    every bucket from the one holding ``lower`` to the one holding ``upper`` (the column's
    final bounds), and each bucket beyond them that the ``support`` the bounds were read from
    keeps (a tail the quantile trimmed: its rows are clipped onto the bound). A bucket beyond
    the bounds that the noise does not show is taken to hold no rows, the reading's own
    assumption (what the guard and the tail rule leave: < EXTEND_NOISE·σ a bucket next to the
    support, nothing far out); carried, its noise would only blur the bound's cell (a column's
    64 negative octaves: σ·8). Empty for date buckets (years, no fine grid to measure) and for a
    zeros-only reading or none. Post-processing of the noisy histogram (σ = ``sigma`` each, the
    plan's; already on the ledger): no budget, no event."""
    if reading is None or reading.zeros_only or not isinstance(buckets, Buckets):
        return []
    noisy = np.asarray(noisy, dtype=float)
    first, last = (int(b) for b in buckets.index(np.array([lower, upper])))
    kept = support(noisy, sigma, buckets, columns, present)
    kept[first:last + 1] = True
    return [(*buckets.value_range(int(b)), float(noisy[b])) for b in np.flatnonzero(kept)]
