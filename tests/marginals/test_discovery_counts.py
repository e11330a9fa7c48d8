"""The domain step's noisy counts of a discovered column's kept values as free 1-way
measurements (issue 24, discmeas): ``kept_counts`` on the resolved schema (a DP output), combined
by inverse variance with the recipe's 1-way counts (``compress.with_discovery``) before the
adaptive domain is chosen. Post-processing: no budget, no event."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.errors import SchemaError
from synthpriv.marginals import compress
from synthpriv.marginals.compress import inverse_variance, with_discovery
from synthpriv.marginals.measurement import Measurement
from synthpriv.schema import parse_schema
from tests.marginals.noise_checks import assert_error_variance, assert_same_spend


def _column(kept_counts: list | None, other: str | None = None):
    entry = {"name": "group", "kind": "categorical", "categories": ["a", "b", "c"],
             "missing": True}
    if other is not None:
        entry["other"] = other
    if kept_counts is not None:
        entry["kept_counts"] = kept_counts
    return parse_schema({"columns": [entry]}, "test").column("group")


def test_the_combination_is_the_inverse_variance_formula() -> None:
    """Known input: recipe counts (σ_r = 40) and discovery counts (σ_d = 20, 30); each category
    cell is (y/σ_r² + x/σ_d²)/(1/σ_r² + 1/σ_d²) with σ² = 1/(1/σ_r² + 1/σ_d²); the missing code
    and a category with no discovery count (``other``: null) keep the recipe's count and σ."""
    column = _column([{"count": 500, "sigma": 20, "threshold": 100},
                      {"count": 260, "sigma": 30, "threshold": 100}, None], other="c")
    recipe = Measurement(("group",), np.array([460.0, 300.0, 90.0, 15.0]), 40.0)
    combined = with_discovery(column, recipe)
    expected = [(460 / 40 ** 2 + 500 / 20 ** 2) / (1 / 40 ** 2 + 1 / 20 ** 2),
                (300 / 40 ** 2 + 260 / 30 ** 2) / (1 / 40 ** 2 + 1 / 30 ** 2), 90.0, 15.0]
    sigma = [(1 / 40 ** 2 + 1 / 20 ** 2) ** -0.5, (1 / 40 ** 2 + 1 / 30 ** 2) ** -0.5, 40.0, 40.0]
    assert np.allclose(combined.noisy_counts, expected), combined.noisy_counts
    assert np.allclose(combined.sigma, sigma), combined.sigma
    assert combined.clique == ("group",)


def test_per_cell_recipe_noise_and_no_second_count() -> None:
    """``inverse_variance`` with a per-cell first variance, and an infinite second variance
    (no second count) leaving the first count and variance as they are."""
    noisy, variance = inverse_variance(np.array([10.0, 20.0]), np.array([4.0, 9.0]),
                                       np.array([14.0, 0.0]), np.array([4.0, np.inf]))
    assert np.allclose(noisy, [12.0, 20.0]) and np.allclose(variance, [2.0, 9.0])


def test_declared_categories_are_left_unchanged() -> None:
    """A column whose categories the schema lists (no ``kept_counts``): the recipe's measurement
    itself, unchanged."""
    recipe = Measurement(("group",), np.array([460.0, 300.0, 90.0, 15.0]), 40.0)
    assert with_discovery(_column(None), recipe) is recipe


def test_kept_counts_must_align_with_the_categories() -> None:
    with pytest.raises(SchemaError, match="kept_counts of .group. has 2 entries for 3"):
        _column([{"count": 500, "sigma": 20, "threshold": 100}, None])


ROWS = 3000
VALUES = [f"v{i:02d}" for i in range(20)]  # each ~140 rows (T ≈ 60 at ε = 1): all kept


def _table(seed: int = 3) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({"group": rng.choice(VALUES, ROWS),
                         "x": rng.choice(["u", "v", "w"], ROWS, p=[0.5, 0.3, 0.2])})


RECIPE_SIGMA = 7.5  # the one_way recipe's fixed σ_r: about σ_d, which the domain step gets


def _fit(table: pd.DataFrame, seed: int) -> Synthesizer:
    """A seeded one_way job at ε = 1 whose 1-way noise is fixed near the domain step's (the
    rest of the budget): the two counts then weigh about equally."""
    schema = {"columns": [{"name": "group", "kind": "categorical", "missing": True},
                          {"name": "x", "kind": "categorical", "categories": ["u", "v", "w"]}]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return Synthesizer(schema, epsilon=1.0, recipe="independent", seed=seed,
                           marginals={"sigma": RECIPE_SIGMA}).fit(table)


def test_the_combined_measurement_carries_both_noises_not_exact_counts() -> None:
    """The user's view, one_way recipe at ε = 1: 20 seeded runs of 20 kept values. Each kept
    value's released 1-way count less its exact count has mean 0 and variance
    σ_d²σ_r²/(σ_d² + σ_r²) (σ_d the plan's discovery noise, σ_r its 1-way noise), both within
    their 1e-4 sampling bounds, and the measurement's σ says so. Combined with the exact 1-way
    counts (mutation 'discovery-with-exact-counts') the variance is w_d = σ_r²/(σ_d² + σ_r²)
    times the formula's; with exact discovery counts ('kept-rows-exact') w_r = 1 − w_d times;
    with the recipe's counts alone σ_r²: none is within the bounds (w_d is near 1/2 here,
    checked)."""
    table = _table()
    exact = table["group"].value_counts().reindex(VALUES).to_numpy(dtype=float)
    errors, expected = [], None
    for seed in range(20):
        synth = _fit(table, seed)
        column = synth.job.schema.column("group")
        assert column.categories == VALUES, column.categories
        stages = {s.stage: s for s in synth._fitted.synthesis.plan.stages}
        sigma_d = stages["domain"].noise["sigma"]
        sigma_r = stages["marginals"].noise["sigma_one_way"]
        assert [k.sigma for k in column.kept_counts] == [sigma_d] * len(VALUES)
        expected = sigma_d ** 2 * sigma_r ** 2 / (sigma_d ** 2 + sigma_r ** 2)
        assert 0.3 <= sigma_r ** 2 / (sigma_d ** 2 + sigma_r ** 2) <= 0.7, (sigma_d, sigma_r)
        (measured,) = [m for m in synth._fitted.synthesis.state.measurements
                       if m.clique == ("group",)]
        sigma = np.broadcast_to(measured.sigma, np.shape(measured.noisy_counts))
        assert np.allclose(sigma[:-1], np.sqrt(expected)), (sigma, np.sqrt(expected))
        errors.extend(np.asarray(measured.noisy_counts, dtype=float)[:-1] - exact)
    assert_error_variance(np.asarray(errors), expected, "combined counts")


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_a_safe_draft_release_runs_and_spends_what_it_planned(recipe: str, monkeypatch) -> None:
    """A small safe-draft job (every column auto) releases with ``kept_counts`` on its resolved
    schema, and its ledger is the one the same seeded job records without the combination
    (DISCOVERY_MARGIN infinite: no count combined): the same ε and, for MST (no adaptive
    rounds), the same events; the release itself differs (the combination is used)."""
    table = _table()
    table["y"] = np.where(table["x"] == "u", table["group"].str[-1], "z")

    def run() -> Synthesizer:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Synthesizer(epsilon=1.0, recipe=recipe, seed=4).fit(table)

    after = run()
    assert after.job.schema.column("group").kept_counts is not None
    monkeypatch.setattr(compress, "DISCOVERY_MARGIN", np.inf)
    before = run()
    assert_same_spend(after, before, recipe)
