"""AIM's 1-way round on a table of few columns (issue 24, ISLP Default against dpmm): where the
workload has fewer distinct candidate marginals than AIM's 16·d rounds, the 1-way round is
measured at the noise of one round per candidate (``settings.one_way_rounds``), at most MST's
1-way share of AIM's ρ; the later rounds share what it leaves (``budget.later_round_noise``).
Checked against the rule written out here (z = √(C / (2αρ)), C = Σ_{j≤k} C(d, j)), the plan's
figures and the ledger's events; a table of 10+ columns is unchanged."""

from __future__ import annotations

import math

import pytest

from synthpriv.domain import Dataset
from synthpriv.marginals.settings import one_way_rounds
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.stage import PlanContext
from tests.marginals.test_aim_one_way import ENCODER, ROWS, STAGE_RHO, _stage_run
from tests.marginals.test_compress import codes_of


def test_one_round_per_candidate_marginal_when_they_are_fewer_than_the_rounds() -> None:
    assert one_way_rounds(64, 4, 3) == 4 + 6 + 4  # ISLP Default: 14 of 64
    assert one_way_rounds(96, 6, 3) == 6 + 15 + 20  # NYSE: 41 of 96
    assert one_way_rounds(32, 2, 3) == 3  # a 2-column table: its 2 columns and their pair
    assert one_way_rounds(144, 9, 3) == 9 + 36 + 84  # 129: the widest table it touches
    assert one_way_rounds(160, 10, 3) == 160  # 175 candidates: unchanged
    assert one_way_rounds(224, 14, 3) == 224  # Adult: unchanged
    assert one_way_rounds(9, 3, 2) == 6  # a degree-2 workload over 3 columns


def test_the_one_way_round_of_four_columns_is_measured_at_one_round_per_candidate() -> None:
    """4 columns, AIM's 40 rounds, a public n̂ of 30,000 (the small-table rule of
    ``settings.one_way_sigma`` does not fire): every 1-way event at z = √(14 / (2αρ)) (14
    candidates, α = 0.9, ρ = AIM's reserve) — below the rounds' own √(40 / (2αρ)) and above MST's
    share's √(d / (2ρ/3)) —, the plan's ``sigma_one_way_few_columns`` and ``sigma_one_way_round``
    equal to it, the first later round at the plan's ``sigma_later_rounds``, the filter spent to
    its reserve and no further."""
    table = Dataset(codes_of(ROWS, seed=1), ENCODER.domain)
    d = len(ENCODER.domain)
    assert d == 4
    filter_, plan = _stage_run(table, seed=3, public=30_000)
    noise, rho = plan.noise, plan.noise["aim_rho"]
    alpha = 0.9
    rule = math.sqrt((4 + 6 + 4) / (2 * alpha * rho))
    assert rule < math.sqrt(40 / (2 * alpha * rho)) == pytest.approx(noise["sigma_first_rounds"])
    assert rule > math.sqrt(d / (2 * rho / 3))
    assert noise["sigma_one_way_few_columns"] == pytest.approx(rule, rel=1e-12)
    assert noise["sigma_one_way_round"] == pytest.approx(rule, rel=1e-12)
    one_way = filter_.events[:d]
    assert all(e.label.startswith("marginal ") and "×" not in e.label for e in one_way)
    assert all(e.noise_multiplier == pytest.approx(rule, rel=1e-12) for e in one_way), (
        [e.noise_multiplier for e in one_way], rule)
    assert filter_.events[d + 1].noise_multiplier == pytest.approx(noise["sigma_later_rounds"],
                                                                   rel=1e-12)
    assert filter_.spent == pytest.approx(rho, rel=1e-9)
    assert filter_.spent <= rho * (1 + 1e-12)


def test_a_table_of_ten_columns_plans_as_before() -> None:
    """10 columns: 175 candidate marginals, more than its 160 rounds: no few-column figure, and
    the 1-way round's most is the rounds' own σ (the rule rows follow it)."""
    names = tuple(f"c{i}" for i in range(10))
    wide = type(ENCODER.domain)(names, (5,) * 10)
    context = PlanContext(wide, "add_remove", 1e-6, None, frozenset({names[0]}))
    stage = MarginalsStage({"selection": "aim", "aim_max_rounds": 400}, context, "test")
    noise = stage.plan(STAGE_RHO).noise
    assert noise["max_rounds"] == 160
    assert "sigma_one_way_few_columns" not in noise
    assert noise["one_way_rule_rows"] == pytest.approx(16 * noise["sigma_first_rounds"])
