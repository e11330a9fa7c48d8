"""hhsfinal (2): paired before → after per column over daterange.py records (same seeds):
mean of each figure, the paired difference's mean ± sd and the better/worse seed counts.

    /work/main/.venv/bin/python benchmarks/results/hhsfinal/paired.py before.jsonl after.jsonl \
        [--columns]
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def load(path: Path) -> dict[tuple[str, int], dict]:
    return {(r["table"], r["seed"]): r for r in map(json.loads, path.read_text().splitlines())}


def line(name: str, before: list[float], after: list[float]) -> str:
    diffs = [a - b for a, b in zip(after, before, strict=True)]
    sd = statistics.stdev(diffs) if len(diffs) > 1 else 0.0
    better = sum(d < -1e-9 for d in diffs)
    worse = sum(d > 1e-9 for d in diffs)
    return (f"| {name} | {statistics.mean(before):.4f} | {statistics.mean(after):.4f} | "
            f"{statistics.mean(diffs):+.4f} ± {sd:.4f} | {better} / {worse} / "
            f"{len(diffs) - better - worse} |")


def main(argv: list[str]) -> None:
    """Per table: 2-way TVD, mean KS and mean outside share over the columns every record has;
    with a third argument ``--columns``, each such column's KS and outside share too."""
    before, after = load(Path(argv[0])), load(Path(argv[1]))
    per_column = "--columns" in argv[2:]
    keys = sorted(set(before) & set(after))
    print("| table, column, figure | before | after | paired Δ mean ± sd | better / worse / same seeds |")
    print("|---|---|---|---|---|")
    for table in sorted({k[0] for k in keys}):
        seeds = [k for k in keys if k[0] == table]
        short = table.split("/")[-1]
        columns = [c for c in before[seeds[0]]["columns"]
                   if all(c in r[k]["columns"] for r in (before, after) for k in seeds)]
        if all(r[k]["two_way"] is not None for r in (before, after) for k in seeds):
            print(line(f"{short} 2-way TVD", [before[k]["two_way"] for k in seeds],
                       [after[k]["two_way"] for k in seeds]))
        for figure in ("ks", "outside") if columns else ():
            def mean(records: dict, k: tuple, figure: str = figure,
                     columns: list[str] = columns) -> float:
                return statistics.mean(records[k]["columns"][c][figure] or 0.0 for c in columns)
            print(line(f"{short} mean {figure} ({len(columns)} columns)",
                       [mean(before, k) for k in seeds], [mean(after, k) for k in seeds]))
        for column in columns if per_column else ():
            for figure in ("ks", "outside"):
                b = [before[k]["columns"][column][figure] or 0.0 for k in seeds]
                a = [after[k]["columns"][column][figure] or 0.0 for k in seeds]
                print(line(f"{short} {column} {figure}", b, a))


if __name__ == "__main__":
    main(sys.argv[1:])
