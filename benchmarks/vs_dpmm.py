"""Ours against dpmm's best with the noise of both (issue 24's "below dpmm"): is a margin outside
the runs' spread, and on which columns does dpmm win.

``issue24_targets.py`` compares means: a margin of 0.001 passes as a win. Here, per table, our
mean 2- and 3-way TVD (a recipe and draft) minus the mean of dpmm's best variant (the lowest
per-variant mean, ``issue24_targets.best_dpmm``), with a Welch 95 % interval of that difference
over the two sets of runs (Student's t with Welch–Satterthwaite degrees of freedom; each run a
draw of the same pipeline with fresh noise): **below** when the whole interval is under 0,
**above** when it is over 0, else **tie** (inside the noise). A variant with one run has no
spread: its interval is left out (``–``) and the verdict is the means' alone, marked "(1 run)".

``--columns TABLE`` lists, for one table, each column's mean 1-way distance (the suite's yardstick:
TVD for categories, KS for numbers; ``distance_by_column``) for our safe and data-read drafts and
each dpmm variant: where dpmm's best wins or loses.

    PYTHONPATH=. .venv/bin/python benchmarks/vs_dpmm.py RUNS.jsonl --dpmm DPMM.jsonl \\
        [--dpmm MORE.jsonl] [--recipe aim] [--draft safe] [--columns hhs_breaches]
"""

from __future__ import annotations

import argparse
import math
import runpy
import statistics
from pathlib import Path

from scipy import stats

TARGETS = runpy.run_path(str(Path(__file__).resolve().parent / "issue24_targets.py"))
best_dpmm, read_runs = TARGETS["best_dpmm"], TARGETS["read_runs"]


def grouped(records: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
    """The finished runs per (table, recipe, draft); dpmm's recipes are ``dpmm-<variant>``."""
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        if r.get("kind") == "run" and r.get("status") == "ok":
            runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
    return runs


def welch(ours: list[float], theirs: list[float]) -> tuple[float, float | None, float | None]:
    """Mean of ``ours`` minus mean of ``theirs`` and its Welch 95 % interval (None when either
    side has a single run: no spread to judge)."""
    difference = statistics.mean(ours) - statistics.mean(theirs)
    if len(ours) < 2 or len(theirs) < 2:
        return difference, None, None
    a, b = statistics.variance(ours) / len(ours), statistics.variance(theirs) / len(theirs)
    if a + b == 0:
        return difference, difference, difference
    freedom = (a + b) ** 2 / (a**2 / (len(ours) - 1) + b**2 / (len(theirs) - 1))
    half = stats.t.ppf(0.975, freedom) * math.sqrt(a + b)
    return difference, difference - half, difference + half


def verdict(difference: float, low: float | None, high: float | None) -> str:
    """below / above when the interval excludes 0, tie when it holds it; the means' sign alone
    (marked) when there is no interval."""
    if low is None or high is None:
        return ("below" if difference < 0 else "above") + " (1 run)"
    return "below" if high < 0 else "above" if low > 0 else "tie"


def margin_rows(records: list[dict], recipe: str, draft: str) -> list[str]:
    """One markdown row per table with our runs of ``recipe`` on ``draft`` and a dpmm record: per
    2- and 3-way TVD, ours (n) − dpmm's best variant (n) = difference [interval]: verdict."""
    runs = grouped(records)
    rows = []
    for (name, mine, mode), ours in runs.items():
        if mine != recipe or mode != draft:
            continue
        cells = []
        for key in ("tvd_2", "tvd_3"):
            value, variant = best_dpmm(runs, name, key)
            if value is None:
                cells.append("no dpmm run")
                continue
            theirs = [r[key] for r in runs[name, f"dpmm-{variant}", "public bounds"]]
            difference, low, high = welch([r[key] for r in ours], theirs)
            interval = "–" if low is None else f"[{low:+.4f}, {high:+.4f}]"
            cells.append(f"{statistics.mean(r[key] for r in ours):.4f} ({len(ours)}) − "
                         f"{value:.4f} {variant} ({len(theirs)}) = {difference:+.4f} {interval}: "
                         f"**{verdict(difference, low, high)}**")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return rows


def column_rows(records: list[dict], table: str) -> list[str]:
    """One markdown row per column of ``table``: mean 1-way distance of each (recipe, draft) with
    runs that record it, ours first, then dpmm's variants."""
    runs = {key: kept for key, rs in grouped(records).items() if key[0] == table
            and (kept := [r for r in rs if r.get("distance_by_column")])}
    order = sorted(runs, key=lambda k: (k[1].startswith("dpmm"), k[1], k[2]))
    columns = list(dict.fromkeys(c for k in order for r in runs[k]
                                 for c in r["distance_by_column"]))
    head = " | ".join(f"{k[1]} {k[2]} ({len(runs[k])})" for k in order)
    rows = [f"| column | {head} |", "|---|" + "---|" * len(order)]
    for column in columns:
        cells = []
        for k in order:
            values = [r["distance_by_column"][column] for r in runs[k]
                      if column in r["distance_by_column"]]
            cells.append(f"{statistics.mean(values):.3f}" if values else "–")
        rows.append(f"| {column} | " + " | ".join(cells) + " |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path, nargs="+", help="our runs (suite.py runs.jsonl)")
    parser.add_argument("--dpmm", type=Path, action="append", default=[],
                        help="dpmm's scored runs (suite.py --score-dpmm); repeat to pool")
    parser.add_argument("--recipe", default="aim")
    parser.add_argument("--draft", default="safe", help="safe or draft (the data-read draft)")
    parser.add_argument("--columns", metavar="TABLE", help="also list TABLE's 1-way distance per "
                        "column for our drafts and each dpmm variant")
    args = parser.parse_args()
    def is_dpmm(r: dict) -> bool:
        return r.get("kind") == "run" and r["recipe"].startswith("dpmm")
    records = [r for path in args.runs for r in read_runs(path) if not is_dpmm(r)]
    records += [r for path in args.dpmm for r in read_runs(path) if is_dpmm(r)]
    print(f"| table | 2-way: {args.recipe} {args.draft} − dpmm's best = difference [Welch 95 %] | "
          "3-way: likewise |")
    print("|---|---|---|")
    for row in margin_rows(records, args.recipe, args.draft):
        print(row)
    if args.columns:
        print()
        print("\n".join(column_rows(records, args.columns)))


if __name__ == "__main__":
    main()
