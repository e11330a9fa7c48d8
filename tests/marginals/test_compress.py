"""The adaptive domain (synthpriv.marginals.compress): post-processing of the noisy 1-way counts,
explicit edges kept, missing values a cell of their own, and decoding within coarse cells."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import (
    Coarsening,
    RecodedCounts,
    bin_count,
    categorical_groups,
    coarse_measurement,
    fitted_masses,
    numeric_groups,
    point_masses,
)
from synthpriv.marginals.measurement import Measurement
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

SCHEMA = parse_schema({"columns": [
    {"name": "age", "kind": "integer", "lower": 0, "upper": 99},               # adaptive
    {"name": "spend", "kind": "continuous", "lower": 0, "upper": 1000, "missing": True},
    {"name": "fixed", "kind": "integer", "lower": 0, "upper": 9, "edges": [0, 5, 9]},
    {"name": "city", "kind": "categorical", "categories": list("abcdefgh")},
]}, "test")


def codes_of(rows: int, seed: int) -> np.ndarray:
    """Ages piled on 30, spend with a point mass at 0 and 10 % missing, skewed cities."""
    rng = np.random.default_rng(seed)
    encoder = TableEncoder(SCHEMA)
    age = np.where(rng.random(rows) < 0.4, 30, rng.integers(0, 100, rows))
    spend = np.where(rng.random(rows) < 0.3, 0.0, rng.exponential(100, rows))
    spend_code = encoder._bin(SCHEMA.columns[1], spend)
    spend_code[rng.random(rows) < 0.1] = encoder.domain["spend"] - 1
    fixed = rng.integers(0, 2, rows)
    city = rng.choice(8, rows, p=[0.5, 0.3, 0.15, 0.02, 0.01, 0.01, 0.005, 0.005])
    return np.stack([age, spend_code, fixed, city], axis=1)


def run_mst(data, seed: int = 4, rho: float = 0.05) -> PipelineState:
    encoder = TableEncoder(SCHEMA)
    context = PlanContext(encoder.domain, "add_remove", 1e-6)
    state = PipelineState(context, encoder, data)
    stage = MarginalsStage({"selection": "mst", "iterations": 20}, context, "test")
    stage.run(state, stage.plan(rho), Ledger(), RandomSource.seeded(seed))
    return state


class OneWayFrom:
    """Answers 1-way marginals from one table and every other query from another: what the
    stage sees if the raw table were altered right after the 1-way measurement."""

    def __init__(self, one_way: Dataset, rest: Dataset) -> None:
        self.one_way, self.rest, self.domain = one_way, rest, one_way.domain

    @property
    def records(self) -> int:
        return self.rest.records

    @property
    def codes(self) -> np.ndarray:
        return self.rest.codes

    def marginal(self, attributes):
        source = self.one_way if len(attributes) == 1 else self.rest
        return source.marginal(attributes)

    def marginals(self, cliques):
        return {tuple(c): self.marginal(c) for c in cliques}


def test_bins_are_post_processing_of_the_noisy_one_way_counts() -> None:
    domain = TableEncoder(SCHEMA).domain
    original = Dataset(codes_of(5000, seed=1), domain)
    altered = Dataset(codes_of(5000, seed=2), domain)
    plain = run_mst(original).coarsening
    switched = run_mst(OneWayFrom(original, altered)).coarsening
    assert plain.changed
    assert plain.coarse == switched.coarse
    for attribute in domain.attributes:
        assert np.array_equal(plain.maps[attribute], switched.maps[attribute])
        assert np.array_equal(plain.masses[attribute], switched.masses[attribute])
    # and the other way round: a different 1-way table gives a different choice
    assert not all(np.array_equal(plain.maps[a], run_mst(altered).coarsening.maps[a])
                   for a in domain.attributes)


def test_explicit_edges_are_kept_and_missing_is_a_cell_of_its_own() -> None:
    domain = TableEncoder(SCHEMA).domain
    state = run_mst(Dataset(codes_of(5000, seed=1), domain))
    coarsening = state.coarsening
    assert np.array_equal(coarsening.maps["fixed"], np.arange(domain["fixed"]))
    spend = coarsening.maps["spend"]
    assert (spend == spend[-1]).sum() == 1  # the missing code (last) shares its cell with nobody
    assert coarsening.coarse["age"] < domain["age"]
    assert coarsening.coarse["city"] < domain["city"]  # rare cities merged
    # later marginals are counted on the coarse domain, and the model is over it
    assert state.model.domain == coarsening.coarse
    assert all(np.shape(m.noisy_counts) == coarsening.coarse.project(m.clique).shape
               for m in state.measurements)


def test_aim_keeps_every_category_where_mst_merges_the_rare_ones() -> None:
    encoder = TableEncoder(SCHEMA)
    context = PlanContext(encoder.domain, "add_remove", 1e-6)
    state = PipelineState(context, encoder, Dataset(codes_of(5000, seed=1), encoder.domain))
    options = {"selection": "aim", "iterations": 20, "aim_rounds_per_attribute": 2,
               "aim_round_iterations": 5}
    stage = MarginalsStage(options, context, "test")
    stage.run(state, stage.plan(0.01), Ledger(), RandomSource.seeded(4))  # 3σ ≈ 63 rows
    assert state.coarsening.coarse["age"] < encoder.domain["age"]  # numeric bins still adapt
    assert state.coarsening.coarse["city"] == encoder.domain["city"]  # all 8 cities kept
    assert run_mst(Dataset(codes_of(5000, seed=1), encoder.domain)).coarsening.coarse["city"] < 8


def test_a_point_mass_is_a_bin_of_its_own_and_bins_hold_about_equal_mass() -> None:
    mass = np.full(100, 10.0)
    mass[30] = 600.0  # 600 of 1,590
    groups = numeric_groups(mass, bins=8, sigma=5.0)
    assert (groups == groups[30]).sum() == 1
    sums = np.bincount(groups, weights=mass)
    others = np.delete(sums, groups[30])
    target = (mass.sum() - 600.0) / 7  # the other bins share what the point mass leaves
    assert np.all(others <= 1.5 * target) and np.all(others >= 0.5 * target)
    assert np.all(np.diff(groups) >= 0)  # consecutive cells: bins are intervals
    assert groups.max() + 1 in (7, 8)


def test_a_dominant_point_mass_leaves_the_tail_its_share_of_bins() -> None:
    # Adult's capital gain: 92 % at 0, the rest spread thinly (each cell below a bin's share)
    mass = np.concatenate([[9_200.0], np.full(400, 2.0)])
    groups = numeric_groups(mass, bins=11, sigma=5.0)
    assert (groups == groups[0]).sum() == 1
    assert groups.max() + 1 == 11  # the tail gets the other 10 bins, not 1
    tail = np.bincount(groups, weights=mass)[1:]
    assert np.allclose(tail, 80.0, rtol=0.1)
    # a second point mass appears once the first leaves the rest a smaller share
    mass[300] = 150.0
    point, target = point_masses(mass, 11, 5.0)
    assert point[0] and point[300] and point.sum() == 2
    assert target == pytest.approx((mass.sum() - 9_350.0) / 9)


def test_fewer_bins_where_records_are_few_or_noise_is_large() -> None:
    assert bin_count(100_000, 10.0) == 32
    assert bin_count(5000, 60.0) == round(np.sqrt(5000 / 60))
    assert bin_count(50, 60.0) == 2
    assert bin_count(5000, 6.0) > bin_count(5000, 60.0)


def test_fitted_masses_are_monotone_cumulative_and_keep_the_total() -> None:
    rng = np.random.default_rng(0)
    noisy = np.concatenate([np.zeros(500), np.full(10, 300.0)]) + rng.normal(0, 20, 510)
    mass = fitted_masses(noisy)
    assert np.all(mass >= 0)
    assert mass.sum() == pytest.approx(max(noisy.sum(), 0), rel=0.05)
    # the pure-noise stretch gets far less than the |noise| a clip at zero would give it
    assert mass[:500].sum() < 0.25 * np.clip(noisy[:500], 0, None).sum()


def test_rare_categories_below_three_sigma_share_one_cell() -> None:
    groups = categorical_groups(np.array([100.0, 2.0, 50.0, -3.0, 1.0]), sigma=5.0)
    assert groups.tolist() == [0, 2, 1, 2, 2]
    assert categorical_groups(np.array([100.0, 2.0]), sigma=5.0).tolist() == [0, 1]


def test_refine_draws_fine_cells_in_proportion_to_mass_within_the_coarse_cell() -> None:
    fine, coarse = Domain(("x",), (4,)), Domain(("x",), (2,))
    coarsening = Coarsening(fine, coarse, {"x": np.array([0, 0, 1, 1])},
                            {"x": np.array([3.0, 1.0, 0.0, 0.0])})
    codes = np.array([[0]] * 20000 + [[1]] * 20000)
    drawn = coarsening.refine(codes, np.random.default_rng(0))[:, 0]
    assert set(drawn[:20000]) == {0, 1} and set(drawn[20000:]) == {2, 3}
    share = (drawn[:20000] == 0).mean()  # 3/4 expected; binomial std 0.003
    assert abs(share - 0.75) < 0.015
    assert abs((drawn[20000:] == 2).mean() - 0.5) < 0.015  # no mass: uniform


def test_coarse_one_way_sums_fine_cells_with_their_noise() -> None:
    fine, coarse = Domain(("x",), (4,)), Domain(("x",), (2,))
    coarsening = Coarsening(fine, coarse, {"x": np.array([0, 0, 0, 1])},
                            {"x": np.ones(4)})
    merged = coarse_measurement(Measurement(("x",), np.array([1.0, 2.0, 3.0, 4.0]), 2.0),
                                coarsening)
    assert merged.noisy_counts.tolist() == [6.0, 4.0]
    np.testing.assert_allclose(merged.sigma, [2.0 * np.sqrt(3), 2.0])


def test_recoded_counts_match_counts_of_recoded_codes_on_every_path() -> None:
    domain = TableEncoder(SCHEMA).domain
    data = Dataset(codes_of(3000, seed=3), domain)
    coarsening = run_mst(data).coarsening
    recoded = RecodedCounts(data, coarsening)
    expected = Dataset(coarsening.recode(data.codes), coarsening.coarse)

    class CountsOnly:  # a count-only source (the dask engine's shape): fine marginals summed
        def __init__(self) -> None:
            self.domain, self.records = domain, data.records

        def marginal(self, attributes):
            return data.marginal(attributes)

    summed = RecodedCounts(CountsOnly(), coarsening)
    for clique in [("age",), ("age", "city"), ("spend", "fixed", "city")]:
        np.testing.assert_array_equal(recoded.marginal(clique), expected.marginal(clique))
        np.testing.assert_array_equal(summed.marginal(clique), expected.marginal(clique))


def test_the_measured_grid_shrinks_with_records_over_noise() -> None:
    from synthpriv.marginals.compress import grid_cells

    assert grid_cells(2400, 57.0, 63) == 21  # Wage's age at AIM's σ, ε = 1
    assert grid_cells(10**6, 10.0, 1024) == 1024
    assert grid_cells(10, 50.0, 100) == 8


def test_measured_grid_keeps_bounds_and_zero_alone_and_compose_keeps_the_mass() -> None:
    from synthpriv.marginals.compress import compose, measured_grid

    schema = parse_schema({"columns": [
        {"name": "gain", "kind": "integer", "lower": -100, "upper": 99999},
        {"name": "city", "kind": "categorical", "categories": ["a", "b"]},
    ]}, "test")
    encoder = TableEncoder(schema)
    grid = measured_grid(schema, encoder.domain, records=2000, sigma=50.0)
    edges = schema.columns[0].bin_edges()
    zero = int(np.searchsorted(edges, 0, side="right") - 1)
    gain = grid.maps["gain"]
    rounds = len(schema.columns[0].round_values())  # each a lone cell splitting a grid cell
    assert grid.coarse["gain"] < 30 + 2 * rounds and grid.coarse["city"] == 2
    for cell in (0, zero, len(gain) - 1):  # lower bound, 0, upper bound: cells of their own
        assert (gain == gain[cell]).sum() == 1
    assert np.all(np.diff(gain) >= 0)
    chosen = Coarsening(grid.coarse, Domain(("gain", "city"), (2, 2)),
                        {"gain": (np.arange(grid.coarse["gain"]) > 3).astype(int),
                         "city": np.arange(2)},
                        {"gain": np.arange(grid.coarse["gain"], dtype=float), "city": np.ones(2)})
    total = compose(grid, chosen)
    assert np.array_equal(total.maps["gain"], chosen.maps["gain"][gain])
    np.testing.assert_allclose(np.bincount(gain, weights=total.masses["gain"]),
                               chosen.masses["gain"])


def test_measured_grid_keeps_a_continuous_columns_bounds_and_zero_alone() -> None:
    """A continuous column's fine cells at its bounds and at 0 are grid cells of their own (a
    0 fee, a top-code): their piles are measured at the grid's noise, not only the fine one's.
    Where the grid is the fine grid nothing changes."""
    from synthpriv.marginals.compress import measured_grid

    schema = parse_schema({"columns": [
        {"name": "fee", "kind": "continuous", "lower": -50, "upper": 300},
        {"name": "rate", "kind": "continuous", "lower": 1, "upper": 9},
    ]}, "test")
    domain = TableEncoder(schema).domain
    grid = measured_grid(schema, domain, records=1500, sigma=18.0)
    edges = schema.columns[0].bin_edges()
    zero = int(np.searchsorted(edges, 0, side="right") - 1)
    for name, alone in (("fee", (0, zero, domain["fee"] - 1)), ("rate", (0, domain["rate"] - 1))):
        cells = grid.maps[name]
        assert np.all(np.diff(cells) >= 0) and grid.coarse[name] < 60
        for cell in alone:
            assert (cells == cells[cell]).sum() == 1, (name, cell)
        assert (cells == cells[1]).sum() > 1  # the cell next to a bound is not alone
    fine = measured_grid(schema, domain, records=10**7, sigma=1.0)
    assert np.array_equal(fine.maps["fee"], np.arange(domain["fee"]))


def test_without_a_public_count_the_plan_buys_one_to_size_the_grid() -> None:
    schema = parse_schema({"columns": [
        {"name": "age", "kind": "integer", "lower": 0, "upper": 99},
        {"name": "city", "kind": "categorical", "categories": list("abc")},
    ]}, "test")
    domain = TableEncoder(schema).domain
    for selection in ("mst", "aim"):
        private = MarginalsStage({"selection": selection}, PlanContext(
            domain, "add_remove", 1e-6, None, frozenset({"age"})), "test").plan(0.1)
        count = private.events[0]
        assert count.label == "record count (sizes the adaptive grid and AIM's model)"
        assert 1 / (2 * count.noise_multiplier**2) == pytest.approx(0.001)  # 1 % of ρ
        public = MarginalsStage({"selection": selection}, PlanContext(
            domain, "add_remove", 1e-6, 5000, frozenset({"age"})), "test").plan(0.1)
        assert all(e.label != count.label for e in public.events)
        assert private.rho == public.rho == 0.1


PILE_ROWS = 400
PILE_SCHEMA = parse_schema({"columns": [
    {"name": "amount", "kind": "integer", "lower": 0, "upper": 1999},
    {"name": "group", "kind": "categorical", "categories": list("abc")},
]}, "test")


def _stage_noise() -> tuple[float, float]:
    """AIM's σ of the grid 1-way and of the fine 1-way for PILE_SCHEMA at ε = 1, δ = 1e-6 (the
    whole budget to the marginals stage, as a release with public bounds gives it)."""
    from scipy.optimize import brentq

    from synthpriv.privacy.zcdp_bound import zcdp_epsilon

    rho = brentq(lambda r: zcdp_epsilon(r, 1e-6) - 1.0, 1e-6, 1.0)
    domain = TableEncoder(PILE_SCHEMA).domain
    plan = MarginalsStage({"selection": "aim"}, PlanContext(
        domain, "add_remove", 1e-6, None, frozenset({"amount"})), "test").plan(rho)
    return plan.noise["sigma_first_rounds"], plan.noise["sigma_fine"]


def _mass_at_zero(
    pile: int, seed: int, sigma_grid: float, sigma_fine: float
) -> tuple[float, bool]:
    """The decoding mass of ``amount`` = 0 after ``compose``, as the marginals stage computes
    it, and whether the lone-cell rule kept it (``lone_measured``): ``pile`` rows at 0, the
    other rows spread over 1-999, both levels measured with Gaussian noise at the stage's σ and
    combined (``combine_levels``)."""
    from synthpriv.marginals.compress import (
        choose_coarsening,
        combine_levels,
        compose,
        lone_measured,
        measured_grid,
    )

    rng = np.random.default_rng(seed)
    domain = TableEncoder(PILE_SCHEMA).domain
    grid = measured_grid(PILE_SCHEMA, domain, PILE_ROWS, sigma_grid)
    to_grid = grid.maps["amount"]
    exact = np.zeros(domain["amount"])
    exact[0] = pile
    exact[1:500] = (PILE_ROWS - pile) / 499  # values 1-999: fine cells 1-499
    fine = Measurement(("amount",), exact + rng.normal(0, sigma_fine, len(exact)), sigma_fine)
    cells = grid.coarse["amount"]
    measured = Measurement(("amount",), np.bincount(to_grid, exact, cells)
                           + rng.normal(0, sigma_grid, cells), sigma_grid)
    group = Measurement(("group",), np.full(3, PILE_ROWS / 3) + rng.normal(0, sigma_grid, 3),
                        sigma_grid)
    combined = {"amount": combine_levels(measured, to_grid, fine)}
    chosen = choose_coarsening(PILE_SCHEMA, grid.coarse, [measured, group], PILE_ROWS,
                               combined=combined)
    total = compose(grid, chosen, {"amount": fine}, bins={"amount": bin_count(
        PILE_ROWS, sigma_grid)})
    kept = lone_measured(fine, to_grid, chosen.masses["amount"], chosen.noise["amount"],
                         grid.priors["amount"])
    return float(total.masses["amount"][0]), bool(kept[0])


def test_a_real_pile_at_zero_of_a_small_table_is_kept() -> None:
    """ISLP Credit's case (issue 24): 90 of 400 rows at 0 of an integer 0-1,999, at AIM's σ
    for ε = 1. The lone-cell rule kept 0's mass only above √(2 ln 1,025)·σ = 3.7σ (the union
    bound over every fine cell), about 80 rows here, so the pile was shared over its coarse cell
    in most draws (decoded mass ≤ 10 rows); 0 is a cell where columns pile up a priori and now
    passes at 3σ (``lone_measured``). Each of 20 seeded draws keeps it within 4 of the combined
    noise's σ (the pile's mass errs by that noise and by the grid's projection)."""
    sigma_grid, sigma_fine = _stage_noise()
    combined = 1 / np.sqrt(1 / sigma_grid**2 + 1 / sigma_fine**2)
    masses = [_mass_at_zero(90, seed, sigma_grid, sigma_fine)[0] for seed in range(20)]
    lost = [round(m) for m in masses if abs(m - 90) > 4 * combined]
    assert not lost, (f"a 90-row pile at 0 came back at {lost} rows in {len(lost)} of 20 draws "
                      f"(combined σ {combined:.1f}): the lone-cell rule shared it as noise")


def test_pure_noise_at_zero_is_kept_at_most_at_the_stated_rate() -> None:
    """No mass at 0: the lone-cell rule keeps 0's noise at one value with probability
    ≤ 2·P(Z > 3) ≈ 0.27 % a draw (``lone_measured``: two tests at 3σ). Over 400 seeded draws the
    draws whose decoding mass at 0 is a fake pile (more than 1 % of the rows) must stay within
    the binomial's 1e-4 upper quantile at that rate. Main made one in 52 of 400: a significant
    wide grid cell marked its fine cells measured, so 0's and 1's noise went back to them, and
    a bin of 0 and 1 alone had no other value to decode its noise at (``fold_noise_bins``);
    a 2σ bar keeps about 10."""
    from scipy.stats import binom, norm

    sigma_grid, sigma_fine = _stage_noise()
    draws, rate = 400, 2 * norm.sf(3.0)
    kept = sum(_mass_at_zero(0, seed, sigma_grid, sigma_fine)[0] > 0.01 * PILE_ROWS
               for seed in range(draws))
    assert kept <= binom.ppf(1 - 1e-4, draws, rate), (
        f"noise at 0 kept as a pile in {kept} of {draws} draws; the rule states ≤ {rate:.2%}")


def test_a_bin_of_noise_lone_cells_folds_into_the_next() -> None:
    """Fine cells 0, 1 (lone, a priori, not significant: ``noise``) are a coarse cell of their
    own before a wide one: folded into it; the last such bin folds into the one before; a bin
    holding another value and the missing code are left alone."""
    from synthpriv.marginals.compress import fold_noise_bins

    mapping = np.array([0, 0, 1, 1, 1, 2, 3])
    noise = np.array([True, True, False, False, False, False, False])
    assert fold_noise_bins(mapping, noise).tolist() == [0, 0, 0, 0, 0, 1, 2]
    last = np.array([False, False, False, False, False, True, False])
    assert fold_noise_bins(mapping, last, missing=1).tolist() == [0, 0, 1, 1, 1, 1, 2]
    mixed = np.array([True, False, False, False, False, False, False])
    assert fold_noise_bins(mapping, mixed).tolist() == mapping.tolist()
