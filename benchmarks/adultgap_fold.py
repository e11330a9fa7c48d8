"""Where a discovered column's dropped categories go, and what a post-processing fold would
change (issue 24, branch adultgap): for each saved release of a ``safe_gap.py`` run, the column's
released blank share and the suite's 2-way TVD as released and with the column's blanks folded
into its most common released value (the "fold into the largest kept category" alternative to
"missing"). Not private (scores against the real table); development tables only.

    PYTHONPATH=. .venv/bin/python benchmarks/adultgap_fold.py adult native-country \\
        /tmp/safe-gap-XXXX/variant-safe-*.csv
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from safe_gap import column_tvd, tvds  # noqa: E402
from suite import TABLES, prepare, read_scored  # noqa: E402

from synthpriv.schema import load_schema  # noqa: E402


def folded(synthetic: pd.DataFrame, column: str) -> pd.DataFrame:
    """``synthetic`` with ``column``'s blanks given its most common released value."""
    out = synthetic.copy()
    out[column] = out[column].fillna(out[column].mode().iloc[0])
    return out


def main() -> None:
    """Command line: one line of figures per release, then their means."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("table")
    parser.add_argument("column")
    parser.add_argument("releases", nargs="+", type=Path)
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    args = parser.parse_args()
    draft = prepare(TABLES[args.table], Path(tempfile.mkdtemp(prefix="adultgap-fold-")),
                    args.cache, "draft")
    scoring = load_schema(draft.schema_path)
    real, test = read_scored(draft.train, scoring), read_scored(draft.test, scoring)
    target, name = TABLES[args.table].target, args.column
    rows = []
    for path in args.releases:
        synthetic = read_scored(path, scoring)
        row = {"release": path.name, "real_blank": float(real[name].isna().mean()),
               "released_blank": float(synthetic[name].isna().mean())}
        for label, frame in (("as_released", synthetic), ("folded", folded(synthetic, name))):
            row[label] = {"tvd_2": tvds(real, frame, test, scoring, target)["tvd_2"],
                          "tvd_1": column_tvd(real[name], frame[name], False)}
        rows.append(row)
        print(json.dumps(row), flush=True)
    for label in ("as_released", "folded"):
        for key in ("tvd_2", "tvd_1"):
            values = [r[label][key] for r in rows]
            print(f"{label} {key}: mean {sum(values) / len(values):.4f} over {len(values)}")


if __name__ == "__main__":
    main()
