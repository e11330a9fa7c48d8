"""The marginals stages: select marginals, measure them with the discrete Gaussian mechanism,
estimate one model consistent with the measurements.

Sensitivity: each marginal is a histogram of L2 sensitivity Δ = 1 under add/remove (√2 under
replace-one); measuring k marginals with noise σ each costs k·Δ²/(2σ²) zCDP. Selection scores are
L1 errors of marginals, of sensitivity 1 under add/remove (2 under replace-one). Per person
(data.person, each person bounded to k rows before any stage reads the table) every one of these
is k times as large (``context.rows_per_person``: a person's k rows may fall in one cell).

Selections, one class each over the shared select–measure–estimate base ``MarginalsStage``,
listed in ``SELECTIONS`` (the recipe's ``stage: marginals`` with ``selection: NAME`` builds
``SELECTIONS[NAME]``):
* ``one_way`` (``IndependentStage``): every 1-way marginal, columns independent (a baseline);
* ``mst`` (``MstStage``): 1-way marginals, then a maximum spanning tree of pairs chosen by the
  exponential mechanism, measured and fitted as a graphical model (MST);
* ``aim`` (``AimStage``): adaptive rounds over a workload of all k-way marginals (AIM).

To add a selection: subclass ``MarginalsStage`` with its ``selection`` name, ``_events`` (what
it spends of ρ) and ``_fit`` (what it measures and estimates), add it to ``SELECTIONS`` and to
``MarginalsOptions.selection``.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Mapping
from dataclasses import replace
from itertools import combinations
from typing import Any, ClassVar, Literal

import numpy as np
from pydantic import Field, model_validator

from synthpriv.domain import CountSource
from synthpriv.errors import ConfigError
from synthpriv.marginals.aim import AimSettings, Sensitivity, aim_rounds, run_aim
from synthpriv.marginals.compress import (
    MAX_BINS,
    BucketGroup,
    Coarsening,
    RecodedCounts,
    bin_count,
    choose_coarsening,
    coarse_measurement,
    combine_levels,
    compose,
    identity,
    measured_grid,
    measured_groups,
    with_buckets,
    with_discovery,
    with_heaps,
)
from synthpriv.marginals.estimation import estimate
from synthpriv.marginals.independent import IndependentModel
from synthpriv.marginals.measurement import Measurement, estimate_total, measure_marginal
from synthpriv.marginals.selection import mst_select
from synthpriv.marginals.settings import (
    MODEL_CELLS_LIMIT,
    ONE_WAY_MOST,
    model_cells,
    one_way_batch,
    one_way_rounds,
    one_way_rule_rows,
    one_way_sigma,
    smallest_cap,
)
from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    ExponentialEvent,
    Ledger,
    PrivacyEvent,
    ZCDPEvent,
)
from synthpriv.privacy.budget import (
    batch_noise,
    first_round_noise,
    later_round_noise,
    round_noise,
)
from synthpriv.privacy.conversions import exponential_epsilon, gaussian_noise_multiplier, gaussian_rho
from synthpriv.privacy.domain_budget import ONE_WAY_SHARE
from synthpriv.privacy.mechanisms import histogram_l1_sensitivity, histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import CategoricalColumn, NumericColumn
from synthpriv.stage import (
    PipelineState,
    PlanContext,
    Stage,
    StageOptions,
    StagePlan,
    register,
)


class MarginalsOptions(StageOptions):
    selection: Literal["one_way", "mst", "aim"] = "one_way"
    sigma: float | None = Field(
        default=None, gt=0, description="one_way only: fixed noise std per cell; None = calibrate"
    )
    max_model_cells: int | None = Field(
        default=None, ge=1, description="cap on the model's cells; none: follows the table "
        "(AIM: d·n̂ up to 2,000,000, synthpriv.marginals.settings.model_cells; others: 2,000,000)",
    )
    iterations: int = Field(default=1000, ge=1, description="final estimation iterations")
    mst_one_way_fraction: float = Field(
        default=ONE_WAY_SHARE, gt=0, lt=1,
        description="MST: share of this stage's ρ for the 1-way marginals (the domain step's "
        "default share matches its noise: synthpriv.privacy.domain_budget.domain_share)",
    )
    mst_selection_fraction: float = Field(default=1 / 3, gt=0, lt=1)
    aim_workload_degree: int = Field(default=3, ge=2, le=4)
    aim_rounds_per_attribute: int = Field(default=16, ge=1)
    aim_gaussian_fraction: float = Field(default=0.9, gt=0, lt=1)
    aim_round_iterations: int = Field(default=100, ge=1)
    aim_max_rounds: int = Field(default=400, ge=1, description="cap on AIM's rounds (wide tables)")
    aim_max_workload: int = Field(
        default=1000, ge=1, description="workload marginals; a larger workload is sampled uniformly"
    )
    adaptive_domain: bool = Field(
        default=True, description="choose the bins of columns without edges/bins, and merge rare "
        "categories, from the noisy 1-way counts (post-processing; synthpriv.marginals.compress)",
    )
    max_bins: int = Field(default=MAX_BINS, ge=2, description="most bins of an adaptive column")
    point_mass_fraction: float = Field(
        default=0.05, ge=0, lt=1, description="share of this stage's ρ for the fine 1-way "
        "marginals of the adaptive columns (mst, aim): point masses found there keep their "
        "share (synthpriv.marginals.compress.fine_masses); 0: none",
    )
    domain_count_fraction: float = Field(
        default=0.01, gt=0, lt=1, description="share of this stage's ρ for the noisy record count "
        "that sizes the adaptive columns' measured grid (only without data.public_records)",
    )

    @model_validator(mode="after")
    def _consistent(self) -> MarginalsOptions:
        if self.sigma is not None and self.selection != "one_way":
            raise ValueError("a fixed sigma is supported with selection: one_way only")
        if self.mst_one_way_fraction + self.mst_selection_fraction >= 1:
            raise ValueError("mst_one_way_fraction + mst_selection_fraction must be below 1")
        return self


@register
class MarginalsStage(Stage):
    """Select, measure and estimate marginals: the shared base of the selections (see the module
    docstring). ``MarginalsStage(options, ...)`` builds the class of ``options['selection']``."""

    name = "marginals"
    Options = MarginalsOptions
    person_level = True  # sensitivity × context.rows_per_person (synthpriv.persons)
    requires = frozenset({"counts"})
    provides = frozenset({"measurements", "model"})
    selection: ClassVar[str]
    counted_degree: ClassVar[int] = 1  # the widest marginal every run counts (size check)
    adapts: ClassVar[bool] = True  # chooses the adaptive domain from its noisy 1-way counts
    merges_categories: ClassVar[bool] = True  # rare categories share a cell (MST's compression)

    def __new__(cls, *args: Any, **kwargs: Any) -> MarginalsStage:
        """The class of ``options['selection']`` (a bad name fails validation in ``__init__``);
        unpickling calls this with no arguments on the subclass itself."""
        if cls is MarginalsStage:
            options = args[0] if args else kwargs.get("options")
            selection = options.get("selection") if isinstance(options, Mapping) else None
            cls = SELECTIONS.get(selection if isinstance(selection, str) else "", IndependentStage)
        return super().__new__(cls)

    def __init__(self, options: Mapping[str, Any], context: PlanContext, source: str) -> None:
        super().__init__(dict(options), context, source)
        self._check_marginal_sizes(source)

    @property
    def _cell_limit(self) -> int:
        """The model-size cap the plan can check: the configured one, else the fixed limit."""
        return self.options.max_model_cells or MODEL_CELLS_LIMIT

    def _check_marginal_sizes(self, source: str) -> None:
        """Refuse, before any data is read, a selection that would count a marginal with more
        than ``max_model_cells`` cells (one_way and mst count every 1-way, mst every pair): a
        clear error instead of an out-of-memory kill. AIM skips such candidates itself."""
        domain, limit = self.context.domain, self._cell_limit
        degree = self.counted_degree
        largest = max(combinations(domain.attributes, min(degree, len(domain))), key=domain.size)
        if domain.size(largest) > limit:
            raise ConfigError(
                f"{source}: the {self.options.selection} selection counts the marginal "
                f"{'×'.join(largest)} with {domain.size(largest):,} cells, above "
                f"max_model_cells = {limit:,}. Use coarser bins or fewer categories for "
                f"{', '.join(largest)}, or raise pipeline.stages.marginals.max_model_cells."
            )

    @property
    def sensitivity(self) -> Sensitivity:
        relation = self.context.neighbouring
        k = self.context.rows_per_person or 1  # data.person: a person's k rows (1: one row)
        return Sensitivity(histogram_l1_sensitivity(relation, k),
                           histogram_l2_sensitivity(relation, k))

    def plan(self, rho: float) -> StagePlan:
        if rho <= 0:
            return StagePlan(self.name, 0.0, 0.0, [])
        rho_count = self.options.domain_count_fraction * rho if self._counts_records else 0.0
        events, noise = [], {}
        if rho_count:
            multiplier = gaussian_noise_multiplier(rho_count)
            events.append(DiscreteGaussianEvent(
                multiplier, 1, label="record count (sizes the adaptive grid and AIM's model)"))
            noise["sigma_count"] = multiplier * self.sensitivity.l2
        rho_fine, fine_events, fine_noise = self._point_mass_plan(rho)
        selected, figures = self._events(rho - rho_count, len(self.context.domain), rho_fine)
        return StagePlan(self.name, 0.0, rho, [*events, *fine_events, *selected],
                         {**figures, **noise, **fine_noise})

    @property
    def _fine_columns(self) -> list[str]:
        """The columns whose fine 1-way marginal the stage measures (public: every column that
        may adapt, in the domain's order), none when the stage does not adapt."""
        if not (self.options.adaptive_domain and self.adapts and self.options.point_mass_fraction):
            return []
        return [a for a in self.context.domain.attributes if a in self.context.adaptive]

    def _point_mass_plan(self, rho: float) -> tuple[float, list[PrivacyEvent], dict[str, float]]:
        """ρ, events and noise of the fine 1-way marginals of the adaptive columns: one histogram
        each (sensitivity that of the histograms), ``point_mass_fraction`` of the stage's ρ."""
        columns = len(self._fine_columns)
        if not columns:
            return 0.0, [], {}
        rho_fine = self.options.point_mass_fraction * rho
        multiplier = gaussian_noise_multiplier(rho_fine, columns)
        event = DiscreteGaussianEvent(
            multiplier, columns, label="fine 1-way marginals of the adaptive columns")
        return rho_fine, [event], {"sigma_fine": multiplier * self.sensitivity.l2}

    def _measure_fine(
        self, fine: CountSource, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> dict[str, Measurement]:
        """The planned fine 1-way marginals (every planned column, whatever kind the domain step
        decided, so the events run are the plan's whatever the data)."""
        if "sigma_fine" not in plan.noise:
            return {}
        columns = self._fine_columns
        fine.marginals([(a,) for a in columns])
        return {a: measure_marginal(fine, (a,), plan.noise["sigma_fine"], self.sensitivity.l2,
                                    source, ledger) for a in columns}

    @abstractmethod
    def _events(
        self, rho: float, d: int, reserved: float = 0.0
    ) -> tuple[list[PrivacyEvent], dict[str, float]]:
        """The events the selection runs with zCDP ``rho`` on ``d`` columns, and its noise;
        ``reserved`` of ``rho`` goes to the fine 1-way marginals (``_point_mass_plan``)."""

    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        from threadpoolctl import threadpool_limits

        # One BLAS thread: the fits' BLAS calls are small and OpenBLAS's second thread mostly
        # spins. Adult ε = 10, seeded, quiet machine: 33.4 → 26.7 CPU s for 0.8 s more wall
        # (benchmarks/README.md, "blas1"); the release is the same bytes.
        with threadpool_limits(limits=1, user_api="blas"):
            state.measurements, state.model = self._fit(state, plan, ledger, source)

    @abstractmethod
    def _fit(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> tuple[list[Measurement], Any]:
        """Measure (recording every mechanism in ``ledger``) and estimate: the measurements and
        the model."""

    @property
    def _counts_records(self) -> bool:
        """Whether the stage measures a record count to size the adaptive grid (and AIM's
        model): adaptive columns, a selection that adapts (mst, aim), and no public count. A job
        without adaptive columns buys none for the model alone: its cap is then the limit."""
        context, options = self.context, self.options
        return (options.adaptive_domain and self.adapts
                and bool(context.adaptive) and context.public_records is None)

    def _measure_one_way(
        self, data: CountSource, sigma: float, ledger: Ledger, source: RandomSource
    ) -> list[Measurement]:
        """Every 1-way marginal of ``data`` with noise σ (one pass counts them all)."""
        data.marginals([(a,) for a in data.domain.attributes])
        return [measure_marginal(data, (a,), sigma, self.sensitivity.l2, source, ledger)
                for a in data.domain.attributes]

    def _records(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> float | None:
        """n̂: the public record count or, when the plan bought one, a noisy count (the plan's
        ``sigma_count``: a histogram of one cell, sensitivity ≤ the histogram's); else None."""
        if self.context.public_records is not None:
            return float(self.context.public_records)
        if "sigma_count" not in plan.noise:
            return None
        count = measure_marginal(state.data, (), plan.noise["sigma_count"],
                                 self.sensitivity.l2, source, ledger)
        return max(float(count.noisy_counts), 1.0)

    def _measured_grid(
        self, state: PipelineState, records: float | None, sigma: float
    ) -> Coarsening | None:
        """The grid the adaptive columns' 1-way marginals are measured on, sized by n̂
        (``records``). None when no column adapts."""
        if not (self.options.adaptive_domain and self.context.adaptive) or records is None:
            return None
        grid = measured_grid(state.encoder.schema, state.data.domain, records, sigma)
        return grid if grid.changed else None

    @staticmethod
    def _with_discovery(state: PipelineState, one_way: list[Measurement]) -> list[Measurement]:
        """The 1-way measurements with each discovered column's cells combined with the domain
        step's noisy counts of its kept values (``compress.with_discovery``: post-processing of
        DP outputs, no budget), so every later choice and fit sees the combined counts."""
        schema = state.encoder.schema
        return [with_discovery(column, m) if isinstance(
                    column := schema.column(m.clique[0]), CategoricalColumn) else m
                for m in one_way]

    @staticmethod
    def _with_heaps(state: PipelineState,
                    fine_one_way: Mapping[str, Measurement]) -> dict[str, Measurement]:
        """The fine 1-way measurements with each heap's own cell combined with the domain step's
        noisy count of that heap (``compress.with_heaps``: post-processing of DP outputs, no
        budget), before the levels are combined and ``compose`` reads them."""
        schema = state.encoder.schema
        return {a: with_heaps(schema.column(a), m) for a, m in fine_one_way.items()}

    @staticmethod
    def _with_buckets(state: PipelineState, one_way: list[Measurement],
                      combined: Mapping[str, Measurement],
                      grid: Coarsening | None,
                      ) -> tuple[dict[str, Measurement], dict[str, list[BucketGroup]]]:
        """``combined`` (the adaptive columns' grid-level 1-way counts, both levels combined;
        else their grid measurement) with the DP bounds' noisy bucket counts combined in
        (``compress.with_buckets``: post-processing of DP outputs, no budget), before the
        adaptive domain is chosen from them; and per such column the bucket groups combined
        (``compress.measured_groups``), for the masses (``compress.bucket_masses``)."""
        schema = state.encoder.schema
        out, groups = dict(combined), {}
        for m in one_way:
            column = schema.column(name := m.clique[0])
            if isinstance(column, NumericColumn) and column.adaptive and column.bucket_counts:
                to_grid = (grid.maps[name] if grid is not None
                           else np.arange(len(np.atleast_1d(m.noisy_counts))))
                before = combined.get(name, m)
                groups[name] = measured_groups(column, before, to_grid)
                out[name] = with_buckets(column, before, to_grid)
        return out, groups

    def _adapt(
        self, state: PipelineState, data: CountSource, one_way: list[Measurement],
        fine: CountSource, grid: Coarsening | None,
        fine_one_way: Mapping[str, Measurement] | None = None,
    ) -> tuple[CountSource, list[Measurement]]:
        """The adaptive domain (synthpriv.marginals.compress): chosen from the noisy 1-way
        measurements on the measured grid, by post-processing only (no budget). Later marginals
        are counted on it from the ``fine`` codes, and the sample stage draws fine cells back
        within its cells."""
        schema = state.encoder.schema
        one_way = self._with_discovery(state, one_way)
        if not self.options.adaptive_domain:
            return data, one_way
        adaptive = {c.name for c in schema.modelled if isinstance(c, NumericColumn) and c.adaptive}
        fine_one_way = self._with_heaps(state, {a: m for a, m in (fine_one_way or {}).items()
                                                if a in adaptive})
        if grid is None and fine_one_way:
            grid = identity(fine.domain)
        combined = {m.clique[0]: combine_levels(m, grid.maps[m.clique[0]], fine_one_way[m.clique[0]])
                    for m in one_way if m.clique[0] in fine_one_way}
        combined, buckets = self._with_buckets(state, one_way, combined, grid)
        records = float(self.context.public_records or estimate_total(one_way))
        chosen = choose_coarsening(
            schema, data.domain, one_way, records, max_bins=self.options.max_bins,
            merge_categories=self.merges_categories, combined=combined, buckets=buckets,
            grid=grid,
        )
        bins = {m.clique[0]: bin_count(records, float(np.max(m.sigma)), self.options.max_bins)
                for m in one_way if m.clique[0] in fine_one_way}
        total = chosen if grid is None else compose(
            grid, chosen, fine_one_way, frozenset(c.name for c in schema.modelled if c.missing),
            bins)
        if not total.changed:
            return data, one_way
        state.coarsening = total
        state.data = RecodedCounts(fine, total)
        return state.data, [coarse_measurement(combined.get(m.clique[0], m), chosen, grid, total)
                            for m in one_way]


class IndependentStage(MarginalsStage):
    """``one_way``: the noisy 1-way marginals are the whole model (columns independent)."""

    selection = "one_way"
    adapts = False

    def plan(self, rho: float) -> StagePlan:
        d = len(self.context.domain)
        if self.options.sigma is not None:  # fixed noise: costs what it costs
            multiplier = self.options.sigma / self.sensitivity.l2
            return self._one_way_plan(gaussian_rho(multiplier, d), fixed=True)
        if rho <= 0:
            return StagePlan(self.name, 0.0, 0.0, [])
        return self._one_way_plan(rho, fixed=False)

    def _one_way_plan(self, rho: float, fixed: bool) -> StagePlan:
        events, noise = self._events(rho, len(self.context.domain))
        return StagePlan(self.name, 0.0, rho, events, noise, fixed=fixed)

    def _events(
        self, rho: float, d: int, reserved: float = 0.0
    ) -> tuple[list[PrivacyEvent], dict[str, float]]:
        multiplier = gaussian_noise_multiplier(rho, d)
        events: list[PrivacyEvent] = [DiscreteGaussianEvent(multiplier, d, label="1-way marginals")]
        return events, {"sigma_one_way": multiplier * self.sensitivity.l2,
                        "noise_multiplier": multiplier}

    def _fit(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> tuple[list[Measurement], IndependentModel]:
        measurements = self._with_discovery(state, self._measure_one_way(
            state.data, plan.noise["sigma_one_way"], ledger, source))
        return measurements, IndependentModel.from_measurements(state.data.domain, measurements)


class MstStage(MarginalsStage):
    """``mst``: 1-way marginals, a maximum spanning tree of pairs chosen by the exponential
    mechanism, its pairs measured, a graphical model fitted (McKenna et al. 2021)."""

    selection = "mst"
    counted_degree = 2

    def _events(
        self, rho: float, d: int, reserved: float = 0.0
    ) -> tuple[list[PrivacyEvent], dict[str, float]]:
        """MST's thirds; the fine 1-way marginals' ``reserved`` comes out of the pairs' third,
        so the 1-way noise stays the one the domain step matches (privacy.domain_budget)."""
        options = self.options
        rho_one = options.mst_one_way_fraction * rho
        rho_select = options.mst_selection_fraction * rho
        rho_pairs = rho - rho_one - rho_select - reserved
        one = gaussian_noise_multiplier(rho_one, d)
        pairs = gaussian_noise_multiplier(rho_pairs, d - 1)
        epsilon = exponential_epsilon(rho_select, d - 1)
        events = [
            DiscreteGaussianEvent(one, d, label="1-way marginals"),
            ExponentialEvent(epsilon, d - 1, label="MST edge selection"),
            DiscreteGaussianEvent(pairs, d - 1, label="2-way marginals of the tree"),
        ]
        noise = {"sigma_one_way": one * self.sensitivity.l2,
                 "sigma_two_way": pairs * self.sensitivity.l2, "selection_epsilon": epsilon}
        return events, noise

    def _fit(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> tuple[list[Measurement], Any]:
        sigma = plan.noise["sigma_one_way"]
        fine = state.data
        records = self._records(state, plan, ledger, source)
        grid = self._measured_grid(state, records, sigma)
        data = fine if grid is None else RecodedCounts(fine, grid)
        fine_one_way = self._measure_fine(fine, plan, ledger, source)
        measurements = self._measure_one_way(data, sigma, ledger, source)
        data, measurements = self._adapt(state, data, measurements, fine, grid, fine_one_way)
        independent = IndependentModel.from_measurements(data.domain, measurements)
        epsilon = plan.noise["selection_epsilon"]
        tree = mst_select(data, independent.project, epsilon, self.sensitivity.l1,
                          source.numpy_generator())
        ledger.record(ExponentialEvent(epsilon, len(tree), label="MST edge selection"))
        sigma_pairs = plan.noise["sigma_two_way"]
        measurements += [measure_marginal(data, pair, sigma_pairs, self.sensitivity.l2, source,
                                          ledger) for pair in tree]
        model = estimate(data.domain, measurements, iterations=self.options.iterations,
                         max_cells=self._cell_limit)
        return measurements, model


class AimStage(MarginalsStage):
    """``aim``: adaptive rounds over a workload of k-way marginals (McKenna et al. 2022), spent
    through a zCDP filter on the ledger (synthpriv.marginals.aim)."""

    selection = "aim"
    # AIM keeps every category (its reference code, private-pgm's aim.py, compresses nothing):
    # its size screen already bounds the model, and a merged cell is decoded apart from the other
    # columns (Adult's rare countries). Tuned on: Adult, checked on Wage and Default
    # (benchmarks/README.md, "Adult without hand edges").
    merges_categories = False

    def _aim_settings(self, records: float | None = None, rho: float | None = None
                      ) -> AimSettings:
        """AIM's settings; without a configured ``max_model_cells`` the cap follows n̂
        (``records``: public or DP), d and the domain (``settings.model_cells``), or is the
        limit when no n̂ is known (no public count and no adaptive column to buy one for).
        With n̂, AIM's ``rho`` and adaptive columns, the 1-way round's noise follows n̂
        (``settings.one_way_sigma``, ``budget.first_round_noise``: lower on a small table)."""
        options = self.options
        cells = options.max_model_cells
        if cells is None:
            cells = MODEL_CELLS_LIMIT if records is None else model_cells(
                records, len(self.context.domain), self._smallest_cap)
        settings = AimSettings(
            options.aim_workload_degree, options.aim_rounds_per_attribute,
            options.aim_gaussian_fraction, cells,
            options.aim_round_iterations, options.iterations,
            options.aim_max_rounds, options.aim_max_workload,
        )
        d = len(self.context.domain)
        if records is None or rho is None or not (options.adaptive_domain
                                                  and self.context.adaptive) or one_way_batch(
                aim_rounds(settings, d), d, options.aim_gaussian_fraction):
            return settings  # a wide table's 1-way batch already takes ONE_WAY_MOST
        first = first_round_noise(rho, aim_rounds(settings, d), options.aim_gaussian_fraction, d,
                                  min(one_way_sigma(records) / self.sensitivity.l2,
                                      self._few_columns(rho, aim_rounds(settings, d), d)),
                                  ONE_WAY_MOST)
        return replace(settings, one_way_multiplier=first)

    def _few_columns(self, rho: float, rounds: int, d: int) -> float:
        """The 1-way round's multiplier on a table of few columns: that of
        ``settings.one_way_rounds`` rounds sharing AIM's ``rho`` (the rounds' own when the
        workload has as many candidate marginals as rounds). Public: ρ, d, the options."""
        fewer = one_way_rounds(rounds, d, self.options.aim_workload_degree)
        return round_noise(rho, fewer, self.options.aim_gaussian_fraction)[0]

    @property
    def _smallest_cap(self) -> int:
        """The least cap AIM runs under (``smallest_cap``: its 1-way model, its largest 2-way
        marginal): adaptive columns at ``max_bins`` cells when the adaptive domain is on
        (public)."""
        coarse = ({name: self.options.max_bins for name in self.context.adaptive}
                  if self.options.adaptive_domain else None)
        return smallest_cap(self.context.domain, coarse)

    def _events(
        self, rho: float, d: int, reserved: float = 0.0
    ) -> tuple[list[PrivacyEvent], dict[str, float]]:
        """AIM reserves ``rho`` less ``reserved`` for its adaptive rounds (a zCDP filter when it
        runs)."""
        rho -= reserved
        rounds = aim_rounds(self._aim_settings(), d)
        alpha = self.options.aim_gaussian_fraction
        batch = one_way_batch(rounds, d, alpha)  # d·α > rounds: d rounds cannot hold them
        first = (batch_noise(rho, rounds, alpha, d, ONE_WAY_MOST)[0] if batch
                 else round_noise(rho, rounds, alpha)[0])
        events: list[PrivacyEvent] = [
            ZCDPEvent(rho, label="AIM rounds (adaptive; actual events in the ledger)")]
        noise = {"sigma_first_rounds": first * self.sensitivity.l2, "max_rounds": rounds,
                 "aim_rho": rho}
        if batch:  # the plan states the rule: the 1-way round's share of AIM's ρ
            noise["one_way_batch_share"] = ONE_WAY_MOST
        elif self.options.adaptive_domain and self.context.adaptive:
            noise.update(self._one_way_figures(rho, rounds, d, first))
        if self.options.max_model_cells is not None or self.context.public_records is not None:
            noise["max_model_cells"] = self._aim_settings(
                self.context.public_records).max_model_cells
        return events, noise

    def _one_way_figures(self, rho: float, rounds: int, d: int, own: float) -> dict[str, float]:
        """The plan's figures for AIM's 1-way round on a small table (``_aim_settings``), public:
        below ``one_way_rule_rows`` rows the 1-way round is measured at σ = n̂/(2·GRID_CELLS_MIN),
        never below ``sigma_one_way_least`` (MST's 1-way share of AIM's ρ), and the later rounds
        share what it leaves at σ up to ``sigma_later_rounds_most`` (above ``sigma_first_rounds``,
        the rounds' own σ, which is then the 1-way round's most). With a public n̂ the run's own
        figures: ``sigma_one_way_round`` and ``sigma_later_rounds`` (the largest σ of the rounds
        after it; annealing only lowers it). On a table of few columns (``settings.one_way_rounds``
        below the rounds) the 1-way round's most is ``sigma_one_way_few_columns``, and the rule
        rows follow it."""
        alpha, l2 = self.options.aim_gaussian_fraction, self.sensitivity.l2
        least = first_round_noise(rho, rounds, alpha, d, 0.0, ONE_WAY_MOST)
        few = self._few_columns(rho, rounds, d)
        most = first_round_noise(rho, rounds, alpha, d, few, ONE_WAY_MOST)
        figures = {"one_way_rule_rows": one_way_rule_rows(most * l2),
                   "sigma_one_way_least": least * l2,
                   "sigma_later_rounds_most": self._later(rho, rounds, d, least, own) * l2}
        if most < own:
            figures["sigma_one_way_few_columns"] = most * l2
        if self.context.public_records is not None:
            wanted = min(one_way_sigma(self.context.public_records) / l2, few)
            first = first_round_noise(rho, rounds, alpha, d, wanted, ONE_WAY_MOST)
            figures["sigma_one_way_round"] = first * l2
            figures["sigma_later_rounds"] = self._later(rho, rounds, d, first, own) * l2
        return figures

    def _later(self, rho: float, rounds: int, d: int, first: float, own: float) -> float:
        """The later rounds' multiplier after a 1-way round at ``first`` (``RoundBudget.spend_first``:
        re-planned only below the rounds' ``own``)."""
        if first >= own:
            return own
        return later_round_noise(rho, rounds, self.options.aim_gaussian_fraction, d, first)[0]

    def _fit(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> tuple[list[Measurement], Any]:
        fine = state.data
        records = self._records(state, plan, ledger, source)
        settings = self._aim_settings(records, plan.noise["aim_rho"])
        first = (plan.noise["sigma_first_rounds"] if settings.one_way_multiplier is None
                 else settings.one_way_multiplier * self.sensitivity.l2)
        grid = self._measured_grid(state, records, first)
        data = fine if grid is None else RecodedCounts(fine, grid)
        fine_one_way = self._measure_fine(fine, plan, ledger, source)
        budget = ledger.open_filter(plan.noise["aim_rho"], "AIM rounds (adaptive)")
        return run_aim(
            data, settings, self.sensitivity, source, budget,
            adapt=lambda data, one_way: self._adapt(state, data, one_way, fine, grid,
                                                    fine_one_way),
        )


SELECTIONS: dict[str, type[MarginalsStage]] = {
    stage.selection: stage for stage in (IndependentStage, MstStage, AimStage)
}
