"""Issue 24's targets per table, read from a suite's ``runs.jsonl`` (``benchmarks/suite.py``, with
the dpmm releases scored into it by ``--score-dpmm``): one markdown table.

* safe ≤ 1.25 × data-read: the safe draft's mean 2-way TVD over the data-read draft's, per
  recipe, on tables of ≥ 1,000 rows (the train split: what the run reads);
* below dpmm: our 2- and 3-way TVD (ε = 1, the default recipe AIM, and MST; the safe draft,
  what a new user gets) below the best of dpmm's MST, AIM and PrivBayes, each dpmm release
  scored as written and rounded (the better of the two counts);
* worst point mass ≤ max(0.05, 2 × the floor's) and mean KS ≤ max(0.03, 2 × the floor's), per
  recipe, safe draft.

    PYTHONPATH=. .venv/bin/python benchmarks/issue24_targets.py \\
        benchmarks/results/suite-issue24-main/runs.jsonl
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path

LARGE = 1_000  # train rows from which the 1.25× target applies (the rows a run reads)
RATIO = 1.25


def mean(records: list[dict], key: str) -> float | None:
    """The mean of ``key`` over the finished runs that have it."""
    values = [r[key] for r in records if r.get("status") == "ok" and r.get(key) is not None]
    return statistics.mean(values) if values else None


def cell(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def verdict(held: bool | None) -> str:
    return "–" if held is None else ("yes" if held else "**no**")


def table_rows(records: list[dict]) -> list[str]:
    """One markdown row per table (in the order of first appearance)."""
    floors = {r["table"]: r for r in records if r.get("kind") == "floor" and "tvd_2" in r}
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        if r.get("kind") == "run":
            runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
    rows = []
    for name, floor in floors.items():
        size = floor["rows_train"]
        ours = {(recipe, mode): runs.get((name, recipe, mode), [])
                for recipe in ("mst", "aim") for mode in ("draft", "safe")}
        dpmm = [r for (t, recipe, _), rs in runs.items() if t == name and recipe.startswith("dpmm")
                for r in rs]
        best = {k: min((r[k] for r in dpmm if r.get("status") == "ok"), default=None)
                for k in ("tvd_2", "tvd_3")}
        out = [name, f"{size:,}"]
        for recipe in ("mst", "aim"):
            draft, safe = mean(ours[recipe, "draft"], "tvd_2"), mean(ours[recipe, "safe"], "tvd_2")
            ratio = None if draft is None or safe is None else safe / draft
            out.append(f"{cell(draft)} / {cell(safe)} = {cell(ratio, 2)}"
                       + ("" if size >= LARGE or ratio is None else " (small)"))
        held = [ratio_held(ours, recipe) for recipe in ("mst", "aim")] if size >= LARGE else [None]
        out.append(verdict(None if None in held else all(held)))
        out.append(f"{cell(best['tvd_2'])} / {cell(best['tvd_3'])}")
        below = []
        for recipe in ("aim", "mst"):
            safe = ours[recipe, "safe"]
            t2, t3 = mean(safe, "tvd_2"), mean(safe, "tvd_3")
            below.append(None if None in (t2, t3, best["tvd_2"]) else
                         t2 < best["tvd_2"] and t3 < best["tvd_3"])
        out.append(" / ".join(verdict(b) for b in below))
        mass_limit = max(0.05, 2 * (floor.get("worst_mass") or 0.0))
        ks_limit = max(0.03, 2 * (floor.get("mean_ks") or 0.0))
        for key, limit in (("worst_mass", mass_limit), ("mean_ks", ks_limit)):
            values = [mean(ours[recipe, "safe"], key) for recipe in ("mst", "aim")]
            out.append(f"{' / '.join(cell(v) for v in values)} (≤ {limit:.3f}): "
                       + " / ".join(verdict(None if v is None else v <= limit) for v in values))
        rows.append("| " + " | ".join(out) + " |")
    return rows


def ratio_held(ours: dict, recipe: str) -> bool | None:
    draft, safe = mean(ours[recipe, "draft"], "tvd_2"), mean(ours[recipe, "safe"], "tvd_2")
    return None if draft is None or safe is None else safe <= RATIO * draft


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    args = parser.parse_args()
    records = [json.loads(line) for line in args.runs.read_text().splitlines() if line.strip()]
    print("| table | train rows | MST 2-way: draft / safe = ratio | AIM 2-way: draft / safe = ratio | "
          "safe ≤ 1.25× (≥ 1,000 rows) | best dpmm 2 / 3-way | safe below dpmm (AIM / MST) | "
          "safe worst point mass (MST / AIM) | safe mean KS (MST / AIM) |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in table_rows(records):
        print(row)


if __name__ == "__main__":
    main()
