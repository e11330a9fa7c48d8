"""The noise a mechanism adds, measured from its outputs, against what the ledger records: the
std of (noisy − exact) over many cells must be z·Δ₂, with z the recorded event's multiplier and
Δ₂ the histogram's sensitivity found by brute force over neighbouring tables (privacy review,
issue 23, item 6: benchmarks/privacy_mutations.py plants the bugs these tests must catch)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from scipy import stats

from synthpriv.domain import Dataset, Domain
from synthpriv.marginals.measurement import measure_marginal
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PlanContext

RELATIONS = ("add_remove", "replace_one")


def brute_force_sensitivity(relation: str, cells: int = 4, rows: int = 3) -> tuple[float, float]:
    """(L1, L2) sensitivity of a histogram over ``cells`` values: the largest change of the
    counts between any table of up to ``rows`` rows and any of its neighbours."""
    l1 = l2 = 0.0
    for size in range(rows + 1):
        for table in itertools.product(range(cells), repeat=size):
            counts = np.bincount(table, minlength=cells)
            if relation == "add_remove":
                others = [table + (v,) for v in range(cells)]
                others += [table[:i] + table[i + 1:] for i in range(size)]
            else:
                others = [table[:i] + (v,) + table[i + 1:] for i in range(size)
                          for v in range(cells)]
            for other in others:
                change = np.bincount(other, minlength=cells) - counts
                l1, l2 = max(l1, np.abs(change).sum()), max(l2, float(np.sqrt((change**2).sum())))
    return l1, l2


def variance_interval(cells: int, level: float = 1e-4) -> tuple[float, float]:
    """The range of sample variance / true variance over ``cells`` i.i.d. normal draws outside
    which a correct σ is rejected with probability ``level`` (chi-square, two-sided)."""
    chi2 = stats.chi2(cells - 1)
    return chi2.ppf(level / 2) / (cells - 1), chi2.ppf(1 - level / 2) / (cells - 1)


def the_one_event(ledger, label: str, multiplier: float):
    """The ledger's one DiscreteGaussianEvent whose label starts with ``label``, asserted to be
    the only such event, at ``multiplier`` and for one histogram (count 1)."""
    from synthpriv.privacy.accountant import DiscreteGaussianEvent

    events = [e for e in ledger.events if e.label.startswith(label)]
    assert len(events) == 1 and isinstance(events[0], DiscreteGaussianEvent)
    assert events[0].noise_multiplier == pytest.approx(multiplier)
    assert events[0].count == 1
    return events[0]


def assert_noise_scale(errors: np.ndarray, sigma: float) -> None:
    """``errors`` (noisy − exact counts, pooled over draws) have the variance σ² (chi-square
    interval at ``variance_interval``'s level) and mean 0 (within 4 standard errors): the
    check every histogram mechanism's test makes against its planned σ."""
    errors = np.asarray(errors, dtype=float)
    low, high = variance_interval(errors.size)
    assert low <= float(np.var(errors, ddof=1)) / sigma**2 <= high
    assert abs(errors.mean()) <= 4 * sigma / np.sqrt(errors.size)


@pytest.mark.parametrize("relation", RELATIONS)
def test_measured_noise_std_is_the_recorded_multiplier_times_the_sensitivity(relation: str) -> None:
    cells = 4000
    rng = np.random.default_rng(5)
    domain = Domain.from_sizes({"x": cells})
    data = Dataset(rng.integers(0, cells, (20_000, 1)), domain)
    ledger = Ledger(relation)
    sigma = 3.0 * histogram_l2_sensitivity(relation)  # a multiplier of 3
    measurement = measure_marginal(data, ("x",), sigma, histogram_l2_sensitivity(relation),
                                   RandomSource.seeded(11), ledger)
    (event,) = ledger.events
    assert isinstance(event, DiscreteGaussianEvent) and event.count == 1
    noise = measurement.noisy_counts - data.marginal(("x",))
    recorded = event.noise_multiplier * brute_force_sensitivity(relation)[1]
    low, high = variance_interval(cells)
    ratio = float(np.var(noise, ddof=1)) / recorded**2
    assert low < ratio < high, (
        f"noise variance {np.var(noise, ddof=1):.3f} is {ratio:.3f}× (z·Δ₂)² = {recorded**2:.3f} "
        f"the ledger records; expected within [{low:.3f}, {high:.3f}]")
    assert abs(float(np.mean(noise))) < 5 * recorded / np.sqrt(cells)  # centred


@pytest.mark.parametrize("relation", RELATIONS)
def test_the_marginals_stage_sensitivities_are_the_brute_force_ones(relation: str) -> None:
    l1, l2 = brute_force_sensitivity(relation)
    domain = Domain.from_sizes({"a": 3, "b": 4})
    for selection in ("one_way", "mst", "aim"):
        stage = MarginalsStage({"selection": selection}, PlanContext(domain, relation, 1e-6),
                               "test")
        assert stage.sensitivity.l1 == pytest.approx(l1)
        assert stage.sensitivity.l2 == pytest.approx(l2)
