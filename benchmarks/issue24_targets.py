"""Issue 24's targets per table, read from a suite's ``runs.jsonl`` (``benchmarks/suite.py``, with
the dpmm releases scored into it by ``--score-dpmm``): one markdown table.

* safe ≤ 1.25 × data-read: the safe draft's mean 2-way TVD over the data-read draft's, per
  recipe run with both drafts (all must hold), on tables of ≥ 1,000 rows (the train split:
  what the run reads);
* below dpmm: our 2- and 3-way TVD (ε = 1, the default recipe AIM, and MST; the safe draft,
  what a new user gets, and the data-read draft, whose public domain dpmm is given) below the
  best of dpmm's MST, AIM and PrivBayes, each dpmm release scored as written and rounded (the
  better of the two counts; each variant's mean over its runs);
* worst point mass ≤ max(0.05, 2 × the floor's) and mean KS ≤ max(0.03, 2 × the floor's), per
  recipe, safe draft.

    PYTHONPATH=. .venv/bin/python benchmarks/issue24_targets.py \\
        benchmarks/results/suite-issue24-main/runs.jsonl

``--where N`` lists, per table, the N columns whose 1-way distance (the yardstick's per column:
TVD for categories, KS for numbers) grows most from the data-read to the safe draft.
``--dpmm OLD/runs.jsonl`` takes dpmm's records from another suite's runs (same splits: dpmm is
not re-run when only our code changed; repeat it to pool several; dpmm's best is the lowest
per-variant mean, ``--dpmm-detail`` names the variant and sets our drafts beside it);
``--before OLD/runs.jsonl`` adds a before/after table of the safe draft's 2-way TVD,
safe/data-read ratio, worst point mass and mean KS per recipe.
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
        best = {k: best_dpmm(runs, name, k)[0] for k in ("tvd_2", "tvd_3")}
        out = [name, f"{size:,}"]
        for recipe in ("mst", "aim"):
            draft, safe = mean(ours[recipe, "draft"], "tvd_2"), mean(ours[recipe, "safe"], "tvd_2")
            ratio = None if draft is None or safe is None else safe / draft
            out.append(f"{cell(draft)} / {cell(safe)} = {cell(ratio, 2)}"
                       + ("" if size >= LARGE or ratio is None else " (small)"))
        # over the recipes run with both drafts (an AIM-only suite is judged on AIM alone)
        held = [h for h in (ratio_held(ours, recipe) for recipe in ("mst", "aim")) if h is not None]
        out.append(verdict(all(held) if held and size >= LARGE else None))
        out.append(f"{cell(best['tvd_2'])} / {cell(best['tvd_3'])}")
        for mode in ("safe", "draft"):
            below = [below_dpmm(ours[recipe, mode], best) for recipe in ("aim", "mst")]
            out.append(" / ".join(verdict(b) for b in below))
        mass_limit = max(0.05, 2 * (floor.get("worst_mass") or 0.0))
        ks_limit = max(0.03, 2 * (floor.get("mean_ks") or 0.0))
        for key, limit in (("worst_mass", mass_limit), ("mean_ks", ks_limit)):
            values = [mean(ours[recipe, "safe"], key) for recipe in ("mst", "aim")]
            out.append(f"{' / '.join(cell(v) for v in values)} (≤ {limit:.3f}): "
                       + " / ".join(verdict(None if v is None else v <= limit) for v in values))
        rows.append("| " + " | ".join(out) + " |")
    return rows


def best_dpmm(runs: dict[tuple[str, str, str], list[dict]], name: str,
              key: str) -> tuple[float | None, str]:
    """dpmm's best on ``name`` for ``key``: the lowest, over dpmm's variants (model, as written
    or rounded), of the variant's mean over its finished runs; with the variant's name. A mean,
    not the luckiest single run, so that repeats do not lower the bar by chance."""
    means = {recipe.removeprefix("dpmm-"): mean(rs, key) for (t, recipe, _), rs in runs.items()
             if t == name and recipe.startswith("dpmm")}
    means = {variant: value for variant, value in means.items() if value is not None}
    if not means:
        return None, "–"
    variant = min(means, key=means.get)
    return means[variant], variant


def below_dpmm(ours: list[dict], best: dict[str, float | None]) -> bool | None:
    """Both our mean 2- and 3-way TVD strictly below dpmm's best (None: either not measured)."""
    t2, t3 = mean(ours, "tvd_2"), mean(ours, "tvd_3")
    if None in (t2, t3, best["tvd_2"], best["tvd_3"]):
        return None
    return t2 < best["tvd_2"] and t3 < best["tvd_3"]


def dpmm_rows(records: list[dict]) -> list[str]:
    """One markdown row per table: dpmm's best 2- and 3-way (which variant), then our mean 2 / 3-way
    per recipe and draft, and dpmm's runs (finished of run, per model) with their mean CPU s."""
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        if r.get("kind") == "run":
            runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
    rows = []
    for name in dict.fromkeys(r["table"] for r in records if r.get("kind") == "floor"):
        out = [name]
        for key in ("tvd_2", "tvd_3"):
            value, variant = best_dpmm(runs, name, key)
            out.append(f"{cell(value)} ({variant})")
        for recipe in ("aim", "mst"):
            for mode in ("safe", "draft"):
                mine = runs.get((name, recipe, mode), [])
                out.append(f"{cell(mean(mine, 'tvd_2'))} / {cell(mean(mine, 'tvd_3'))}")
        models = []
        for model in ("mst", "aim", "privbayes"):
            mine = runs.get((name, f"dpmm-{model}", "public bounds"), [])
            if mine:
                done = [r for r in mine if r.get("status") == "ok"]
                cpu = mean(done, "cpu_seconds")
                models.append(f"{model} {len(done)}/{len(mine)}"
                              + ("" if cpu is None else f", {cpu:.0f} s"))
        out.append("; ".join(models) or "–")
        rows.append("| " + " | ".join(out) + " |")
    return rows


def before_after_rows(before: list[dict], after: list[dict]) -> list[str]:
    """One markdown row per (table, recipe): the safe draft's figures before → after, with the
    safe / data-read ratio of the mean 2-way TVD; tables in ``after``'s order."""
    def grouped(records: list[dict]) -> dict[tuple[str, str, str], list[dict]]:
        runs: dict[tuple[str, str, str], list[dict]] = {}
        for r in records:
            if r.get("kind") == "run" and not r["recipe"].startswith("dpmm"):
                runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
        return runs

    old, new = grouped(before), grouped(after)
    tables = list(dict.fromkeys(r["table"] for r in after if r.get("kind") == "floor"))
    rows = []
    for name in tables:
        for recipe in ("mst", "aim"):
            if not new.get((name, recipe, "safe")):
                continue
            out = [name, recipe]
            for key in ("tvd_2", "ratio", "worst_mass", "mean_ks"):
                pair = []
                for runs in (old, new):
                    safe = mean(runs.get((name, recipe, "safe"), []), "tvd_2" if key == "ratio" else key)
                    draft = mean(runs.get((name, recipe, "draft"), []), "tvd_2")
                    value = (None if safe is None or not draft else safe / draft) if key == "ratio" else safe
                    pair.append(cell(value, 2 if key == "ratio" else 3))
                out.append(" → ".join(pair))
            done = [r for r in new[name, recipe, "safe"] if r.get("status") == "ok"]
            worst = max(done, key=lambda r: r.get("worst_mass") or 0.0, default=None)
            out.append((worst or {}).get("worst_mass_at") or "–")
            out.append(f"{len(done)} of {len(new[name, recipe, 'safe'])}")
            rows.append("| " + " | ".join(out) + " |")
    return rows


def where_rows(records: list[dict], most: int) -> list[str]:
    """One markdown row per (table, recipe): the ``most`` columns whose mean 1-way distance grows
    most from the data-read to the safe draft (draft → safe, with the safe release's kind)."""
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        if r.get("kind") == "run" and r.get("status") == "ok" and r.get("distance_by_column"):
            runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
    rows = []
    for (name, recipe, mode), safe in runs.items():
        draft = runs.get((name, recipe, "draft"))
        if mode != "safe" or not draft:
            continue
        columns = safe[0]["distance_by_column"]
        growth = {}
        for column in columns:
            before = mean([{"status": "ok", "d": r["distance_by_column"].get(column)} for r in draft], "d")
            after = mean([{"status": "ok", "d": r["distance_by_column"].get(column)} for r in safe], "d")
            if before is not None and after is not None:
                growth[column] = (after - before, before, after)
        top = sorted(growth.items(), key=lambda item: -item[1][0])[:most]
        kinds = safe[0].get("kinds", {})
        cells = [f"{c} {b:.3f} → {a:.3f} ({kinds.get(c, '?').split()[0]})" for c, (_, b, a) in top]
        rows.append(f"| {name} | {recipe} | " + "; ".join(cells) + " |")
    return rows


def read_runs(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def spread_rows(records: list[dict]) -> list[str]:
    """One markdown row per (table, recipe, draft) of our runs: each figure's min–max over the
    finished runs, and how many finished."""
    runs: dict[tuple[str, str, str], list[dict]] = {}
    for r in records:
        if r.get("kind") == "run" and not r["recipe"].startswith("dpmm"):
            runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
    rows = []
    for (name, recipe, mode), group in runs.items():
        done = [r for r in group if r.get("status") == "ok"]
        cells = []
        for key in ("tvd_2", "tvd_3", "worst_mass", "mean_ks"):
            values = [r[key] for r in done if r.get(key) is not None]
            cells.append(f"{min(values):.3f}–{max(values):.3f}" if values else "–")
        rows.append(f"| {name} | {recipe} | {mode} | " + " | ".join(cells)
                    + f" | {len(done)} of {len(group)} |")
    return rows


def ratio_held(ours: dict, recipe: str) -> bool | None:
    draft, safe = mean(ours[recipe, "draft"], "tvd_2"), mean(ours[recipe, "safe"], "tvd_2")
    return None if draft is None or safe is None else safe <= RATIO * draft


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    parser.add_argument("--dpmm", type=Path, action="append", help="take dpmm's records from "
                        "this runs.jsonl instead (same splits), dropping any in RUNS; repeat the "
                        "option to pool several")
    parser.add_argument("--dpmm-detail", action="store_true", help="also print, per table, "
                        "dpmm's best (which model) against our 2 / 3-way, both drafts")
    parser.add_argument("--before", type=Path, help="also print the safe draft's figures "
                        "before (this runs.jsonl) → after (RUNS)")
    parser.add_argument("--where", type=int, default=0, metavar="N", help="also list the N "
                        "columns per table whose 1-way distance grows most from draft to safe")
    parser.add_argument("--spreads", action="store_true", help="also list each figure's "
                        "min–max over the runs per (table, recipe, draft)")
    args = parser.parse_args()
    records = read_runs(args.runs)
    if args.dpmm:
        def is_dpmm(r: dict) -> bool:
            return r.get("kind") == "run" and r["recipe"].startswith("dpmm")
        records = [r for r in records if not is_dpmm(r)] + [r for path in args.dpmm
                                                           for r in read_runs(path) if is_dpmm(r)]
    print("| table | train rows | MST 2-way: draft / safe = ratio | AIM 2-way: draft / safe = ratio | "
          "safe ≤ 1.25× (≥ 1,000 rows) | best dpmm 2 / 3-way | safe below dpmm (AIM / MST) | "
          "data-read below dpmm (AIM / MST) | safe worst point mass (MST / AIM) | "
          "safe mean KS (MST / AIM) |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for row in table_rows(records):
        print(row)
    if args.dpmm_detail:
        print("\n| table | best dpmm 2-way (variant) | best dpmm 3-way (variant) | AIM safe 2 / 3 | "
              "AIM data-read 2 / 3 | MST safe 2 / 3 | MST data-read 2 / 3 | dpmm runs finished "
              "(mean CPU s) |")
        print("|---|---|---|---|---|---|---|---|")
        for row in dpmm_rows(records):
            print(row)
    if args.before:
        print("\n| table | recipe | safe 2-way TVD | safe / data-read (2-way) | safe worst point mass "
              "| safe mean KS | worst point mass now (the worst run) | safe runs finished now |")
        print("|---|---|---|---|---|---|---|---|")
        for row in before_after_rows(read_runs(args.before), records):
            print(row)
    if args.spreads:
        print("\n| table | recipe | draft | 2-way TVD | 3-way TVD | worst point mass | mean KS | "
              "runs finished |")
        print("|---|---|---|---|---|---|---|---|")
        for row in spread_rows(records):
            print(row)
    if args.where:
        print("\n| table | recipe | columns whose 1-way distance grows most: draft → safe (safe kind) |")
        print("|---|---|---|")
        for row in where_rows(records, args.where):
            print(row)


if __name__ == "__main__":
    main()
