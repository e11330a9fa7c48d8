"""Branch zerofrac: the tables of benchmarks/README.md "zerofrac" from the sweep JSON files here
(``sweep.sh`` and the OJ seeds 4-7 runs): per OJ seed, the columns flipped, 2-way TVD and mean KS
before → after; per flipped column-run, zeros, real values, KS and range; the guard tables'
byte-identity.

    /work/main/.venv/bin/python benchmarks/results/zerofrac/analyse.py
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
WATCHED = ("DiscCH", "DiscMM", "PctDiscMM", "PctDiscCH")


def load(names: tuple[str, ...]) -> dict:
    out = {}
    for name in names:
        for run in json.loads((HERE / f"{name}.json").read_text()):
            out[(run["table"], run["seed"])] = run
    return out


def main() -> None:
    before = load(("sweep-before", "sweep-oj47-before"))
    after = load(("sweep-after", "sweep-oj47-after"))
    for key in sorted(k for k in before if k[0] != "islp/OJ"):
        same = before[key]["sha256"] == after[key]["sha256"]
        print(f"{key[0]} seed {key[1]}: synthetic.csv {'identical' if same else 'DIFFERS'}")
    oj = sorted(s for t, s in before if t == "islp/OJ")
    print("| seed | flipped | 2-way before → after | mean KS before → after |\n|---|---|---|---|")
    for s in oj:
        x, y = before[("islp/OJ", s)], after[("islp/OJ", s)]
        flipped = [c for c in WATCHED if x["kinds"][c] != y["kinds"][c]]
        print(f"| {s} | {', '.join(flipped) or 'none'} | {x['two_way']:.4f} → "
              f"{y['two_way']:.4f} | {x['mean_ks']:.4f} → {y['mean_ks']:.4f} |")
    pairs = np.array([[before[("islp/OJ", s)][m], after[("islp/OJ", s)][m]]
                      for s in oj for m in ("two_way", "mean_ks")]).reshape(len(oj), 2, 2)
    for i, metric in enumerate(("2-way", "mean KS")):
        diff = pairs[:, i, 1] - pairs[:, i, 0]
        print(f"{metric}: mean {pairs[:, i, 0].mean():.4f} → {pairs[:, i, 1].mean():.4f}, "
              f"paired differences {np.round(diff, 4).tolist()}")
    print("| seed | column | zeros real / before / after | non-zero rows at a real value | "
          "KS before → after | released max |\n|---|---|---|---|---|---|")
    for s in oj:
        x, y = before[("islp/OJ", s)], after[("islp/OJ", s)]
        for c in WATCHED:
            if x["kinds"][c] == y["kinds"][c]:
                continue
            b, a = x["watched"][c], y["watched"][c]
            print(f"| {s} | {c} | {b['zeros'][0]:.3f} / {b['zeros'][1]:.3f} / "
                  f"{a['zeros'][1]:.3f} | {a['real_fractions'][1]:.3f} of {a['nonzero'][1]:.3f} | "
                  f"{b['ks']:.3f} → {a['ks']:.3f} | {a['max_released']:g} |")


if __name__ == "__main__":
    main()
