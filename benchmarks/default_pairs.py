"""Where a release's 2-way error sits (issue 24, ISLP Default against dpmm): per marginal and per
column, beside the sampling floor.

For each synthetic CSV: the TVD of every 1-, 2- and 3-way marginal (the suite's yardstick:
``evaluate_utility``'s 16 quantile bins of the real numeric columns), each numeric column's KS
distance and its share at ``--mass`` values (e.g. ``balance=0``), read with the suite's
``read_scored`` against the train split. ``--floor N`` adds N releases of a perfect model: the
train split resampled with replacement (the release's row count, seeded), i.e. the error of
sampling alone at that size. Not private: reads the real split (a benchmark).

    PYTHONPATH=. .venv/bin/python benchmarks/default_pairs.py --train TRAIN.csv \\
        --schema SCHEMA.yaml --tag safe REL1.csv REL2.csv ... --floor 8 --mass balance=0 \\
        --json out.jsonl
"""

from __future__ import annotations

import argparse
import json
import runpy
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from synthpriv.evaluation.discretize import Discretizer
from synthpriv.evaluation.utility import marginal_tvd
from synthpriv.schema import load_schema

SUITE = runpy.run_path(str(Path(__file__).resolve().parent / "suite.py"))
read_scored = SUITE["read_scored"]


def figures(real: pd.DataFrame, fake: pd.DataFrame, numeric: list[str],
            masses: dict[str, float]) -> dict:
    """Per-marginal TVD (orders 1–3, every marginal), KS per numeric column, shares at masses."""
    discretizer = Discretizer.fit(real, numeric, 16)
    real_codes, fake_codes = discretizer.transform(real), discretizer.transform(fake)
    out: dict = {"rows": len(fake)}
    for order in range(1, min(3, real_codes.shape[1]) + 1):
        result = marginal_tvd(real_codes, fake_codes, order, sizes=discretizer.sizes,
                              columns=discretizer.columns, n_worst=100)
        out[f"tvd_{order}"] = result["mean"]
        out[f"by_{order}"] = {"×".join(w["columns"]): w["tvd"] for w in result["worst"]}
    out["ks"] = {c: float(stats.ks_2samp(real[c].dropna(), fake[c].dropna()).statistic)
                 for c in numeric}
    out["mass"] = {f"{c}={v:g}": float((fake[c] == v).mean()) for c, v in masses.items()}
    return out


def apart(real: pd.DataFrame, fake: pd.DataFrame, given: list[str], column: str,
          seed: int) -> pd.Series:
    """``fake[column]`` redrawn from a random real row with the same ``given`` values: the
    table of a model where ``column`` meets the rest only through ``given``."""
    rng = np.random.default_rng(10_000 + seed)
    pools = {key: group[column].to_numpy() for key, group in real.groupby(given)}
    keys = fake[given].itertuples(index=False, name=None)
    return pd.Series([rng.choice(pools[key if len(given) > 1 else key[0]]) for key in keys],
                     index=fake.index)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--train", type=Path, required=True)
    parser.add_argument("--schema", type=Path, required=True, help="the data-read draft (kinds)")
    parser.add_argument("--tag", default="release")
    parser.add_argument("csvs", nargs="*", type=Path)
    parser.add_argument("--floor", type=int, default=0, help="resampled-train releases")
    parser.add_argument("--floor-rows", type=int, default=0, help="their rows (0: the train's)")
    parser.add_argument("--given", default="",
                        help="COLS: the floor's releases also as P(COLS, rest) P(--apart | COLS): "
                        "--apart drawn from another row with the same COLS (a model without the "
                        "clique of --apart with the rest)")
    parser.add_argument("--apart", default="")
    parser.add_argument("--mass", action="append", default=[], help="COLUMN=VALUE")
    parser.add_argument("--json", type=Path, required=True, help="appended, one line a release")
    args = parser.parse_args()
    schema = load_schema(args.schema)
    numeric = list(schema.numeric_names)
    masses = {m.split("=")[0]: float(m.split("=")[1]) for m in args.mass}
    real = read_scored(args.train, schema)
    rows = []
    for path in args.csvs:
        rows.append({"tag": args.tag, "file": str(path),
                     **figures(real, read_scored(path, schema), numeric, masses)})
    for seed in range(args.floor):
        size = args.floor_rows or len(real)
        pick = np.random.default_rng(seed).integers(0, len(real), size)
        fake = real.iloc[pick].reset_index(drop=True)
        rows.append({"tag": f"floor-{size}", "seed": seed, **figures(real, fake, numeric, masses)})
        if args.given:
            fake[args.apart] = apart(real, fake, args.given.split(","), args.apart, seed)
            rows.append({"tag": f"floor-{size}-{args.apart}-given-{args.given}", "seed": seed,
                         **figures(real, fake, numeric, masses)})
    real_mass = {f"{c}={v:g}": float((real[c] == v).mean()) for c, v in masses.items()}
    with args.json.open("a", encoding="utf-8") as sink:
        for row in rows:
            sink.write(json.dumps({**row, "real_mass": real_mass}) + "\n")
            print(row["tag"], *(f"{row.get(f'tvd_{k}', float('nan')):.4f}" for k in (1, 2, 3)),
                  {k: round(v, 4) for k, v in row["by_2"].items()}, flush=True)


if __name__ == "__main__":
    main()
