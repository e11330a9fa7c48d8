"""Heaped values of numeric columns in a default release, per seed (issue 24 item 4, branch ojheaps):
for each numeric column, the real vs released share of every value holding ≥ 5 % of the real
rows, the released values holding ≥ 5 % that hold < 1 % real (fake spikes), the share released
outside the real range, and KS; the run's resolved kind, bounds and precision beside them.
``--compare`` tabulates two such runs' JSON over their common seeds (paired before → after).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/oj_heaps.py islp/OJ --seeds 0 1 2 \\
        [--json out.json]
    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/oj_heaps.py --compare before.json after.json

Runs ``value_sweep.released`` (safe draft, default recipe, ε = 1) and reads the figures from
``value_sweep.check_table``'s yardstick (``values.value_fidelity``). NOT differentially
private (reads the real table): a development tool on development tables only.
"""

from __future__ import annotations

import argparse
import io
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_tables import all_tables  # noqa: E402
from value_sweep import SPIKE, SPIKE_REAL, _as_values, read_cells, real_type, released  # noqa: E402

from synthpriv.evaluation.values import value_fidelity  # noqa: E402


def column_figures(real: pd.DataFrame, release: pd.DataFrame, schema: dict) -> dict[str, dict]:
    """Per numeric column: heaps (value, real, released), fake spikes, outside, KS, kind."""
    numeric = [n for n in real.columns if n in release.columns
               and real_type(real[n]) in ("integer", "number")]
    figures = value_fidelity(pd.DataFrame({n: _as_values(real[n], True) for n in numeric}),
                             pd.DataFrame({n: _as_values(release[n], True) for n in numeric}),
                             numeric, real_cells=real[numeric], synthetic_cells=release[numeric],
                             spike=(SPIKE, SPIKE_REAL))["columns"]
    declared = {c["name"]: c for c in schema["columns"]}
    out = {}
    for name in numeric:
        column = figures[name]
        spec = declared.get(name, {})
        out[name] = {
            "kind": spec.get("kind"), "bounds": [spec.get("lower"), spec.get("upper")],
            "precision": spec.get("precision"),
            "heaps": [[m["value"], round(m["real"], 4), round(m["synthetic"], 4)]
                      for m in column["point_masses"] if m["real"] >= SPIKE],
            "fake": [[s["value"], round(s["real"], 4), round(s["synthetic"], 4)]
                     for s in column["fake_spikes"]],
            "outside": round(column["format"]["outside"], 4) if column["format"] else None,
            "ks": round(column["distance"], 4) if column["distance"] is not None else None,
        }
    return out


def _lost(real: float, released: float) -> bool:
    """``value_sweep``'s lost spike: released at less than half the real share or above twice."""
    return not real / 2 <= released <= 2 * real


def compare(before: list[dict], after: list[dict]) -> str:
    """A Markdown table, per continuous/integer column, over the paired seeds of two runs: heaps
    lost (of heaps × seeds), mean absolute share error on the heaps, fake spikes, KS and the
    share outside the real range (mean ± sd over seeds), before → after."""
    def figures(runs: list[dict], name: str) -> dict:
        cols = [r["columns"][name] for r in runs if name in r["columns"]]
        heaps = [(h[1], h[2]) for c in cols for h in c["heaps"]]
        ks = np.array([c["ks"] for c in cols if c["ks"] is not None], dtype=float)
        out = np.array([c["outside"] or 0.0 for c in cols], dtype=float)
        return {"lost": sum(_lost(r, s) for r, s in heaps), "heaps": len(heaps),
                "error": float(np.mean([abs(s - r) for r, s in heaps])) if heaps else 0.0,
                "fake": sum(len(c["fake"]) for c in cols),
                "ks": (ks.mean(), ks.std(ddof=1) if len(ks) > 1 else 0.0),
                "outside": (out.mean(), out.std(ddof=1) if len(out) > 1 else 0.0)}

    seeds = sorted({r["seed"] for r in before} & {r["seed"] for r in after})
    before = [r for r in before if r["seed"] in seeds]
    after = [r for r in after if r["seed"] in seeds]
    lines = [f"seeds {seeds}", "| column | heaps lost | heap error | fake spikes | KS | outside |",
             "|---|---|---|---|---|---|"]
    for name in before[0]["columns"]:
        b, a = figures(before, name), figures(after, name)
        lines.append(
            f"| {name} | {b['lost']}/{b['heaps']} → {a['lost']}/{a['heaps']} | "
            f"{b['error']:.3f} → {a['error']:.3f} | {b['fake']} → {a['fake']} | "
            f"{b['ks'][0]:.3f}±{b['ks'][1]:.3f} → {a['ks'][0]:.3f}±{a['ks'][1]:.3f} | "
            f"{b['outside'][0]:.3f} → {a['outside'][0]:.3f} |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("table", nargs="?")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--json", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        print(compare(before, after))
        return 0
    text = next(t for name, t in all_tables() if name == args.table)
    real = read_cells(io.StringIO(text))
    results = []
    for seed in args.seeds:
        start = time.process_time()
        with tempfile.TemporaryDirectory(prefix="ojheaps-") as folder:
            cells, schema = released(text, Path(folder), seed=seed)
        columns = column_figures(real, cells, schema)
        results.append({"table": args.table, "seed": seed, "cpu": round(time.process_time() - start, 1),
                        "columns": columns})
        for name, c in columns.items():
            heaps = " ".join(f"{v:g}:{r:.3f}->{s:.3f}" for v, r, s in c["heaps"])
            fake = " ".join(f"{v:g}:{r:.3f}->{s:.3f}" for v, r, s in c["fake"])
            print(f"seed {seed} {name} [{c['kind']} {c['bounds']} p={c['precision']}] "
                  f"KS {c['ks']} outside {c['outside']} heaps {heaps}"
                  + (f" FAKE {fake}" if fake else ""), flush=True)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
