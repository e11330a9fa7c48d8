"""The closed-form RDP bound of zCDP events (privacy.zcdp_bound) against dp-accounting's own
RdpAccountant on the same events: the plan and the Ledger's RDP bound (which prices all-zCDP
events in closed form, without importing dp-accounting) report what dp-accounting reports."""

from __future__ import annotations

import itertools

import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    ExponentialEvent,
    GaussianEvent,
    PrivacyEvent,
    ThresholdEvent,
    ZCDPEvent,
    _relation,
    _to_dp_event,
    rdp_epsilon,
    split_threshold,
    zcdp_rho,
)
from synthpriv.privacy.calibration import plan_epsilon
from synthpriv.privacy.zcdp_bound import RDP_ORDERS, zcdp_epsilon


def accountant_epsilon(events: list[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """dp-accounting's RdpAccountant itself on ``events`` (the δ of thresholds taken out): the
    independent figure the closed form must equal."""
    events, delta = split_threshold(events, delta)
    accountant = rdp_privacy_accountant.RdpAccountant(neighboring_relation=_relation(neighbouring))
    for event in events:
        accountant.compose(_to_dp_event(event))
    return float(accountant.get_epsilon(delta))


def test_the_orders_are_dp_accountings() -> None:
    assert list(RDP_ORDERS) == list(rdp_privacy_accountant.DEFAULT_RDP_ORDERS)


@pytest.mark.parametrize(("rho", "delta"), list(itertools.product(
    [1e-7, 1e-4, 0.01, 0.0306, 0.5, 3.0, 40.0, 1e3, 9e3, 3e5, 1e7], [1e-10, 1e-6, 1e-5, 1e-2])))
def test_zcdp_epsilon_is_the_rdp_accountants(rho: float, delta: float) -> None:
    expected = accountant_epsilon([ZCDPEvent(rho)], delta, "add_remove")
    assert zcdp_epsilon(rho, delta) == pytest.approx(expected, rel=1e-9, abs=1e-12)
    assert rdp_epsilon([ZCDPEvent(rho)], delta, "add_remove") == pytest.approx(
        expected, rel=1e-9, abs=1e-12)


def test_no_privacy_loss_costs_nothing_and_no_delta_has_no_bound() -> None:
    assert zcdp_epsilon(0.0, 1e-6) == 0.0
    assert zcdp_epsilon(1.0, 0.0) == float("inf")
    with pytest.raises(ValueError, match="rho must be >= 0"):
        zcdp_epsilon(-1.0, 1e-6)


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_a_mixed_plan_is_priced_as_the_ledgers_rdp_bound(neighbouring: str) -> None:
    """Gaussian, discrete Gaussian, exponential and reserved zCDP events with a threshold's δ:
    the plan's figure is RDP's on the δ the threshold leaves, as the Ledger's RDP side is."""
    events = [GaussianEvent(7.0, 3), DiscreteGaussianEvent(12.0, 14), ExponentialEvent(0.05, 13),
              ZCDPEvent(0.01), ThresholdEvent(2e-7)]
    expected = accountant_epsilon(events, 1e-6, neighbouring)
    assert plan_epsilon(events, 1e-6, neighbouring) == pytest.approx(expected, rel=1e-9)
    assert rdp_epsilon(events, 1e-6, neighbouring) == pytest.approx(expected, rel=1e-9)
    total = sum(zcdp_rho(e) for e in events if not isinstance(e, ThresholdEvent))
    assert zcdp_epsilon(total, 1e-6) < expected  # the threshold's δ is taken out: it matters


def test_an_aim_ledger_is_priced_without_importing_dp_accounting() -> None:
    """A ledger of zCDP events only (an AIM job: domain histograms, thresholds, the filter's
    reservation) reports its ε in a fresh interpreter without loading dp-accounting; a DP-SGD
    event (no zCDP bound) still goes to dp-accounting."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from synthpriv.privacy.accountant import Ledger, DiscreteGaussianEvent, ThresholdEvent, "
        "SubsampledGaussianEvent\n"
        "ledger = Ledger()\n"
        "ledger.extend([DiscreteGaussianEvent(30.0, 15), ThresholdEvent(1e-8)])\n"
        "ledger.open_filter(0.01, 'aim').record(DiscreteGaussianEvent(40.0, 2))\n"
        "print(ledger.epsilon(1e-6), 'dp_accounting' in sys.modules)\n"
        "ledger.record(SubsampledGaussianEvent(0.01, 1.0, 10))\n"
        "print(ledger.epsilon(1e-6), 'dp_accounting' in sys.modules)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out[1] == "False" and out[3] == "True"
    assert 0 < float(out[0]) < float(out[2])
