"""Where the released values beyond the data come from (branch tailsfix, issue 24 item 4).

One release per seed (as ``catfold_tails.py``); the adaptive domain's steps are observed (their
inputs and outputs recorded, nothing changed) and, per numeric column, the decoding mass above
the input's maximum (below its minimum) is split by where it sits:

* ``edge``: fine cells of a grid cell that also holds data (the grid cell straddles the max),
  and the part beyond the data of the fine cell holding the max (drawn uniformly within it);
* ``tail``: a grid cell wholly beyond the data, beyond the bulk, whose monotone fit kept mass
  (a noise excursion pooled: ``tail_masses``), with ``tail_merged`` the part of it in a bucket
  group that merged two or more buckets (a straddled octave edge) and ``tail_capped`` the part
  in a group whose GLS sum reads as none (< 3σ_b);
* ``bulk``: a grid cell wholly beyond the data inside the bulk (a ≥ 3σ cell of noise, or the
  bulk's end when the bounds are public);
* ``spread``: a grid cell wholly beyond the data whose chosen mass is 0 but whose fine cells
  got mass in ``compose`` (a pooled lone cell's mass shared over its coarse cell).

Shares are of the column's decoding mass (the coarse 1-way fit's cells drawn within by
``Coarsening.refine``); ``released`` is the share of the synthetic values. Options as
``catfold_tails.py``. Run with PYTHONPATH pointing at the code to measure and at benchmarks/."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from missnoise import arguments

import synthpriv.marginals.stage as stage
from synthpriv import Synthesizer
from synthpriv.marginals.compress import SIGNIFICANT
from synthpriv.schema import NumericColumn

SEEN: dict[str, object] = {}


def _observe(name: str):
    original = getattr(stage, name)

    def observed(*args, **kwargs):
        out = original(*args, **kwargs)
        SEEN[name] = (args, kwargs, out)
        return out

    setattr(stage, name, observed)


def _side(column, grid_map, chosen, total, buckets, combined, beyond_data,
          straddle: tuple[int, float]) -> dict[str, float]:
    """The decoding mass of ``column`` in fine cells where ``beyond_data`` (per fine value cell),
    split as the module docstring says, as shares of the column's mass."""
    name = column.name
    values = len(column.bin_edges()) - 1
    to_grid = grid_map[:values]
    fine_mass = np.asarray(total.masses[name][:values], dtype=float)
    whole = float(np.asarray(total.masses[name], dtype=float).sum()) or 1.0
    cells = int(to_grid.max()) + 1
    outside = np.bincount(to_grid, weights=beyond_data, minlength=cells) == np.bincount(
        to_grid, minlength=cells)  # grid cells wholly beyond the data
    chosen_mass = np.asarray(chosen.masses[name][:cells], dtype=float)
    tails = np.asarray(chosen.tails.get(name, np.zeros(cells, dtype=bool))[:cells])
    merged = np.zeros(cells, dtype=bool)
    capped = np.zeros(cells, dtype=bool)
    noisy = np.asarray(combined[name].noisy_counts, dtype=float) if name in combined else None
    for group in buckets.get(name, ()):
        inside = [b for b in column.bucket_counts
                  if b.upper >= column.lower and b.lower <= column.upper]
        holds = [b for b in inside if np.isin(group.cells, to_grid[
            (column.bin_edges()[:-1] >= b.lower) & (column.bin_edges()[:-1] <= b.upper)]).any()]
        merged[group.cells] = len(holds) > 1
        if noisy is not None:
            capped[group.cells] = noisy[group.cells].sum() < SIGNIFICANT * np.sqrt(group.variance)
    at = beyond_data.astype(bool)
    g = to_grid
    part = {
        "edge": at & ~outside[g],
        "tail": at & outside[g] & tails[g] & (chosen_mass[g] > 0),
        "bulk": at & outside[g] & ~tails[g] & (chosen_mass[g] > 0),
        "spread": at & outside[g] & (chosen_mass[g] <= 0),
    }
    out = {key: float(fine_mass[cells_].sum()) / whole for key, cells_ in part.items()}
    cell, fraction = straddle  # the fine cell holding the data's end, its share beyond it
    out["edge"] += fraction * float(fine_mass[cell]) / whole
    out["tail_merged"] = float(fine_mass[part["tail"] & merged[g]].sum()) / whole
    out["tail_capped"] = float(fine_mass[part["tail"] & capped[g]].sum()) / whole
    return out


def main() -> None:
    parser = arguments()
    parser.add_argument("--columns", default="", help="numeric columns (default: all)")
    args = parser.parse_args()
    for name in ("choose_coarsening", "compose"):
        _observe(name)
    real = pd.read_csv(args.csv, nrows=args.rows, skipinitialspace=True)
    numeric = [c for c in real.columns if pd.api.types.is_numeric_dtype(real[c])]
    wanted = [c for c in args.columns.split(",") if c] or numeric
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        SEEN.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synthetic = Synthesizer(args.schema, epsilon=args.epsilon, delta=args.delta,
                                    recipe=args.recipe, seed=seed).fit(real).synthetic
        (schema, *_), kw, chosen = SEEN["choose_coarsening"]
        (grid, *_), _, total = SEEN["compose"]
        combined, buckets = kw.get("combined") or {}, kw.get("buckets") or {}
        for name in wanted:
            column = schema.column(name)
            if not (isinstance(column, NumericColumn) and column.adaptive):
                continue
            data = real[name].dropna().to_numpy(dtype=float)
            released = pd.to_numeric(synthetic[name], errors="coerce").dropna().to_numpy(float)
            edges = column.bin_edges()
            top = int(np.clip(np.searchsorted(edges, data.max(), side="right") - 1, 0,
                              len(edges) - 2))
            bottom = int(np.clip(np.searchsorted(edges, data.min(), side="right") - 1, 0,
                                 len(edges) - 2))
            widths = np.diff(edges)
            # an integer's cell [v, v+1) holds v alone: nothing of it lies beyond v
            whole = column.kind == "integer"
            up = 0.0 if whole else max(0.0, edges[top + 1] - max(data.max(), edges[top])) / widths[top]
            down = 0.0 if whole else max(0.0, min(data.min(), edges[bottom + 1]) - edges[bottom]) / (
                widths[bottom])
            for side, beyond_data, share, straddle in (
                    ("above", edges[:-1] > data.max(), np.mean(released > data.max()),
                     (top, up)),
                    ("below", edges[1:] <= data.min(), np.mean(released < data.min()),
                     (bottom, down))):
                parts = _side(column, grid.maps[name], chosen, total, buckets, combined,
                              beyond_data.astype(float), straddle)
                rows.append({"seed": seed, "column": name, "side": side,
                             "bounds": f"[{column.lower:g}, {column.upper:g}]",
                             "released": float(share), **parts})
    table = pd.DataFrame(rows)
    pd.set_option("display.width", 220)
    print(table.round(4).to_string(index=False))
    keys = ["released", "edge", "tail", "tail_merged", "tail_capped", "bulk", "spread"]
    print("mean over seeds")
    print(table.groupby(["side", "column"])[keys].mean().round(4).to_string())
    print("mean over seeds and columns")
    print(table.groupby("side")[keys].apply(
        lambda t: t.groupby(table.loc[t.index, "column"]).mean().mean()).round(4).to_string())


if __name__ == "__main__":
    main()
