"""Issue 26: time ``synthpriv run`` (the default recipe, AIM, evaluation off) on the wide tables.

Builds, from the suite's prepared splits (``benchmarks/suite.py --prepare-only``), each table's
safe draft (``synthpriv schema infer``: header only) and a 150-column table (Caravan's 86 columns,
loans' 55 on Caravan's first rows, and 9 Caravan columns again, renamed, rows shuffled, so they
are not copies; ``wide171``: 21 more), or takes ISLP's widest tables (Fund, Khan: issue 24), then
runs each job under ``/usr/bin/time`` and prints user+system CPU seconds and peak RSS.
No figure here is tuned on: these are timings only.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parents[1]
SUITE = ROOT / "benchmarks/.cache/suite"


def wide_table(folder: Path, seed: int = 0) -> Path:
    """Caravan (86) + loans (55) + 9 shuffled Caravan columns = 150 columns, Caravan's rows."""
    caravan = pd.read_csv(SUITE / "caravan/train.csv")
    loans = pd.read_csv(SUITE / "loans/train.csv").iloc[: len(caravan)].reset_index(drop=True)
    loans.columns = [f"loans_{name}" for name in loans.columns]
    extra = caravan.iloc[:, :9].sample(frac=1.0, random_state=seed).reset_index(drop=True)
    extra.columns = [f"again_{name}" for name in extra.columns]
    wide = pd.concat([caravan, loans, extra], axis=1)
    folder.mkdir(parents=True, exist_ok=True)
    wide.to_csv(folder / "train.csv", index=False)
    return folder / "train.csv"


def wide171(folder: Path, seed: int = 0) -> Path:
    """The 150-column table and 21 more shuffled Caravan columns (``again2_*``): 171 columns,
    below AIM's 445-column batch rule (branch wide: timed, not changed)."""
    wide = pd.read_csv(wide_table(folder, seed))
    caravan = pd.read_csv(SUITE / "caravan/train.csv")
    extra = caravan.iloc[:, 9:30].sample(frac=1.0, random_state=seed + 1).reset_index(drop=True)
    extra.columns = [f"again2_{name}" for name in extra.columns]
    pd.concat([wide, extra], axis=1).to_csv(folder / "train.csv", index=False)
    return folder / "train.csv"


def wide516(folder: Path, seed: int = 0) -> Path:
    """Caravan's 86 columns and 5 copies of them, each with its rows shuffled (``c<k>_*``):
    516 columns over Caravan's rows, above AIM's 445-column batch rule with enough rows for
    its rounds to run (Fund and Khan have 50-63)."""
    caravan = pd.read_csv(SUITE / "caravan/train.csv")
    parts = [caravan] + [
        caravan.sample(frac=1.0, random_state=seed + k).reset_index(drop=True).add_prefix(f"c{k}_")
        for k in range(1, 6)]
    folder.mkdir(parents=True, exist_ok=True)
    pd.concat(parts, axis=1).to_csv(folder / "train.csv", index=False)
    return folder / "train.csv"


def islp_table(folder: Path, name: str) -> Path:
    """An ISLP table as its wheel holds it (benchmarks/dev_tables.py): Fund (50 rows, 2,000
    columns), Khan_xtrain (63 rows, 2,308 columns)."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from dev_tables import islp_tables

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "train.csv").write_text(dict(islp_tables())[f"islp/{name}"])
    return folder / "train.csv"


def job(work: Path, name: str, train: Path, epsilon: float) -> Path:
    """A job file: the table's safe draft, the default recipe, δ as the suite sets it."""
    schema = work / name / "schema-safe.yaml"
    draft = subprocess.run([sys.executable, "-m", "synthpriv.cli", "schema", "infer", str(train)],
                           check=True, capture_output=True, text=True).stdout
    schema.write_text(draft)
    rows = sum(1 for _ in train.open()) - 1
    config = {"name": f"wide-{name}", "data": {"path": str(train), "schema": str(schema)},
              "budget": {"epsilon": epsilon, "delta": min(1e-5, 0.1 / rows)},
              "pipeline": {"recipe": "aim"}, "evaluation": {"enabled": False}}
    path = work / name / f"job-e{epsilon:g}.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def timed(config: Path, out: Path, timeout: float) -> dict:
    """CPU (user + system) and wall seconds and peak resident MB of one ``synthpriv run``, or a
    timeout."""
    command = ["/usr/bin/time", "-f", "%U %S %e %M", sys.executable, "-m", "synthpriv.cli", "run",
               str(config), "--no-evaluation", "--quiet", "--force", "--out", str(out)]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"status": f"timeout after {timeout:g} s wall"}
    if done.returncode != 0:
        return {"status": "failed", "stderr": done.stderr[-2000:]}
    user, system, wall, peak = map(float, done.stderr.strip().splitlines()[-1].split())
    return {"status": "ok", "cpu": round(user + system, 1), "wall": wall,
            "peak_rss_mb": round(peak / 1024)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("table", choices=["loans", "caravan", "wide150", "wide171", "wide516",
                                          "Fund", "Khan_xtrain", "Khan_xtest"])
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--work", type=Path, default=Path("/tmp/wide-tables"))
    parser.add_argument("--timeout", type=float, default=1800.0, help="wall seconds per run")
    parser.add_argument("--tag", default="", help="a label for the output folder and record")
    args = parser.parse_args()
    if args.table == "wide150":
        train = wide_table(args.work / "wide150")
    elif args.table == "wide171":
        train = wide171(args.work / "wide171")
    elif args.table == "wide516":
        train = wide516(args.work / "wide516")
    elif args.table[0].isupper():
        train = islp_table(args.work / args.table, args.table)
    else:
        train = SUITE / args.table / "train.csv"
        (args.work / args.table).mkdir(parents=True, exist_ok=True)
    config = job(args.work, args.table, train, args.epsilon)
    result = timed(config, args.work / args.table / f"out-e{args.epsilon:g}{args.tag}", args.timeout)
    record = {"table": args.table, "columns": len(pd.read_csv(train, nrows=1).columns),
              "epsilon": args.epsilon, "tag": args.tag, **result}
    print(json.dumps(record), flush=True)


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
