"""Heap discovery with named round candidates (synthpriv.privacy.candidates): the round values of
a wide integer column's DP bounds and grid shape are named before the heap histogram is noised,
and their noisy counts are released without the threshold (``round_counts`` on the resolved
column). Behavioural checks against the definition: the released counts carry the heap
histogram's σ_h (absent candidates included, measured from the outputs), the candidates are a
function of the released domain only, a value that is not a candidate and stays below the
threshold never shows, and the ledger holds the heap histogram's events only."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, ThresholdEvent
from synthpriv.privacy.candidates import heap_selection
from synthpriv.privacy.domain_budget import HEAP_NOISE_FACTOR
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.partition import noisy_selection
from synthpriv.privacy.randomness import RandomSource
from synthpriv.rounds import lattice_values, narrow_values
from tests.privacy.test_heap_discovery import _job as heap_job

ROWS = 4000
PILES = {500.0: 20, 1234.0: 20}  # a round value and a value no rule names, both below T_h


def _table() -> pd.DataFrame:
    """``x``: amounts spread over 1-2,999 that avoid the multiples of 50 (so most round
    candidates are absent: count 0), plus ``PILES``; ``g`` a second column."""
    rng = np.random.default_rng(7)
    base = rng.integers(1, 3000, ROWS - sum(PILES.values()))
    base = np.where((base % 50 == 0) | (base == 1234), base + 1, base)
    x = np.concatenate([base, *[np.full(n, v) for v, n in PILES.items()]]).astype(float)
    return pd.DataFrame({"g": np.where(np.arange(len(x)) % 2, "a", "b"), "x": x})


def _job(folder: Path, neighbouring: str = "add_remove"):
    return heap_job(folder, _table(), neighbouring=neighbouring)  # columns g and x (integer)


def _resolve(job, plan, stage, seed: int, ledger: Ledger | None = None):
    ledger = ledger or Ledger(job.config.budget.neighbouring)
    return stage.resolve(job, plan, ledger, RandomSource.seeded(seed), chunks=[_table()])


def test_the_selection_without_candidates_is_partition_selection() -> None:
    """No candidates: the same draws and the same kept values as ``noisy_selection``."""
    counts = {float(v): 5 + 3 * v for v in range(30)}
    kept, named = heap_selection(counts, [], 4.0, 40, RandomSource.seeded(3))
    assert named == {}
    assert kept == noisy_selection(counts, 4.0, 40, RandomSource.seeded(3)) and kept


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_released_round_counts_carry_the_heap_noise(tmp_path: Path, neighbouring: str) -> None:
    """Over 12 domain steps, every released round count minus the value's exact count (0 for
    most: the table avoids the multiples of 50) has std σ_h = F·z·Δ₂ within the chi-square
    bounds of the sample variance (1e-4 each side) and mean 0 within 4 standard errors; the
    candidates are exactly the released column's round values less its point masses (a
    function of the DP bounds and grid shape, nothing else); 1,234 (20 rows, below T_h, named
    by no rule) is never released, as a round count or a point mass."""
    job, plan, stage = _job(tmp_path, neighbouring)
    sigma = plan.noise["heap_sigma"]
    assert sigma == pytest.approx(HEAP_NOISE_FACTOR * plan.noise["noise_multiplier"]
                                  * histogram_l2_sensitivity(neighbouring))
    assert max(PILES.values()) < plan.noise["heap_threshold"] - 3 * sigma
    exact = _table()["x"].value_counts().to_dict()
    errors, absent = [], 0
    for seed in range(12):
        column = _resolve(job, plan, stage, seed).schema.column("x")
        released = {c.value: c for c in column.round_counts or ()}
        assert set(released) == set(column.round_values()) - set(column.point_masses or ())
        assert 1234.0 not in released and 1234.0 not in (column.point_masses or ())
        for value, entry in released.items():
            assert entry.sigma == pytest.approx(sigma)
            errors.append(entry.count - exact.get(value, 0))
            absent += value not in exact
    errors = np.asarray(errors, dtype=float)
    assert len(errors) >= 60 and absent >= 30, (len(errors), absent)
    df = len(errors) - 1
    ratio = float(np.var(errors, ddof=1)) / sigma**2
    assert stats.chi2.ppf(1e-4, df) / df <= ratio <= stats.chi2.ppf(1 - 1e-4, df) / df, ratio
    assert abs(errors.mean()) <= 4 * sigma / np.sqrt(len(errors))


def test_the_ledger_holds_the_heap_histogram_only(tmp_path: Path) -> None:
    """The candidates' counts are cells of the heap histogram: the ledger has the one heap
    Gaussian event at F·z (its label saying it releases the named round values' counts) and the
    same ThresholdEvents as the plan; nothing else is added."""
    job, plan, stage = _job(tmp_path)
    ledger = Ledger(job.config.budget.neighbouring)
    column = _resolve(job, plan, stage, 0, ledger).schema.column("x")
    assert column.round_counts
    heaps = [e for e in ledger.events if isinstance(e, DiscreteGaussianEvent)
             and e.label.startswith("DP heaps")]
    assert [(e.count, e.noise_multiplier) for e in heaps] == [
        (1, pytest.approx(HEAP_NOISE_FACTOR * plan.noise["noise_multiplier"]))]
    assert "round values' counts unthresholded" in heaps[0].label
    assert len(ledger.events) == len(plan.events)
    assert [e.delta for e in ledger.events if isinstance(e, ThresholdEvent)] == [
        e.delta for e in plan.events if isinstance(e, ThresholdEvent)]


def test_a_narrow_columns_every_value_is_named_whatever_the_table_holds(tmp_path: Path) -> None:
    """A narrow integer range (``rounds.narrow_values``): the released counts are every value
    inside the column's DP bounds less -1/0/1 and its point masses (the table holds only 4, 6
    and 8 of them), each with the heap histogram's noise: the absent values' counts (exact 0)
    have std σ_h within the chi-square bounds over 20 domain steps (the bounds are
    often the heaps' range [4, 8]: 5 and 7 are then the absent values named)."""
    x = np.repeat([4.0, 6.0, 8.0], [2000, 900, 1100])
    table = pd.DataFrame({"g": np.where(np.arange(len(x)) % 2, "a", "b"), "x": x})
    job, plan, stage = heap_job(tmp_path, table)
    sigma = plan.noise["heap_sigma"]
    errors = []
    for seed in range(20):
        ledger = Ledger(job.config.budget.neighbouring)
        column = stage.resolve(job, plan, ledger, RandomSource.seeded(seed),
                               chunks=[table]).schema.column("x")
        assert column.narrow_range
        released = {c.value: c.count for c in column.round_counts or ()}
        inside = set(narrow_values(int(column.lower), int(column.upper)))
        assert set(released) == inside - set(column.point_masses or ())
        errors += [count for value, count in released.items() if value not in (4.0, 6.0, 8.0)]
    errors = np.asarray(errors, dtype=float)
    df = len(errors) - 1
    assert df >= 30
    ratio = float(np.var(errors, ddof=1)) / sigma**2
    assert stats.chi2.ppf(1e-4, df) / df <= ratio <= stats.chi2.ppf(1 - 1e-4, df) / df, ratio


LATTICE_SCHEMA = {"columns": [{"name": "g", "kind": "categorical", "categories": ["a", "b"]},
                              {"name": "x", "kind": "continuous", "precision": 2}]}
PRICES = {1.69: 300, 1.99: 700, 2.09: 600, 2.18: 900, 2.23: 150}  # most lattice values absent


def _lattice_table() -> pd.DataFrame:
    """``x``: prices on the 2-decimal lattice (``PRICES``), plus 20 rows at 2.005, a value with
    more decimals than the column's precision (named by no rule, below T_h)."""
    x = np.concatenate([np.full(n, v) for v, n in PRICES.items()] + [np.full(20, 2.005)])
    return pd.DataFrame({"g": np.where(np.arange(len(x)) % 2, "a", "b"), "x": x})


def test_a_small_lattice_is_named_whatever_the_table_holds(tmp_path: Path) -> None:
    """A continuous column whose precision leaves a small lattice on its DP bounds
    (``rounds.lattice_values``): the released round counts are every lattice value strictly
    inside the final bounds less the point masses — a function of the bounds and precision
    only, most of them values the table does not hold (exact 0) — each with the heap
    histogram's σ_h (the absent values' counts within the chi-square bounds over 6 domain
    steps, mean 0 within 4 standard errors); 2.005 (20 rows, below T_h, off the lattice) is
    never released; the ledger holds the plan's events only (the candidates cost nothing)."""
    table = _lattice_table()
    job, plan, stage = heap_job(tmp_path, table, LATTICE_SCHEMA)
    sigma = plan.noise["heap_sigma"]
    assert plan.noise["heap_threshold"] - 3 * sigma > 20
    errors = []
    for seed in range(6):
        ledger = Ledger(job.config.budget.neighbouring)
        column = stage.resolve(job, plan, ledger, RandomSource.seeded(seed),
                               chunks=[table]).schema.column("x")
        assert len(ledger.events) == len(plan.events)
        released = {c.value: c for c in column.round_counts or ()}
        inside = {float(v) for v in lattice_values(column.lower, column.upper, 2)
                  if column.lower < v < column.upper}
        assert len(inside) > 50, (column.lower, column.upper)
        assert set(released) == inside - set(column.point_masses or ())
        assert 2.005 not in released and 2.005 not in (column.point_masses or ())
        for value, entry in released.items():
            assert entry.sigma == pytest.approx(sigma)
            if value not in PRICES:
                errors.append(entry.count)
    errors = np.asarray(errors, dtype=float)
    df = len(errors) - 1
    ratio = float(np.var(errors, ddof=1)) / sigma**2
    assert stats.chi2.ppf(1e-4, df) / df <= ratio <= stats.chi2.ppf(1 - 1e-4, df) / df, ratio
    assert abs(errors.mean()) <= 4 * sigma / np.sqrt(len(errors))
