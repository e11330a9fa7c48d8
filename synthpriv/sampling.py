"""The sample stage: draw rows from the fitted model and decode them. Post-processing only."""

from __future__ import annotations

from typing import Literal

from synthpriv.errors import ConfigError
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState, Stage, StageOptions, StagePlan, register


class SampleOptions(StageOptions):
    method: Literal["rounded", "iid"] = "rounded"


@register
class SampleStage(Stage):
    """Rows: the requested number, else the public count, else the model's DP estimate.

    ``method: rounded`` (default) allocates rows to values by controlled rounding of the model's
    expected counts; ``iid`` draws rows independently from the model.
    """

    name = "sample"
    Options = SampleOptions
    spends_budget = False

    def plan(self, rho: float) -> StagePlan:
        return StagePlan(self.name, 0.0, 0.0, [], {})

    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        if state.model is None:
            raise ConfigError("the sample stage needs a model: put a modelling stage before it")
        if state.requested_records is not None:
            records, state.records_source = state.requested_records, "requested in the config"
        elif state.context.public_records is not None:
            records, state.records_source = state.context.public_records, "public count"
        else:
            records = max(1, round(state.model.total))
            state.records_source = "estimated from the noisy marginals (post-processing)"
        rng = source.numpy_generator()
        if self.options.method == "rounded":
            codes = state.model.sample_rounded(records, rng)
        else:
            codes = state.model.sample(records, rng)
        state.synthetic = state.encoder.decode(codes, rng)
