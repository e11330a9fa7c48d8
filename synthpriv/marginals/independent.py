"""The independent model: each column drawn from its own noisy 1-way marginal (a baseline)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synthpriv.domain import Domain
from synthpriv.marginals.measurement import Measurement, estimate_total
from synthpriv.marginals.rounding import round_allocation


@dataclass
class IndependentModel:
    """Product of 1-way distributions: noisy counts clipped at zero and normalised."""

    domain: Domain
    probabilities: dict[str, np.ndarray]
    total: float

    @classmethod
    def from_measurements(
        cls, domain: Domain, measurements: Sequence[Measurement]
    ) -> IndependentModel:
        one_way = {m.clique[0]: m.noisy_counts for m in measurements if len(m.clique) == 1}
        missing = [a for a in domain.attributes if a not in one_way]
        if missing:
            raise ValueError(f"the independent model needs a 1-way measurement of {missing}")
        probabilities = {}
        for attribute in domain.attributes:
            clipped = np.clip(one_way[attribute], 0.0, None)
            mass = clipped.sum()
            size = domain[attribute]
            probabilities[attribute] = clipped / mass if mass > 0 else np.full(size, 1.0 / size)
        return cls(domain, probabilities, estimate_total(measurements))

    def project(self, attributes: Sequence[str]) -> np.ndarray:
        """Counts of the marginal over ``attributes`` under independence."""
        table = np.array(self.total)
        for attribute in attributes:
            table = np.multiply.outer(table, self.probabilities[attribute])
        return table

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` i.i.d. rows of codes."""
        columns = [
            rng.choice(self.domain[a], size=records, p=self.probabilities[a])
            for a in self.domain.attributes
        ]
        return np.stack(columns, axis=1).astype(np.int64)

    def sample_rounded(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` rows whose column counts are the expected counts, rounded at random."""
        sizes = np.array([records])
        columns = []
        for attribute in self.domain.attributes:
            expected = self.probabilities[attribute][None, :] * records
            counts = round_allocation(expected, sizes, rng)[0]
            values = np.repeat(np.arange(self.domain[attribute]), counts)
            columns.append(rng.permutation(values))
        return np.stack(columns, axis=1).astype(np.int64)
