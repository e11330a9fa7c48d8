"""Issue 24 item 4: value shares of Adult's capital-gain/capital-loss on its first 2,000 rows
(safe draft: every column auto, ε = 1, seeds given), where the DP bounds read zeros only.

    python benchmarks/zeros_only.py /tmp/zo [--seeds 0 1]

Runs ``synthpriv schema infer`` and ``synthpriv run --no-evaluation`` with the interpreter and
``synthpriv`` on PYTHONPATH, then prints each released column's share of 0, 1, missing and other
values next to the input's (results: benchmarks/README.md, "zeroonly")."""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
COLUMNS = ("capital-gain", "capital-loss")


def shares(values: pd.Series) -> str:
    values = pd.to_numeric(values)
    return (f"0: {(values == 0).mean():.3f}, 1: {(values == 1).mean():.3f}, missing: "
            f"{values.isna().mean():.3f}, other: {(values.notna() & ~values.isin([0, 1])).mean():.3f}")


def cli(folder: Path, *args: str) -> str:
    """``synthpriv *args`` run in ``folder`` (not here: '' on sys.path would pick this checkout)."""
    code = "import sys; from synthpriv.cli import main; sys.argv = ['synthpriv', *sys.argv[1:]]; main()"
    return subprocess.run([sys.executable, "-c", code, *args], check=True, capture_output=True,
                          text=True, cwd=folder).stdout


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    args = parser.parse_args()
    args.folder = args.folder.resolve()
    args.folder.mkdir(parents=True, exist_ok=True)
    table = pd.read_csv(ROOT / "data/adult/adult_train.csv", nrows=2000, skipinitialspace=True)
    table.to_csv(args.folder / "a.csv", index=False)
    (args.folder / "s.yaml").write_text(cli(args.folder, "schema", "infer", "a.csv"))
    for name in COLUMNS:
        print(f"input {name}: {shares(table[name])}")
    for seed in args.seeds:
        job = args.folder / f"job{seed}.yaml"
        job.write_text(f"name: zo{seed}\nseed: {seed}\ndata:\n  path: a.csv\n  schema: s.yaml\n"
                       "budget:\n  epsilon: 1\n")
        out = args.folder / f"out{seed}"
        cli(args.folder, "run", job.name, "--no-evaluation", "--quiet", "--force", "--out", out.name)
        released = pd.read_csv(out / "synthetic.csv")
        for name in COLUMNS:
            print(f"seed {seed} {name}: {shares(released[name])}")


if __name__ == "__main__":
    main()
