"""The budget object an adaptive algorithm spends through, in rounds (AIM, McKenna et al. 2022).

Each round runs one exponential-mechanism selection and one Gaussian measurement; a fraction α
of the round's zCDP goes to the measurement. The rounds are planned to share the filter's
reserved ρ equally; the algorithm may anneal (halve the noise, double the selection's ε) from
its own noisy outputs, and a round that would leave less than one more round's cost spends all
that is left. Every event is recorded in the ``ZCDPFilter`` (the ledger's), which refuses
anything past the reserve: the ledger, not this object, is the tally of what was spent.
"""

from __future__ import annotations

from synthpriv.privacy.accountant import ZCDPFilter
from synthpriv.privacy.conversions import (
    exponential_epsilon,
    exponential_rho,
    gaussian_noise_multiplier,
    gaussian_rho,
)

EXHAUSTED = 1e-12  # a filter with less than this fraction of its reserve left is spent


def round_noise(rho: float, rounds: int, gaussian_fraction: float) -> tuple[float, float]:
    """(noise multiplier of the measurement, ε of the selection) for each of ``rounds`` rounds
    sharing zCDP ``rho``, a fraction α = ``gaussian_fraction`` of each on the measurement:
    z = √(rounds/(2αρ)), ε = √(8(1−α)ρ/rounds) (``conversions``)."""
    return (gaussian_noise_multiplier(gaussian_fraction * rho, rounds),
            exponential_epsilon((1 - gaussian_fraction) * rho, rounds))


def first_round_noise(rho: float, rounds: int, gaussian_fraction: float, measurements: int,
                      wanted: float | None, most_share: float) -> float:
    """Noise multiplier of the ``measurements`` first measurements (AIM's 1-way round, no
    selection): the rounds' own (``round_noise``), or ``wanted`` where that is lower, but never
    below the multiplier at which they together spend ``most_share`` of ``rho``
    (z = √(d / (2·share·ρ))). ``wanted`` None: the rounds' own. A function of public or DP
    figures only; the filter still refuses anything past the reserve."""
    own, _ = round_noise(rho, rounds, gaussian_fraction)
    if wanted is None or wanted >= own:
        return own
    return min(own, max(wanted, gaussian_noise_multiplier(most_share * rho, measurements)))


def later_round_noise(rho: float, rounds: int, gaussian_fraction: float, measurements: int,
                      first: float) -> tuple[float, float]:
    """(noise multiplier, selection ε) of the rounds after ``measurements`` first measurements at
    multiplier ``first``: the rounds left, ``rounds`` − d, share what the first ones left of
    ``rho`` as they would have shared it at the rounds' own noise. At ``first`` =
    ``round_noise``'s multiplier the first ones spend d·α·ρ/R, leaving ρ(R − dα)/R, of which the
    R − d rounds take ρ(R − d)/R (ρ/R each, as planned; the rest is annealing's slack): the same
    fraction (R − d)/(R − dα) of whatever is left when the first ones spent more."""
    left = rho - gaussian_rho(first, measurements)
    later = rounds - measurements
    if later < 1 or left <= 0:
        raise ValueError(f"{measurements} first measurements at noise multiplier {first:.4g} "
                         f"leave no budget for AIM's {later} later rounds of ρ = {rho:.4g}: "
                         "expected a first-round share below 1 (settings.ONE_WAY_MOST)")
    share = later / (rounds - measurements * gaussian_fraction)
    return round_noise(left * share, later, gaussian_fraction)


def batch_noise(rho: float, rounds: int, gaussian_fraction: float, measurements: int,
                share: float) -> tuple[float, float, float]:
    """(noise multiplier of the ``measurements`` first measurements, multiplier and selection ε
    of each later round) when the first ones are one batch spending ``share`` of ``rho``
    (z = √(d / (2·share·ρ)), no selection) and ``rounds`` later rounds share the rest as
    ``round_noise`` shares a reserve. A wide table's 1-way round (``settings.one_way_batch``);
    a function of public figures only; the filter still refuses anything past the reserve."""
    if not 0 < share < 1:
        raise ValueError(f"the 1-way batch's share of AIM's ρ must be in (0, 1); found {share}")
    later, epsilon = round_noise((1 - share) * rho, rounds, gaussian_fraction)
    return gaussian_noise_multiplier(share * rho, measurements), later, epsilon


class RoundBudget:
    """Rounds of (selection, measurement) spent through ``budget`` (see the module docstring)."""

    def __init__(self, budget: ZCDPFilter, rounds: int, gaussian_fraction: float) -> None:
        self.filter = budget
        self.alpha = gaussian_fraction
        self.multiplier, self.epsilon = round_noise(budget.rho, rounds, gaussian_fraction)

    @property
    def round_rho(self) -> float:
        """zCDP of the next round at its current noise: 1/(2z²) + ε²/8."""
        return gaussian_rho(self.multiplier) + exponential_rho(self.epsilon)

    @property
    def exhausted(self) -> bool:
        """Whether the filter's reserve is spent (to EXHAUSTED of it)."""
        return self.filter.remaining <= self.filter.rho * EXHAUSTED

    def next_round(self) -> tuple[float, float]:
        """(noise multiplier, selection ε) of the next round: the current ones, or, when what
        remains would not cover two more rounds, one last round that spends all of it."""
        remaining = self.filter.remaining
        if remaining < 2 * self.round_rho:
            self.multiplier, self.epsilon = round_noise(remaining, 1, self.alpha)
        return self.multiplier, self.epsilon

    @property
    def spent_fraction(self) -> float:
        """The share of the filter's reserve spent so far (for a progress display)."""
        return self.filter.spent / self.filter.rho

    def spent_fraction_after_round(self, scale: float) -> float:
        """``scale`` × the fraction of the reserve spent once the next round has run (AIM grows
        its model's size limit with it)."""
        return scale * (self.filter.spent + self.round_rho) / self.filter.rho

    def spend_first(self, measurements: int, rounds: int, first: float) -> float:
        """The multiplier of the ``measurements`` first measurements (``first_round_noise``);
        when it is below the rounds' own, the later rounds are re-planned on what the first
        ones leave (``later_round_noise``). The caller records each measurement on the filter,
        which refuses anything past the reserve."""
        if first < self.multiplier:
            self.multiplier, self.epsilon = later_round_noise(
                self.filter.rho, rounds, self.alpha, measurements, first)
            return first
        return self.multiplier

    def spend_batch(self, measurements: int, rounds: int, share: float) -> float:
        """The multiplier of the ``measurements`` first measurements taken as one batch of
        ``share`` of the reserve (``batch_noise``); the later ``rounds`` rounds are re-planned on
        the rest. The caller records each measurement on the filter."""
        first, self.multiplier, self.epsilon = batch_noise(
            self.filter.rho, rounds, self.alpha, measurements, share)
        return first

    def anneal(self) -> None:
        """Halve the measurement's noise and double the selection's ε for later rounds (4× the
        round's ρ: the filter still refuses a round past the reserve)."""
        self.multiplier, self.epsilon = self.multiplier / 2, self.epsilon * 2
