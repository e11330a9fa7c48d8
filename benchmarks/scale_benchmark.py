"""Scale benchmark: wall time and peak RSS per stage of the MST pipeline on Adult-shaped tables of
10^4 to 10^7 rows (15 columns, and wide variants of 50 and 100 columns).

    python benchmarks/scale_benchmark.py --rows 1e4,1e5,1e6 --columns 15,50,100 --out /tmp/scale
    python benchmarks/scale_benchmark.py --rows 1e7 --columns 15 --out /tmp/scale

Each (rows, columns) cell runs in a fresh process (so peak RSS is its own): the job is
configs/adult-mst.yaml pointed at the generated file (δ = 1e-8 so that δ < 1/n at every size,
records default to the DP estimate of n). Stages timed: ``read+encode`` (checked chunks spooled to
disk), ``marginals`` (MST: 1-way, selection, 2-way, estimation), ``sample+write`` (blocks drawn,
decoded and written into the release). Peak RSS per stage is sampled every 10 ms from /proc. A line
of JSON per cell is appended to ``<out>/results.jsonl``, and a table printed at the end with a
least-squares line of total time against rows and the log-log slope between the two largest sizes
(``--summary`` prints the table of all cells recorded in ``<out>``).

Data model: rows of the bundled Adult training table drawn with replacement (seeded), numeric
columns jittered within their public bounds, and for wide variants extra categorical columns
``x<k>`` that copy a parent column's code modulo a small domain with 20 % noise (so they carry
dependence a marginal model can find). Written in blocks with pyarrow, so 10^7 rows never sit in
memory at once.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "data" / "adult"
BLOCK = 500_000


def wide_schema(columns: int) -> dict:
    """Adult's schema plus ``columns - 15`` extra categorical columns (public by construction)."""
    schema = yaml.safe_load((ADULT / "schema.yaml").read_text())
    for k in range(columns - len(schema["columns"])):
        size = 2 + k % 9
        schema["columns"].append(
            {"name": f"x{k}", "kind": "categorical", "categories": [f"v{i}" for i in range(size)]}
        )
    return schema


def generate(path: Path, rows: int, columns: int = 15, seed: int = 0) -> Path:
    """Write a seeded Adult-shaped CSV (or Parquet, by suffix) of ``rows`` rows and ``columns``
    columns to ``path``; also writes the schema beside it as ``<stem>.schema.yaml``."""
    schema = wide_schema(columns)
    base = pd.read_csv(ADULT / "adult_train.csv", dtype=str, keep_default_na=False)
    numeric = {c["name"]: c for c in schema["columns"][:15]
               if c["kind"] != "categorical" and "derived_from" not in c}  # derived: keep exact
    parents = list(base.columns)
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / f"{path.stem}.schema.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
    writer = None
    for start in range(0, rows, BLOCK):
        size = min(BLOCK, rows - start)
        block = base.iloc[rng.integers(0, len(base), size)].reset_index(drop=True)
        for name, column in numeric.items():
            values = pd.to_numeric(block[name]).to_numpy()
            jitter = rng.integers(-1, 2, size) * (values > 0)
            block[name] = np.clip(values + jitter, column["lower"], column["upper"]).astype(str)
        for extra in schema["columns"][15:]:
            parent = block[parents[rng.integers(0, len(parents))]]
            size_k = len(extra["categories"])
            codes = pd.factorize(parent)[0] % size_k
            noise = rng.random(size) < 0.2
            codes[noise] = rng.integers(0, size_k, noise.sum())
            block[extra["name"]] = np.array(extra["categories"])[codes]
        table = pa.Table.from_pandas(block, preserve_index=False)
        if writer is None:
            writer = _writer(path, table.schema)
        writer.write_table(table)
    writer.close()
    return path


def _writer(path: Path, schema: pa.Schema):
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetWriter(path, schema)
    options = pacsv.WriteOptions(quoting_style="none")
    return pacsv.CSVWriter(path, schema, write_options=options)


class PeakRSS:
    """Peak resident memory of this process between ``mark`` calls, sampled from /proc."""

    def __init__(self, interval: float = 0.01) -> None:
        self.page = os.sysconf("SC_PAGE_SIZE")
        self.peak = self.now()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._watch, args=(interval,), daemon=True)
        self._thread.start()

    def now(self) -> int:
        with open("/proc/self/statm") as handle:
            return int(handle.read().split()[1]) * self.page

    def _watch(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.peak = max(self.peak, self.now())

    def mark(self) -> int:
        """Peak since the last mark (bytes), and start a new window."""
        peak, self.peak = max(self.peak, self.now()), self.now()
        return peak


def high_water_mark() -> int:
    """Peak resident memory of this process image in bytes (VmHWM: unlike ru_maxrss it does not
    carry over the parent's size from before exec)."""
    with open("/proc/self/status") as handle:
        line = next(row for row in handle if row.startswith("VmHWM:"))
    return int(line.split()[1]) * 1024


STEPS = {"read": "read+encode", "release": "sample+write"}  # stages: "marginals"


def run_cell(data: Path, out: Path) -> dict:
    """Run the MST job on ``data`` through the job object, timing each step; returns the
    measurements."""
    from synthpriv.config import load_job
    from synthpriv.job import Hooks, SynthesisJob

    rss = PeakRSS()
    config = yaml.safe_load((ROOT / "configs" / "adult-mst.yaml").read_text())
    config["data"] = {"path": str(data), "schema": str(data.parent / f"{data.stem}.schema.yaml")}
    config["budget"]["delta"] = 1e-8
    config["evaluation"] = {"enabled": False}
    job_path = out / f"{data.stem}.job.yaml"
    job_path.write_text(yaml.safe_dump(config))
    started = time.perf_counter()
    times: dict[str, float] = {}
    peaks: dict[str, int] = {}

    def finished(step: str, seconds: float) -> None:
        name = STEPS.get(step, "marginals" if step.startswith("stage:") else step)
        times[name] = times.get(name, 0.0) + seconds
        peaks[name] = max(peaks.get(name, 0), rss.mark())

    job = load_job(job_path)
    runner = SynthesisJob(job, hooks=Hooks(started=lambda step: rss.mark(), finished=finished))
    result = runner.run(out / f"{data.stem}.release", force=True, evaluate=False)
    return {
        "file": data.name, "rows_released": result.records,
        "seconds": {k: round(v, 2) for k, v in times.items()},
        "total_seconds": round(time.perf_counter() - started, 2),
        "peak_rss_mib": {k: round(v / 2**20) for k, v in peaks.items()},
        "max_rss_mib": round(high_water_mark() / 2**20),
        "epsilon": result.ledger.epsilon(job.config.budget.delta),
    }


def fit(rows: list[float], seconds: list[float]) -> tuple[float, float, float]:
    """Time against rows: least-squares ``seconds = fixed + per_million * rows / 10^6`` and the
    log-log slope between the two largest sizes (1.0 = linear once fixed costs are amortised)."""
    per_million, fixed = np.polyfit(np.asarray(rows) / 1e6, seconds, 1)
    order = np.argsort(rows)[-2:]
    loglog = np.diff(np.log(np.asarray(seconds)[order])) / np.diff(np.log(np.asarray(rows)[order]))
    return float(fixed), float(per_million), float(loglog[0])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rows", default="1e4,1e5,1e6")
    parser.add_argument("--columns", default="15")
    parser.add_argument("--out", type=Path, default=Path("/tmp/synthpriv-scale"))
    parser.add_argument("--cell", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--summary", action="store_true", help="table of <out>/results.jsonl")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.summary:
        lines = (args.out / "results.jsonl").read_text().splitlines()
        summarise(sorted((json.loads(line) for line in lines), key=lambda r: (r["columns"], r["rows"])))
        return
    if args.cell is not None:
        print(json.dumps(run_cell(args.cell, args.out)))
        return
    results = []
    for columns in [int(c) for c in args.columns.split(",")]:
        for rows in [int(float(r)) for r in args.rows.split(",")]:
            data = args.out / f"adult_{rows}x{columns}.csv"
            if not data.exists():
                generate(data, rows, columns)
            cell = subprocess.run(
                [sys.executable, __file__, "--cell", str(data), "--out", str(args.out)],
                check=True, capture_output=True, text=True,
            )
            result = {"rows": rows, "columns": columns, **json.loads(cell.stdout.splitlines()[-1])}
            print(json.dumps(result), flush=True)
            with (args.out / "results.jsonl").open("a") as handle:
                handle.write(json.dumps(result) + "\n")
            results.append(result)
    summarise(results)


def summarise(results: list[dict]) -> None:
    """Print the results as a Markdown table, with the fitted time-against-rows line."""
    print("| rows | cols | read+encode s | marginals s | sample+write s | total s | peak RSS MiB |")
    print("|---:|---:|---:|---:|---:|---:|---:|")
    for r in results:
        s = r["seconds"]
        print(f"| {r['rows']:,} | {r['columns']} | {s['read+encode']} | {s['marginals']} | "
              f"{s['sample+write']} | {r['total_seconds']} | {r['max_rss_mib']} |")
    for columns in sorted({r["columns"] for r in results}):
        cells = [r for r in results if r["columns"] == columns]
        if len(cells) > 1:
            fixed, per_million, loglog = fit([r["rows"] for r in cells],
                                             [r["total_seconds"] for r in cells])
            print(f"{columns} columns: total s = {fixed:.1f} + {per_million:.1f} per 10^6 rows; "
                  f"log-log slope between the two largest sizes {loglog:.2f}")


if __name__ == "__main__":
    main()
