"""The shaped fine grid (issue 24 item 4): a wide numeric column's fine cells follow the noisy mass
of its octaves (``grid_shape``, written by the DP domain step from its bounds histogram), so a
heavy-tailed amount keeps its log-shape in the release."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv import Synthesizer
from synthpriv.config import load_job
from synthpriv.domain_stage import grid_shape_within
from synthpriv.errors import SchemaError
from synthpriv.marginals.compress import grid_cells
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import EXTEND_NOISE, Buckets, octave_shape, read_bounds
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import FINE_CELLS, NumericColumn, parse_schema

BREAKS = [512, 1024, 2048, 4096, 8192, 16384, 32768]
MASS = [10, 180, 230, 170, 140, 80, 60, 40]


def _column(kind: str = "integer", **extra) -> NumericColumn:
    return NumericColumn(name="x", kind=kind, lower=0, upper=65535,
                         grid_shape={"breaks": BREAKS, "mass": MASS}, **extra)


def _cells_per_segment(edges: np.ndarray, segments: list[float]) -> np.ndarray:
    """How many cells start in each segment [s_i, s_i+1)."""
    return np.histogram(edges[:-1], bins=segments)[0]


@pytest.mark.parametrize("kind", ["integer", "continuous"])
def test_cells_per_octave_follow_the_mass(kind: str) -> None:
    # the shape's arithmetic without the round values' one-value cells (synthpriv.rounds), which
    # add at most two edges each
    column = _column(kind)
    edges = column.bin_edges(rounds=False)
    assert len(column.bin_edges()) - len(edges) <= 2 * len(column.round_values())
    assert np.all(np.diff(edges) > 0) and edges[0] == 0
    assert len(edges) - 1 == pytest.approx(FINE_CELLS, abs=4)
    counts = _cells_per_segment(edges, [0, *BREAKS, 65536])
    # one cell per octave each (the first segment: integers 1-511, 9 octaves; continuous
    # [0, 512), 2^-16 to 2^8 and the bucket around 0, 26), the rest in proportion to the mass
    # (integers: 1,022 between the bounds' own cells; 0 and 1 get cells of their own)
    floors = np.array([9 if kind == "integer" else 26] + [1] * (len(MASS) - 1))
    spare = (FINE_CELLS - 2 if kind == "integer" else FINE_CELLS) - floors.sum()
    expected = floors + spare * np.array(MASS) / sum(MASS)
    assert np.abs(counts - expected).max() <= 3, (counts, expected.round(1))
    # equal width within a segment (integers: up to rounding to whole numbers)
    inside = edges[(edges >= 1024) & (edges <= 2048)]
    assert np.ptp(np.diff(inside)) <= (1 if kind == "integer" else 1e-9)
    if kind == "integer":
        assert np.all(edges == np.round(edges)) and edges[-1] == 65536
        for cell in (0, 1, 65535):  # the bounds' cells and 1's alone
            assert cell in edges and cell + 1 in edges


def test_point_masses_keep_their_own_cells_without_slivers() -> None:
    integer = _column(point_masses=[0, 1000, 5000])
    edges = integer.bin_edges()
    for value in (1000, 5000):
        assert value in edges and value + 1 in edges
    continuous = _column("continuous", point_masses=[0.0, 1000.0])
    edges = continuous.bin_edges()
    cells = continuous.point_mass_cells()
    assert list(edges[cells]) == [0.0, 1000.0]
    local = continuous.grid_cell_width(np.array([1000.0]))[0]  # a cell of [512, 1024)
    beside = np.diff(edges)[[cells[1] - 1, cells[1] + 1]]
    assert local == pytest.approx(512 / (1 + (FINE_CELLS - 33) * 180 / sum(MASS)), rel=0.01)
    assert beside.min() >= local / 2 - 1e-9  # no sliver beside the point mass's cell


def test_an_integer_segment_gets_no_more_cells_than_integers() -> None:
    column = NumericColumn(name="x", kind="integer", lower=0, upper=4999,
                           grid_shape={"breaks": [100], "mass": [1000, 1]})
    edges = column.bin_edges()
    assert np.all(edges == np.round(edges)) and np.all(np.diff(edges) >= 1)
    assert _cells_per_segment(edges, [0, 100, 5000])[0] == 100  # one per integer, not 1,000
    assert len(edges) - 1 == pytest.approx(FINE_CELLS, abs=4)  # the rest went above


def test_a_continuous_segment_gets_no_cell_narrower_than_its_precision() -> None:
    column = NumericColumn(name="x", kind="continuous", lower=0, upper=1000, precision=1,
                           grid_shape={"breaks": [1], "mass": [1000, 1]})
    edges = column.bin_edges()
    assert _cells_per_segment(edges, [0, 1, 1000.001])[0] == 10  # steps of 0.1 in [0, 1)
    assert np.diff(edges).min() >= 0.1 - 1e-12


def test_a_grid_the_shape_cannot_move_is_todays() -> None:
    """A narrow integer range (age [0, 127]) keeps one cell per integer, shape or none; a shape
    of zero mass everywhere is the equal-width grid."""
    age = NumericColumn(name="age", kind="integer", lower=0, upper=127,
                        grid_shape={"breaks": [64], "mass": [1, 1000]})
    assert list(age.bin_edges()) == list(range(129))
    assert grid_shape_within("integer", 0, 127, ((16.0, 10.0), (64.0, 900.0))) is None
    # a rate within one octave, [0.5, 1): one segment, no shape, equal-width cells
    buckets, noisy = Buckets("continuous"), np.zeros(Buckets("continuous").size)
    noisy[buckets.index(np.array([0.7]))] = 900
    reading = read_bounds(noisy, 10.0, buckets)
    assert (reading.lower, reading.upper) == (0.5, 1.0)
    shape = octave_shape(noisy, 10.0, buckets, reading)
    assert shape == ((0.5, 900.0),) and grid_shape_within("continuous", 0.5, 1.0, shape) is None
    flat = NumericColumn(name="x", kind="continuous", lower=0, upper=100,
                         grid_shape={"breaks": [50], "mass": [0, 0]})
    plain = NumericColumn(name="x", kind="continuous", lower=0, upper=100)
    assert np.allclose(flat.bin_edges(), plain.bin_edges())


def test_the_measured_grid_of_a_shaped_column_is_todays_equal_width_grid() -> None:
    """The grid the 1-way marginal is measured on groups fine cells by value (cells of equal
    width over the bounds), so a shape moves only the fine cells within a grid cell, not the
    grid cells whose counts the measurement resolves (grouped by count, Adult's fnlwgt bulk
    got grid cells of ~2σ instead of ~14σ)."""
    from synthpriv.encoding import TableEncoder
    from synthpriv.marginals.compress import measured_grid

    for column in (_column("continuous"), _column("integer")):
        schema = parse_schema({"columns": [column.model_dump(exclude_none=True)]}, "test")
        column = schema.column("x")
        grid = measured_grid(schema, TableEncoder(schema).domain, 1000.0, 50.0)
        cells = grid_cells(1000.0, 50.0, FINE_CELLS)  # 10 grid cells of 6,554
        left = column.bin_edges()[:-1]
        groups = grid.maps["x"][:len(left)]
        starts = left[np.r_[True, groups[1:] != groups[:-1]]]
        typed = column.round_values()  # round values' cells alone too (synthpriv.rounds)
        ordinary = starts[~np.isin(starts, [0, 1, 2, 65535, *typed, *(typed + 1)])]
        width = 65535 / cells
        assert len(ordinary) >= cells - 2
        assert np.all(np.abs(ordinary / width - np.round(ordinary / width)) * width
                      <= np.diff(left).max())  # each grid cell starts at a multiple of 6,554


def test_a_shaped_grids_narrow_cells_are_never_significant_alone() -> None:
    """A fine cell narrower than the equal-width grid's holds about n̂/1,024 rows: the fine
    noise cannot see it, so ``compose`` never keeps its noisy count alone (in a cell of two
    values such noise was released as a 6 % spike, tests/marginals/test_lone_cells.py); the
    a-priori cells (bounds, 0, 1) and declared point masses keep their own tests."""
    from synthpriv.encoding import TableEncoder
    from synthpriv.marginals.compress import measured_grid

    column = _column(point_masses=[1000])
    schema = parse_schema({"columns": [column.model_dump(exclude_none=True)]}, "test")
    column = schema.column("x")
    grid = measured_grid(schema, TableEncoder(schema).domain, 1000.0, 50.0)
    edges = column.bin_edges()
    narrow = grid.narrow["x"][:len(edges) - 1]
    assert np.array_equal(narrow & ~grid.priors["x"][:len(edges) - 1],
                          (np.diff(edges) < 65535 / FINE_CELLS) & ~grid.priors["x"][:len(edges) - 1])
    assert narrow.sum() > 500  # the bulk's cells
    for value in (0, 1, 1000, 65535):  # a-priori and declared cells: their own tests
        assert not narrow[int(np.searchsorted(edges, value, side="right")) - 1]
    plain = NumericColumn(name="x", kind="integer", lower=0, upper=65535)
    schema = parse_schema({"columns": [plain.model_dump(exclude_none=True)]}, "test")
    assert "x" not in measured_grid(schema, TableEncoder(schema).domain, 1000.0, 50.0).narrow


@pytest.mark.parametrize(("shape", "message"), [
    ({"breaks": [70000], "mass": [1, 1]}, "not strictly inside the bounds"),
    ({"breaks": [10.5], "mass": [1, 1]}, "must be whole numbers"),
    ({"breaks": [10], "mass": [1]}, "one mass per segment"),
    ({"breaks": [20, 10], "mass": [1, 1, 1]}, "increase strictly"),
    ({"breaks": [10], "mass": [1, -1]}, "finite number ≥ 0"),
])
def test_a_written_shape_is_checked(shape: dict, message: str) -> None:
    column = {"name": "x", "kind": "integer", "lower": 0, "upper": 65535, "grid_shape": shape}
    with pytest.raises(SchemaError, match=message):
        parse_schema({"columns": [column]}, "test")
    with pytest.raises(SchemaError, match="needs lower and upper"):
        parse_schema({"columns": [{"name": "x", "kind": "integer", "lower": 0,
                                   "grid_shape": {"breaks": [], "mass": [1]}}]}, "test")


def test_octave_shape_reads_the_noisy_counts_and_merges_what_the_noise_hides() -> None:
    buckets, sigma = Buckets("integer"), 10.0
    noisy = np.zeros(buckets.size)
    zero = buckets.zero
    # buckets 2^9..2^13 (512..16,383) hold the mass; 2^0..2^8 noise only (two below 2.5σ)
    noisy[zero + 10: zero + 15] = [300, 250, 200, 150, 100]
    noisy[zero + 1: zero + 10] = [3, -5, 8, 0, 2, -1, 4, 30, 1]
    reading = read_bounds(noisy, sigma, buckets)
    assert reading.first <= zero + 10
    shape = octave_shape(noisy, sigma, buckets, reading)
    starts = [start for start, _ in shape]
    assert starts == sorted(starts)
    for start, mass in shape:
        bucket = int(buckets.index(np.array([start]))[0])
        if noisy[bucket] >= EXTEND_NOISE * sigma and start > 0:
            assert mass == noisy[bucket]  # a bucket the noise shows: its own segment
    # the guard took the lower bound down to 0: 1-511 make one run (none in the support the
    # bounds were read from: 128's 30 ≥ 2.5σ stands apart from it, as noise makes 0.6 % of
    # empty buckets); the zero bucket starts it, adding no mass. Its 9 buckets' noise sums to
    # 42 < 2.5σ·√9 = 75: the guard's noise shows no hidden tail and adds nothing (guard_noise)
    assert reading.first == zero and reading.guarded[0]
    assert shape[0] == (0.0, 0.0) and shape[1][0] == 512
    noisy[zero + 1: zero + 10] = [30, 20, 8, 0, 2, -1, 4, 3, 5]  # 71: still under 75
    assert read_bounds(noisy, sigma, buckets) == reading  # the same read-out
    assert octave_shape(noisy, sigma, buckets, reading)[0] == (0.0, 0.0)
    noisy[zero + 1: zero + 10] = [40, 35, 8, 0, 2, -1, 4, 3, 1]  # 92 ≥ 75: a tail hides there
    assert read_bounds(noisy, sigma, buckets) == reading  # the same read-out
    assert octave_shape(noisy, sigma, buckets, reading)[0] == (0.0, 92.0)
    noisy[zero + 1: zero + 10] = [-30, 3, 1, -2, 0, 5, -1, 2, 1]  # net negative noise
    assert octave_shape(noisy, sigma, buckets, reading)[0] == (0.0, 0.0)
    noisy[zero] = 5000  # a pile at 0: no mass (the cell holding 0 carries it), no segment
    assert octave_shape(noisy, sigma, buckets, reading)[0] == (0.0, 0.0)


# --- the domain step: the shape is post-processing of the noisy histogram only ----------------


def _amounts(rows: int, seed: int, offset: int = 500, spread: float = 2.5) -> pd.DataFrame:
    """A heavy-tailed amount (log-normal, median ~1,000 + offset, over ~12 octaves) and a
    categorical column."""
    rng = np.random.default_rng(seed)
    amount = np.round(np.exp(rng.normal(np.log(1000), spread, rows))).astype(int) + offset
    return pd.DataFrame({"amount": amount, "group": rng.choice(["a", "b", "c"], rows)})


SCHEMA = {"columns": [{"name": "amount", "kind": "integer"},
                      {"name": "group", "kind": "categorical", "categories": ["a", "b", "c"]}]}


def _job(folder) -> object:
    (folder / "schema.yaml").write_text(yaml.safe_dump(SCHEMA))
    (folder / "job.yaml").write_text(yaml.safe_dump({
        "name": "octgrid", "data": {"path": "train.csv", "schema": "schema.yaml"},
        "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "mst"},
        "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}, "seed": 1}))
    _amounts(10, 0).to_csv(folder / "train.csv", index=False)
    return load_job(folder / "job.yaml")


def _resolve(job, planned, table: pd.DataFrame, seed: int):
    ledger = Ledger(job.config.budget.neighbouring)
    resolved, _ = resolve_domain(job, planned, ledger, RandomSource.seeded(seed), [table])
    return resolved.schema.column("amount")


def test_the_domain_step_writes_the_shape_of_the_noisy_histogram(tmp_path, monkeypatch) -> None:
    """The grid shape is the noisy bucket counts' (as the mechanism returned them), never the
    exact ones; and a table changed after the measurement, its noisy histogram replayed, gives
    the same shape and bounds."""
    import synthpriv.domain_stage as stage

    job = _job(tmp_path)
    planned = plan_job(job)
    sigma = planned[0].stages[0].noise["sigma"]
    real = stage.discrete_gaussian_histogram
    outputs: list[np.ndarray] = []
    exact: list[np.ndarray] = []

    def recorded(counts, noise, source):
        exact.append(np.asarray(counts).copy())
        outputs.append(real(counts, noise, source))
        return outputs[-1]

    monkeypatch.setattr(stage, "discrete_gaussian_histogram", recorded)
    table = _amounts(1000, 3)
    column = _resolve(job, planned, table, seed=5)
    (noisy,), (counts,) = outputs, exact
    assert not np.array_equal(noisy, counts)  # the noise moved the counts: a test can fail
    buckets = Buckets("integer")
    reading = read_bounds(noisy, sigma, buckets, 1)
    expected = grid_shape_within("integer", column.lower, column.upper,
                                 octave_shape(noisy, sigma, buckets, reading, 1))
    assert column.grid_shape is not None and len(column.grid_shape.breaks) >= 5
    assert column.grid_shape.model_dump() == expected
    from_exact = grid_shape_within("integer", column.lower, column.upper,
                                   octave_shape(counts.astype(float), sigma, buckets, reading))
    assert column.grid_shape.model_dump() != from_exact

    # the raw table altered after the measurement: its noisy histogram replayed, nothing moves
    monkeypatch.setattr(stage, "discrete_gaussian_histogram", lambda counts, noise, source: noisy)
    altered = _amounts(1000, 4, offset=0, spread=1.0)  # another table: other bucket counts
    assert not np.array_equal(buckets.counts(altered["amount"].to_numpy(float)), counts)
    again = _resolve(job, planned, altered, seed=5)
    assert (again.lower, again.upper, again.grid_shape) == (column.lower, column.upper,
                                                           column.grid_shape)


# --- the release keeps a heavy tail's quantiles ----------------------------------------------


QUANTILES = np.array([0.1, 0.25, 0.5, 0.75, 0.9])


@pytest.mark.parametrize("seed", [0, 1])
def test_a_heavy_tailed_amount_keeps_its_quantiles(seed: int) -> None:
    """1,000 rows of a log-normal amount over ~12 octaves (real minimum 501), DP bounds [0,
    65,535]: an equal-width grid of cells of 64 released the lowest tenth below the real minimum
    (rank 0 at the 10 % quantile, every seed) and the quartile 0.07–0.11 low in rank. Each
    released quantile's rank in the real column must be within three standard deviations of the
    release's sampling error (n rows) plus three of the 1-way noise of the cumulative count up to
    it (σ₁·√m/n, the plan's σ₁ over the m measured grid cells at or below it: the arithmetic of
    ``compress.grid_cells``). One bin's σ₁/n alone failed main's own release in 6 seeds of 10
    (seeds 0 and 1 passed); the round values' lone cells (branch roundcells) add grid cells and
    tipped seed 0 (0.92 → 1.07 of that tolerance); with σ₁·√m/n main reads 0.44-1.12 of it and
    the branch 0.61-1.13 over seeds 0-5."""
    from synthpriv.encoding import TableEncoder
    from synthpriv.marginals.compress import measured_grid

    table = _amounts(1000, 0)
    synth = Synthesizer(SCHEMA, epsilon=1.0, seed=seed, recipe="mst").fit(table)
    column = synth._fitted.synthesis.job.schema.column("amount")
    assert column.grid_shape is not None
    released = pd.to_numeric(synth.synthetic["amount"]).dropna().to_numpy()
    real, rows = table["amount"].to_numpy(), len(table)
    assert np.all(released == np.round(released))
    assert column.lower <= released.min() and released.max() <= column.upper
    sigma = next(stage.noise["sigma_one_way"] for stage in synth._fitted.synthesis.plan.stages
                 if "sigma_one_way" in stage.noise)
    values = np.quantile(released, QUANTILES)
    ranks = np.array([(real <= v).mean() for v in values])
    one = parse_schema({"columns": [column.model_dump(exclude_none=True)]}, "test")
    grid = measured_grid(one, TableEncoder(one).domain, float(rows), sigma)
    left = column.bin_edges()[:-1]
    groups = grid.maps["amount"][:len(left)]
    starts = left[np.r_[True, groups[1:] != groups[:-1]]]
    below = np.array([(starts <= v).sum() for v in values])
    tolerance = (3 * np.sqrt(QUANTILES * (1 - QUANTILES) / rows)
                 + 3 * sigma * np.sqrt(below) / rows)
    assert np.all(np.abs(ranks - QUANTILES) <= tolerance), (ranks - QUANTILES, tolerance)
