"""Point masses through the adaptive domain (issue 24 item 4): a value holding a large share of a
column's rows comes back with about its share, wherever it sits (an integer grid cell, a wide
integer range, a continuous cell); decoding within a coarse cell follows the noisy fine masses;
all of it post-processing of noisy measurements on the ledger."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv.api import Synthesizer
from synthpriv.domain import Dataset
from synthpriv.encoding import TableEncoder, roundest
from synthpriv.marginals.compress import (
    combine_levels,
    fine_masses,
    fitted_masses,
    heaped,
    significance,
    split_point_masses,
)
from synthpriv.marginals.measurement import Measurement
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

ROWS = 5000
SCHEMA = {"columns": [
    {"name": "group", "kind": "categorical", "categories": ["a", "b", "c"]},
    {"name": "liens", "kind": "integer", "lower": 0, "upper": 1000},      # 1,001 integer cells
    {"name": "code", "kind": "integer", "lower": -5, "upper": 5000},      # wider than 1,024
    {"name": "rate", "kind": "continuous", "lower": 0, "upper": 30},
    {"name": "year", "kind": "integer", "lower": 1900, "upper": 2030},
]}


def heaped_table(seed: int = 0) -> pd.DataFrame:
    """95 % zero liens; a code 57.7 % at -1; a rate 36 % at 7.25; 6 years in a 131-year range."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "group": rng.choice(["a", "b", "c"], ROWS, p=[0.5, 0.3, 0.2]),
        "liens": np.where(rng.random(ROWS) < 0.95, 0, rng.integers(1, 1000, ROWS)),
        "code": np.where(rng.random(ROWS) < 0.577, -1, rng.integers(0, 5000, ROWS)),
        "rate": np.where(rng.random(ROWS) < 0.36, 7.25, np.round(rng.uniform(2, 25, ROWS), 2)),
        "year": rng.choice(np.arange(2015, 2021), ROWS, p=[0.3, 0.2, 0.2, 0.1, 0.1, 0.1]),
    })


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_point_masses_come_back_with_their_share_at_epsilon_one(recipe: str) -> None:
    """At ε = 1 the fine cells' noise is about 50 rows (1 % of 5,000; plan's sigma_fine), the
    grid's about 25: ±3 % is over 3σ of either. Before the fine marginals (issue 24) 0 shared a
    measured cell with its neighbours, -1 with -2, and 7.25 was drawn over its continuous cell."""
    data = heaped_table()
    synthesizer = Synthesizer(SCHEMA, epsilon=1.0, delta=1e-6, recipe=recipe,
                              public_records=ROWS, seed=5).fit(data)
    synthetic = synthesizer.synthetic
    assert synthesizer.plan().to_dict()  # planned before the data was read
    for column, value in [("liens", 0), ("code", -1), ("rate", 7.25), ("year", 2015),
                          ("year", 2020)]:
        real = float(np.mean(np.isclose(data[column], value)))
        released = float(np.mean(np.isclose(synthetic[column].astype(float), value)))
        assert abs(released - real) <= 0.03, (column, value, real, released)
    assert synthetic["year"].between(2015, 2020).mean() > 0.9  # not spread over the range


def _state(table: pd.DataFrame, seed: int, source=None) -> PipelineState:
    schema = parse_schema(SCHEMA, "test")
    encoder = TableEncoder(schema)
    data = source or encoder.encode(table)
    context = PlanContext(encoder.domain, "add_remove", 1e-6, public_records=ROWS,
                          adaptive=frozenset({"liens", "code", "rate", "year"}))
    state = PipelineState(context, encoder, data)
    stage = MarginalsStage({"selection": "mst", "iterations": 20}, context, "test")
    ledger = Ledger()
    stage.run(state, stage.plan(0.05), ledger, RandomSource.seeded(seed))
    state.ledger_labels = [e.label for e in ledger.events]
    return state


def test_the_fine_marginals_are_on_the_ledger_and_the_plan() -> None:
    state = _state(heaped_table(), seed=1)
    fine = [label for label in state.ledger_labels if label.startswith("marginal ")]
    for column in ("liens", "code", "rate", "year"):  # once on the fine grid, once on the grid
        assert fine.count(f"marginal {column}") == 2
    assert fine.count("marginal group") == 1


class FineFrom:
    """1-way marginals from one table, everything else from another: what the stage sees if the
    raw table changed right after the 1-way (grid and fine) measurements."""

    def __init__(self, one_way: Dataset, rest: Dataset) -> None:
        self.one_way, self.rest, self.domain = one_way, rest, one_way.domain

    @property
    def records(self) -> int:
        return self.rest.records

    def marginal(self, attributes):  # no ``codes``: every count, recoded too, is asked here
        return (self.one_way if len(attributes) == 1 else self.rest).marginal(attributes)

    def marginals(self, cliques):
        return {tuple(c): self.marginal(c) for c in cliques}


def test_masses_splits_and_atoms_are_post_processing_of_the_noisy_counts() -> None:
    encoder = TableEncoder(parse_schema(SCHEMA, "test"))
    original = encoder.encode(heaped_table(0))
    altered = encoder.encode(heaped_table(1).sample(frac=1.0, random_state=2, ignore_index=True)
                             .assign(rate=lambda t: t["rate"] + 1.0))
    plain = _state(heaped_table(0), seed=3).coarsening
    switched = _state(heaped_table(0), seed=3, source=FineFrom(original, altered)).coarsening
    other = _state(heaped_table(1).assign(rate=lambda t: t["rate"] + 1.0), seed=3).coarsening
    assert plain.atoms["rate"].any()  # 7.25's cell is heaped
    for attribute in ("liens", "code", "rate", "year"):
        assert np.array_equal(plain.maps[attribute], switched.maps[attribute])
        assert np.array_equal(plain.masses[attribute], switched.masses[attribute])
        assert np.array_equal(plain.atoms[attribute], switched.atoms[attribute])
    assert not np.array_equal(plain.atoms["rate"], other.atoms["rate"])  # 8.25 moved it


def test_decoding_masses_are_the_noisy_ones_not_the_exact_fine_counts() -> None:
    """60 rows (1.2 %) all at 950, below the fine noise's significance (about 4σ ≈ 200 rows), and
    nothing else above 900: exact fine counts as decoding masses would release every row of that
    coarse cell at 950; the noisy masses share the cell's rows over its fine cells. 0 (40 %),
    far above the noise, keeps its share."""
    rng = np.random.default_rng(7)
    liens = np.concatenate([np.zeros(2000, int), rng.integers(1, 900, ROWS - 2060),
                            np.full(60, 950)])
    table = heaped_table().assign(liens=rng.permutation(liens))
    synthetic = Synthesizer(SCHEMA, epsilon=1.0, delta=1e-6, recipe="mst", public_records=ROWS,
                            seed=2).fit(table).synthetic
    above = synthetic["liens"][synthetic["liens"] > 900]
    assert len(above) > 20  # the coarse cell holding 950 kept about its mass (60 rows ± noise)
    assert (above == 950).mean() < 0.5  # exact fine counts: all of them
    assert abs((synthetic["liens"] == 0).mean() - 0.4) < 0.03


def test_fine_masses_keep_significant_cells_and_share_the_rest_equally() -> None:
    sigma = 10.0
    noisy = np.array([500.0, 12.0, -8.0, 29.0, 5.0, 0.0])  # grid cells {0,1,2} and {3,4,5}
    to_grid = np.array([0, 0, 0, 1, 1, 1])
    mass, significant = fine_masses(noisy, to_grid, np.array([520.0, 36.0]), sigma)
    assert significant.tolist() == [True, False, False, False, False, False]
    assert mass == pytest.approx([500.0, 10.0, 10.0, 12.0, 12.0, 12.0])
    capped, _ = fine_masses(noisy, to_grid, np.array([400.0, 36.0]), sigma)
    assert capped[:3] == pytest.approx([400.0, 0.0, 0.0])  # never more than its grid cell
    assert significance(1024) == pytest.approx(np.sqrt(2 * np.log(1024)))
    assert significance(10) == 3.0


def test_the_grid_and_the_fine_sums_combine_by_inverse_variance() -> None:
    """Grid cells {0}, {1, 2, 3}: the one-cell group's two counts (σ 30 and 40) weigh 16:9;
    the three-cell group's fine sum has σ 40·√3, so it weighs less."""
    grid = Measurement(("x",), np.array([100.0, 300.0]), 30.0)
    fine = Measurement(("x",), np.array([120.0, 50.0, 100.0, 60.0]), 40.0)
    both = combine_levels(grid, np.array([0, 1, 1, 1]), fine)
    assert both.noisy_counts[0] == pytest.approx((16 * 100 + 9 * 120) / 25)
    assert both.noisy_counts[1] == pytest.approx((4800 * 300 + 900 * 210) / 5700)
    assert both.sigma == pytest.approx([24.0, np.sqrt(900 * 4800 / 5700)])


def test_a_column_whose_noisy_sum_is_negative_keeps_the_estimated_rows() -> None:
    """A small table's column can sum to ≤ 0 under noise (400 rows over 12 cells at σ = 65):
    its masses then keep n̂ (from every column, or the public count), not its own sum."""
    noisy = np.array([-80.0, 90.0, -60.0, 20.0, -40.0])
    assert fitted_masses(noisy).sum() == 0.0  # its own sum (-70): the column would be empty
    mass = fitted_masses(noisy, total=400.0)
    assert mass.sum() == pytest.approx(400.0) and mass.argmax() == 1


def test_significant_cells_holding_a_bins_worth_get_bins_of_their_own() -> None:
    mapping = np.array([0, 0, 0, 1, 1, 2, 2, 3])  # the last code: missing
    mass = np.array([900.0, 200.0, 5.0, 50.0, 40.0, 60.0, 45.0, 30.0])
    significant = np.array([True, True, False, False, False, True, False, False])
    split = split_point_masses(mapping, mass, significant, bins=32, missing=1)
    assert len({split[0], split[1], split[2]}) == 3  # 0 and 1 of a heaped column apart
    assert split[5] == split[6]  # 60 < the median bin (105): a smooth bin keeps its cells
    assert split[3] == split[4] and split[7] not in split[:7]
    kept = split_point_masses(mapping, mass, significant, bins=3, missing=1)
    assert kept.tolist() == mapping.tolist()  # at its bin count already: no room
    one = split_point_masses(mapping, mass, significant, bins=4, missing=1)
    assert one[0] != one[1] and one[1] == one[2]  # room for one: the largest first


def test_heaps_stand_far_above_their_neighbours() -> None:
    """At σ = 1 (z = 3): 50 stands 4× and over 3·√2σ above both neighbours; 1 next to a
    negative neighbour is no heap (1 < 3σ: noise), nor is 30 next to 35."""
    assert heaped(np.array([1.0, -3.0, 50.0, 2.0, 30.0, 35.0]), 1.0).tolist() == [
        False, False, True, False, False, False]
    assert not heaped(np.array([1.0, -3.0, 50.0, 2.0]), 12.0).any()  # 48 < 3·√2·12 above 2


def test_spread_mass_measured_with_noise_is_not_taken_for_heaps() -> None:
    """A smooth column (every fine cell about 40 rows) measured at σ = 30: noise makes many
    cells 4× a neighbour whose count fell to 0 or below (the ratio alone flagged them, and each
    was decoded at one value); the test at zσ flags about none. A real heap of 500 rows stands
    out in every draw."""
    sigma, cells = 30.0, 1024
    z = significance(cells)
    false, found = 0, 0
    for seed in range(20):
        noisy = 40.0 + np.random.default_rng(seed).normal(0.0, sigma, cells)
        false += int(heaped(noisy, sigma, z).sum())
        noisy[300] = 500.0 + np.random.default_rng(seed + 100).normal(0.0, sigma)
        found += bool(heaped(noisy, sigma, z)[300])
    assert false <= 2 and found == 20


@pytest.mark.parametrize(("low", "high", "closed", "value"), [
    (95.3, 100.2, False, 100.0), (-2.0, -1.0, True, -1.0), (4.98, 5.03, False, 5.0),
    (7.236, 7.266, False, 7.25), (-0.05, 0.05, False, 0.0), (0.695, 0.7049, False, 0.7),
    (99.9, 100.0, False, 99.9), (1990.0, 1990.0, True, 1990.0),
])
def test_a_heap_is_decoded_at_the_roundest_value_of_its_cell(
    low: float, high: float, closed: bool, value: float
) -> None:
    assert roundest(low, high, closed) == value


def test_a_loaded_model_resamples_heaps_at_their_value(tmp_path) -> None:
    """The heaped cells are part of the saved model (coarsening_i_atom): a resample from the
    release folder puts the rate's 36 % back at exactly 7.25."""
    data = heaped_table()
    fitted = Synthesizer(SCHEMA, epsilon=1.0, delta=1e-6, recipe="mst", public_records=ROWS,
                         seed=5).fit(data)
    folder = fitted.release(tmp_path / "release")
    resampled = Synthesizer.load(folder).sample(ROWS)
    assert abs(np.isclose(resampled["rate"], 7.25).mean() - 0.36) < 0.03


def test_a_continuous_pile_at_a_bound_is_measured_at_the_grids_noise() -> None:
    """80 % of a continuous fee at its lower bound 0 (1,500 rows, as the release-format test):
    the fine cell [0, 0.29) is a measured grid cell of its own (``measured_grid``), so the
    decoding mass of 0 errs by the grid and fine counts combined (``combine_levels``), not by the
    fine count alone. Inside a 25-cell grid cell the fine count set 0's share (min(fine, grid):
    RMS error 56 rows here, 2.6× the combined σ) and at the release-format test's ε = 1 the pile
    came back at 73–75 % in about 3 runs of 20."""
    rows = 1500
    schema = {"columns": [{"name": "fee", "kind": "continuous", "lower": 0, "upper": 300},
                          {"name": "kind", "kind": "categorical", "categories": ["a", "b"]}]}
    encoder = TableEncoder(parse_schema(schema, "test"))
    rng = np.random.default_rng(0)
    table = pd.DataFrame({
        "fee": np.where(rng.random(rows) < 0.8, 0.0, np.round(rng.uniform(1, 300, rows), 2)),
        "kind": rng.choice(["a", "b"], rows)})
    data = encoder.encode(table)
    context = PlanContext(encoder.domain, "add_remove", 1e-6, public_records=rows,
                          adaptive=frozenset({"fee"}))
    # 1 % of ρ on the fine marginal (σ about 90 rows, the grid's about 20) makes the two plain
    stage = MarginalsStage({"selection": "mst", "iterations": 5, "point_mass_fraction": 0.01},
                           context, "test")
    plan = stage.plan(1.0 / 160)
    sigma_grid, sigma_fine = plan.noise["sigma_one_way"], plan.noise["sigma_fine"]
    combined = (sigma_grid ** -2 + sigma_fine ** -2) ** -0.5  # combine_levels on a one-cell group
    errors, alone = [], []
    for seed in range(12):
        state = PipelineState(context, encoder, data)
        stage.run(state, plan, Ledger(), RandomSource.seeded(seed))
        alone.append((state.coarsening.maps["fee"] == state.coarsening.maps["fee"][0]).sum() == 1)
        errors.append(state.coarsening.masses["fee"][0] - float((table["fee"] == 0).sum()))
    rms = float(np.sqrt(np.mean(np.square(errors))))
    # 12 draws: the RMS of N(0, σ) stays under 1.5σ with probability > 0.99 (χ²₁₂)
    assert sigma_fine > 2 * combined and rms < 1.5 * combined, (rms, combined, sigma_fine)
