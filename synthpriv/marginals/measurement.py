"""A noisy marginal: the output of the Gaussian mechanism on one marginal query."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synthpriv.domain import CountSource
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, ZCDPFilter
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource


@dataclass(frozen=True)
class Measurement:
    """Noisy counts of the marginal over ``clique``, with per-cell Gaussian noise of std ``sigma``.

    ``noisy_counts`` is shaped like ``domain.project(clique).shape``. ``sigma`` is the noise
    standard deviation in count units (L2 sensitivity 1 per marginal under add/remove); a 1-way
    measurement summed into coarser cells has one per cell (synthpriv.marginals.compress).
    """

    clique: tuple[str, ...]
    noisy_counts: np.ndarray
    sigma: float | np.ndarray


def measure_marginal(
    data: CountSource,
    clique: tuple[str, ...],
    sigma: float,
    sensitivity: float,
    source: RandomSource,
    ledger: Ledger | ZCDPFilter,
) -> Measurement:
    """Measure one marginal with the discrete Gaussian mechanism and record it in ``ledger`` (or
    in the zCDP filter an adaptive stage spends through).

    ``sensitivity`` is the histogram's L2 sensitivity under the job's neighbouring relation; the
    event costs (sensitivity/sigma)²/2 zCDP. The empty clique is the record count.
    """
    noisy = discrete_gaussian_histogram(data.marginal(clique), sigma, source)
    label = "marginal " + "×".join(clique) if clique else "record count"
    ledger.record(DiscreteGaussianEvent(sigma / sensitivity, 1, label=label))
    return Measurement(tuple(clique), noisy, sigma)


def estimate_total(measurements: Sequence[Measurement]) -> float:
    """Inverse-variance weighted mean of the sums of the noisy marginals (at least 1).

    The sum of a marginal with ``c`` cells and per-cell noise ``sigma`` is unbiased for the
    record count with variance ``c * sigma^2``.
    """
    if not measurements:
        raise ValueError("cannot estimate the number of records without measurements")
    variances = np.array([
        float(np.sum(np.broadcast_to(np.square(m.sigma), np.shape(m.noisy_counts))))
        for m in measurements
    ])
    sums = np.array([np.sum(m.noisy_counts) for m in measurements])
    weights = 1.0 / variances
    return max(float(np.sum(weights * sums) / np.sum(weights)), 1.0)
