"""Which 2-way pairs and numeric columns carry the gap between two variants of
``benchmarks/safe_gap.py`` (issue 24, branch adultgap): reads its JSONL records (every record of a
variant for the table and recipe pooled, ``pool``) and prints, as Markdown,

* each variant's (``safe@domain_share=0.3``: run with that budget key) 2-way TVD (mean ± sd
  over its seeds), ε and the recipe's ρ;
* the ``--top`` pairs whose mean TVD grows most from ``--base`` to ``--other`` (safe − draft by
  default), with each pair's TVD in every variant listed, and the share of the gap they hold;
* with ``--groups``, each variant's gap to ``--base`` split into the pairs holding each named
  column and the rest;
* per numeric column (of the data-read draft) the 1-way TVD (16 quantile bins) and KS per variant.

    .venv/bin/python benchmarks/safe_gap_pairs.py benchmarks/results/adultgap.jsonl \\
        --variants draft,safe,grids,rho,tcut,underived --groups native-country,education-num
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path


def label(record: dict) -> str:
    """A record's name: its variant, then each budget key, constant, ``--branch-share`` and
    ``--public`` column it set (``safe@domain_share=0.3``)."""
    keys = {**record.get("budget", {}), **record.get("constants", {}),
            **({"branch_share": record["branch_share"]} if "branch_share" in record else {}),
            **({"public": "+".join(record["public"])} if record.get("public") else {})}
    return record["variant"] + "".join(f"@{k}={v}" for k, v in keys.items())


def pooled(path: Path, table: str, recipe: str) -> dict[str, dict]:
    """Per label (``label``) of ``table`` and ``recipe``, its records with per-pair figures
    pooled: every run's 2-way TVD, and the per-pair and per-column means weighted by seeds
    (records of other seeds, ``--seed0``, add runs; the same seeds twice count twice)."""
    grouped: dict[str, list[dict]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record["table"] == table and record["recipe"] == recipe and "pairs" in record:
            grouped.setdefault(label(record), []).append(record)
    return {name: pool(records) for name, records in grouped.items()}


def pool(records: list[dict]) -> dict:
    """One record from several of one label: runs joined, means weighted by their seeds."""
    runs = [run for r in records for run in r["runs"]]

    def mean(key: str) -> dict[str, float]:
        return {k: sum(r[key][k] * r["seeds"] for r in records) / len(runs)
                for k in records[0][key]}

    return {**records[-1], "runs": runs, "seeds": len(runs), "tvd_2": statistics.fmean(runs),
            "tvd_2_sd": statistics.pstdev(runs), "pairs": mean("pairs"),
            "columns": mean("columns"), "ks": mean("ks")}


def pair_rows(records: dict[str, dict], base: str, other: str, shown: list[str],
              top: int) -> list[str]:
    """Markdown rows: the ``top`` pairs by TVD(other) − TVD(base), every ``shown`` variant's."""
    gap = {pair: records[other]["pairs"][pair] - tvd for pair, tvd in records[base]["pairs"].items()}
    total = sum(gap.values())
    lines = [f"| pair | {other} − {base} | " + " | ".join(shown) + " |",
             "|---" * (len(shown) + 2) + "|"]
    for pair, difference in sorted(gap.items(), key=lambda kv: -kv[1])[:top]:
        lines.append(f"| {pair.replace('|', ' × ')} | {difference:+.4f} | " + " | ".join(
            f"{records[v]['pairs'][pair]:.4f}" for v in shown) + " |")
    held = sum(sorted(gap.values(), reverse=True)[:top])
    lines.append(f"\nThe top {top} pairs hold {held:+.3f} of the summed gap {total:+.3f} "
                 f"({len(gap)} pairs; mean gap {total / len(gap):+.4f}).")
    return lines


def group_rows(records: dict[str, dict], base: str, shown: list[str],
                groups: list[str]) -> list[str]:
    """Markdown rows: per ``shown`` variant, its 2-way TVD gap to ``base`` split into the pairs
    holding each column of ``groups`` (the first named column a pair holds takes it) and the
    rest; each part is its summed per-pair gap over the number of pairs (so the parts add up to
    the gap of the mean 2-way TVD)."""
    pairs = list(records[base]["pairs"])
    owner = {pair: next((g for g in groups if g in pair.split("|")), "rest") for pair in pairs}
    lines = [f"| variant | gap to {base} | " + " | ".join(f"pairs with {g}" for g in groups)
             + " | other pairs |", "|---" * (len(groups) + 3) + "|"]
    for name in shown:
        gap = {pair: records[name]["pairs"][pair] - records[base]["pairs"][pair] for pair in pairs}
        part = {g: sum(v for k, v in gap.items() if owner[k] == g) / len(pairs)
                for g in [*groups, "rest"]}
        lines.append(f"| {name} | {sum(part.values()):+.4f} | "
                     + " | ".join(f"{part[g]:+.4f}" for g in [*groups, "rest"]) + " |")
    return lines


def column_rows(records: dict[str, dict], shown: list[str]) -> list[str]:
    """Markdown rows: per numeric column, its 1-way TVD and KS in every ``shown`` variant."""
    numeric = sorted(set().union(*(records[v]["ks"] for v in shown)))
    lines = ["| column | " + " | ".join(f"{v} TVD / KS" for v in shown) + " |",
             "|---" * (len(shown) + 1) + "|"]
    for name in numeric:
        cells = [f"{records[v]['columns'][name]:.3f} / {records[v]['ks'][name]:.3f}"
                 if name in records[v]["ks"] else "–" for v in shown]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return lines


def paired(record: dict, other: dict) -> str:
    """Mean ± standard error of ``record``'s runs minus ``other``'s, seed by seed (both pooled in
    the same seed order); "–" when their seeds differ."""
    if record is other or record.get("seed0") != other.get("seed0") \
            or len(record["runs"]) != len(other["runs"]):
        return "–"
    diffs = [a - b for a, b in zip(record["runs"], other["runs"], strict=True)]
    se = statistics.stdev(diffs) / len(diffs) ** 0.5 if len(diffs) > 1 else float("nan")
    return f"{statistics.fmean(diffs):+.4f} ± {se:.4f}"


def main() -> None:
    """Command line: the tables above for one table and recipe."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--table", default="adult")
    parser.add_argument("--recipe", default="aim")
    parser.add_argument("--variants", default="draft,safe")
    parser.add_argument("--base", default="draft")
    parser.add_argument("--other", default="safe")
    parser.add_argument("--top", type=int, default=10)
    parser.add_argument("--groups", default="",
                        help="columns whose pairs' share of each gap is printed (comma list)")
    args = parser.parse_args()
    records = pooled(args.records, args.table, args.recipe)
    shown = [v for v in args.variants.split(",") if v in records]
    if args.base not in records or args.other not in records:
        raise SystemExit(f"{args.records} has no per-pair record of '{args.base}' or "
                         f"'{args.other}' for {args.table} {args.recipe}: run safe_gap.py with "
                         f"--variants {args.base},{args.other} first")
    print(f"| variant | 2-way TVD | ratio to draft | paired − {args.other} (± se) | ε | recipe ρ "
          "| seeds |\n|---|---|---|---|---|---|---|")
    for name in shown:
        r = records[name]
        ratio = r["tvd_2"] / records["draft"]["tvd_2"] if "draft" in records else float("nan")
        print(f"| {name}{' T=' + str(r['tcut']) if 'tcut' in r else ''} | {r['tvd_2']:.4f} ± "
              f"{r['tvd_2_sd']:.4f} | {ratio:.2f} | {paired(r, records[args.other])} | "
              f"{r['epsilon']:.4g} | {r['domain']['recipe_rho']:.5f} | {r['seeds']} |")
    print()
    print("\n".join(pair_rows(records, args.base, args.other, shown, args.top)))
    if args.groups:
        print()
        print("\n".join(group_rows(records, args.base, shown, args.groups.split(","))))
    print()
    print("\n".join(column_rows(records, shown)))


if __name__ == "__main__":
    main()
