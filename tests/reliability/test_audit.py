"""Empirical privacy audit of the marginal measurement, and its mutation test.

Run the measurement many times on neighbouring tables D and D' (D plus one row), keep the noisy
count of the cell the extra row falls in, and let a threshold test guess which table was used.
``empirical_epsilon`` (Clopper–Pearson, threshold chosen on one half of the runs and evaluated on
the other) turns its error rates into an ε that holds with probability ≥ 90 %: a DP mechanism
keeps it below the ε the ledger claims. Halving the noise behind the ledger's back (the ledger
still records the full σ) must make the same audit fail: the audit can fail.

The runs are vectorised: ``measure_marginal`` adds ``discrete_gaussian_histogram`` noise to the
marginal (checked draw for draw below), so the audit draws all runs' noise in one call of that
mechanism. Noise multiplier 1 makes the claimed ε (4.4 at δ = 1e-5) certifiable with 10^5 runs.
"""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.evaluation.attack_metrics import empirical_epsilon
from synthpriv.marginals.measurement import measure_marginal
from synthpriv.privacy import mechanisms
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram, histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource

DELTA = 1e-5
ALPHA = 0.05
CLIQUE = ("a", "b")
DOMAIN = Domain(("a", "b"), (2, 3))
D = Dataset(np.array([[0, 0], [1, 2], [1, 1], [0, 2]]), DOMAIN)
EXTRA_ROW = np.array([[1, 2]])  # D' = D + this row: cell (1, 2) of the marginal changes by one
D_PRIME = Dataset(np.vstack([D.codes, EXTRA_ROW]), DOMAIN)
CELL = (1, 2)
SIGMA = 1.0 * histogram_l2_sensitivity("add_remove")  # noise multiplier 1


def claimed_epsilon(sigma: float, source: RandomSource) -> float:
    """What the ledger says one measurement of the marginal costs."""
    ledger = Ledger("add_remove")
    measure_marginal(D, CLIQUE, sigma, histogram_l2_sensitivity("add_remove"), source, ledger)
    return ledger.epsilon(DELTA)


def noisy_cell(data: Dataset, runs: int, sigma: float, source: RandomSource) -> np.ndarray:
    """The noisy count of CELL in ``runs`` independent measurements of the marginal on ``data``."""
    counts = np.broadcast_to(data.marginal(CLIQUE), (runs, *DOMAIN.shape))
    return discrete_gaussian_histogram(counts, sigma, source)[(slice(None), *CELL)]


def audit(runs: int, seed: int) -> tuple[float, dict]:
    source = RandomSource.seeded(seed)
    claimed = claimed_epsilon(SIGMA, source)
    with_row = noisy_cell(D_PRIME, runs, SIGMA, source)
    without_row = noisy_cell(D, runs, SIGMA, source)
    result = empirical_epsilon(with_row, without_row, DELTA, ALPHA, np.random.default_rng(seed))
    return claimed, result


def test_measure_marginal_is_the_audited_mechanism() -> None:
    """Same seed, same draws: the measurement adds exactly this mechanism's noise."""
    ledger = Ledger()
    measured = measure_marginal(D, CLIQUE, SIGMA, 1.0, RandomSource.seeded(5), ledger)
    direct = discrete_gaussian_histogram(D.marginal(CLIQUE), SIGMA, RandomSource.seeded(5))
    assert np.array_equal(measured.noisy_counts, direct)


def test_empirical_epsilon_of_the_marginal_measurement_stays_below_the_ledger() -> None:
    claimed, result = audit(runs=100_000, seed=1)
    assert result["max_certifiable"] > claimed  # the audit has the power to catch a violation
    assert 0 < result["eps_lower_bound"] < claimed


@pytest.fixture
def half_noise(monkeypatch):
    """The mutation: every discrete Gaussian draw uses σ/2, while callers (and so the ledger)
    still pass σ."""
    honest = mechanisms.sample_discrete_gaussian

    def halved(sigma, size, source):
        return honest(sigma / 2, size, source)

    monkeypatch.setattr(mechanisms, "sample_discrete_gaussian", halved)


def test_halving_the_noise_behind_the_ledgers_back_fails_the_audit(half_noise) -> None:
    claimed, result = audit(runs=100_000, seed=1)
    assert claimed == pytest.approx(claimed_epsilon(SIGMA, RandomSource.seeded(0)))
    assert result["eps_lower_bound"] > claimed


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(3))
def test_audit_through_measure_marginal_call_by_call(seed: int) -> None:
    """The unvectorised audit: every run is one call of ``measure_marginal``."""
    source = RandomSource.seeded(100 + seed)
    ledger = Ledger()
    runs = 20_000

    def cell(data: Dataset) -> np.ndarray:
        return np.array([
            measure_marginal(data, CLIQUE, SIGMA, 1.0, source, ledger).noisy_counts[CELL]
            for _ in range(runs)
        ])

    with_row, without_row = cell(D_PRIME), cell(D)
    claimed = claimed_epsilon(SIGMA, source)
    result = empirical_epsilon(with_row, without_row, DELTA, ALPHA, np.random.default_rng(seed))
    assert 0 < result["eps_lower_bound"] < claimed
