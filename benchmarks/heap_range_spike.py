"""Per seed, the DP bounds and the released value shares of loans columns (safe draft, AIM,
ε = 1, δ = 1e-5), and the real shares: shows the fake spike a ``heap_range`` clip makes at an end
heap (benchmarks/README.md, remeasure7). Run with PYTHONPATH pointing at the code to measure:

    PYTHONPATH=<tree> python benchmarks/heap_range_spike.py 0,1,2 num_mort_accounts
    PYTHONPATH=<tree> python benchmarks/heap_range_spike.py 0,1,2,3 year wage

The third argument names another table of benchmarks/.cache/suite (default loans).
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import pandas as pd

from synthpriv import Synthesizer

SUITE = Path(__file__).resolve().parent / ".cache/suite"
SHOWN = 14  # values listed per column


def shares(values: pd.Series) -> str:
    counts = pd.to_numeric(values).value_counts(normalize=True).sort_index().head(SHOWN)
    return " ".join(f"{value:g}:{share:.3f}" for value, share in counts.items())


def main() -> None:
    seeds = [int(s) for s in sys.argv[1].split(",")]
    columns = sys.argv[2].split(",")
    folder = SUITE / (sys.argv[3] if len(sys.argv) > 3 else "loans")
    real = pd.read_csv(folder / "train.csv")
    for seed in seeds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synth = Synthesizer(str(folder / "schema-safe.yaml"), epsilon=1.0, delta=1e-5,
                                seed=seed).fit(real)
        for name in columns:
            column = synth._fitted.synthesis.job.schema.column(name)
            print(seed, name, f"[{column.lower:g}, {column.upper:g}]",
                  shares(synth.synthetic[name]))
    for name in columns:
        print("real", name, shares(real[name]))


if __name__ == "__main__":
    main()
