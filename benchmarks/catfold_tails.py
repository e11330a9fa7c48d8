"""Fake tails beyond the data (branch catfold, issue 24 item 4): per numeric column, the share of
released values above the input's maximum and below its minimum, and the KS distance (present
values), one release per seed, with the mean over seeds. Options as benchmarks/missnoise.py
(``--csv``, ``--schema``, ``--rows``, ``--recipe``, ``--epsilon``, ``--delta``, ``--seeds``);
``--columns`` picks columns. Run it with PYTHONPATH pointing at the code to measure."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from missnoise import arguments

from synthpriv import Synthesizer
from synthpriv.evaluation.values import ks_distance


def main() -> None:
    parser = arguments()
    parser.add_argument("--columns", default="", help="numeric columns (default: all)")
    args = parser.parse_args()
    real = pd.read_csv(args.csv, nrows=args.rows, skipinitialspace=True)
    numeric = [c for c in real.columns if pd.api.types.is_numeric_dtype(real[c])]
    columns = [c for c in args.columns.split(",") if c] or numeric
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synthetic = Synthesizer(args.schema, epsilon=args.epsilon, delta=args.delta,
                                    recipe=args.recipe, seed=seed).fit(real).synthetic
        for name in columns:
            values = real[name].dropna().to_numpy(dtype=float)
            released = pd.to_numeric(synthetic[name], errors="coerce").dropna().to_numpy(
                dtype=float)
            n = max(len(released), 1)
            rows.append({"column": name, "seed": seed,
                         "above": float((released > values.max()).sum() / n),
                         "below": float((released < values.min()).sum() / n),
                         "ks": ks_distance(values, released)})
    table = pd.DataFrame(rows)
    wide = table.pivot(index="column", columns="seed", values=["above", "below", "ks"])
    pd.set_option("display.width", 200)
    print(wide.round(4).to_string())
    means = table.groupby("column")[["above", "below", "ks"]].mean()
    print("mean over seeds")
    print(means.round(4).to_string())
    print(f"all columns: above {means['above'].mean():.4f}, below {means['below'].mean():.4f}, "
          f"KS {np.nanmean(means['ks']):.4f}")


if __name__ == "__main__":
    main()
