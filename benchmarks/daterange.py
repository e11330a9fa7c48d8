"""Released values outside the real range, per column (issue 24, "values inside the public type"):
the default release (safe draft, default recipe, ε = 1, as ``value_sweep.released``) of a few
development tables, per seed, with each numeric or date column's share of released values
outside [real min, real max], how far outside (the released range against the real one), its KS
distance, and the table's mean 2-way TVD (every column at 10 real-quantile bins or its labels);
per date/datetime column also its weekdays (branch dpweekdays): the share of released values on
weekdays the real column has none of (``off_days``), the weekday TVD (real against released
weekday shares, as the cells show them), and the ``weekdays`` the run decided (None: every day).

    nice -n 10 env PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/daterange.py \\
        --seeds 0,1,2 --tables islp/NYSE,islp/Wage --tag after > results.jsonl

``--pair before.jsonl after.jsonl`` summarises two such files seed by seed (paired differences).
``<tree>`` is the synthpriv checkout that runs (this worktree, or a ``git archive`` of main).
NOT differentially private (it reads the real table): a development tool; none of these tables
is held out.
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import sys
from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from dev_tables import all_tables  # noqa: E402
from value_sweep import read_cells, released  # noqa: E402

from synthpriv.evaluation.discretize import Discretizer  # noqa: E402
from synthpriv.evaluation.utility import marginal_tvd  # noqa: E402
from synthpriv.evaluation.values import ks_distance  # noqa: E402

MISSING = ("", "NA", "N/A", "NaN", "nan", "null", "NULL", "None")


def table_text(name: str) -> str:
    """A development table's CSV text: ``adult`` (data/adult's train split) or a dev_tables name."""
    if name == "adult":
        return (ROOT / "data/adult/adult_train.csv").read_text()
    return next(text for found, text in all_tables() if found == name)


def as_numbers(cells: pd.Series, kind: str) -> pd.Series:
    """Cells as numbers: days since 1970 for a date column, else the number (NaN: missing)."""
    present = cells.where(~cells.str.strip().isin(MISSING))
    if kind == "date":
        stamps = pd.to_datetime(present, errors="coerce", format="mixed")
        return (stamps - pd.Timestamp("1970-01-01")).dt.days.astype(float)
    return pd.to_numeric(present, errors="coerce")


def weekday_figures(real: pd.Series, cells: pd.Series, entry: dict) -> dict:
    """A date column's weekdays: the released share on days the real cells never fall on, the
    TVD of the weekday shares (the day each cell shows, zone as written), the decided list."""
    def shares(column: pd.Series) -> pd.Series:
        present = column.where(~column.str.strip().isin(MISSING)).dropna()
        days = pd.to_datetime(present, errors="coerce", format="mixed").dropna()
        days = days.map(lambda stamp: stamp.weekday())
        return days.value_counts(normalize=True).reindex(range(7), fill_value=0.0)
    have, got = shares(real), shares(cells.fillna(""))
    return {"off_days": float(got[have == 0].sum()),
            "weekday_tvd": float(0.5 * (have - got).abs().sum()),
            "weekday_shares": [round(float(v), 4) for v in got],
            "weekdays": entry.get("weekdays")}


def figures(real: pd.DataFrame, cells: pd.DataFrame, schema: dict) -> dict:
    """Per numeric/date column: outside share, ranges, KS; and the mean 2-way TVD."""
    kinds = {c["name"]: c.get("kind") for c in schema["columns"]}
    columns, frames = {}, ({}, {})
    for name in real.columns:
        kind = kinds.get(name)
        if name not in cells.columns or kind in (None, "id", "text", "ignore"):
            continue
        numeric = kind in ("integer", "continuous", "date", "datetime")
        if not numeric:
            frames[0][name] = real[name].where(~real[name].isin(MISSING), "missing")
            frames[1][name] = cells[name].fillna("").where(~cells[name].fillna("").isin(MISSING),
                                                           "missing")
            continue
        how = "date" if kind in ("date", "datetime") else "number"
        r, s = as_numbers(real[name], how), as_numbers(cells[name].fillna(""), how)
        frames[0][name], frames[1][name] = r, s
        r, s = r.dropna().to_numpy(), s.dropna().to_numpy()
        if not r.size or not s.size:
            continue
        low, high = r.min(), r.max()
        entry = next(c for c in schema["columns"] if c["name"] == name)
        columns[name] = {
            "kind": kind, "real": [float(low), float(high)],
            "bounds": [entry.get("lower"), entry.get("upper")],
            "released": [float(s.min()), float(s.max())],
            "below": float((s < low).mean()), "above": float((s > high).mean()),
            "outside": float(((s < low) | (s > high)).mean()), "ks": ks_distance(r, s)}
        if how == "date":
            columns[name] |= weekday_figures(real[name], cells[name], entry)
    real_frame, synth_frame = pd.DataFrame(frames[0]), pd.DataFrame(frames[1])
    numeric = [n for n in real_frame.columns if n in columns]
    two_way = None
    if real_frame.shape[1] >= 2:
        discretizer = Discretizer.fit(real_frame, numeric, 10)
        two_way = marginal_tvd(discretizer.transform(real_frame),
                               discretizer.transform(synth_frame[list(real_frame.columns)]),
                               2, max_marginals=300, seed=0)["mean"]
    return {"columns": columns, "two_way": two_way}


def paired(before: Path, after: Path) -> None:
    """Per date column of two result files (same tables and seeds, e.g. main and a branch):
    each figure per seed, its mean ± sd, and the paired difference's mean and sd."""
    import statistics as st

    rows: dict = {}
    for tag, path in (("before", before), ("after", after)):
        for line in path.read_text().splitlines():
            r = json.loads(line)
            for name, v in r["columns"].items():
                if "off_days" in v:
                    rows.setdefault((r["table"], name), {}).setdefault(tag, {})[r["seed"]] = (
                        v | {"two_way": r["two_way"]})

    def spread(xs: list[float]) -> str:
        return f"{st.mean(xs):.4f} ± {st.stdev(xs):.4f}" if len(xs) > 1 else f"{xs[0]:.4f}"

    for (table, name), both in rows.items():
        seeds = sorted(set(both.get("before", {})) & set(both.get("after", {})))
        if not seeds:
            continue
        print(f"## {table} {name}, seeds {seeds}")
        for key in ("off_days", "weekday_tvd", "ks", "outside", "two_way"):
            b = [both["before"][s][key] for s in seeds]
            a = [both["after"][s][key] for s in seeds]
            d = [y - x for x, y in zip(b, a, strict=True)]
            print(f"  {key}: {spread(b)} -> {spread(a)}; paired {st.mean(d):+.4f}"
                  + (f" sd {st.stdev(d):.4f}" if len(d) > 1 else ""))
        print("  weekdays decided:", [both["after"][s]["weekdays"] for s in seeds])
        print("  bounds before:", [both["before"][s]["bounds"] for s in seeds])
        print("  bounds after: ", [both["after"][s]["bounds"] for s in seeds])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pair", nargs=2, type=Path, metavar=("BEFORE", "AFTER"),
                        help="summarise two result files seed by seed instead of running")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--tables", default="islp/NYSE,islp/Wage,islp/Bikeshare")
    parser.add_argument("--tag", default="x")
    parser.add_argument("--work", default="/tmp/daterange-runs", help="the runs' folder")
    args = parser.parse_args()
    if args.pair:
        paired(*args.pair)
        return
    for table in args.tables.split(","):
        text = table_text(table)
        real = read_cells(io.StringIO(text))
        for seed in (int(s) for s in args.seeds.split(",")):
            folder = Path(f"{args.work}/{args.tag}/{table.replace('/', '_')}_{seed}")
            shutil.rmtree(folder, ignore_errors=True)
            cells, schema = released(text, folder, 1.0, seed)
            print(json.dumps({"table": table, "seed": seed, "tag": args.tag,
                              **figures(real, cells, schema)}), flush=True)


if __name__ == "__main__":
    main()
