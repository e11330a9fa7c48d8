"""The privacy ledger: every mechanism a job runs, composed into one (ε, δ).

The ledger knows nothing of data. Stages record the events they actually ran; the ledger
translates them into Google's ``dp-accounting`` and reports the tighter of two valid upper bounds:

* RDP (Rényi DP) accountant, which also takes zCDP events (the exponential mechanism as
  bounded-range ε -> ε²/8 zCDP, Cesar & Rogers 2021; the discrete Gaussian as 1/(2z²) zCDP,
  Canonne, Kamath & Steinke 2020, Thm 4). Events that all have a zCDP bound (an AIM job's) are
  priced in closed form at dp-accounting's orders (``zcdp_bound``: the same figure, without
  importing dp-accounting);
* PLD (privacy loss distribution) accountant, exact up to a pessimistic discretisation, where every
  event has a PLD (the exponential mechanism enters as a pure ε-DP mechanism).

Each bound holds on its own, so their minimum is a valid bound. The neighbouring relation is fixed
per ledger and written into the manifest.

Adaptivity. PLD composition is used only for events whose parameters were fixed before any data
was read (the *query* may be chosen adaptively, as MST's pairs are, but not the noise). A stage
that chooses its noise, its rounds or its stopping point from earlier noisy outputs (AIM) spends
through a ``ZCDPFilter`` opened on the ledger with a reserved ρ: the realised events are listed,
but the ledger accounts the reserved ρ, which holds under full adaptivity because the filter
never lets the realised ρ exceed it (Rényi/zCDP privacy filters: Feldman & Zrnic 2021, Thm 3.1,
at every order at once). A ledger holding a filter therefore reports its RDP bound only.
"""

from __future__ import annotations

import functools
import math
from collections import Counter
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field, replace
from typing import TYPE_CHECKING, Any

from synthpriv.privacy.conversions import (
    composed_gaussian_multiplier,
    exponential_rho,
    gaussian_rho,
)
from synthpriv.privacy.zcdp_bound import zcdp_epsilon

if TYPE_CHECKING:  # dp-accounting is imported where it is used: its package import loads the
    # PLD accountant and scipy.signal (~0.5 s), which a plan of zCDP events never needs (issue 26)
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

NEIGHBOURING = ("add_remove", "replace_one")  # the relations a ledger may be opened under
PLD_DISCRETISATION = 1e-4
# Above this RDP ε the PLD bound is not computed and RDP alone is reported (a valid bound; at such
# ε tightness buys nothing). The PLD's grid spans the privacy losses at PLD_DISCRETISATION: MST's
# events at ε = 100 took 19 s, at ε = 1000 71 s, and at ε = 1e4 did not finish (issue 25).
PLD_MAX_EPSILON = 50.0


def _relation(neighbouring: str) -> Any:
    """dp-accounting's NeighboringRelation for ``neighbouring`` (imported on first use)."""
    import dp_accounting as dpa

    return {"add_remove": dpa.NeighboringRelation.ADD_OR_REMOVE_ONE,
            "replace_one": dpa.NeighboringRelation.REPLACE_ONE}[neighbouring]


def __getattr__(name: str) -> Any:
    """``NEIGHBOURING_RELATIONS`` (name -> dp-accounting relation), built only when asked."""
    if name == "NEIGHBOURING_RELATIONS":
        return {n: _relation(n) for n in NEIGHBOURING}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(frozen=True)
class GaussianEvent:
    """``count`` releases with Gaussian noise of std = noise_multiplier × the query's L2
    sensitivity under the ledger's relation. A Gaussian's privacy loss depends only on the shift
    over σ, so both accountants treat it as a unit shift under either relation."""

    noise_multiplier: float
    count: int = 1
    label: str = ""
    kind: str = field(default="gaussian", init=False)


@dataclass(frozen=True)
class DiscreteGaussianEvent:
    """``count`` releases of histograms with discrete Gaussian noise N_Z(0, (z·Δ₂)²) per cell, Δ₂
    the histogram's L2 sensitivity under the ledger's relation (1 under add/remove: one cell moves
    by one; √2 under replace-one: two cells move by one each)."""

    noise_multiplier: float
    count: int = 1
    label: str = ""
    kind: str = field(default="discrete_gaussian", init=False)


@dataclass(frozen=True)
class SubsampledGaussianEvent:
    """DP-SGD: ``steps`` Gaussian releases, each on a Poisson sample at rate ``sample_rate``; the
    noise std is noise_multiplier × C, each example's clipped gradient has norm ≤ C."""

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
class ZCDPEvent:
    """A mechanism known only to be ρ-zCDP: how a plan reserves budget for an adaptive stage
    (e.g. AIM) whose individual events are decided while it runs. Only the RDP accountant
    bounds it; the run's ledger then records the events actually run, whose zCDP sums to ≤ ρ."""

    rho: float
    count: int = 1
    label: str = ""
    kind: str = field(default="zcdp", init=False)


@dataclass(frozen=True)
class ThresholdEvent:
    """A release's pure δ: the probability that a thresholded release (DP partition selection)
    reveals a value only one of two neighbouring tables holds. It adds to the δ of everything
    else (a total-variation coupling; see synthpriv.privacy.partition), so the accountants give
    ε at the job's δ minus the sum of these (``split_threshold``)."""

    delta: float
    label: str = ""
    kind: str = field(default="threshold", init=False)


PrivacyEvent = (
    GaussianEvent
    | DiscreteGaussianEvent
    | SubsampledGaussianEvent
    | ExponentialEvent
    | ZCDPEvent
    | ThresholdEvent
)


def split_threshold(
    events: Iterable[PrivacyEvent], delta: float
) -> tuple[list[PrivacyEvent], float]:
    """The events the accountants compose, and the δ left to them: ``delta`` minus every
    ThresholdEvent's δ (≤ 0 when those alone spend it: then no ε bounds the job)."""
    kept, spent = [], 0.0
    for event in events:
        if isinstance(event, ThresholdEvent):
            spent += event.delta
        else:
            kept.append(event)
    return kept, delta - spent


def _check_event(event: PrivacyEvent) -> None:
    for name in ("noise_multiplier", "epsilon", "sample_rate", "rho"):
        value = getattr(event, name, None)
        if value is not None and not (value > 0 and math.isfinite(value)):
            raise ValueError(f"{type(event).__name__}.{name} must be positive, got {value}")
    if getattr(event, "sample_rate", 0) > 1:
        raise ValueError(f"sample_rate must be in (0, 1], got {event.sample_rate}")
    if isinstance(event, ThresholdEvent) and not 0 < event.delta < 1:
        raise ValueError(f"ThresholdEvent.delta must be in (0, 1), got {event.delta}")
    if getattr(event, "count", getattr(event, "steps", 1)) < 0:
        raise ValueError("event count/steps must be >= 0")


def _to_dp_event(event: PrivacyEvent) -> Any:
    """The event as dp-accounting sees it for the RDP accountant."""
    import dp_accounting as dpa

    if isinstance(event, GaussianEvent):
        return dpa.SelfComposedDpEvent(dpa.GaussianDpEvent(event.noise_multiplier), event.count)
    if isinstance(event, DiscreteGaussianEvent):
        rho = gaussian_rho(event.noise_multiplier)
        return dpa.SelfComposedDpEvent(dpa.ZCDpEvent(rho), event.count)
    if isinstance(event, SubsampledGaussianEvent):
        sampled = dpa.PoissonSampledDpEvent(
            event.sample_rate, dpa.GaussianDpEvent(event.noise_multiplier)
        )
        return dpa.SelfComposedDpEvent(sampled, event.steps)
    if isinstance(event, ExponentialEvent):
        return dpa.SelfComposedDpEvent(dpa.ZCDpEvent(exponential_rho(event.epsilon)), event.count)
    if isinstance(event, ZCDPEvent):
        return dpa.SelfComposedDpEvent(dpa.ZCDpEvent(event.rho), event.count)
    raise TypeError(f"unknown privacy event {event!r}")


def rdp_epsilon(events: Iterable[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """ε at ``delta`` of the composed events by the RDP accountant; inf where it has no bound
    (Poisson-subsampled Gaussian under replace-one: only the PLD accountant covers it), or when
    ThresholdEvents spend all of ``delta``. Events that are all ρ-zCDP (Gaussian, discrete
    Gaussian, exponential, zCDP reservations: an AIM ledger) compose to Σρ-zCDP, whose RDP curve
    is α·Σρ: priced by ``zcdp_bound.zcdp_epsilon``, the same conversion at dp-accounting's
    orders (equal to 1e-9, tests/privacy/test_zcdp_bound.py), without importing dp-accounting
    (0.6 s of a run, issue 26)."""
    events, delta = split_threshold(events, delta)
    if delta <= 0:
        return math.inf
    if all(isinstance(e, ZCDP_EVENTS) for e in events):
        for event in events:
            _check_event(event)
        return zcdp_epsilon(sum(zcdp_rho(e) for e in events), delta)
    import dp_accounting as dpa
    from dp_accounting.rdp import rdp_privacy_accountant as rdp_lib

    accountant = rdp_lib.RdpAccountant(neighboring_relation=_relation(neighbouring))
    try:
        for event in events:
            accountant.compose(_to_dp_event(event))
    except dpa.UnsupportedEventError:
        return math.inf
    return float(accountant.get_epsilon(delta))


def _pld_of(event: PrivacyEvent, neighbouring: str) -> pld_lib.PrivacyLossDistribution:
    """The PLD of one of the ``PLD_EVENTS`` under the ledger's relation (``pld_epsilon`` checks
    that every event is one before building any).

    * Discrete Gaussian histogram: add/remove moves one cell by one: the exact PLD of a unit
      shift at σ = z. Replace-one moves two cells by one each (+1 and −1) with σ = z·√2 per cell:
      the losses of the two cells are independent, so the PLD is the unit-shift PLD at z·√2
      composed twice (its zCDP, 2/(2·2z²) = 1/(2z²), is the RDP side's).
    * Poisson-subsampled Gaussian (DP-SGD): dp-accounting's ADD/REMOVE pair under add/remove and
      its REPLACE pair under replace-one — q·N(+C) + (1−q)·N(0) against q·N(−C) + (1−q)·N(0),
      the same coin deciding whether the replaced example is sampled (``privacy_loss_mechanism.
      AdditiveNoisePrivacyLoss``) — with each clipped gradient of norm ≤ C (sensitivity 1 in units
      of C).
    * Exponential mechanism: a pure ε-DP mechanism (its ε is for the relation's score
      sensitivity already).
    """
    from dp_accounting.pld import common as pld_common
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    d = PLD_DISCRETISATION
    if isinstance(event, ExponentialEvent):
        params = pld_common.DifferentialPrivacyParameters(event.epsilon, 0.0)
        pld = pld_lib.from_privacy_parameters(params, value_discretization_interval=d)
        return pld.self_compose(event.count) if event.count > 1 else pld
    if isinstance(event, DiscreteGaussianEvent):
        if neighbouring == "add_remove":
            pld = pld_lib.from_discrete_gaussian_mechanism(
                event.noise_multiplier, value_discretization_interval=d
            )
            count = event.count
        else:
            pld = pld_lib.from_discrete_gaussian_mechanism(
                event.noise_multiplier * math.sqrt(2.0), value_discretization_interval=d
            )
            count = 2 * event.count
        return pld.self_compose(count) if count > 1 else pld
    if isinstance(event, SubsampledGaussianEvent):
        pld = pld_lib.from_gaussian_mechanism(
            event.noise_multiplier, sampling_prob=event.sample_rate,
            neighboring_relation=_relation(neighbouring), value_discretization_interval=d,
        )
        return pld.self_compose(event.steps) if event.steps > 1 else pld
    raise TypeError(f"{type(event).__name__} has no PLD (only PLD_EVENTS do)")


PLD_EVENTS = (ExponentialEvent, DiscreteGaussianEvent, SubsampledGaussianEvent)  # ``_pld_of`` prices


def pld_epsilon(events: Iterable[PrivacyEvent], delta: float, neighbouring: str) -> float:
    """ε at ``delta`` of the composed events by the PLD accountant.

    Continuous Gaussian releases compose exactly into one Gaussian with
    1/z² = Σ count/z_i² (Gaussian differential privacy, Dong, Roth & Su 2019), which keeps this fast.
    Identical events are self-composed once. Returns inf when some event has no PLD here, or
    when ThresholdEvents spend all of ``delta``.
    """
    from dp_accounting.pld import privacy_loss_distribution as pld_lib

    events, delta = split_threshold(events, delta)
    if delta <= 0:
        return math.inf
    gaussian = composed_gaussian_multiplier(
        [(e.noise_multiplier, e.count) for e in events if isinstance(e, GaussianEvent)])
    total: pld_lib.PrivacyLossDistribution | None = None
    if gaussian is not None:
        # A unit shift under either relation (the multiplier is relative to the relation's
        # sensitivity); dp-accounting's REPLACE_ONE would double the shift a second time.
        total = pld_lib.from_gaussian_mechanism(
            gaussian, value_discretization_interval=PLD_DISCRETISATION,
        )
    grouped = Counter(_unlabelled(e) for e in events if not isinstance(e, GaussianEvent))
    if not all(isinstance(e, PLD_EVENTS) for e in grouped):
        return math.inf  # e.g. an adaptive stage's zCDP reservation: decided before any PLD is built
    for event, repeats in grouped.items():
        pld = _pld_of(event, neighbouring)
        pld = pld.self_compose(repeats) if repeats > 1 else pld
        total = pld if total is None else total.compose(pld)
    if total is None:
        return 0.0
    return float(total.get_epsilon_for_delta(delta))


@functools.lru_cache(maxsize=256)
def _composed_bounds(
    events: tuple[PrivacyEvent, ...], delta: float, neighbouring: str, pld_valid: bool
) -> tuple[float, float | None]:
    """(RDP ε, PLD ε or None) of ``events`` at ``delta``: pure functions of the (unlabelled,
    hashable) events, so memoised. Ledgers that ran the same mechanisms on other queries (the
    shadow runs of an attack, the runs of an audit, a sweep's repeats: MST measures other pairs
    with the same noise) cost one accounting, not one each (0.1 s per MST run's ledger). PLD is
    left out (None) above an RDP ε of PLD_MAX_EPSILON (never where RDP has no bound)."""
    rdp = rdp_epsilon(events, delta, neighbouring)
    if pld_valid and math.isfinite(rdp) and rdp > PLD_MAX_EPSILON:
        pld_valid = False
    return rdp, pld_epsilon(events, delta, neighbouring) if pld_valid else None


def _unlabelled(event: PrivacyEvent) -> PrivacyEvent:
    fields = {k: v for k, v in asdict(event).items() if k not in ("label", "kind")}
    return type(event)(**fields)


# the events with a zCDP bound (``zcdp_rho``): their RDP curve is linear in the order
ZCDP_EVENTS = (GaussianEvent, DiscreteGaussianEvent, ExponentialEvent, ZCDPEvent)


def zcdp_rho(event: PrivacyEvent) -> float:
    """The event's zCDP ρ: 1/(2z²) per discrete or continuous Gaussian release (Bun & Steinke
    2016; Canonne, Kamath & Steinke 2020, Thm 4), ε²/8 per exponential-mechanism selection
    (bounded range, Cesar & Rogers 2021). DP-SGD has no useful zCDP bound: it cannot be spent
    through a filter."""
    if isinstance(event, GaussianEvent | DiscreteGaussianEvent):
        return gaussian_rho(event.noise_multiplier, event.count)
    if isinstance(event, ExponentialEvent):
        return exponential_rho(event.epsilon, event.count)
    if isinstance(event, ZCDPEvent):
        return event.count * event.rho
    raise TypeError(f"{type(event).__name__} has no zCDP bound to spend through a filter")


UNRUN_LABEL = "planned, not run"


def _multiplicity(event: PrivacyEvent) -> int:
    return int(getattr(event, "count", getattr(event, "steps", 1)))


def _one(event: PrivacyEvent) -> PrivacyEvent:
    """The event without its label and with multiplicity 1 (the key ``unrun_events`` counts by)."""
    unlabelled = _unlabelled(event)
    return replace(unlabelled, **{k: 1 for k in ("count", "steps") if hasattr(unlabelled, k)})


def unrun_events(planned: Iterable[PrivacyEvent], ran: Iterable[PrivacyEvent],
                 why: str = "") -> list[PrivacyEvent]:
    """The ``planned`` events a stage did not run (same parameters, fewer times), to be recorded
    as ``UNRUN_LABEL`` so that its ledger holds what the plan holds, whatever it ran.

    Why: a stage's noise is fixed by the plan before any data is read, but what it measures may
    follow a DP output (the domain step's kinds: a column decided text or id is not modelled, so
    MST/AIM measure one marginal fewer). Its guarantee is the worst case over those outputs,
    i.e. the plan; a ledger of only what ran would report an ε that depends on the kinds decided
    (0.918 against the plan's 0.9996 on a job with a text column), smaller than what is proven.
    Events ran beyond the plan are not offset here (the run's budget check refuses them)."""
    left: Counter = Counter()
    for event in planned:
        left[_one(event)] += _multiplicity(event)
    for event in ran:
        left[_one(event)] -= _multiplicity(event)
    label = UNRUN_LABEL + (f" ({why})" if why else "")
    padding: list[PrivacyEvent] = []
    for event, times in left.items():
        if times <= 0:
            continue
        fields = {k: v for k, v in asdict(event).items() if k != "kind"} | {"label": label}
        counted = [k for k in ("count", "steps") if k in fields]
        if counted:
            padding.append(type(event)(**fields | {counted[0]: times}))
        else:  # a ThresholdEvent: one per threshold not run
            padding += [type(event)(**fields)] * times
    return padding


class ZCDPFilter:
    """A zCDP privacy filter: the budget an adaptive algorithm (AIM) spends through.

    The ledger accounts the reserved ρ whatever the algorithm does; ``record`` logs each event
    it actually runs (``record``) and refuses one that would take the realised ρ past the reserve, which is
    the filter's stopping rule (Feldman & Zrnic 2021). ``remaining`` is what it may still spend.
    """

    TOLERANCE = 1e-9  # relative slack for floating-point sums of the realised ρ

    def __init__(self, rho: float, label: str) -> None:
        if not (rho > 0 and math.isfinite(rho)):
            raise ValueError(f"a filter's reserved rho must be positive, got {rho}")
        self.rho = rho
        self.label = label
        self._events: list[PrivacyEvent] = []
        self._spent = 0.0

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        return tuple(self._events)

    @property
    def spent(self) -> float:
        return self._spent

    @property
    def remaining(self) -> float:
        return max(0.0, self.rho - self._spent)

    def record(self, event: PrivacyEvent) -> None:
        """Record one event the algorithm ran, if the reserve covers its ρ (the filter's
        stopping rule); the same call as ``Ledger.record``, so a mechanism records into either."""
        _check_event(event)
        cost = zcdp_rho(event)
        if self._spent + cost > self.rho * (1 + self.TOLERANCE):
            raise ValueError(
                f"{self.label}: an event of ρ = {cost:.6g} would take the realised ρ to "
                f"{self._spent + cost:.6g}, past the reserved ρ = {self.rho:.6g}"
            )
        self._spent += cost
        self._events.append(event)

    def to_dict(self) -> dict:
        return {
            "label": self.label,
            "reserved_rho": self.rho,
            "spent_rho": self._spent,
            "accounted_as": "zCDP filter on the reserved rho (adaptive: RDP bound only)",
            "events": [asdict(e) for e in self._events],
        }


class Ledger:
    """One accountant per job: an append-only history of events and a pure ``epsilon(delta)``.

    Events recorded directly had their parameters fixed before the data was read; events of an
    adaptive stage go through a filter (``open_filter``), which the ledger accounts at its
    reserved ρ (see the module docstring)."""

    def __init__(self, neighbouring: str = "add_remove") -> None:
        if neighbouring not in NEIGHBOURING:
            raise ValueError(
                f"neighbouring relation must be one of {sorted(NEIGHBOURING)}, "
                f"got {neighbouring!r}"
            )
        self.neighbouring = neighbouring
        self._entries: list[PrivacyEvent | ZCDPFilter] = []

    @property
    def events(self) -> tuple[PrivacyEvent, ...]:
        """Every event run, in order, those spent through filters included."""
        flat: list[PrivacyEvent] = []
        for entry in self._entries:
            flat += entry.events if isinstance(entry, ZCDPFilter) else [entry]
        return tuple(flat)

    @property
    def filters(self) -> tuple[ZCDPFilter, ...]:
        return tuple(e for e in self._entries if isinstance(e, ZCDPFilter))

    @property
    def accounted_events(self) -> tuple[PrivacyEvent, ...]:
        """What the bounds compose: fixed events as run, each filter as its reserved ρ."""
        return tuple(
            ZCDPEvent(e.rho, label=e.label) if isinstance(e, ZCDPFilter) else e
            for e in self._entries
        )

    def record(self, event: PrivacyEvent) -> None:
        """Append one event the caller actually ran, its parameters fixed before any data was
        read (an adaptively parametrised event goes through ``open_filter``)."""
        _check_event(event)
        self._entries.append(event)

    def accounted_since(self, start: int) -> tuple[PrivacyEvent, ...]:
        """What the bounds compose of the entries recorded after the first ``start`` (a stage's
        own, when ``start`` is ``len(ledger.accounted_events)`` before it ran)."""
        return self.accounted_events[start:]

    def extend(self, events: Iterable[PrivacyEvent]) -> None:
        for event in events:
            self.record(event)

    def open_filter(self, rho: float, label: str) -> ZCDPFilter:
        """Reserve zCDP ρ for an adaptive stage; it spends through the filter returned."""
        budget = ZCDPFilter(rho, label)
        self._entries.append(budget)
        return budget

    def epsilon_bounds(self, delta: float) -> dict[str, float | None]:
        """ε at ``delta`` by each accountant that is valid here: RDP always; PLD only when no
        filter is open (None otherwise: PLD over adaptively chosen noise is not a proven bound)
        and RDP is at most PLD_MAX_EPSILON (None above: not computed).
        """
        events = tuple(_unlabelled(e) for e in self.accounted_events)
        rdp, pld = _composed_bounds(events, delta, self.neighbouring, pld_valid=not self.filters)
        return {"rdp": rdp, "pld": pld}

    def epsilon(self, delta: float) -> float:
        """The reported ε at ``delta``: the tighter of the valid bounds."""
        if not self._entries:
            return 0.0
        reported = min(v for v in self.epsilon_bounds(delta).values() if v is not None)
        if not math.isfinite(reported):
            raise UnboundedError(
                f"no accountant here bounds these events under {self.neighbouring}: "
                + _unbounded_reason(self.events, self.neighbouring)
            )
        return reported

    def to_dict(self, delta: float) -> dict:
        """What the manifest records: relation, events, both bounds, the bound reported and why."""
        if not self._entries:
            bounds: dict[str, float | None] = {"rdp": 0.0, "pld": 0.0}
        else:
            bounds = self.epsilon_bounds(delta)
        valid = {k: v for k, v in bounds.items() if v is not None}
        bound = min(valid, key=valid.get)
        _, rest = split_threshold(self.events, delta)
        return {
            "neighbouring": self.neighbouring,
            "delta": delta,
            "delta_thresholds": delta - rest,  # the part of δ spent by partition selection
            "epsilon": valid[bound],
            "bound": bound,
            "epsilon_rdp": bounds["rdp"],
            "epsilon_pld": bounds["pld"],
            "bounds_note": (
                "an adaptive stage spent through a zCDP filter: only the RDP bound on its "
                "reserved rho is proven, so PLD is not used" if self.filters else
                f"RDP is above {PLD_MAX_EPSILON:g}: PLD is not computed there, RDP is reported"
                if bounds["pld"] is None else
                "every event's parameters were fixed before the data was read: the tighter of "
                "RDP and PLD is reported"
            ),
            "events": [asdict(e) for e in self._entries if not isinstance(e, ZCDPFilter)],
            "adaptive": [f.to_dict() for f in self.filters],
        }


class UnboundedError(ValueError):
    """The ledger's accountants have no finite bound for its events under its relation."""


def _unbounded_reason(events: Iterable[PrivacyEvent], neighbouring: str) -> str:
    if neighbouring == "replace_one" and any(
        isinstance(e, SubsampledGaussianEvent) for e in events
    ):
        return ("DP-SGD (Poisson-subsampled Gaussian) under replace-one has a PLD bound only, and "
                "an adaptive stage (a zCDP filter) beside it allows the RDP bound only")
    return "some event has no bound under this relation"
