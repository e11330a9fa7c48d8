"""The marginals stage: select marginals, measure them with the discrete Gaussian mechanism,
estimate one model consistent with the measurements.

Sensitivity: each marginal is a histogram of L2 sensitivity Δ = 1 under add/remove (√2 under
replace-one); measuring k marginals with noise σ each costs k·Δ²/(2σ²) zCDP.
"""

from __future__ import annotations

import math
from typing import Literal

from pydantic import Field

from synthpriv.marginals.independent import IndependentModel
from synthpriv.marginals.measurement import Measurement
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram, histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState, Stage, StageOptions, StagePlan, register


class MarginalsOptions(StageOptions):
    selection: Literal["one_way"] = "one_way"
    sigma: float | None = Field(
        default=None, gt=0, description="fixed noise std per cell; None = calibrate to the budget"
    )


@register
class MarginalsStage(Stage):
    """1-way marginals of every column (selection of higher-order marginals: see issue #3)."""

    name = "marginals"
    Options = MarginalsOptions

    @property
    def sensitivity(self) -> float:
        return histogram_l2_sensitivity(self.context.neighbouring)

    def plan(self, rho: float) -> StagePlan:
        attributes = len(self.context.domain)
        fixed = self.options.sigma is not None
        if fixed:
            sigma = self.options.sigma
        elif rho <= 0:
            return StagePlan(self.name, 0.0, 0.0, [], {})
        else:
            sigma = self.sensitivity * math.sqrt(attributes / (2.0 * rho))
        multiplier = sigma / self.sensitivity
        events = [DiscreteGaussianEvent(multiplier, attributes, label="1-way marginals")]
        spent = attributes / (2.0 * multiplier**2)
        return StagePlan(
            self.name, 0.0, spent, events,
            {"sigma_one_way": sigma, "noise_multiplier": multiplier, "marginals": attributes},
            fixed=fixed,
        )

    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        sigma = plan.noise["sigma_one_way"]
        for attribute in state.data.domain.attributes:
            counts = state.data.marginal([attribute])
            noisy = discrete_gaussian_histogram(counts, sigma, source)
            ledger.record(
                DiscreteGaussianEvent(sigma / self.sensitivity, 1, label=f"1-way {attribute}")
            )
            state.measurements.append(Measurement((attribute,), noisy, sigma))
        state.model = IndependentModel.from_measurements(state.data.domain, state.measurements)
