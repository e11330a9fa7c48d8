"""Public point masses (``NumericColumn.point_masses``, issue 24 item 4): a declared value gets a
fine cell of its own and is released at exactly that value with about its share, wherever it
sits (3.258096, not a round number); a declared value holding no rows makes no spike; the schema
refuses a point mass it cannot hold; the data-read draft writes the column's heaps."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv.api import Synthesizer
from synthpriv.encoding import TableEncoder
from synthpriv.schema import NumericColumn, parse_schema
from synthpriv.schema_infer import infer_schema

ROWS = 5000
HEAP = 3.258096  # randhie's lncoins: 20 % of rows, decoded at 3.25 or spread before


def heaped(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "group": rng.choice(["a", "b"], ROWS),
        "lncoins": np.where(rng.random(ROWS) < 0.2, HEAP, np.round(rng.uniform(0, 4.6, ROWS), 4)),
        "amount": np.where(rng.random(ROWS) < 0.1, 12345, rng.integers(0, 100_000, ROWS)),
    })


def schema(masses: bool = True) -> dict:
    return {"columns": [
        {"name": "group", "kind": "categorical", "categories": ["a", "b"]},
        {"name": "lncoins", "kind": "continuous", "lower": 0, "upper": 4.61,
         **({"point_masses": [HEAP, 1.0]} if masses else {})},
        {"name": "amount", "kind": "integer", "lower": 0, "upper": 100_000,
         **({"point_masses": [12345, 15000]} if masses else {})},
    ]}


@pytest.mark.parametrize("kind, value, lower, upper", [
    ("continuous", HEAP, 0.0, 4.61), ("continuous", 0.0, 0.0, 4.61),
    ("continuous", 4.61, 0.0, 4.61), ("integer", 12345, 0, 100_000), ("integer", 0, 0, 100_000),
    ("integer", 100_000, 0, 100_000)])
def test_a_point_mass_has_a_cell_holding_it_alone(kind, value, lower, upper) -> None:
    column = NumericColumn(name="x", kind=kind, lower=lower, upper=upper, point_masses=[value])
    edges = column.bin_edges()
    (cell,) = column.point_mass_cells()
    assert np.all(np.diff(edges) > 0)
    assert edges[0] == lower and upper <= edges[-1] <= upper + 1
    assert edges[cell] <= value < edges[cell + 1]
    # the cell holds no other value of the column's kind
    neighbours = [value - 1, value + 1] if kind == "integer" else [
        np.nextafter(value, -np.inf), np.nextafter(value, np.inf)]
    encoder = TableEncoder(parse_schema({"columns": [column.model_dump()]}, "test"))
    codes = encoder.encode(pd.DataFrame({"x": [value] + [
        n for n in neighbours if lower <= n <= upper]})).codes[:, 0]
    assert codes[0] == cell and np.all(codes[1:] != cell)
    # decoding writes exactly the value
    decoded = encoder.decode(np.full((50, 1), cell), np.random.default_rng(0))["x"]
    assert (decoded.astype(float) == value).all()


@pytest.mark.parametrize("entry, says", [
    ({"kind": "integer", "point_masses": [2.5]}, "not a whole number"),
    ({"kind": "continuous", "point_masses": [11.0]}, "outside its bounds"),
    ({"kind": "continuous", "bins": 5, "point_masses": [1.0]}, "adaptive grid"),
    ({"kind": "continuous", "precision": 1, "point_masses": [1.25]}, "precision"),
    ({"kind": "continuous", "point_masses": [1.0, 1.0]}, "repeat"),
])
def test_the_schema_refuses_a_point_mass_it_cannot_hold(entry, says) -> None:
    with pytest.raises(ValueError, match=says) as error:
        NumericColumn(name="rate", lower=0, upper=10, **entry)
    assert "'rate'" in str(error.value)


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_a_declared_point_mass_comes_back_at_exactly_its_value(recipe: str) -> None:
    """20 % at 3.258096 comes back 20 % at exactly 3.258096 (without the declaration: 0 %, the
    cell decoded spread or at 3.25); a declared value holding no row (1.0, 15,000) holds about
    none. Tolerance: 4σ of the fine cell's noise (the plan's sigma_fine) over the rows, plus 4σ
    of the synthetic sample's binomial draw."""
    data = heaped()
    synthesizer = Synthesizer(schema(), epsilon=1.0, delta=1e-6, recipe=recipe,
                              public_records=ROWS, seed=3).fit(data)
    synthetic = synthesizer.synthetic
    (marginals,) = [s for s in synthesizer.plan().to_dict()["stages"] if s["stage"] == "marginals"]
    sigma = marginals["noise"]["sigma_fine"]
    for column, value in [("lncoins", HEAP), ("amount", 12345), ("lncoins", 1.0),
                          ("amount", 15000)]:
        real = float(np.mean(data[column] == value))
        released = float(np.mean(synthetic[column].astype(float) == value))
        tolerance = 4 * sigma / ROWS + 4 * np.sqrt(max(real, 0.01) * (1 - real) / ROWS)
        assert abs(released - real) <= tolerance, (column, value, real, released, tolerance)


def test_without_the_declaration_the_heap_is_lost() -> None:
    """The gap the declaration closes (benchmarks/README.md, randhie's lncoins): the same table
    and seed without point_masses release no row at exactly 3.258096."""
    synthetic = Synthesizer(schema(masses=False), epsilon=1.0, delta=1e-6, recipe="mst",
                            public_records=ROWS, seed=3).fit(heaped()).synthetic
    assert float(np.mean(synthetic["lncoins"] == HEAP)) < 0.05


def test_the_data_read_draft_writes_the_heaps_of_a_numeric_column(tmp_path) -> None:
    """Values holding ≥ 1 % of the cells, seen twice or more, become point masses; a value seen
    once (even in a small table, where it is ≥ 1 %) does not."""
    data = heaped().head(1000)
    data.to_csv(tmp_path / "t.csv", index=False)
    drafted, _ = infer_schema(tmp_path / "t.csv")
    columns = {c["name"]: c for c in drafted["columns"]}
    assert HEAP in columns["lncoins"]["point_masses"]
    assert 12345 in columns["amount"]["point_masses"]
    counts = data["amount"].value_counts()
    assert set(columns["amount"]["point_masses"]) == set(counts[counts >= 10].index)
    small = pd.DataFrame({"x": [1.5, 2.5, 2.5, 3.75, 4.0, 5.25] * 3 + [9.125]})
    small.to_csv(tmp_path / "s.csv", index=False)
    (column,) = infer_schema(tmp_path / "s.csv")[0]["columns"]
    assert column["point_masses"] == [1.5, 2.5, 3.75, 4.0, 5.25]
    parse_schema(drafted, "draft")  # the run accepts what the draft wrote


def test_no_sliver_beside_a_point_mass_adds_decimals() -> None:
    """The cells beside a point mass's own are at least half a fine cell wide, and every value
    decoded outside the point masses carries the decimals of the grid without them (randhie's
    safe release wrote 6-decimal values in 5 columns before: slivers [3.2580, 3.258096))."""
    plain = NumericColumn(name="x", kind="continuous", lower=0, upper=4.61)
    column = plain.model_copy(update={"point_masses": [0.0, HEAP, 4.564348, 4.61]})
    edges = column.bin_edges()
    widths = np.diff(edges)
    regular = 4.61 / len(plain.bin_edges()[1:])
    cells = column.point_mass_cells()
    others = np.setdiff1d(np.arange(len(widths)), cells)
    assert widths[others].min() >= regular / 2
    encoder = TableEncoder(parse_schema({"columns": [column.model_dump()]}, "test"))
    codes = np.repeat(others, 20)[:, None]
    values = encoder.decode(codes, np.random.default_rng(0))["x"].astype(float)
    written = values.map(lambda v: len(f"{v!r}".split(".")[1]) if "." in f"{v!r}" else 0)
    assert written.max() <= int(np.ceil(-np.log10(regular))) + 1


@pytest.mark.parametrize("lower, upper, value", [
    (-2.0**-16, 1.0, 0.0), (0.0, 1.0, 1.0 - 2.0**-16), (0.0, 1.0, 0.0), (0.0, 1.0, 1.0)])
def test_a_point_mass_beside_a_bound_takes_the_sliver_in(lower, upper, value) -> None:
    """A heap at 0 under a DP lower bound of -2⁻¹⁶ (Bikeshare's windspeed): no cell [-2⁻¹⁶, 0)
    is left to release -0.00001 from; the point mass's cell reaches the bound and every value
    decoded is inside the bounds with the grid's decimals, the point mass written exactly."""
    column = NumericColumn(name="x", kind="continuous", lower=lower, upper=upper,
                           point_masses=[value])
    edges = column.bin_edges()
    (cell,) = column.point_mass_cells()
    assert edges[cell] <= value < edges[cell + 1] or (value == upper and cell == len(edges) - 2)
    others = np.setdiff1d(np.arange(len(edges) - 1), [cell])
    assert np.diff(edges)[others].min() >= (upper - lower) / 1024 / 2
    encoder = TableEncoder(parse_schema({"columns": [column.model_dump()]}, "test"))
    values = encoder.decode(np.repeat(np.arange(len(edges) - 1), 5)[:, None],
                            np.random.default_rng(0))["x"].astype(float)
    assert values.between(lower, upper).all() and (values >= 0).all()
    assert (values[np.repeat(np.arange(len(edges) - 1), 5) == cell] == value).all()


def test_a_declared_heap_keeps_its_mass_between_two_and_the_union_bound_sigma() -> None:
    """compose: a declared point mass is a public pre-selection, so its lone cell keeps its noisy
    mass from 2σ (POINT_SIGNIFICANCE), not only from the √(2 ln cells)·σ union bound over the
    grid (3.7σ at 1,024 cells) or MST's 3σ: 2009 with 250 rows at σ = 100 keeps them (they
    went to the other values of its coarse cell before: Wage's 2009 under AIM). A declared value
    holding nothing (2020) stays about empty: no spike."""
    from synthpriv.marginals.compress import (
        POINT_SIGNIFICANCE,
        choose_coarsening,
        compose,
        measured_grid,
        significance,
    )
    from synthpriv.marginals.measurement import Measurement

    schema = parse_schema({"columns": [{"name": "year", "kind": "integer", "lower": 1024,
                                        "upper": 2047, "point_masses": [2009, 2020]}]}, "test")
    fine = TableEncoder(schema).domain
    sigma, rows = 100.0, 2400
    assert POINT_SIGNIFICANCE * sigma <= 250 < min(3, significance(fine["year"])) * sigma
    exact = np.zeros(fine["year"])
    years = np.arange(2003, 2010) - 1024
    exact[years] = [400, 400, 400, 250, 250, 250, 250]
    grid = measured_grid(schema, fine, rows, sigma)
    to_grid = grid.maps["year"]
    grid_counts = np.bincount(to_grid, weights=exact, minlength=grid.coarse["year"])
    chosen = choose_coarsening(schema, grid.coarse, [Measurement(("year",), grid_counts, sigma)],
                               rows)
    total = compose(grid, chosen, {"year": Measurement(("year",), exact, sigma)},
                    frozenset(), {"year": 32})
    mass = total.masses["year"]
    assert mass[2009 - 1024] == pytest.approx(250, rel=0.05)
    assert mass[2020 - 1024] <= POINT_SIGNIFICANCE * sigma / 10
