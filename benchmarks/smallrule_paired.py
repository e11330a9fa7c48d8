"""The small-table rule on and off, paired by seed, column by column (issue 24; branch smallrule).

Each table's default release as ``tiny_share.release`` makes it (safe draft, AIM, ε = 1,
δ = 1e-6) with the rule on (``default``: the branch follows the DP n̂) and off (``0.41634``: the
all-auto draft's default share given, so the rule stays out), at the same seeds. Per release:
``tiny_share.score``'s blank / KS / 2-way TVD, each number column's KS (``cols``), the branch
taken and n̂ (the manifest's ``small_table_taken``, ``dp_records``), CPU seconds; ``--mass``
then adds the worst point-mass error (``synthpriv.evaluation.values.value_fidelity``, the
suite's yardstick) of the releases kept under ``--keep``. NOT private (reads the real table):
development tables only.

    PYTHONPATH=. nice -n 10 /work/main/.venv/bin/python benchmarks/smallrule_paired.py \\
        islp/College default,0.41634 0,1,2,3,4,5 benchmarks/results/smallrule-paired.json
    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/smallrule_paired.py --mass \\
        benchmarks/results/smallrule-paired.json
"""

from __future__ import annotations

import io
import itertools
import json
import re
import shutil
import sys
import tempfile
import time
import warnings
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from dev_tables import islp_tables, statsmodels_tables  # noqa: E402
from tiny_share import _numbers, ks, release, score  # noqa: E402
from value_sweep import read_cells, real_type, text_delimiter  # noqa: E402

from synthpriv.evaluation.values import value_fidelity  # noqa: E402

KEEP = Path("/tmp/smallrule-rel")  # the releases, for --mass


def real_table(name: str) -> tuple[str, pd.DataFrame]:
    """The development table ``name``'s CSV text and its cells."""
    text = dict(itertools.chain(islp_tables(), statsmodels_tables()))[name]
    real = read_cells(io.StringIO(text), text_delimiter(text))
    return text, real.drop(columns=[c for c in real.columns if c == "" or c.startswith("Unnamed")])


def kept(table: str, share: str, seed: int) -> Path:
    return KEEP / f"{table.replace('/', '_')}-{share}-{seed}.csv"


def run(table: str, shares: list[str], seeds: list[int], out: Path) -> None:
    """Release and score each (share, seed) not yet in ``out``."""
    text, real = real_table(table)
    records = json.loads(out.read_text()) if out.exists() else []
    done = {(r["table"], r["share"], r["seed"]) for r in records}
    KEEP.mkdir(parents=True, exist_ok=True)
    for share, seed in itertools.product(shares, seeds):
        if (table, share, seed) in done:
            continue
        cpu, wall = time.process_time(), time.time()
        with tempfile.TemporaryDirectory() as folder:
            fake = release(text, Path(folder), None if share == "default" else float(share), seed)
            manifest = "".join(p.read_text() for p in Path(folder, "out").rglob("*.json"))
            shutil.copy(Path(folder, "out", "synthetic.csv"), kept(table, share, seed))
        cols = {c: ks(_numbers(real[c]), _numbers(fake[c] if c in fake else real[c].iloc[:0]))
                for c in real.columns if real_type(real[c]) in ("integer", "number")}
        record = {"table": table, "share": share, "seed": seed,
                  "dp_records": re.findall(r'"dp_records":\s*([0-9.]+)', manifest)[:1],
                  "taken": re.findall(r'"small_table_taken":\s*([0-9.]+)', manifest)[:1],
                  "cpu": round(time.process_time() - cpu, 1), "wall": round(time.time() - wall, 1),
                  "cols": cols} | score(real, fake)
        records.append(record)
        out.write_text(json.dumps(records, indent=1))
        print(json.dumps({k: v for k, v in record.items() if k not in ("cols", "blank_columns")}),
              flush=True)


def add_mass(out: Path) -> None:
    """The worst point-mass error of each kept release (``value_fidelity``'s summary)."""
    records = json.loads(out.read_text())
    parsed: dict[str, tuple[pd.DataFrame, list[str]]] = {}
    for record in records:
        if "worst_mass" in record:
            continue
        table = record["table"]
        if table not in parsed:
            real = real_table(table)[1].copy()
            numeric = [c for c in real.columns if real_type(real[c]) in ("integer", "number")]
            for c in numeric:
                real[c] = pd.to_numeric(real[c].str.strip(), errors="coerce")
            parsed[table] = (real, numeric)
        real, numeric = parsed[table]
        fake = read_cells(kept(table, record["share"], record["seed"]), ",")
        fake = pd.DataFrame({c: fake[c] if c in fake else pd.Series([""] * len(fake))
                             for c in real.columns})
        for c in numeric:
            fake[c] = pd.to_numeric(fake[c].astype(str).str.strip(), errors="coerce")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            worst = value_fidelity(real, fake, numeric)["summary"]["worst_point_mass"]
        record["worst_mass"] = worst.get("error")
        record["worst_mass_at"] = str({k: v for k, v in worst.items() if k != "error"})
    out.write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    if sys.argv[1] == "--mass":
        add_mass(Path(sys.argv[2]))
    else:
        run(sys.argv[1], sys.argv[2].split(","), [int(s) for s in sys.argv[3].split(",")],
            Path(sys.argv[4]))
