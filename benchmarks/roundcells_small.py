"""A small table's pile at 0 over many seeds (branch roundcells): ISLP Credit's case from
tests/marginals/test_lone_cells.py (400 rows, 22.5 % of ``amount`` at 0, public bounds 0-1,999,
AIM at ε = 1), run with the code tree on PYTHONPATH; prints how many seeds erased the pile
(released share < 5 %), the mean released share and the mean KS of ``amount``.

    PYTHONPATH=TREE .venv/bin/python benchmarks/roundcells_small.py LABEL FIRST LAST

Synthetic data; evaluation only.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import ks_2samp

from synthpriv import Synthesizer

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "marginals"))
from test_lone_cells import credit_case  # noqa: E402  (the test's table, one definition)

warnings.simplefilter("ignore")
table, schema = credit_case()
label, first, last = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
shares, ks = [], []
for seed in range(first, last):
    synthetic = Synthesizer(schema, epsilon=1.0, delta=1e-6, recipe="aim",
                            seed=seed).fit(table).synthetic
    shares.append(float((synthetic["amount"] == 0).mean()))
    ks.append(ks_2samp(table["amount"], synthetic["amount"].dropna()).statistic)
print(f"{label} seeds {first}-{last - 1}: erased {sum(s < 0.05 for s in shares)} of {len(shares)}, "
      f"mean share {np.mean(shares):.3f} (real {(table['amount'] == 0).mean():.3f}), "
      f"mean KS {np.mean(ks):.3f}")
