"""Run one job several times (unseeded) and print one column's value shares, real and released,
with the kind and point masses the run decided for it (the manifest): to see how often a DP
decision (kind, bounds, heaps) goes one way or the other on a real table.

    PYTHONPATH=. .venv/bin/python benchmarks/repeat_column.py \\
        benchmarks/.remeasure-cache/suite/anes96/job-safe-mst-eps1.yaml PID --runs 8
"""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path

import pandas as pd

from synthpriv.config import load_job
from synthpriv.release import MANIFEST, SYNTHETIC
from synthpriv.runner import run_job


def shares(values: pd.Series, top: int) -> str:
    """The ``top`` most common values and their shares, as text."""
    counts = values.value_counts(normalize=True, dropna=False).head(top)
    return ", ".join(f"{value:g}: {share:.3f}" if isinstance(value, float) else f"{value}: {share:.3f}"
                     for value, share in counts.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("column")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--top", type=int, default=8, help="values shown per line")
    args = parser.parse_args()
    job = load_job(args.config)
    print("real     ", shares(pd.read_csv(job.data_path)[args.column], args.top))
    for run in range(args.runs):
        with tempfile.TemporaryDirectory() as folder:
            result = run_job(job, out=Path(folder) / "release", force=True)
            released = pd.read_csv(result.out_dir / SYNTHETIC)[args.column]
            manifest = json.loads((result.out_dir / MANIFEST).read_text(encoding="utf-8"))
        entry = next(c for c in manifest["schema"]["columns"] if c["name"] == args.column)
        print(f"run {run}: {entry['kind']} [{entry.get('lower')}, {entry.get('upper')}] point masses "
              f"{entry.get('point_masses')}\n   released", shares(released, args.top))


if __name__ == "__main__":
    main()
