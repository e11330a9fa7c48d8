"""The one job object: plan → read → hold-back → stages → release, with hooks for progress and timing.

``SynthesisJob`` is the only place a job is assembled. The command line (run, sweep, plan,
evaluate), the Python API (synthpriv.api), the shadow-model attack and the benchmarks are its
clients. Its steps, in order:

* ``plan``: public information only (config, schema, recipe); refusals here read no data.
* ``domain``: the domain step (DP bounds and categories where the schema gives none).
* ``read``: the input table, CSV or Parquet (one reader, ``read_input``), or a table the caller
  holds in memory; for streaming runs the configured engine's count source.
* ``split``: the hold-back for evaluation (each row's coin from the OS CSPRNG).
* ``synthesise``: the recipe's stages, in order, charging one Ledger (``pipeline.run_stages``,
  with its overspend guard).
* ``run``: all of the above, then the atomic release (synthetic.csv, model, manifest).

A new step (a DP domain step before the stages, a sampling hook) plugs in as a stage of the
recipe (synthpriv.stage) or as a step here, timed with ``self.step(name)``.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.chunks import file_header, read_input
from synthpriv.config import Job
from synthpriv.domain import CountSource
from synthpriv.domain_stage import conform
from synthpriv.encoding import TableEncoder
from synthpriv.engines import open_counts
from synthpriv.errors import BudgetError
from synthpriv.persons import bound_persons, hold_back_persons
from synthpriv.pipeline import plan_job, resolve_domain, run_stages
from synthpriv.plan import Plan
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.release import SYNTHETIC, check_target, release_lock, write_release
from synthpriv.sampling import SyntheticRows
from synthpriv.stage import PipelineState, Stage

Planned = tuple[Plan, list[tuple[Stage, float]]]


@dataclass
class Hooks:
    """Callbacks a client passes to watch a job. ``started(step)`` runs before a step and
    ``finished(step, seconds)`` after it. Steps: ``plan``, ``domain``, ``read``, ``hold-back``,
    ``stage:<name>`` for each stage of the recipe, ``release``."""

    started: Callable[[str], None] | None = None
    finished: Callable[[str, float], None] | None = None


@dataclass
class Synthesis:
    """What one run of the stages produced (nothing written yet); ``job`` with its domain
    resolved (the domain step's DP bounds and categories, when the schema left them out)."""

    plan: Plan
    ledger: Ledger
    state: PipelineState
    synthetic: SyntheticRows  # every recipe's one output type: read by iterating or to_frame()
    job: Job


@dataclass
class Fitted:
    """A run of the stages with its synthetic rows in the input's column order, and the rows
    fitted and held back when a hold-back split the input (evaluation only, never released)."""

    synthesis: Synthesis
    synthetic: SyntheticRows
    members: pd.DataFrame | None = None
    held_back: pd.DataFrame | None = None
    warnings: list[str] = field(default_factory=list)  # plan-time warnings, for the manifest
    # the noise warning at the sizes the run chose (``sized_noise_warning``): post-processed from
    # DP outputs, for the operator's terminal and the API's warnings — not the manifest, whose
    # plan_warnings hold public-only messages
    run_warnings: list[str] = field(default_factory=list)


@dataclass
class RunResult:
    """A landed release, and what evaluation needs to read beside it (never released)."""

    out_dir: Path
    ledger: Ledger
    plan: Plan
    manifest: dict
    job: Job
    records: int
    _kept: pd.DataFrame | None = None  # the released table when it was held in memory
    held_back: pd.DataFrame | None = None  # rows kept from the generator for evaluation only
    _members: pd.DataFrame | None = None  # the rows fitted, when a hold-back split them off
    timings: dict[str, float] = field(default_factory=dict)
    state: PipelineState | None = None  # the fitted model and measurements (DP outputs)
    planned: Planned | None = None  # the job's plan and stages (public inputs only)
    run_warnings: list[str] = field(default_factory=list)  # ``Fitted.run_warnings``

    @cached_property
    def synthetic(self) -> pd.DataFrame:
        """The released table: kept from sampling if it was held in memory, else read back."""
        if self._kept is not None:
            return self._kept
        return read_input(self.out_dir / SYNTHETIC, self.job.schema)

    @cached_property
    def real(self) -> pd.DataFrame:
        """The rows the generator was fitted on, read whole (for evaluation only)."""
        if self._members is not None:
            return self._members
        return read_input(self.job.data_path, self.job.schema, self.job.config.data.chunk_rows)


def job_source(job: Job) -> RandomSource:
    """Secure noise, or seeded noise (NOT FOR RELEASE) when the config sets a seed."""
    seed = job.config.seed
    return RandomSource.secure() if seed is None else RandomSource.seeded(seed)


DELTA_WITHOUT_COUNT = 1e-6
"""The public rule for δ when a run has neither a public row count nor a DP count: δ ≤ 10⁻⁶,
which is below 1/n for every table of under a million rows (a larger table: set
data.public_records)."""


def check_delta(job: Job, dp_records: float | None = None) -> None:
    """Refuse δ ≥ 1/n (the standard guidance is δ ≪ 1/n) unless ``budget.allow_large_delta``,
    deciding on public or DP quantities only, never on the exact row count: whether a release
    exists must not turn on one row (issue 23). n is, in order:

    * ``data.public_records``, checked at plan time (``SynthesisJob.planned``) before any data
      is read, so a table and its neighbour get the same answer;
    * else ``dp_records``, a DP estimate of n the run already bought (the model's noisy total:
      the marginals' noisy sums or the generator's noisy count), checked after the stages: the
      decision is post-processing of a DP output, covered by the ledger at no further cost;
    * else the public rule δ ≤ ``DELTA_WITHOUT_COUNT``.
    """
    budget = job.config.budget
    if budget.allow_large_delta:
        return
    delta, public = budget.delta, job.config.data.public_records
    fix = "Choose δ ≪ 1/n (e.g. 1e-6), or set budget.allow_large_delta: true if you know why."
    if public is not None:
        if delta >= 1.0 / public:
            raise BudgetError(
                f"budget.delta = {delta:g} is not below 1/n = {1.0 / public:.3g} for the public row "
                f"count data.public_records = {public}: such a δ allows releasing a whole row "
                f"(checked before any data was read). {fix}")
        return
    if dp_records is not None and np.isfinite(dp_records):
        estimate = max(1.0, float(dp_records))
        if delta >= 1.0 / estimate:
            raise BudgetError(
                f"budget.delta = {delta:g} is not below 1/n̂ = {1.0 / estimate:.3g}, n̂ = "
                f"{estimate:.0f} being this run's DP estimate of the row count (the model's "
                "noisy total; the exact count is never used, so no single row decides whether a "
                "release exists): such a δ allows releasing a whole row. Nothing was released. "
                f"{fix} With data.public_records set, δ is checked before the run.")
        return
    if delta > DELTA_WITHOUT_COUNT:
        raise BudgetError(
            f"budget.delta = {delta:g} is above {DELTA_WITHOUT_COUNT:g}: with neither a public row "
            "count (data.public_records) nor a DP estimate of it from the run, δ must meet the "
            f"public rule δ ≤ {DELTA_WITHOUT_COUNT:g} (below 1/n for any table of under a million "
            f"rows). Set data.public_records, or {fix[0].lower()}{fix[1:]}")


def check_public_delta(job: Job) -> None:
    """The plan-time part of ``check_delta``: δ against ``data.public_records`` when the config
    gives it (before any data is read); without it δ waits for the run's DP count."""
    if job.config.data.public_records is not None:
        check_delta(job)


def model_records(state: PipelineState) -> float | None:
    """The model's record count: the public count or a DP estimate of it (``SamplingModel.
    total``), or None when the stages left no model with one."""
    total = getattr(state.model, "total", None)
    return None if total is None else float(total)


def holds_back(job: Job, evaluate: bool = True) -> bool:
    """True when the config asks to split non-members off the input (no holdout file) and the
    run evaluates: the held-back rows serve evaluation only, so a run without it (``--no-
    evaluation``, ``evaluate=False``) fits every row."""
    evaluation = job.config.evaluation
    return (
        evaluate and evaluation.holdout_fraction is not None and evaluation.enabled
        and job.config.data.holdout is None
    )


def hold_back(
    job: Job, real: pd.DataFrame, source: RandomSource, codes: np.ndarray | None = None
) -> tuple[pd.DataFrame, pd.DataFrame | None]:
    """Hold back each row independently with probability ``evaluation.holdout_fraction`` (when
    the config names no holdout file), so the attacks have real non-members; the generator never
    sees them.

    Privacy: the coin of each row is drawn on its own from the OS CSPRNG (``uniform_words``), so
    the fitted set of D ∪ {x} is the fitted set of D plus, possibly, x: an add/remove neighbour of
    the input gives an add/remove neighbour (or the same table) to the stages, and the release
    stays (ε, δ)-DP with respect to the whole input. A split of fixed size round(f·n) would not:
    adding x could *replace* a fitted row by x (privacy review, issue 12). The number of rows
    fitted is therefore Binomial(n, 1 − f), not a function of n, and nothing is refused on it.

    With data.person, ``codes`` (each row's person, after bounding) make the coin one per person:
    a person is wholly fitted or wholly held back (the evaluation's members are persons), and an
    added person's rows are all fitted or none."""
    if not holds_back(job):
        return real, None
    held = held_mask(job, len(real), source, codes)
    return (real.loc[~held].reset_index(drop=True), real.loc[held].reset_index(drop=True))


def held_mask(job: Job, rows: int, source: RandomSource, codes: np.ndarray | None) -> np.ndarray:
    """``hold_back``'s coins: one per row, or one per person when ``codes`` gives the rows'
    persons (data.person)."""
    fraction = job.config.evaluation.holdout_fraction
    if codes is None:
        return bernoulli_mask(rows, fraction, source)
    persons = int(codes.max()) + 1 if len(codes) else 0
    return hold_back_persons(codes, bernoulli_mask(persons, fraction, source))


def bernoulli_mask(size: int, probability: float, source: RandomSource) -> np.ndarray:
    """``size`` independent coins, each True with probability ``probability`` (to within
    2⁻⁶⁴): a uniform 64-bit word from the source below ⌊p·2⁶⁴⌉."""
    threshold = np.uint64(min(round(probability * 2.0**64), 2**64 - 1))
    return source.uniform_words(size) < threshold


class SynthesisJob:
    """One job, planned once, run on its input (the config's ``data.path``, or ``table``).

    ``source`` is the noise (default: secure, or seeded when the config sets a research seed);
    ``table`` an input already in memory (checked and typed as ``read_input`` returns it), used
    instead of ``data.path``; ``hooks`` watch its steps. Per-step wall times land in
    ``timings``. Planning (about a second: it calibrates noise) happens once, on first use;
    ``planned``, the plan another object made of the same job, skips it (the evaluation's shadow
    runs reuse the run's).
    """

    def __init__(
        self, job: Job, *, source: RandomSource | None = None, table: pd.DataFrame | None = None,
        hooks: Hooks | None = None, planned: Planned | None = None,
    ) -> None:
        self.job = job
        self.source = job_source(job) if source is None else source
        self.table = table
        self.hooks = hooks or Hooks()
        self.timings: dict[str, float] = {}
        self.clipped: dict[str, int] = {}  # values clipped to bounds, by column: terminal only
        self.dropped: int | None = None  # data.person: rows bounding dropped (terminal only)
        if planned is not None:
            self.__dict__["planned"] = planned  # the cached_property's slot

    def __getstate__(self) -> dict:
        """Pickled (to the shadow attack's worker processes) planned, without hooks or the noise
        source: each worker then reuses the parent's plan instead of planning again."""
        self.planned  # noqa: B018 - computed here so the copy carries it
        state = dict(self.__dict__)
        state.update(hooks=Hooks(), source=None, timings={}, clipped={}, dropped=None)
        return state

    def __setstate__(self, state: dict) -> None:
        """A copy draws its own noise: fresh from the job's source (secure unless seeded)."""
        self.__dict__.update(state)
        self.source = job_source(self.job)

    @contextlib.contextmanager
    def step(self, name: str) -> Iterator[None]:
        """Time one step into ``timings`` and tell the hooks."""
        if self.hooks.started:
            self.hooks.started(name)
        started = time.perf_counter()
        try:
            yield
        finally:
            seconds = time.perf_counter() - started
            self.timings[name] = self.timings.get(name, 0.0) + seconds
            if self.hooks.finished:
                self.hooks.finished(name, seconds)

    @cached_property
    def planned(self) -> Planned:
        """The plan and the recipe's stages, from public information only; δ is checked here
        against a public row count when the config gives one (``check_delta``)."""
        with self.step("plan"):
            planned = plan_job(self.job)
            check_public_delta(self.job)
            return planned

    @property
    def plan(self) -> Plan:
        return self.planned[0]

    def read(self) -> pd.DataFrame:
        """The whole input table (CSV or Parquet), checked against the schema."""
        if self.table is not None:
            return self.table
        with self.step("read"):
            return read_input(self.job.data_path, self.job.schema, self.job.config.data.chunk_rows)

    def split(self, real: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame | None]:
        """The fitted rows and the rows held back for evaluation (None when nothing is); with
        data.person, whole persons (the table's person keys, read for evaluation only)."""
        person = self.job.config.data.person
        codes = None if person is None else pd.factorize(real[person], use_na_sentinel=False)[0]
        with self.step("hold-back"):
            return hold_back(self.job, real, self.source, codes)

    def bounded(
        self, table: pd.DataFrame | None, source: RandomSource | None = None
    ) -> tuple[pd.DataFrame | None, np.ndarray | None]:
        """With data.person: the input (``table``, else the file read whole) with at most
        data.rows_per_person rows per person, chosen by the CSPRNG, its person column blanked,
        and each kept row's person code (synthpriv.persons) — the one place persons are
        bounded, before anything counts. The rows dropped go to ``dropped`` (terminal only).
        Without data.person: ``(table, None)``, untouched."""
        person = self.job.config.data.person
        if person is None:
            return table, None
        if table is None:
            with self.step("read"):
                table = read_input(self.job.data_path, self.job.schema,
                                   self.job.config.data.chunk_rows)
        with self.step("bound persons"):
            bound = bound_persons(table, person, self.job.config.data.contribution_bound,
                                  self.source if source is None else source)
        self.dropped = bound.dropped
        return bound.table, bound.codes

    def columns(self) -> list[str]:
        """The input's column names in its own order (the release keeps that order)."""
        if self.table is not None:
            return list(self.table.columns)
        released = set(self.job.schema.names)  # not ignored columns, nor extra ones ignored
        return [name for name in file_header(self.job.data_path, self.job.schema)
                if name in released]

    def resolve(
        self, ledger: Ledger, source: RandomSource, table: pd.DataFrame | None = None
    ) -> tuple[Job, Planned]:
        """The domain step, when the plan has one (synthpriv.domain_stage): DP bounds and
        categories where the schema gives none, from every input row (``table``, else the file
        in chunks), its events recorded in ``ledger``. Returns the job with its DP domain and its
        stages rebuilt on it; without a domain step, the job as planned."""
        with self.step("domain"):
            return resolve_domain(self.job, self.planned, ledger, source,
                                  None if table is None else [table])

    def synthesise(self, table: pd.DataFrame, source: RandomSource | None = None) -> Synthesis:
        """The whole job on a typed table held in memory (the sweep, the shadow attack): domain
        step, stages, one Ledger; nothing is written. Its synthetic rows, in the table's column
        order, are drawn when read (``run.synthetic.to_frame()``)."""
        source = self.source if source is None else source
        ledger = Ledger(self.job.config.budget.neighbouring)
        bounded, codes = self.bounded(table, source)  # data.person: ≤ k rows each
        job, planned = self.resolve(ledger, source, bounded)
        encoded = TableEncoder(job.schema).encode(conform(bounded, job.schema))
        run = self.run_stages(job, planned, encoded, source, ledger, codes)
        run.synthetic.in_order(list(table.columns))
        return run

    def run_stages(
        self, job: Job, planned: Planned, data: CountSource, source: RandomSource, ledger: Ledger,
        person_codes: np.ndarray | None = None,
    ) -> Synthesis:
        """The recipe's stages on ``data`` (encoded counts of ``job``'s resolved schema),
        charging ``ledger`` (which holds the domain step's events, if any), each timed;
        ``person_codes`` (data.person): each encoded row's person, for stages that sample
        persons."""
        plan, stages = planned
        state = PipelineState(
            context=stages[-1][0].context, encoder=TableEncoder(job.schema), data=data,
            requested_records=job.config.pipeline.records, person_codes=person_codes,
        )
        ledger = run_stages(stages, plan, state, source, ledger, step=self.step)
        if state.synthetic is None:  # check_contracts refuses such a recipe when it is planned
            raise RuntimeError("internal error: the recipe's stages left no synthetic rows")
        return Synthesis(plan, ledger, state, state.synthetic, job)

    @contextlib.contextmanager
    def open_input(
        self, job: Job, evaluate: bool = True, table: pd.DataFrame | None = None,
        codes: np.ndarray | None = None,
    ) -> Iterator[tuple[CountSource, pd.DataFrame | None, pd.DataFrame | None, np.ndarray | None]]:
        """The input (``table`` when held in memory) encoded on ``job``'s (resolved) schema,
        with the fitted and the held-back rows when a hold-back split the table, and the fitted
        rows' person ``codes`` (data.person; else None). A hold-back and an in-memory table read
        the table whole; otherwise the configured engine streams counts."""
        encoder = TableEncoder(job.schema)
        self.clipped = encoder.clipped  # filled as the input is encoded (local engine)
        if table is None and not holds_back(job, evaluate):
            with contextlib.ExitStack() as stack:
                with self.step("read"):  # the local engine spools encoded chunks here
                    data = stack.enter_context(open_counts(job, encoder))
                yield data, None, None, None
            return
        if table is not None:
            real = conform(table, job.schema)
        else:
            with self.step("read"):
                real = read_input(job.data_path, job.schema, job.config.data.chunk_rows)
        if not holds_back(job, evaluate):
            yield encoder.encode(real), None, None, codes
            return
        with self.step("hold-back"):
            held = held_mask(job, len(real), self.source, codes)
        members = real.loc[~held].reset_index(drop=True)
        encoded = encoder.encode(members)
        held_rows = real.loc[held].reset_index(drop=True)
        person = job.config.data.person
        if codes is not None and person is not None:  # evaluation only, after encoding: a
            # pseudonym per person in both parts alike, so the shadow attack can remove whole
            # persons and no attack tells members from held-back rows by the column (never released)
            members, held_rows = (part.assign(**{person: [f"person-{c}" for c in codes[mask]]})
                                  for part, mask in ((members, ~held), (held_rows, held)))
        yield encoded, members, held_rows, None if codes is None else codes[~held]

    def fit(self, evaluate: bool = True) -> Fitted:
        """Resolve the domain (if the schema leaves one out), read the input (holding rows back
        when the run evaluates and the config asks), run the stages and check δ against the
        model's DP row count (``check_delta``; a public count was checked when planned);
        nothing is written. The plan-time warnings (public inputs only) go to the manifest."""
        from synthpriv.plan_warnings import plan_messages, sized_noise_warning

        plan, stages = self.planned  # fails on a bad plan before any data is read
        warnings = plan_messages(self.job, plan, stages, evaluate, informational=False)
        columns = self.columns()
        ledger = Ledger(self.job.config.budget.neighbouring)
        table, codes = self.bounded(self.table)  # data.person: ≤ k rows each, before any count
        # DP bounds/categories where the schema gives none (every input row: DP like the rest)
        job, planned = self.resolve(ledger, self.source, table)
        with self.open_input(job, evaluate, table, codes) as (data, members, held_back, codes):
            run = self.run_stages(job, planned, data, self.source, ledger, codes)
        records = model_records(run.state)
        check_delta(job, records)  # public n (checked when planned) or DP n̂
        run_warnings = ([] if records is None  # the noise again, at the sizes the run chose
                        else sized_noise_warning(job, *planned, records, warnings))
        return Fitted(run, run.synthetic.in_order(columns), members, held_back, warnings,
                      run_warnings)

    def release(self, fitted: Fitted, out: Path | None = None, *, force: bool = False,
                locked: bool = False) -> RunResult:
        """Write the fitted run's release (synthetic.csv, the model, manifest.json) atomically,
        under the output's lock (``locked``: the caller holds it)."""
        from synthpriv.model_store import model_files
        from synthpriv.runner import build_manifest

        out_dir = self.job.output_dir(out)
        run, synthetic = fitted.synthesis, fitted.synthetic
        # ``constraints`` in the manifest is filled in as the rows are drawn, before it is written
        manifest = build_manifest(run.job, run.plan, run.ledger, run.state, self.source,
                                  fitted.warnings)
        with contextlib.nullcontext() if locked else release_lock(out_dir), self.step("release"):
            write_release(out_dir, synthetic, manifest, force,
                          extra=model_files(run.state, run.job.schema))
        return RunResult(out_dir, run.ledger, run.plan, manifest, run.job, len(synthetic),
                         synthetic.kept, fitted.held_back, fitted.members, dict(self.timings),
                         run.state, self.planned, fitted.run_warnings)

    def run(self, out: Path | None = None, *, force: bool = False, evaluate: bool = True) -> RunResult:
        """Plan, read, synthesise and release. Nothing is written unless all succeeds; the
        output's lock is held from the first check to the rename, so of two jobs writing the same
        release the second fails at once. ``evaluate=False`` (the CLI's ``--no-evaluation``): no
        evaluation follows, so ``evaluation.holdout_fraction`` holds nothing back."""
        out_dir = self.job.output_dir(out)
        check_target(out_dir, force)
        self.planned  # noqa: B018 - fails on a bad plan before any data is read
        with release_lock(out_dir):
            check_target(out_dir, force)  # again under the lock: a job that just finished counts
            return self.release(self.fit(evaluate), out_dir, force=force, locked=True)
