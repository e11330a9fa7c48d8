"""What every pipeline stage is: a planned budget share, a run, and the state stages share.

A stage asks the plan for its noise (``plan``), runs its mechanisms on the state (``run``) and
records in the Ledger exactly the events it ran. Stages talk through small typed objects in
``PipelineState``: the encoded table, the measurements, the fitted model, the synthetic table
(one type for every recipe: ``synthpriv.sampling.SyntheticRows``).
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, runtime_checkable

import numpy as np
from pydantic import BaseModel, ConfigDict, ValidationError

from synthpriv.domain import CountSource, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.marginals.compress import Coarsening
from synthpriv.marginals.measurement import Measurement
from synthpriv.privacy.accountant import Ledger, PrivacyEvent
from synthpriv.privacy.randomness import RandomSource
from synthpriv.validation import describe_validation_error

if TYPE_CHECKING:  # the sample stage's module imports this one
    from synthpriv.sampling import SyntheticRows


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
    rows_per_person: int | None = None  # k with data.person (neighbours differ by one person)


class FrozenNoise(dict):
    """A plan's noise figures (name → number): a dict that refuses every change after it is
    made, so a stage cannot alter the noise it was planned with (``StagePlan``)."""

    def _refuse(self, *args: object, **kwargs: object) -> None:
        raise TypeError("a stage plan's noise cannot be changed once planned")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse
    __ior__ = _refuse

    def __reduce__(self) -> tuple:
        return FrozenNoise, (dict(self),)


@dataclass(frozen=True)
class StagePlan:
    """A stage's budget (zCDP ρ), the events it will spend at most, and its calibrated noise.
    Immutable once made: the planner calibrates by making new plans (``dataclasses.replace``),
    and a stage runs exactly what was planned."""

    stage: str
    share: float
    rho: float
    events: tuple[PrivacyEvent, ...]
    noise: Mapping[str, float] = field(default_factory=dict)
    fixed: bool = False

    def __post_init__(self) -> None:
        object.__setattr__(self, "events", tuple(self.events))
        object.__setattr__(self, "noise", FrozenNoise(self.noise))


class SamplingModel(Protocol):
    """A fitted model that draws rows of codes (post-processing of DP measurements)."""

    total: float

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` i.i.d. rows of codes."""

    def sample_rounded(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` rows whose marginals follow the model with controlled rounding."""


@runtime_checkable
class MarginalModel(SamplingModel, Protocol):
    """A model that answers any marginal of its domain (the marginals stages' models)."""

    def project(self, attributes: Sequence[str]) -> np.ndarray:
        """The model's counts of the marginal over ``attributes``."""


@runtime_checkable
class PriorGuided(SamplingModel, Protocol):
    """A model guided by a marginals model (the hybrid recipe's generator): on some marginals
    its rows follow that model, which then answers them."""

    prior: SamplingModel | None

    def follows_prior(self, attributes: Sequence[str]) -> bool:
        """Whether the rows' marginal over ``attributes`` is ``prior``'s."""


@runtime_checkable
class RowSource(Protocol):
    """A count source that also holds the encoded rows in memory (the local engine's)."""

    codes: np.ndarray


@dataclass
class PipelineState:
    """What stages hand to each other. ``data`` is sensitive and never released."""

    context: PlanContext
    encoder: TableEncoder
    data: CountSource
    requested_records: int | None = None
    measurements: list[Measurement] = field(default_factory=list)
    model: SamplingModel | None = None
    synthetic: SyntheticRows | None = None  # the one synthetic output type of every recipe
    records_source: str = ""
    coarsening: Coarsening | None = None  # the adaptive domain (DP), when a stage chose one
    person_codes: np.ndarray | None = None  # each encoded row's person after bounding (sensitive)


# What stages hand each other (``Stage.requires`` / ``Stage.provides``), checked in recipe order
# when the job is planned (``pipeline.check_contracts``), before any data is read.
ARTEFACTS = {
    "counts": "marginal counts of the encoded table (every engine gives them)",
    "rows": "the encoded rows in memory (the local engine; the dask engine keeps rows on its "
            "workers and returns counts only)",
    "measurements": "DP measurements of marginals",
    "model": "a fitted model that draws rows",
    "synthetic": "the synthetic rows (synthpriv.sampling.SyntheticRows, whatever the recipe)",
}


class Stage(ABC):
    """A step of a recipe. Subclasses set ``name``, ``Options`` and ``spends_budget``, and their
    contract: the ``ARTEFACTS`` they ``require`` from the stages before them (or the engine) and
    those they ``provide`` (a property where it depends on the options).

    To add a stage: subclass it, decorate it with ``@register``, and name its module in
    ``synthpriv.pipeline.STAGE_MODULES``; a recipe can then list it (one line)."""

    name: ClassVar[str]
    Options: ClassVar[type[StageOptions]] = StageOptions
    spends_budget: ClassVar[bool] = True
    # whether the stage's sensitivity follows ``context.rows_per_person`` (data.person: every
    # sensitivity × k, the rows of one person, bounded before any stage reads them); a stage that
    # does not is refused with data.person when the job is planned, never run per row
    person_level: ClassVar[bool] = False
    requires: frozenset[str] = frozenset()
    provides: frozenset[str] = frozenset()

    @property
    def needs_rows(self) -> bool:
        """Whether the stage reads the encoded rows themselves, not only counts."""
        return "rows" in self.requires

    def missing(self, artefact: str) -> str:
        """Why the stage cannot run without ``artefact`` and how to fix it (a recipe error)."""
        return (f"stage '{self.name}' needs {ARTEFACTS[artefact]}, which no stage before it "
                "provides; put a stage that does before it in the recipe")

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
