"""How much a DP-bounded column's KS the within-grid-cell shape costs (branch collegeks): the
released columns' resolved schema entries (manifest.json: DP bounds, grid shape, bucket counts)
with the real grid-cell masses (an oracle: the real rows clipped to the bounds, counted per cell
of the measured grid), so that only the share of each grid cell over its fine cells differs:

* ``equal``: every fine cell of a grid cell an equal share (``compress.fine_masses`` today, on
  the shaped fine grid ``grid_shape`` gives);
* ``buckets``: each fine cell ∝ the bucket counts' density over it (max(count, 0) spread evenly
  over each bucket's values);
* ``capped``: as ``buckets``, a bucket's density capped at the densest bucket the noise shows
  (≥ 2.5σ: ``bounds.EXTEND_NOISE``).

    .venv/bin/python benchmarks/withincell.py --table college \\
        --releases '/tmp/cks/out/college/aim-new-*/out'

KS of each against the real column clipped to the bounds (the clipping's own KS is not this
script's). Development-suite tables only; nothing is tuned here.
"""

from __future__ import annotations

import argparse
import glob
import json
import statistics
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from suite import TABLES, prepare, read_scored  # noqa: E402

from synthpriv.marginals.compress import _grid_groups  # noqa: E402
from synthpriv.schema import NumericColumn, load_schema  # noqa: E402

GRID = 8  # College's measured grid at AIM's 1-way σ ≈ 40 (n̂/(2σ) < 8: the floor)
SHOWN = 2.5  # bounds.EXTEND_NOISE


def cell_weights(column: NumericColumn, edges: np.ndarray, scheme: str) -> np.ndarray:
    """A fine cell's weight within its grid cell under ``scheme`` (see the module docstring)."""
    widths = np.diff(edges)
    if scheme == "equal" or not column.bucket_counts:
        return np.ones(len(widths))
    step = 1.0 if column.kind == "integer" else 0.0
    buckets = [(b.lower, b.upper + step, max(b.count, 0.0), b.sigma) for b in column.bucket_counts]
    densities = [c / max(hi - lo, 1e-12) for lo, hi, c, _ in buckets]
    if scheme == "capped":
        shown = [d for d, (_, _, c, s) in zip(densities, buckets, strict=True) if c >= SHOWN * s]
        if shown:
            densities = [min(d, max(shown)) for d in densities]
    weights = np.zeros(len(widths))
    for (lo, hi, _, _), density in zip(buckets, densities, strict=True):
        overlap = np.clip(np.minimum(edges[1:], hi) - np.maximum(edges[:-1], lo), 0, None)
        weights += density * overlap
    return weights


def released_cdf(column: NumericColumn, real: np.ndarray, scheme: str, points: np.ndarray
                 ) -> np.ndarray:
    """CDF at ``points`` of the column decoded with the real grid-cell masses and ``scheme``'s
    shares within each grid cell, each fine cell's mass uniform over its width."""
    edges = column.bin_edges()
    values = len(edges) - 1
    groups = _grid_groups(column, values, GRID)
    clipped = np.clip(real, column.lower, column.upper)
    fine = np.clip(np.searchsorted(edges, clipped, side="right") - 1, 0, values - 1)
    grid_mass = np.bincount(groups[fine], minlength=groups.max() + 1).astype(float)
    weights = cell_weights(column, edges, scheme)
    totals = np.bincount(groups, weights=weights, minlength=len(grid_mass))
    counts = np.bincount(groups, minlength=len(grid_mass))
    share = np.where(totals[groups] > 0, weights / np.where(totals > 0, totals, 1)[groups],
                     1.0 / counts[groups])
    mass = grid_mass[groups] * share / len(real)
    within = np.clip((points[:, None] - edges[None, :-1]) / np.diff(edges)[None, :], 0, 1)
    return within @ mass


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="college")
    parser.add_argument("--releases", required=True, help="glob of release folders")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--work", type=Path, default=Path("/tmp/withincell"))
    args = parser.parse_args()
    table = TABLES[args.table]
    draft = prepare(table, args.work, args.cache, "draft")
    real = read_scored(draft.train, load_schema(draft.schema_path))
    schemes = ("equal", "buckets", "capped")
    rows: dict[str, dict[str, list[float]]] = {}
    for folder in sorted(glob.glob(args.releases)):
        manifest = json.loads((Path(folder) / "manifest.json").read_text())
        for entry in manifest["schema"]["columns"]:
            if entry.get("grid_shape") is None or not entry.get("bucket_counts"):
                continue
            column = NumericColumn.model_validate(entry)
            values = real[column.name].dropna().to_numpy()
            clipped = np.sort(np.clip(values, column.lower, column.upper))
            points = np.unique(clipped)
            truth = np.searchsorted(clipped, points, side="right") / len(clipped)
            for scheme in schemes:
                cdf = released_cdf(column, values, scheme, points)
                rows.setdefault(column.name, {}).setdefault(scheme, []).append(
                    float(np.abs(cdf - truth).max()))
    print("| column | runs | " + " | ".join(f"KS {s}" for s in schemes) + " |")
    print("|---|---|" + "---|" * len(schemes))
    for name, by in rows.items():
        cells = [f"{statistics.mean(by[s]):.3f}" for s in schemes]
        print(f"| {name} | {len(by['equal'])} | " + " | ".join(cells) + " |")
    means = [statistics.mean(x for by in rows.values() for x in by[s]) for s in schemes]
    print("| all | | " + " | ".join(f"{m:.3f}" for m in means) + " |")


if __name__ == "__main__":
    main()
