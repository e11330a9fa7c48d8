"""The DP bounds of a date column refined inside its end years (issue 24, ``privacy.refine``:
``date_runs``, ``refined_date_bounds``): an auto column decided date got bounds of whole
calendar years plus a guard year (ISLP NYSE, 1962-12-03 … 1986-12-31, read as 1962-01-01 …
1987-12-31), and its release ran a year past the data. Behavioural checks through the domain
step: the sub-bucket noise measured from the outputs against the plan's σ_d, the ledger's
events and the plan's ρ, seeded draws of the bounds; and the read-out's arithmetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, zcdp_rho
from synthpriv.privacy.bounds import BoundsReading, YearBuckets
from synthpriv.privacy.domain_budget import (
    DATE_REFINE_LABEL,
    HEAP_NOISE_FACTOR,
    date_refine_multiplier,
)
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.privacy.refine import DATE_PARTS, date_parts, date_runs, located_bar
from tests.privacy.test_heap_discovery import _job
from tests.privacy.test_noise_scales import assert_noise_scale, the_one_event

SCHEMA = {"columns": [{"name": "g", "kind": "categorical", "categories": ["a", "b"]},
                      {"name": "d", "kind": "auto"}]}
# the same column declared ``kind: date`` without bounds: refined alike (branch declareddate)
DECLARED = {"columns": [SCHEMA["columns"][0], {"name": "d", "kind": "date"}]}
SCHEMAS = pytest.mark.parametrize("schema", [SCHEMA, DECLARED], ids=["auto", "declared"])
FIRST, LAST = pd.Timestamp("2016-01-01"), pd.Timestamp("2018-06-30")  # 30 months of dates


def _table(rows: int = 6000) -> pd.DataFrame:
    """``rows`` dates spread evenly over FIRST … LAST (≈ 2,400 a year: a police log's), g
    alternating."""
    days = np.linspace(0, (LAST - FIRST).days, rows).round().astype(int)
    dates = (FIRST + pd.to_timedelta(days, unit="D")).strftime("%Y-%m-%d")
    return pd.DataFrame({"g": np.where(np.arange(rows) % 2, "a", "b"), "d": dates})


def _resolve(job, plan, stage, table: pd.DataFrame, seed: int, ledger: Ledger | None = None):
    ledger = ledger or Ledger(job.config.budget.neighbouring)
    # a declared date is read from the job's file (as a run reads it: days); auto cells as text
    chunks = [table] if job.schema.auto else None
    resolved = stage.resolve(job, plan, ledger, RandomSource.seeded(seed), chunks=chunks)
    return resolved, ledger


def _days(stamp: pd.Timestamp) -> float:
    return float((stamp - pd.Timestamp("1970-01-01")).days)


@SCHEMAS
@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_date_sub_bucket_counts_carry_the_planned_noise(tmp_path: Path, neighbouring: str,
                                                        schema: dict) -> None:
    """The noisy sub-bucket counts minus their exact counts have std z_d·Δ₂, z_d = F·z (the
    heap histogram's slot, which a date does not run; its weekdays take the refinement's),
    within the chi-square bounds of the sample variance (1e-4 each side), and are unbiased
    (4 standard errors)."""
    table = _table()
    job, plan, stage = _job(tmp_path, table, schema, neighbouring=neighbouring)
    z = plan.noise["noise_multiplier"]
    expected = HEAP_NOISE_FACTOR * z * histogram_l2_sensitivity(neighbouring)
    assert plan.noise["date_refine_sigma"] == pytest.approx(expected)
    drawn = []
    for seed in range(8):
        resolved, _ = _resolve(job, plan, stage, table, seed)
        assert resolved.schema.column("d").kind == "date"
        noisy, exact = stage.refinements["d"]
        assert exact.sum() <= len(table)  # the end years' rows, each in one sub-bucket
        drawn.append(noisy - exact)
    drawn = np.concatenate(drawn).astype(float)
    assert_noise_scale(drawn, expected)


@SCHEMAS
def test_the_date_refinement_is_on_the_ledger_at_the_plans_rho(tmp_path: Path,
                                                               schema: dict) -> None:
    """The domain step records one DiscreteGaussianEvent at z_d for the date's refinement, its
    heap histogram is not recorded (neither run nor "planned, not run": its slot is z_d's),
    and the step's events hold the plan's ρ exactly (a declared date's too: its weight is in
    the plan)."""
    table = _table()
    job, plan, stage = _job(tmp_path, table, schema)
    _, ledger = _resolve(job, plan, stage, table, 0)
    z = plan.noise["noise_multiplier"]
    the_one_event(ledger, DATE_REFINE_LABEL, date_refine_multiplier(z))
    assert not [e for e in ledger.events if "heaps of d" in e.label]
    spent = sum(zcdp_rho(e) for e in ledger.events if isinstance(e, DiscreteGaussianEvent))
    assert spent == pytest.approx(plan.rho, rel=1e-9)


@SCHEMAS
def test_a_date_column_gets_bounds_inside_its_end_years(tmp_path: Path, schema: dict) -> None:
    """30 months of dates, ≈ 200 rows a month: the year buckets (and any guard year) give
    bounds of whole years; refined, the upper bound moves into 2018 (its first half holds the
    rows) in at least 8 of 10 draws, and no draw cuts a real date by more than one part of a
    year (the bounds reach FIRST and LAST within a quarter, dates clipped at most that far).
    Without the refinement every draw ends on 2018-12-31 or later. The same for the column
    declared ``kind: date`` without bounds."""
    table = _table()
    job, plan, stage = _job(tmp_path, table, schema)
    inside = 0
    for seed in range(10):
        resolved, _ = _resolve(job, plan, stage, table, seed)
        column = resolved.schema.column("d")
        lower, upper = float(column.lower), float(column.upper)
        assert lower <= _days(FIRST) and upper >= _days(LAST) - 92, (seed, lower, upper)
        inside += upper < _days(pd.Timestamp("2018-12-31"))
    assert inside >= 8, inside


def test_date_parts_follow_the_fullest_years_count() -> None:
    """Months where a year's rows, spread evenly, give each month SHARP times the bar; else
    quarters; else the whole year (arithmetic of ``date_parts``)."""
    sigma = 10.0
    bar = {parts: 2.0 * located_bar(2 * parts) * sigma for parts in DATE_PARTS}
    assert date_parts(12 * bar[12] + 1, sigma, 2) == 12
    assert date_parts(12 * bar[12] - 1, sigma, 2) == 4
    assert date_parts(4 * bar[4] - 1, sigma, 2) == 1
    assert date_parts(0.0, sigma, 2) == 1


def test_date_runs_pair_a_guard_year_with_the_year_next_to_it() -> None:
    """A guarded side refines the guard year with its neighbour (the rows' year); an
    unguarded one its end year alone; ends that meet make one run with both sides."""
    noisy = np.zeros(YearBuckets("date").size)
    wide = BoundsReading(0.0, 1.0, 60, 90, (False, False), (True, False))
    low, high = date_runs(wide, noisy, 1.0)
    assert (low.years, low.sides, high.years, high.sides) == ((60, 61), (True, False),
                                                              (90,), (False, True))
    near = BoundsReading(0.0, 1.0, 60, 62, (False, False), (True, True))
    (one,) = date_runs(near, noisy, 1.0)
    assert one.years == (60, 61, 62) and one.sides == (True, True)
