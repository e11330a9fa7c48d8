"""The heaps' range (issue 24: a year column of 7 values in a range chosen under DP came back
spread over 50 years): when heap discovery's kept values hold a column's rows within the noise
(``privacy.bounds.heap_range``), its DP bounds become [smallest heap, largest heap].
Behavioural checks through the domain step: seeded draws of the bounds, the residual's noise
measured from its outputs against the σ it states, and the ledger's events."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import EXTEND_NOISE, SEEN_TAIL, selected_count
from tests.privacy.test_heap_discovery import _job, _resolve, _table

YEARS = {float(year): 300 + 15 * (year - 2003) for year in range(2003, 2010)}  # Wage's shape


def _bounds(resolved) -> tuple[float, float]:
    column = resolved.schema.column("x")
    return column.lower, column.upper


def test_a_column_on_a_few_heaps_gets_the_heaps_range(tmp_path: Path) -> None:
    """Seven consecutive years, every row on one (Wage's `year`): the octave's bounds
    [1024, 2047] become [2003, 2009] with each year a point mass, and no side spreads clipped
    values. The rule fails with probability ≈ Φ(−2.5) per draw, and a false tail bucket the
    noise shows (≈ Φ(−2.5) per side) widens it: at most 3 of 60 draws miss. The seven heaps
    share one bucket, so each side's end test (``EndTest``) is the whole-range test itself (same
    residual, same σ; the heaps are far above their threshold, so no selection lift)."""
    table = _table(YEARS)
    job, plan, stage = _job(tmp_path, table)
    hits = 0
    for seed in range(60):
        resolved, kept = _resolve(job, plan, stage, table, seed)
        column = resolved.schema.column("x")
        found = stage.heap_ranges["x"]
        if found.outer == (1024.0, 2047.0):  # the reading is the years' one bucket
            for end in found.ends:
                assert (end.residual, end.sigma) == pytest.approx((found.residual, found.sigma))
        if _bounds(resolved) == (2003.0, 2009.0):
            hits += 1
            assert column.point_masses == sorted(kept) == sorted(YEARS)
            assert column.spread_clipped == []
        else:  # the rule did not fire, or a false tail bucket widened it: the years inside
            assert _bounds(resolved)[0] <= 2003.0 and _bounds(resolved)[1] >= 2009.0
    assert hits >= 57, hits


@pytest.mark.parametrize("counts", [
    {float(v): 200 + 40 * v for v in range(1, 8)},  # a Likert 1-7 scale
    {0.0: 700, 1.0: 500},  # a 0/1 flag
])
def test_codes_get_their_own_range(tmp_path: Path, counts: dict[float, int]) -> None:
    """A Likert scale and a flag (every value a heap) get [smallest, largest value]: a Likert
    scale's 0 (the guard's widening towards zero) is gone. At most 1 of 10 draws misses."""
    table = _table(counts)
    job, plan, stage = _job(tmp_path, table)
    hits = sum(_bounds(_resolve(job, plan, stage, table, seed)[0]) == (min(counts), max(counts))
               for seed in range(10))
    assert hits >= 9, hits


def test_a_bucket_the_noise_shows_beyond_the_heaps_stays_in_range(tmp_path: Path) -> None:
    """Heaps 16, 17, 18 (2,000 rows each) and 80 rows on 4-7 (20 a value: never a heap), the
    bucket [4, 7] ≈ 6.8σ, shown by the noise (Fair's `rate_marriage` = 1 is such a value): when
    the residual test fires (≈ 60 % of draws: 80 rows ≈ 2σ_R), the lower bound is 4, that
    bucket's edge, not the smallest heap 16 (its rows would be clipped onto 16)."""
    counts = {**{float(v): 20 for v in range(4, 8)}, 16.0: 2000, 17.0: 2000, 18.0: 2000}
    table = _table(counts)
    job, plan, stage = _job(tmp_path, table)
    assert plan.noise["heap_threshold"] - 3 * plan.noise["heap_sigma"] > 20
    fired = 0
    for seed in range(20):
        resolved, kept = _resolve(job, plan, stage, table, seed)
        assert set(kept) == {16.0, 17.0, 18.0}
        if stage.heap_ranges["x"].codes:
            fired += 1
            assert _bounds(resolved) == (4.0, 18.0), _bounds(resolved)
    assert fired >= 5, fired


def test_a_real_tail_keeps_todays_bounds(tmp_path: Path) -> None:
    """Capital-gain-like: 0 holds 92 % of the rows, the rest spread from 1 to 99,999 (several
    hundred rows a bucket, far above the noise). The residual stands far above 2.5σ_R, so the
    bounds keep the octaves' [0, 131071] (no draw of 10 fires)."""
    rng = np.random.default_rng(0)
    tail = np.round(np.exp(rng.uniform(np.log(1000), np.log(99_999), 3000)))
    x = np.concatenate([np.zeros(34_500), tail])
    table = pd.DataFrame({"g": np.where(np.arange(len(x)) % 2, "a", "b"), "x": x})
    job, plan, stage = _job(tmp_path, table)
    for seed in range(10):
        resolved, _ = _resolve(job, plan, stage, table, seed)
        assert not stage.heap_ranges.get("x") or not stage.heap_ranges["x"].codes
        assert _bounds(resolved)[1] >= 99_999, _bounds(resolved)


def test_the_rule_never_fires_on_a_significant_residual(tmp_path: Path) -> None:
    """Two heaps (10 and 20, 2,000 rows each) and 6σ_R rows off them, spread over 32-63 (each
    value far below the heap threshold; outside the heaps' range but inside the buckets the
    bounds are read from): the rule fires with probability Φ(2.5 − 6) ≈ 2e-4 per draw, so in
    none of 30 (σ_R read from the stage, then the table built from it)."""
    heaps = {10.0: 2000, 20.0: 2000}
    job, plan, stage = _job(tmp_path, _table(heaps))
    _resolve(job, plan, stage, _table(heaps), 0)
    off = np.arange(32.0, 64.0)
    each = int(np.ceil(6 * stage.heap_ranges["x"].sigma / off.size))
    assert each < plan.noise["heap_threshold"] - 3 * plan.noise["heap_sigma"]
    table = _table({**heaps, **dict.fromkeys(off, each)})
    for seed in range(30):
        resolved, kept = _resolve(job, plan, stage, table, seed)
        assert set(kept) == set(heaps)
        assert not stage.heap_ranges["x"].codes, stage.heap_ranges["x"]
        assert _bounds(resolved)[1] >= 63.0  # the tail is inside the bounds


def test_no_heaps_range_where_the_noise_hides_a_large_tail(tmp_path: Path) -> None:
    """Two heaps and nothing else, on a table so small that 5σ_R (a tail the test misses 0.6 %
    of the time) exceeds SEEN_TAIL of its rows (anes96's case: 755 rows): the test cannot tell
    a few codes from a column with a quarter of its rows off them, so the bounds stay the
    octaves' in every draw, though the residual is ≈ 0 (it fires in ~99 % of draws without the
    SEEN_TAIL condition)."""
    heaps = {10.0: 2000, 20.0: 2000}
    job, plan, stage = _job(tmp_path, _table(heaps))
    _resolve(job, plan, stage, _table(heaps), 0)
    each = int(2 * EXTEND_NOISE * stage.heap_ranges["x"].sigma / SEEN_TAIL / 2 * 0.8)
    assert each > plan.noise["heap_threshold"] + 3 * plan.noise["heap_sigma"]  # kept heaps
    small = _table({10.0: each, 20.0: each})
    for seed in range(10):
        resolved, kept = _resolve(job, plan, stage, small, seed)
        assert set(kept) == {10.0, 20.0}
        found = stage.heap_ranges["x"]
        assert not found.seen and not found.codes, found
        assert _bounds(resolved) != (10.0, 20.0) and _bounds(resolved)[0] <= 8.0


@pytest.mark.parametrize("counts", [
    YEARS,  # one bucket, seven heaps: the heaps' noise dominates σ_R
    {1.0: 3000, 1000.0: 3000},  # ten buckets, two heaps: the buckets' noise dominates σ_R
])
def test_the_residual_carries_the_noise_it_states(tmp_path: Path, counts: dict) -> None:
    """The residual minus the rows truly off the heaps (none) has the variance the rule's σ_R
    states (b·σ² + k·σ_h²), within the chi-square bounds of the sample variance (two-sided,
    1e-4 each side), and mean 0 within 4 standard errors: a residual read from exact bucket
    counts or exact heap counts would have a fraction of it (a privacy bug: the decision would
    then turn on exact counts)."""
    table = _table(counts)
    job, plan, stage = _job(tmp_path, table)
    errors, sigmas = [], []
    for seed in range(60):
        _resolve(job, plan, stage, table, seed)
        found = stage.heap_ranges["x"]
        errors.append(found.residual)
        sigmas.append(found.sigma)
    errors = np.asarray(errors, dtype=float)
    sigma = float(np.mean(sigmas))
    heap_sigma, bucket_sigma = plan.noise["heap_sigma"], plan.noise["sigma"]
    assert sigma**2 >= bucket_sigma**2 + len(counts) * heap_sigma**2 - 1e-6
    df = len(errors) - 1
    ratio = float(np.var(errors, ddof=1)) / sigma**2
    assert stats.chi2.ppf(1e-4, df) / df <= ratio <= stats.chi2.ppf(1 - 1e-4, df) / df, ratio
    assert abs(errors.mean()) <= 4 * sigma / np.sqrt(len(errors))


def test_the_rule_adds_no_budget_and_no_event(tmp_path: Path) -> None:
    """Post-processing: a draw where the rule fires records exactly the events of one where it
    does not (the same schema and plan; a table with 3,000 rows spread over 1030-2029: its
    bounds stay the octave's, but for the bounds refinement's cut of the top 32 years, which
    hold 42 of its 8,402 rows)."""
    table = _table(YEARS)
    job, plan, stage = _job(tmp_path, table)
    fired, other = Ledger(job.config.budget.neighbouring), Ledger(job.config.budget.neighbouring)
    resolved, _ = _resolve(job, plan, stage, table, 3, fired)
    assert _bounds(resolved) == (2003.0, 2009.0) and stage.heap_ranges["x"].codes
    tail = _table({**dict.fromkeys(np.arange(1030.0, 2030.0), 3), **YEARS})  # 3 rows each
    resolved, _ = _resolve(job, plan, stage, tail, 3, other)
    assert not stage.heap_ranges["x"].codes
    lower, upper = _bounds(resolved)  # the octave's, or refined inside it (privacy.refine)
    assert 1024.0 <= lower <= 1030.0 and 2015.0 <= upper <= 2047.0, (lower, upper)
    assert [repr(e) for e in fired.events] == [repr(e) for e in other.events]
    assert fired.events, "the domain step records its events"
    assert EXTEND_NOISE * stage.heap_ranges["x"].sigma < stage.heap_ranges["x"].residual


# A count column 2-9, every value a heap, and a tail of 6 × 20 rows at 10-15 (each far below the
# heap threshold) in the last heap's bucket [8, 15]: the rows main's whole-range test let the
# heaps' range clip onto 9 (loans' `num_mort_accounts`: 5-14 onto 4).
COUNT_HEAPS = {2.0: 600, 3.0: 900, 4.0: 1200, 5.0: 900, 6.0: 700, 7.0: 500, 8.0: 400, 9.0: 300}
BEYOND = dict.fromkeys(np.arange(10.0, 16.0), 20)


def test_no_tail_piles_onto_the_last_heap(tmp_path: Path) -> None:
    """The 120 rows beyond the last heap are ≈ 5σ_e of the upper end test (bucket [8, 15] less
    the heaps 8 and 9: σ_e² = σ² + 2σ_h²) but ≈ 2.4σ_R of the whole range's, which main's rule
    alone passed in about half the draws, releasing 9 at 7.5 % instead of 5.3 %. The end test
    misses such a tail with probability Φ(2.5 − 5) ≈ 0.6 % a draw: at most 2 of 40 draws clip
    rows onto 9 (the clipped share is then the tail's, 2.1 %). Where the whole-range test passes
    the lower side still takes its heap: [2, 15] (nothing below 2 to clip; main gave [2, 9] or
    the reading's [0, 15]), with nothing spread at 2 and the clipped tail beyond 15 (none) spread
    at the upper bound as for any DP bound."""
    table = _table({**COUNT_HEAPS, **BEYOND})
    job, plan, stage = _job(tmp_path, table)
    assert max(BEYOND.values()) < plan.noise["heap_threshold"] - 3 * plan.noise["heap_sigma"]
    x = table["x"].to_numpy()
    piled, split = 0, 0
    for seed in range(40):
        resolved, kept = _resolve(job, plan, stage, table, seed)
        assert set(kept) == set(COUNT_HEAPS)
        found = stage.heap_ranges["x"]
        upper_sigma = np.sqrt(plan.noise["sigma"] ** 2 + 2 * plan.noise["heap_sigma"] ** 2)
        assert found.ends[1].sigma >= upper_sigma - 1e-9  # [8, 15] and the heaps 8, 9 at least
        lower, upper = _bounds(resolved)
        clipped = float(np.mean(x > upper))
        piled += clipped > 0
        assert clipped in (0.0, pytest.approx(sum(BEYOND.values()) / x.size))
        if (lower, upper) == (2.0, 15.0):
            split += 1
            assert resolved.schema.column("x").spread_clipped == ["upper"]
    assert piled <= 2, piled
    assert split >= 10, split


@pytest.mark.parametrize("offset", [-1.0, 0.0, 2.0])
def test_a_kept_count_is_read_through_its_selection(offset: float) -> None:
    """``selected_count`` is median-unbiased under the selection: for a true count c at
    ``offset`` σ_h from the threshold, noisy counts N(c, σ_h²) kept when ≥ the threshold read
    at most c in half of the kept draws (± 4 standard errors). The plain noisy count is not: a
    count below the threshold is read above it in every kept draw (loans' `num_mort_accounts`
    = 4, 429 rows at a threshold of 483, read ≈ 535 on average when kept), which let the end
    test clip a tail onto it."""
    threshold, sigma = 483, 85.5
    count = threshold + offset * sigma
    rng = np.random.default_rng(7)
    noisy = np.round(rng.normal(count, sigma, 20_000))
    kept = noisy[noisy >= threshold][:1500]
    read = np.array([selected_count(float(x), threshold, sigma) for x in kept])
    share = float(np.mean(read <= count))
    assert abs(share - 0.5) <= 4 * np.sqrt(0.25 / kept.size), share
    assert np.all(read <= kept) and np.all(read >= 0)


def test_a_side_widened_to_a_shown_bucket_tests_only_the_buckets_beyond_it(tmp_path: Path) -> None:
    """Heaps 16, 17, 18 (900 rows each) and 80 rows at 40-43 (20 a value, never a heap): the
    bucket [32, 63] ≈ 6.8σ is shown, so the upper side widens to 63, and the guard adds [64, 127]
    to the reading (a small table: 2.5σ hides more than CLIP_SHARE of its rows). The rows of
    [32, 63] are inside [16, 63]: that side's end test reads [64, 127] alone (empty) and holds,
    so where the whole-range test passes the bounds are [16, 63], not the reading's [0, 127] on
    one side: an end test that also read [32, 63]'s 80 rows (≈ 3σ_e) would keep 127."""
    counts = {16.0: 900, 17.0: 900, 18.0: 900, **dict.fromkeys((40.0, 41.0, 42.0, 43.0), 20)}
    table = _table(counts)
    job, plan, stage = _job(tmp_path, table)
    fired = 0
    for seed in range(20):
        resolved, kept = _resolve(job, plan, stage, table, seed)
        assert set(kept) == {16.0, 17.0, 18.0}
        found = stage.heap_ranges["x"]
        if found.codes and found.outer[1] >= 127.0:
            fired += 1
            assert _bounds(resolved) == (16.0, 63.0), (_bounds(resolved), found)
    assert fired >= 5, fired
