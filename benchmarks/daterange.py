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

``--work`` is the folder of the runs (a private one when others run it too); ``--oracle`` (NOT
DP, a diagnostic of what bounds refinement could give) sets each refined column's bounds at the
sub-buckets around its real ends. Each line also carries the plan's σ_r (``refine_sigma``) and,
per integer/continuous column, ``edge_rows``: the real rows in the sub-bucket at each real end,
what a sharp cut there must see (issue 24, benchmarks/README.md "intrange").

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
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from dev_tables import all_tables  # noqa: E402
from value_sweep import read_cells, released  # noqa: E402

import synthpriv.domain_stage as domain_stage  # noqa: E402
from synthpriv.evaluation.discretize import Discretizer  # noqa: E402
from synthpriv.evaluation.utility import marginal_tvd  # noqa: E402
from synthpriv.evaluation.values import ks_distance  # noqa: E402
from synthpriv.privacy.bounds import Buckets  # noqa: E402
from synthpriv.privacy.refine import SUB_BUCKETS  # noqa: E402

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
        if kind in ("integer", "continuous"):
            columns[name]["edge_rows"] = edge_rows(r, kind)
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


def end_sub_bucket(values: np.ndarray, kind: str, side: int) -> tuple[int, float, float]:
    """The bucket (``privacy.bounds.Buckets``) of the real minimum (side 0) or maximum (1), and
    the first and last value of its sub-bucket holding that value: SUB_BUCKETS equal parts of
    the bucket (an integer one of fewer whole values: one per value), as ``privacy.refine``
    splits a bucket."""
    grid = Buckets(kind)
    end = float(values.min() if side == 0 else values.max())
    bucket = int(grid.index(np.array([end]))[0])
    low, high = grid.value_range(bucket)
    one = 1.0 if kind == "integer" else 0.0
    parts = min(SUB_BUCKETS, int(high - low + 1)) if one else SUB_BUCKETS
    width = (high - low + one) / parts
    at = min(int(np.floor((end - low) / width)), parts - 1)
    return bucket, low + at * width, low + (at + 1) * width - one


def edge_rows(values: np.ndarray, kind: str) -> list[int]:
    """Per side (low, high): the real rows in the sub-bucket of the real end's bucket that holds
    the end value (``end_sub_bucket``): what a sharp cut at the real edge must see, against
    SHARP·located_bar·σ_r (the run's plan states σ_r as ``refine_sigma``). Not DP."""
    rows = []
    for side in (0, 1):
        _, low, high = end_sub_bucket(values, kind, side)
        one = 1.0 if kind == "integer" else 0.0
        rows.append(int(((values >= low) & (values < high + one)).sum()))
    return rows


def oracle_refine(column, domain: dict, *args, **kwargs) -> dict:
    """NOT DP, a diagnostic (``--oracle``): the bounds moved to the sub-bucket edges around the
    column's real minimum and maximum (``end_sub_bucket`` of its exact values), inside the DP
    bounds: the most a refinement at SUB_BUCKETS could give, guard or not."""
    domain = ORIGINAL_REFINE(column, domain, *args, **kwargs)
    values = args[5]  # refine_domain(column, domain, noisy, sigma, grid, reading, shape, values, ..)
    reading = args[3]
    if (reading is None or reading.zeros_only or "upper" not in domain or not values
            or column.kind not in ("integer", "continuous")):
        return domain
    exact = np.array([v for v in values if np.isfinite(v)], dtype=float)
    lower = max(domain["lower"], end_sub_bucket(exact, column.kind, 0)[1])
    upper = min(domain["upper"], end_sub_bucket(exact, column.kind, 1)[2])
    if upper <= lower:
        return domain
    return domain_stage.dp_bounds(column, replace(reading, lower=lower, upper=upper), args[4])


ORIGINAL_REFINE = domain_stage.refine_domain


def summarise(paths: list[str], columns: list[str]) -> None:
    """Print, per table and tag of the JSON lines in ``paths``, the mean 2-way TVD (± sd over
    seeds) and, per column named in ``columns`` (all when empty), the outside share and KS per
    seed, and its edge_rows against the plan's σ_r."""
    rows = [json.loads(line) for path in paths for line in Path(path).read_text().splitlines()
            if line.strip()]
    for table in dict.fromkeys(r["table"] for r in rows):
        for tag in dict.fromkeys(r["tag"] for r in rows if r["table"] == table):
            runs = sorted((r for r in rows if r["table"] == table and r["tag"] == tag),
                          key=lambda r: r["seed"])
            tvd = np.array([r["two_way"] for r in runs], dtype=float)
            print(f"{table} [{tag}] seeds {[r['seed'] for r in runs]}: 2-way "
                  f"{tvd.mean():.4f} ± {tvd.std(ddof=1) if tvd.size > 1 else 0:.4f} "
                  f"{' '.join(f'{t:.3f}' for t in tvd)}; σ_r {runs[0].get('refine_sigma') or 0:.0f}")
            for name in runs[0]["columns"]:
                if columns and name not in columns:
                    continue
                per = [r["columns"].get(name) for r in runs]
                out = " ".join("—" if c is None else f"{c['outside']:.3f}" for c in per)
                ks = " ".join("—" if c is None else f"{c['ks']:.3f}" for c in per)
                first = next(c for c in per if c is not None)
                print(f"   {name} real {first['real']} outside {out} | KS {ks} | bounds "
                      f"{[c['bounds'] for c in per if c]} | edge_rows {first.get('edge_rows')}")
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
    parser.add_argument("--work", default="/tmp/daterange-runs",
                        help="folder of the runs (one per tag, table and seed): a private one "
                             "when others run the script in parallel")
    parser.add_argument("--oracle", action="store_true",
                        help="NOT DP: bounds at the real ends' sub-buckets (oracle_refine)")
    parser.add_argument("--summary", nargs="*", metavar="JSONL",
                        help="print the figures of these result files (no run): per table and "
                             "tag, then per column of --columns (all when not given)")
    parser.add_argument("--columns", default="")
    args = parser.parse_args()
    if args.summary:
        summarise(args.summary, [c for c in args.columns.split(",") if c])
        return
    if args.oracle:
        domain_stage.refine_domain = oracle_refine
    if args.pair:
        paired(*args.pair)
        return
    for table in args.tables.split(","):
        text = table_text(table)
        real = read_cells(io.StringIO(text))
        for seed in (int(s) for s in args.seeds.split(",")):
            folder = Path(args.work) / args.tag / f"{table.replace('/', '_')}_{seed}"
            shutil.rmtree(folder, ignore_errors=True)
            cells, schema = released(text, folder, 1.0, seed)
            plan = json.loads((folder / "out" / "manifest.json").read_text())["plan"]
            noise = next((st.get("noise", {}) for st in plan["stages"]
                          if "refine_sigma" in st.get("noise", {})), {})
            print(json.dumps({"table": table, "seed": seed, "tag": args.tag,
                              "refine_sigma": noise.get("refine_sigma"),
                              **figures(real, cells, schema)}), flush=True)


if __name__ == "__main__":
    main()
