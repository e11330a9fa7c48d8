"""Warnings at plan time, before any data is read: a release that would be mostly noise, what the
domain step's noise lets through (``domain_messages``), a schema drafted from the data, a TSTR
that will be skipped. Public quantities only (config, schema,
recipe, the plan's noise): these messages cost no budget and say nothing of the table.

The noise estimate, per marginals stage (one_way, mst, aim; a generator stage has no per-cell
noise and is not estimated):

* σ: the noise standard deviation of one measured cell, from the plan's noise dict —
  ``sigma_two_way`` (MST) or, for AIM, ``sigma_later_rounds`` (with a public n̂: the largest σ of
  its rounds after the 1-way round) else ``sigma_first_rounds`` (the rounds' own σ; on a table
  below the plan's ``one_way_rule_rows`` the later rounds use up to ``sigma_later_rounds_most``,
  about 1.2× more; annealing only lowers σ), both for 2-way marginals; ``sigma_one_way`` for
  the one_way selection (1-way);
* m: the median, over modelled columns, of a column's cells — its categories, or its bins —
  plus one for the missing code; C = m² cells in a typical 2-way marginal (m for 1-way). A column
  whose size the run decides (``kind: auto``, discovered categories, an adaptive numeric column
  without ``edges``/``bins``) is counted twice: at its most, the stage's ``max_bins``, and at its
  fewest, FEWEST_CELLS (``marginals.compress.bin_count``'s floor: the run gives an adaptive
  column about √(n̂/σ) bins, so that a 2-way cell of two of them expects about σ rows);
* Y = σ · C: the row count at which a typical cell's expected count n̂ / C equals σ.

With a public row count n̂ (``data.public_records``) the warning fires when n̂ / C < σ at the
fewest cells: a typical measured cell would hold less signal than noise however the run sizes its
columns. Without one, n̂ is unknown before the data is read (and reading it would spend budget),
so the plan states Y as a note ("a table of fewer than Y rows would be mostly noise") and warns
only when Y at the fewest cells exceeds ``UNKNOWN_ROWS_LIMIT``: then even a table of that size —
larger than most tables synthesised — would be mostly noise. Counting run-sized columns at their
most warned on every all-``auto`` draft at ε = 1 (Y ≈ 110,000 on Adult, whose release is 2-way TVD
0.03): a warning that fires on every first run teaches users to ignore it, or to raise ε for
nothing. Where the two counts differ the note gives both, and the run checks again once it
has sized the columns (``sized_noise_warning``: the resolved schema's categories and bounds
and the model's DP row count n̂, DP outputs, so the check is post-processing).
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import TYPE_CHECKING

from synthpriv.schema import FINE_CELLS, AutoColumn, CategoricalColumn, NumericColumn, Schema

if TYPE_CHECKING:
    from synthpriv.config import Job
    from synthpriv.plan import Plan
    from synthpriv.stage import Stage, StagePlan

# Y above this, with n̂ unknown: mostly noise for most tables synthesised (the largest table of
# the development suite, Adult's training split, has 32,561 rows; the ISLP tables 777–10,000).
UNKNOWN_ROWS_LIMIT = 50_000
SIGMA_KEYS = (("sigma_two_way", 2), ("sigma_later_rounds", 2), ("sigma_first_rounds", 2),
              ("sigma_one_way", 1))
DEFAULT_MAX_BINS = 32  # the marginals stage's default (synthpriv.marginals.compress.MAX_BINS)
FEWEST_CELLS = 2  # the fewest bins the run gives an adaptive column (compress.bin_count's floor)


@dataclass(frozen=True)
class NoiseEstimate:
    """The noise of one measured cell against the expected count of a typical cell."""

    stage: str
    sigma: float  # noise std of one measured cell
    degree: int  # 1 or 2: the marginals σ applies to
    column_cells: float  # m: the median column's cells (run-sized columns at their most)
    records: int | None  # n̂ when known (public, or the run's DP n̂), else None
    fewest_column_cells: float | None = None  # m with run-sized columns at their fewest
    records_said: str = "the public row count"  # where n̂ comes from, for the sentence

    @property
    def fewest(self) -> float:
        """m at the fewest cells (the same as ``column_cells`` when no column is run-sized)."""
        return self.column_cells if self.fewest_column_cells is None else self.fewest_column_cells

    @property
    def cells(self) -> float:
        """C: cells of a typical marginal of this degree (m^degree), run-sized columns at most."""
        return self.column_cells**self.degree

    @property
    def fewest_cells(self) -> float:
        """C with run-sized columns at their fewest cells."""
        return self.fewest**self.degree

    @property
    def rows_needed(self) -> float:
        """Y = σ·C: the rows at which a typical cell's expected count equals its noise."""
        return self.sigma * self.cells

    @property
    def fewest_rows_needed(self) -> float:
        """Y at the fewest cells: below it the release is mostly noise however the run sizes."""
        return self.sigma * self.fewest_cells

    @property
    def expected(self) -> float | None:
        """n̂ / C: the expected count of a typical cell, when n̂ is known."""
        return None if self.records is None else self.records / self.cells

    @property
    def useless(self) -> bool:
        """Whether a typical cell would be mostly noise at the fewest cells (the module
        docstring's rule)."""
        if self.records is not None:
            return self.records / self.fewest_cells < self.sigma
        return self.fewest_rows_needed > UNKNOWN_ROWS_LIMIT


def column_cells(schema: Schema, max_bins: int | None, fewest: bool = False,
                 records: float | None = None, sigma: float | None = None) -> list[int]:
    """Cells of each modelled column as the marginals are counted, plus one for the missing code:
    categories or bins. A column the run sizes (auto, discovered categories, an adaptive numeric
    column when ``max_bins`` is not None) counts at ``max_bins`` or, with ``fewest``, at
    FEWEST_CELLS; with ``records`` (n̂, public or the run's DP count) and ``sigma``, an adaptive
    numeric column counts at the bins the marginals stage gives it (``compress.bin_count``).
    ``max_bins`` None: the adaptive domain is off and the fine grid is counted."""
    from synthpriv.marginals.compress import bin_count

    most = max_bins or DEFAULT_MAX_BINS
    sized = FEWEST_CELLS if fewest else most
    cells = []
    for column in schema.modelled:
        if isinstance(column, AutoColumn):  # decided at run time: counted as an adaptive column
            size = sized if max_bins is not None or fewest else FINE_CELLS
        elif isinstance(column, CategoricalColumn):  # discovered: merged to ≤ max_bins at most
            size = len(column.categories) if not column.discovered else sized
        else:
            assert isinstance(column, NumericColumn)
            size = (column.bins or FINE_CELLS) if column.needs_bounds else len(
                column.bin_edges()) - 1
            if column.adaptive and max_bins is not None:
                size = min(size, sized if records is None or sigma is None
                           else bin_count(records, sigma, max_bins))
        cells.append(size + int(column.missing))
    return cells


def noise_estimates(
    job: Job, plan: Plan, stages: list[tuple[Stage, float]], records: float | None = None,
) -> list[NoiseEstimate]:
    """One estimate per marginals stage of the plan that measures with noise. ``records``: the
    run's DP row count n̂, for a schema the domain step has resolved (``sized_noise_warning``);
    None: the public count, if any."""
    estimates = []
    for (stage, _share), stage_plan in zip(stages, plan.stages, strict=True):
        if stage.name != "marginals":
            continue
        from synthpriv.marginals.stage import MarginalsOptions

        options = stage.options
        max_bins = DEFAULT_MAX_BINS
        if isinstance(options, MarginalsOptions):
            max_bins = options.max_bins if options.adaptive_domain else None
        sigma, degree = next(((stage_plan.noise[key], degree) for key, degree in SIGMA_KEYS
                              if key in stage_plan.noise), (None, 0))
        if sigma is None:
            continue
        # with a known n̂, adaptive numeric columns are sized as the run sizes them
        known = fitted_records(job) if records is None else records
        median, fewest = (statistics.median(column_cells(job.schema, max_bins, least, known,
                                                         float(sigma)))
                          for least in (False, True))
        said = "the public row count" if records is None else "the DP row count n̂"
        estimates.append(NoiseEstimate(stage.name, float(sigma), degree, float(median),
                                       None if known is None else round(known), float(fewest),
                                       said))
    return estimates


def sized_noise_warning(job: Job, plan: Plan, stages: list[tuple[Stage, float]],
                        records: float, said: list[str]) -> list[str]:
    """The noise estimate again once the run has sized the columns: ``job`` the resolved job (its
    categories and bounds: DP outputs or public), ``plan`` and ``stages`` the ones the run used,
    ``records`` the model's row count n̂ (DP, or the public count), ``said`` the plan-time
    messages. A ``WARNING`` for each stage whose typical cell is mostly noise at these sizes and
    that the plan did not already warn about. Post-processing of DP outputs: no budget. For the
    terminal and the API's warnings only: the manifest's plan_warnings stay public-only (the
    release's metadata of neighbouring tables is identical, tests/reliability/test_metadata.py)."""
    return [f"WARNING: stage '{estimate.stage}': as the run sized the columns, "
            f"{describe(estimate)}" for estimate in noise_estimates(job, plan, stages, records)
            if estimate.useless and not any(message.startswith(
                f"WARNING: stage '{estimate.stage}':") for message in said)]


def fitted_records(job: Job) -> int | None:
    """The public bound on the rows the stages count: data.public_records, and with data.person
    at most data.public_persons · k of them (bounding keeps k rows a person); None if unknown."""
    data = job.config.data
    if data.public_records is None or data.person is None or data.public_persons is None:
        return data.public_records
    return min(data.public_records, data.public_persons * data.contribution_bound)


def describe(estimate: NoiseEstimate) -> str:
    """The estimate as a sentence: σ against the expected count (or the rows needed), and what
    to change when it is too noisy."""
    way = f"{estimate.degree}-way"
    ranged = estimate.fewest != estimate.column_cells
    if ranged:
        cell = (f"each {way} cell gets noise σ = {_figure(estimate.sigma)}; a typical {way} "
                f"marginal has {estimate.fewest_cells:,.0f} to {estimate.cells:,.0f} cells (median "
                f"column: {estimate.fewest:g} to {estimate.column_cells:g} cells: the run sizes "
                f"auto, discovered and adaptive numeric columns to the noise, from "
                f"{FEWEST_CELLS} cells to max_bins, plus one for missing)")
    else:
        cell = (f"each {way} cell gets noise σ = {_figure(estimate.sigma)}; a typical {way} "
                f"marginal has {estimate.cells:,.0f} cells (median column: "
                f"{estimate.column_cells:g} cells)")
    if estimate.records is not None:
        expected = estimate.records / estimate.fewest_cells
        ratio = estimate.sigma / expected
        shown = (f"{_figure(expected)} to {_figure(estimate.expected)}" if ranged
                 else _figure(expected))
        text = (f"{cell}, so with {estimate.records_said} {estimate.records:,} a cell expects "
                f"{shown} rows: ")
        if not estimate.useless:
            if ranged:
                return text + (f"noise is {estimate.sigma / estimate.expected:.2g}× to "
                               f"{ratio:.2g}× the expected count.")
            return text + f"noise is {ratio:.2g}× the expected count."
        return (text + f"the noise is {ratio:.2g}× the signal, and the release would be mostly "
                "noise. " + _fixes(ratio))
    if ranged:
        text = (f"{cell}: a table of fewer than {estimate.fewest_rows_needed:,.0f} rows would be "
                f"mostly noise, and one of fewer than {estimate.rows_needed:,.0f} may be (the "
                "run checks again, and warns, once it has sized the columns; the "
                "row count is not public: set data.public_records to check it)")
    else:
        text = (f"{cell}: a table of fewer than {estimate.rows_needed:,.0f} rows would be mostly "
                "noise (the row count is not public: set data.public_records to check it)")
    if not estimate.useless:
        return text + "."
    return (text + f", more than most tables have (above {UNKNOWN_ROWS_LIMIT:,}). "
            + _fixes(None))


def _figure(value: float) -> str:
    """A figure as people read it: 4,429 rather than 4.43e+03, 0.347 rather than 0.3466."""
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def _fixes(ratio: float | None) -> str:
    """What to change; ``ratio`` = σ / expected count, when n̂ is public."""
    more = f": roughly {ratio:.2g}× the ε" if ratio is not None else ""
    return (f"To fix: raise budget.epsilon (σ falls about as 1/ε{more}), model fewer columns "
            "(AIM's and MST's σ grow with their number), or use a coarser domain (fewer "
            "categories, coarser bins, a lower pipeline.stages.marginals.max_bins).")


def plan_messages(
    job: Job, plan: Plan, stages: list[tuple[Stage, float]], evaluate: bool = True,
    informational: bool = True,
) -> list[str]:
    """Plan-time messages, each starting with ``WARNING:`` or ``note:``; ``evaluate`` is False
    when no evaluation follows (``--no-evaluation``). ``informational=False`` (``run``) leaves
    out the noise estimate when it warns of nothing (``plan`` states it every time)."""
    messages = []
    for estimate in noise_estimates(job, plan, stages):
        if estimate.useless or informational:
            level = "WARNING" if estimate.useless else "note"
            messages.append(f"{level}: stage '{estimate.stage}': {describe(estimate)}")
    for level, text in domain_messages(job, plan):
        if level == "WARNING" or informational:
            messages.append(f"{level}: stage 'domain': {text}")
    if job.schema.drafted_by is not None:
        messages.append(draft_warning(job))
    note = person_note(job)
    if note is not None and (informational or note.startswith("WARNING")):
        messages.append(note)
    if informational and (note := delta_note(job)) is not None:
        messages.append(note)
    note = tstr_note(job, evaluate)
    if note is not None:
        messages.append(note)
    return messages


def domain_messages(job: Job, plan: Plan) -> list[tuple[str, str]]:
    """What the domain step's noise lets through, from the plan alone: the smallest count of a
    value DP discovery keeps (its threshold T: kept half the time at T rows, nearly always at
    T + 2σ), the count at which heap discovery keeps a value a numeric column piles up on as a
    point mass, and the rows a numeric column needs in one octave for DP bounds (else it is
    released all missing). ``WARNING`` when the public row count n̂ shows values holding 5 % of it are
    lost (T > 5 % of n̂) or no column can get bounds; ``note`` otherwise. Public only."""
    domain = next((s for s in plan.stages if s.stage == "domain"), None)
    if domain is None or "sigma" not in domain.noise:
        return []
    from synthpriv.privacy.bounds import (
        FALSE_OCCUPANCY,
        Buckets,
        occupancy_threshold,
        seed_threshold,
    )

    sigma, records = domain.noise["sigma"], job.config.data.public_records
    unresolved = job.schema.unresolved
    messages = []
    threshold = domain.noise.get("category_threshold")
    if threshold is not None:
        discovered = [c.name for c in unresolved if isinstance(c, CategoricalColumn | AutoColumn)]
        messages.append(discovery_message(threshold, sigma, records, discovered))
        if "category_threshold_reallocated" in domain.noise:
            messages.append(realloc_note(domain.noise["category_threshold_reallocated"],
                                         domain.noise["category_sigma_reallocated"]))
        if listed := {c.name: c.lists for c in unresolved
                      if isinstance(c, CategoricalColumn | AutoColumn) and c.lists}:
            messages.append(lists_note(listed))
    if "heap_threshold" in domain.noise:
        from synthpriv.domain_stage import heap_columns

        messages.append(heap_message(domain.noise["heap_threshold"], domain.noise["heap_sigma"],
                                     records, heap_columns(job.schema)))
    if any(isinstance(c, NumericColumn | AutoColumn) for c in unresolved):
        columns = int(domain.noise["bounded_columns"])
        needed = occupancy_threshold(sigma, Buckets("integer").size, columns=columns)
        text = (f"DP bounds need about {needed:,.0f} rows in one octave of a column's values "
                f"(or {needed * 2**0.5:,.0f} over two adjacent octaves, {2 * needed:,.0f} over "
                f"four: noise alone shows a false bucket in at most {FALSE_OCCUPANCY:.1%} of "
                f"runs over the {columns} columns that may get DP bounds); a numeric column with "
                "fewer is released all missing")
        if any(isinstance(c, AutoColumn) for c in unresolved):  # the seed (privacy.bounds)
            spread = seed_threshold(Buckets("integer").size) * sigma * 8**0.5
            text += (f"; an auto column that its kind histogram shows holds numbers may instead "
                     f"get them from up to 16 adjacent octaves (about {spread:,.0f} rows over 8)")
        if records is not None and needed * 2 > records:
            messages.append(("WARNING", text + f", and the public row count is {records:,}. To "
                             "fix: give public bounds (lower, upper) in the schema, or raise "
                             "budget.epsilon."))
        else:
            messages.append(("note", text + "."))
        if (rule := small_table_note(job, domain)) is not None:
            messages.append(rule)
    return messages


def small_table_note(job: Job, domain: StagePlan) -> tuple[str, str] | None:
    """The small-table rule's figures (privacy.domain_budget.small_table_share), from the plan
    alone: the share it chose and why (the default share's one-octave bounds count against the
    public row count), or, with no public row count, the row count below which it would apply.
    None when budget.domain_share is configured (the rule does not apply). Public only."""
    from synthpriv.domain_stage import bounds_rows
    from synthpriv.privacy.domain_budget import SMALL_TABLE_NEED, SMALL_TABLE_SHARE

    noise, records = domain.noise, job.config.data.public_records
    if job.config.budget.domain_share is not None:
        return None
    if "default_share" in noise:
        return ("note", f"the domain step takes {domain.share:.2f} of ρ, not the default "
                f"{noise['default_share']:.2f} (small-table rule): at the default share DP bounds "
                f"would need about {noise['default_bounds_rows']:,.0f} rows in one octave, "
                f"{SMALL_TABLE_NEED:.0%} or more of the public row count {records:,}, and "
                "columns would be released blank; the recipe's stages share the rest of ρ. Set "
                "budget.domain_share to choose the share yourself.")
    rows = bounds_rows(noise)
    if "small_table_below" in noise:  # chosen in the run from the DP n̂ (pipeline.plan_job)
        return ("note", "the row count is not public: the run reads a DP row count n̂ from the "
                "kinds pass (no added budget) and, if n̂ ≤ "
                f"{noise['small_table_below']:,.0f} (DP bounds at the default share would need "
                f"about {rows:,.0f} rows in one octave, {SMALL_TABLE_NEED:.0%} of it or more), "
                f"the domain step takes {noise['small_table_share']:.2f} of ρ (σ = "
                f"{noise['small_table_sigma']:.4g}) instead of {domain.share:.2f} (small-table "
                "rule: fewer columns released blank); the recipe's stages share the rest, the "
                "same total ρ either way. The manifest says which branch ran. Set "
                "data.public_records if the row count is public, or budget.domain_share.")
    if records is None and rows is not None and domain.share < SMALL_TABLE_SHARE:
        return ("note", f"the row count is not public: on a table of up to "
                f"{rows / SMALL_TABLE_NEED:,.0f} rows (DP bounds need {SMALL_TABLE_NEED:.0%} of "
                f"it or more in one octave) the domain step would take {SMALL_TABLE_SHARE:.2f} "
                f"of ρ instead of {domain.share:.2f} (small-table rule: fewer columns released blank). Set "
                "data.public_records if the row count is public.")
    return None


# bounding that drops at least this share of the rows (public figures) is warned of
PERSON_DROP_WARNING = 0.25


def person_note(job: Job) -> str | None:
    """With data.person: what bounding each person to k rows costs, from public quantities only
    — every noise σ grows k-fold (the sensitivity is k rows) — and, with public row and person
    counts (data.public_records, data.public_persons), the share of rows it drops at least
    (n − p·k of n); ``WARNING`` when that is ``PERSON_DROP_WARNING`` or more."""
    data = job.config.data
    if data.person is None:
        return None
    k = data.contribution_bound
    default = "" if data.rows_per_person is not None else " (the default: data.rows_per_person not given)"
    text = (f"data.person '{data.person}': the guarantee is per person (neighbouring tables "
            f"differ by all rows of one person); each person keeps at most k = {k}{default} "
            f"rows, chosen at random, so every noise σ above is {k}× a per-row job's at the same "
            f"ε (sensitivity {k} rows)")
    n, persons = data.public_records, data.public_persons
    if n is None or persons is None:
        return ("note: " + text + ". Set data.public_records and data.public_persons (public "
                "counts) for the plan to say how many rows bounding drops at least.")
    dropped = max(0, n - persons * k)
    share = dropped / n
    if share < PERSON_DROP_WARNING:
        return "note: " + text + (f"; with {n:,} rows of {persons:,} persons (public), "
                                  f"bounding drops at least {dropped:,} rows ({share:.0%}).")
    return ("WARNING: " + text + f"; with {n:,} rows of {persons:,} persons (public: "
            f"{n / persons:.1f} rows a person on average), bounding drops at least {dropped:,} "
            f"rows ({share:.0%} of the table). To fix: raise data.rows_per_person (noise grows "
            "with it), or accept the loss; the run prints how many rows it dropped.")

SURE_SIGMAS = 2.0  # a value of T + 2σ rows is kept with probability Φ(2) ≈ 98 %
LOST_SHARE = 0.05  # a public n̂ where values holding this share of the rows are lost: WARNING


def selection_figures(threshold: float, sigma: float, records: int | None) -> tuple[str, str]:
    """What a Gaussian-thresholded selection (synthpriv.privacy.partition: noise σ, threshold T)
    keeps, in two clauses any discovery message shares: the counts ("kept half the time at T,
    nearly always at T + 2σ": a count c passes with probability Φ((c − T)/σ)), then the sizes —
    with a public row count n̂ the shares T/n̂ and (T + 2σ)/n̂, else the table sizes at which a
    value holding 5 % or 1 % is kept nearly always. Public only: T, σ, n̂."""
    sure = threshold + SURE_SIGMAS * sigma
    counts = f"kept half the time at {threshold:,.0f}, nearly always at {sure:,.0f}"
    if records is None:
        return counts, (f"on a table of fewer than {20 * threshold:,.0f} rows even a value "
                        f"holding 5 % is lost; a value holding 5 % is kept nearly always from "
                        f"{sure / 0.05:,.0f} rows, 1 % from {sure / 0.01:,.0f} (set "
                        "data.public_records for the plan to check the table's size)")
    return counts, (f"with the public row count {records:,} a value needs "
                    f"{threshold / records:.1%} of the rows ({sure / records:.1%} to be kept "
                    "nearly always)")


def discovery_message(threshold: float, sigma: float, records: int | None,
                      columns: list[str]) -> tuple[str, str]:
    """What DP discovery keeps, from the plan alone: the smallest count of a value that survives
    (the threshold T: kept half the time at T rows, nearly always at T + 2σ), the most values a
    column can keep and the smallest share that survives when the row count n̂ is public (else
    the table sizes at which a value holding 5 % or 1 % survives). ``WARNING`` when values
    holding ``LOST_SHARE`` of n̂ are lost: a column of more than n̂/T equally common values
    (codes, names, towns) is then released all missing. Public only: T, σ, n̂ and the names of
    the ``columns`` whose categories are discovered (or may be: auto)."""
    counts, sizes = selection_figures(threshold, sigma, records)
    text = (f"DP category discovery ({', '.join(columns)}) keeps a value held by about "
            f"{threshold:,.0f} rows or more ({counts}); rarer values are read as missing or "
            "'other'")
    if records is None:
        return ("note", text + f": {sizes}.")
    most = int(records // threshold) if threshold > 0 else records
    text += (f". {sizes[0].upper()}{sizes[1:]}, and a column keeps at most {most:,} values: one "
             f"of more than {most:,} equally common values loses most or all of its rows")
    if threshold > LOST_SHARE * records:
        return ("WARNING", text + ". To fix: list public categories in the schema, raise "
                "budget.epsilon or budget.domain_share, or model fewer columns.")
    return ("note", text + ".")


def lists_note(listed: dict[str, list[str]]) -> tuple[str, str]:
    """The columns whose domain is conditional on discovery (``lists:``, synthpriv.
    list_adoption): each takes the first of its lists holding every category discovery keeps
    (at least MIN_DISCOVERED), else the discovered ones. Public: the schema only."""
    from synthpriv.list_adoption import MEMBERSHIP_Z, MIN_DISCOVERED
    from synthpriv.public_lists import value_set

    columns = "; ".join(f"{name}: " + ", ".join(f"{n} ({len(value_set(n))} values)" for n in lists)
                        for name, lists in listed.items())
    return ("note", f"the categories of these columns are conditional on DP discovery ({columns}): "
            f"if every category discovery keeps (at least {MIN_DISCOVERED}) is in one of its "
            "lists, the column takes the first such list whole (an auto column: when decided "
            "categorical), else it keeps the discovered ones; when discovery keeps none, the "
            "first list whose values' noisy counts (named in the discovery histogram: no extra "
            f"ρ or δ) sum to at least {MEMBERSHIP_Z:g} σ·√(list size) is adopted; the decision "
            "reads DP outputs only (post-processing, no budget) and the run's domain lines "
            "state it.")


def realloc_note(threshold: float, sigma: float) -> tuple[str, str]:
    """The discovery figures above are with no reallocation; an auto column decided categorical
    gets the weight its heap histogram and the text/id columns' histograms leave unused
    (privacy.domain_budget, "Reallocation"): at most ``threshold`` (σ ``sigma``) when every auto
    column is decided categorical, lower when others are decided text, id or date. Public."""
    return ("note", f"the discovery threshold above is before reallocation: an auto column "
            f"decided categorical takes the budget of the histograms its kind does not run "
            f"(its heap histogram; a text or id column's), so its threshold is at most "
            f"{threshold:,.0f} rows (σ = {sigma:.1f}; that is when every auto column is decided "
            "categorical), lower when others are decided text, id or date (same ε and δ: the "
            "run's domain lines give the threshold used).")


def heap_message(threshold: float, sigma: float, records: int | None,
                 columns: list[str]) -> tuple[str, str]:
    """What DP heap discovery (synthpriv.domain_stage.heap_columns, docs/schema.md) keeps, from
    the plan alone: the count T_h at which a value a numeric column piles up on becomes a point
    mass (half the time; nearly always at T_h + 2σ_h), with the shares when n̂ is public (else
    the table sizes). Always a ``note``: a heap that is not kept stays in its bin (decoded at the
    bin's roundest value), the column is still released. Public only: T_h, σ_h, n̂, the names of
    the ``columns`` measured."""
    counts, sizes = selection_figures(threshold, sigma, records)
    return ("note", f"DP heap discovery ({', '.join(columns)}): a value a numeric column piles "
            f"up on (a 0, a default, a heaped amount) is kept as a point mass when about "
            f"{threshold:,.0f} rows hold it ({counts}); a rarer heap stays in its bin, decoded at "
            f"the bin's roundest value: {sizes}.")


def draft_warning(job: Job) -> str:
    """The schema says it was drafted by a tool and never reviewed (``drafted_by``)."""
    return (f"WARNING: the schema (data.schema of {job.source}) is a draft written by "
            f"'{job.schema.drafted_by}' and never marked reviewed: its bounds, categories and "
            "precision were read from the data, so they may not be public and the release may "
            "leak them: a release made with it states NO GUARANTEE (ε only 'if the schema were "
            "public'). Review every domain, replace it with public knowledge, then delete the "
            "schema's 'drafted_by' line.")


def delta_note(job: Job) -> str | None:
    """Without a public row count, δ < 1/n is checked only after the stages, on the run's DP
    estimate n̂ (``synthpriv.job.check_delta``): said at plan time when δ is large enough for
    that check to refuse a table of some plausible size (δ above the public rule's 10⁻⁶)."""
    from synthpriv.job import DELTA_WITHOUT_COUNT

    budget = job.config.budget
    if (job.config.data.public_records is not None or budget.allow_large_delta
            or budget.delta <= DELTA_WITHOUT_COUNT):
        return None
    return (f"note: budget.delta = {budget.delta:g} is checked after the stages against 1/n̂, n̂ "
            "the run's DP estimate of the row count (never the exact count): a table of about "
            f"{_figure(1.0 / budget.delta)} rows or more is refused then, its budget spent and "
            "nothing released. Set data.public_records to check it before the run.")


def tstr_note(job: Job, evaluate: bool = True) -> str | None:
    """What happens to train-synthetic/test-real when a target is set but no real rows are kept
    from the generator (no data.holdout, no evaluation.holdout_fraction): it is skipped."""
    evaluation, data = job.config.evaluation, job.config.data
    if (not evaluate or not evaluation.enabled or evaluation.target is None
            or data.holdout is not None or evaluation.holdout_fraction is not None):
        return None
    return (f"note: evaluation.target '{evaluation.target}' is set, but there is no holdout "
            "(data.holdout) and no evaluation.holdout_fraction, so train-synthetic/test-real "
            "(TSTR) will be skipped: it tests on real rows the generator did not see, and nothing "
            "is held back by default. Name a holdout file in data.holdout, or set "
            "evaluation.holdout_fraction (e.g. 0.2) to hold back that share of the rows.")
