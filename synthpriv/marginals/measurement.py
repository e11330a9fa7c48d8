"""A noisy marginal: the output of the Gaussian mechanism on one marginal query."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Measurement:
    """Noisy counts of the marginal over ``clique``, with per-cell Gaussian noise of std ``sigma``.

    ``noisy_counts`` is shaped like ``domain.project(clique).shape``. ``sigma`` is the noise
    standard deviation in count units (L2 sensitivity 1 per marginal under add/remove).
    """

    clique: tuple[str, ...]
    noisy_counts: np.ndarray
    sigma: float

    @property
    def weight(self) -> float:
        """Inverse-std weight used by least-squares estimation."""
        return 1.0 / self.sigma
