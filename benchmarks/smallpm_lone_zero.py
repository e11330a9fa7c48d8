"""c0's cell 0 in tests/marginals/test_lone_cells.py's heavy-tailed table (branch smallpm): the
share released at 0 per seed (real 0.05 %), to tell a shifted random stream from a rule change.

    PYTHONPATH=TREE .venv/bin/python benchmarks/smallpm_lone_zero.py LABEL 1 8
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "marginals"))

from test_lone_cells import _amounts  # noqa: E402

from synthpriv import Synthesizer  # noqa: E402


def main() -> None:
    label, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    table = _amounts()
    schema = {"columns": [{"name": name, "kind": "auto"} for name in table.columns]}
    shares = []
    for seed in range(first, last + 1):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synthetic = Synthesizer(schema, epsilon=0.5, delta=1e-6, recipe="mst",
                                    seed=seed).fit(table).synthetic
        shares.append(float((synthetic["c0"] == 0).mean()))
        print(label, seed, f"{shares[-1]:.4f}", flush=True)
    print(label, "mean", f"{sum(shares) / len(shares):.4f}")


if __name__ == "__main__":
    main()
