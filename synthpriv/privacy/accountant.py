"""The privacy ledger: every mechanism a job runs, composed into one (ε, δ).

The ledger knows nothing of data. Stages record the events they actually ran; the ledger
translates them into Google's ``dp-accounting`` and reports the tighter of two valid upper bounds:

* RDP (Rényi DP) accountant, which also takes zCDP events (the exponential mechanism as
  bounded-range ε -> ε²/8 zCDP, Cesar & Rogers 2021; the discrete Gaussian as 1/(2z²) zCDP,
  Canonne, Kamath & Steinke 2020, Thm 4);
* PLD (privacy loss distribution) accountant, exact up to a pessimistic discretisation, where every
  event has a PLD (the exponential mechanism enters as a pure ε-DP mechanism).

Each bound holds on its own, so their minimum is a valid bound. The neighbouring relation is fixed
per ledger and written into the manifest.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

import dp_accounting as dpa
from dp_accounting.pld import common as pld_common
from dp_accounting.pld import privacy_loss_distribution as pld_lib
from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib

NEIGHBOURING_RELATIONS = {
    "add_remove": dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
    "replace_one": dpa.NeighboringRelation.REPLACE_ONE,
}
PLD_DISCRETISATION = 1e-4


@dataclass(frozen=True)
class GaussianEvent:
    """``count`` releases with Gaussian noise of std = noise_multiplier × L2 sensitivity."""

    noise_multiplier: float
    count: int = 1
    label: str = ""
    kind: str = field(default="gaussian", init=False)


@dataclass(frozen=True)
class DiscreteGaussianEvent:
    """``count`` releases of integer queries with discrete Gaussian noise N_Z(0, (z·Δ)²)."""

    noise_multiplier: float
    count: int = 1
    label: str = ""
    kind: str = field(default="discrete_gaussian", init=False)


@dataclass(frozen=True)
class SubsampledGaussianEvent:
    """DP-SGD: ``steps`` Gaussian releases, each on a Poisson sample at rate ``sample_rate``."""

    sample_rate: float
    noise_multiplier: float
    steps: int
    label: str = ""
    kind: str = field(default="subsampled_gaussian", init=False)


@dataclass(frozen=True)
class ExponentialEvent:
    """``count`` exponential-mechanism selections, each ε-DP (and ε²/8-zCDP, bounded range)."""

    epsilon: float
    count: int = 1
    label: str = ""
    kind: str = field(default="exponential", init=False)


@dataclass(frozen=True)
class LaplaceEvent:
    """``count`` releases with Laplace noise of scale = L1 sensitivity / epsilon (ε-DP each)."""

    epsilon: float
    count: int = 1
    label: str = ""
    kind: str = field(default="laplace", init=False)


@dataclass(frozen=True)
class ZCDPEvent:
    """A mechanism known only to be ρ-zCDP: how a plan reserves budget for an adaptive stage
    (e.g. AIM) whose individual events are decided while it runs. Only the RDP accountant
    bounds it; the run's ledger then records the events actually run, whose zCDP sums to ≤ ρ."""

    rho: float
    count: int = 1
    label: str = ""
    kind: str = field(default="zcdp", init=False)


PrivacyEvent = (
    GaussianEvent
    | DiscreteGaussianEvent
    | SubsampledGaussianEvent
    | ExponentialEvent
    | LaplaceEvent
    | ZCDPEvent
)


def _check_event(event: PrivacyEvent) -> None:
    for name in ("noise_multiplier", "epsilon", "sample_rate", "rho"):
        value = getattr(event, name, None)
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{type(event).__name__}.{name} must be positive, got {value}")
    if getattr(event, "sample_rate", 0) > 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {event.sample_rate}")
    if getattr(event, "count", getattr(event, "steps", 1)) < 0:
        raise ValueError("event count/steps must be >= 0")


def _to_dp_event(event: PrivacyEvent) -> dpa.DpEvent:
    """The event as dp-accounting sees it for the RDP accountant."""
    if isinstance(event, GaussianEvent):
        return dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(event.noise_multiplier), event.count)
    if isinstance(event, DiscreteGaussianEvent):
        rho = 1.0 / (2.0 * event.noise_multiplier**2)
        return dpa.SelfComposedDpEvent(dpa.ZCDpEvent(rho), event.count)
    if isinstance(event, SubsampledGaussianEvent):
        sampled = dpa.PoissonSampledDpEvent(
            event.sample_rate, dpa.GaussianDpEvent(event.noise_multiplier)
        )
        return dpa.SelfComposedDpEvent(sampled, event.steps)
    if isinstance(event, ExponentialEvent):
        return dpa.SelfComposedDpEvent(dpa.ZCDpEvent(event.epsilon**2 / 8.0), event.count)
    if isinstance(event, LaplaceEvent):
        return dpa.SelfComposedDpEvent(dpa.LaplaceDpEvent(1.0 / event.epsilon), event.count)
    if isinstance(event, ZCDPEvent):
        return dpa.SelfComposedDpEvent(dpa.ZCDpEvent(event.rho), event.count)
    raise TypeError(f"unknown privacy event {event!r}")


def rdp_epsilon(events: Iterable[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """ε at ``delta`` of the composed events by the RDP accountant; inf where it has no bound
    (Poisson-subsampled Gaussian under replace-one: only the PLD accountant covers it)."""
    accountant = rdp_lib.RdpAccountant(neighboring_relation=NEIGHBOURING_RELATIONS[neighbouring])
    try:
        for event in events:
            accountant.compose(_to_dp_event(event))
    except dpa.UnsupportedEventError:
        return math.inf
    return float(accountant.get_epsilon(delta))


def _pld_of(event: PrivacyEvent, neighbouring: str) -> pld_lib.PrivacyLossDistribution | None:
    """The event's PLD, or None where dp-accounting has no exact one for it.

    Noise multipliers are relative to the query's sensitivity under the ledger's relation, so
    scalar mechanisms enter with sensitivity 1. The discrete Gaussian's PLD is exact only for a
    shift of one count (add/remove on a histogram); under replace-one it has none here and the
    RDP (zCDP) bound alone applies.
    """
    d = PLD_DISCRETISATION
    if isinstance(event, LaplaceEvent):
        pld = pld_lib.from_laplace_mechanism(1.0 / event.epsilon, value_discretization_interval=d)
        return pld.self_compose(event.count) if event.count > 1 else pld
    if isinstance(event, ExponentialEvent):
        params = pld_common.DifferentialPrivacyParameters(event.epsilon, 0.0)
        pld = pld_lib.from_privacy_parameters(params, value_discretization_interval=d)
        return pld.self_compose(event.count) if event.count > 1 else pld
    if isinstance(event, DiscreteGaussianEvent):
        if neighbouring != "add_remove":
            return None
        pld = pld_lib.from_discrete_gaussian_mechanism(
            event.noise_multiplier, value_discretization_interval=d
        )
        return pld.self_compose(event.count) if event.count > 1 else pld
    if isinstance(event, SubsampledGaussianEvent):
        pld = pld_lib.from_gaussian_mechanism(
            event.noise_multiplier, sampling_prob=event.sample_rate,
            neighboring_relation=NEIGHBOURING_RELATIONS[neighbouring],
            value_discretization_interval=d,
        )
        return pld.self_compose(event.steps) if event.steps > 1 else pld
    return None


def pld_epsilon(events: Iterable[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """ε at ``delta`` of the composed events by the PLD accountant.

    Continuous Gaussian releases compose exactly into one Gaussian with
    1/z² = Σ count/z_i² (Gaussian differential privacy, Dong, Roth & Su 2019), which keeps this fast.
    Identical events are self-composed once. Returns inf when some event has no PLD here.
    """
    events = list(events)
    precision = sum(e.count / e.noise_multiplier**2 for e in events if isinstance(e, GaussianEvent))
    total: pld_lib.PrivacyLossDistribution | None = None
    if precision > 0:
        total = pld_lib.from_gaussian_mechanism(
            1.0 / math.sqrt(precision), value_discretization_interval=PLD_DISCRETISATION,
            neighboring_relation=NEIGHBOURING_RELATIONS[neighbouring],
        )
    grouped = Counter(_unlabelled(e) for e in events if not isinstance(e, GaussianEvent))
    for event, repeats in grouped.items():
        pld = _pld_of(event, neighbouring)
        if pld is None:
            return math.inf
        pld = pld.self_compose(repeats) if repeats > 1 else pld
        total = pld if total is None else total.compose(pld)
    if total is None:
        return 0.0
    return float(total.get_epsilon_for_delta(delta))


def _unlabelled(event: PrivacyEvent) -> PrivacyEvent:
    fields = {k: v for k, v in asdict(event).items() if k not in ("label", "kind")}
    return type(event)(**fields)


class Ledger:
    """One accountant per job: an append-only history of events and a pure ``epsilon(delta)``."""

    def __init__(self, neighbouring: str = "add_remove") -> None:
        if neighbouring not in NEIGHBOURING_RELATIONS:
            raise ValueError(
                f"neighbouring relation must be one of {sorted(NEIGHBOURING_RELATIONS)}, "
                f"got {neighbouring!r}"
            )
        self.neighbouring = neighbouring
        self._events: list[PrivacyEvent] = []

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        return tuple(self._events)

    def record(self, event: PrivacyEvent) -> None:
        """Append one event the caller actually ran."""
        _check_event(event)
        self._events.append(event)

    def extend(self, events: Iterable[PrivacyEvent]) -> None:
        for event in events:
            self.record(event)

    def epsilon_bounds(self, delta: float) -> dict[str, float]:
        """ε at ``delta`` by each accountant; both are valid upper bounds."""
        return {
            "rdp": rdp_epsilon(self._events, delta, self.neighbouring),
            "pld": pld_epsilon(self._events, delta, self.neighbouring),
        }

    def epsilon(self, delta: float) -> float:
        """The reported ε at ``delta``: the tighter of the RDP and PLD bounds."""
        if not self._events:
            return 0.0
        reported = min(self.epsilon_bounds(delta).values())
        if not math.isfinite(reported):
            raise ValueError("no accountant can bound these events under this relation")
        return reported

    def to_dict(self, delta: float) -> dict:
        """What the manifest records: relation, events, both bounds and the reported ε."""
        bounds = self.epsilon_bounds(delta) if self._events else {"rdp": 0.0, "pld": 0.0}
        return {
            "neighbouring": self.neighbouring,
            "delta": delta,
            "epsilon": min(bounds.values()),
            "epsilon_rdp": bounds["rdp"],
            "epsilon_pld": bounds["pld"],
            "events": [asdict(e) for e in self._events],
        }
