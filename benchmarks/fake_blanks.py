"""Fake blanks in numeric columns with none (issue 24, value sweep item 5; branch fakeblanks):
the default release (``value_sweep.released``: safe draft, AIM, ε = 1, δ = 1e-6) of a few
development-suite tables over seeds, with per column the real and released blank share and what
the domain step resolved (``outside``, bounds), and per table the mean KS and 2-way TVD.

    PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/fake_blanks.py islp/Boston \\
        islp/Caravan --seeds 0-5 --json out.json [--adult-rows 5000]

Names are exact ``dev_tables`` names, or ``adult`` (the first ``--adult-rows`` rows of
data/adult/adult_train.csv). The code measured is the ``synthpriv`` PYTHONPATH picks. Not DP (it
reads the real table): a development tool; none of these tables is held out.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from value_sweep import MISSING, _as_values, read_cells, real_type, released  # noqa: E402

from synthpriv.evaluation.utility import evaluate_utility  # noqa: E402
from synthpriv.evaluation.values import value_fidelity  # noqa: E402


def table_text(name: str, adult_rows: int) -> str:
    """The CSV text of a table by name."""
    if name == "adult":
        frame = pd.read_csv(ROOT / "data/adult/adult_train.csv", dtype=str,
                            keep_default_na=False).head(adult_rows)
        return frame.to_csv(index=False)
    from dev_tables import all_tables

    for found, text in all_tables():
        if found == name:
            return text
    raise SystemExit(f"no table {name!r} in dev_tables")


def traced_missing_codes() -> dict[str, dict]:
    """Wrap the marginals stage's ``choose_coarsening`` to record, per numeric column with a
    missing code, that code's noisy 1-way count and σ and whether it stays a cell of its own
    (``keeps_missing``): the diagnosis of where a fake blank's mass comes from."""
    from synthpriv.marginals import compress, stage
    from synthpriv.schema import NumericColumn

    seen: dict[str, dict] = {}
    original = stage.choose_coarsening

    def wrapper(schema, fine, one_way, records, *args, **kwargs):
        combined = kwargs.get("combined") or {}
        by_attribute = {m.clique[0]: m for m in one_way if len(m.clique) == 1}
        for column in schema.modelled:
            if isinstance(column, NumericColumn) and column.missing:
                m = combined.get(column.name, by_attribute[column.name])
                sigma = float(np.broadcast_to(m.sigma, np.shape(m.noisy_counts))[-1])
                seen[column.name] = {"noisy": float(m.noisy_counts[-1]), "sigma": sigma,
                                     "kept": bool(compress.keeps_missing(column, m, one_way))}
        return original(schema, fine, one_way, records, *args, **kwargs)

    stage.choose_coarsening = wrapper
    return seen


def one_run(name: str, text: str, seed: int) -> dict:
    """One release of ``text``: per numeric column blank shares, the resolved entry and the
    missing code's noisy count (``traced_missing_codes``), and the table's mean KS and 2-way
    TVD."""
    real = read_cells(io.StringIO(text))
    seen = traced_missing_codes()
    with tempfile.TemporaryDirectory() as folder:
        cells, schema = released(text, Path(folder), 1.0, seed)
    entries = {c["name"]: c for c in schema["columns"]}
    numeric = [n for n in real.columns if real_type(real[n]) in ("integer", "number")
               and n in cells.columns]
    scored = [n for n in real.columns if n in cells.columns
              and not entries.get(n, {}).get("ignore") and entries[n]["kind"] not in ("id", "text")]
    columns = {}
    for column in numeric:
        entry = entries[column]
        columns[column] = {
            "real_blank": float(real[column].str.strip().isin(MISSING).mean()),
            "released_blank": float(cells[column].str.strip().isin(MISSING).mean()),
            "kind": entry.get("kind"), "outside": entry.get("outside", "clip"),
            "bounds": [entry.get("lower"), entry.get("upper")],
            "real_nonzero": float((pd.to_numeric(real[column], errors="coerce") != 0).mean()),
            "missing_code": seen.get(column),
        }
    r = pd.DataFrame({n: _as_values(real[n], n in numeric) for n in scored})
    s = pd.DataFrame({n: _as_values(cells[n], n in numeric) for n in scored})
    values = value_fidelity(r, s, [n for n in numeric if n in scored])
    marginals = evaluate_utility(r, s, numeric_columns=[n for n in numeric if n in scored],
                                 quality_report=False)["marginals"]
    return {"table": name, "seed": seed, "mean_ks": values["summary"]["mean_ks"],
            "tvd_2": marginals["2-way"]["mean"], "columns": columns}


def seeds(text: str) -> list[int]:
    """``0-5`` or ``0,2,3`` as a list of seeds."""
    if "-" in text:
        low, high = text.split("-")
        return list(range(int(low), int(high) + 1))
    return [int(s) for s in text.split(",")]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("tables", nargs="+")
    parser.add_argument("--seeds", default="0-5")
    parser.add_argument("--adult-rows", type=int, default=5000)
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args(argv)
    runs = []
    for name in args.tables:
        text = table_text(name, args.adult_rows)
        for seed in seeds(args.seeds):
            run = one_run(name, text, seed)
            fake = {c: f"{v['released_blank']:.3f}" for c, v in run["columns"].items()
                    if v["released_blank"] > v["real_blank"] + 0.005}
            print(f"{name} seed {seed}: mean KS {run['mean_ks']:.4f}, 2-way TVD "
                  f"{run['tvd_2']:.4f}, blank above real: {fake}", flush=True)
            runs.append(run)
            args.json.write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
