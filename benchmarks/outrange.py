"""Released values outside the real range (issue 24, valuesweep's "outside"): per named column of
the development suite, over seeds, the default release (safe draft, AIM, ε = 1, as
``value_sweep.released``) against the real column: its DP bounds, the released range, the share
of released values outside [real min, real max], and where the adaptive domain put that mass
(from the model's coarsening: fine cells in coarse cells wholly outside the real range, "fit",
against fine cells outside it inside coarse cells that straddle it, "within-cell": the draw
inside a wide cell).

    TAG=after PYTHONPATH=. /work/main/.venv/bin/python benchmarks/outrange.py 0,1,2,3,4,5 \\
        [table-substring ...]

NOT differentially private (it reads the real table): a development tool; none of these tables
is held out.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import sys
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_tables import all_tables  # noqa: E402
from value_sweep import read_cells, released  # noqa: E402

from synthpriv.schema import parse_schema  # noqa: E402

TARGETS = {"islp/Weekly": ["Year"], "statsmodels/nile/nile": ["year"],
           "islp/Boston": ["nox", "rm", "ptratio"], "islp/Carseats": ["Education", "Age"],
           "islp/Credit": ["ID", "Education"]}
GRID_KEYS = ("name", "kind", "lower", "upper", "bins", "edges", "missing", "precision",
             "point_masses", "grid_shape")


def where_outside(entry: dict, folder: Path, low: float, high: float) -> str:
    """The model's fine-cell mass outside [low, high]: in coarse cells wholly outside, and in
    coarse cells straddling the range (shares of the column's mass)."""
    model = json.loads((folder / "out/model.json").read_text())
    if entry["name"] not in model["coarsened"]:
        return ""
    arrays = np.load(folder / "out/model.npz")
    i = model["coarsened"].index(entry["name"])
    groups, mass = arrays[f"coarsening_{i}_map"], arrays[f"coarsening_{i}_mass"]
    column = parse_schema({"columns": [{k: v for k, v in entry.items() if k in GRID_KEYS}]},
                          "outrange").columns[0]
    edges = column.bin_edges()
    values = len(edges) - 1
    left, right = edges[:-1], edges[1:]
    wholly = straddle = 0.0
    for group in np.unique(groups[:values]):
        cells = np.flatnonzero(groups[:values] == group)
        out = mass[cells][(right[cells] <= low) | (left[cells] > high)].sum()
        if right[cells[-1]] <= low or left[cells[0]] > high:
            wholly += out
        else:
            straddle += out
    total = mass[:values].sum()
    return (f" fit-outside {wholly / total:.3f} within-cell {straddle / total:.3f} "
            f"coarse {len(np.unique(groups[:values]))}")


def main(argv: list[str]) -> None:
    seeds = [int(s) for s in argv[0].split(",")]
    tag = os.environ.get("TAG", "x")
    for name, text in all_tables():
        if name not in TARGETS or (argv[1:] and not any(o in name for o in argv[1:])):
            continue
        real = read_cells(io.StringIO(text))
        for seed in seeds:
            folder = Path(f"/tmp/outrange/{tag}/{name.replace('/', '_')}_{seed}")
            shutil.rmtree(folder, ignore_errors=True)
            cells, schema = released(text, folder, 1.0, seed)
            for col in TARGETS[name]:
                r = pd.to_numeric(real[col], errors="coerce").dropna()
                s = pd.to_numeric(cells[col], errors="coerce").dropna()
                entry = next(c for c in schema["columns"] if c["name"] == col)
                if s.empty or "lower" not in entry:
                    print(f"{name} {col} seed {seed}: kind {entry.get('kind')}, no numbers")
                    continue
                low, high = r.min(), r.max()
                out = ((s < low) | (s > high)).mean()
                print(f"{name} {col} seed {seed}: real [{low}, {high}] bounds [{entry['lower']}, "
                      f"{entry['upper']}] rel [{s.min()}, {s.max()}] outside {out:.3f}"
                      f"{where_outside(entry, folder, low, high)}", flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
