"""The small-table rule on and off on a suite table's cached split, paired by seed (branch smallrule).

The suite's train split and safe schema (``benchmarks/suite.py --cache FOLDER`` caches them under
FOLDER/suite/<table>), AIM at ε = 1, δ = 1e-5, each seed run with ``budget.domain_share`` left to
the default (rule on: the branch follows the DP n̂) and given as 0.41634 (the all-auto draft's
default share: rule off), scored as the suite does (``value_fidelity`` against the train rows):
mean KS, worst point-mass error, each column's figures, the branch taken and n̂. NOT private
(reads the real rows): development tables only.

    PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/smallrule_suite.py \\
        /tmp/dpn-cache/suite/college Private 0,1,2,3,4,5,6,7,8,9 \\
        benchmarks/results/smallrule-suite-college.json
"""

from __future__ import annotations

import json
import re
import sys
import time
import warnings
from pathlib import Path

import pandas as pd
import yaml

from synthpriv.config import load_job
from synthpriv.evaluation.values import value_fidelity
from synthpriv.runner import run_job

SHARES = ("default", "0.41634")


def run(split: Path, categorical: list[str], seeds: list[int], out: Path,
        work: Path = Path("/tmp/smallrule-suite")) -> None:
    """Release and score each (seed, share) not yet in ``out``; ``categorical``: the columns
    not scored as numbers."""
    records = json.loads(out.read_text()) if out.exists() else []
    done = {(r["share"], r["seed"]) for r in records}
    train = pd.read_csv(split / "train.csv")
    numeric = [c for c in train.columns if c not in categorical]
    for seed in seeds:
        for share in SHARES:
            if (share, seed) in done:
                continue
            folder = work / f"{share}-{seed}"
            folder.mkdir(parents=True, exist_ok=True)
            budget = {"epsilon": 1.0, "delta": 1e-5} | (
                {} if share == "default" else {"domain_share": float(share)})
            config = {"name": "sr", "data": {"path": str(split / "train.csv"),
                                             "schema": str(split / "schema-safe.yaml")},
                      "budget": budget, "pipeline": {"recipe": "aim"},
                      "evaluation": {"enabled": False},
                      "output": {"dir": str(folder / "out")}, "seed": seed}
            (folder / "job.yaml").write_text(yaml.safe_dump(config))
            cpu = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                run_job(load_job(folder / "job.yaml"))
                synthetic = pd.read_csv(folder / "out" / "synthetic.csv")
                real = train.copy()
                for c in numeric:
                    real[c] = pd.to_numeric(real[c], errors="coerce")
                    synthetic[c] = pd.to_numeric(synthetic[c], errors="coerce")
                figures = value_fidelity(real, synthetic, numeric)
            manifest = (folder / "out" / "manifest.json").read_text()
            record = {"share": share, "seed": seed, "mean_ks": figures["summary"]["mean_ks"],
                      "worst_mass": figures["summary"]["worst_point_mass"].get("error"),
                      "taken": re.findall(r'"small_table_taken":\s*([0-9.]+)', manifest)[:1],
                      "dp_records": re.findall(r'"dp_records":\s*([0-9.]+)', manifest)[:1],
                      "cols": {c: v.get("distance") for c, v in figures["columns"].items()},
                      "cpu": round(time.process_time() - cpu, 1)}
            records.append(record)
            out.write_text(json.dumps(records, indent=1))
            print(json.dumps({k: v for k, v in record.items() if k != "cols"}), flush=True)


if __name__ == "__main__":
    run(Path(sys.argv[1]), sys.argv[2].split(","), [int(s) for s in sys.argv[3].split(",")],
        Path(sys.argv[4]))
