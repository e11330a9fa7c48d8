"""Before/after table of branch roundcells (issue 24 item 4) from ``smallks.py`` outputs: per table,
recipe and code tree the runs' mean KS, worst point mass and 2-way TVD (mean ± spread over the
seeds) and the released shares of named round values against the real ones.

    .venv/bin/python benchmarks/roundcells_summary.py RUNS.json [RUNS.json ...] \
        --train TRAIN.csv --values loan_amount=15000,loan_amount=20000 [--rename OLD=NEW]

Reads the releases the records point at (``smallks.py --keep``) and the train table (the real
shares): evaluation only, never part of a release.
"""

from __future__ import annotations

import argparse
import json
import statistics
from collections import defaultdict
from pathlib import Path

import pandas as pd


def spread(values: list[float]) -> str:
    return (f"{statistics.mean(values):.3f} ± {statistics.pstdev(values):.3f}" if values
            else "–")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--values", default="", help="column=value,… to report shares of")
    parser.add_argument("--rename", default="", help="tree=label,… for the table")
    args = parser.parse_args()
    records = [r for path in args.runs for r in json.loads(path.read_text())]
    labels = dict(item.split("=", 1) for item in args.rename.split(",") if item)
    wanted = [(c, float(v)) for c, v in (item.split("=") for item in args.values.split(",")
                                           if item)]
    real = pd.read_csv(args.train)
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for record in records:
        tree = labels.get(Path(record["tree"]).name, Path(record["tree"]).name)
        groups[(record["table"], record["recipe"], tree)].append(record)
    heads = [f"{c}={v:g} (real {float((real[c] == v).mean()):.1%})" for c, v in wanted]
    print("| table | recipe | tree | runs | mean KS | worst point mass | 2-way TVD | "
          + " | ".join(heads) + " |")
    print("|---" * (7 + len(wanted)) + "|")
    for (table, recipe, tree), rows in sorted(groups.items()):
        shares = []
        for column, value in wanted:
            got = [float((pd.read_csv(r["release"], usecols=[column])[column] == value).mean())
                   for r in rows]
            shares.append(", ".join(f"{g:.1%}" for g in got))
        cells = [spread([r[k] for r in rows if r[k] is not None])
                 for k in ("mean_ks", "worst_mass", "tvd_2")]
        print(f"| {table} | {recipe} | {tree} | {len(rows)} | {' | '.join(cells)} | "
              + " | ".join(shares) + " |")
    worst = defaultdict(list)
    for (table, recipe, tree), rows in sorted(groups.items()):
        worst[(table, recipe, tree)] = [r["worst_mass_at"] for r in rows]
    for key, where in worst.items():
        print(f"- {' / '.join(key)}: worst at {'; '.join(where)}")


if __name__ == "__main__":
    main()
