"""Figures of the seeded CLI runs of run_cli.sh (before: main dbe6e06's synthpriv, archived to
/tmp/newtables-main; after: branch newtables), as a user reads the terminal and the CSV.

    /work/main/.venv/bin/python benchmarks/results/newtables/measure_cli.py
"""

import json
import re
from pathlib import Path

import pandas as pd
from scipy.stats import ks_2samp

from synthpriv.public_lists import list_values

ROOT = Path("/tmp/newtables-run")
TREES = {"before": ROOT / "newtables-main", "after": ROOT / "wt-newtables"}
SEEDS = (1, 2, 3)


def release(folder: Path) -> pd.DataFrame | None:
    found = next((folder / "out").glob("*/synthetic.csv"), None)
    return None if found is None else pd.read_csv(found, dtype=str, keep_default_na=False)


def kind(folder: Path, name: str) -> str:
    found = next((folder / "out").glob("*/manifest.json"), None)
    columns = json.loads(found.read_text())["schema"]["columns"] if found else []
    return next((c["kind"] for c in columns if c["name"] == name), "-")


def shape(cell: str) -> str:
    return re.sub(r"\d", "9", re.sub(r"[A-Za-z]", "a", cell))


def crashes() -> None:
    print("## safe draft, run with evaluation: exit code, traceback, blank-columns note")
    for table in ("committee", "scotvote", "statecrime", "data"):
        for name, tree in TREES.items():
            out = []
            for seed in SEEDS:
                folder = tree / f"{table}-safe-s{seed}"
                codes = (folder / "rc.txt").read_text() if folder.exists() else ""
                if "run rc=" not in codes:
                    out.append("?")
                    continue
                said = (folder / "run.out").read_text()
                out.append(f"rc {codes.split('run rc=')[1].strip()}"
                           + (" traceback" if "Traceback" in (folder / "run.err").read_text() else "")
                           + (" note" if "score TVD 0" in said else "")
                           + (" quality-undefined" if "score not defined" in said else ""))
            print(table, name, out)


def dates() -> None:
    print("## elec_equip DATE")
    real = pd.read_csv("/tmp/newtables-data/elec_equip.csv", dtype=str)["DATE"]
    shapes, days = set(real.map(shape)), pd.to_datetime(real, format="%b-%d-%Y")
    for mode in ("data", "safe"):
        for name, tree in TREES.items():
            for seed in SEEDS:
                folder = tree / f"elec_equip-{mode}-s{seed}"
                rows = release(folder) if folder.exists() else None
                if rows is None:
                    print(mode, name, seed, "no release")
                    continue
                cells = rows["DATE"][rows["DATE"] != ""]
                parsed = pd.to_datetime(cells, format="%b-%d-%Y", errors="coerce")
                some = len(cells) > 0
                inside = ((parsed >= days.min()) & (parsed <= days.max())).mean() if some else 0
                dated = parsed.notna().mean() if some else 0
                shaped = cells.map(shape).isin(shapes).mean() if some else 0
                copied = cells.isin(set(real)).mean() if some else 0
                print(f"{mode} {name} s{seed}: kind {kind(folder, 'DATE')}, rows {len(rows)}, "
                      f"blank {1 - len(cells) / len(rows):.2f}, dates {dated:.2f}, "
                      f"real shape {shaped:.2f}, in real range {inside:.2f}, real cells "
                      f"{copied:.2f}, e.g. {cells.head(2).tolist()}")


def states() -> None:
    print("## statecrime state, data-read draft")
    table = pd.read_csv("/tmp/newtables-data/statecrime.csv", dtype=str)
    real = set(table["state"].str.strip())
    listed = set(list_values("us_state_name"))
    for name, tree in TREES.items():
        for seed in SEEDS:
            folder = tree / f"statecrime-data-s{seed}"
            rows = release(folder) if folder.exists() else None
            if rows is None:
                print(name, seed, "no release")
                continue
            cells = rows["state"][rows["state"] != ""]
            counts = cells.value_counts()
            numbers = [c for c in table.columns if c != "state"]
            ks = sum(ks_2samp(pd.to_numeric(table[c]), pd.to_numeric(rows[c], errors="coerce")
                              .dropna()).statistic for c in numbers) / len(numbers)
            print(f"{name} s{seed}: kind {kind(folder, 'state')}, rows {len(rows)}, "
                  f"blank {1 - len(cells) / len(rows):.2f}, distinct {len(counts)}, "
                  f"top {counts.head(3).to_dict()}, "
                  f"in the table {cells.isin(real).mean() if len(cells) else 0:.2f}, "
                  f"in us_state_name {cells.isin(listed).mean() if len(cells) else 0:.2f}; "
                  f"mean KS of the 7 number columns {ks:.3f}")


if __name__ == "__main__":
    crashes()
    dates()
    states()
