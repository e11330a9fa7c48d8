"""Calibrate a plan to a target (ε, δ): the largest noise scale whose events fit the budget.

A plan is a function of one scale t (the total zCDP ρ its stages share): ``events_at(t)`` lists
the events the stages would run at t. ``plan_epsilon`` is the plan's price of a list of events;
it is the Ledger's reported ε (the tighter of RDP and PLD, ``accountant``) or a bound never
below it, so a plan never promises less than the run's ledger reports:

* zCDP events with an adaptive stage's reservation (a ``ZCDPEvent``; AIM): the Ledger has no
  PLD for them and reports its RDP bound, which ``zcdp_bound.zcdp_epsilon`` gives in closed
  form — the same figure, with no dp-accounting import.
* zCDP events with exponential-mechanism selections and no reservation (MST): the same closed
  form. The Ledger reports min(RDP, PLD), never above it; its PLD prices each selection as a
  pure ε-DP mechanism, looser than the selection's ε²/8 zCDP, and was 28–30 % above RDP on
  configs/adult-mst.yaml at ε = 0.3, 1 and 10 (tests/privacy/test_plan_bound.py checks that the
  plan's ε equals the ledger's there). A recipe where PLD wins gets a plan slightly
  conservative, never a weaker one.
* anything else (DP-SGD's subsampled Gaussian; Gaussian releases alone, where PLD is tighter):
  the Ledger itself, calibrated by ``ledger_calibration`` (dp-accounting, imported only then).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from synthpriv.errors import BudgetError
from synthpriv.privacy.accountant import (
    DiscreteGaussianEvent,
    ExponentialEvent,
    GaussianEvent,
    Ledger,
    PrivacyEvent,
    ZCDPEvent,
    split_threshold,
    zcdp_rho,
)
from synthpriv.privacy.zcdp_bound import zcdp_epsilon

RELATIVE_TOLERANCE = 1e-3  # the scale found is within this fraction of the largest that fits
FIRST_GUESS = 1e-3  # a first scale (zCDP ρ) to bracket from
SMALLEST_SCALE = 1e-12  # below this no plan is worth running: the budget is too small
LARGEST_SCALE = 1e15  # ρ beyond any budget (ε = 1e7 needs ρ ≈ 1e7): the cost does not grow
STEP = 4.0  # the closed-form bracket's step (a factor on t)
ZCDP_EVENTS = (GaussianEvent, DiscreteGaussianEvent, ExponentialEvent, ZCDPEvent)
PLD_LOOSER = (ExponentialEvent, ZCDPEvent)  # with one of these, the Ledger reports RDP (above)


def composed_epsilon(events: Sequence[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """The ε the Ledger reports at ``delta`` for ``events`` recorded as they are."""
    ledger = Ledger(neighbouring)
    ledger.extend(events)
    return ledger.epsilon(delta)


def priced_in_closed_form(events: Sequence[PrivacyEvent]) -> bool:
    """True when ``plan_epsilon`` prices ``events`` by the zCDP closed form (module docstring):
    every event is zCDP (or a threshold's δ) and one is a selection or a reservation."""
    kept, _ = split_threshold(events, 0.0)
    return (all(isinstance(e, ZCDP_EVENTS) for e in kept)
            and any(isinstance(e, PLD_LOOSER) for e in kept))


def plan_epsilon(events: Sequence[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """The ε a plan of ``events`` is calibrated on and reports at ``delta``: the Ledger's
    reported ε, or (events ``priced_in_closed_form``) its RDP bound, which is never below the
    reported one and equals it for the marginal recipes (module docstring). inf when the
    partition thresholds spend all of ``delta``."""
    if not priced_in_closed_form(events):
        return composed_epsilon(events, delta, neighbouring)
    kept, rest = split_threshold(events, delta)
    Ledger(neighbouring).extend(kept)  # refuses what the run's Ledger would refuse
    return zcdp_epsilon(sum(zcdp_rho(e) for e in kept), rest)


def calibrate_scale(
    events_at: Callable[[float], Sequence[PrivacyEvent]], epsilon: float, delta: float,
    neighbouring: str,
) -> float:
    """The largest scale t (within RELATIVE_TOLERANCE) whose ``events_at(t)`` cost at most
    ``epsilon`` at ``delta`` by ``plan_epsilon``; 0.0 when none above SMALLEST_SCALE fits. The
    cost must grow with t; a cost that stays within the budget up to LARGEST_SCALE raises
    BudgetError."""
    if not priced_in_closed_form(events_at(FIRST_GUESS)):
        from synthpriv.privacy.ledger_calibration import calibrate_on_ledger

        return calibrate_on_ledger(events_at, epsilon, delta, neighbouring)

    def fits(t: float) -> bool:
        return plan_epsilon(events_at(t), delta, neighbouring) <= epsilon

    lower = FIRST_GUESS
    while not fits(lower):
        lower /= STEP
        if lower < SMALLEST_SCALE:
            return 0.0
    upper = lower * STEP
    while fits(upper):
        lower, upper = upper, upper * STEP
        if upper > LARGEST_SCALE:
            raise BudgetError(
                f"budget ε = {epsilon:g}: the plan costs no more than that even at zCDP ρ = "
                f"{lower:.3g}, so its cost does not grow with its budget; check the recipe's "
                "fixed noise settings")
    while upper / lower > 1 + RELATIVE_TOLERANCE / 16:  # bisection in log t; cheap here
        middle = math.sqrt(lower * upper)
        lower, upper = (middle, upper) if fits(middle) else (lower, middle)
    return lower
