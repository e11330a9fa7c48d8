"""Where a small table's heavy values go (issue 24, branch books): per seeded release kept by
``smallks.py --keep``, each value holding ≥ ``--share`` of a numeric column's real rows, with
what the domain step resolved for it and what the release holds there.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/books_diag.py /tmp/books-out/college \
        --columns Books --share 0.05

Per value: its real count and share, its role in the resolved schema (bound, declared point
mass, named candidate = a ``round_counts`` entry, a one-value bounds bucket, or none: inside a
wider fine/grid cell), the noisy counts the domain step released for it (candidate / heap /
bucket, each with σ, and in σ units), and the released share. Reads the releases' manifests
(DP outputs) and the train table (the truth, for the diagnosis only). Development tables only.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pandas as pd


def entries(manifest: Path) -> dict[str, dict]:
    """The resolved schema's columns by name."""
    return {c["name"]: c for c in json.loads(manifest.read_text())["schema"]["columns"]}


def role(entry: dict, value: float) -> tuple[str, str]:
    """(the value's place in the resolved column, the noisy counts released for it)."""
    lower, upper = entry.get("lower"), entry.get("upper")
    counts = []
    for key, tag in (("round_counts", "cand"), ("heap_counts", "heap")):
        for c in entry.get(key) or ():
            if c["value"] == value:
                counts.append(f"{tag} {c['count']:.0f} ({c['count'] / c['sigma']:.1f}σ, "
                              f"σ {c['sigma']:.0f})")
    for b in entry.get("bucket_counts") or ():
        if b["lower"] <= value <= b["upper"]:
            width = "one-value " if b["lower"] == b["upper"] else ""
            counts.append(f"{width}bucket [{b['lower']:g},{b['upper']:g}] {b['count']:.0f} "
                          f"(σ {b['sigma']:.0f})")
    if lower is None:
        place = "no bounds"
    elif value < lower or value > upper:
        place = "outside the bounds"
    elif value in (lower, upper):
        place = "bound"
    elif value in (entry.get("point_masses") or ()):
        place = "point mass"
    elif any(c["value"] == value for c in entry.get("round_counts") or ()):
        place = "candidate"
    elif value in (-1.0, 0.0, 1.0):
        place = "own cell (-1/0/1)"
    else:
        place = "not named"
    return place, "; ".join(counts) or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keep", type=Path, help="smallks.py --keep folder of one table")
    parser.add_argument("--columns", default="", help="comma-separated (default: every numeric)")
    parser.add_argument("--share", type=float, default=0.05, help="smallest real share shown")
    parser.add_argument("--runs", default="", help="substring the run folders must hold")
    parser.add_argument("--train", type=Path, default=None,
                        help="the train table (default: the keep folder's */train.csv)")
    args = parser.parse_args()
    train = args.train or next(p for p in args.keep.glob("*/train.csv"))
    real = pd.read_csv(train)
    runs = sorted((p for p in args.keep.glob("*/out/manifest.json") if args.runs in str(p)),
                  key=lambda p: (p.parent.parent.name.rsplit("-", 1)[0],
                                 int(p.parent.parent.name.rsplit("-", 1)[1])))
    for manifest in runs:
        resolved = entries(manifest)
        fake = pd.read_csv(manifest.parent / "synthetic.csv")
        names = args.columns.split(",") if args.columns else [
            n for n, e in resolved.items() if e.get("kind") in ("integer", "continuous")]
        print(f"## {manifest.parent.parent.name}")
        for name in names:
            entry, column = resolved[name], pd.to_numeric(real[name], errors="coerce").dropna()
            shares = column.value_counts(normalize=True)
            heavy = shares[shares >= args.share]
            if heavy.empty:
                continue
            released = pd.to_numeric(fake[name], errors="coerce").dropna()
            print(f"  {name}: bounds [{entry.get('lower')}, {entry.get('upper')}] shape "
                  f"{(entry.get('grid_shape') or {}).get('breaks')} masses "
                  f"{(entry.get('grid_shape') or {}).get('mass')}")
            for value, share in heavy.sort_index().items():
                place, counts = role(entry, float(value))
                out = float((released == value).mean()) if len(released) else 0.0
                print(f"    {value:g}: real {share:.1%} ({round(share * len(column))} rows) → "
                      f"{out:.1%}  [{place}] {counts}")


if __name__ == "__main__":
    main()
