"""AIM spends through a budget object the ledger's filter backs (issue 14, item 4): the filter is
the one tally, the rounds follow AIM's schedule exactly, and the same noise gives the same
measurements."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.marginals.aim import AimSettings, Sensitivity, aim_rounds, run_aim
from synthpriv.privacy.accountant import Ledger, ZCDPFilter
from synthpriv.privacy.budget import RoundBudget
from synthpriv.privacy.randomness import RandomSource

SETTINGS = AimSettings(workload_degree=2, rounds_per_attribute=3, gaussian_fraction=0.9,
                       round_iterations=10, final_iterations=20)
RHO = 0.05


def data() -> Dataset:
    rng = np.random.default_rng(7)
    a = rng.integers(0, 3, 800)
    b = (a + (rng.random(800) < 0.2)) % 3
    c = rng.integers(0, 4, 800)
    return Dataset(np.stack([a, b, c], axis=1), Domain(("a", "b", "c"), (3, 3, 4)))


def run(seed: int) -> tuple[ZCDPFilter, list]:
    budget = Ledger().open_filter(RHO, "AIM")
    measurements, _ = run_aim(data(), SETTINGS, Sensitivity(1.0, 1.0),
                              RandomSource.seeded(seed), budget)
    return budget, measurements


def test_same_noise_source_gives_the_same_measurements() -> None:
    (first, one), (second, two) = run(11), run(11)
    assert [m.clique for m in one] == [m.clique for m in two]
    for x, y in zip(one, two, strict=True):
        np.testing.assert_array_equal(x.noisy_counts, y.noisy_counts)
    assert first.events == second.events


def test_rounds_follow_aims_schedule_and_spend_the_reserve_exactly() -> None:
    """Replays AIM's schedule (McKenna et al. 2022, Alg. 1) with its formulas written out here,
    independently of synthpriv.privacy: each round's noise is the planned one, the planned one
    annealed (σ/2, 2ε), or — when less than two rounds' worth remains — all that remains."""
    budget, _ = run(11)
    events = budget.events
    rounds = aim_rounds(SETTINGS, 3)
    alpha = SETTINGS.gaussian_fraction
    z = math.sqrt(rounds / (2 * alpha * RHO))
    eps = math.sqrt(8 * (1 - alpha) * RHO / rounds)
    one_way, rest = events[:3], events[3:]
    assert all(e.kind == "discrete_gaussian" and e.noise_multiplier == z for e in one_way)
    spent = 3 / (2 * z**2)
    assert len(rest) % 2 == 0 and rest
    for selection, measurement in zip(rest[::2], rest[1::2], strict=True):
        allowed = []
        for z_round, eps_round in ((z, eps), (z / 2, eps * 2)):  # as planned, or annealed
            remaining = RHO - spent
            if remaining < 2 * (1 / (2 * z_round**2) + eps_round**2 / 8):  # all that remains
                z_round = math.sqrt(1 / (2 * alpha * remaining))
                eps_round = math.sqrt(8 * (1 - alpha) * remaining)
            allowed.append((z_round, eps_round))
        assert (selection.kind, measurement.kind) == ("exponential", "discrete_gaussian")
        z, eps = measurement.noise_multiplier, selection.epsilon
        assert any((z, eps) == pytest.approx(pair, rel=1e-12) for pair in allowed), allowed
        spent += 1 / (2 * z**2) + eps**2 / 8
    assert budget.spent == pytest.approx(RHO, rel=1e-9)
    assert spent == pytest.approx(budget.spent, rel=1e-9)


def test_the_round_budget_keeps_no_tally_of_its_own() -> None:
    """What is spent is what the filter recorded; a round past the reserve is refused there."""
    budget = Ledger().open_filter(1.0, "rounds")
    spend = RoundBudget(budget, rounds=4, gaussian_fraction=0.5)
    assert spend.round_rho == pytest.approx(0.25)
    assert budget.spent == 0.0 and not spend.exhausted
    spend.anneal()
    assert spend.round_rho == pytest.approx(1.0)  # σ/2 and 2ε: four times the round's ρ
    z, eps = spend.next_round()
    assert (z, eps) == pytest.approx((1.0, 2.0))  # one round spends all that remains (ρ = 1)
    assert spend.spent_fraction_after_round(100.0) == pytest.approx(100.0)
