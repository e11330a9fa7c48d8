"""Which level of the adaptive domain sees a round-value pile, and which rule drops it (issue 24
item 4, branch roundcells).

For one value of one column of a finished run (its manifest: the resolved schema, the plan's
noise) and the train table it read, per level that could keep the pile:

* heap discovery: σ_h and T_h (the plan's ``heap_sigma``, ``heap_threshold``);
* the measured grid: σ_g (the plan's 1-way σ: AIM's first rounds, MST's 1-way), the grid cell
  holding the value (``compress.measured_grid`` with n̂ = the true row count), its width;
* the fine 1-way marginal: σ_f (``sigma_fine``), the fine cell's width, and the union-bound z it
  is tested at (``compress.significance`` over every fine cell of the job's adaptive columns);
* a lone cell (the grid cell is the value alone): the two levels combined by inverse variance,
  σ_c, tested at 3σ_c (``compress.lone_measured``'s prior bar);

with each level's true count and its noisy reads over ``--seeds`` draws of N(0, σ²) (the
discrete Gaussian the stage runs has the same variance to within 1e-6 at these σ). The code tree
is the one on PYTHONPATH (main's or this branch's), so the grid and the tests are that tree's.

    PYTHONPATH=TREE .venv/bin/python benchmarks/roundcells_diagnose.py MANIFEST TRAIN.csv \
        COLUMN VALUE [--seeds 5]

Reads the raw table for the true counts: a diagnosis, never part of a release.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.domain import Domain
from synthpriv.marginals.compress import SIGNIFICANT, measured_grid, significance
from synthpriv.schema import NumericColumn, Schema


def fine_cells(schema: Schema) -> int:
    """Every fine cell of the job's adaptive numeric columns (``compose``'s ``searched``)."""
    return sum(len(c.bin_edges()) - 1 + int(c.missing) for c in schema.modelled
               if isinstance(c, NumericColumn) and c.adaptive)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("manifest", type=Path)
    parser.add_argument("train", type=Path)
    parser.add_argument("column")
    parser.add_argument("value", type=float)
    parser.add_argument("--seeds", type=int, default=5)
    args = parser.parse_args()
    manifest = json.loads(args.manifest.read_text())
    schema = Schema.model_validate(manifest["schema"])
    column = schema.column(args.column)
    stages = {s["stage"]: s["noise"] for s in manifest["plan"]["stages"]}
    domain, marginals = stages["domain"], stages["marginals"]
    sigma_g = marginals.get("sigma_first_rounds", marginals.get("sigma_one_way"))
    sigma_f = marginals["sigma_fine"]
    real = pd.to_numeric(pd.read_csv(args.train)[args.column], errors="coerce")
    n = len(real)
    values = real.dropna().clip(column.lower, column.upper).to_numpy()
    edges = column.bin_edges()
    cells = len(edges) - 1
    codes = np.clip(np.searchsorted(edges, values, side="right") - 1, 0, cells - 1)
    cell = int(np.clip(np.searchsorted(edges, args.value, side="right") - 1, 0, cells - 1))
    one = Schema(columns=[column])
    grid = measured_grid(one, Domain.from_sizes({column.name: cells + int(column.missing)}),
                         float(n), sigma_g)
    to_grid = grid.maps[column.name][:cells]
    members = np.flatnonzero(to_grid == to_grid[cell])
    pile = int((values == args.value).sum())
    fine_true = int((codes == cell).sum())
    grid_true = int(np.isin(codes, members).sum())
    rng = np.random.default_rng(0)
    z_fine = significance(fine_cells(schema))
    sigma_c = 1.0 / np.sqrt(1.0 / sigma_g**2 + 1.0 / sigma_f**2)

    def reads(count: int, sigma: float) -> str:
        return ", ".join(f"{count + rng.normal(0, sigma):.0f}" for _ in range(args.seeds))

    print(f"{args.column} = {args.value:g}: {pile} rows of {n} ({pile / n:.1%}); bounds "
          f"[{column.lower:g}, {column.upper:g}], fine cells {cells}")
    if "heap_sigma" in domain:
        print(f"  heap discovery: σ_h {domain['heap_sigma']:.1f}, T_h {domain['heap_threshold']:.0f}"
              f" (= {domain['heap_threshold'] / domain['heap_sigma']:.1f}σ_h); reads "
              f"[{reads(pile, domain['heap_sigma'])}] -> kept only above T_h")
    print(f"  grid: σ_g {sigma_g:.1f}; cell [{edges[members[0]]:g}, {edges[members[-1] + 1]:g}) "
          f"of {len(members)} fine cells holds {grid_true} rows; reads "
          f"[{reads(grid_true, sigma_g)}]; lone cell: {len(members) == 1}")
    print(f"  fine: σ_f {sigma_f:.1f}; cell [{edges[cell]:g}, {edges[cell + 1]:g}) holds "
          f"{fine_true} rows; tested at z = {z_fine:.2f} (bar {z_fine * sigma_f:.0f} rows); "
          f"reads [{reads(fine_true, sigma_f)}]")
    if len(members) == 1:
        print(f"  lone cell, levels combined: σ_c {sigma_c:.1f}, bar {SIGNIFICANT}σ_c = "
              f"{SIGNIFICANT * sigma_c:.0f} rows; reads [{reads(fine_true, sigma_c)}]; "
              f"P(pass) ≈ {_pass(fine_true, SIGNIFICANT * sigma_c, sigma_c):.2f}")
    else:
        print(f"  inside a wide grid cell: kept only if the fine read passes "
              f"{z_fine * sigma_f:.0f}; P(pass) ≈ {_pass(fine_true, z_fine * sigma_f, sigma_f):.2f}")


def _pass(count: float, bar: float, sigma: float) -> float:
    from math import erf, sqrt

    return 0.5 * (1 - erf((bar - count) / (sigma * sqrt(2))))


if __name__ == "__main__":
    main()
