"""Two sets of ``value_sweep.py --json`` results side by side (paired seeds, e.g. main vs a
branch): per table, the columns with each problem class summed over the seeds, before → after,
and the columns released all missing (the ``missing`` check at a released share of 1.000).

    /work/main/.venv/bin/python benchmarks/sweep_compare.py 'DIR/sweep-before-seed*.json' \\
        'DIR/sweep-after-seed*.json' [--checks missing,lost_spike,fake_spike,outside,decimals]
"""

from __future__ import annotations

import argparse
import glob
import json
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from value_sweep import _per_class  # noqa: E402

BLANK = "released 1.000"


def tallies(pattern: str) -> tuple[dict[str, Counter], int]:
    """Per table, the problem classes summed over the files matching ``pattern`` (columns ×
    seeds), with ``blank`` for the columns released all missing; and the number of files."""
    files = sorted(glob.glob(pattern))
    per: dict[str, Counter] = {}
    for path in files:
        for result in json.loads(Path(path).read_text()):
            counts = per.setdefault(result["table"], Counter())
            counts.update(_per_class(result["problems"]))
            counts["blank"] += sum(p["check"] == "missing" and BLANK in p["detail"]
                                   for p in result["problems"])
    return per, len(files)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before")
    parser.add_argument("after")
    parser.add_argument("--checks", default="blank,missing,lost_spike,fake_spike,outside,decimals")
    args = parser.parse_args(argv)
    (before, n_before), (after, n_after) = tallies(args.before), tallies(args.after)
    checks = args.checks.split(",")
    print(f"<!-- {n_before} before files, {n_after} after files: column counts summed over "
          "them -->")
    print("| table | " + " | ".join(checks) + " |\n|---|" + "---|" * len(checks))
    total_b, total_a = Counter(), Counter()
    for table in sorted(set(before) | set(after)):
        b, a = before.get(table, Counter()), after.get(table, Counter())
        total_b.update(b)
        total_a.update(a)
        print(f"| {table} | " + " | ".join(f"{b[c]} → {a[c]}" for c in checks) + " |")
    print("| **all** | " + " | ".join(f"**{total_b[c]} → {total_a[c]}**" for c in checks) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
