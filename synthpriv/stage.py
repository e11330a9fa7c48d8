"""What every pipeline stage is: a planned budget share, a run, and the state stages share.

A stage asks the plan for its noise (``plan``), runs its mechanisms on the state (``run``) and
records in the Ledger exactly the events it ran. Stages talk through small typed objects in
``PipelineState``: the encoded table, the measurements, the fitted model, the synthetic table.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Protocol

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, ValidationError

from synthpriv.domain import CountSource, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.marginals.compress import Coarsening
from synthpriv.marginals.measurement import Measurement
from synthpriv.privacy.accountant import Ledger, PrivacyEvent
from synthpriv.privacy.randomness import RandomSource
from synthpriv.validation import describe_validation_error


class StageOptions(BaseModel):
    """Base of every stage's options: unknown keys are errors."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class PlanContext:
    """Public facts a stage may plan with: nothing here is read from the sensitive table."""

    domain: Domain
    neighbouring: str
    delta: float
    public_records: int | None = None
    adaptive: frozenset[str] = frozenset()  # numeric columns whose bins the data's DP counts choose


@dataclass
class StagePlan:
    """A stage's budget (zCDP ρ), the events it will spend at most, and its calibrated noise."""

    stage: str
    share: float
    rho: float
    events: list[PrivacyEvent]
    noise: dict[str, float] = field(default_factory=dict)
    fixed: bool = False


class SamplingModel(Protocol):
    """A fitted model that draws rows of codes (post-processing of DP measurements)."""

    total: float

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` i.i.d. rows of codes."""

    def sample_rounded(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` rows whose marginals follow the model with controlled rounding."""


@dataclass
class PipelineState:
    """What stages hand to each other. ``data`` is sensitive and never released."""

    context: PlanContext
    encoder: TableEncoder
    data: CountSource
    requested_records: int | None = None
    measurements: list[Measurement] = field(default_factory=list)
    model: SamplingModel | None = None
    synthetic: pd.DataFrame | None = None
    records_source: str = ""
    coarsening: Coarsening | None = None  # the adaptive domain (DP), when a stage chose one


class Stage(ABC):
    """A step of a recipe. Subclasses set ``name``, ``Options`` and ``spends_budget``."""

    name: ClassVar[str]
    Options: ClassVar[type[StageOptions]] = StageOptions
    spends_budget: ClassVar[bool] = True
    # Contract checked when the job is planned: True for a stage that reads the encoded rows
    # themselves (not only counts), which an engine that keeps rows on its workers cannot give.
    needs_rows: ClassVar[bool] = False

    def __init__(self, options: dict[str, Any], context: PlanContext, source: str) -> None:
        try:
            self.options = self.Options.model_validate(options)
        except ValidationError as error:
            raise ConfigError(
                describe_validation_error(error, self.Options, f"{source}: stage '{self.name}'")
            ) from None
        self.context = context

    @abstractmethod
    def plan(self, rho: float) -> StagePlan:
        """The events this stage will run if given zCDP budget ``rho`` (touches no data)."""

    @abstractmethod
    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        """Run the stage, recording every mechanism it runs in ``ledger``."""


class StageRegistry(Mapping[str, type[Stage]]):
    """Stages by name, imported only when a recipe names them.

    A stage module registers its class when imported (``register``). ``declare`` names the module
    of each stage beforehand; looking a name up imports that module only, so planning an AIM job
    does not import the generator stage (torch and opacus take seconds to import). Iterating
    imports every declared module, so ``STAGES.items()`` still lists them all.
    """

    def __init__(self) -> None:
        self._classes: dict[str, type[Stage]] = {}
        self._modules: dict[str, str] = {}

    def declare(self, modules: Mapping[str, str]) -> None:
        """Stage name → the module that registers it (imported on first look-up)."""
        self._modules.update(modules)

    def add(self, stage: type[Stage]) -> None:
        self._classes[stage.name] = stage

    @property
    def names(self) -> list[str]:
        """Every known stage name, sorted, without importing any stage module."""
        return sorted({*self._classes, *self._modules})

    def __getitem__(self, name: str) -> type[Stage]:
        if name not in self._classes and name in self._modules:
            importlib.import_module(self._modules[name])
            if name not in self._classes:
                raise RuntimeError(
                    f"internal error: module {self._modules[name]} is declared for stage "
                    f"'{name}' but registers no stage of that name"
                )
        return self._classes[name]

    def __contains__(self, name: object) -> bool:
        return name in self._classes or name in self._modules

    def __iter__(self) -> Iterator[str]:
        return iter(self.names)

    def __len__(self) -> int:
        return len(self.names)


STAGES = StageRegistry()


def register(stage: type[Stage]) -> type[Stage]:
    """Class decorator: make a stage available to recipes under ``stage.name``."""
    STAGES.add(stage)
    return stage
