"""A date column's weekdays decided under DP (issue 24, ``privacy.weekdays``): an auto column
decided date gets one noisy 7-cell weekday histogram in the domain step (σ_w = F_r·z·Δ₂, the
slot of the integer refinement a date does not run), and its ``weekdays`` are the days whose
noisy counts clear the bar with a sharp gap. Behavioural checks: the noise measured from the
outputs against σ_w (both neighbouring relations), the ledger's event and the plan's ρ, the
decision read from the noisy counts alone, seeded decisions and a seeded release; and the
read-out's arithmetic."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, zcdp_rho
from synthpriv.privacy.domain_budget import REFINE_NOISE_FACTOR, WEEKDAY_LABEL
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.privacy.refine import SHARP, located_bar
from synthpriv.privacy.weekdays import decided_weekdays
from tests.privacy.test_date_refine import _resolve
from tests.privacy.test_heap_discovery import _job
from tests.privacy.test_noise_scales import assert_noise_scale, the_one_event

FIRST, LAST = "2016-01-01", "2018-06-30"  # 30 months
SCHEMA = {"columns": [{"name": "g", "kind": "categorical", "categories": ["a", "b"]},
                      {"name": "d", "kind": "auto"}]}
# the same column declared ``kind: date`` without bounds (branch declareddate): the same two
# histograms, planned (privacy.domain_budget.date_events)
DECLARED = {"columns": [SCHEMA["columns"][0], {"name": "d", "kind": "date"}]}
# and with public bounds (no ``weekdays``): the weekday histogram alone, the only DP domain
# mechanism of the job
PUBLIC = {"columns": [SCHEMA["columns"][0],
                      {"name": "d", "kind": "date", "lower": FIRST, "upper": LAST}]}
SCHEMAS = pytest.mark.parametrize("schema", [SCHEMA, DECLARED, PUBLIC],
                                  ids=["auto", "declared", "public-bounds"])


def _table(business: bool = True, rows: int = 6000) -> pd.DataFrame:
    """``rows`` dates over FIRST … LAST: business days only (≈ 1,200 rows a weekday, none on
    weekends), or every day; g alternating."""
    days = pd.bdate_range(FIRST, LAST) if business else pd.date_range(FIRST, LAST)
    dates = days[np.arange(rows) % len(days)].sort_values().strftime("%Y-%m-%d")
    return pd.DataFrame({"g": np.where(np.arange(rows) % 2, "a", "b"), "d": dates})


@SCHEMAS
@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_weekday_counts_carry_the_planned_noise(tmp_path: Path, neighbouring: str,
                                                schema: dict) -> None:
    """The noisy weekday counts minus their exact counts have std σ_w = F_r·z·Δ₂ (the plan's
    figure), within the chi-square bounds of the sample variance (1e-4 each side), unbiased
    (4 standard errors); the exact counts are the table's weekdays (each row on one)."""
    table = _table()
    job, plan, stage = _job(tmp_path, table, schema, neighbouring=neighbouring)
    expected = REFINE_NOISE_FACTOR * plan.noise["noise_multiplier"] * \
        histogram_l2_sensitivity(neighbouring)
    assert plan.noise["weekday_sigma"] == pytest.approx(expected)
    real = np.bincount(pd.to_datetime(table["d"]).dt.dayofweek, minlength=7)
    drawn = []
    for seed in range(12):
        resolved, _ = _resolve(job, plan, stage, table, seed)
        assert resolved.schema.column("d").kind == "date"
        noisy, exact = stage.weekday_histograms["d"]
        assert exact.tolist() == real.tolist()
        drawn.append(noisy - exact)
    drawn = np.concatenate(drawn).astype(float)
    assert_noise_scale(drawn, expected)


@SCHEMAS
def test_the_weekday_histogram_is_on_the_ledger_at_the_plans_rho(tmp_path: Path,
                                                                 schema: dict) -> None:
    """One DiscreteGaussianEvent at F_r·z for the column's weekdays, and the step's events
    hold the plan's ρ exactly (the histogram is inside the date's heap-column weight; for a
    declared date the plan holds that event before any data is read)."""
    table = _table()
    job, plan, stage = _job(tmp_path, table, schema)
    if schema is not SCHEMA:  # a declared date: stated up front, the plan's own events
        planned = [e for e in plan.events if e.label.startswith(WEEKDAY_LABEL)]
        assert [e.noise_multiplier for e in planned] == pytest.approx(
            [REFINE_NOISE_FACTOR * plan.noise["noise_multiplier"]])
    _, ledger = _resolve(job, plan, stage, table, 0)
    z = plan.noise["noise_multiplier"]
    the_one_event(ledger, WEEKDAY_LABEL, REFINE_NOISE_FACTOR * z)
    spent = sum(zcdp_rho(e) for e in ledger.events if isinstance(e, DiscreteGaussianEvent))
    assert spent == pytest.approx(plan.rho, rel=1e-9)


def test_the_decision_reads_the_noisy_counts_only(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The released weekdays are ``decided_weekdays`` of the released noisy counts (the
    schema's ``weekday_counts``), and rewriting the exact counts right after they are noised
    (every row moved to the weekend) changes nothing in the resolved column."""
    import synthpriv.domain_stage as domain_stage
    from synthpriv.domain_stage import domain_lines

    table = _table()
    job, plan, stage = _job(tmp_path, table, SCHEMA)
    column = _resolve(job, plan, stage, table, 3)[0].schema.column("d")
    assert column.weekdays == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    resolved_schema = stage.resolve(job, plan, Ledger(job.config.budget.neighbouring),
                                    RandomSource.seeded(3), chunks=[table]).schema
    (line,) = [ln for ln in domain_lines(job.schema, resolved_schema) if ln.startswith("  d:")]
    assert "on Mon, Tue, Wed, Thu, Fri only (DP weekday counts)" in line
    days = decided_weekdays(np.array(column.weekday_counts.counts), column.weekday_counts.sigma)
    assert days == [0, 1, 2, 3, 4]
    noised = domain_stage.noisy_weekdays

    def then_altered(exact: np.ndarray, sigma: float, source: RandomSource) -> np.ndarray:
        counts = noised(exact, sigma, source)
        exact[:] = [0, 0, 0, 0, 0, len(table), len(table)]  # the raw counts, after the noise
        return counts

    monkeypatch.setattr(domain_stage, "noisy_weekdays", then_altered)
    again = _resolve(job, plan, stage, table, 3)[0].schema.column("d")
    assert again.model_dump() == column.model_dump()


def test_weekdays_are_decided_for_business_days_and_not_for_every_day(tmp_path: Path) -> None:
    """Seeded: business days (≈ 1,200 rows a weekday against σ_w ≈ 49) give Mon … Fri in
    every one of 6 draws; the same dates over every day of the week give no weekdays."""
    business, every = _table(), _table(business=False)
    job, plan, stage = _job(tmp_path / "b", business, SCHEMA)
    for seed in range(6):
        column = _resolve(job, plan, stage, business, seed)[0].schema.column("d")
        assert column.weekdays == ["Mon", "Tue", "Wed", "Thu", "Fri"], seed
    job, plan, stage = _job(tmp_path / "e", every, SCHEMA)
    for seed in range(6):
        column = _resolve(job, plan, stage, every, seed)[0].schema.column("d")
        assert column.weekdays is None and column.weekday_counts is not None, seed


@SCHEMAS
def test_a_business_day_table_releases_no_weekend_date(tmp_path: Path, schema: dict) -> None:
    """End to end (seeded): an NYSE-like table of business days, its date auto or declared
    ``kind: date`` without bounds, released with no date on a Saturday or Sunday; the
    manifest's schema shows the decided weekdays and their noisy counts (DP outputs)."""
    import json

    from synthpriv.runner import run_job

    table = _table()
    job, _, _ = _job(tmp_path, table, schema)
    run_job(job, source=RandomSource.seeded(2), evaluate=False, force=True)
    released = pd.to_datetime(pd.read_csv(tmp_path / "out" / "synthetic.csv")["d"].dropna())
    assert len(released) > 0.9 * len(table)
    assert not released.dt.dayofweek.isin([5, 6]).any()
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    (entry,) = [c for c in manifest["schema"]["columns"] if c["name"] == "d"]
    assert entry["weekdays"] == ["Mon", "Tue", "Wed", "Thu", "Fri"]
    assert len(entry["weekday_counts"]["counts"]) == 7


def test_the_decision_needs_a_sharp_gap() -> None:
    """Days at SHARP times the bar and the rest below the bar: those days; a kept day just
    under SHARP times the bar, no day kept, or all seven: no weekdays (arithmetic)."""
    sigma = 10.0
    bar = located_bar(7) * sigma
    strong, weak = SHARP * bar + 0.5, bar - 0.5
    assert decided_weekdays(np.array([strong] * 5 + [weak, -weak]), sigma) == [0, 1, 2, 3, 4]
    assert decided_weekdays(np.array([strong, weak, strong, 0, 0, 0, strong]), sigma) == [0, 2, 6]
    assert decided_weekdays(np.array([strong] * 4 + [SHARP * bar - 0.5, 0, 0]), sigma) is None
    assert decided_weekdays(np.array([weak] * 7), sigma) is None
    assert decided_weekdays(np.array([strong] * 7), sigma) is None


def test_a_declared_date_with_a_public_bound_runs_no_date_histogram(tmp_path: Path) -> None:
    """A declared date with one public bound keeps it (the refinement leaves a declared bound):
    the plan holds neither date histogram for it, and its DP side is bought as before."""
    from synthpriv.domain_stage import declared_dates
    from synthpriv.privacy.domain_budget import DATE_REFINE_LABEL

    half = {"columns": [SCHEMA["columns"][0],
                        {"name": "d", "kind": "date", "lower": FIRST}]}
    job, plan, _ = _job(tmp_path, _table(), half)
    assert declared_dates(job.schema) == []
    assert not [e for e in plan.events if e.label.startswith((WEEKDAY_LABEL, DATE_REFINE_LABEL))]


def test_a_date_with_public_bounds_and_weekdays_runs_no_domain_step(tmp_path: Path) -> None:
    """A declared date whose bounds and weekdays are both public needs nothing from the data:
    no domain step is planned (the job's plan as before declareddate), nor with
    ``domain_share: 0``; with neither its weekdays nor that
    the plan holds the one weekday histogram, at 1/F_r² of a domain histogram's weight."""
    from synthpriv.domain_stage import DomainStage
    from synthpriv.pipeline import plan_job

    known = {"columns": [SCHEMA["columns"][0], {**PUBLIC["columns"][1],
                                                "weekdays": ["Mon", "Tue", "Wed", "Thu", "Fri"]}]}
    job, _, _ = _job(tmp_path / "k", _table(), known)
    assert not any(isinstance(stage, DomainStage) for stage, _ in plan_job(job)[1])
    job, _, _ = _job(tmp_path / "z", _table(), PUBLIC, domain_share=0)  # no budget given to it
    assert not any(isinstance(stage, DomainStage) for stage, _ in plan_job(job)[1])
    _, plan, _ = _job(tmp_path / "p", _table(), PUBLIC)
    (event,) = plan.events
    assert event.label == WEEKDAY_LABEL + "d" and event.count == 1
    assert zcdp_rho(event) == pytest.approx(plan.rho, rel=1e-12)
