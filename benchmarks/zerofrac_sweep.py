"""Branch zerofrac (issue 24): the default release of development tables, looked at for the
zero-heavy fraction columns the kinds pass decides integer (ISLP OJ's DiscCH, DiscMM, PctDiscMM,
PctDiscCH) and for guard tables whose releases must not move. Per table and seed: the value
sweep's problems (``value_sweep.check_table``), per numeric column KS, mean 2-way TVD over all
column pairs (numbers in 10 bins at the real deciles, missing a level of its own), the released
schema's kinds, the SHA-256 of the synthetic CSV (byte-identity of guard releases), and per
watched column the shares of zeros, of non-zero values and of the real non-zero values (the
release's cells holding a value the real column holds, 0 excepted) against the real ones. Runs
whatever synthpriv is first on PYTHONPATH (before/after on the same seeds). Reads the real table:
a measurement, not a release.

    PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/zerofrac_sweep.py islp/OJ islp/Boston \\
        --seeds 0,1,2,3 --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import io
import itertools
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from dev_tables import all_tables  # noqa: E402
from value_sweep import check_table, read_cells, released, text_delimiter  # noqa: E402

from synthpriv.evaluation.values import ks_distance  # noqa: E402

WATCHED = ("DiscCH", "DiscMM", "PctDiscMM", "PctDiscCH")


def numbers(cells: pd.Series) -> pd.Series:
    """Cells as numbers (NaN for empty or text)."""
    return pd.to_numeric(cells.replace("", np.nan), errors="coerce")


def binned(real: pd.Series, synth: pd.Series) -> tuple[pd.Series, pd.Series]:
    """Both columns as labels: numbers (when most real cells are) in 10 bins at the real
    deciles, text as is; missing a label of its own."""
    r, s = numbers(real), numbers(synth)
    if r.notna().mean() > 0.5:
        edges = np.unique(np.nanquantile(r, np.linspace(0, 1, 11)))
        cut = lambda x: pd.Series(np.searchsorted(edges[1:-1], x, side="right"),  # noqa: E731
                                  index=x.index).astype(str).where(x.notna(), "NA")
        return cut(r), cut(s)
    return real.fillna("NA"), synth.fillna("NA")


def two_way(real: pd.DataFrame, synth: pd.DataFrame) -> float:
    """Mean TVD of the 2-way marginals over every pair of columns both tables hold."""
    names = [n for n in real.columns if n in synth.columns]
    labels = {n: binned(real[n], synth[n]) for n in names}
    gaps = []
    for a, b in itertools.combinations(names, 2):
        r = (labels[a][0] + "|" + labels[b][0]).value_counts(normalize=True)
        s = (labels[a][1] + "|" + labels[b][1]).value_counts(normalize=True)
        gaps.append(0.5 * float(r.subtract(s, fill_value=0).abs().sum()))
    return float(np.mean(gaps)) if gaps else float("nan")


def watched(real: pd.Series, synth: pd.Series) -> dict:
    """Shares of zeros, non-zero values and real non-zero values, real and released."""
    r, s = numbers(real).dropna(), numbers(synth).dropna()
    values = set(np.round(r[r != 0], 6))
    share = lambda x, hit: float(hit.mean()) if len(x) else float("nan")  # noqa: E731
    return {"zeros": [share(r, r == 0), share(s, s == 0)],
            "nonzero": [share(r, r != 0), share(s, s != 0)],
            "real_fractions": [share(r, r.round(6).isin(values)),
                               share(s, s.round(6).isin(values))],
            "distinct_released": int(s.nunique()), "max_released": float(s.max()) if len(s) else None,
            "ks": ks_distance(r.to_numpy(), s.to_numpy())}


def one_run(name: str, text: str, seed: int) -> dict:
    real = read_cells(io.StringIO(text), text_delimiter(text))
    with tempfile.TemporaryDirectory() as folder:
        cells, schema = released(text, Path(folder), 1.0, seed)
        digest = hashlib.sha256((Path(folder) / "out" / "synthetic.csv").read_bytes()).hexdigest()
    problems = [p.line() for p in check_table(name, real, cells, schema)]
    kinds = {c["name"]: c["kind"] for c in schema["columns"]}
    ks = {n: ks_distance(numbers(real[n]).dropna().to_numpy(),
                         numbers(cells[n]).dropna().to_numpy())
          for n in real.columns if n in cells.columns and numbers(real[n]).notna().mean() > 0.5}
    return {"table": name, "seed": seed, "sha256": digest, "kinds": kinds, "problems": problems,
            "two_way": two_way(real, cells), "ks": ks,
            "mean_ks": float(np.mean([v for v in ks.values() if v is not None])) if ks else None,
            "watched": {n: watched(real[n], cells[n]) for n in WATCHED if n in real.columns}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", nargs="+", help="development table names (exact)")
    parser.add_argument("--seeds", default="0")
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    texts = dict(t for t in all_tables() if t[0] in args.tables)
    results = []
    for seed in [int(s) for s in args.seeds.split(",")]:
        for name in args.tables:
            results.append(one_run(name, texts[name], seed))
            r = results[-1]
            print(f"{name} seed {seed}: 2-way {r['two_way']:.4f} mean KS {r['mean_ks']:.4f} "
                  f"problems {len(r['problems'])} {r['sha256'][:10]}", flush=True)
            args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
