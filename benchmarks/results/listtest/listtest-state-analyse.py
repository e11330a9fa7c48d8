"""Per seed: the released State column's blank share and 1-way TVD against train (hhs_breaches)."""
import json
from pathlib import Path

import pandas as pd

real = pd.read_csv("/tmp/listtest-data/hhs/train.csv", keep_default_na=False, dtype=str)["State"]
share = real.value_counts(normalize=True)
for line in Path("benchmarks/results/listtest/released-state.jsonl").read_text().splitlines():
    if not line.startswith('{"label"'):
        continue
    r = json.loads(line)
    c = pd.Series(r["counts"], dtype=float)
    s = c / c.sum()
    keys = set(s.index) | set(share.index)
    tvd = 0.5 * sum(abs(s.get(k, 0.0) - share.get(k, 0.0)) for k in keys)
    absent = sum(v for k, v in s.items() if k not in share.index and k != "")
    adopted = r["adopted"] or {}
    how = "test" if adopted.get("test") else (f"S={adopted['discovered']}" if adopted else "none")
    print(f"{r['label']:6} seed {r['seed']}: {how:5} blank {s.get('', 0.0):.3f} TVD {tvd:.3f} "
          f"absent-code mass {absent:.3f} real states released {sum(k in share.index for k in s.index if k)}")
