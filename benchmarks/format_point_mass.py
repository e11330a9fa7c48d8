"""fee's 80 % point mass at 0 in tests/test_release_format.py's job (1,500 rows, fee continuous
in [0, 300], ε = 1): the released share of exact zeros per seed, for MST and AIM (branch fixes4).
Run against another commit's code with PYTHONPATH=<copy of its synthpriv> to compare.

    PYTHONPATH=. .venv/bin/python benchmarks/format_point_mass.py --seeds 20
"""

from __future__ import annotations

import argparse
import contextlib
import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import test_release_format as job  # noqa: E402  (the test's table, schema and run)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--recipes", default="mst,aim")
    args = parser.parse_args()
    real = float((job._table()["fee"] == 0).mean())
    print(f"input share of fee = 0: {real:.4f}")
    for recipe in args.recipes.split(","):
        shares = []
        for seed in range(args.seeds):
            with tempfile.TemporaryDirectory() as folder, \
                    contextlib.redirect_stderr(io.StringIO()), \
                    contextlib.redirect_stdout(io.StringIO()):
                cells = job._release(Path(folder), job.SCHEMA, recipe, seed=seed)
            shares.append(float((pd.to_numeric(cells["fee"]) == 0).mean()))
        x = np.array(shares)
        print(f"{recipe}: mean {x.mean():.3f}, sd {x.std(ddof=1):.3f}, min {x.min():.3f}, "
              f"largest |error| {np.abs(x - real).max():.3f}; per seed "
              + " ".join(f"{s:.3f}" for s in shares), flush=True)


if __name__ == "__main__":
    main()
