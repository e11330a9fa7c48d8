"""What a larger domain share buys and costs on small development tables (issue 24; branch tiny).

Each table's DEFAULT release as ``value_sweep`` makes it (safe draft: every column ``kind: auto``;
default recipe AIM; ε = 1, δ = 1e-6), with ``budget.domain_share`` left to its default or set to
each of ``--shares``, over ``--seeds``. Per release, against the real table's cells:

- ``blank``: real columns whose cells are numbers (``value_sweep.real_type``) released all missing;
  ``blank_any``: any real column released all missing where it was not;
- ``ks``: mean two-sample KS over the real number columns, a column released all missing (or not
  at all) counting as KS 1 (the yardstick of issue 24's judges: a blank column fails them);
- ``tvd2``: mean 2-way TVD over all pairs of columns (up to ``PAIRS``, a seeded sample beyond),
  each number column cut at its real deciles (missing its own cell), each text column its values.

NOT differentially private (it reads the real table): a development tool; none of these tables is
held out.

    PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/tiny_share.py \\
        --shares default,0.6,0.75,0.9 --seeds 0,1,2 --json benchmarks/results/tiny-share.json
    PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/tiny_share.py --public \
        --shares default,0.41634 --seeds 0,1,2 --json benchmarks/results/tiny-share.json

``--public`` declares each table's row count (data.public_records): with ``default`` the
small-table rule then chooses the share; 0.41634 is the default share of an all-auto draft,
given explicitly, so the rule stays out (the same plan otherwise).
"""

from __future__ import annotations

import argparse
import itertools
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from value_sweep import MISSING, read_cells, real_type, text_delimiter  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.runner import run_job  # noqa: E402
from synthpriv.schema_infer import infer_schema, schema_yaml  # noqa: E402

TABLES = ("islp/Hitters", "islp/Auto", "islp/Carseats", "islp/Credit", "islp/Boston",
          "islp/Publication", "islp/BrainCancer", "islp/College", "statsmodels/star98/star98",
          "statsmodels/fertility/fertility", "statsmodels/macrodata/macrodata",
          "statsmodels/fair/fair_pt")
PAIRS = 120
DECILES = np.linspace(0.1, 0.9, 9)


def release(text: str, folder: Path, share: float | None, seed: int,
            epsilon: float = 1.0, records: int | None = None) -> pd.DataFrame:
    """The default release of the CSV ``text`` (``value_sweep.released``'s job) with
    ``budget.domain_share`` = ``share`` (None: the default rule) and ``records`` declared as
    data.public_records (None: not declared)."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.csv").write_text(text, encoding="utf-8")
    draft, notes = infer_schema(folder / "data.csv", safe=True)
    (folder / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    budget = {"epsilon": epsilon, "delta": 1e-6} | ({} if share is None else
                                                    {"domain_share": share})
    data = {"path": "data.csv", "schema": "schema.yaml", "delimiter": text_delimiter(text)}
    if records is not None:
        data["public_records"] = records
    config = {"name": "tiny", "data": data,
              "budget": budget, "evaluation": {"enabled": False},
              "output": {"dir": str(folder / "out")}, "seed": seed}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    run_job(load_job(folder / "job.yaml"))
    return read_cells(folder / "out" / "synthetic.csv")


def _missing(cells: pd.Series) -> pd.Series:
    return cells.str.strip().isin(MISSING)


def _numbers(cells: pd.Series) -> np.ndarray:
    values = pd.to_numeric(cells.where(~_missing(cells)).str.strip(), errors="coerce")
    return values.dropna().to_numpy(dtype=float)


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample KS distance; 1 when either sample is empty."""
    if len(a) == 0 or len(b) == 0:
        return 1.0
    grid = np.union1d(a, b)
    cdf = [np.searchsorted(np.sort(x), grid, side="right") / len(x) for x in (a, b)]
    return float(np.abs(cdf[0] - cdf[1]).max())


def _codes(real: pd.Series, fake: pd.Series, numeric: bool) -> tuple[np.ndarray, np.ndarray]:
    """Both columns as integer cells: number columns cut at the real deciles, text columns by
    value; missing (or not a number) is its own cell."""
    if numeric:
        values = _numbers(real)
        cuts = np.unique(np.quantile(values, DECILES)) if len(values) else np.array([])

        def cut(cells: pd.Series) -> np.ndarray:
            x = pd.to_numeric(cells.where(~_missing(cells)).str.strip(), errors="coerce")
            out = np.searchsorted(cuts, x.to_numpy(dtype=float), side="right")
            return np.where(x.isna().to_numpy(), -1, out)
        return cut(real), cut(fake)
    labels = {v: i for i, v in enumerate(sorted(set(real) | set(fake)))}
    def code(cells: pd.Series) -> np.ndarray:
        return np.array([-1 if m else labels[v]
                         for v, m in zip(cells, _missing(cells), strict=True)])
    return code(real), code(fake)


def tvd2(real: pd.DataFrame, fake: pd.DataFrame, numeric: dict[str, bool], seed: int = 0) -> float:
    """Mean 2-way TVD over pairs of the real columns (a column absent from ``fake``: all missing)."""
    codes = {}
    for name in real.columns:
        fake_cells = fake[name] if name in fake else pd.Series([""] * len(fake))
        codes[name] = _codes(real[name], fake_cells.astype(str), numeric[name])
    pairs = list(itertools.combinations(real.columns, 2))
    if len(pairs) > PAIRS:
        pick = np.random.default_rng(seed).choice(len(pairs), PAIRS, replace=False)
        pairs = [pairs[i] for i in sorted(pick)]
    out = []
    for a, b in pairs:
        r = pd.Series(list(zip(codes[a][0], codes[b][0], strict=True))).value_counts(normalize=True)
        f = pd.Series(list(zip(codes[a][1], codes[b][1], strict=True))).value_counts(normalize=True)
        out.append(0.5 * r.sub(f, fill_value=0).abs().sum())
    return float(np.mean(out)) if out else 0.0


def score(real: pd.DataFrame, fake: pd.DataFrame) -> dict:
    """Blank columns, mean KS (blank = 1) over number columns, 2-way TVD (module docstring)."""
    numeric = {c: real_type(real[c]) in ("integer", "number") for c in real.columns}
    blank, blank_any, distances = [], [], []
    for name in real.columns:
        gone = name not in fake or _missing(fake[name]).all()
        if gone and not _missing(real[name]).all():
            blank_any.append(name)
            if numeric[name]:
                blank.append(name)
        if numeric[name]:
            fake_cells = fake[name] if name in fake else pd.Series([], dtype=str)
            distances.append(ks(_numbers(real[name]), _numbers(fake_cells)))
    return {"blank": len(blank), "blank_any": len(blank_any), "blank_columns": blank_any,
            "ks": float(np.mean(distances)) if distances else None,
            "tvd2": tvd2(real, fake, numeric)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tables", default=",".join(TABLES))
    parser.add_argument("--shares", default="default,0.6,0.75,0.9")
    parser.add_argument("--seeds", default="0,1,2")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--public", action="store_true",
                        help="declare the table's row count as data.public_records (the "
                        "small-table rule applies when no share is given)")
    args = parser.parse_args()
    from dev_tables import islp_tables, statsmodels_tables

    wanted = args.tables.split(",")
    shares = [None if s == "default" else float(s) for s in args.shares.split(",")]
    seeds = [int(s) for s in args.seeds.split(",")]
    records = json.loads(args.json.read_text()) if args.json and args.json.exists() else []
    done = {(r["table"], r["share"], r["seed"], r.get("public", False)) for r in records}
    texts = {n: t for n, t in itertools.chain(islp_tables(), statsmodels_tables()) if n in wanted}
    for name in wanted:
        real = read_cells(__import__("io").StringIO(texts[name]), text_delimiter(texts[name]))
        real = real.drop(columns=[c for c in real.columns if c == "" or c.startswith("Unnamed")])
        for share, seed in itertools.product(shares, seeds):
            if (name, share, seed, args.public) in done:
                continue
            start = time.time()
            with tempfile.TemporaryDirectory() as folder:
                fake = release(texts[name], Path(folder), share, seed, args.epsilon,
                               len(real) if args.public else None)
            record = {"table": name, "rows": len(real), "share": share, "seed": seed,
                      "public": args.public,
                      "seconds": round(time.time() - start, 1)} | score(real, fake)
            records.append(record)
            print(json.dumps({k: v for k, v in record.items() if k != "blank_columns"}),
                  flush=True)
            if args.json:
                args.json.write_text(json.dumps(records, indent=1))
    summary(records)


def summary(records: list[dict]) -> None:
    """One line per table and share: mean blank columns, KS and 2-way TVD over the seeds."""
    print("| table | rows | share | seeds | blank numeric | blank any | mean KS (blank = 1) "
          "| 2-way TVD |")
    print("|---|---|---|---|---|---|---|---|")
    keys = sorted({(r["table"], str(r["share"]), r.get("public", False)) for r in records})
    for table, share, public in keys:
        runs = [r for r in records if r["table"] == table and str(r["share"]) == share
                and r.get("public", False) == public]

        def cell(key: str, runs: list[dict] = runs) -> str:
            values = [r[key] for r in runs if r[key] is not None]
            if len(values) < 2:
                return f"{values[0]:.3f}" if values else "-"
            return f"{statistics.mean(values):.3f} ± {statistics.stdev(values):.3f}"
        share = share + " (n̂ public)" * public
        print(f"| {table} | {runs[0]['rows']} | {share} | {len(runs)} | {cell('blank')} | "
              f"{cell('blank_any')} | {cell('ks')} | {cell('tvd2')} |")


if __name__ == "__main__":
    main()
