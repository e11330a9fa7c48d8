"""The domain step: DP bounds and DP categories for the columns whose schema gives none.

It runs before any other stage reads the table (the runner calls ``resolve_domain`` in
synthpriv.pipeline), on its own share of the budget (``budget.domain_share`` of the job's zCDP
ρ, split equally over the columns it resolves; by default the share that gives each of its
histograms the noise of MST's 1-way marginals, ``privacy.domain_budget.domain_share``;
``budget.domain_delta_share`` of δ for the discovery thresholds), and records its events in
the job's one Ledger:

* a numeric column without ``lower``/``upper``: a noisy histogram over public sign × power-of-two
  buckets (synthpriv.privacy.bounds); the bounds are read from it by post-processing (a DP
  quantile on its noisy CDF, ``read_bounds``) and then serve exactly as public bounds would
  (values outside are clipped, the fine grid spans them). When no bucket clears the noise the
  column is released all missing (a categorical column with no category), never refused, and
  ``domain_lines`` warns on the terminal. When the values heap discovery keeps (below) hold the
  column's rows within the noise, the bounds become their range (``privacy.bounds.heap_range``);
* a categorical column without ``categories``: DP partition selection (synthpriv.privacy.
  partition): values whose noisy count passes a threshold set from the δ share are kept, in
  sorted order; any other value is read as the column's ``other`` label, or as missing;
* a column of kind ``auto``: first its kind, from a noisy histogram of its cells' classes (text,
  fraction, whole number: synthpriv.kinds) read in a pass of its own; then, in the pass above,
  its bounds or categories as for a column of the kind decided. The plan fixes that pass's ρ
  before any data is read; what the pass runs depends on the kinds decided (DP outputs), and
  the weight of what does not run (a categorical column's heap histogram, a text or id
  column's histograms) goes to the columns decided categorical, whose discovery then runs at a
  lower σ and threshold (``privacy.domain_budget.realised_domain_noise``: same ρ and δ for
  every outcome; the ledger records what ran).

Sensitivity: each row is in one bucket / one value per column, so each histogram has L2
sensitivity 1 under add/remove (√2 under replace-one); per person (data.person: at most k rows
each, bounded before this step reads the table) k times that, and the discovery thresholds take
the per-person δ (synthpriv.privacy.partition). The other stages are then planned and
run on the resolved schema: their noise depends on the number of columns only (public).
"""

from __future__ import annotations

import copy
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthpriv.chunks import iter_chunks
from synthpriv.config import Job
from synthpriv.datetimes import format_times, parse_times, weekdays_of
from synthpriv.domain import Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.fraction_flip import fraction_domain
from synthpriv.kinds import (
    CLASSES,
    cell_classes,
    decide,
    decide_precision,
    decided_column,
    fraction_noise,
    number_cells,
    singletons,
)
from synthpriv.list_adoption import list_decision, membership
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import (
    MIN_EXPONENT,
    BoundsReading,
    Buckets,
    HeapRange,
    Present,
    YearBuckets,
    bucket_piles,
    carried_buckets,
    heap_range,
    occupancy_threshold,
    octave_shape,
    read_bounds,
)
from synthpriv.privacy.candidates import heap_selection, listed_selection
from synthpriv.privacy.domain_budget import (
    BRANCH_PAD,
    KIND_NOISE_FACTOR,
    RealisedNoise,
    date_refine_sigma,
    domain_share,
    plan_domain_noise,
    realised_domain_noise,
    record_branch,
    records_estimate,
    records_sigma,
    weekday_sigma,
)
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from synthpriv.privacy.refine import (
    DAY_SECONDS,
    date_runs,
    date_sub_counts,
    refined_bounds,
    refined_bucket,
    refined_date_bounds,
    sub_counts,
)
from synthpriv.privacy.weekdays import decided_weekdays, noisy_weekdays, weekday_counts
from synthpriv.public_lists import list_values, value_set
from synthpriv.rounds import is_narrow, lattice_values, narrow_values, round_values
from synthpriv.schema import (
    FINE_CELLS,
    WEEKDAY_NAMES,
    AutoColumn,
    CategoricalColumn,
    DatetimeColumn,
    IdColumn,
    NumericColumn,
    Schema,
    TextColumn,
    parse_schema,
)
from synthpriv.schema_infer import refuse_unmodelled
from synthpriv.stage import PipelineState, PlanContext, Stage, StagePlan

if TYPE_CHECKING:
    from synthpriv.plan import Plan
from synthpriv.table import coerce_numbers


def planning_domain(schema: Schema) -> Domain:
    """The encoded domain as the plan may know it before the domain step: a column the step
    resolves counts as its fine grid (numeric) or as one code (categorical, plus missing) until
    then. Stages plan on the number of columns only; their size checks run again on the
    resolved schema."""
    if not schema.unresolved:
        return TableEncoder(schema).domain
    sizes = {}
    for column in schema.modelled:
        if isinstance(column, AutoColumn):  # the larger of its possible domains: a fine grid
            size = FINE_CELLS
        elif isinstance(column, NumericColumn) and column.needs_bounds:
            size = column.bins or FINE_CELLS
        elif isinstance(column, CategoricalColumn) and column.discovered:
            size = 1
        elif isinstance(column, CategoricalColumn):
            size = len(column.categories)
        else:
            size = len(column.bin_edges()) - 1
        sizes[column.name] = size + int(column.missing)
    return Domain.from_sizes(sizes)


class DomainStage(Stage):
    """DP bounds and DP category discovery (see the module docstring). Not a recipe stage: the
    pipeline puts it first whenever the schema leaves a domain out."""

    name = "domain"
    person_level = True  # sensitivity × context.rows_per_person (synthpriv.persons)

    def __init__(self, job: Job, context: PlanContext) -> None:
        super().__init__({}, context, job.source)
        unresolved = job.schema.unresolved
        self.bounds = [c.name for c in unresolved if isinstance(c, NumericColumn)]
        self.categories = [c.name for c in unresolved if isinstance(c, CategoricalColumn)]
        self.kinds = job.schema.auto
        self.heaps = heap_columns(job.schema)
        self.dates = declared_dates(job.schema)  # an auto date's two histograms, planned
        budget = job.config.budget
        # public bounds: weekdays only (none when the job gives the domain step no budget)
        self.weekday_dates = weekday_only_dates(job.schema) if budget.domain_share != 0 else []
        # the δ its thresholds split (the small-table branch's stage: the default's spend)
        self.delta = self.job_delta = budget.domain_delta_share * budget.delta
        self.epsilon = budget.epsilon
        # DP estimates set by ``resolve``: per auto column, its non-empty cells (the noisy kind
        # histogram's total), and per auto column decided categorical, the share of those cells
        # the kept values hold (their noisy counts over that total): post-processing only
        self.present: dict[str, float] = {}
        self.kind_counts: dict[str, np.ndarray] = {}  # per auto column, its noisy class counts
        self.kind_sigma = 0.0  # and their σ (public: the plan's)
        # n̂ from those counts (``records_estimate``) and its σ (``records_sigma``): DP outputs
        # a discovered column's ``kept_rows`` carries for ``marginals.compress.missing_estimate``
        self.kinds_records: dict[str, float] | None = None
        # per auto column, the noisy count of the cells of the kind decided (numbers, or the
        # date format) with its σ: the DP bounds' seed reads it (privacy.bounds.seed)
        self.valued: dict[str, Present] = {}
        self.kept_shares: dict[str, float] = {}
        # per heap column, the values heap discovery kept with their noisy counts (DP outputs)
        self.heap_counts: dict[str, dict[float, int]] = {}
        # per heap column, its round candidates' noisy counts, released unthresholded (DP
        # outputs of the heap histogram: synthpriv.privacy.candidates)
        self.round_counts: dict[str, dict[float, int]] = {}
        # per heap column with 2+ heaps inside its DP bounds, the heaps' range test (DP figures)
        self.heap_ranges: dict[str, HeapRange] = {}
        # per column refined inside its end bucket, the noisy sub-bucket counts (DP outputs of
        # the bounds refinement, privacy.refine) and their exact counts (never released: tests)
        self.refinements: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # per auto column decided date, its noisy weekday counts (DP outputs, privacy.weekdays)
        # and their exact counts (never released: tests)
        self.weekday_histograms: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        # per discovered column, the threshold T its discovery used (public given the kinds)
        self.thresholds: dict[str, int] = {}
        # per numeric column whose DP bounds found nothing (released all missing), its kind (the
        # kinds pass's decision for an auto column: a DP output), for ``domain_lines``
        self.unbounded: dict[str, str] = {}
        # the small-table branch's stage: its kinds pass is planned as the default plan's (on
        # this share of its ρ, with the default weights), so both branches run pass 1 alike;
        # None: from the stage's own ρ
        self.kind_scale: float | None = None
        # the small-table branch chosen from the DP n̂ (pipeline.plan_job sets it; None: no
        # choice in the run), n̂ once read and whether the branch ran
        self.small: SmallTableBranch | None = None
        self.records_estimate: float | None = None
        self.small_taken = False

    def plan(self, rho: float) -> StagePlan:
        if rho <= 0:
            return StagePlan(self.name, 0.0, 0.0, [])
        noise = plan_domain_noise(rho, self.bounds, self.categories, self.delta,
                                  self.context.neighbouring, self.epsilon, self.kinds,
                                  self.context.rows_per_person or 1, self.heaps,
                                  self.kind_multiplier(rho), self.dates, self.weekday_dates)
        figures = {"sigma": noise.sigma, "noise_multiplier": noise.multiplier}
        if self.bounds or self.kinds:  # may get DP bounds (public): false buckets split over them
            figures["bounded_columns"] = len(self.bounds) + len(self.kinds)
        if noise.kind_sigma is not None:
            figures["kind_sigma"] = noise.kind_sigma
            figures["singleton_sigma"] = noise.singleton_sigma
            # the noisy cells a decimals class needs to make a column continuous and set its
            # precision (kinds.fraction_noise: public, the number of auto columns only)
            figures["decimals_bar"] = fraction_noise(len(self.kinds)) * noise.kind_sigma
        if noise.heap_sigma is not None:
            figures["heap_sigma"] = noise.heap_sigma
            figures["heap_threshold"] = float(noise.heap_threshold)
            figures["refine_sigma"] = noise.refine_sigma
        if self.kinds or self.dates or self.weekday_dates:  # a date (auto or declared): σ_d, σ_w
            figures["date_refine_sigma"] = date_refine_sigma(noise.sigma, noise.multiplier)
            figures["weekday_sigma"] = weekday_sigma(noise.sigma, noise.multiplier)  # σ_w
        if noise.threshold is not None or noise.heap_sigma is not None:
            figures["delta_thresholds"] = noise.delta_per_column * (
                len(self.categories) + len(self.kinds)) + noise.heap_delta * len(self.heaps)
        if noise.threshold is not None:
            figures["category_threshold"] = float(noise.threshold)
        if self.kinds:  # T after reallocation when every auto column is decided categorical
            every = realised_domain_noise(
                rho, self.bounds, self.categories, self.delta, self.context.neighbouring,
                self.epsilon, self.kinds, dict.fromkeys(self.kinds, "categorical"),
                self.context.rows_per_person or 1, self.heaps, self.kind_multiplier(rho),
                self.dates, self.weekday_dates)
            if every.category_threshold is not None:  # (public: the column counts only)
                figures["category_threshold_reallocated"] = float(every.category_threshold)
                figures["category_sigma_reallocated"] = every.category_sigma
        return StagePlan(self.name, 0.0, rho, noise.events, figures)

    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        """Nothing to run here: ``resolve`` ran before the table was encoded. Checks it did."""
        if state.encoder.schema.unresolved:
            raise RuntimeError("internal error: the domain step did not run before encoding")

    def resolve(
        self, job: Job, plan: StagePlan, ledger: Ledger, source: RandomSource,
        chunks: Iterable[pd.DataFrame] | None = None,
    ) -> Job:
        """Run the mechanisms on the table (``chunks``, else the job's file read in chunks),
        record their events, and return the job with its schema's kinds and domains filled in.
        The ledger records the events that ran for the kinds decided (``realised``: the plan's
        ρ and δ, reallocated; what this outcome left unused is recorded as "planned, not
        run")."""
        schema = job.schema
        bounds, categories = list(self.bounds), list(self.categories)
        realised = None
        if self.kinds:
            chunks = None if chunks is None else list(chunks)
            schema = self._decide_kinds(job, plan, source, chunks)
            plan = self._branch(plan)
            for name in self.kinds:
                column = schema.column(name)
                if isinstance(column, NumericColumn | CategoricalColumn):  # not text or id
                    (bounds if isinstance(column, NumericColumn) else categories).append(name)
            realised = self.realised(plan, schema)
            if chunks is not None:
                chunks = [conform(chunk, schema) for chunk in chunks]
        if chunks is None:
            chunks = iter_chunks(job.data_path, schema, job.config.data.chunk_rows)
        # a date/datetime column: days/seconds (synthpriv.datetimes) in calendar-year buckets
        buckets = {name: YearBuckets(schema.column(name).kind)
                   if isinstance(schema.column(name), DatetimeColumn)
                   else Buckets(schema.column(name).kind) for name in bounds}
        bucket_counts = {name: np.zeros(b.size, dtype=np.int64) for name, b in buckets.items()}
        value_counts: dict[str, Counter] = {name: Counter() for name in categories}
        heap_counts: dict[str, Counter] = {
            name: Counter() for name in bounds if name in self.heaps
            and not isinstance(schema.column(name), DatetimeColumn)}
        # a date column (auto decided date, or declared without public bounds): its days' counts
        # for the date refinement (privacy.refine)
        day_counts: dict[str, Counter] = {
            name: Counter() for name in bounds if (name in self.heaps or name in self.dates)
            and isinstance(schema.column(name), DatetimeColumn)}
        # and its cells' weekday counts for its weekday histogram (privacy.weekdays), as for a
        # declared date with public bounds
        weekday_exact = {name: np.zeros(7, dtype=np.int64)
                         for name in list(day_counts) + self.weekday_dates}
        for chunk in chunks:
            for name, grid in buckets.items():
                bucket_counts[name] += grid.counts(chunk[name].to_numpy(dtype=float))
            for name, counter in value_counts.items():
                counter.update(chunk[name].dropna().value_counts().to_dict())
            for name, counter in heap_counts.items():
                counter.update(exact_values(chunk[name], schema.column(name)))
            for name, counter in day_counts.items():
                counter.update(days_of(chunk[name], schema.column(name)))
            for name in weekday_exact:
                weekday_exact[name] += weekdays_in(chunk[name], schema.column(name))
        sigma = plan.noise["sigma"]
        found: dict[str, dict] = {}
        columns = int(plan.noise["bounded_columns"]) if buckets else 1  # false buckets: per job
        readings = {}  # per column: its noisy bucket counts, reading and octave shape (DP)
        self.unbounded = {}
        for name, grid in buckets.items():
            noisy = discrete_gaussian_histogram(bucket_counts[name], sigma, source)
            valued = self.valued.get(name)  # a DP output; None for a declared column
            reading = read_bounds(noisy, sigma, grid, columns, valued)
            shape = octave_shape(noisy, sigma, grid, reading, columns, valued)
            readings[name] = (noisy, reading, shape, columns, valued)
            found[name] = dp_bounds(schema.column(name), reading, shape)
            if reading is None:  # nothing above the noise: released all missing
                self.unbounded[name] = schema.column(name).kind
            if name in day_counts:  # sensitivity Δ₂ at the plan's z_d, z_w (domain_budget)
                self.refinements.pop(name, None)
                found[name] = refine_date_domain(schema.column(name), found[name], noisy,
                                                 sigma, grid, reading, day_counts[name],
                                                 plan.noise["date_refine_sigma"], source,
                                                 self.refinements)
                found[name] = weekday_domain(schema.column(name), found[name],
                                             weekday_exact[name], plan.noise["weekday_sigma"],
                                             source, self.weekday_histograms)
        for name in self.weekday_dates:  # public bounds: the weekday histogram only
            found[name] = weekday_domain(schema.column(name), {}, weekday_exact[name],
                                         plan.noise["weekday_sigma"], source,
                                         self.weekday_histograms)
        for name, counter in value_counts.items():
            column_sigma, threshold = sigma, int(plan.noise["category_threshold"])
            if name in self.kinds and realised.category_sigma is not None:  # reallocated
                column_sigma, threshold = realised.category_sigma, realised.category_threshold
            self.thresholds[name] = threshold
            column = schema.column(name)
            # the listed values are named candidates (no ρ, no δ: privacy.candidates); a public
            # list adopted from S (``kept``), or when S is empty from the membership test of
            # the listed values' noisy counts: post-processing of DP outputs
            kept, bars, noisy = listed_selection(counter, listed_values(column.lists),
                                                 column_sigma, threshold, source)
            listed, test = list_decision(kept, column.lists or [], noisy, column_sigma,
                                       column.other)
            found[name] = self._categories(column, kept, column_sigma, bars, listed)
            if test is not None:
                found[name]["adopted_list"]["test"] = {
                    "in_list": test.in_list, "sigma": test.sigma, "bar": test.bar}
            if name in self.present:  # an adopted list keeps every listed value, not only S
                held = (sum(kept.values()) if listed is None
                        else membership(listed, noisy, column_sigma).in_list)
                self.kept_shares[name] = kept_share(held, self.present[name])
        named = {}  # per heap column, its round values named from its DP bounds and shape
        for name, counter in heap_counts.items():
            named[name] = round_candidates(schema.column(name), found[name])
            heaps, rounds = heap_selection(counter, named[name], plan.noise["heap_sigma"],
                                           int(plan.noise["heap_threshold"]), source)
            self.heap_counts[name] = heaps
            self.round_counts[name] = rounds
            if found[name].get("kind") != "categorical":  # not released all missing
                noisy, reading, shape, columns, valued = readings[name]
                before = found[name]
                found[name] = self._heap_bounds(schema.column(name), found[name], noisy, sigma,
                                                buckets[name], reading, shape, heaps,
                                                plan.noise["heap_sigma"], columns, valued,
                                                int(plan.noise["heap_threshold"]))
                if bounds_of(found[name]) == bounds_of(before):  # not the heaps': refine
                    found[name] = self._refined(schema.column(name), found[name], noisy, sigma,
                                                buckets[name], reading, shape, counter,
                                                plan.noise["refine_sigma"], source)
                masses = point_masses(schema.column(name), found[name],
                                      list(heaps) + bucket_piles(noisy, sigma, buckets[name]))
                found[name]["point_masses"] = masses
                found[name]["heap_counts"] = heap_entries(heaps, masses,
                                                          plan.noise["heap_sigma"])
                found[name]["round_counts"] = round_entries(rounds, found[name], masses,
                                                            plan.noise["heap_sigma"])
        for name, (noisy, reading, _, columns, valued) in readings.items():
            if carried := bucket_entries(schema.column(name), found[name], noisy, sigma,
                                         buckets[name], reading, columns, valued):
                found[name]["bucket_counts"] = carried
        for name in self.kinds:  # zero-heavy fractions decided integer (synthpriv.fraction_flip)
            if name in readings and (flipped := fraction_domain(
                    name, found[name], readings[name][1], readings[name][0], sigma,
                    buckets[name], self.kind_counts[name], self.kind_sigma, len(self.kinds))):
                found[name] = flipped
        events = list(plan.events if realised is None else realised.events)
        events += [e for e in plan.events if realised is not None and e.label == BRANCH_PAD]
        if self.small is None:
            ledger.extend(events)
        else:  # pass 2 chosen from n̂: RDP only (privacy.domain_budget, the branch's argument)
            record_branch(ledger, events, "DP domain pass 2 (its share chosen from the DP row "
                          f"count n̂ = {self.records_estimate:.0f}: "
                          f"{'small-table' if self.small_taken else 'default'} branch)")
        raw = schema.model_dump()
        for column in raw["columns"]:
            entry = found.get(column["name"], {})
            if entry.get("kind") == "categorical" and column["kind"] != "categorical":
                column.clear()  # a numeric column with nothing above the noise: all missing
            column.update(entry)
            if column.get("precision") is not None and "upper" in entry:
                column["precision"] = precision_within(column["precision"], column["lower"],
                                                       column["upper"])
        resolved = copy.copy(job)
        resolved.schema = parse_schema(raw, f"{job.source}: the schema with its DP domain")
        return resolved

    def _branch(self, plan: StagePlan) -> StagePlan:
        """The domain plan pass 2 runs on: the small-table branch's when n̂ (the kinds pass's
        noisy class totals, ``records_estimate``: a DP output) is at most its public threshold,
        else ``plan``. Reads no data; n̂ is kept in ``records_estimate`` (printed: DP)."""
        if self.small is None:
            return plan
        self.records_estimate = records_estimate(list(self.kind_counts.values()),
                                                 plan.noise["kind_sigma"])
        self.small_taken = self.records_estimate <= self.small.below
        # pass 2 runs as the small branch's stage plans it (pass 1 at the default plan's noise,
        # as it ran; its thresholds on its δ); reset for a rerun
        small = self.small.stages[0][0]
        self.kind_scale = small.kind_scale if self.small_taken else None
        self.delta = small.delta if self.small_taken else self.job_delta
        return self.small.plan.stages[0] if self.small_taken else plan

    def kind_multiplier(self, rho: float) -> float | None:
        """The kinds pass's multiplier for this stage at ``rho``: None (from ``rho``), or with
        ``kind_scale`` the default plan's (its domain step at ρ·kind_scale)."""
        if self.kind_scale is None or not self.kinds:
            return None
        return KIND_NOISE_FACTOR * plan_domain_noise(
            rho * self.kind_scale, self.bounds, self.categories, self.delta,
            self.context.neighbouring, self.epsilon, self.kinds,
            self.context.rows_per_person or 1, self.heaps, dates=self.dates,
            weekday_dates=self.weekday_dates).multiplier

    def _heap_bounds(self, column: NumericColumn, domain: dict, noisy: np.ndarray, sigma: float,
                     grid: Buckets, reading: BoundsReading, shape: tuple, heaps: dict[float, int],
                     heap_sigma: float, columns: int, valued: Present | None,
                     heap_threshold: int) -> dict:
        """``domain`` (the column's DP bounds), or [smallest heap, largest heap] when its kept
        heaps hold its rows within the noise (``privacy.bounds.heap_range``: "a few codes", a
        year column of 7 values, a Likert scale, a flag) and both bounds are DP ones; a side
        whose end buckets show rows beyond its end heap keeps the reading's bound (``EndTest``:
        they would pile onto that heap). Nothing is spread at a heap's bound (``spread_clipped``):
        a tail the noise hid is clipped onto a heap, a value the column holds. Post-processing
        of the bucket histogram and the heaps' noisy counts (DP outputs): no budget, no event;
        ``heap_ranges`` keeps the test's figures.
        ``columns``, ``valued``: as the bounds were read with (``read_bounds``);
        ``heap_threshold``: the one heap discovery kept ``heaps`` at."""
        found = heap_range(noisy, sigma, grid, reading, heaps, heap_sigma, columns, valued,
                           heap_threshold)
        if found is None or column.lower is not None or column.upper is not None:
            return domain
        self.heap_ranges[column.name] = found
        if not found.codes:
            return domain
        lower, upper = found.bounds  # per side: the heap's, or the reading's (``EndTest``)
        within = dp_bounds(column, replace(reading, lower=lower, upper=upper), shape)
        at_heap = {"lower": lower == found.lower, "upper": upper == found.upper}
        return {**within,
                "spread_clipped": [s for s in within["spread_clipped"] if not at_heap[s]]}

    def _refined(self, column: NumericColumn, domain: dict, noisy: np.ndarray, sigma: float,
                 grid: Buckets, reading: BoundsReading | None, shape: tuple, values: Counter,
                 refine_sigma: float, source: RandomSource) -> dict:
        """``domain`` refined inside its end bucket (``refine_domain``), its noisy and exact
        sub-bucket counts kept in ``refinements``."""
        self.refinements.pop(column.name, None)
        return refine_domain(column, domain, noisy, sigma, grid, reading, shape, values,
                             refine_sigma, source, self.refinements)

    def realised(self, plan: StagePlan, schema: Schema) -> RealisedNoise:
        """Pass (2)'s noise for the kinds ``schema`` holds (decided under DP): the plan's ρ and
        δ reallocated to the columns decided categorical (privacy.domain_budget)."""
        decided = {}
        for name in self.kinds:
            column = schema.column(name)
            decided[name] = ("categorical" if isinstance(column, CategoricalColumn) else "date"
                             if isinstance(column, DatetimeColumn) else "numeric"
                             if isinstance(column, NumericColumn) else "none")
        realised = realised_domain_noise(
            plan.rho, self.bounds, self.categories, self.delta, self.context.neighbouring,
            self.epsilon, self.kinds, decided, self.context.rows_per_person or 1, self.heaps,
            self.kind_multiplier(plan.rho), self.dates, self.weekday_dates)
        if not np.isclose(realised.multiplier, plan.noise["noise_multiplier"], rtol=1e-12):
            raise RuntimeError(f"internal error: the domain plan's multiplier "
                               f"{plan.noise['noise_multiplier']} is not its ρ's "
                               f"({realised.multiplier})")
        return realised

    def _decide_kinds(
        self, job: Job, plan: StagePlan, source: RandomSource,
        chunks: list[pd.DataFrame] | None,
    ) -> Schema:
        """The schema with each auto column replaced by the kind read from its noisy class
        counts and noisy singleton count (synthpriv.kinds; σ = the plan's ``kind_sigma`` and
        ``singleton_sigma``): one pass over the table."""
        if chunks is None:
            chunks = iter_chunks(job.data_path, job.schema, job.config.data.chunk_rows)
        counts = {name: np.zeros(len(CLASSES), dtype=np.int64) for name in self.kinds}
        values: dict[str, Counter] = {name: Counter() for name in self.kinds}
        for chunk in chunks:
            for name, total in counts.items():
                classes, text = cell_classes(chunk[name])
                total += classes
                values[name].update(text.value_counts().to_dict())
        sigma, unique_sigma = plan.noise["kind_sigma"], plan.noise["singleton_sigma"]
        self.kind_sigma = sigma
        kinds, precisions = {}, {}
        columns = len(self.kinds)  # public: the decimals test's z (kinds.fraction_noise)
        for name, total in counts.items():
            noisy = discrete_gaussian_histogram(total, sigma, source)
            unique = discrete_gaussian_histogram(np.array([singletons(values[name])]),
                                                 unique_sigma, source)[0]
            kinds[name] = decide(noisy, sigma, unique, unique_sigma, columns)
            # the same noisy decimals classes (no new release): post-processing
            precisions[name] = decide_precision(noisy, sigma, columns)
            self.present[name] = float(noisy.sum())
            self.kind_counts[name] = noisy
            self.valued[name] = valued_cells(noisy, sigma, kinds[name], columns)
        histograms = list(self.kind_counts.values())
        self.kinds_records = {"records": records_estimate(histograms, sigma),
                              "records_sigma": records_sigma(histograms, sigma)}
        raw = job.schema.model_dump(exclude_defaults=True)
        raw["columns"] = [decided_column(c["name"], kinds[c["name"]], precisions[c["name"]])
                          | ({"lists": c["lists"]} if c.get("lists") and kinds[c["name"]]
                             == "categorical" else {})
                          if c["name"] in kinds else c for c in raw["columns"]]
        # every column decided id or text (post-processing of the DP counts): say why, as the
        # data-read draft does, not the schema's "declare a column" (the user declared auto)
        refuse_unmodelled(job.data_path, raw["columns"])
        return parse_schema(raw, f"{job.source}: the schema with its DP kinds")

    def _categories(self, column: CategoricalColumn, kept: dict[str, int], sigma: float,
                    bars: dict[str, float], listed: str | None = None) -> dict:
        """The kept values (``kept``: their noisy counts at ``sigma``) as categories, the ``other``
        label last (if declared); without one, values not kept are read as missing (if none is
        kept, the column is all missing) and ``kept_rows`` carries the kept values' rows (the sum
        of their noisy counts, σ·√k: a DP output) so the adaptive domain can tell a missing code
        holding dropped values' rows from one holding noise (marginals.compress), with the kinds
        pass's n̂ and its σ where auto columns ran it (``kinds_records``: DP outputs). ``kept_counts``
        carries each kept value's noisy count, σ and threshold (DP outputs, released in the
        manifest's schema) for the marginals stage to combine with its 1-way counts, with the bar
        it was selected at (``bars``: the threshold, or a paired label's PARTNER_BAR·σ); the
        ``other`` label's cell holds more than its own count: none for it. ``listed``: the
        public list adopted from ``kept`` (``list_domain``), if any."""
        counts = [{"count": float(c), "sigma": float(sigma), "threshold": bars[v]}
                  if v != column.other else None for v, c in kept.items()]
        if listed is not None:
            return list_domain(column, listed, dict(zip(kept, counts, strict=True)))
        if column.other is not None:
            return {"categories": list(kept) + [column.other] * (column.other not in kept),
                    "kept_counts": counts + [None] * (column.other not in kept)}
        rows = {"count": float(sum(kept.values())), "sigma": float(sigma) * len(kept) ** 0.5,
                **(self.kinds_records or {})}
        return {"categories": list(kept), "unknown_categories": "missing", "kept_rows": rows,
                "kept_counts": counts}


def listed_values(lists: list[str] | None) -> list[str]:
    """Every value of the public lists ``lists`` (a column's ``lists:``; installed ones only),
    sorted: discovery's named candidates for that column. Public: the schema only."""
    return sorted({v for name in lists or [] for v in value_set(name)})


def list_domain(column: CategoricalColumn, listed: str, counts: dict[str, dict | None]) -> dict:
    """A discovered column's domain when every value discovery kept is in public list
    ``listed`` (synthpriv.list_adoption: post-processing of the DP output S): the list's values
    (public: no threshold), the ``other`` label last if declared, values outside read as it or as
    missing as before. ``counts``: the kept values' noisy counts (DP outputs, reused by the
    marginals stage as today); a list member discovery did not keep gets none (its count was
    below the threshold and is never released: the recipe's 1-way marginal measures its cell).
    No ``kept_rows``: the rows of list members below the threshold now have cells of their own,
    so the kept values' rows no longer tell the missing code's content."""
    categories = list_values(listed)
    categories += [column.other] * (column.other is not None and column.other not in categories)
    entry = {"categories": categories, "kept_counts": [counts.get(c) for c in categories],
             "adopted_list": {"name": listed, "discovered": sum(
                 1 for value in counts if value != column.other)}}
    if column.other is None:
        entry["unknown_categories"] = "missing"
    return entry


def valued_cells(noisy: np.ndarray, sigma: float, kind: str, columns: int = 1) -> Present:
    """The noisy count of an auto column's cells that the kind decided reads as values (for a
    numeric kind, whole plus the decimals classes that clear the kind's test,
    ``kinds.number_cells``; for a date/datetime one, the format's class; ``noisy``: its class
    histogram at ``sigma`` per class, ``columns``: the run's auto columns) and that count's σ.
    Post-processing of DP counts: the DP bounds' seed reads it as evidence that the column holds
    data."""
    counts = dict(zip(CLASSES, np.asarray(noisy, dtype=float), strict=True))
    if kind in counts:
        return Present(counts[kind], sigma)
    return Present(*number_cells(noisy, sigma, columns))


def heap_columns(schema: Schema) -> list[str]:
    """The columns heap discovery measures: every numeric column whose bounds are bought (on
    the adaptive grid; not a date or datetime: no point masses there, docs/schema.md), then
    every auto column (whatever kind it is decided: the plan is fixed before any data is read).
    Public: the schema only."""
    return [c.name for c in schema.unresolved if isinstance(c, NumericColumn)
            and not isinstance(c, DatetimeColumn) and c.adaptive] + list(schema.auto)


def declared_dates(schema: Schema) -> list[str]:
    """The declared date/datetime columns (not auto) with neither bound public: the domain step
    refines their DP bounds and reads their weekdays under DP, as for an auto column decided date
    (``privacy.domain_budget.date_events``: two histograms at a heap column's weight, planned).
    A column with one public bound keeps it and runs neither (``refine_date_domain`` leaves a
    declared bound). Public: the schema only."""
    return [c.name for c in schema.unresolved if isinstance(c, DatetimeColumn)
            and c.lower is None and c.upper is None]


def weekday_only_dates(schema: Schema) -> list[str]:
    """The declared date/datetime columns with both bounds public and no ``weekdays``: the
    domain step reads their weekdays under DP (one weekday histogram each, planned at
    1/REFINE_NOISE_FACTOR² of a domain histogram: ``privacy.domain_budget.date_events``); their
    bounds need no refinement. Public: the schema only."""
    return [c.name for c in schema.columns if isinstance(c, DatetimeColumn)
            and not c.needs_bounds and c.weekdays is None]


def exact_values(values: pd.Series, column: NumericColumn) -> dict[float, int]:
    """How many cells of ``values`` hold each exact number (whole numbers for an integer
    column, as encoding reads them): the heap histogram's counts (sensitivity Δ₂: a row is in
    one value). Never released; only ``category_selection`` reads them."""
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    numbers = numbers[np.isfinite(numbers)]
    if column.kind == "integer":
        numbers = numbers.round()
    return numbers.astype(float).value_counts().to_dict()


def point_masses(column: NumericColumn, domain: dict, heaps: list[float]) -> list[float] | None:
    """The column's ``point_masses`` from its public ones and the values heap discovery kept
    and the bounds' one-value buckets show (``heaps``: DP outputs), those inside its bounds
    (``domain``: the DP or public bounds) and with no more decimals than its ``precision``;
    None if there are none. Post-processing."""
    lower, upper = domain["lower"], domain["upper"]
    values = sorted({float(v) for v in (column.point_masses or []) + heaps
                     if lower <= v <= upper and (column.precision is None
                                                 or round(v, column.precision) == v)})
    return values or None


def precision_within(precision: int, lower: float, upper: float) -> int | None:
    """The decided ``precision`` (a DP output), raised until some value with that many decimals
    lies within [lower, upper] (DP or public bounds; the schema refuses a precision none fits,
    and a refusal would turn on the data); None (full precision) if none up to 15 does.
    Post-processing: no budget, no event."""
    for places in range(precision, 16):
        scale = 10.0**places
        if math.ceil(lower * scale) <= math.floor(upper * scale):
            return places
    return None


def heap_entries(heaps: dict[float, int], masses: list[float] | None,
                 sigma: float) -> list[dict] | None:
    """``heap_counts`` for the resolved column: each kept heap that became a point mass
    (``masses``) with its noisy count and σ (DP outputs of ``category_selection``, released in the
    manifest's schema); None if none. Post-processing: no budget, no event."""
    entries = [{"value": float(v), "count": float(c), "sigma": float(sigma)}
               for v, c in heaps.items() if float(v) in (masses or ())]
    return entries or None


def round_candidates(column: NumericColumn, domain: dict) -> list[float]:
    """The values heap discovery measures without a threshold (synthpriv.privacy.candidates):
    every value of a continuous column's small lattice (``rounds.lattice_values``: its precision,
    decided or declared, on its DP bounds), every value of a narrow integer range
    (``rounds.narrow_values``), the round values
    (``rounds.round_values``) of a wide integer column on its DP bounds and grid shape
    (``domain``: ``dp_bounds``' output, DP outputs of the bucket histogram, read
    before the heap histogram is noised), the values its fine grid gives cells of their own
    (``NumericColumn.round_values``); none for another column. Post-processing of DP outputs
    and the schema: never of the exact values."""
    if not column.adaptive or "upper" not in domain:
        return []
    if column.kind == "continuous":  # a small lattice of its DP precision: every value
        precision = column.precision
        if precision is not None:
            precision = precision_within(precision, domain["lower"], domain["upper"])
        return [float(v) for v in lattice_values(domain["lower"], domain["upper"], precision)]
    if column.kind != "integer":
        return []
    shape = domain.get("grid_shape")
    lower, upper = math.ceil(domain["lower"]), math.floor(domain["upper"])
    if is_narrow(lower, upper):
        return [float(v) for v in narrow_values(lower, upper)]
    if upper - lower + 1 <= FINE_CELLS:
        return []
    breaks = None if shape is None else shape["breaks"]
    return [float(v) for v in round_values(lower, upper, breaks,
                                            None if shape is None else shape["mass"])]


def bounds_of(domain: dict) -> tuple[float | None, float | None]:
    """A resolved column's (lower, upper), None where it has none (all missing)."""
    return domain.get("lower"), domain.get("upper")


def refine_domain(column: NumericColumn, domain: dict, noisy: np.ndarray, sigma: float,
                  grid: Buckets, reading: BoundsReading | None, shape: tuple,
                  values: Counter, refine_sigma: float, source: RandomSource,
                  kept: dict | None = None) -> dict:
    """``domain`` (the column's DP bounds read from the buckets) refined inside its one bucket
    (``privacy.refine``): the sub-bucket counts of the bucket ``refined_bucket`` picks, from the
    column's exact ``values`` counts, noised at ``refine_sigma`` (the plan's σ_r: its
    DiscreteGaussianEvent is the plan's, sensitivity Δ₂, each row in at most one sub-bucket),
    and each side moved in past the sub-buckets that show no rows (``refined_bounds``).
    ``domain`` unchanged for a declared bound, a zeros-only reading or none, or a column the
    rule leaves alone. ``kept``: where to keep the (noisy, exact) sub-bucket counts, by column
    name."""
    if (reading is None or reading.zeros_only or not isinstance(grid, Buckets)
            or column.lower is not None or column.upper is not None or "upper" not in domain):
        return domain
    bucket = refined_bucket(noisy, sigma, grid, reading)
    if bucket is None:
        return domain
    exact = sub_counts(values, grid, [bucket])
    counts = discrete_gaussian_histogram(exact, refine_sigma, source)
    if kept is not None:  # the noisy counts (DP outputs) and the exact ones (tests only)
        kept[column.name] = (counts, exact)
    bounds = (domain["lower"], domain["upper"])
    lower, upper = refined_bounds(counts, refine_sigma, grid, bucket,
                                  (float(noisy[bucket]), sigma), bounds)
    if (lower, upper) == bounds:
        return domain
    return dp_bounds(column, replace(reading, lower=lower, upper=upper), shape)


def days_of(values: pd.Series, column: DatetimeColumn) -> dict[float, int]:
    """How many cells of a date (datetime) column's ``values`` (days or seconds since 1970)
    fall on each day, as its first day (second): the date refinement's counts (sensitivity
    Δ₂: a row is on one day). Never released; only ``date_sub_counts`` reads them."""
    unit = DAY_SECONDS if column.kind == "datetime" else 1.0
    numbers = pd.to_numeric(values, errors="coerce").dropna()
    days = np.floor(numbers.to_numpy(dtype=float) / unit) * unit
    return pd.Series(days).value_counts().to_dict()


def weekdays_in(values: pd.Series, column: DatetimeColumn) -> np.ndarray:
    """How many cells of a date (datetime) column's ``values`` (days or seconds since 1970) fall
    on each weekday, Monday first, in the column's zone (the day its cell shows, as decoding's
    ``on_weekdays`` reads it): the weekday histogram's exact counts (sensitivity Δ₂: a row is on
    one weekday). Never released; only ``weekday_domain`` reads them, to noise them."""
    numbers = pd.to_numeric(values, errors="coerce").dropna().to_numpy(dtype=float)
    return weekday_counts(weekdays_of(numbers, column.kind, column.timezone))


def weekday_domain(column: DatetimeColumn, domain: dict, exact: np.ndarray, sigma: float,
                   source: RandomSource, kept: dict | None = None) -> dict:
    """``domain`` with the column's noisy weekday counts (``exact`` noised at ``sigma``, the
    realised σ_w: its DiscreteGaussianEvent is the domain step's, sensitivity Δ₂, each row on
    one weekday) and, when the column has bounds (DP ones in ``domain``, or public) and declares
    no ``weekdays``, the weekdays ``decided_weekdays`` reads from them alone (post-processing).
    The histogram runs for every auto column decided date and every declared date the plan
    holds it for (its event is recorded whatever it shows). ``kept``: where to keep the (noisy,
    exact) counts, by column name."""
    counts = noisy_weekdays(exact, sigma, source)
    if kept is not None:  # the noisy counts (DP outputs) and the exact ones (tests only)
        kept[column.name] = (counts, np.asarray(exact))
    if ("upper" not in domain and column.upper is None) or column.weekdays is not None:
        return domain
    entry = dict(domain, weekday_counts={"counts": counts.tolist(), "sigma": sigma})
    days = decided_weekdays(counts, sigma)
    if days is not None:
        entry["weekdays"] = [WEEKDAY_NAMES[day] for day in days]
    return entry


def refine_date_domain(column: DatetimeColumn, domain: dict, noisy: np.ndarray, sigma: float,
                       grid: YearBuckets, reading: BoundsReading | None, days: Counter,
                       date_sigma: float, source: RandomSource,
                       kept: dict | None = None) -> dict:
    """A date column's DP bounds (``domain``, read from its year buckets) refined inside its
    end years (``privacy.refine.date_runs``): the sub-bucket counts of those years from the
    column's exact ``days`` counts, noised at ``date_sigma`` (the realised σ_d: its
    DiscreteGaussianEvent is the domain step's, sensitivity Δ₂, each row in at most one
    sub-bucket), each side moved in past the sub-buckets that show no rows
    (``refined_date_bounds``). The histogram runs whenever the column has a DP reading (one
    event per column, refined or not). ``domain`` unchanged for a declared bound or no
    reading. ``kept``: where to keep the (noisy, exact) sub-bucket counts, by column name."""
    if (reading is None or column.lower is not None or column.upper is not None
            or "upper" not in domain):
        return domain
    runs = date_runs(reading, noisy, date_sigma)
    exact = date_sub_counts(days, grid, runs)
    counts = discrete_gaussian_histogram(exact, date_sigma, source)
    if kept is not None:  # the noisy counts (DP outputs) and the exact ones (tests only)
        kept[column.name] = (counts, exact)
    lower, upper = domain["lower"], domain["upper"]
    at = 0
    for run in runs:
        part = counts[at:at + run.parts * len(run.years)]
        at += part.size
        held = (float(noisy[list(run.years)].sum()), sigma * math.sqrt(len(run.years)))
        low, high = refined_date_bounds(part, date_sigma, grid, run, held, (lower, upper))
        lower, upper = (low if run.sides[0] else lower), (high if run.sides[1] else upper)
    if (lower, upper) == (domain["lower"], domain["upper"]):
        return domain
    return dp_bounds(column, replace(reading, lower=lower, upper=upper))


def round_entries(rounds: dict[float, int], domain: dict, masses: list[float] | None,
                  sigma: float) -> list[dict] | None:
    """``round_counts`` for the resolved column: each candidate's noisy count and σ_h (DP
    outputs of ``heap_selection``, released in the manifest's schema) strictly inside its final
    bounds (``domain``) and not a point mass (whose own count ``heap_counts`` carries: one noisy
    count is combined once); None if none. Post-processing: no budget, no event."""
    entries = [{"value": float(v), "count": float(c), "sigma": float(sigma)}
               for v, c in rounds.items() if domain["lower"] < v < domain["upper"]
               and float(v) not in (masses or ())]
    return entries or None


def bucket_entries(column: NumericColumn, domain: dict, noisy: np.ndarray, sigma: float,
                   grid: Buckets | YearBuckets, reading: BoundsReading | None, columns: int,
                   valued: Present | None) -> list[dict] | None:
    """``bucket_counts`` for the resolved column (``domain``: its final bounds, DP or public):
    the noisy bucket counts ``privacy.bounds.carried_buckets`` picks, each with the histogram's
    σ (``sigma``, the plan's: the DP outputs of the bounds' one histogram event, already on the
    ledger), for the marginals stage to combine with its 1-way cells (``compress.with_buckets``).
    None for a column left non-adaptive, released all missing, or read zeros only (``outside:
    missing``). Post-processing: no budget, no event."""
    if (not column.adaptive or domain.get("kind") == "categorical"
            or domain.get("outside") == "missing"):
        return None
    carried = carried_buckets(noisy, sigma, grid, reading, domain["lower"], domain["upper"],
                              columns, valued)
    return [{"lower": lo, "upper": hi, "count": count, "sigma": float(sigma)}
            for lo, hi, count in carried] or None


def kept_share(held: float, present: float) -> float:
    """The share of a column's non-empty cells its kept values hold, from DP outputs only: the
    sum of their noisy counts ``held`` (``category_selection``'s kept values, σ·√k; or, when a
    public list was adopted, every listed value's named count, σ·√|L|: the list keeps them all,
    so the share of S alone said "about 0 %" of a State column adopted whole — hhs_breaches)
    over the noisy non-empty total ``present`` (the column's kind histogram, kind σ·√len(CLASSES)),
    clipped to [0, 1]."""
    if present <= 0:
        return 0.0
    return float(min(1.0, max(0.0, held / present)))


@dataclass
class SmallTableBranch:
    """The small-table branch of a job without a public row count (pipeline.plan_job): its plan
    and stages (the domain step at SMALL_TABLE_SHARE, its kinds pass at the default plan's
    noise; the same total ρ) and ``below``, the n̂ at or below which it runs. Public only."""

    plan: Plan
    stages: list[tuple[Stage, float]]
    below: float


def with_domain_step(
    job: Job, context: PlanContext, stages: list[tuple[Stage, float]],
    share: float | None = None,
) -> list[tuple[Stage, float]]:
    """``stages`` with the domain step first when the schema leaves a domain out: it takes
    ``budget.domain_share`` of the budget (``share`` when given: the small-table rule's, chosen
    by ``pipeline.plan_job`` from public figures) and the recipe's stages share the rest.
    Refuses, before any data is read, a column it cannot resolve with the budget configured."""
    unresolved = job.schema.unresolved
    budget = job.config.budget
    if not unresolved and (budget.domain_share == 0 or not weekday_only_dates(job.schema)):
        return stages  # (domain_share 0: a public-bounds date's weekdays are not bought)
    problems = []
    for column in unresolved:
        if isinstance(column, NumericColumn) and budget.domain_share == 0:
            problems.append(
                f"column '{column.name}' gives no {'lower' if column.lower is None else 'upper'}"
                " bound and budget.domain_share is 0: give its public bounds (lower, upper), or "
                "set budget.domain_share > 0 (or leave it out: a share is then chosen) to buy DP "
                "bounds")
        if isinstance(column, CategoricalColumn) and 0 in (budget.domain_share,
                                                          budget.domain_delta_share):
            key = "domain_share" if budget.domain_share == 0 else "domain_delta_share"
            problems.append(
                f"column '{column.name}' lists no categories and budget.{key} is 0: list its "
                f"public categories, or set budget.{key} > 0 (or leave it out: domain_share is "
                "then chosen, domain_delta_share is 0.1) for DP category discovery")
    if problems:
        raise ConfigError(f"{job.source}: " + "; ".join(problems) + ". Nothing was read.")
    share = budget.domain_share if share is None else share
    if share is None:
        share = domain_share(len(unresolved), len(job.schema.modelled), len(job.schema.auto),
                             len(heap_columns(job.schema)) + len(declared_dates(job.schema)),
                             len(weekday_only_dates(job.schema)))
    return [(DomainStage(job, context), share)] + [(s, w * (1 - share)) for s, w in stages]


def bounds_rows(noise: dict) -> float | None:
    """The rows DP bounds need in one octave of a column's values at the domain plan's σ (its
    ``noise`` figures; the occupancy threshold over the job's DP-bounded columns), None when no
    column may get DP bounds. Public: σ and the column counts only."""
    if "bounded_columns" not in noise:
        return None
    return occupancy_threshold(noise["sigma"], Buckets("integer").size,
                               columns=int(noise["bounded_columns"]))


def conform(table: pd.DataFrame, schema: Schema) -> pd.DataFrame:
    """A table read with the unresolved schema, as the resolved one reads it: a value outside a
    column's categories becomes its ``other`` label, or missing (the domain step's rule); the
    text of an auto column decided numeric is read as its numbers (``coerce_numbers``), decided
    date/datetime as its days/seconds (``parse_times``: a cell in another format is missing), and
    the cells of one decided text or id are dropped unread."""
    table = table.copy()
    for column in schema.columns:
        if (isinstance(column, DatetimeColumn) and column.coerce
                and not pd.api.types.is_float_dtype(table[column.name])):
            table[column.name] = parse_times(table[column.name], column.kind, column.format,
                                             column.timezone)
        elif (isinstance(column, NumericColumn) and column.coerce
                and not pd.api.types.is_float_dtype(table[column.name])):
            table[column.name] = coerce_numbers(table[column.name], column)
        elif isinstance(column, IdColumn | TextColumn) and column.name in table:
            table[column.name] = np.nan  # never read (as the readers drop them)
        elif isinstance(column, CategoricalColumn) and column.categories is not None:
            values = table[column.name]
            known = values.isin(column.categories) | values.isna()
            table[column.name] = values.where(known, column.other).where(values.notna())
    return table


ZEROS_ONLY_UPPER = 0.5  # a zeros-only reading's upper bound: 0 the one whole value below it
LOST_MOST = 0.5  # warn when the kept values hold less than this share of a column's cells


def bounds_text(column: NumericColumn | DatetimeColumn) -> str:
    """A bounded column's ``[lower, upper]`` as a user reads it: a date or datetime column's in
    its own format (not days or seconds since 1970), a number's with ``:g``."""
    if isinstance(column, DatetimeColumn):
        lower, upper = format_times(pd.Series([column.lower, column.upper]), column.kind,
                                    column.format, column.timezone)
        return f"[{lower}, {upper}]"
    return f"[{column.lower:g}, {column.upper:g}]"


def domain_lines(declared: Schema, resolved: Schema,
                 kept_shares: dict[str, float] | None = None,
                 thresholds: dict[str, int] | None = None,
                 unbounded: dict[str, str] | None = None) -> list[str]:
    """What the domain step chose, one line per column the schema ``declared`` left to it (the
    ``resolved`` schema's kinds, bounds and kept categories: DP outputs, in the manifest too),
    with ``kept_shares`` (``DomainStage.kept_shares``, DP estimates) the share of each auto
    column's non-empty cells its kept values hold, a warning for the columns where discovery
    lost most of them (below ``LOST_MOST``), and one for each column it released all missing.
    ``thresholds`` (``DomainStage.thresholds``): the threshold each discovery used (after
    reallocation: public given the kinds decided). ``unbounded`` (``DomainStage.unbounded``): the
    numeric columns whose DP bounds found nothing, with their kind (an auto column's from the
    kinds pass: a DP output), said as such — the resolved schema holds them as categorical with
    no category, which read "categorical (decided under DP)" though the kinds pass read numbers
    (benchmarks/README.md "smallkinds")."""
    kept_shares, thresholds, unbounded = kept_shares or {}, thresholds or {}, unbounded or {}
    lines, empty = [], []
    lost = [name for name, share in kept_shares.items() if share < LOST_MOST]
    for column in declared.unresolved + [declared.column(n) for n in weekday_only_dates(declared)]:
        chosen = resolved.column(column.name)
        kind = unbounded.get(column.name, chosen.kind)
        kind = f"{kind} (decided under DP)" if isinstance(column, AutoColumn) else kind
        if column.name in unbounded:
            domain = ("no DP bounds (no bucket of its values above the noise): released all "
                      "missing")
            empty.append(column.name)
        elif isinstance(chosen, DatetimeColumn):
            domain = bounds_text(chosen) + (f", written '{chosen.format}'"
                                            if chosen.format else "")
            if chosen.weekday_counts is not None:  # a DP output (privacy.weekdays)
                domain += (f", on {', '.join(chosen.weekdays)} only (DP weekday counts)"
                           if chosen.weekdays else ", on every weekday (DP weekday counts)")
        elif isinstance(chosen, NumericColumn):
            domain = f"[{chosen.lower:g}, {chosen.upper:g}]"
            dp_upper = isinstance(column, AutoColumn) or column.upper is None
            if dp_upper and chosen.kind == "integer" and chosen.upper == ZEROS_ONLY_UPPER:
                domain += (": only zeros were above the noise, so its other values are "
                           "released as 0")
            if isinstance(column, AutoColumn) and chosen.kind == "continuous":
                domain += (f", released with {chosen.precision} decimal"
                           f"{'s' * (chosen.precision != 1)}" if chosen.precision is not None
                           else ", released at full precision")
        elif isinstance(chosen, TextColumn):
            domain = "free text: released empty"
        elif isinstance(chosen, IdColumn):
            domain = "keys: released as fresh keys"
        else:
            shown = ", ".join(chosen.categories[:5]) + (", …" if len(chosen.categories) > 5 else "")
            domain = f"{len(chosen.categories)} categories kept ({shown or 'none: all missing'})"
            if (adopted := chosen.adopted_list) is not None:
                found = adopted.discovered
                domain = (f"{found} discovered categor{'y' if found == 1 else 'ies'}, "
                          f"all in {adopted.name}: "
                          f"categories = its {len(list_values(adopted.name))} values")
                if (test := adopted.test) is not None:
                    domain = (f"no category discovered; membership test: about "
                              f"{test.in_list:,.0f} rows in {adopted.name} (σ {test.sigma:,.0f}, "
                              f"bar {test.bar:,.0f}): categories = its "
                              f"{len(list_values(adopted.name))} values")
            if column.name in kept_shares:
                domain += (f", holding about {kept_shares[column.name]:.0%} of its non-empty "
                           "cells (DP estimate)")
            if column.name in thresholds:
                domain += f"; threshold {thresholds[column.name]:,} rows"
            if not chosen.categories or chosen.categories == [chosen.other]:
                empty.append(column.name)
        lines.append(f"  {column.name}: {kind}, {domain}")
    if empty:
        lines.append(
            f"WARNING: nothing in {', '.join(empty)} was above the domain step's noise (too few "
            "rows for its σ: see 'synthpriv plan'), so "
            + ("it is" if len(empty) == 1 else "they are") + " released all missing (or all "
            "'other'). To fix: give its public bounds (lower, upper; for text, its "
            "categories) in the schema, which costs no budget, or raise budget.epsilon (the rows "
            "needed fall as 1/ε); if the row count is public, set data.public_records (the "
            "small-table rule then gives the domain step more of the budget: see 'synthpriv "
            "plan').")
    if lost := [name for name in lost if name not in empty]:
        lines.append(
            f"WARNING: DP discovery kept values holding less than {LOST_MOST:.0%} of the "
            f"non-empty cells of {', '.join(lost)} (DP estimates from the noisy counts): the "
            "rest are released missing (or 'other'). Its values are too rare for the threshold "
            "'synthpriv plan' states: list public categories in the schema, or raise "
            "budget.epsilon or budget.domain_share.")
    return ["domain chosen under DP (the manifest's schema):"] + lines if lines else []


def dp_bounds(column: NumericColumn, found: BoundsReading | None,
              shape: tuple[tuple[float, float], ...] = ()) -> dict:
    """The column's bounds: public where given, else the DP ones (lower < upper kept). When
    no bucket is above the noise (a table too small for the domain step's σ), the column is
    released all missing — a categorical column with no category — rather than refused: a
    refusal would turn on the rows of one bucket (whether its count clears the noise), and
    so would bounds read from noise. ``domain_lines`` says so on the terminal. When the DP
    reading is zeros only (a DP output), an integer column's DP upper bound becomes 0.5 (0 its
    only whole value) and values outside are clipped, into 0's cell: its non-zero rows are
    released as 0, the one value the bounds measured — not as 1 (a bound nobody has) nor blank
    (read as missing, they were released blank in a column with no blank: Boston's ``zn`` 24 %,
    Caravan's code columns up to 6 %, the missing cell's noise; benchmarks/README.md
    "fakeblanks"); a continuous column becomes integer for it (0 alone was measured; its
    fractions' cells would draw values nobody has). With a public upper bound (or a lower one
    above 0) there is no such cell: values outside are read as missing (``outside: missing``),
    never clipped onto a bound.
    ``shape``: the noisy octave masses (``octave_shape``, a DP output) an adaptive column's fine
    grid follows (``grid_shape``, written by ``grid_shape_within``)."""
    if found is None:
        return {"name": column.name, "kind": "categorical", "missing": True,
                "categories": [], "unknown_categories": "missing"}
    lower = column.lower if column.lower is not None else found.lower
    upper = column.upper if column.upper is not None else found.upper
    if upper <= lower:  # a DP bound on the wrong side of the public one
        upper = lower + 1.0
    # a DP bound clips the tail the noise hid onto itself: decoding spreads it; not at the
    # bucket around 0 (|bound| ≤ 1 for integers, 2⁻¹⁶ for continuous columns), whose cell
    # holds the zeros columns pile up on, and where the guard puts a bound (privacy.bounds)
    zero = 2.0 ** MIN_EXPONENT.get(column.kind, 0)
    spread = [side for side, given, bound in (("lower", column.lower, lower),
                                              ("upper", column.upper, upper))
              if given is None and abs(bound) > zero]
    if found.zeros_only:  # nothing but zeros learnt: the rest is not a tail to spread
        if column.upper is None and lower <= 0:
            # whole values in [lower, 0.5]: 0 the only one, so no cell holds 1 by noise, and a
            # value clipped onto 0.5 lands in 0's cell: the non-zero rows are released as 0,
            # the one value measured, not blank; a continuous column the same, as whole 0s
            # (its cells of fractions would draw values nobody has: coerce rounds, then clips)
            whole = {} if column.kind == "integer" else {
                "kind": "integer", "precision": None, "coerce": True, "missing": True}
            return {"lower": lower, "upper": ZEROS_ONLY_UPPER, "spread_clipped": [], **whole}
        return {"lower": lower, "upper": upper, "spread_clipped": [], "missing": True,
                "outside": "missing"}
    domain = {"lower": lower, "upper": upper, "spread_clipped": spread}
    if column.adaptive and (shaped := grid_shape_within(column.kind, lower, upper, shape)):
        domain["grid_shape"] = shaped
    return domain


def grid_shape_within(kind: str, lower: float, upper: float,
                      shape: tuple[tuple[float, float], ...]) -> dict | None:
    """The ``grid_shape`` of the noisy octave masses ``shape`` within [lower, upper]: the
    segments' first values strictly inside as breaks (a segment starting at or below ``lower``
    adds its mass to the first; one from ``upper`` on is dropped: clipped onto the bound). None
    when it would move no cell: one segment, or an integer range of at most FINE_CELLS values
    (one cell each anyway). Post-processing of DP outputs only."""
    if kind == "integer" and math.floor(upper) - math.ceil(lower) + 1 <= FINE_CELLS:
        return None
    breaks: list[float] = []
    mass = [0.0]
    for start, weight in shape:
        if start >= upper:
            break
        if start > lower:
            breaks.append(float(start))
            mass.append(0.0)
        mass[-1] += float(weight)
    return {"breaks": breaks, "mass": mass} if breaks else None
