"""Step 1e of the DP bounds' read-out (branch tailwin, ``bounds.spread_tails``): on many seeded
draws of the domain step alone, per numeric column of a suite table, the resolved bounds with the
tail windows (after) and without them (before: ``spread_tails`` replaced by the identity), the
share of the train split's values outside them (clipped), and the share of draws whose bounds
the windows moved. Both are post-processing of the same draw's DP outputs, so they are compared
on the same seeds. Reads the real table: a measurement, not a release.

    PYTHONPATH=. .venv/bin/python benchmarks/tailwin_draws.py college,wage,adult,loans 200
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.privacy import bounds
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import NumericColumn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from kind_draws import safe_domain_step  # noqa: E402


def resolved_bounds(table: str, count: int, work: Path, windows: bool,
                    rows: int | None) -> dict[str, list[tuple[float, float]]]:
    """Per numeric column of ``table``'s safe draft, its resolved bounds in each of ``count``
    seeded draws, with step 1e (``windows``) or without."""
    job, stage, stage_plan, chunks = safe_domain_step(table, work, "tailwin", rows)
    original = bounds.spread_tails
    if not windows:
        bounds.spread_tails = lambda noisy, sigma, kept, middle: kept
    found: dict[str, list] = {}
    try:
        for seed in range(count):
            resolved = stage.resolve(job, stage_plan, Ledger(job.config.budget.neighbouring),
                                     RandomSource.seeded(seed), chunks=chunks)
            for column in resolved.schema.columns:
                if isinstance(column, NumericColumn) and column.lower is not None:
                    found.setdefault(column.name, []).append((column.lower, column.upper))
    finally:
        bounds.spread_tails = original
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", help="comma-separated suite tables")
    parser.add_argument("draws", type=int)
    parser.add_argument("--rows", type=int, default=None, help="a seeded subsample of the train")
    parser.add_argument("--work", type=Path, default=Path("/tmp/tailwin-work"))
    parser.add_argument("--false-tail", type=float, default=None,
                        help="step 1e's per-side false rate instead of bounds.FALSE_TAIL")
    args = parser.parse_args()
    if args.false_tail is not None:  # a what-if on the rate: the threshold is cached
        bounds.FALSE_TAIL = args.false_tail
        bounds.tail_threshold.cache_clear()
    print("| table | column | draws (before/after) | clipped before: mean / worst | clipped after: "
          "mean / worst | median upper before → after | draws moved | largest upper after / before |")
    print("|---|---|---|---|---|---|---|---|")
    for table in args.tables.split(","):
        before = resolved_bounds(table, args.draws, args.work, False, args.rows)
        after = resolved_bounds(table, args.draws, args.work, True, args.rows)
        real = pd.read_csv(args.work / table / "train.csv" if table != "adult"
                           else ROOT / "data/adult/adult_train.csv")
        for name in sorted(set(before) | set(after)):
            values = pd.to_numeric(real[name], errors="coerce").dropna().to_numpy()
            line = [table, f"`{name}`",
                    f"{len(before.get(name, []))}/{len(after.get(name, []))}"]
            for reads in (before.get(name, []), after.get(name, [])):
                clipped = [float(((values < lo) | (values > hi)).mean()) for lo, hi in reads]
                line.append(f"{np.mean(clipped):.1%} / {np.max(clipped):.1%}" if clipped else "-")
            uppers = [np.median([hi for _, hi in r]) if r else float("nan")
                      for r in (before.get(name, []), after.get(name, []))]
            line.append(f"{uppers[0]:g} → {uppers[1]:g}")
            pairs = list(zip(before.get(name, []), after.get(name, []), strict=False))
            moved = sum(b != a for b, a in pairs)
            widest = max((a[1] / b[1] for b, a in pairs if b[1] > 0), default=float("nan"))
            line += [f"{moved}/{len(pairs)}", f"{widest:g}"]
            print("| " + " | ".join(line) + " |", flush=True)


if __name__ == "__main__":
    main()
