"""Where a default release's values outside the real range come from (issue 24 item 4, branch
emptymass): per adaptive numeric column, the fine-level masses decoding draws from
(``Coarsening.masses``, the last ``compress.compose``) split over the fine cells whose real
count is 0, by origin:

- ``sig``: fine cells whose own noisy count passed the fine test (noise kept as a count);
- ``empty_grid``: cells of a measured-grid cell with no real row (the grid-level mass the
  projection / tail fit kept there, shared over its fine cells);
- ``shared``: empty fine cells of a grid cell that holds rows (the grid cell's mass shared
  equally over its fine cells, occupied or not);
- ``lone``: the change ``spread_lone_noise`` / ``empty_tails`` made on empty cells;

and beside them the released share outside [real min, real max] (``value_sweep.released``).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/emptymass_diag.py islp/OJ --seeds 0 1 2 \\
        [--json out.json]

Instruments ``compress`` by wrapping its functions in this process only (nothing committed to
the library changes). NOT differentially private (reads the real table): a development tool.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_tables import all_tables  # noqa: E402
from oj_heaps import column_figures  # noqa: E402
from value_sweep import read_cells, released  # noqa: E402

import synthpriv.marginals.compress as compress  # noqa: E402
import synthpriv.marginals.stage as stage  # noqa: E402

CAUGHT: dict = {}


def _wrap() -> None:
    """Record, per call of ``compose``: the fine count source, the grid, the chosen grid-level
    masses, each attribute's ``fine_masses`` output and the composed masses."""
    adapt, compose, fine_masses = stage.MarginalsStage._adapt, stage.compose, compress.fine_masses

    def _adapt(self, state, data, one_way, fine, grid, fine_one_way=None):  # noqa: ANN001, ANN202
        CAUGHT["fine"] = fine
        return adapt(self, state, data, one_way, fine, grid, fine_one_way)

    def _fine_masses(noisy, to_grid, grid_mass, sigma, searched=0):  # noqa: ANN001, ANN202
        out = fine_masses(noisy, to_grid, grid_mass, sigma, searched)
        CAUGHT.setdefault("fm", []).append(out)
        return out

    def _compose(grid, chosen, fine=None, missing=frozenset(), bins=None):  # noqa: ANN001, ANN202
        CAUGHT["fm"] = []
        total = compose(grid, chosen, fine, missing, bins)
        names = [a for a in grid.fine.attributes if a in (fine or {})]
        CAUGHT["compose"] = (grid, chosen, dict(zip(names, CAUGHT["fm"], strict=True)), total)
        return total

    stage.MarginalsStage._adapt = _adapt
    stage.compose = _compose
    compress.fine_masses = _fine_masses


def split(name: str) -> dict:
    """The empty-cell mass of column ``name`` by origin (shares of the column's mass)."""
    grid, chosen, fm, total = CAUGHT["compose"]
    real = np.asarray(CAUGHT["fine"].marginal((name,)), dtype=float)
    to_grid = grid.maps[name]
    values = len(to_grid) - (1 if len(real) > len(to_grid) else 0)
    mass = np.asarray(total.masses[name], dtype=float)[:values]
    first, significant = fm[name]
    first, significant = np.asarray(first)[:values], np.asarray(significant)[:values]
    real = real[:values]
    grid_real = np.bincount(to_grid[:values], weights=real)[to_grid[:values]]
    occupied = np.flatnonzero(real > 0)
    inside = np.zeros(values, dtype=bool)
    inside[occupied.min():occupied.max() + 1] = True
    whole = mass.sum()
    empty = real == 0
    sig = empty & significant
    empty_grid = empty & ~significant & (grid_real == 0)
    shared = empty & ~significant & (grid_real > 0)
    cells = []
    for g in range(int(to_grid[:values].max()) + 1):
        inner = to_grid[:values] == g
        cells.append([int(np.flatnonzero(inner)[0]), int(inner.sum()), int(real[inner].sum()),
                      round(float(mass[inner].sum()), 1), round(float(mass[inner & empty].sum()), 1),
                      int(total.maps[name][np.flatnonzero(inner)[0]])])
    return {
        "grid": cells,
        "fine_cells": int(values), "grid_cells": int(to_grid[:values].max() + 1),
        "occupied": int(len(occupied)), "coarse_cells": int(total.maps[name][:values].max() + 1),
        "empty_mass": round(float(mass[empty].sum() / whole), 4),
        "outside_mass": round(float(mass[~inside].sum() / whole), 4),
        "sig": round(float(first[sig].sum() / whole), 4),
        "empty_grid": round(float(first[empty_grid].sum() / whole), 4),
        "shared": round(float(first[shared].sum() / whole), 4),
        "lone": round(float((mass[empty] - first[empty]).sum() / whole), 4),
        "outside_by": {k: round(float(first[c & ~inside].sum() / whole), 4)
                       for k, c in (("sig", sig), ("empty_grid", empty_grid), ("shared", shared))},
    }


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    _wrap()
    text = next(t for name, t in all_tables() if name == args.table)
    real = read_cells(io.StringIO(text))
    results = []
    for seed in args.seeds:
        with tempfile.TemporaryDirectory(prefix="emptymass-") as folder:
            cells, schema = released(text, Path(folder), seed=seed)
        figures = column_figures(real, cells, schema)
        grid = CAUGHT["compose"][0]
        row = {"seed": seed, "columns": {}}
        for name in grid.maps:
            if name not in CAUGHT["compose"][2] or name not in figures:
                continue
            row["columns"][name] = split(name) | {"released_outside": figures[name]["outside"],
                                                  "ks": figures[name]["ks"]}
            print(seed, name, json.dumps(row["columns"][name]), flush=True)
        results.append(row)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
