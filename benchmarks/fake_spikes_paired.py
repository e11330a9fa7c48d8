"""Fake spikes, mean KS and the worst point-mass error of suite tables' safe drafts over paired
seeds (issue 24 item 4): MST at ε = 1 on the train split and safe schema that
``benchmarks/suite.py`` caches (run it once for the table), with research seeds so a before /
after pair shares its noise draws until the code paths part. The figures are
``synthpriv.evaluation.values.value_fidelity``'s (the suite's yardstick), on the parsed tables.
Run it under two checkouts (``PYTHONPATH``) to compare:

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/fake_spikes_paired.py \\
        --tables loans,wage,fair --seeds 0,1,2,3,4,5
"""

from __future__ import annotations

import argparse
import json
import statistics
import warnings
from pathlib import Path

import pandas as pd
import yaml

from synthpriv import Synthesizer
from synthpriv.evaluation.values import value_fidelity

CACHE = Path(__file__).parent / ".cache" / "suite"


def run(table_name: str, seed: int) -> dict:
    """One release's fake spikes (values), mean KS and worst point-mass error."""
    folder = CACHE / table_name
    table = pd.read_csv(folder / "train.csv")
    schema = yaml.safe_load((folder / "schema-safe.yaml").read_text())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the draft and low-ε warnings
        fitted = Synthesizer(schema, epsilon=1.0, delta=1e-5, recipe="mst", seed=seed).fit(table)
    synthetic = fitted.synthetic
    numeric = fitted._fitted.synthesis.job.schema.numeric_names
    real = table.copy()
    for column in numeric:
        real[column] = pd.to_numeric(real[column], errors="coerce")
        synthetic[column] = pd.to_numeric(synthetic[column], errors="coerce")
    figures = value_fidelity(real, synthetic, numeric)
    summary = figures["summary"]
    return {"table": table_name, "seed": seed,
            "fake_spikes": [f"{name}={spike['value']}" for name, column in
                            figures["columns"].items() for spike in column["fake_spikes"]],
            "mean_ks": summary["mean_ks"], "worst_mass": summary["worst_point_mass"]["error"]}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tables", default="loans,wage,fair")
    parser.add_argument("--seeds", default="0,1,2,3,4,5")
    args = parser.parse_args()
    for name in args.tables.split(","):
        runs = [run(name, int(seed)) for seed in args.seeds.split(",")]
        for one in runs:
            print(json.dumps(one))
        print(json.dumps({"table": name, "runs": len(runs),
                          "fake_spikes_per_run": statistics.mean(len(r["fake_spikes"])
                                                                 for r in runs),
                          "mean_ks": round(statistics.mean(r["mean_ks"] for r in runs), 4)}))


if __name__ == "__main__":
    main()
