"""Heap discovery's noisy counts as free measurements of the point-mass cells (issue 24,
heapmeas): ``heap_counts`` on the resolved numeric column (a DP output of the domain step),
combined by inverse variance with the FINE 1-way count of the cell holding exactly that value
(``compress.with_heaps``) before the adaptive domain is composed. Post-processing: no budget,
no event."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.errors import SchemaError
from synthpriv.marginals import stage as stage_module
from synthpriv.marginals.compress import with_heaps
from synthpriv.marginals.measurement import Measurement
from synthpriv.schema import parse_schema
from tests.marginals.noise_checks import assert_error_variance, assert_same_spend


def _column(heap_counts: list | None, point_masses: list[float], **extra):
    entry = {"name": "x", "kind": "integer", "lower": 0, "upper": 3000,
             "point_masses": point_masses, "missing": True, **extra}
    if heap_counts is not None:
        entry["heap_counts"] = heap_counts
    return parse_schema({"columns": [entry]}, "test").column("x")


def _fine(column, sigma: float = 40.0) -> Measurement:
    cells = len(column.bin_edges()) - 1 + int(column.missing)
    return Measurement(("x",), np.arange(cells, dtype=float), sigma)


def test_the_combination_is_the_inverse_variance_formula() -> None:
    """Known input: fine counts (σ_f = 40) and heap counts at 7 (σ_h = 20) and 500 (σ_h = 30);
    each heap's own cell is (y/σ_f² + x/σ_h²)/(1/σ_f² + 1/σ_h²) with σ² = 1/(1/σ_f² + 1/σ_h²);
    a declared point mass (1000, no count), the bound 0 (clipped rows share its cell) and every
    other cell keep the fine count and σ."""
    column = _column([{"value": 7, "count": 500, "sigma": 20},
                      {"value": 500, "count": 260, "sigma": 30},
                      {"value": 0, "count": 90, "sigma": 20}], [0, 7, 500, 1000])
    fine = _fine(column)
    combined = with_heaps(column, fine)
    cells = column.point_mass_cells()
    expected = np.arange(len(fine.noisy_counts), dtype=float)
    sigma = np.full(len(expected), 40.0)
    for cell, count, heap_sigma in [(cells[1], 500, 20), (cells[2], 260, 30)]:
        expected[cell] = (cell / 40 ** 2 + count / heap_sigma ** 2) / (
            1 / 40 ** 2 + 1 / heap_sigma ** 2)
        sigma[cell] = (1 / 40 ** 2 + 1 / heap_sigma ** 2) ** -0.5
    assert np.allclose(combined.noisy_counts, expected), combined.noisy_counts[cells]
    assert np.allclose(combined.sigma, sigma)
    assert combined.clique == ("x",)


def test_a_bound_heap_is_combined_when_outside_values_are_missing() -> None:
    """With ``outside: missing`` no clipped row shares the bound's cell: its heap is combined."""
    column = _column([{"value": 0, "count": 90, "sigma": 20}], [0], outside="missing")
    combined = with_heaps(column, _fine(column))
    assert combined.noisy_counts[0] == pytest.approx(90 / 20 ** 2 / (1 / 40 ** 2 + 1 / 20 ** 2))


def test_declared_point_masses_are_left_unchanged() -> None:
    column = _column(None, [7, 500])
    fine = _fine(column)
    assert with_heaps(column, fine) is fine


def test_heap_counts_must_be_point_masses() -> None:
    with pytest.raises(SchemaError, match="heap_counts give values \\[8.0\\]"):
        _column([{"value": 8, "count": 500, "sigma": 20}], [7])


ROWS = 2000
HEAPS = {0: 0.2, 50: 0.12, 120: 0.1, 200: 0.08, -40: 0.1}  # each far above the heap threshold


def _table(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    values = rng.integers(-100, 300, ROWS)
    pick = rng.random(ROWS)
    start = 0.0
    for value, share in HEAPS.items():
        values = np.where((start <= pick) & (pick < start + share), value, values)
        start += share
    return pd.DataFrame({"x": values, "g": rng.choice(["u", "v", "w"], ROWS)})


def test_the_combined_fine_cells_carry_both_noises_not_exact_counts(monkeypatch) -> None:
    """The fine 1-way counts ``compose`` reads, MST at ε = 1, 12 seeded runs of 5 heaps: each
    heap cell's combined count less its exact count has mean 0 and variance σ_h²σ_f²/(σ_h² +
    σ_f²) (σ_h the plan's heap noise, σ_f its fine 1-way noise), within their 1e-4 sampling
    bounds, and the measurement's σ says so. Combined with the EXACT heap counts (mutation
    'heap-counts-exact') the variance is σ_h²/(σ_h² + σ_f²) ≈ 0.3 times the formula's, with no
    combination σ_f²/formula ≈ 3.1 times: neither within the bounds."""
    table = _table()
    seen: list[dict[str, Measurement]] = []
    combine = stage_module.MarginalsStage._with_heaps

    def spy(state, fine_one_way):  # the real combination, its output kept for the test
        out = combine(state, fine_one_way)
        seen.append(out)
        return out

    monkeypatch.setattr(stage_module.MarginalsStage, "_with_heaps", staticmethod(spy))
    schema = {"columns": [{"name": "x", "kind": "integer"},
                          {"name": "g", "kind": "categorical", "categories": ["u", "v", "w"]}]}
    exact = table["x"].value_counts()
    errors, expected = [], None
    for seed in range(12):
        seen.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synth = Synthesizer(schema, epsilon=1.0, recipe="mst", seed=seed).fit(table)
        column = synth.job.schema.column("x")
        assert sorted(h.value for h in column.heap_counts) == sorted(HEAPS), column.heap_counts
        stages = {s.stage: s for s in synth._fitted.synthesis.plan.stages}
        sigma_h = stages["domain"].noise["heap_sigma"]
        sigma_f = stages["marginals"].noise["sigma_fine"]
        expected = sigma_h ** 2 * sigma_f ** 2 / (sigma_h ** 2 + sigma_f ** 2)
        (fine,) = seen
        cells = column.point_mass_cells()
        sigma = np.broadcast_to(fine["x"].sigma, np.shape(fine["x"].noisy_counts))
        assert np.allclose(sigma[cells], np.sqrt(expected)), (sigma[cells], np.sqrt(expected))
        values = np.asarray(column.point_masses)
        errors.extend(np.asarray(fine["x"].noisy_counts)[cells] - exact[values].to_numpy())
    assert_error_variance(np.asarray(errors), expected, "combined heap cells")


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_a_safe_draft_release_spends_the_same_with_and_without(recipe: str, monkeypatch) -> None:
    """A small safe-draft job (every column auto) with heaps releases with ``heap_counts`` on
    its resolved schema, and its ledger is the one the same seeded job records without the
    combination: the same ε and, for MST (no adaptive rounds), the same events; the release
    itself differs (the combination is used)."""
    table = _table()

    def run() -> Synthesizer:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Synthesizer(epsilon=1.0, recipe=recipe, seed=4).fit(table)

    after = run()
    assert after.job.schema.column("x").heap_counts, after.job.schema.column("x")
    monkeypatch.setattr(stage_module, "with_heaps", lambda column, measurement: measurement)
    before = run()
    assert_same_spend(after, before, recipe)
