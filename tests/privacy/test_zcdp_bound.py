"""The closed-form RDP bound of zCDP events (privacy.zcdp_bound) against dp-accounting's own
RdpAccountant on the same events: the plan prices what the Ledger's RDP bound reports."""

from __future__ import annotations

import itertools

import pytest
from dp_accounting.rdp import rdp_privacy_accountant

from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    ExponentialEvent,
    GaussianEvent,
    ThresholdEvent,
    ZCDPEvent,
    rdp_epsilon,
    zcdp_rho,
)
from synthpriv.privacy.calibration import plan_epsilon
from synthpriv.privacy.zcdp_bound import RDP_ORDERS, zcdp_epsilon


def test_the_orders_are_dp_accountings() -> None:
    assert list(RDP_ORDERS) == list(rdp_privacy_accountant.DEFAULT_RDP_ORDERS)


@pytest.mark.parametrize(("rho", "delta"), list(itertools.product(
    [1e-7, 1e-4, 0.01, 0.0306, 0.5, 3.0, 40.0, 1e3, 9e3, 3e5, 1e7], [1e-10, 1e-6, 1e-5, 1e-2])))
def test_zcdp_epsilon_is_the_rdp_accountants(rho: float, delta: float) -> None:
    expected = rdp_epsilon([ZCDPEvent(rho)], delta, "add_remove")
    assert zcdp_epsilon(rho, delta) == pytest.approx(expected, rel=1e-9, abs=1e-12)


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
    expected = rdp_epsilon(events, 1e-6, neighbouring)
    assert plan_epsilon(events, 1e-6, neighbouring) == pytest.approx(expected, rel=1e-9)
    total = sum(zcdp_rho(e) for e in events if not isinstance(e, ThresholdEvent))
    assert zcdp_epsilon(total, 1e-6) < expected  # the threshold's δ is taken out: it matters
