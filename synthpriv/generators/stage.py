"""The generator stage: a DP-SGD-trained autoregressive model, guided by the DP marginals.

Privacy: the only accesses to the sensitive rows are (1) DP-SGD training, recorded as
``SubsampledGaussianEvent(q, z, steps actually taken)`` (add/remove: one row moves the clipped
gradient sum by ≤ C), and (2) when the record count is neither public nor estimated by a previous
marginals stage, one count with discrete Gaussian noise (sensitivity 1), recorded as a
``DiscreteGaussianEvent``. The sample rate q is public config, fixed before any data is read;
steps = ⌈epochs / q⌉. The loss is divided by q·N̂ with N̂ public or DP, never by a realised size.

Person level (``context.rows_per_person`` = k, ``state.person_codes`` = each row's person after
bounding to k rows): neighbours differ by all rows of one person. q is then the public share of
*persons* per step (``sample_rate``; ``batch_size`` is refused: it would need a public count of
persons), DP-SGD samples persons and bounds each one's contribution by C (``dpsgd``), so the
event is the same ``SubsampledGaussianEvent(q, z, steps)`` with q over persons; the noisy record
count's sensitivity is k (a person moves it by ≤ k).

Guidance (post-processing, no budget): the column order follows the marginals model's junction
tree (measured dependency structure), and the generator's candidates are raked to the marginals
model's estimates on every measured clique before resampling.

Two modes. By default the network models every column (the generator alone, or mixed with the
marginals model through ``prior_fraction``). With ``complete`` (e.g. a prediction target) it
models only those columns given all the others: the rows are the marginals model's own draws,
and each completed column is drawn by the network with its probabilities raked, row by row, to
the model's conditionals on the measured cliques that hold it. The other columns keep exactly
what the marginals model draws; the network adds interactions of many columns at once that no
low-order marginal holds.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Literal, cast

import numpy as np
from pydantic import Field

from synthpriv.domain import CountSource, Domain
from synthpriv.errors import ConfigError
from synthpriv.generators.guidance import Target
from synthpriv.generators.persons import PersonRows
from synthpriv.marginals.estimation import GraphicalModel
from synthpriv.marginals.measurement import measure_marginal
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, SubsampledGaussianEvent
from synthpriv.privacy.conversions import dpsgd_noise_multiplier_guess, gaussian_noise_multiplier
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import (
    MarginalModel,
    PipelineState,
    RowSource,
    SamplingModel,
    Stage,
    StageOptions,
    StagePlan,
    register,
)

if TYPE_CHECKING:
    import torch

COUNT_SENSITIVITY = 1.0  # a count moves by ≤ 1 under add/remove (0 under replace-one: 1 bounds it)


class GeneratorOptions(StageOptions):
    sample_rate: float = Field(default=0.05, gt=0, le=1, description="Poisson rate q (public)")
    batch_size: int | None = Field(
        default=None, ge=1, description="expected batch; needs data.public_records (q = B/N)"
    )
    epochs: float = Field(default=20.0, gt=0, description="expected passes: steps = ⌈epochs/q⌉")
    max_grad_norm: float = Field(default=1.0, gt=0, description="per-sample clipping norm C")
    learning_rate: float = Field(default=0.01, gt=0)
    hidden: int = Field(default=64, ge=1, description="hidden units of each column's head")
    physical_batch: int = Field(default=4096, ge=1, description="micro-batch size (memory)")
    records_from: Literal["marginals", "measure"] = Field(
        default="marginals",
        description="N̂ when no public count: the marginals model's DP total, or a noisy count",
    )
    count_fraction: float = Field(default=0.02, gt=0, lt=1,
                                  description="share of this stage's ρ for the noisy count")
    person_clipping: Literal["person", "rows"] = Field(
        default="person", description="person level: clip each person's summed gradient to C "
        "(person), or each row to C/k (rows); both bound a person's contribution by C",
    )
    order: Literal["model", "schema"] = "model"
    complete: list[str] = Field(
        default_factory=list,
        description="columns the network draws given all the others, which come from the "
        "marginals model (e.g. a prediction target); empty: the network models every column",
    )
    guide: bool = True
    candidate_factor: float = Field(default=4.0, ge=1.0)
    raking_iterations: int = Field(default=30, ge=1)
    prior_fraction: float = Field(
        default=0.0, ge=0, lt=1, description="share of candidates drawn from the marginals model"
    )
    device: Literal["auto", "cpu", "cuda"] = "auto"
    max_memory_mb: float = Field(
        default=4096, gt=0, description="refuse to train when the encoded rows held in memory "
        "(one byte per cell, four where a column has over 255 codes) would exceed this",
    )
    threads: int | None = Field(
        default=1, ge=1, description="torch CPU threads while training (None: torch's default); "
        "the network's layers are small, and extra threads on a busy machine slow them down",
    )


@register
class GeneratorStage(Stage):
    """DP-SGD autoregressive generator (see the module docstring)."""

    name = "generator"
    Options = GeneratorOptions
    provides = frozenset({"model"})
    person_level = True  # samples persons, bounds each by C; its count's sensitivity is k

    @property
    def requires(self) -> frozenset[str]:  # type: ignore[override]
        """The encoded rows (it trains on them: refused with the dask engine at plan time), and
        a marginals model when it completes one or takes the record count from one."""
        needed = {"rows"}
        if self.options.complete or (self.context.public_records is None
                                     and self.options.records_from == "marginals"):
            needed.add("model")
        return frozenset(needed)

    def missing(self, artefact: str) -> str:
        if artefact == "model" and self.options.complete:
            return ("stage 'generator': complete needs a marginals stage before it (it draws the "
                    "other columns); put one first in the recipe")
        if artefact == "model":
            return ("stage 'generator' takes the record count from a marginals stage "
                    "(records_from: marginals) but none runs before it. Put a marginals stage "
                    "first, set data.public_records, or set records_from: measure")
        return super().missing(artefact)

    @property
    def sample_rate(self) -> float:
        options, public = self.options, self.context.public_records
        if options.batch_size is None:
            return options.sample_rate
        if self.context.rows_per_person is not None:
            raise ConfigError(
                "stage 'generator': batch_size sets q = batch_size / rows, but with data.person "
                "DP-SGD samples persons and no public count of persons exists; set sample_rate "
                "(the expected share of persons per step) instead."
            )
        if public is None:
            raise ConfigError(
                "stage 'generator': batch_size needs a public record count (data.public_records) "
                "to set the sample rate q = batch_size / N; without one, set sample_rate instead."
            )
        return min(1.0, options.batch_size / public)

    @property
    def steps(self) -> int:
        return math.ceil(self.options.epochs / self.sample_rate)

    @property
    def count_sensitivity(self) -> float:
        """The record count's L2 sensitivity: 1 per row, k when a person (≤ k rows) is the unit."""
        return COUNT_SENSITIVITY * (self.context.rows_per_person or 1)

    @property
    def measures_count(self) -> bool:
        return self.context.public_records is None and self.options.records_from == "measure"

    def plan(self, rho: float) -> StagePlan:
        self._check_complete(self.context.domain)  # before any stage reads the data
        if rho <= 0:
            return StagePlan(self.name, 0.0, 0.0, [])
        q, steps = self.sample_rate, self.steps
        events, noise = [], {}
        rho_sgd = rho
        if self.measures_count:
            rho_count = self.options.count_fraction * rho
            rho_sgd = rho - rho_count
            count_multiplier = gaussian_noise_multiplier(rho_count)
            events.append(DiscreteGaussianEvent(count_multiplier, 1, label="record count"))
            noise["sigma_count"] = count_multiplier * self.count_sensitivity
        # A scale monotone in ρ; the planner's search on the real accountant sets the final one.
        multiplier = dpsgd_noise_multiplier_guess(q, steps, rho_sgd)
        events.append(SubsampledGaussianEvent(q, multiplier, steps, label="DP-SGD steps"))
        noise.update({"noise_multiplier": multiplier, "sample_rate": q, "steps": steps,
                      "max_grad_norm": self.options.max_grad_norm})
        return StagePlan(self.name, 0.0, rho, events, noise)

    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        # torch and Opacus are imported here, not with the module: planning a DP-SGD recipe
        # (``synthpriv plan``) needs only ``plan`` (issue 26).
        import torch

        from synthpriv.generators.autoregressive import AutoregressiveModel
        from synthpriv.generators.dpsgd import DpSgdSettings, noise_generator, train_dp_sgd
        from synthpriv.generators.model import GuidedGenerator

        if not plan.events:
            raise ConfigError("stage 'generator' has no budget: give it a share > 0 in the recipe")
        options, domain = self.options, state.data.domain
        device = _device(options.device)
        rows = _rows(state.data)
        persons = self._persons(state, len(rows))  # checked before anything is measured
        records = self._records(state, plan, ledger, source)
        order = column_order(domain, state.model if options.order == "model" else None)
        given = self._context_columns(state, domain)
        order = given + [j for j in order if j not in given]  # context first, in schema order
        with source.torch_initialisation():  # the initial weights: public, repeat when seeded
            network = AutoregressiveModel(domain.shape, order, options.hidden, len(given))
        network = network.to(device)
        settings = DpSgdSettings(
            sample_rate=plan.noise["sample_rate"], noise_multiplier=plan.noise["noise_multiplier"],
            max_grad_norm=options.max_grad_norm, steps=int(plan.noise["steps"]),
            learning_rate=options.learning_rate, physical_batch=options.physical_batch,
            person_clipping=options.person_clipping,
        )
        cell_type = np.uint8 if max(domain.shape) <= 256 else np.int32
        # The refusal reads N̂ (public or DP), never the realised row count, so whether it fires
        # is post-processing of a mechanism's output and its message reveals nothing more.
        needed = records * len(domain) * np.dtype(cell_type).itemsize / 2**20
        if needed > options.max_memory_mb:
            raise ConfigError(
                f"stage 'generator' would hold about {needed:.3g} MiB of encoded rows in memory "
                f"(N̂ = {records:.0f} rows, public or DP, × {len(domain)} columns), above "
                f"max_memory_mb = {options.max_memory_mb:g}. Raise pipeline.stages.generator."
                "max_memory_mb if the machine has the memory, or use a marginals-only recipe "
                "(aim, mst), which streams."
            )
        compact = rows.astype(cell_type, copy=False)
        codes = torch.as_tensor(compact, device=device)  # widened to int64 per micro-batch
        threads = torch.get_num_threads()
        torch.set_num_threads(options.threads or threads)
        try:
            log = train_dp_sgd(network, codes, settings.sample_rate * records, settings,
                               source.numpy_generator(), noise_generator(source, device),
                               persons=persons)
        finally:
            torch.set_num_threads(threads)
        ledger.record(SubsampledGaussianEvent(settings.sample_rate, settings.noise_multiplier,
                                              log.steps, label="DP-SGD steps"))
        network.eval()
        targets = guidance_targets(state) if options.guide else ()
        state.model = GuidedGenerator(network.cpu(), domain, targets, records,
                                      options.candidate_factor, options.raking_iterations,
                                      expected_batch=settings.sample_rate * records,
                                      prior=state.model if targets or given else None,
                                      prior_fraction=options.prior_fraction)

    def _check_complete(self, domain: Domain) -> None:
        complete = self.options.complete
        unknown = [c for c in complete if c not in domain.attributes]
        if unknown:
            raise ConfigError(
                f"stage 'generator': complete names {unknown}, not modelled columns of the schema "
                f"(a derived_from column is filled in from its source); choose from "
                f"{list(domain.attributes)}"
            )
        if complete and len(set(complete)) == len(domain):
            raise ConfigError("stage 'generator': complete lists every column; leave it empty "
                              "to model them all, or leave at least one column to the marginals")

    def _context_columns(self, state: PipelineState, domain: Domain) -> list[int]:
        """Domain indices of the columns the network takes as given (all but ``complete``)."""
        complete = self.options.complete
        if not complete:
            return []  # the names were checked when the stage was planned
        if state.model is None:
            raise ConfigError("stage 'generator': complete needs a marginals stage before it "
                              "(it draws the other columns); put one first in the recipe")
        return [j for j, a in enumerate(domain.attributes) if a not in complete]

    def _persons(self, state: PipelineState, records: int) -> PersonRows | None:
        """The rows of each person (person level), or None (row level)."""
        k, person_codes = self.context.rows_per_person, state.person_codes
        if k is None and person_codes is None:
            return None
        if k is None or person_codes is None:
            raise ConfigError(
                "stage 'generator': person-level training needs both the plan's rows_per_person "
                f"(got {k}) and the bounded rows' person codes (got "
                f"{'none' if person_codes is None else 'an array'}); the pipeline sets both "
                "from data.person"
            )
        return PersonRows.from_codes(person_codes, k, records)

    def _records(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> float:
        """N̂: the public count, the marginals model's DP total, or a noisy count (recorded)."""
        if self.context.public_records is not None:
            return float(self.context.public_records)
        if not self.measures_count:
            if state.model is None:
                raise ConfigError(
                    "stage 'generator' takes the record count from a marginals stage "
                    "(records_from: marginals) but none ran before it. Put a marginals stage "
                    "first, set data.public_records, or set records_from: measure."
                )
            return max(1.0, float(state.model.total))
        count = measure_marginal(state.data, (), plan.noise["sigma_count"],
                                 self.count_sensitivity, source, ledger)
        return max(1.0, float(count.noisy_counts))


def _rows(data: CountSource) -> np.ndarray:
    """The encoded rows of a ``RowSource`` (read once: a recoded source builds them on access).
    The plan refuses the dask engine, which has none, before any data is read; this guards a
    caller that runs the stage by hand."""
    try:
        return cast(RowSource, data).codes
    except AttributeError:
        raise ConfigError(
            "stage 'generator' trains on the rows, which the 'dask' engine keeps on its "
            "workers (only counts come back). Use data.engine: local for recipes with a "
            "generator stage."
        ) from None


def _device(choice: str) -> torch.device:
    import torch

    if choice == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if choice == "cuda" and not torch.cuda.is_available():
        raise ConfigError("stage 'generator': device 'cuda' requested but no GPU is available; "
                          "use device: auto or cpu")
    return torch.device(choice)


def column_order(domain: Domain, model: SamplingModel | None) -> list[int]:
    """Domain column indices in modelling order: along the marginals model's junction tree
    (root clique first, then each clique's new attributes), else the schema order. Built from
    DP outputs and the public schema only."""
    tree = model.tree if isinstance(model, GraphicalModel) else None
    if tree is None:
        return list(range(len(domain)))
    ordered: list[str] = []
    for i in tree.order:
        ordered += [a for a in tree.cliques[i] if a not in ordered]
    ordered += [a for a in domain.attributes if a not in ordered]
    return list(domain.axes(ordered))


def guidance_targets(state: PipelineState) -> tuple[Target, ...]:
    """The marginals model's estimate of every measured clique (consistent and non-negative:
    post-processing of the noisy measurements), as raking targets."""
    if state.model is None or not state.measurements:
        return ()
    cliques = list(dict.fromkeys(tuple(m.clique) for m in state.measurements))
    if not isinstance(state.model, MarginalModel):
        return tuple(Target(m.clique, m.noisy_counts) for m in state.measurements)
    return tuple(Target(c, np.asarray(state.model.project(c))) for c in cliques)
