"""The warm-started fit (AIM's rounds) by similar triangles: as low a loss as mirror descent after
as many steps, at one calibration a step; the same optimum; consistent mixture marginals."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.marginals import estimation
from synthpriv.marginals.estimation import GraphicalModel, estimate
from synthpriv.marginals.measurement import Measurement

DOMAIN = Domain(("a", "b", "c", "d", "e"), (3, 4, 2, 5, 3))
ROWS = 5000
SIGMA = 8.0
OLD = [("a",), ("b",), ("c",), ("d",), ("e",), ("a", "b"), ("b", "c"), ("c", "d"), ("d", "e")]
NEW = ("a", "d", "e")  # the round's new measurement: closes cycles, a three-clique tree


def table() -> Dataset:
    """Five attributes, each depending on earlier ones (e on a, so the new 3-way carries news)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, ROWS)
    b = (a + rng.integers(0, 2, ROWS)) % 4
    c = ((b > 1) ^ (rng.random(ROWS) < 0.2)).astype(int)
    d = (2 * c + a + (rng.random(ROWS) < 0.4)) % 5
    e = (a + (d > 2) + (rng.random(ROWS) < 0.3)) % 3
    return Dataset(np.stack([a, b, c, d, e], axis=1), DOMAIN)


def measured(data: Dataset, cliques: list[tuple[str, ...]]) -> list[Measurement]:
    rng = np.random.default_rng(1)
    return [Measurement(c, data.marginal(c) + rng.normal(0, SIGMA, DOMAIN.project(c).shape), SIGMA)
            for c in cliques]


def loss(model: GraphicalModel, measurements: list[Measurement]) -> float:
    """The estimator's objective, computed from the model's marginals (not the estimator's own)."""
    return sum(0.5 * float(np.sum((model.project(m.clique) - m.noisy_counts) ** 2)) / m.sigma ** 2
               for m in measurements)


@pytest.fixture(scope="module")
def round_problem() -> tuple[list[Measurement], GraphicalModel]:
    """A round's fit: the model of the earlier measurements (30 steps, as unconverged as AIM's
    round fits) and the measurements with the new 3-way one added."""
    data = table()
    old = measured(data, OLD)
    warm = estimate(DOMAIN, old, iterations=30)
    return old + measured(data, [NEW]), warm


def counted_fit(monkeypatch, measurements, warm, method: str, iterations: int,
                tolerance: float = 0.0) -> tuple[GraphicalModel, int]:
    calls = [0]
    evaluate = estimation._Problem.evaluate

    def counting(self, *args, **kwargs):
        calls[0] += 1
        return evaluate(self, *args, **kwargs)

    monkeypatch.setattr(estimation._Problem, "evaluate", counting)
    model = estimate(DOMAIN, measurements, iterations=iterations, warm_start=warm,
                     tolerance=tolerance, method=method)
    monkeypatch.setattr(estimation._Problem, "evaluate", evaluate)
    return model, calls[0]


@pytest.mark.parametrize("iterations", [10, 20, 40, 80])
def test_triangles_fit_lower_than_mirror_descent_for_as_many_calibrations(
    monkeypatch, round_problem, iterations: int
) -> None:
    """The cost of a step is a calibration of the tree (and the projections): triangles take
    one a step plus backtracks, mirror descent a trial and an extrapolation a step plus
    backtracks. Given at least as many calibrations, mirror descent fits worse."""
    measurements, warm = round_problem
    triangles, triangle_calls = counted_fit(monkeypatch, measurements, warm, "triangles", iterations)
    mirror, mirror_calls = counted_fit(monkeypatch, measurements, warm, "mirror",
                                       (triangle_calls + 1) // 2)
    assert mirror_calls >= triangle_calls
    assert triangle_calls <= 1.8 * iterations + 1, (triangle_calls, iterations)
    assert loss(triangles, measurements) < loss(mirror, measurements)


def test_triangles_converge_to_the_optimum_of_mirror_descent(monkeypatch, round_problem) -> None:
    measurements, warm = round_problem
    mirror, _ = counted_fit(monkeypatch, measurements, warm, "mirror", 3000, tolerance=1e-9)
    triangles, _ = counted_fit(monkeypatch, measurements, warm, "triangles", 3000, tolerance=1e-9)
    # without restarts the tail is sublinear: 3.5e-5 of the loss above mirror descent's optimum
    assert loss(triangles, measurements) == pytest.approx(loss(mirror, measurements), rel=1e-4)
    for clique in [*OLD, NEW, ("a", "c", "e")]:
        np.testing.assert_allclose(triangles.project(clique), mirror.project(clique), atol=0.05)


def test_the_mixture_is_a_consistent_model(monkeypatch, round_problem) -> None:
    """x mixes calibrated marginals: each tree clique sums to the total, is non-negative, and
    neighbouring cliques agree on their separator (the model samples and projects as before)."""
    measurements, warm = round_problem
    model, _ = counted_fit(monkeypatch, measurements, warm, "auto", 40)
    assert len(model.cliques) > 1
    for i, marginal in enumerate(model.marginals):
        assert marginal.values.sum() == pytest.approx(model.total)
        assert marginal.values.min() >= 0
        parent = model.tree.parent[i]
        if parent >= 0:
            separator = model.tree.separator[i]
            np.testing.assert_allclose(marginal.project(separator).values,
                                       model.marginals[parent].project(separator).values,
                                       rtol=1e-9, atol=1e-9)


def test_auto_takes_triangles_only_from_a_warm_start(monkeypatch, round_problem) -> None:
    measurements, warm = round_problem
    warm_auto, _ = counted_fit(monkeypatch, measurements, warm, "auto", 15)
    warm_triangles, _ = counted_fit(monkeypatch, measurements, warm, "triangles", 15)
    np.testing.assert_array_equal(warm_auto.marginals[0].values, warm_triangles.marginals[0].values)
    cold_auto = estimate(DOMAIN, measurements, iterations=15)
    cold_mirror = estimate(DOMAIN, measurements, iterations=15, method="mirror")
    np.testing.assert_array_equal(cold_auto.marginals[0].values, cold_mirror.marginals[0].values)
    with pytest.raises(ValueError, match="method must be"):
        estimate(DOMAIN, measurements, method="newton")


def test_the_warm_start_matches_the_new_measurement_before_any_step(round_problem) -> None:
    """The new clique starts at one IPF step: its model marginal is the measurement with cells
    below FLOOR·σ raised to it (the non-negative projection), rescaled to the total."""
    measurements, warm = round_problem
    model = estimate(DOMAIN, measurements, iterations=0, warm_start=warm)
    target = np.maximum(measurements[-1].noisy_counts, estimation.FLOOR * SIGMA)
    assert measurements[-1].noisy_counts.min() < 0  # the projection is exercised
    np.testing.assert_allclose(model.project(NEW), target * model.total / target.sum(), rtol=1e-9)


def test_tree_potentials_written_into_buffers_equal_fresh_ones(round_problem) -> None:
    """``out`` holding garbage (NaN) comes back equal, bit for bit, to the fresh sum, also where
    a tree clique hosts no potential (0)."""
    measurements, _ = round_problem
    tree = estimation.JunctionTree.build(DOMAIN, [m.clique for m in measurements])
    objective = estimation._Objective.build(DOMAIN, measurements)
    rng = np.random.default_rng(5)
    every = {c: estimation.Factor(t.domain, rng.normal(size=t.values.shape))
             for c, t in zip(objective.cliques, objective.targets, strict=True)}
    for potentials in (every, {("a",): every[("a",)]}):  # the second leaves tree cliques empty
        problem = estimation._Problem(tree, objective, float(ROWS),
                                      {c: tree.host(c) for c in potentials})
        fresh = problem.tree_potentials(potentials)
        out = [np.full_like(table, np.nan) for table in fresh]
        written = problem.tree_potentials(potentials, out=out)
        assert all(a is b for a, b in zip(written, out, strict=True))
        for a, b in zip(fresh, written, strict=True):
            np.testing.assert_array_equal(a, b)
    assert len(tree.cliques) > 1 and not fresh[1 - tree.host(("a",))].any()


def test_the_flat_layout_joins_and_splits_each_measured_table_back() -> None:
    """The triangles' arithmetic runs on the measured tables laid end to end: splitting the
    joined array must give each clique its own table (shape, order, values) as a view."""
    domain = Domain(("a", "b", "c"), (2, 3, 4))
    rng = np.random.default_rng(3)
    measurements = [Measurement(c, rng.normal(10.0, 1.0, domain.project(c).shape), 1.0)
                    for c in [("a",), ("b", "c"), ("a", "c")]]
    objective = estimation._Objective.build(domain, measurements)
    flat = estimation._Flat.of(objective)
    joined = flat.join([t.values for t in objective.targets])
    assert joined.size == 2 + 12 + 8
    split = flat.split(joined)
    assert list(split) == list(objective.cliques)
    for clique, target in zip(objective.cliques, objective.targets, strict=True):
        assert split[clique].domain == target.domain
        np.testing.assert_array_equal(split[clique].values, target.values)
        assert np.shares_memory(split[clique].values, joined)
    per_clique = max(float(np.abs(t.values).sum()) for t in objective.targets)
    assert np.add.reduceat(np.abs(joined), flat.starts).max() == pytest.approx(per_clique)
