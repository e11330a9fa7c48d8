"""Dropped categories come back blank, not as the majority (branch catfold, issue 24 item 4).

Runs ``Synthesizer`` on a CSV (optionally its first ``--rows`` rows) with a schema file, one
release per seed, and prints for each categorical column of the input (text) its majority
value's share and its blank share, input vs each release; for each ``--zeros`` column the share
of zeros and of blanks. Run it with PYTHONPATH pointing at the code to measure (before/after)."""

from __future__ import annotations

import warnings

import pandas as pd
from missnoise import arguments

from synthpriv import Synthesizer


def shares(table: pd.DataFrame, text: list[str], zeros: list[str]) -> dict[str, str]:
    """'majority / blank' per text column (majority: the input's most common value), and
    'zero / blank' per ``zeros`` column, as rounded shares."""
    out = {}
    for name in text:
        top = MAJORITY[name]
        out[name] = f"{(table[name] == top).sum() / len(table):.3f} / {table[name].isna().mean():.3f}"
    for name in zeros:
        values = pd.to_numeric(table[name], errors="coerce")
        out[name] = f"{(values == 0).sum() / len(table):.3f} / {values.isna().mean():.3f}"
    return out


MAJORITY: dict[str, str] = {}


def main() -> None:
    parser = arguments()
    parser.add_argument("--zeros", default="", help="numeric columns: zero and blank shares")
    args = parser.parse_args()
    real = pd.read_csv(args.csv, nrows=args.rows, skipinitialspace=True)
    zeros = [z for z in args.zeros.split(",") if z]
    text = [c for c in real.columns if real[c].dtype == object]
    MAJORITY.update({c: real[c].value_counts().index[0] for c in text})
    rows = {"input": shares(real, text, zeros)}
    for seed in (int(s) for s in args.seeds.split(",")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synthetic = Synthesizer(args.schema, epsilon=args.epsilon, delta=args.delta,
                                    recipe=args.recipe, seed=seed).fit(real).synthetic
        rows[f"seed {seed}"] = shares(synthetic, text, zeros)
    print("majority (or zero) share / blank share")
    print(pd.DataFrame(rows).to_string())


if __name__ == "__main__":
    main()
