"""AIM's rounds against its d first 1-way measurements. Where the rounds can hold them (α·d ≤
rounds) each is one round's measurement, as before. Where they cannot (α·d > rounds: 445+
columns at the default 400 rounds, ISLP Fund and Khan), the 1-way round is one batch spending
MST's 1-way share of AIM's ρ and the rounds share the rest (``settings.one_way_batch``,
``budget.batch_noise``); before, the plan refused (and earlier still the zCDP filter refused the
first measurements mid-run, found while writing the privacy mutation suite). Checked from the
plan, the ledger's events and the filter's total."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger, zcdp_rho
from synthpriv.privacy.budget import round_noise
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

DOMAIN = Domain.from_sizes({"a": 2, "b": 3, "c": 2, "d": 2})


def _stage(rounds: int, alpha: float = 0.9) -> MarginalsStage:
    return MarginalsStage({"selection": "aim", "aim_max_rounds": rounds,
                           "aim_gaussian_fraction": alpha, "iterations": 5,
                           "aim_round_iterations": 5}, PlanContext(DOMAIN, "add_remove", 1e-6),
                          "test")


def _run(stage: MarginalsStage, plan, seed: int = 1) -> Ledger:
    ledger = Ledger("add_remove")
    schema = parse_schema({"columns": [
        {"name": n, "kind": "categorical", "categories": [str(i) for i in range(s)]}
        for n, s in DOMAIN.to_dict().items()]}, "test")
    state = PipelineState(stage.context, TableEncoder(schema),
                          Dataset(np.random.default_rng(0).integers(0, 2, (200, 4)), DOMAIN))
    stage.run(state, plan, ledger, RandomSource.seeded(seed))
    assert len(state.measurements) >= len(DOMAIN)
    return ledger


def test_too_few_rounds_measure_the_one_way_round_as_one_batch_of_a_third() -> None:
    """3 rounds, 4 columns at α = 0.9 (3.6 rounds' worth): the plan states the batch; the 4
    first measurements spend ρ/3 together, each later round's measurement is the rounds' own on
    the other 2ρ/3 (or annealed: half the noise), and the filter spends exactly its reserve."""
    stage = _stage(3)
    plan = stage.plan(0.5)
    rho = plan.noise["aim_rho"]
    assert plan.noise["one_way_batch_share"] == pytest.approx(1 / 3)
    (aim,) = _run(stage, plan).filters
    events = aim.events
    first = sum(zcdp_rho(e) for e in events[:4])
    assert first == pytest.approx(rho / 3, rel=1e-9)
    assert plan.noise["sigma_first_rounds"] == pytest.approx(events[0].noise_multiplier)
    later, _ = round_noise(2 * rho / 3, 3, 0.9)
    measured = [e.noise_multiplier for e in events[5::2]]
    assert measured and measured[0] == pytest.approx(later, rel=1e-9)
    assert all(z <= later * (1 + 1e-9) for z in measured)
    assert aim.spent == pytest.approx(rho, rel=1e-9)


def test_enough_rounds_keep_the_one_way_measurements_as_rounds() -> None:
    stage = _stage(4)
    plan = stage.plan(0.5)
    assert "one_way_batch_share" not in plan.noise
    (aim,) = _run(stage, plan).filters
    own, _ = round_noise(plan.noise["aim_rho"], 4, 0.9)
    assert [e.noise_multiplier for e in aim.events[:4]] == pytest.approx([own] * 4, rel=1e-12)


@pytest.mark.parametrize(("rounds", "alpha"), [(4, 0.9), (1, 0.02), (3, 0.9), (1, 0.9)])
def test_any_round_count_runs_within_the_reserve(rounds: int, alpha: float) -> None:
    stage = _stage(rounds, alpha)
    plan = stage.plan(0.5)
    (aim,) = _run(stage, plan).filters
    assert aim.spent <= plan.noise["aim_rho"] * (1 + 1e-9)
