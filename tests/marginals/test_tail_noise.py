"""A real thin tail that does not fall steadily kept by the tail fit, an empty
tail's coarse cell drawn where the tail starts (``compress.empty_tails``), and who takes a pooled
lone cell's mass (``compress.spread_lone_noise``), issue 24 item 4.

Noise as in test_monotone_tails.py (σ_g = 85 for the grid 1-way, σ_f = 200 for the fine one,
combined as the marginals stage does, then ``choose_coarsening`` and ``compose``); what is
checked is the decoding mass ``compose`` gives the fine cells, and, for the empty coarse cell, the
values a later noisy 1-way of the coarse cells would decode (``Coarsening.refine``)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import (
    EMPTY_SHARE,
    bin_count,
    choose_coarsening,
    combine_levels,
    compose,
    empty_tails,
    measured_grid,
    pile_cells,
    spread_lone_noise,
)
from synthpriv.marginals.measurement import Measurement
from synthpriv.schema import parse_schema

SIGMA_GRID, SIGMA_FINE = 85.0, 200.0
DRAWS = 100


def _schema(upper: int = 255):
    return parse_schema({"columns": [
        {"name": "x", "kind": "integer", "lower": 0, "upper": upper,
         "spread_clipped": ["upper"]},  # DP bounds, as the domain step writes [0, upper]
        {"name": "group", "kind": "categorical", "categories": list("abc")},
    ]}, "test")


def _counts(schema, values: np.ndarray) -> np.ndarray:
    edges = schema.column("x").bin_edges()
    return np.bincount(np.searchsorted(edges, values, side="right") - 1,
                       minlength=len(edges) - 1).astype(float)


def _masses(schema, exact: np.ndarray, seed: int, rows: int, planted: dict[int, float]
            | None = None):
    """(fine masses of ``x`` after ``compose``, the composed coarsening, the measured grid):
    both levels of the 1-way measured with seeded Gaussian noise, ``planted`` rows added to
    the noise of some grid cells (a noise excursion as one seed of a real run drew it)."""
    rng = np.random.default_rng(seed)
    grid = measured_grid(schema, TableEncoder(schema).domain, rows, SIGMA_GRID)
    to_grid, cells = grid.maps["x"], grid.coarse["x"]
    noise = rng.normal(0, SIGMA_GRID, cells)
    for cell, rows_ in (planted or {}).items():
        noise[cell] += rows_
    fine = Measurement(("x",), exact + rng.normal(0, SIGMA_FINE, len(exact)), SIGMA_FINE)
    measured = Measurement(("x",), np.bincount(to_grid, exact, cells) + noise, SIGMA_GRID)
    group = Measurement(("group",), np.full(3, rows / 3) + rng.normal(0, SIGMA_GRID, 3),
                        SIGMA_GRID)
    chosen = choose_coarsening(schema, grid.coarse, [measured, group], rows,
                               combined={"x": combine_levels(measured, to_grid, fine)}, grid=grid)
    total = compose(grid, chosen, {"x": fine}, bins={"x": bin_count(rows, SIGMA_GRID)})
    return total.masses["x"], total, grid


# Adult's hours-per-week above 74 (32,561 rows): heaps at 75, 80, 84, 90, 99, a few rows between
ADULT_HOURS_TAIL = {75: 66, 76: 3, 77: 6, 78: 8, 80: 133, 81: 3, 82: 1, 84: 45, 85: 13, 86: 2,
                    87: 1, 88: 2, 89: 2, 90: 29, 91: 3, 92: 1, 94: 1, 95: 2, 96: 5, 97: 2,
                    98: 11, 99: 85}


def test_a_real_thin_tail_that_does_not_fall_steadily_is_kept() -> None:
    """Adult's hours-per-week (32,000 rows on DP bounds [0, 127], one value a grid cell): a bulk
    around 40 with heaps at 40, 50, 60, and above 74 Adult's own thin tail (424 rows, heaps at
    75, 80, 84, 99, none ≥ 3σ), not monotone. Over 200 draws its mass is kept within one grid
    cell's noise σ_g and the empty cells past 99 hold less than σ_g."""
    schema, rows = _schema(127), 32_000
    rng = np.random.default_rng(2)
    tail_rows = sum(ADULT_HOURS_TAIL.values())
    bulk = np.clip(np.round(rng.normal(41, 10, rows - tail_rows)), 1, 74)
    bulk[:4_000], bulk[4_000:6_000], bulk[6_000:7_400] = 40, 50, 60
    tail = np.repeat(list(ADULT_HOURS_TAIL), list(ADULT_HOURS_TAIL.values()))
    exact = _counts(schema, np.concatenate([bulk, tail]))
    values = np.arange(128)
    draws = [_masses(schema, exact, seed, rows)[0][:128] for seed in range(2 * DRAWS)]
    kept = np.mean([d[(values >= 75) & (values <= 99)].sum() for d in draws])
    past = np.mean([d[values > 99].sum() for d in draws])
    assert abs(kept - tail_rows) < SIGMA_GRID, (kept, tail_rows)
    assert past < SIGMA_GRID, past


def test_an_empty_tail_coarse_cell_is_drawn_where_the_tail_starts() -> None:
    """A coarse cell made only of fitted tail cells that the fit emptied: ``refine`` would draw
    it uniformly over its fine cells (out to the DP bound: Wage's ages 60-127 in a seeded run,
    4.6 % of ages above 80); its tail cell nearest the bulk gets a token mass instead, on the
    upper side the lowest, on the lower side the highest; the total is unchanged."""
    to_grid = np.array([0, 0, 1, 1, 2, 3, 4, 5, 6])  # 9 fine cells, 7 grid cells
    groups = np.array([0, 0, 0, 0, 1, 2, 2, 3, 3])  # coarse: lower tail+bulk, bulk, two tails
    tails = np.array([True, False, False, True, True, True, True])  # per grid cell
    mass = np.array([0.0, 0.0, 5.0, 5.0, 100.0, 0.0, 0.0, 0.0, 0.0])
    out = empty_tails(mass, to_grid, groups, tails)
    assert out[5] == EMPTY_SHARE and out[7] == EMPTY_SHARE  # grid cells 3 and 5: nearest
    assert np.array_equal(np.delete(out, [5, 7]), np.delete(mass, [5, 7]))
    assert out.sum() == pytest.approx(mass.sum())
    lower = empty_tails(mass[::-1], to_grid[::-1].max() - to_grid[::-1], groups[::-1].max()
                        - groups[::-1], tails[::-1])
    assert lower[1] == EMPTY_SHARE and lower[3] == EMPTY_SHARE and lower[0] == 0.0
    # the lower bound's own cell kept out of the tail, holding rows: the lower tail's empty
    # coarse cell is still drawn next to the bulk (its highest cell), not next to the bound
    bound = empty_tails(np.array([30.0, 0.0, 0.0, 200.0, 300.0]), np.arange(5),
                        np.array([0, 1, 1, 2, 3]), np.array([False, True, True, False, False]))
    assert bound[2] == EMPTY_SHARE and bound[1] == 0.0


def test_a_pool_goes_to_its_coarse_cell_by_one_rule() -> None:
    """Takers of a pooled lone cell's mass: the non-significant cells not kept out (round cells,
    fitted tail cells); where that is no cell, or only the pooled cell itself, the coarse cell's
    other cells holding mass, by their mass; where none holds mass, its non-significant cells."""
    to_grid = np.arange(6)  # every fine cell a grid cell of its own
    significant = np.array([True, False, False, False, False, False])
    fitted = np.array([False, False, True, True, False, False])
    groups = np.array([0, 0, 0, 0, 1, 1])
    mass = np.array([60.0, 20.0, 30.0, 10.0, 8.0, 4.0])
    out = spread_lone_noise(mass, significant, to_grid, groups, fitted=fitted)
    # coarse 0: the lone 1 (20) pooled, no other taker: by mass to 60, 30, 10 (not back to 1)
    assert out[:4] == pytest.approx([60 + 12, 0, 30 + 6, 10 + 2])
    assert out[4:] == pytest.approx([6.0, 6.0])  # coarse 1: two non-significant: equal shares
    keep_out = np.array([False, True, False, False, False, False])  # a round cell
    rounds = spread_lone_noise(mass, significant, to_grid, groups, keep_out=keep_out)
    assert rounds[1] == 0 and rounds[:4].sum() == pytest.approx(120.0)
    empty = spread_lone_noise(np.array([0.0, 5.0]), np.zeros(2, dtype=bool), np.arange(2),
                              np.zeros(2, dtype=int), keep_out=np.array([True, True]))
    assert empty == pytest.approx([2.5, 2.5])  # nothing else holds mass: as measured, shared


def test_pile_cells_in_a_tail_take_no_pool() -> None:
    """A-priori pile cells (0, 1, a bound) in or next to a fitted tail (``tail_piles``) are
    pooled and take no pool: a coarse cell of a guarded lower bound 0, its 1, a round cell and
    fitted tail cells gave the round cell's noise to 0 and 1 only, released as values the column
    never holds (College's `Room.Board`, real minimum 1,780: 3 % at 0 and 4 % at 1)."""
    to_grid = np.arange(6)
    significant = np.zeros(6, dtype=bool)
    fitted = np.array([False, False, False, True, True, False])
    keep_out = np.array([False, False, True, False, False, False])  # a round value's cell
    piles = np.array([True, True, False, False, False, False])  # 0 and 1, next to the tail
    groups = np.array([0, 0, 0, 0, 0, 1])
    mass = np.array([0.0, 0.0, 18.0, 4.0, 2.0, 50.0])
    before = spread_lone_noise(mass, significant, to_grid, groups, keep_out=keep_out,
                               fitted=fitted)
    assert before[:2] == pytest.approx([9.0, 9.0])  # the defect, without tail_piles
    out = spread_lone_noise(mass, significant, to_grid, groups, keep_out=keep_out,
                            fitted=fitted, tail_piles=piles)
    assert out[:3] == pytest.approx([0.0, 0.0, 0.0])
    assert out[3:5] == pytest.approx([4.0 + 12.0, 2.0 + 6.0])  # by the fitted cells' mass
    assert out.sum() == pytest.approx(mass.sum()) and out[5] == 50.0
    # a pile cell's own noise goes to the tail too, not back to itself
    own = spread_lone_noise(np.array([12.0, 0.0, 0.0, 4.0, 2.0, 50.0]), significant, to_grid,
                            groups, keep_out=keep_out, fitted=fitted, tail_piles=piles)
    assert own[:3] == pytest.approx([0.0, 0.0, 0.0]) and own[3:5] == pytest.approx([12.0, 6.0])


def test_floors_mark_a_dp_lower_bound_at_zero_only() -> None:
    """``Coarsening.floors``: the cell of a DP lower bound 0 (nothing is clipped onto it from
    below), not a DP lower bound above 0 (rows below it are clipped there) nor a public one."""
    def floors(lower: int, clipped: list[str]) -> np.ndarray | None:
        schema = parse_schema({"columns": [{"name": "x", "kind": "integer", "lower": lower,
                                            "upper": 4095, "spread_clipped": clipped}]}, "test")
        return measured_grid(schema, TableEncoder(schema).domain, 600, SIGMA_GRID).floors.get("x")

    dp_zero = floors(0, ["lower", "upper"])
    assert dp_zero is not None and dp_zero[0] and dp_zero.sum() == 1
    assert floors(512, ["lower", "upper"]) is None and floors(0, []) is None


def test_pile_cells_leave_a_bound_holding_clipped_rows_a_taker() -> None:
    """``pile_cells``: a-priori cells inside a fitted tail, but not the bounds' own cells (the
    rows clipped beyond them: College's `Accept` lost its tail above 4,095 when its upper
    bound's cell took no pool), and the cell of a DP lower bound 0 (``floors``)."""
    fitted = np.array([True, True, True, False, False, True, True, False])  # last: missing
    prior = np.array([True, True, False, False, False, True, True, False])
    assert pile_cells(fitted, prior, None, missing=1).tolist() == [
        False, True, False, False, False, True, False, False]
    floor = np.arange(8) == 0
    assert pile_cells(fitted, prior, floor, missing=1)[0]
