"""Round values on a small table (issue 24, "worst point mass"; branch smallpm): the domain step's
candidate counts of a wide integer column's round values (``round_counts``:
synthpriv.privacy.candidates) are combined with the round cells' fine 1-way counts
(``compress.with_round_counts``), and a round value whose count shows a pile is kept alone on the
measured grid (``compress._round_piles``), where the lone cell's 3σ test decides. College's
`Books` (622 rows: 500 holds 22 %, 600 16 %) came back with both at 0 % under AIM on main."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import (
    ROUND_PILE,
    measured_grid,
    with_round_counts,
)
from synthpriv.marginals.measurement import Measurement
from synthpriv.rounds import round_values
from synthpriv.schema import parse_schema

ROWS = 622
PILES = {500: 0.22, 600: 0.16}


def _table(seed: int, piles: bool) -> pd.DataFrame:
    """``x``: a Books-like amount, 150-1,500 log-normal, off the multiples of 50, with ``PILES``
    when ``piles``; 7 other wide amounts (a small table's many columns: AIM's σ ≈ 60 rows)."""
    rng = np.random.default_rng(seed)
    x = np.clip(np.exp(rng.normal(6.2, 0.35, ROWS)), 150, 1500).astype(np.int64)
    x = np.where(x % 50 == 0, x + 1, x)
    if piles:
        u = rng.random(ROWS)
        x = np.where(u < PILES[500], 500, np.where(u < PILES[500] + PILES[600], 600, x))
    table = {"x": x}
    for j in range(7):
        table[f"c{j}"] = np.exp(rng.normal(6 + j % 3, 0.8, ROWS)).astype(np.int64)
    return pd.DataFrame(table)


def _release(table: pd.DataFrame, seed: int) -> pd.DataFrame:
    schema = {"columns": [{"name": name, "kind": "integer"} for name in table.columns]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the small-table warnings
        return Synthesizer(schema, epsilon=1.0, recipe="aim", seed=seed).fit(table).synthetic


def test_round_counts_are_combined_into_the_round_cells_only() -> None:
    """Inverse variance at each round value's own fine cell (a count at σ_h combined with the
    fine count at σ_f: weight σ_f²/(σ_f² + σ_h²), variance σ_f²σ_h²/(σ_f² + σ_h²)); every other
    cell unchanged; a column without round counts unchanged."""
    raw = {"name": "x", "kind": "integer", "lower": 0, "upper": 2047}
    bare = parse_schema({"columns": [raw]}, "t").column("x")
    typed = bare.round_values()
    counts = [{"value": float(v), "count": 100.0 + v / 10, "sigma": 30.0} for v in typed[:3]]
    column = parse_schema({"columns": [{**raw, "round_counts": counts}]}, "t").column("x")
    edges = column.bin_edges()
    fine = Measurement(("x",), np.full(len(edges) - 1, 10.0), 40.0)
    assert with_round_counts(bare, fine) is fine
    out = with_round_counts(column, fine)
    cells = np.searchsorted(edges, typed[:3], side="right") - 1
    weight = 40.0**2 / (40.0**2 + 30.0**2)
    expected = weight * np.array([c["count"] for c in counts]) + (1 - weight) * 10.0
    assert np.asarray(out.noisy_counts)[cells] == pytest.approx(expected)
    assert np.asarray(out.sigma)[cells] == pytest.approx(24.0)  # 40·30/50
    rest = np.setdiff1d(np.arange(len(edges) - 1), cells)
    assert (np.asarray(out.noisy_counts)[rest] == 10.0).all()
    assert (np.asarray(out.sigma)[rest] == 40.0).all()


def test_a_round_value_whose_count_shows_a_pile_is_a_lone_cell() -> None:
    """With a grid that affords no lone round cell (n̂/(2σ) small: main kept none alone), the
    round values whose candidate count passes ``ROUND_PILE``·σ_h are alone (priors: the 3σ
    test) and the others are not; one row below that bar (20,000) the value is not alone."""
    raw = {"name": "x", "kind": "integer", "lower": 0, "upper": 131_071}
    typed = round_values(0, 131_071)
    assert {15_000.0, 20_000.0} <= set(typed)
    counts = [{"value": float(v), "count": ROUND_PILE * 40.0 if v == 15_000 else
               ROUND_PILE * 40.0 - 1 if v == 20_000 else 0.0, "sigma": 40.0} for v in typed]
    schema = parse_schema({"columns": [{**raw, "round_counts": counts}]}, "t")
    column = schema.column("x")
    grid = measured_grid(schema, TableEncoder(schema).domain, 200.0, 60.0)  # room: none
    edges = column.bin_edges()
    cells = np.searchsorted(edges, typed, side="right") - 1
    alone = np.bincount(grid.maps["x"])[grid.maps["x"][cells]] == 1
    assert set(typed[alone]) == {15_000.0}
    assert grid.priors["x"][cells[typed == 15_000.0]].all()


def _shares(piles: bool, seeds: tuple[int, ...]) -> list[dict[int, tuple[float, float]]]:
    out = []
    for seed in seeds:
        table = _table(seed, piles)
        synthetic = _release(table, seed)
        out.append({v: (float((table["x"] == v).mean()), float((synthetic["x"] == v).mean()))
                    for v in range(150, 1501, 50)})
    return out


@pytest.mark.slow
def test_small_table_round_piles_come_back_under_aim() -> None:
    """622 rows, AIM ε = 1, DP bounds: 500 (22 %) comes back at ≥ half its real share in at least
    2 of the 3 seeds (the combined count passes its bars in about 70 % of draws at College's
    noise; here fewer columns, less noise), never above 1.6× its real share. On main it came back
    in 1 of 3 (0.0 %, 0.0 %, 26 %: AIM's lone-cell 3σ at its grid σ; 600, not a round value with
    two a segment, is left to the fine noise on both trees: 0.3-0.5 %)."""
    runs = _shares(True, (0, 1, 2))
    for value in (500,):
        kept = [released >= real / 2 for real, released in (run[value] for run in runs)]
        assert sum(kept) >= 2, (value, [run[value] for run in runs])
        assert all(released <= 1.6 * real for real, released in (run[value] for run in runs))


@pytest.mark.slow
def test_small_table_without_piles_gets_no_fake_round_spike() -> None:
    """The same table without the piles (the multiples of 50 hold ≤ 0.5 % each), AIM, seeds
    0-2: none comes back above 5 % (a fake pile would be ≥ 3σ_c of the combined count, about
    40 rows: 6 %)."""
    for run in _shares(False, (0, 1, 2)):
        for value, (real, released) in run.items():
            assert real <= 0.005 and released <= 0.05, (value, real, released)
