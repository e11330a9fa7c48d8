"""The released column of ``benchmarks/list_state.py``'s runs against the real one, per run:
blank share, the real top 5 values' shares, 1-way TVD, mass on codes the real column lacks.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/list_state_analyse.py TRAIN_CSV COLUMN \
        RELEASED_JSONL

NOT differentially private (it reads the real column): a development tool. Branches autolist and
listtest ran it (as two copies) with hhs_breaches' and loans' suite train splits.
"""

import json
import sys
from pathlib import Path

import pandas as pd

train, column, released = sys.argv[1], sys.argv[2], Path(sys.argv[3])
real = pd.read_csv(train, keep_default_na=False, dtype=str)[column]
share = real.value_counts(normalize=True)
top = list(share.index[:5])
print(
    "real rows",
    len(real),
    "distinct",
    real.nunique(),
    "top5",
    {k: round(share[k], 3) for k in top},
    "blank",
    round((real == "").mean(), 3),
)
lines = released.read_text().splitlines()
for line in lines:
    line = line.strip("\x00 \n")
    if not line.startswith('{"label"'):
        continue
    r = json.loads(line)
    c = pd.Series(r["counts"], dtype=float)
    n = c.sum()
    s = c / n
    absent = [k for k in c.index if k not in share.index and k != ""]
    tvd = 0.5 * sum(abs(s.get(k, 0) - share.get(k, 0)) for k in set(s.index) | set(share.index))
    print(
        r["label"],
        r["seed"],
        "cats",
        r["categories"],
        "adopted",
        r["adopted"],
        "| blank {:.3f}".format(s.get("", 0)),
        "| top5",
        [round(s.get(k, 0), 3) for k in top],
        f"| 1-way TVD {tvd:.3f}",
        f"| mass on codes absent from train {s[absent].sum() if absent else 0:.3f} "
        f"({len(absent)} codes: {','.join(sorted(absent))})",
        f"| real states released {sum(1 for k in share.index if s.get(k, 0) > 0)} of {len(share)}",
    )
