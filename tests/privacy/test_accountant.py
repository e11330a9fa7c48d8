"""The ledger against independent references: the analytic Gaussian mechanism (Balle & Wang
2018), Opacus' RDP and PRV accountants for DP-SGD, and zCDP conversion bounds."""

from __future__ import annotations

import math

import pytest
from opacus.accountants import PRVAccountant, RDPAccountant
from scipy.optimize import brentq
from scipy.stats import norm

from synthpriv.privacy import accountant
from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    ExponentialEvent,
    GaussianEvent,
    Ledger,
    SubsampledGaussianEvent,
    UnboundedError,
    ZCDPEvent,
    rdp_epsilon,
)

DELTA = 1e-5


def analytic_gaussian_epsilon(noise_multiplier: float, delta: float) -> float:
    """Exact ε of one Gaussian release at δ (Balle & Wang 2018, Theorem 8)."""

    def delta_at(eps: float) -> float:
        s = noise_multiplier
        return norm.cdf(1 / (2 * s) - eps * s) - math.exp(eps) * norm.cdf(-1 / (2 * s) - eps * s)

    return brentq(lambda eps: delta_at(eps) - delta, 1e-9, 100)


def ledger_of(*events) -> Ledger:
    ledger = Ledger()
    ledger.extend(events)
    return ledger


@pytest.mark.parametrize("multiplier", [0.8, 2.0, 5.0, 20.0])
def test_gaussian_matches_analytic_gaussian_mechanism(multiplier: float) -> None:
    exact = analytic_gaussian_epsilon(multiplier, DELTA)
    reported = ledger_of(GaussianEvent(multiplier)).epsilon(DELTA)
    # PLD is a pessimistic discretisation: never below the exact value, at most 1e-3 above.
    assert exact - 1e-9 <= reported <= exact + 1e-3


def test_composed_gaussians_equal_one_gaussian() -> None:
    # k releases at multiplier z are exactly one release at z / sqrt(k) (Gaussian DP).
    exact = analytic_gaussian_epsilon(6.0 / math.sqrt(9), DELTA)
    reported = ledger_of(GaussianEvent(6.0, count=9)).epsilon(DELTA)
    assert exact - 1e-9 <= reported <= exact + 1e-3


@pytest.mark.parametrize(("rate", "multiplier", "steps"), [(0.01, 1.0, 3000), (0.004, 1.5, 1000)])
def test_dp_sgd_matches_opacus_accountants(rate: float, multiplier: float, steps: int) -> None:
    event = SubsampledGaussianEvent(rate, multiplier, steps)
    bounds = ledger_of(event).epsilon_bounds(DELTA)
    opacus_rdp = RDPAccountant()
    opacus_rdp.history = [(multiplier, rate, steps)]
    opacus_prv = PRVAccountant()
    opacus_prv.history = [(multiplier, rate, steps)]
    # Same RDP curve; Opacus uses a different grid of orders, so allow 3%.
    assert bounds["rdp"] == pytest.approx(opacus_rdp.get_epsilon(DELTA), rel=0.03)
    # PLD and PRV are both near-exact numerical accountants of the same mechanism.
    assert bounds["pld"] == pytest.approx(opacus_prv.get_epsilon(DELTA), rel=0.03)
    assert bounds["pld"] < bounds["rdp"]


def test_composition_is_at_most_the_sum() -> None:
    first = GaussianEvent(3.0, count=4)
    second = SubsampledGaussianEvent(0.01, 1.1, 500)
    third = ExponentialEvent(0.1, count=5)
    together = ledger_of(first, second, third).epsilon(DELTA)
    alone = sum(ledger_of(e).epsilon(DELTA / 3) for e in (first, second, third))
    assert together <= alone
    assert together > max(ledger_of(e).epsilon(DELTA) for e in (first, second, third))


def test_exponential_mechanism_is_within_its_pure_and_zcdp_bounds() -> None:
    epsilon, count = 0.2, 10
    rho = count * epsilon**2 / 8
    reported = ledger_of(ExponentialEvent(epsilon, count)).epsilon(DELTA)
    assert reported <= count * epsilon  # basic composition of pure ε
    assert reported <= rho + 2 * math.sqrt(rho * math.log(1 / DELTA))  # zCDP conversion (BS16)
    assert reported > 0.5 * (rho + 2 * math.sqrt(rho * math.log(1 / DELTA))) / 2


def test_discrete_gaussian_costs_the_same_zcdp_as_continuous() -> None:
    continuous = ledger_of(GaussianEvent(4.0, count=3)).epsilon_bounds(DELTA)
    discrete = ledger_of(DiscreteGaussianEvent(4.0, count=3)).epsilon_bounds(DELTA)
    assert discrete["rdp"] == pytest.approx(continuous["rdp"], rel=1e-9)
    # The discrete Gaussian's exact PLD is close to (not below) the continuous one's.
    assert discrete["pld"] == pytest.approx(continuous["pld"], rel=0.02)


@pytest.mark.parametrize("multiplier", [1.0, 3.0])
def test_gaussian_is_accounted_alike_by_rdp_and_pld_under_both_relations(multiplier: float) -> None:
    """The multiplier is relative to the relation's sensitivity, so the relation changes neither
    bound (before: PLD doubled the shift under replace-one, RDP did not)."""
    exact = analytic_gaussian_epsilon(multiplier, DELTA)
    for relation in ("add_remove", "replace_one"):
        ledger = Ledger(relation)
        ledger.record(GaussianEvent(multiplier))
        bounds = ledger.epsilon_bounds(DELTA)
        assert exact - 1e-9 <= bounds["pld"] <= exact + 1e-3
        assert bounds["rdp"] == pytest.approx(rdp_epsilon([GaussianEvent(multiplier)], DELTA,
                                                          "add_remove"))


@pytest.mark.parametrize("multiplier", [2.0, 8.0])
def test_discrete_gaussian_under_replace_one_has_a_pld_with_the_same_zcdp(multiplier: float) -> None:
    """Replace-one moves two cells of a histogram by one each at σ = z·√2 per cell: the PLD
    composes two unit shifts, whose Gaussian limit is one unit shift at z (2/(2·2z²) = 1/(2z²)).
    So the bound is finite and within the discretisation of the add/remove one (before: None,
    so a dpsgd job under replace-one had no finite bound at all)."""
    add_remove = Ledger("add_remove")
    replace = Ledger("replace_one")
    for ledger in (add_remove, replace):
        ledger.record(DiscreteGaussianEvent(multiplier, count=3))
    pld_add = add_remove.epsilon_bounds(DELTA)["pld"]
    pld_replace = replace.epsilon_bounds(DELTA)["pld"]
    assert math.isfinite(pld_replace)
    assert pld_replace == pytest.approx(pld_add, rel=0.03)
    assert replace.epsilon_bounds(DELTA)["rdp"] == pytest.approx(
        add_remove.epsilon_bounds(DELTA)["rdp"], rel=1e-12)


def test_filter_is_accounted_at_its_reserved_rho_by_rdp_only() -> None:
    """An adaptive stage's events, however cheap, are accounted at the reserved ρ, and PLD is
    not used for a ledger holding a filter (privacy review, issue 12, item 2)."""
    ledger = Ledger()
    budget = ledger.open_filter(0.05, "adaptive")
    budget.record(DiscreteGaussianEvent(20.0, count=2, label="cheap"))  # ρ = 0.0025
    assert budget.spent == pytest.approx(0.0025)
    assert budget.remaining == pytest.approx(0.0475)
    bounds = ledger.epsilon_bounds(DELTA)
    assert bounds["pld"] is None
    assert bounds["rdp"] == pytest.approx(rdp_epsilon([ZCDPEvent(0.05)], DELTA, "add_remove"))
    assert ledger.epsilon(DELTA) == bounds["rdp"]
    assert [e.label for e in ledger.events] == ["cheap"]
    record = ledger.to_dict(DELTA)
    assert record["bound"] == "rdp" and record["epsilon_pld"] is None
    assert record["adaptive"][0]["reserved_rho"] == 0.05
    assert record["adaptive"][0]["events"][0]["label"] == "cheap"


def test_filter_refuses_to_overspend() -> None:
    budget = Ledger().open_filter(0.01, "adaptive")
    budget.record(ExponentialEvent(0.2))  # ρ = 0.005
    with pytest.raises(ValueError, match="past the reserved"):
        budget.record(DiscreteGaussianEvent(5.0))  # ρ = 0.02
    assert budget.spent == pytest.approx(0.005)


def test_dp_sgd_beside_a_filter_under_replace_one_is_unbounded_with_a_reason() -> None:
    ledger = Ledger("replace_one")
    ledger.open_filter(0.01, "adaptive").record(ExponentialEvent(0.1))
    ledger.record(SubsampledGaussianEvent(0.01, 1.0, 100))
    with pytest.raises(UnboundedError, match="replace-one"):
        ledger.epsilon(DELTA)


def test_replace_one_costs_more_for_subsampled_gaussian() -> None:
    add_remove = Ledger("add_remove")
    replace = Ledger("replace_one")
    for ledger in (add_remove, replace):
        ledger.record(SubsampledGaussianEvent(0.01, 1.0, 1000))
    assert replace.epsilon(DELTA) > add_remove.epsilon(DELTA)


def test_ledger_rejects_bad_events_and_relations() -> None:
    with pytest.raises(ValueError, match="neighbouring relation"):
        Ledger("swap")
    with pytest.raises(ValueError, match="noise_multiplier must be positive"):
        Ledger().record(GaussianEvent(0.0))
    with pytest.raises(ValueError, match="sample_rate"):
        Ledger().record(SubsampledGaussianEvent(1.5, 1.0, 10))


def test_empty_ledger_spends_nothing_and_manifest_lists_events() -> None:
    assert Ledger().epsilon(DELTA) == 0.0
    ledger = ledger_of(GaussianEvent(2.0, label="x"))
    record = ledger.to_dict(DELTA)
    assert record["events"] == [
        {"noise_multiplier": 2.0, "count": 1, "label": "x", "kind": "gaussian"}
    ]
    assert record["epsilon"] == min(record["epsilon_rdp"], record["epsilon_pld"])
    assert record["bound"] == ("rdp" if record["epsilon_rdp"] < record["epsilon_pld"] else "pld")
    assert record["adaptive"] == []


def test_pld_is_not_built_when_an_event_has_none(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plan that reserves zCDP for an adaptive stage has no PLD bound: the accountant says so
    before building any PLD. A discrete Gaussian at σ = 10⁷ (a noisy count at ε = 0.001) would
    otherwise take minutes to discretise, for a figure that is then discarded."""
    def never(*_args: object) -> None:
        raise AssertionError("a PLD was built for a composition that has none")

    monkeypatch.setattr(accountant, "_pld_of", never)
    events = [DiscreteGaussianEvent(1e7, 1), ZCDPEvent(1e-6)]
    assert accountant.pld_epsilon(events, 1e-5, "add_remove") == math.inf


def test_bounds_are_computed_once_per_composition(monkeypatch: pytest.MonkeyPatch) -> None:
    """Ledgers of the same mechanisms on other queries (labels differ: MST's pairs in two shadow
    runs) share one accounting; another δ, another relation or another noise is accounted anew,
    and every figure equals the uncached accountants'."""
    calls: list[tuple] = []
    pld, rdp = accountant.pld_epsilon, accountant.rdp_epsilon

    def counted(function):
        def wrapped(events, delta, neighbouring):
            calls.append((function.__name__, delta, neighbouring))
            return function(events, delta, neighbouring)
        return wrapped

    monkeypatch.setattr(accountant, "pld_epsilon", counted(pld))
    monkeypatch.setattr(accountant, "rdp_epsilon", counted(rdp))
    z = 7.123456789  # a multiplier no other test uses: nothing cached before this test
    first = ledger_of(GaussianEvent(z, label="a,b"), ExponentialEvent(0.1, label="pick 1"))
    second = ledger_of(GaussianEvent(z, label="c,d"), ExponentialEvent(0.1, label="pick 2"))
    assert first.epsilon_bounds(DELTA) == second.epsilon_bounds(DELTA)
    assert len(calls) == 2  # one RDP and one PLD accounting for both ledgers
    events = [GaussianEvent(z), ExponentialEvent(0.1)]
    assert first.epsilon_bounds(DELTA) == {"rdp": rdp(events, DELTA, "add_remove"),
                                           "pld": pld(events, DELTA, "add_remove")}
    first.epsilon_bounds(DELTA / 10)
    replace = Ledger("replace_one")
    replace.extend(events)
    replace.epsilon_bounds(DELTA)
    ledger_of(GaussianEvent(z * 2), ExponentialEvent(0.1)).epsilon_bounds(DELTA)
    assert len(calls) == 8
