"""The heaps' range per side (branch heaprange): on many seeded draws of the domain step alone,
per column the heaps' range test ran on, how often main's rule (``HeapRange.codes``: both
bounds onto the end heaps) and this branch's (``HeapRange.bounds``: each side onto its end heap
only where its end test holds) fire, the bounds they give, and the share of the train split's
rows outside them (clipped onto the end heaps). Both rules are post-processing of the same
draw's DP outputs, so they are compared on the same draws. Reads the real table: a measurement,
not a release. A suite table's split and safe schema come from benchmarks/suite.py's
``prepare`` (written under --work, the wheels read from benchmarks/.cache).

    PYTHONPATH=. .venv/bin/python benchmarks/heaprange_draws.py loans,wage 200
"""

from __future__ import annotations

import argparse
import collections
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from kind_draws import safe_domain_step  # noqa: E402

# end tests compared: (threshold in σ of the end residual, kept heaps read through their
# selection — ``selected_count`` — or as their plain noisy counts)
THRESHOLDS = ((2.5, True), (2.5, False), (2.0, False), (1.5, False))


def draws(table: str, count: int, work: Path) -> dict[str, list]:
    """Per column, its ``HeapRange`` in each draw where the test ran."""
    job, stage, stage_plan, chunks = safe_domain_step(table, work, "heaprange")
    found: dict[str, list] = collections.defaultdict(list)
    for seed in range(count):
        stage.heap_ranges.clear()
        stage.resolve(job, stage_plan, Ledger(job.config.budget.neighbouring),
                      RandomSource.seeded(seed), chunks=chunks)
        for name, test in stage.heap_ranges.items():
            found[name].append(test)
    return found


def rule_bounds(test, rule: tuple[float, bool] | None) -> tuple[float, float]:
    """The bounds a draw gives: main's rule (None: both ends when ``codes``), or the branch's
    with an end test ``rule`` (threshold, lifted); the reading's own when the rule does not
    fire."""
    if not test.codes:
        return test.outer
    if rule is None:
        return (test.lower, test.upper)
    threshold, lifted = rule

    def holds(end) -> bool:  # EndTest.holds at another threshold, with or without the lift
        residual = end.residual if lifted else end.residual - end.lift
        return end.sigma == 0.0 or residual < threshold * end.sigma

    return (test.lower if holds(test.ends[0]) else test.outer[0],
            test.upper if holds(test.ends[1]) else test.outer[1])


def report(table: str, name: str, tests: list, values: pd.Series) -> str:
    """One markdown row: per rule, the share of draws whose bounds it moved off the reading's,
    the commonest bounds, the train rows outside (clipped onto the bounds): mean / worst."""
    line = [table, f"`{name}`", str(len(tests))]
    for rule in (None, *THRESHOLDS):
        bounds = [rule_bounds(test, rule) for test in tests]
        moved = sum(b != test.outer for b, test in zip(bounds, tests, strict=True))
        common = collections.Counter(bounds).most_common(2)
        clipped = [float(((values < lo) | (values > hi)).mean()) for lo, hi in bounds]
        line += [f"{moved / len(tests):.0%}",
                 ", ".join(f"[{lo:g}, {hi:g}] ×{n}" for (lo, hi), n in common),
                 f"{np.mean(clipped):.2%} / {np.max(clipped):.2%}"]
    return "| " + " | ".join(line) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", help="comma-separated suite tables")
    parser.add_argument("draws", type=int)
    parser.add_argument("--work", type=Path, default=Path("/tmp/heaprange-work"))
    args = parser.parse_args()
    rules = ["main", *(f"end {t:g}σ{' lifted' if lifted else ''}" for t, lifted in THRESHOLDS)]
    print("| table | column | draws | " + " | ".join(
        f"{r}: moved | {r}: bounds | {r}: clipped mean / worst" for r in rules) + " |")
    print("|---|---|---|" + "---|---|---|" * len(rules))
    for table in args.tables.split(","):
        found = draws(table, args.draws, args.work)
        real = pd.read_csv(args.work / table / "train.csv" if table != "adult"
                           else ROOT / "data/adult/adult_train.csv")
        for name, tests in sorted(found.items()):
            if any(test.codes for test in tests):
                values = pd.to_numeric(real[name], errors="coerce").dropna()
                print(report(table, name, tests, values), flush=True)


if __name__ == "__main__":
    main()
