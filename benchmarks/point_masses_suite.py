"""Heaped values of development-suite tables through a release (issue 24 item 4): for every
numeric column, each value holding at least 5 % of its rows, its share in the table and in the
release (AIM, ε = 1, the data-read draft of ``schema infer``), and the most decimals written.

Tables: ISLP's Boston (zn 73 % at 0, rad 26 % at 24, tax 27 % at 666, ptratio 28 % at 20.2),
Credit (Balance 22 % at 0, 400 rows) and Default (10,000 rows), read from the ISLP wheel (the
one ``benchmarks/suite.py`` downloads; give its path).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/point_masses_suite.py \\
        --wheel benchmarks/.cache/islp-0.4.0/ISLP-0.4.0-py3-none-any.whl --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import zipfile
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.api import Synthesizer
from synthpriv.schema_infer import infer_schema

TABLES = ("Boston", "Credit", "Default")
HEAP = 0.05  # a value holding this share of a column's rows or more
WATCH = ("Balance=0", "zn=0")  # the piles issue 24 item 4 follows: each run's share printed


def frame(wheel: Path, stem: str) -> pd.DataFrame:
    with zipfile.ZipFile(wheel) as archive, archive.open(f"ISLP/data/{stem}.csv") as handle:
        table = pd.read_csv(handle)
    return table.drop(columns=[c for c in table.columns if c in ("ID", "") or c.startswith("Unnamed")])


def heaps(table: pd.DataFrame, schema: dict) -> dict[str, float]:
    numeric = [c["name"] for c in schema["columns"] if c["kind"] in ("integer", "continuous")]
    found = {}
    for column in numeric:
        shares = table[column].value_counts(normalize=True)
        for value, share in shares[shares >= HEAP].items():
            found[f"{column}={value:g}"] = float(share)
    return found


def released(synthetic: pd.DataFrame, keys: list[str]) -> dict[str, float]:
    out = {}
    for key in keys:
        column, value = key.split("=")
        out[key] = float(np.mean(np.isclose(synthetic[column].astype(float), float(value))))
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--wheel", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seeds", help="comma-separated release seeds (paired before/after "
                        "runs; overrides --repeats); none: --repeats unseeded runs")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--point-mass-fraction", type=float, help="none: the default")
    parser.add_argument("--tables", default=",".join(TABLES))
    args = parser.parse_args()
    stages = ({} if args.point_mass_fraction is None
              else {"marginals": {"point_mass_fraction": args.point_mass_fraction}})
    for stem in args.tables.split(","):
        table = frame(args.wheel, stem)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "train.csv"
            table.to_csv(path, index=False)
            schema, _ = infer_schema(path)
            table = pd.read_csv(path)
        real = heaps(table, schema)
        runs, decimals = [], {}
        seeds = ([int(s) for s in args.seeds.split(",")] if args.seeds
                 else [None] * args.repeats)
        for seed in seeds:
            synthetic = Synthesizer(schema, epsilon=args.epsilon, delta=1e-6, recipe="aim",
                                    seed=seed, **stages).fit(
                table).synthetic
            runs.append(released(synthetic, list(real)))
            written = synthetic.to_csv(index=False).splitlines()[1:]
            for j, column in enumerate(synthetic.columns):
                cells = [line.split(",")[j] for line in written]
                decimals[column] = max(decimals.get(column, 0), max(
                    len(cell.partition(".")[2]) for cell in cells))
        mean = {k: statistics.mean(r[k] for r in runs) for k in real}
        worst = max((abs(r[k] - real[k]) for r in runs for k in real), default=0.0)
        print(json.dumps({"table": stem, "rows": len(table), "worst_error": round(worst, 3),
                          "runs": [round(r[k], 3) for r in runs for k in real if k in WATCH],
                          "heaps": {k: [round(real[k], 3), round(mean[k], 3)] for k in real},
                          "decimals_written": decimals}))


if __name__ == "__main__":
    main()
