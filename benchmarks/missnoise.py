"""Blank share per column, input vs release (branch missnoise, issue 24 item 4: fake blanks).

Runs ``Synthesizer`` on a CSV (optionally its first ``--rows`` rows) with a schema file, one
release per seed, and prints each column's share of blank cells in the input and in each
release. Run it with PYTHONPATH pointing at the code to measure (before/after pairs)."""

from __future__ import annotations

import argparse
import warnings

import pandas as pd

from synthpriv import Synthesizer


def arguments() -> argparse.ArgumentParser:
    """The options of a run per seed (shared with benchmarks/catfold_blanks.py)."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--csv", required=True)
    parser.add_argument("--schema", required=True)
    parser.add_argument("--rows", type=int, help="the first ROWS rows only")
    parser.add_argument("--recipe", default="aim")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument("--seeds", default="0,1,2")
    return parser


def main() -> None:
    args = arguments().parse_args()
    real = pd.read_csv(args.csv, nrows=args.rows, skipinitialspace=True)
    shares = [real.isna().mean().rename("input")]
    for seed in (int(s) for s in args.seeds.split(",")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synthetic = Synthesizer(args.schema, epsilon=args.epsilon, delta=args.delta,
                                    recipe=args.recipe, seed=seed).fit(real).synthetic
        shares.append(synthetic.isna().mean().rename(f"seed {seed}"))
    table = pd.concat(shares, axis=1)
    print(table.round(4).to_string())
    fake = (table["input"] == 0) & (table.drop(columns="input") > 0).any(axis=1)
    print(f"columns with no blank in the input and blanks released: {int(fake.sum())} "
          f"({', '.join(table.index[fake])})")


if __name__ == "__main__":
    main()
