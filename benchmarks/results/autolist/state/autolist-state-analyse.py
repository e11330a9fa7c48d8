import json
from pathlib import Path

import pandas as pd

real = pd.read_csv(
    "/tmp/autolist-cache-before/suite/hhs_breaches/train.csv", keep_default_na=False, dtype=str
)["State"]
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
lines = Path("benchmarks/results/autolist/state/released-state.jsonl").read_text().splitlines()
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
