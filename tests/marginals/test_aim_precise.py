"""AIM at a huge ε (issue 26): when the noise σ is below one record, the fits' early stop asks for
a precision of one record per cell (``estimate(resolution=...)``), not of σ — which ran every fit
to its iteration cap and AIM at ε = 1e6 past 300 s — and the run says so on the terminal. At
σ ≥ one record the stop is unchanged (the releases of ordinary ε stay byte-identical)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.marginals import aim as aim_module
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


def aim(
    rho: float, cells: int = 200, iterations: int = 30
) -> tuple[list[Measurement], estimation.GraphicalModel]:
    settings = AimSettings(workload_degree=3, rounds_per_attribute=4, max_model_cells=cells,
                           round_iterations=iterations, final_iterations=10 * iterations)
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


def wide_table(rows: int = 5000, d: int = 7, seed: int = 3) -> Dataset:
    """Chained columns: no small junction tree holds them exactly, so AIM's fits are approximate."""
    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, 5, rows)]
    for i in range(1, d):
        columns.append((columns[-1] + columns[max(0, i - 2)] * (i % 3) + rng.integers(0, 3, rows)) % 6)
    return Dataset(np.stack(columns, axis=1),
                   Domain(tuple(f"x{i}" for i in range(d)), (5,) + (6,) * (d - 1)))


def test_aims_fits_at_a_huge_epsilon_take_fewer_evaluations_than_the_sigma_stop(monkeypatch) -> None:
    """The path as run_aim takes it: with the one-record stop its round and final fits (those
    warm-started) end sooner than with the stop in σ² units (``RESOLUTION`` 0), and no more
    rounds run (on Adult at ε = 1e6 the fits then converge, the annealing fires sooner and 49
    rounds run instead of 94: benchmarks/README.md "speed4")."""
    calls = {"all": 0, "warm": 0}
    evaluate, fit = estimation._Problem.evaluate, aim_module.estimate

    def counting(self, *args, **kwargs):
        calls["all"] += 1
        return evaluate(self, *args, **kwargs)

    def warm_counting(*args, **kwargs):
        before = calls["all"]
        model = fit(*args, **kwargs)
        if kwargs.get("warm_start") is not None:
            calls["warm"] += calls["all"] - before
        return model

    monkeypatch.setattr(estimation._Problem, "evaluate", counting)
    monkeypatch.setattr(aim_module, "estimate", warm_counting)
    settings = AimSettings(workload_degree=3, rounds_per_attribute=3, max_model_cells=600,
                           round_iterations=100, final_iterations=1000)

    def rounds() -> int:
        budget = Ledger().open_filter(1e9, "AIM")
        return len(run_aim(wide_table(), settings, Sensitivity(1.0, 1.0), RandomSource.seeded(5),
                           budget)[0])

    precise_rounds = rounds()
    precise, calls["warm"] = calls["warm"], 0
    monkeypatch.setattr(aim_module, "RESOLUTION", 0.0)
    strict_rounds = rounds()
    assert precise < calls["warm"], (precise, calls["warm"])  # 458 against 475 when written
    assert precise_rounds <= strict_rounds
