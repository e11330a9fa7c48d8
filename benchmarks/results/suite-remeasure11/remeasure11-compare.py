"""remeasure11: before (remeasure10, main ccda7d6) -> after (this folder) per table and draft, AIM,
eps = 1: mean, min-max and the Welch 95 % interval of after - before for 2-way TVD, worst point
mass, mean KS and 3-way TVD (runs are unseeded, so unpaired; the records hold wall seconds
only, not CPU, so time is not compared). Markdown to stdout.

    /work/main/.venv/bin/python remeasure11-compare.py BEFORE/runs.jsonl AFTER/runs.jsonl
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path

from scipy import stats

FIGURES = ("tvd_2", "tvd_3", "worst_mass", "mean_ks")


def runs(path: Path) -> dict[tuple[str, str], list[dict]]:
    """Finished AIM runs at eps 1 by (table, draft)."""
    cells: dict[tuple[str, str], list[dict]] = {}
    for line in path.read_text().splitlines():
        record = json.loads(line) if line.strip() else {}
        if (record.get("kind") == "run" and record.get("status") == "ok"
                and record.get("recipe") == "aim" and record.get("epsilon_target") == 1.0):
            cells.setdefault((record["table"], record["schema_mode"]), []).append(record)
    return cells


def welch(before: list[float], after: list[float]) -> str:
    """after - before with its Welch 95 % interval, and whether it excludes 0."""
    diff = statistics.mean(after) - statistics.mean(before)
    if len(before) < 2 or len(after) < 2:
        return f"{diff:+.4f}"
    va, vb = statistics.variance(after) / len(after), statistics.variance(before) / len(before)
    se = (va + vb) ** 0.5
    if se == 0:
        return f"{diff:+.4f}"
    dof = (va + vb) ** 2 / (va ** 2 / (len(after) - 1) + vb ** 2 / (len(before) - 1))
    half = stats.t.ppf(0.975, dof) * se
    verdict = "**moved**" if abs(diff) > half else "within"
    return f"{diff:+.4f} [{diff - half:+.4f}, {diff + half:+.4f}] {verdict}"


def cell(values: list[float]) -> str:
    """mean (min-max)."""
    return f"{statistics.mean(values):.4f} ({min(values):.4f}-{max(values):.4f})"


def main() -> None:
    """Print one row per (table, draft, figure) present in both files."""
    before, after = runs(Path(sys.argv[1])), runs(Path(sys.argv[2]))
    print("| table | draft | figure | before (n) | after (n) | after - before [Welch 95 %] |")
    print("|---|---|---|---|---|---|")
    for key in after:
        if key not in before:
            continue
        for figure in FIGURES:
            b = [r[figure] for r in before[key] if r.get(figure) is not None]
            a = [r[figure] for r in after[key] if r.get(figure) is not None]
            if a and b:
                print(f"| {key[0]} | {key[1]} | {figure} | {cell(b)} ({len(b)}) | {cell(a)} "
                      f"({len(a)}) | {welch(b, a)} |")


if __name__ == "__main__":
    main()
