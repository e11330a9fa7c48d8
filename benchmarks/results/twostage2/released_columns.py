"""The released long-tailed columns as a user sees them (branch twostage2, issue 24): per table,
tag (r = 0 / 0.4) and seed, for chosen categorical columns, the released blank share against the
real one, the distinct values released (real), and the 1-way TVD over values (blank included).
Reads safe_gap.py's kept releases (variant-safe-<i>.csv in each work folder) and the train file.

    python released_columns.py /tmp/twostage2-tmp
"""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd
import yaml

COLUMNS = {"adult": ["native-country", "education", "occupation"],
           "loans": ["state", "sub_grade", "emp_title"],
           "hhs_breaches": ["State", "Location.of.Breached.Information", "Type.of.Breach"],
           "mn_police": ["problem", "primary_offense", "neighborhood"],
           "wage": ["education", "region"]}


def shares(values: pd.Series) -> pd.Series:
    """Value shares, blanks (empty or NaN) as one value ''."""
    return values.fillna("").astype(str).str.strip().value_counts(normalize=True)


def main(root: Path) -> None:
    for folder in sorted(root.glob("safe-gap-*")):
        job = folder / "variant-safe.job.yaml"
        releases = sorted(folder.glob("variant-safe-*.csv"))
        if not job.exists() or not releases:
            continue
        table = next(p.name for p in folder.iterdir() if p.is_dir() and p.name != "release")
        tag = "r=0.4" if "round 2" in (folder / "release/manifest.json").read_text() else "r=0"
        train = pd.read_csv(yaml.safe_load(job.read_text())["data"]["path"], dtype=str,
                            keep_default_na=False, skipinitialspace=True)
        for seed, path in enumerate(releases):
            synth = pd.read_csv(path, dtype=str, keep_default_na=False, skipinitialspace=True)
            parts = []
            for column in COLUMNS.get(table, []):
                real, fake = shares(train[column]), shares(synth[column])
                tvd = 0.5 * real.subtract(fake, fill_value=0).abs().sum()
                distinct = len(set(fake.index) - {""})
                parts.append(f"{column}: blank {fake.get('', 0):.3f} (real "
                             f"{real.get('', 0):.3f}), {distinct} values (real "
                             f"{len(set(real.index) - {''})}), TVD {tvd:.3f}")
            print(f"{table} {tag} seed {100 + seed}: " + "; ".join(parts))


if __name__ == "__main__":
    main(Path(sys.argv[1]))
