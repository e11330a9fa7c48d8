"""Share of released rows at 0 or 1 in the numeric columns whose real minimum is above 1 (a
fake value a user sees at once), per release kept by ``benchmarks/smallks.py --keep``.

    python benchmarks/fake_low_values.py KEEP/college/train.csv KEEP TREE [TREE ...]

Reads the real (development) table to score: not private.
"""

from __future__ import annotations

import glob
import sys

import pandas as pd


def main() -> None:
    real = pd.read_csv(sys.argv[1])
    columns = [c for c in real.columns if real[c].dtype.kind in "if" and real[c].min() > 1]
    for tree in sys.argv[3:]:
        shares, worst = [], []
        for path in sorted(glob.glob(f"{sys.argv[2]}/aim-{tree}-*/out/synthetic.csv")):
            released = pd.read_csv(path)
            per = {c: float(released[c].isin([0, 1]).mean()) for c in columns if c in released}
            shares.append(sum(per.values()) / len(per))
            worst.append(max(per.items(), key=lambda item: item[1]))
        print(tree, "runs", len(shares), "mean share at 0/1 a column",
              [round(x, 4) for x in shares], "worst", [(c, round(v, 3)) for c, v in worst])


if __name__ == "__main__":
    main()
