"""A narrow integer range (``rounds.narrow_values``: at most NARROW_VALUES values, e.g. ISLP
Auto's `cylinders`, DP bounds [0, 15]): every value inside is named before the heap histogram's
noise (an unthresholded count each: synthpriv.privacy.candidates, no added ρ or δ), and a value
whose count shows a pile is a cell of its own on the measured grid. Before, a small table's
measured grid paired neighbouring values and shared each pair's mass equally: 4/5, 6/7 and 8/9
came back at about the same share, so values the table never holds held a quarter of the
release."""

from __future__ import annotations

import numpy as np

from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import measured_grid
from synthpriv.rounds import NARROW_VALUES, narrow_values
from synthpriv.schema import parse_schema


def test_narrow_values_are_every_value_inside_a_narrow_range() -> None:
    """Public: a function of the bounds only; -1, 0, 1 and the bounds (cells of their own
    already) left out; nothing for a range wider than NARROW_VALUES."""
    assert list(narrow_values(0, 15)) == list(range(2, 15))
    assert list(narrow_values(-4, 3)) == [-3, -2, 2]
    assert len(narrow_values(0, NARROW_VALUES - 1)) == NARROW_VALUES - 3
    assert len(narrow_values(0, NARROW_VALUES)) == 0


def _column(round_counts: list[dict] | None):
    schema = parse_schema({"columns": [{"name": "cylinders", "kind": "integer", "lower": 0,
                                        "upper": 15, "round_counts": round_counts}]}, "t")
    return schema, TableEncoder(schema).domain


def test_a_narrow_columns_piles_are_lone_cells_and_its_other_values_are_not_kept_out() -> None:
    """Auto's `cylinders` at its size (n̂ = 392, the 1-way σ ≈ 32: 8 measured cells for 16
    values): without round counts the grid pairs 4/5, 6/7, 8/9; with the domain step's counts
    (σ_h 38.7) the values whose count passes NARROW_PILE·σ_h and their pair's by that bar
    times √2 (4, 6, 8; not 2, 3, 10) are lone cells and priors
    (3σ), and only they are kept out of the pooled noise (``rounds``): 5, 7 and 9 take it as
    any fine cell does, rather than holding only a significant mass. (A pile's neighbour in its
    pair is then a cell of one value too, without a prior's bar.)"""
    counts = {2: 7, 3: -9, 4: 199, 5: 14, 6: 170, 7: -2, 8: 180, 9: -20, 10: 5}
    entries = [{"value": v, "count": c, "sigma": 38.7} for v, c in counts.items()]
    for round_counts, alone in ((None, set()), (entries, {4.0, 6.0, 8.0})):
        schema, domain = _column(round_counts)
        column = schema.column("cylinders")
        assert column.narrow_range
        grid = measured_grid(schema, domain, 392.0, 32.0)
        cells = grid.maps["cylinders"]
        edges = column.bin_edges()
        lone = {float(edges[i]) for i in range(2, 15) if np.sum(cells == cells[i]) == 1}
        assert alone <= lone and (alone or not lone)  # a pile splits its pair: its partner
        priors = {float(edges[i]) for i in np.flatnonzero(grid.priors["cylinders"][2:15]) + 2}
        assert priors == alone  # is lone too, but no prior (spread_lone_noise pools it)
        kept_out = grid.rounds.get("cylinders", np.zeros(len(cells), dtype=bool))
        assert {float(edges[i]) for i in np.flatnonzero(kept_out)} == alone
        if not alone:  # the pairing that made 5, 7 and 9 hold half of 4, 6 and 8's rows
            assert cells[4] == cells[5] and cells[6] == cells[7] and cells[8] == cells[9]


def test_a_flat_narrow_column_is_not_split() -> None:
    """A flat column like Carseats' `Education` (10-18, DP bounds [8, 31]): noisy counts of
    one level, some above NARROW_PILE·σ_h, none above its grid cell's others by the bar: no
    lone cell, the measured grid as without counts."""
    noise = (40, -30, 50, 10, -10, 35, -40, 25, 0)
    level = {v: 110 + d for v, d in zip(range(10, 19), noise, strict=True)}
    entries = [{"value": v, "count": level.get(v, 0), "sigma": 38.7} for v in range(9, 31)]
    flat_schema = parse_schema({"columns": [{"name": "e", "kind": "integer", "lower": 8,
                                             "upper": 31, "round_counts": entries}]}, "t")
    plain_schema = parse_schema({"columns": [{"name": "e", "kind": "integer", "lower": 8,
                                              "upper": 31}]}, "t")
    assert flat_schema.column("e").narrow_range
    grids = [measured_grid(schema, TableEncoder(schema).domain, 400.0, 32.0).maps["e"]
             for schema in (flat_schema, plain_schema)]
    assert np.array_equal(*grids)
