"""AIM's 1-way round on a small table (issue 24, College's KS): its noise follows n̂ so that the
measured grid's floor of cells meets the grid's own accuracy rule (``settings.one_way_sigma``:
σ ≤ n̂ / (2·GRID_CELLS_MIN)), spending at most MST's 1-way share of AIM's ρ
(``privacy.budget.first_round_noise``); the later rounds share what is left as they would have
(``later_round_noise``). Checked from the ledger's events against the rule written out here, and
from behaviour: n reaches the rule only through the noisy count (a source reporting 40× the rows
gives the same events), a public n̂ large enough leaves AIM as it was, and the filter is never
over-spent."""

from __future__ import annotations

import math
from dataclasses import replace

import numpy as np
import pytest

from synthpriv.domain import Dataset
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.aim import Sensitivity, run_aim
from synthpriv.marginals.compress import GRID_CELLS_MIN
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState, PlanContext
from tests.marginals.test_adaptive_privacy import ADAPTIVE, Grown
from tests.marginals.test_aim_budget import RHO, SETTINGS, data
from tests.marginals.test_compress import SCHEMA, codes_of

ENCODER = TableEncoder(SCHEMA)
ROUNDS = 40  # AIM's rounds in the stage runs: the 1-way round's own share is d·α/40 (< 1/3)
STAGE_RHO = 0.02
ROWS = 300


def test_a_first_round_below_the_rounds_noise_follows_the_schedule_written_out() -> None:
    """The d first measurements at the given multiplier z₁; the later rounds at
    z = √((R − d) / (2α·ρ_later)) with ρ_later = (ρ − d/(2z₁²))·(R − d)/(R − dα), annealed or
    spending all that remains as AIM does; the filter's reserve spent exactly. At z₁ ≥ the
    rounds' own the events are those of a run without it."""
    d, rounds, alpha = 3, 9, SETTINGS.gaussian_fraction  # aim_rounds(SETTINGS, 3)
    own = math.sqrt(rounds / (2 * alpha * RHO))
    first = 0.75 * own  # the 1-way round takes about half of ρ (its own share: 30 %)
    settings = replace(SETTINGS, one_way_multiplier=first)
    budget = Ledger().open_filter(RHO, "AIM")
    run_aim(data(), settings, _sensitivity(), RandomSource.seeded(11), budget)
    events = budget.events
    assert all(e.noise_multiplier == pytest.approx(first, rel=1e-12) for e in events[:d])
    left = (RHO - d / (2 * first**2)) * (rounds - d) / (rounds - d * alpha)
    z = math.sqrt((rounds - d) / (2 * alpha * left))
    eps = math.sqrt(8 * (1 - alpha) * left / (rounds - d))
    spent = d / (2 * first**2)
    for selection, measurement in zip(events[d::2], events[d + 1::2], strict=True):
        allowed = []
        for z_round, eps_round in ((z, eps), (z / 2, eps * 2)):
            remaining = RHO - spent
            if remaining < 2 * (1 / (2 * z_round**2) + eps_round**2 / 8):
                z_round = math.sqrt(1 / (2 * alpha * remaining))
                eps_round = math.sqrt(8 * (1 - alpha) * remaining)
            allowed.append((z_round, eps_round))
        z, eps = measurement.noise_multiplier, selection.epsilon
        assert any((z, eps) == pytest.approx(pair, rel=1e-12) for pair in allowed), allowed
        spent += 1 / (2 * z**2) + eps**2 / 8
    assert budget.spent == pytest.approx(RHO, rel=1e-9) and spent == pytest.approx(RHO, rel=1e-9)

    plain = Ledger().open_filter(RHO, "AIM")
    run_aim(data(), SETTINGS, _sensitivity(), RandomSource.seeded(11), plain)
    above = Ledger().open_filter(RHO, "AIM")
    settings = replace(SETTINGS, one_way_multiplier=own * 2)
    run_aim(data(), settings, _sensitivity(), RandomSource.seeded(11), above)
    assert above.events == plain.events  # a wanted noise above the rounds' own changes nothing


def _sensitivity() -> Sensitivity:
    return Sensitivity(1.0, 1.0)


def _stage_run(source, seed: int, public: int | None = None):
    context = PlanContext(ENCODER.domain, "add_remove", 1e-6, public, ADAPTIVE)
    stage = MarginalsStage({"selection": "aim", "iterations": 10, "aim_max_rounds": ROUNDS,
                            "aim_round_iterations": 5}, context, "test")
    plan = stage.plan(STAGE_RHO)
    ledger = Ledger()
    stage.run(PipelineState(context, ENCODER, source), plan, ledger, RandomSource.seeded(seed))
    (rounds,) = ledger.filters
    return rounds, plan


def test_a_small_tables_one_way_round_meets_the_grid_rule_from_the_noisy_count() -> None:
    """300 rows, AIM planned at σ ≈ 34 for every round: n̂/(2σ) ≈ 4.4 < GRID_CELLS_MIN, so the
    1-way round is measured at about n̂/16 (≈ 19 at n = 300; 24 in this seed, whose noisy count
    reads 381; at most 1/3 of AIM's ρ: z ≥ 17.9 here), the ledger says so, the filter is spent
    to its reserve and no further, and a source reporting 40× the rows (the counts unchanged)
    gives the same events: n reaches the rule only through the noisy count. Without the rule
    every 1-way event is at the plan's σ (65a57fb: 34.4)."""
    table = Dataset(codes_of(ROWS, seed=1), ENCODER.domain)
    d = len(ENCODER.domain)
    filter_, plan = _stage_run(table, seed=3)
    planned = plan.noise["sigma_first_rounds"]
    one_way = filter_.events[:d]
    assert all(e.label.startswith("marginal ") and "×" not in e.label for e in one_way)
    measured = one_way[0].noise_multiplier
    assert all(e.noise_multiplier == measured for e in one_way)
    floor = math.sqrt(d / (2 * plan.noise["aim_rho"] / 3))  # 1/3 of AIM's ρ over d measurements
    assert measured < 0.7 * planned, (
        f"the 1-way round of a {ROWS}-row table was measured at σ = {measured:.1f}, the rounds' "
        f"{planned:.1f}: expected about n̂/{2 * GRID_CELLS_MIN} = {ROWS / 16:.1f} (at least "
        f"{floor:.1f})")
    assert measured >= floor * (1 - 1e-9)
    if measured > floor * (1 + 1e-9):  # the rule's σ = n̂/16, n̂ the noisy count
        assert abs(measured * 2 * GRID_CELLS_MIN - ROWS) <= 4 * plan.noise["sigma_count"]
    assert filter_.spent == pytest.approx(plan.noise["aim_rho"], rel=1e-9)
    assert filter_.spent <= plan.noise["aim_rho"] * (1 + 1e-12)

    grown, _ = _stage_run(Grown(table, 40), seed=3)
    assert grown.events == filter_.events, (
        "AIM's events changed when only the reported row count did: n reached the 1-way "
        "round's noise outside the noisy count")


def test_a_public_count_large_enough_leaves_aims_rounds_as_planned() -> None:
    """With a public n̂ the rule reads it, not the table: n̂ = 30,000 (σ wanted 1,875, above the
    plan's) keeps every 1-way at the plan's σ for it (these 4 columns: the few-column rule's,
    ``sigma_one_way_few_columns``; test_aim_few_columns.py), n̂ = 300 lowers it, on the same
    300 rows."""
    table = Dataset(codes_of(ROWS, seed=1), ENCODER.domain)
    d = len(ENCODER.domain)
    large, plan = _stage_run(table, seed=3, public=30_000)
    small, _ = _stage_run(table, seed=3, public=ROWS)
    planned = plan.noise["sigma_one_way_few_columns"]
    assert all(e.noise_multiplier == pytest.approx(planned, rel=1e-12)
               for e in large.events[:d])
    assert all(e.noise_multiplier < 0.95 * planned for e in small.events[:d])
    np.testing.assert_allclose(small.spent, large.spent, rtol=1e-9)


def test_the_plan_states_the_one_way_rule_and_the_later_rounds_noise() -> None:
    """The plan's figures for the rule, checked against the run's ledger. A public n̂ = 300
    (below ``one_way_rule_rows``): ``sigma_one_way_round`` is every 1-way event's σ and
    ``sigma_later_rounds`` the first later round's (above the rounds' own σ, which the plan
    stated alone before). Without a public n̂ the run's figures sit inside the stated range. A
    public n̂ of 30,000 (above the rule's rows): the 1-way round at the few-column rule's σ
    (these 4 columns; test_aim_few_columns.py), the later rounds at the plan's figure."""
    table = Dataset(codes_of(ROWS, seed=1), ENCODER.domain)
    d = len(ENCODER.domain)
    public, plan = _stage_run(table, seed=3, public=ROWS)
    noise = plan.noise
    assert noise["one_way_rule_rows"] > ROWS
    assert all(e.noise_multiplier == pytest.approx(noise["sigma_one_way_round"], rel=1e-12)
               for e in public.events[:d])
    later = public.events[d + 1].noise_multiplier  # the first later round's measurement
    assert later == pytest.approx(noise["sigma_later_rounds"], rel=1e-12)
    assert noise["sigma_first_rounds"] < later <= noise["sigma_later_rounds_most"] * (1 + 1e-12)

    private, plan = _stage_run(table, seed=3)
    noise = plan.noise
    assert "sigma_one_way_round" not in noise  # n̂ is bought at run time
    one_way = private.events[0].noise_multiplier
    assert noise["sigma_one_way_least"] * (1 - 1e-12) <= one_way <= noise["sigma_first_rounds"]
    assert private.events[d + 1].noise_multiplier <= noise["sigma_later_rounds_most"] * (1 + 1e-12)

    large, plan = _stage_run(table, seed=3, public=30_000)
    noise = plan.noise
    assert noise["one_way_rule_rows"] < 30_000
    assert noise["sigma_one_way_round"] == noise["sigma_one_way_few_columns"]
    assert large.events[d + 1].noise_multiplier == pytest.approx(noise["sigma_later_rounds"])
