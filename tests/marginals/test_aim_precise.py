"""AIM at a huge ε (issue 26): when the noise σ is below one record, the fits' early stop asks for
a precision of one record per cell (``estimate(resolution=...)``), not of σ — which ran every fit
to its iteration cap and AIM at ε = 1e6 past 300 s — and the run says so on the terminal. At
σ ≥ one record the stop is unchanged (the releases of ordinary ε stay byte-identical)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.marginals import estimation
from synthpriv.marginals.aim import RESOLUTION, AimSettings, Sensitivity, run_aim
from synthpriv.marginals.estimation import _Objective, estimate
from synthpriv.marginals.measurement import Measurement
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource

DOMAIN = Domain(("a", "b", "c", "d"), (4, 5, 3, 6))


def table(rows: int = 3000, seed: int = 3) -> Dataset:
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 4, rows)
    b = (a + rng.integers(0, 2, rows)) % 5
    c = (b + (rng.random(rows) < 0.3)) % 3
    d = (a * c + rng.integers(0, 2, rows)) % 6
    return Dataset(np.stack([a, b, c, d], axis=1), DOMAIN)


def exact_measurements(data: Dataset, sigma: float, seed: int = 0) -> list[Measurement]:
    rng = np.random.default_rng(seed)
    cliques = [(a,) for a in DOMAIN.attributes] + [("a", "b"), ("b", "c"), ("a", "c", "d")]
    counts = data.marginals(cliques)
    return [Measurement(c, counts[c] + rng.normal(0.0, sigma, counts[c].shape), sigma)
            for c in cliques]


def counted_fit(monkeypatch, measurements, resolution: float, iterations: int = 300):
    calls = {"n": 0}
    evaluate = estimation._Problem.evaluate

    def counting(self, *args, **kwargs):
        calls["n"] += 1
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(estimation._Problem, "evaluate", counting)
    model = estimate(DOMAIN, measurements, iterations=iterations, resolution=resolution)
    return model, calls["n"]


@pytest.mark.parametrize("sigma", [1.0, 3.0, 40.0])
def test_the_stop_scale_is_the_measured_cells_when_sigma_is_at_least_one_record(sigma) -> None:
    objective = _Objective.build(DOMAIN, exact_measurements(table(), sigma))
    assert objective.stall_cells(RESOLUTION) == float(objective.cells())
    assert objective.stall_cells(0.0) == float(objective.cells())


def test_the_stop_scale_counts_a_cell_below_one_record_as_w_records_squared() -> None:
    sigma = 0.01
    objective = _Objective.build(DOMAIN, exact_measurements(table(), sigma))
    # Written out here: every cell weighs 1/σ² (no repeated clique), so max(1, 1/σ²) each.
    assert objective.stall_cells(RESOLUTION) == pytest.approx(objective.cells() / sigma**2)


def test_at_tiny_sigma_the_fit_stops_early_and_is_within_a_record_per_cell(monkeypatch) -> None:
    data = table()
    measurements = exact_measurements(data, sigma=0.003)
    precise, precise_calls = counted_fit(monkeypatch, measurements, RESOLUTION)
    strict, strict_calls = counted_fit(monkeypatch, measurements, 0.0)
    assert precise_calls < 0.75 * strict_calls, (precise_calls, strict_calls)
    truth = data.marginals([m.clique for m in measurements])
    for m in measurements:  # a fit within a record per cell of the (near-exact) measurements
        error = precise.project(m.clique) - truth[m.clique]
        assert np.sqrt(np.mean(error**2)) < RESOLUTION, (m.clique, error)


def test_at_ordinary_sigma_the_fit_is_the_same_with_or_without_the_resolution(monkeypatch) -> None:
    measurements = exact_measurements(table(), sigma=5.0)
    one, one_calls = counted_fit(monkeypatch, measurements, RESOLUTION, iterations=60)
    two, two_calls = counted_fit(monkeypatch, measurements, 0.0, iterations=60)
    assert one_calls == two_calls
    for clique in [("a", "b"), ("a", "c", "d")]:
        np.testing.assert_array_equal(one.project(clique), two.project(clique))


def aim(rho: float, cells: int = 200) -> tuple[list[Measurement], estimation.GraphicalModel]:
    settings = AimSettings(workload_degree=3, rounds_per_attribute=4, max_model_cells=cells,
                           round_iterations=30, final_iterations=100)
    budget = Ledger().open_filter(rho, "AIM")
    return run_aim(table(), settings, Sensitivity(1.0, 1.0), RandomSource.seeded(5), budget)


def test_aim_at_a_huge_epsilon_announces_the_path_holds_the_cap_and_fits_the_data(capsys) -> None:
    measurements, model = aim(rho=1e9)
    said = capsys.readouterr().err
    assert "precise-noise path" in said and "below 1 record" in said
    assert model.tree.cells() <= 200
    data = table()
    for m in measurements[len(DOMAIN):]:  # each measured marginal within a record of the data
        truth = data.marginals([m.clique])[m.clique]
        assert np.abs(model.project(m.clique) - truth).max() < RESOLUTION


def test_aim_at_an_ordinary_budget_says_nothing(capsys) -> None:
    aim(rho=0.05)
    assert "precise-noise path" not in capsys.readouterr().err
