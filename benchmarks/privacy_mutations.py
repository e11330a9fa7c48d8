"""Privacy mutation suite (issue 23, item 6): plant one realistic privacy bug at a time and check
that the fast test suite catches it.

Each mutation is an exact source edit (file, old text → new text). For each one, the tree is
copied to a scratch folder, the edit applied there (never in this checkout), and the fast suite
run in the copy with ``-x`` and PYTHONPATH at the copy: the test files expected to catch the
mutation first, then the rest, so a caught mutation stops in seconds. A mutation whose old text
is not found is reported as ``text not found`` (a refactor moved the code: update the mutation),
and counts as a failure of the suite, as does a mutation that survives.

    .venv/bin/python benchmarks/privacy_mutations.py            # every mutation
    .venv/bin/python benchmarks/privacy_mutations.py --list
    .venv/bin/python benchmarks/privacy_mutations.py --only dpsgd-noise-halved

Exit status 0 only when every mutation applied and was caught.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COPIED = ("synthpriv", "tests", "configs", "data", "pipelines", "benchmarks", "pyproject.toml",
          "README.md", "Makefile")


@dataclass(frozen=True)
class Mutation:
    """One planted bug: replace ``old`` (which must occur exactly once) by ``new`` in ``path``;
    ``tests`` are the test files expected to catch it (run first)."""

    name: str
    path: str
    old: str
    new: str
    tests: tuple[str, ...]
    what: str


MUTATIONS: tuple[Mutation, ...] = (
    Mutation(
        "measurement-noise-halved", "synthpriv/privacy/mechanisms.py",
        "noise = sample_discrete_gaussian(sigma, integer_counts.shape, source)",
        "noise = sample_discrete_gaussian(sigma / 2, integer_counts.shape, source)",
        ("tests/privacy/test_noise_scales.py",),
        "the Gaussian mechanism adds half the noise its callers record"),
    Mutation(
        "measurement-event-without-sensitivity", "synthpriv/marginals/measurement.py",
        "ledger.record(DiscreteGaussianEvent(sigma / sensitivity, 1, label=label))",
        "ledger.record(DiscreteGaussianEvent(sigma, 1, label=label))",
        ("tests/privacy/test_noise_scales.py",),
        "a marginal's event records σ as the multiplier (under-charges replace-one by √2)"),
    Mutation(
        "noisy-count-true-n", "synthpriv/marginals/stage.py",
        "return max(float(count.noisy_counts), 1.0)",
        "return max(float(state.data.records), 1.0)",
        ("tests/marginals/test_adaptive_privacy.py",),
        "(a) the true n, not the noisy count, sizes the adaptive grid"),
    Mutation(
        "bin-count-true-n", "synthpriv/marginals/stage.py",
        "records = float(self.context.public_records or estimate_total(one_way))",
        "records = float(self.context.public_records or fine.records)",
        ("tests/marginals/test_adaptive_privacy.py",),
        "(a) the number of adaptive bins, round(sqrt(n̂/(c·σ))), from the true n"),
    Mutation(
        "aim-one-way-true-n", "synthpriv/marginals/stage.py",
        'settings = self._aim_settings(records, plan.noise["aim_rho"])',
        'settings = self._aim_settings(float(fine.records), plan.noise["aim_rho"])',
        ("tests/marginals/test_aim_one_way.py",),
        "AIM's 1-way noise on a small table (settings.one_way_sigma) from the true n"),
    Mutation(
        "sized-warning-true-n", "synthpriv/job.py",
        "else sized_noise_warning(job, *planned, records, warnings))",
        "else sized_noise_warning(job, *planned, float(run.state.data.records), warnings))",
        ("tests/test_plan_time.py",),
        "(a) the run-time noise warning (terminal, API) states the table's true row count "
        "instead of the model's DP n̂"),
    Mutation(
        "aim-few-columns-noise-half", "synthpriv/marginals/stage.py",
        "        return round_noise(rho, fewer, self.options.aim_gaussian_fraction)[0]",
        "        return round_noise(rho, fewer, self.options.aim_gaussian_fraction)[0] / 2",
        ("tests/marginals/test_aim_few_columns.py",),
        "AIM's 1-way round on a table of few columns (settings.one_way_rounds) at half its "
        "rule's noise"),
    Mutation(
        "bins-from-exact-counts", "synthpriv/marginals/stage.py",
        "schema, data.domain, one_way, records, max_bins=self.options.max_bins,",
        "schema, data.domain, [Measurement(m.clique, data.marginal(m.clique), "
        "m.sigma) for m in one_way], records, max_bins=self.options.max_bins,",
        ("tests/marginals/test_adaptive_privacy.py",),
        "(b) bins and merged categories chosen from the exact 1-way counts"),
    Mutation(
        "exact-decoding-masses", "synthpriv/marginals/stage.py",
        "            bins)\n        if not total.changed:",
        "            bins)\n        total = __import__('dataclasses').replace(total, masses={a: "
        "fine.marginal((a,)).astype(float) for a in fine.domain.attributes})\n"
        "        if not total.changed:",
        ("tests/marginals/test_point_masses.py", "tests/marginals/test_adaptive_privacy.py"),
        "(c) exact fine counts as the decoding masses (saved in model.npz)"),
    Mutation(
        "dp-bounds-exact-buckets", "synthpriv/domain_stage.py",
        "read_bounds(noisy, sigma, grid, columns, valued)",
        "read_bounds(bucket_counts[name].astype(float), sigma, grid, columns, valued)",
        ("tests/privacy/test_domain_randomness.py",),
        "(d) DP bounds read from the exact bucket counts"),
    Mutation(
        "grid-shape-exact-buckets", "synthpriv/domain_stage.py",
        "shape = octave_shape(noisy, sigma, grid, reading, columns, valued)",
        "shape = octave_shape(bucket_counts[name].astype(float), sigma, grid, reading, "
        "columns, valued)",
        ("tests/test_octave_grid.py",),
        "the fine grid's shape (grid_shape) read from the exact bucket counts"),
    Mutation(
        "category-discovery-exact", "synthpriv/privacy/partition.py",
        "kept = {v: int(n) for v, n in zip(values, noisy, strict=True) if n >= threshold}",
        "kept = {v: int(n) for v, n in zip(values, exact, strict=True) if n >= threshold}",
        ("tests/privacy/test_domain_randomness.py",),
        "categories kept by their exact count against the threshold"),
    Mutation(
        "threshold-delta-not-split", "synthpriv/privacy/domain_budget.py",
        "selection_threshold(\n            sigma, delta / shares, neighbouring, epsilon,",
        "selection_threshold(\n            sigma, delta, neighbouring, epsilon,",
        ("tests/privacy/test_domain_randomness.py", "tests/privacy/test_domain_mechanisms.py"),
        "each discovered column's threshold takes the whole δ share (not split over columns)"),
    Mutation(
        "threshold-delta-off-by-one", "synthpriv/privacy/partition.py",
        "return tail(threshold - 1)",
        "return tail(threshold)",
        ("tests/privacy/test_domain_randomness.py", "tests/privacy/test_domain_mechanisms.py"),
        "add/remove δ of a threshold priced for a new value of count 0, not 1"),
    Mutation(
        "replace-one-l2-sensitivity", "synthpriv/privacy/mechanisms.py",
        "        return _bound(rows_per_person) * math.sqrt(2.0)",
        "        return float(_bound(rows_per_person))",
        ("tests/privacy/test_noise_scales.py",),
        "a histogram's L2 sensitivity under replace-one taken as 1 (is √2)"),
    Mutation(
        "replace-one-l1-sensitivity", "synthpriv/privacy/mechanisms.py",
        '    if neighbouring == "replace_one":\n        return 2.0 * _bound(rows_per_person)',
        '    if neighbouring == "replace_one":\n        return 1.0 * _bound(rows_per_person)',
        ("tests/privacy/test_noise_scales.py",),
        "a histogram's L1 sensitivity (selection scores) under replace-one taken as 1 (is 2)"),
    Mutation(
        "exponential-mechanism-scale", "synthpriv/privacy/mechanisms.py",
        "return epsilon * np.asarray(scores, dtype=float) / (2.0 * sensitivity)",
        "return epsilon * np.asarray(scores, dtype=float) / sensitivity",
        ("tests/privacy/test_selection_privacy.py",),
        "exponential mechanism at ε·score/Δ: twice the ε recorded"),
    Mutation(
        "aim-selection-not-recorded", "synthpriv/marginals/aim.py",
        'budget.record(ExponentialEvent(epsilon, 1, label="AIM selection"))',
        'pass  # the selection event is not recorded',
        ("tests/privacy/test_selection_privacy.py",),
        "AIM's selections run but are never charged to the filter"),
    Mutation(
        "mst-selection-event-halved", "synthpriv/marginals/stage.py",
        'ledger.record(ExponentialEvent(epsilon, len(tree), label="MST edge selection"))',
        'ledger.record(ExponentialEvent(epsilon / 2, len(tree), label="MST edge selection"))',
        ("tests/privacy/test_selection_privacy.py",),
        "MST's edge selections recorded at half the ε they ran at"),
    Mutation(
        "aim-score-sensitivity", "synthpriv/marginals/aim.py",
        "return max(weights[c] for c in allowed) * l1_sensitivity",
        "return max(weights[c] for c in allowed)",
        ("tests/privacy/test_selection_privacy.py",),
        "AIM's score sensitivity w·Δ1 without Δ1 (wrong under replace-one)"),
    Mutation(
        "aim-measurement-sensitivity", "synthpriv/marginals/aim.py",
        "        sigma = multiplier * sensitivity.l2\n",
        "        sigma = multiplier\n",
        ("tests/privacy/test_selection_privacy.py",),
        "AIM's rounds measured at σ = z, not z·Δ2 (replace-one)"),
    Mutation(
        "dpsgd-clipping", "synthpriv/generators/dpsgd.py",
        'model, loss_reduction="mean", max_grad_norm=max_grad_norm, use_ghost_clipping=True',
        'model, loss_reduction="mean", max_grad_norm=4 * max_grad_norm, use_ghost_clipping=True',
        ("tests/generators/test_dpsgd.py",),
        "per-sample gradients clipped at 4C while the noise is z·C"),
    Mutation(
        "dpsgd-noise-halved", "synthpriv/generators/dpsgd.py",
        "        noise_multiplier=noise_multiplier,\n",
        "        noise_multiplier=noise_multiplier * 0.5,\n",
        ("tests/generators/test_dpsgd_noise.py",),
        "(e) DP-SGD trained at half the noise multiplier the ledger records"),
    Mutation(
        "dpsgd-sample-rate", "synthpriv/generators/dpsgd.py",
        "return np.flatnonzero(rng.random(records) < sample_rate)",
        "return np.flatnonzero(rng.random(records) < 2 * sample_rate)",
        ("tests/generators/test_dpsgd.py",),
        "Poisson batches drawn at twice the sampling rate the ledger records"),
    Mutation(
        "person-dpsgd-rows-clipped-at-c", "synthpriv/generators/dpsgd.py",
        "        clip = settings.max_grad_norm / k  # a person's ≤ k rows, each ≤ C/k, sum to ≤ C\n"
        "        multiplier = settings.noise_multiplier * k  # Opacus' std: (z·k)·(C/k) = z·C\n",
        "        clip, multiplier = settings.max_grad_norm, settings.noise_multiplier\n",
        ("tests/generators/test_dpsgd_persons.py",),
        "person level, rows clipping: each row clipped at C (not C/k) under noise z·C, so a "
        "person's k rows move the sum by k·C"),
    Mutation(
        "person-dpsgd-noise-not-scaled", "synthpriv/generators/dpsgd.py",
        "multiplier = settings.noise_multiplier * k  #",
        "multiplier = settings.noise_multiplier  #",
        ("tests/generators/test_dpsgd_noise.py",),
        "person level, rows clipping: rows at C/k but the multiplier not raised to z·k: noise "
        "z·C/k"),
    Mutation(
        "person-dpsgd-samples-rows", "synthpriv/generators/dpsgd.py",
        "block = persons.members[poisson_batch(persons.persons, settings.sample_rate, rng)]",
        "block = poisson_batch(codes.shape[0], settings.sample_rate, rng)[:, None]",
        ("tests/generators/test_dpsgd_persons.py",),
        "person level: rows sampled (and clipped) one by one at rate q, not persons"),
    Mutation(
        "person-dpsgd-padding-unmasked", "synthpriv/generators/dpsgd.py",
        "return (rows * (index >= 0).to(rows.dtype)).sum(dim=1)",
        "return rows.sum(dim=1)",
        ("tests/generators/test_dpsgd_persons.py",),
        "person level: the padding of persons with < k rows (row 0 repeated) left in their "
        "losses, so one person's row reaches other persons' clipped gradients"),
    Mutation(
        "person-count-sensitivity-one", "synthpriv/generators/stage.py",
        "return COUNT_SENSITIVITY * (self.context.rows_per_person or 1)",
        "return COUNT_SENSITIVITY",
        ("tests/generators/test_dpsgd_persons.py",),
        "person level: the generator's noisy record count calibrated to sensitivity 1, not k"),
    Mutation(
        "hold-back-fixed-size", "synthpriv/job.py",
        "return bernoulli_mask(rows, fraction, source)",
        "return np.isin(np.arange(rows), source.numpy_generator().permutation(rows)"
        "[:round(fraction * rows)])",
        ("tests/privacy/test_hold_back.py",),
        "a hold-back of fixed size round(f·n): adding a row can replace a fitted one"),
    Mutation(
        "person-bounding-first-k", "synthpriv/persons.py",
        "priority = source.uniform_words(len(table))",
        "priority = np.arange(len(table), dtype=np.uint64)",
        ("tests/privacy/test_persons.py",),
        "data.person: each person keeps its first k rows, not k chosen by the CSPRNG"),
    Mutation(
        "person-bounding-skipped", "synthpriv/job.py",
        "bound = bound_persons(table, person, self.job.config.data.contribution_bound,",
        "bound = bound_persons(table, person, 10**9,",
        ("tests/privacy/test_persons.py",),
        "data.person: the job never bounds a person's rows (the sensitivity assumes k)"),
    Mutation(
        "person-marginals-sensitivity-not-k", "synthpriv/marginals/stage.py",
        "k = self.context.rows_per_person or 1  # data.person",
        "k = 1  # data.person",
        ("tests/privacy/test_persons.py",),
        "data.person: the marginals' sensitivity not multiplied by k (noise of one row)"),
    Mutation(
        "person-domain-sensitivity-not-k", "synthpriv/privacy/domain_budget.py",
        "sensitivity = histogram_l2_sensitivity(neighbouring, rows_per_person)",
        "sensitivity = histogram_l2_sensitivity(neighbouring)",
        ("tests/privacy/test_persons.py",),
        "data.person: the domain step's histograms (kinds, bounds, categories) at one row's noise"),
    Mutation(
        "person-threshold-delta-row-level", "synthpriv/privacy/partition.py",
        "    if rows_per_person > 1:  # up to k count-0 values",
        "    if False:  # up to k count-0 values",
        ("tests/privacy/test_persons.py",),
        "data.person: discovery thresholds' δ as for one row (one new value of count 1)"),
    Mutation(
        "person-holdback-per-row", "synthpriv/job.py",
        "    return hold_back_persons(codes, bernoulli_mask(persons, fraction, source))",
        "    return bernoulli_mask(rows, fraction, source)",
        ("tests/privacy/test_persons.py",),
        "data.person: the hold-back splits a person's rows between fitted and held back"),
    Mutation(
        "person-row-level-stage-not-refused", "synthpriv/pipeline.py",
        "    if person is not None and row_level:",
        "    if False:",
        ("tests/privacy/test_persons.py",),
        "data.person: a stage whose sensitivity is a row's runs instead of being refused"),
    Mutation(
        "person-shadow-target-one-row", "synthpriv/evaluation/shadow.py",
        "    if persons is None:\n        rest = pool.drop",
        "    if True:\n        rest = pool.drop",
        ("tests/evaluation/test_shadow.py",),
        "data.person: the shadow attack's target is one row, not a whole person"),
    Mutation(
        "person-marginal-target-one-row", "synthpriv/evaluation/marginal_attack.py",
        "    with ShadowRunner(rest, target_rows, features, workers, groups) as runner:",
        "    with ShadowRunner(rest, target_rows, features, workers, None) as runner:",
        ("tests/evaluation/test_marginal_attack_persons.py",),
        "data.person: the marginal attack adds one row of a target person, not the whole person"),
    Mutation(
        "kind-singletons-exact", "synthpriv/domain_stage.py",
        "kinds[name] = decide(noisy, sigma, unique, unique_sigma, columns)",
        "kinds[name] = decide(noisy, sigma, singletons(values[name]), unique_sigma, columns)",
        ("tests/test_auto_kinds.py",),
        "an auto column's near-unique decision read from its exact singleton count"),
    Mutation(
        "kind-decided-from-exact-counts", "synthpriv/domain_stage.py",
        "kinds[name] = decide(noisy, sigma, unique, unique_sigma, columns)",
        "kinds[name] = decide(total.astype(float), sigma, unique, unique_sigma, columns)",
        ("tests/test_auto_kinds.py", "tests/test_faint_kinds.py"),
        "an auto column's kind (the faint rule's whole-or-fractions reading included) read from "
        "its exact class counts, not the noisy ones"),
    Mutation(
        "kind-decimals-exact", "synthpriv/domain_stage.py",
        "precisions[name] = decide_precision(noisy, sigma, columns)",
        "precisions[name] = decide_precision(total, sigma, columns)",
        ("tests/test_precision.py",),
        "an auto column's precision read from its exact decimals classes, not the noisy ones"),
    Mutation(
        "kind-singleton-sensitivity", "synthpriv/privacy/domain_budget.py",
        "    return histogram_l1_sensitivity(neighbouring, rows_per_person)",
        "    return histogram_l2_sensitivity(neighbouring, rows_per_person)",
        ("tests/test_auto_kinds.py",),
        "singleton counts noised for sensitivity √2 under replace-one (it is 2)"),
    Mutation(
        "kind-singleton-sensitivity-not-k", "synthpriv/privacy/domain_budget.py",
        "    return histogram_l1_sensitivity(neighbouring, rows_per_person)",
        "    return histogram_l1_sensitivity(neighbouring)",
        ("tests/test_auto_kinds.py",),
        "data.person: singleton counts noised for one row's sensitivity, not k"),
    Mutation(
        "heap-noise-below-plan", "synthpriv/domain_stage.py",
        'heaps, rounds = heap_selection(counter, named[name], plan.noise["heap_sigma"],',
        'heaps, rounds = heap_selection(counter, named[name], plan.noise["heap_sigma"] / 2,',
        ("tests/privacy/test_heap_discovery.py",),
        "heap discovery's exact-value counts noised at half the σ the ledger records"),
    Mutation(
        "heap-threshold-skipped", "synthpriv/domain_stage.py",
        '                                           int(plan.noise["heap_threshold"]), source)',
        "                                           1, source)",
        ("tests/privacy/test_heap_discovery.py",),
        "heap discovery keeps every value present (no partition-selection threshold)"),
    Mutation(
        "round-candidates-from-data", "synthpriv/domain_stage.py",
        "named[name] = round_candidates(schema.column(name), found[name])",
        "named[name] = sorted(counter)",
        ("tests/privacy/test_round_candidates.py",),
        "heap discovery's unthresholded candidates are the values the table holds (every "
        "present value's noisy count released without the threshold), not round values named "
        "from the DP bounds"),
    Mutation(
        "lattice-candidates-present-only", "synthpriv/domain_stage.py",
        "named[name] = round_candidates(schema.column(name), found[name])",
        "named[name] = [v for v in round_candidates(schema.column(name), found[name]) "
        "if v in counter]",
        ("tests/privacy/test_round_candidates.py",),
        "a continuous column's lattice values are named only where the table holds them: their "
        "counts, released without the threshold, show which values are present"),
    Mutation(
        "round-candidates-exact-range", "synthpriv/domain_stage.py",
        "named[name] = round_candidates(schema.column(name), found[name])",
        'named[name] = round_candidates(schema.column(name), {"lower": min(counter), '
        '"upper": max(counter)})',
        ("tests/privacy/test_round_candidates.py",),
        "the round candidates are named from the column's exact range, not its DP bounds"),
    Mutation(
        "round-counts-exact", "synthpriv/domain_stage.py",
        'found[name]["round_counts"] = round_entries(rounds, found[name], masses,',
        'found[name]["round_counts"] = round_entries({v: counter.get(v, 0) for v in rounds}, '
        "found[name], masses,",
        ("tests/privacy/test_round_candidates.py",),
        "the released round counts (combined onto the round cells) are exact counts, not the "
        "heap histogram's noisy ones"),
    Mutation(
        "round-candidates-noise-halved", "synthpriv/privacy/partition.py",
        "noisy = exact + sample_discrete_gaussian(sigma, exact.shape, source)",
        "noisy = exact + sample_discrete_gaussian(sigma / 2, exact.shape, source)",
        ("tests/privacy/test_round_candidates.py",),
        "heap discovery's and the round candidates' counts noised at half the σ_h the ledger "
        "records"),
    Mutation(
        "paired-labels-without-partner", "synthpriv/privacy/candidates.py",
        "if label not in kept and partner in kept and named[label] >= PARTNER_BAR * sigma:",
        "if label not in kept and named[label] >= PARTNER_BAR * sigma:",
        ("tests/privacy/test_paired_labels.py",),
        "category discovery keeps a paired label at the partner's lower bar whether or not its "
        "partner passed the threshold (26 labels at 2.5σ: fake Yes/No in a column of names)"),
    Mutation(
        "paired-labels-exact", "synthpriv/privacy/candidates.py",
        "chosen = with_partners(kept, drawn, sigma)",
        "chosen = with_partners(kept, {v: counts.get(v, 0) for v in drawn}, sigma)",
        ("tests/privacy/test_paired_labels.py",),
        "a paired label kept by its exact count against the partner's bar, not its noisy one"),
    Mutation(
        "bucket-piles-exact", "synthpriv/domain_stage.py",
        "list(heaps) + bucket_piles(noisy, sigma, buckets[name]))",
        "list(heaps) + bucket_piles(bucket_counts[name], sigma, buckets[name]))",
        ("tests/privacy/test_bucket_piles.py",),
        "a one-value bucket's pile (0, ±1) declared a point mass from its exact count, not the "
        "bounds histogram's noisy one"),
    Mutation(
        "refine-noise-half", "synthpriv/domain_stage.py",
        "counts = discrete_gaussian_histogram(exact, refine_sigma, source)",
        "counts = discrete_gaussian_histogram(exact, refine_sigma / 2, source)",
        ("tests/privacy/test_bounds_refine.py",),
        "the bounds refinement's sub-bucket counts noised at half the σ_r its ledger event "
        "states"),
    Mutation(
        "date-refine-noise-half", "synthpriv/domain_stage.py",
        "counts = discrete_gaussian_histogram(exact, date_sigma, source)",
        "counts = discrete_gaussian_histogram(exact, date_sigma / 2, source)",
        ("tests/privacy/test_date_refine.py",),
        "a date column's end-year sub-bucket counts noised at half the σ_d its ledger event "
        "states"),
    Mutation(
        "weekday-noise-half", "synthpriv/domain_stage.py",
        "counts = noisy_weekdays(exact, sigma, source)",
        "counts = noisy_weekdays(exact, sigma / 2, source)",
        ("tests/privacy/test_dp_weekdays.py",),
        "a date column's weekday counts noised at half the σ_w its ledger event states"),
    Mutation(
        "declared-date-unplanned", "synthpriv/privacy/domain_budget.py",
        "heap_weight = ((len(heaps) + len(dates)) * heap_column_weight()",
        "heap_weight = ((len(heaps)) * heap_column_weight()",
        ("tests/privacy/test_dp_weekdays.py", "tests/privacy/test_date_refine.py"),
        "a declared date's refinement and weekday histograms run and are recorded, but the "
        "plan's z leaves their weight out (the step spends more ρ than the plan states)"),
    Mutation(
        "declared-date-unrecorded", "synthpriv/privacy/domain_budget.py",
        "    events += date_events(multiplier, dates, weekday_dates)\n",
        "    events += date_events(multiplier, (), weekday_dates)\n",
        ("tests/privacy/test_dp_weekdays.py", "tests/privacy/test_date_refine.py"),
        "a declared date's refinement and weekday histograms run but are left off the plan and "
        "the ledger"),
    Mutation(
        "weekday-only-noise-half", "synthpriv/domain_stage.py",
        """            found[name] = weekday_domain(schema.column(name), {}, weekday_exact[name],
                                         plan.noise["weekday_sigma"], source,""",
        """            found[name] = weekday_domain(schema.column(name), {}, weekday_exact[name],
                                         plan.noise["weekday_sigma"] / 2, source,""",
        ("tests/privacy/test_dp_weekdays.py",),
        "a declared date with public bounds: its weekday counts noised at half the σ_w its "
        "ledger event states"),
    Mutation(
        "weekday-decision-exact", "synthpriv/domain_stage.py",
        "days = decided_weekdays(counts, sigma)",
        "days = decided_weekdays(np.asarray(exact, dtype=float), sigma)",
        ("tests/privacy/test_dp_weekdays.py",),
        "a date column's weekdays decided from its exact weekday counts, not the noisy ones"),
    Mutation(
        "heap-range-exact-buckets", "synthpriv/domain_stage.py",
        "found[name] = self._heap_bounds(schema.column(name), found[name], noisy, sigma,",
        "found[name] = self._heap_bounds(schema.column(name), found[name],"
        " bucket_counts[name], sigma,",
        ("tests/privacy/test_heap_range.py",),
        "the heaps' range test reads the exact bucket counts, not the noisy histogram"),
    Mutation(
        "heap-range-exact-heaps", "synthpriv/domain_stage.py",
        "buckets[name], reading, shape, heaps,",
        "buckets[name], reading, shape, {v: counter[v] for v in heaps},",
        ("tests/privacy/test_heap_range.py",),
        "the heaps' range test subtracts the kept heaps' exact counts, not their noisy"
        " ones"),
    Mutation(
        "realloc-weight-not-shared", "synthpriv/privacy/domain_budget.py",
        "realised.weight = 1.0 + unused / len(cats)",
        "realised.weight = 1.0 + unused",
        ("tests/privacy/test_domain_realloc.py",),
        "every column decided categorical takes all of the unused weight, not its share"),
    Mutation(
        "realloc-noise-below-ledger", "synthpriv/domain_stage.py",
        "column_sigma, threshold = realised.category_sigma, realised.category_threshold",
        "column_sigma, threshold = realised.category_sigma / 1.3, realised.category_threshold",
        ("tests/privacy/test_domain_realloc.py",),
        "reallocated category discovery noised below the σ its ledger event records"),
    Mutation(
        "realloc-unused-not-recorded", "synthpriv/privacy/domain_budget.py",
        "    if not cats:  # nothing takes the unused weight",
        "    if False:  # nothing takes the unused weight",
        ("tests/privacy/test_domain_realloc.py",),
        "an outcome with no categorical column records less than the plan (ε then depends on "
        "the kinds decided)"),
    Mutation(
        "unrun-not-recorded", "synthpriv/pipeline.py",
        "ledger.extend(unrun_events(stage_plan.events, ledger.accounted_since(start),",
        "ledger.extend(unrun_events([], ledger.accounted_since(start),",
        ("tests/privacy/test_unrun_events.py",),
        "a stage's planned events it did not run (a column decided text) left off the ledger: "
        "the reported ε then depends on the kinds decided"),
    Mutation(
        "kept-rows-exact", "synthpriv/domain_stage.py",
        "found[name] = self._categories(column, kept, column_sigma, bars, listed)",
        "found[name] = self._categories(column, {v: counter[v] for v in kept}, "
        "column_sigma, bars, listed)",
        ("tests/marginals/test_missing_fold.py", "tests/marginals/test_discovery_counts.py"),
        "a discovered column's kept_rows (in the release's schema) summed from exact counts"),
    Mutation(
        "kinds-records-exact", "synthpriv/domain_stage.py",
        'self.kinds_records = {"records": records_estimate(histograms, sigma),',
        'self.kinds_records = {"records": records_estimate(list(counts.values()), sigma),',
        ("tests/marginals/test_missing_fold.py",),
        "a discovered column's kept_rows.records (in the release's schema) read from the kinds "
        "pass's exact class counts, not its noisy ones"),
    Mutation(
        "discovery-with-exact-counts", "synthpriv/marginals/stage.py",
        "return [with_discovery(column, m) if isinstance(",
        "return [with_discovery(column, Measurement(m.clique, state.data.marginal(m.clique), "
        "m.sigma)) if isinstance(",
        ("tests/marginals/test_discovery_counts.py",),
        "the domain step's kept counts combined with the exact 1-way counts, not the recipe's "
        "noisy ones (the release's 1-way counts then carry discovery's noise only)"),
    Mutation(
        "bounds-seed-ungated", "synthpriv/privacy/bounds.py",
        "if present is None or present.count < presence_threshold(columns) * present.sigma:",
        "if present is None:",
        ("tests/privacy/test_bounds_seed.py",),
        "the DP bounds' seed runs whatever the column's DP count of cells: a column with no "
        "value gets bounds from noise at FALSE_SEED, not the per-column false-bucket rate"),
    Mutation(
        "bounds-seed-one-width", "synthpriv/privacy/bounds.py",
        "windows = sum(max(buckets - w + 1, 0) for w in range(1, SEED_WIDTH + 1))",
        "windows = buckets",
        ("tests/privacy/test_bounds_seed.py",),
        "the seed's score threshold union-bounds the windows of one width only: pure noise "
        "seeds far above FALSE_SEED"),
    Mutation(
        "bounds-beyond-zero-ungated", "synthpriv/privacy/bounds.py",
        "rest = Present(present.count - float(noisy[zero]), math.hypot(present.sigma, sigma))",
        "rest = Present(present.count, math.hypot(present.sigma, sigma))",
        ("tests/privacy/test_bounds_beyond_zero.py",),
        "step 1c's gate reads the whole DP count of cells, zeros included: a column of zeros "
        "seeds from the noise beyond zero at FALSE_SEED, not the per-column false-bucket rate"),
    Mutation(
        "bounds-beyond-zero-pile-scored", "synthpriv/privacy/bounds.py",
        "masked[zero] = -np.inf  # no window holds the known pile, nor joins both signs across it",
        "masked[zero] = masked[zero]",
        ("tests/privacy/test_bounds_beyond_zero.py",),
        "step 1c's windows may hold the zero bucket: the pile of zeros scores them, so a column "
        "of zeros seeds the noise next to zero and gets fake values"),
    Mutation(
        "bounds-mirror-tail-threshold", "synthpriv/privacy/bounds.py",
        "if chosen is None or best < mirror_threshold(columns, MIRROR_WIDENINGS):",
        "if chosen is None or best < EXTEND_NOISE:",
        ("tests/privacy/test_bounds_mirror.py",),
        "step 1d's mirror test at the tail rule's 2.5σ√w: pure noise on the other sign passes "
        "at ≈ 4·Φ(−2.5) ≈ 2 %, so counts and amounts get negative bounds and values"),
    Mutation(
        "bounds-spread-at-tail-rule", "synthpriv/privacy/bounds.py",
        "or np.count_nonzero(noisy[kept] >= SPREAD_NOISE * sigma) >= 2)",
        "or np.count_nonzero(noisy[kept] >= EXTEND_NOISE * sigma) >= 2)",
        ("tests/privacy/test_bounds_signed.py", "tests/privacy/test_bounds_readout.py"),
        "the guard's octave test counts any two buckets the tail rule kept (≥ 2.5σ): a false "
        "tail pass next to a one-octave column (a year, 0.6 % of draws a side) widens it to "
        "[0, 2^k] and its cells draw values from noise"),
    Mutation(
        "bounds-tail-window-no-sqrt", "synthpriv/privacy/bounds.py",
        "if window.sum() >= threshold * sigma * math.sqrt(w):",
        "if window.sum() >= threshold * sigma:",
        ("tests/privacy/test_bounds_tail_windows.py",),
        "step 1e's tail windows tested at 2.87σ whatever their width: pure noise over 8 buckets "
        "(σ√8 = 2.8σ) passes about one draw in six, so columns with no tail get bounds up to "
        "256× wider"),
    Mutation(
        "bounds-tail-window-no-union", "synthpriv/privacy/bounds.py",
        "return float(norm.isf(FALSE_TAIL / windows))",
        "return float(norm.isf(FALSE_TAIL))",
        ("tests/privacy/test_bounds_tail_windows.py",),
        "step 1e's threshold without the union bound over the 3 windows of a side: pure noise "
        "beyond a support passes above the stated FALSE_TAIL"),
    Mutation(
        "bounds-tail-window-off", "synthpriv/privacy/bounds.py",
        "    return spread_tails(noisy, sigma, kept, middle)",
        "    return kept",
        ("tests/privacy/test_bounds_tail_windows.py",),
        "step 1e skipped: a heavy tail spread over several octaves, each below 2.5σ, is cut by "
        "the tail rule and clipped onto the upper bound"),
    Mutation(
        "bounds-guard-noise-no-sqrt", "synthpriv/privacy/bounds.py",
        "hidden = total >= EXTEND_NOISE * sigma * math.sqrt(max(guard.sum(), 1))",
        "hidden = total >= EXTEND_NOISE * sigma",
        ("tests/privacy/test_guard_noise.py",),
        "the guard's buckets towards zero tested at 2.5σ whatever their number: pure noise over "
        "9 octaves (σ√9 = 3σ) passes about one draw in five, and the octave shape gives the "
        "empty octaves below a column's support cells and rows (values below the real minimum)"),
    Mutation(
        "heap-counts-exact", "synthpriv/domain_stage.py",
        "found[name][\"heap_counts\"] = heap_entries(heaps, masses,",
        "found[name][\"heap_counts\"] = heap_entries({v: counter[v] for v in heaps}, masses,",
        ("tests/marginals/test_heap_counts.py",),
        "a numeric column's heap_counts (in the release's schema, combined onto the point-mass "
        "cells) are the kept heaps' exact counts, not their noisy ones"),
    Mutation(
        "bucket-counts-exact", "synthpriv/domain_stage.py",
        "if carried := bucket_entries(schema.column(name), found[name], noisy, sigma,",
        "if carried := bucket_entries(schema.column(name), found[name], bucket_counts[name], sigma,",
        ("tests/marginals/test_bucket_counts.py",),
        "a numeric column's bucket_counts (in the release's schema, combined with its 1-way "
        "cells) are the DP bounds' exact bucket counts, not the noisy histogram's"),
    Mutation(
        "small-table-share-reads-rows", "synthpriv/pipeline.py",
        "    records = context.public_records\n",
        "    records = context.public_records or len(pd.read_csv(job.base_dir / job.config.data"
        ".path))\n",
        ("tests/test_small_table_share.py",),
        "the small-table rule reads the table's row count when none is public: the domain "
        "step's share (and every stage's noise) then depends on n, unaccounted"),
    Mutation(
        "small-branch-reads-rows", "synthpriv/domain_stage.py",
        "            self.kind_counts[name] = noisy\n",
        "            self.kind_counts[name] = total.astype(float)\n",
        ("tests/test_dp_small_table.py",),
        "the small-table branch (no public row count) is chosen from the exact class counts, "
        "i.e. the true row count, not the DP n̂: the split of ρ then depends on n, unaccounted"),
    Mutation(
        "small-branch-pld", "synthpriv/domain_stage.py",
        "        if self.small is None:\n            ledger.extend(events)",
        "        if True:\n            ledger.extend(events)",
        ("tests/test_dp_small_table.py",),
        "the domain step's pass 2, its share chosen from the DP n̂, is recorded as fixed events: "
        "the ledger may then report a PLD bound, unproven for an adaptively chosen branch"),
    Mutation(
        "small-branch-job-delta", "synthpriv/domain_stage.py",
        "        self.delta = small.delta if self.small_taken else self.job_delta\n",
        "",
        ("tests/test_dp_small_table.py",),
        "the small-table branch's pass 2 splits the job's domain δ, not the δ its plan priced: "
        "its thresholds plus the branch padding then spend more δ than the plan (ε over budget)"),
    Mutation(
        "aim-wide-batch-unsplit", "synthpriv/privacy/budget.py",
        "return gaussian_noise_multiplier(share * rho, measurements), later, epsilon",
        "return gaussian_noise_multiplier(share * rho, 1), later, epsilon",
        ("tests/marginals/test_aim_batch.py",),
        "a wide table's 1-way batch: each of the d measurements at the whole batch's noise"),
    Mutation(
        "list-adopted-from-raw-cells", "synthpriv/domain_stage.py",
        "listed, test = list_decision(kept, column.lists or [],",
        "listed, test = list_decision(counter, column.lists or [],",
        ("tests/test_list_adoption.py",),
        "a public list adopted when the table's real distinct values (not the DP-discovered "
        "ones) all lie in it: one row outside the list changes the released domain"),
    Mutation(
        "list-test-without-noise", "synthpriv/domain_stage.py",
        "listed, test = list_decision(kept, column.lists or [], noisy, column_sigma,",
        "listed, test = list_decision(kept, column.lists or [], {v: counter.get(v, 0) for v "
        "in noisy}, column_sigma,",
        ("tests/test_list_adoption.py",),
        "the list membership test (S empty) reads the exact in-list count instead of the sum of "
        "the listed values' noisy counts: the released in-list figure is the table's own"),
    Mutation(
        "kind-cell-in-every-date-format", "synthpriv/kinds.py",
        "        timed[left[hit]] = True\n        left = left[~hit]\n",
        "        timed[left[hit]] = True\n",
        ("tests/test_kinds.py",),
        "a date cell counted in every public format it parses under (03/04/2021: month first "
        "and day first), not the first: one row moves the kind histogram by √2, noised for 1"),
)


def apply(mutation: Mutation, tree: Path) -> None:
    """Edit the copy at ``tree``; ValueError when the old text is not there exactly once."""
    target = tree / mutation.path
    if not target.exists():
        raise ValueError(f"mutation text not found: {mutation.path} does not exist")
    text = target.read_text()
    found = text.count(mutation.old)
    if found != 1:
        raise ValueError(f"mutation text not found: {mutation.path} holds the old text {found} "
                         f"times (expected once): {mutation.old!r}")
    target.write_text(text.replace(mutation.old, mutation.new))


def copy_tree(scratch: Path) -> Path:
    tree = scratch / "tree"
    tree.mkdir()
    # .cache: the benchmarks' local data cache (gitignored; may hold symlinks), not code under test
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", ".pytest_cache", ".cache")
    for name in COPIED:
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, tree / name, ignore=ignore)
        elif source.exists():
            shutil.copy2(source, tree / name)
    return tree


def first_failure(output: str) -> str:
    """The first failing test and, shortened, why (pytest's short summary line)."""
    match = re.search(r"^(?:FAILED|ERROR) (\S+)(?: - (.*))?$", output, re.MULTILINE)
    if not match:
        return ""
    test, reason = match.group(1), (match.group(2) or "").replace("|", "/")
    return f"{test} ({reason[:80]})" if reason else test


def run_one(
    mutation: Mutation, python: str, timeout: float, targeted: bool = False
) -> tuple[str, str, float]:
    """(verdict, first failing test, seconds) for one mutation: its own test files first, then
    (if they pass) the rest of the fast suite; ``targeted``: its own files only (a quick check
    while writing tests, not the suite's verdict)."""
    start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="mutation-") as scratch:
        tree = copy_tree(Path(scratch))
        try:
            apply(mutation, tree)
        except ValueError as error:
            return "TEXT NOT FOUND", str(error), time.monotonic() - start
        first = [t for t in mutation.tests if (tree / t).exists()]
        missing = [t for t in mutation.tests if t not in first]
        if missing:
            print(f"  warning: {mutation.name}: test files not found: {missing}", file=sys.stderr)
        base = [python, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider", "-rfE"]
        runs = [base + first] if first else []
        if not targeted:  # two runs: pytest reorders a file given beside its folder
            runs.append(base + ["tests"] + [f"--ignore={t}" for t in first])
        environment = {**os.environ, "PYTHONPATH": str(tree), "COLUMNS": "400"}
        for command in runs:
            try:
                done = subprocess.run(command, cwd=tree, env=environment, capture_output=True,
                                      text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                return "TIMEOUT", "", time.monotonic() - start
            if done.returncode != 0:  # a failure, or a collection error or crash: not a pass
                failing = first_failure(done.stdout + done.stderr)
                return "caught", failing or f"pytest exit {done.returncode}", \
                    time.monotonic() - start
        return "SURVIVED", "", time.monotonic() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", action="append", help="run this mutation (repeatable)")
    parser.add_argument("--list", action="store_true", help="list the mutations and exit")
    parser.add_argument("--python", default=sys.executable, help="interpreter running pytest")
    parser.add_argument("--targeted", action="store_true",
                        help="run each mutation's own test files only (quick; not the verdict)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per mutation")
    args = parser.parse_args(argv)
    names = {m.name for m in MUTATIONS}
    if args.list:
        for m in MUTATIONS:
            print(f"{m.name:40s} {m.path:38s} {m.what}")
        return 0
    chosen = list(MUTATIONS)
    if args.only:
        unknown = sorted(set(args.only) - names)
        if unknown:
            parser.error(f"unknown mutation(s) {unknown}; --list shows the {len(names)} names")
        chosen = [m for m in MUTATIONS if m.name in args.only]
    rows = []
    print("| mutation | caught? | first failing test | seconds |")
    print("|---|---|---|---|")
    for mutation in chosen:
        verdict, failing, seconds = run_one(mutation, args.python, args.timeout, args.targeted)
        rows.append(verdict)
        print(f"| {mutation.name} | {verdict} | {failing} | {seconds:.0f} |", flush=True)
    bad = [v for v in rows if v != "caught"]
    print(f"\n{len(rows) - len(bad)} of {len(rows)} mutations caught", flush=True)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
