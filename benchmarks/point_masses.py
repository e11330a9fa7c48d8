"""Point masses through the adaptive domain: each heaped value's share in the input and in the
release, and how the released cells look (issue 24 item 4).

A synthetic table (fixed seed, public bounds) with the point masses of issue 24: a 97.5 %-zero
integer column with 2 % at one, a 99.5 %-zero fee, a score 56.6 % at exactly 100 inside wider
bounds, an integer code 57.7 % at -1 whose range is wider than 1,024 integers, a rate 36 % at
7.25, a year column with 6 values in a 131-year range, a lab value 93 % at 4.2. Each recipe runs
``--repeats`` times with fresh secure noise at ε = ``--epsilon``.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/point_masses.py --repeats 3
"""

from __future__ import annotations

import argparse
import json
import statistics

import numpy as np
import pandas as pd

from synthpriv.api import Synthesizer

HEAPS = {  # column → the heaped value whose share is reported
    "liens": [0, 1], "fees": [0.0], "score": [100.0], "code": [-1], "rate": [7.25],
    "year": [2015, 2018], "lab": [4.2],
}


def table(n: int, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    group = rng.choice(["a", "b", "c"], size=n, p=[0.5, 0.3, 0.2])
    liens = np.where(rng.random(n) < 0.975, 0, np.where(rng.random(n) < 0.8, 1,
                                                         rng.integers(2, 60, n)))
    fees = np.where(rng.random(n) < 0.995, 0.0, np.round(rng.uniform(5, 500, n), 2))
    score = np.where(rng.random(n) < 0.566, 100.0, np.round(np.clip(rng.normal(70, 15, n), 0, 99.9), 1))
    code = np.where(rng.random(n) < 0.577, -1, np.minimum(rng.lognormal(5, 1.5, n).astype(int), 5000))
    rate = np.where(rng.random(n) < 0.36, 7.25, np.round(rng.uniform(2, 25, n), 2))
    year = rng.choice(np.arange(2015, 2021), size=n, p=[0.3, 0.2, 0.2, 0.1, 0.1, 0.1])
    lab = np.where(rng.random(n) < 0.93, 4.2, np.round(rng.uniform(0.5, 40, n), 1))
    return pd.DataFrame({"group": group, "liens": liens, "fees": fees, "score": score,
                         "code": code, "rate": rate, "year": year, "lab": lab})


SCHEMA = {"columns": [
    {"name": "group", "kind": "categorical", "categories": ["a", "b", "c"]},
    {"name": "liens", "kind": "integer", "lower": 0, "upper": 60},
    {"name": "fees", "kind": "continuous", "lower": 0, "upper": 500},
    {"name": "score", "kind": "continuous", "lower": 0, "upper": 120},
    {"name": "code", "kind": "integer", "lower": -5, "upper": 5000},
    {"name": "rate", "kind": "continuous", "lower": 0, "upper": 30},
    {"name": "year", "kind": "integer", "lower": 1900, "upper": 2030},
    {"name": "lab", "kind": "continuous", "lower": 0, "upper": 50},
]}


def shares(frame: pd.DataFrame) -> dict[str, float]:
    return {f"{c}={v}": float(np.mean(np.isclose(frame[c].astype(float), v)))
            for c, values in HEAPS.items() for v in values}


def decimals_written(frame: pd.DataFrame) -> dict[str, int]:
    """Most decimals any written cell of each column carries."""
    text = frame.to_csv(index=False).splitlines()
    cells = [line.split(",") for line in text[1:]]
    return {c: max(len(row[j].split(".")[1]) if "." in row[j] else 0 for row in cells)
            for j, c in enumerate(frame.columns) if c != "group"}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=5000)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--recipes", default="aim,mst")
    args = parser.parse_args()
    data = table(args.rows)
    print("input", json.dumps({k: round(v, 3) for k, v in shares(data).items()}))
    for recipe in args.recipes.split(","):
        runs = []
        for _ in range(args.repeats):
            synthesizer = Synthesizer(SCHEMA, epsilon=args.epsilon, delta=1e-6, recipe=recipe,
                                      public_records=args.rows)
            synthetic = synthesizer.fit(data).synthetic
            runs.append(shares(synthetic))
        mean = {k: round(statistics.mean(r[k] for r in runs), 3) for k in runs[0]}
        worst = {k: round(max(abs(r[k] - shares(data)[k]) for r in runs), 3) for k in runs[0]}
        print(recipe, "mean", json.dumps(mean))
        print(recipe, "worst |error|", json.dumps(worst))
        print(recipe, "decimals written", json.dumps(decimals_written(synthetic)))
        print(synthetic.head(5).to_csv(index=False))


if __name__ == "__main__":
    main()
