"""DP bounds of a numeric column from a noisy histogram over public, data-independent buckets.

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
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.stats import norm

MAX_EXPONENT = 64
MIN_EXPONENT = {"integer": 0, "continuous": -16}
FALSE_OCCUPANCY = 1e-3  # chance that noise alone makes some empty bucket look occupied
TAIL = 1e-3  # share of the noisy mass each bound may leave outside (on each side)


@dataclass(frozen=True)
class Buckets:
    """The public buckets of one column kind, in increasing order of value."""

    kind: str

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


def occupancy_threshold(sigma: float, buckets: int) -> float:
    """The noisy count above which a bucket counts as occupied: pure noise passes it in any of
    ``buckets`` empty buckets with probability ≤ FALSE_OCCUPANCY (Gaussian tail, union bound)."""
    return sigma * float(norm.isf(FALSE_OCCUPANCY / buckets))


def bounds_from_noisy(
    noisy: np.ndarray, sigma: float, buckets: Buckets
) -> tuple[float, float] | None:
    """[lower, upper] from noisy bucket counts (post-processing): counts below the occupancy
    threshold are taken as zero; the lower bound is the first value of the lowest bucket where
    the cumulative mass passes TAIL of the total, the upper bound the last value of the highest
    such bucket from above. None when no bucket is occupied."""
    kept = np.where(noisy >= occupancy_threshold(sigma, buckets.size), noisy, 0.0)
    total = kept.sum()
    if total <= 0:
        return None
    below = np.cumsum(kept)
    above = np.cumsum(kept[::-1])[::-1]
    first = int(np.argmax(below > TAIL * total))
    last = int(len(kept) - 1 - np.argmax(above[::-1] > TAIL * total))
    lower, upper = buckets.value_range(first)[0], buckets.value_range(last)[1]
    if math.isclose(upper, lower):  # one integer bucket (zero): bounds need lower < upper
        upper = lower + 1.0
    return lower, upper
