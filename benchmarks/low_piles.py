"""Fake values at 0 and 1 (issue 24, branch bounds): in releases kept by ``smallks.py --keep``,
per numeric column whose real minimum is above 1, the share of released rows at exactly 0 or 1
and the share below the real minimum, per tree and seed.

    .venv/bin/python benchmarks/low_piles.py /tmp/bounds-ks/college --trees bounds-main,bounds-after

Reads the real train split next to the releases (``<keep>/<table>/train.csv``): a development
tool, not DP; none of these tables is held out.
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

import pandas as pd


def piles(real: pd.DataFrame, fake: pd.DataFrame) -> dict[str, tuple[float, float]]:
    """Per numeric column with real minimum > 1: (share of released rows at 0 or 1, share below
    the real minimum)."""
    out = {}
    for name in real.columns:
        r = pd.to_numeric(real[name], errors="coerce").dropna()
        f = pd.to_numeric(fake.get(name), errors="coerce").dropna() if name in fake else None
        if f is None or r.empty or f.empty or len(r) < 0.9 * len(real[name]) or r.min() <= 1:
            continue
        out[name] = (float(f.isin([0, 1]).mean()), float((f < r.min()).mean()))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("keep", type=Path)
    parser.add_argument("--trees", default="bounds-main,bounds-after")
    parser.add_argument("--recipe", default="aim")
    args = parser.parse_args()
    train = next(args.keep.glob("*/train.csv"))
    real = pd.read_csv(train)
    for tree in args.trees.split(","):
        runs = sorted(args.keep.glob(f"{args.recipe}-{tree}-*/out/synthetic.csv"))
        rows = {run.parent.parent.name.rsplit("-", 1)[1]: piles(real, pd.read_csv(run))
                for run in runs}
        at01 = [sum(v[0] for v in r.values()) for r in rows.values()]
        worst = [max((v[0] for v in r.values()), default=0.0) for r in rows.values()]
        print(f"{tree}: seeds {' '.join(rows)}; rows at 0/1 summed over columns per seed "
              f"{' '.join(f'{x:.3f}' for x in at01)} (mean {statistics.mean(at01):.3f}); worst "
              f"column per seed {' '.join(f'{x:.3f}' for x in worst)}")
        for seed, r in rows.items():
            hit = {k: f"{v[0]:.3f}/{v[1]:.3f}" for k, v in r.items() if v[0] > 0.002}
            print(f"  seed {seed}: columns with > 0.2 % at 0/1 (at 0/1 / below real min) {hit}")


if __name__ == "__main__":
    main()
