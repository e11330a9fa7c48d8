"""Calibrate a plan on the Ledger's reported bound with dp-accounting's ``calibrate_dp_mechanism``:
the path of ``calibration.calibrate_scale`` for plans whose figure needs the PLD accountant
(DP-SGD; Gaussian releases only). Imported only then: dp-accounting loads scipy.signal.

A plan is a function of one scale t (the total zCDP ρ its stages share): ``events_at(t)`` lists
the events the stages would run at t. The calibration finds the largest t whose events the
Ledger bounds by the target ε at δ. dp-accounting's calibration searches over any accountant
that implements its ``PrivacyAccountant`` interface; ``LedgerAccountant`` puts the Ledger's own
reported bound (the tighter of RDP and PLD, see ``accountant``) behind that interface, so the
plan is calibrated on exactly the bound the job reports. The search brackets first with the RDP
bound (never below the reported one, and cheap), then refines on the reported one.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import attr
import dp_accounting as dpa
from dp_accounting import mechanism_calibration as calibration

from synthpriv.errors import BudgetError
from synthpriv.privacy.accountant import PrivacyEvent, rdp_epsilon
from synthpriv.privacy.calibration import (
    FIRST_GUESS,
    RELATIVE_TOLERANCE,
    SMALLEST_SCALE,
    composed_epsilon,
)

STEP = math.log(4.0)  # the bracket's first step in log t


@attr.s(frozen=True, slots=True, auto_attribs=True)
class PlannedDpEvent(dpa.DpEvent):
    """A plan's synthpriv events, carried as one dp-accounting event to ``LedgerAccountant``."""

    events: tuple


class LedgerAccountant(dpa.PrivacyAccountant):
    """The Ledger's bound behind dp-accounting's ``PrivacyAccountant`` interface: ``bound``
    'reported' is ``Ledger.epsilon`` (the tighter valid bound), 'rdp' the RDP bound alone."""

    def __init__(self, neighbouring: str, bound: str = "reported") -> None:
        super().__init__(dpa.NeighboringRelation.ADD_OR_REMOVE_ONE)
        self.neighbouring, self.bound = neighbouring, bound
        self._events: list[PrivacyEvent] = []

    def _maybe_compose(self, event: dpa.DpEvent, count: int, do_compose: bool):
        if not isinstance(event, PlannedDpEvent):
            return self.CompositionErrorDetails(event, "LedgerAccountant takes PlannedDpEvent")
        if do_compose:
            self._events += list(event.events) * count
        return None

    def get_epsilon(self, target_delta: float) -> float:
        if self.bound == "rdp":
            return rdp_epsilon(self._events, target_delta, self.neighbouring)
        return composed_epsilon(self._events, target_delta, self.neighbouring)


def calibrate_on_ledger(
    events_at: Callable[[float], Sequence[PrivacyEvent]], epsilon: float, delta: float,
    neighbouring: str,
) -> float:
    """The largest scale t (within RELATIVE_TOLERANCE) whose ``events_at(t)`` the Ledger bounds
    by ``epsilon`` at ``delta`` (``composed_epsilon``); 0.0 when none above SMALLEST_SCALE fits.
    The cost must grow with t. The search runs over log t, so dp-accounting's absolute tolerance
    is a relative one."""
    rdp_finite = math.isfinite(rdp_epsilon(events_at(FIRST_GUESS), delta, neighbouring))

    def gap(bound: str, x: float) -> float:
        accountant = LedgerAccountant(neighbouring, bound)
        return accountant.compose(PlannedDpEvent(tuple(events_at(math.exp(x))))).get_epsilon(
            delta) - epsilon

    def search(bound: str, lower: float, tol: float) -> float:
        try:
            return calibration.calibrate_dp_mechanism(
                lambda: LedgerAccountant(neighbouring, bound),
                lambda x: PlannedDpEvent(tuple(events_at(math.exp(x)))),
                epsilon, delta, calibration.LowerEndpointAndGuess(lower, lower + STEP), tol=tol,
            )
        except (calibration.NoBracketIntervalFoundError, OverflowError):
            raise BudgetError(
                "the plan's cost does not grow with its budget; check the recipe") from None

    # dp-accounting brackets upwards from a scale that fits: find one, stepping down.
    bound = "rdp" if rdp_finite else "reported"
    lower = math.log(FIRST_GUESS)
    while gap(bound, lower) > 0:
        lower -= STEP
        if lower < math.log(SMALLEST_SCALE):
            return 0.0
    if rdp_finite:  # RDP is never below the reported bound: its answer fits, and is close
        lower = search("rdp", lower, STEP / 16)
    return math.exp(search("reported", lower, math.log1p(RELATIVE_TOLERANCE)))
