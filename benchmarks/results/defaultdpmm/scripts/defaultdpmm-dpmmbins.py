# ruff: noqa  (a scratch script as run for the defaultdpmm section; kept as the record)
import sys, numpy as np
sys.path.insert(0, '/work/wt-defaultdpmm/benchmarks')
from pathlib import Path
from dpmm_baseline import load
from dpmm.processing.table_binner import TableBinner
from numpy.random import RandomState
frame, domain, spec = load(Path('/tmp/defaultdpmm-cache/suite/default/domain.json'))
for seed in range(3):
    b = TableBinner(binner_type="priv-tree", binner_settings=dict(epsilon=0.1, n_bins="auto"))
    b.set_domain(domain); b.set_random_state(RandomState(seed))
    b.fit(frame)
    for col in ["balance", "income"]:
        binner = b.binners[col] if hasattr(b, "binners") else None
        bins = np.array(binner.bins)
        codes = np.digitize(frame[col], bins[1:-1])
        print(seed, col, len(bins)-1, "bins", np.round(bins).astype(int).tolist(), "shares %", np.round(np.bincount(codes, minlength=len(bins)-1)/len(frame)*100,1).tolist(), "eps", binner.spent_epsilon)
