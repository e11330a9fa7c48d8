"""The DP bounds refined inside a one-bucket column's octave (issue 24, ``privacy.refine``): a
year column of 1990-2010 read as [1024, 2047] was released spread over the octave (ISLP Weekly:
83 % of rows outside the real range). Behavioural checks through the domain step: seeded draws
of the bounds, the sub-bucket noise measured from the outputs against the plan's σ_r, the
ledger's events, and columns the refinement must leave alone."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.domain_budget import REFINE_LABEL, REFINE_NOISE_FACTOR
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from tests.privacy.test_heap_discovery import _job, _resolve, _table
from tests.privacy.test_noise_scales import assert_noise_scale, the_one_event

# ISLP Weekly's `Year` (21 years, 1,089 rows: ≈ 9σ_r in one sub-bucket at its σ_r ≈ 124), at
# this job's smaller σ (σ_r ≈ 48, heap threshold 80): 25 rows a year, never a heap, ≈ 11σ_r
WEEKLY = {float(year): 25 for year in range(1990, 2011)}


def _bounds(resolved) -> tuple[float, float]:
    column = resolved.schema.column("x")
    return column.lower, column.upper


def test_a_year_column_gets_bounds_around_its_years(tmp_path: Path) -> None:
    """21 years of 25 rows each (under heap discovery's threshold: no heaps' range): the
    octave [1024, 2047] becomes the sub-buckets around them ([1984, 2015], 32 years) in at
    least 9 of 10 draws, and no draw cuts a year (the bounds hold [1990, 2010] in every one).
    Without the refinement every draw gives [1024, 2047]."""
    table = _table(WEEKLY)
    job, plan, stage = _job(tmp_path, table)
    assert max(WEEKLY.values()) < plan.noise["heap_threshold"] - 3 * plan.noise["heap_sigma"]
    narrow = 0
    for seed in range(10):
        resolved, kept = _resolve(job, plan, stage, table, seed)
        assert not kept  # no heaps: the buckets' bounds are what is refined
        lower, upper = _bounds(resolved)
        assert lower <= 1990.0 and upper >= 2010.0, (lower, upper)
        narrow += upper - lower + 1 <= 64
    assert narrow >= 9, narrow


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_sub_bucket_counts_carry_the_planned_noise(tmp_path: Path, neighbouring: str) -> None:
    """The noisy sub-bucket counts minus their exact counts have std F_r·z·Δ₂ (z: the domain
    step's multiplier, Δ₂ the histogram's L2 sensitivity), within the chi-square bounds of the
    sample variance (two-sided, 1e-4 each side), and are unbiased (4 standard errors)."""
    table = _table(WEEKLY)
    job, plan, stage = _job(tmp_path, table, neighbouring=neighbouring)
    expected = REFINE_NOISE_FACTOR * plan.noise["noise_multiplier"] * histogram_l2_sensitivity(
        neighbouring)
    assert plan.noise["refine_sigma"] == pytest.approx(expected)
    def errors(seed: int) -> np.ndarray:
        _resolve(job, plan, stage, table, seed)
        noisy, exact = stage.refinements["x"]
        assert exact.sum() == sum(WEEKLY.values())  # the one bucket holds every row
        return noisy - exact

    drawn = np.concatenate([errors(seed) for seed in range(6)]).astype(float)
    assert_noise_scale(drawn, expected)


def test_the_refinement_is_on_the_ledger(tmp_path: Path) -> None:
    """The domain step records one DiscreteGaussianEvent at F_r·z for the heap columns'
    refinements (one histogram each), in every draw, refined or not."""
    table = _table(WEEKLY)
    job, plan, stage = _job(tmp_path, table)
    ledger = Ledger(job.config.budget.neighbouring)
    _resolve(job, plan, stage, table, 0, ledger)
    the_one_event(ledger, REFINE_LABEL, REFINE_NOISE_FACTOR * plan.noise["noise_multiplier"])


@pytest.mark.parametrize("counts", [
    {float(v): 30 + 5 * v for v in range(1, 31)},  # a count 1-30 over five buckets
    {float(v): 40 for v in range(1024, 2048, 8)},  # the whole octave: no empty sub-bucket
])
def test_columns_without_a_sharp_edge_keep_their_bounds(tmp_path: Path,
                                                         counts: dict[float, int]) -> None:
    """A column over several buckets is not refined (its end buckets hold its tails); one
    spread over its whole octave has no empty sub-bucket to cut: in 10 draws neither loses a
    value (the bounds hold every value of the table)."""
    table = _table(counts)
    job, plan, stage = _job(tmp_path, table)
    for seed in range(10):
        resolved, _ = _resolve(job, plan, stage, table, seed)
        lower, upper = _bounds(resolved)
        assert lower <= min(counts) and upper >= max(counts), (seed, lower, upper)
