"""The fitted generator as a sampling model: draw candidates from the DP-trained network, rake
them to the DP marginals, resample. Post-processing only: no budget."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from synthpriv.domain import Domain
from synthpriv.generators.autoregressive import AutoregressiveModel
from synthpriv.generators.guidance import Target, rake, rake_conditional, resample
from synthpriv.stage import SamplingModel


@dataclass
class GuidedGenerator:
    """Satisfies ``SamplingModel``. ``total`` is public or a DP estimate of the record count.

    With ``targets`` (marginals from the DP marginals model), each draw generates
    ``candidate_factor × records`` rows, rakes them to the targets and resamples ``records`` of
    them; without targets it returns the network's draws as they are. A ``prior_fraction`` of
    the candidates may come from the marginals model ``prior`` (a mixture of the two models).
    A conditional network (``network.given`` > 0) completes ``records`` rows drawn from
    ``prior`` (no candidates, no resampling): the context columns come from the marginals model
    as it draws them, the modelled ones from the network, raked to the targets' conditionals.
    """

    network: AutoregressiveModel
    domain: Domain
    targets: tuple[Target, ...]
    total: float
    candidate_factor: float = 4.0
    raking_iterations: int = 30
    expected_batch: float = 0.0  # q·N̂ that divided DP-SGD's noisy sums (public or DP)
    prior: SamplingModel | None = None  # the marginals model: candidates or rows to complete
    prior_fraction: float = 0.0

    def follows_prior(self, attributes: Sequence[str]) -> bool:
        """Whether the rows' marginal over ``attributes`` is the marginals model's (``prior``):
        columns the network does not complete are the prior's own draws (exactly), and the rows
        are raked to the prior's marginal on every target clique (to the raking's convergence).
        Elsewhere the network's joint draws decide it, which has no closed form."""
        if self.prior is None:
            return False
        wanted = set(attributes)
        drawn = {self.domain.attributes[j] for j in self.network.order[self.network.given:]}
        if self.network.given and not wanted & drawn:
            return True
        return any(wanted <= set(target.clique) for target in self.targets)

    def _draw(self, records: int, rng: np.random.Generator, systematic: bool) -> np.ndarray:
        if self.network.given:
            return self._complete(records, rng, systematic)
        if not self.targets:
            return self._candidates(records, rng)
        size = max(records, math.ceil(self.candidate_factor * records))
        candidates = self._candidates(size, rng)
        weights = rake(candidates, self.domain, self.targets, self.raking_iterations)
        return candidates[resample(weights, records, rng, systematic)]

    def _complete(self, records: int, rng: np.random.Generator, systematic: bool) -> np.ndarray:
        """Rows of the marginals model with the network's columns redrawn, each column's
        probabilities raked to the targets over it and the columns set before it."""
        if self.prior is None:
            raise ValueError("a conditional generator completes rows of a marginals model")
        rows = (self.prior.sample_rounded if systematic else self.prior.sample)(records, rng)
        names, order = self.domain.attributes, self.network.order

        def adjust(j: int, probabilities: np.ndarray, codes: np.ndarray) -> np.ndarray:
            column = names[j]
            set_before = {names[i] for i in order[:order.index(j)]}
            usable = [t for t in self.targets
                      if column in t.clique and set(t.clique) - {column} <= set_before]
            if not usable:
                return probabilities
            return rake_conditional(probabilities, codes, column, self.domain, usable,
                                    self.raking_iterations)

        return self.network.complete(rows, rng, adjust)

    def _candidates(self, size: int, rng: np.random.Generator) -> np.ndarray:
        from_prior = round(self.prior_fraction * size) if self.prior is not None else 0
        candidates = self.network.sample(size - from_prior, rng)
        if from_prior:
            candidates = np.concatenate([candidates, self.prior.sample(from_prior, rng)])
        return candidates

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` rows of codes (domain order), resampled i.i.d. from the raked candidates."""
        return self._draw(records, rng, systematic=False)

    def sample_rounded(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """As ``sample`` with systematic resampling: each candidate is kept ⌊n·w⌋ or ⌈n·w⌉
        times, so the released marginals carry less resampling noise."""
        return self._draw(records, rng, systematic=True)
