"""The competing library on the suite's tables (issue 24): dpmm's MST, AIM and PrivBayes.

dpmm (Mahiou & Ganev, https://github.com/sassoftware/dpmm, Apache-2.0) runs the same
select-measure-generate family with its own DP discretisation (PrivTree). It pins numpy 1.26 and
pandas 2.1, so it lives in a venv of its own and this script imports nothing of synthpriv: it
reads what ``benchmarks/suite.py --prepare-only`` wrote per table (``<work>/<table>/domain.json``:
the train split's path and the data-read draft's bounds and categories, the same public domain
our ``draft`` runs get) and writes one synthetic CSV per run plus ``runs.jsonl`` (timings,
status). ``benchmarks/suite.py --score-dpmm <out>`` then scores the CSVs with the code path that
scores our releases.

Budget: total ε = ``--epsilon`` (default 1), δ = the domain's (1e-5): PrivTree binning gets
``PROC_EPSILON`` = 0.1 (pure ε, split over the numeric columns by dpmm), the model the rest, with
δ; basic composition gives (ε, δ). Not accounted by dpmm's budget (its design, reported not
fixed): which columns have missing cells and which are constant are read from the data, and the
value a missing cell is filled with before binning is drawn from the real rows.

Cells are read as the suite's draft reads them: a numeric column as numbers, clipped to the
draft's bounds; a categorical one as stripped text, a value outside the draft's categories read
as its ``other`` label (or missing), as a synthpriv run reads it; a date/datetime column as days/
seconds since the epoch (written back as text in the draft's format).

    /work/venv-dpmm/bin/python benchmarks/dpmm_baseline.py --tables fair,anes96 \
        --models mst,aim,privbayes --repeats 3 --max-seconds 300
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from isolated import run_isolated  # noqa: E402

PIPELINES = {"mst": "MSTPipeline", "aim": "AIMPipeline", "privbayes": "PrivBayesPipeline"}
PROC_EPSILON = 0.1
TIME_UNITS = {"date": "D", "datetime": "s"}  # synthpriv's date/datetime columns as numbers


def load(domain_path: Path) -> tuple[pd.DataFrame, dict, dict]:
    """The train split as dpmm takes it (numeric columns as floats within the bounds,
    categorical ones as text, missing as NaN), dpmm's domain, and the suite's domain.json."""
    spec = json.loads(domain_path.read_text())
    raw = pd.read_csv(spec["train"], dtype=str, keep_default_na=False, encoding="utf-8-sig")
    raw = raw.rename(columns=lambda c: c.strip())
    frame, domain = {}, {}
    for name, column in spec["columns"].items():
        cells = raw[name].str.strip()
        cells = cells.where(cells != "", None)
        if column["kind"] == "categorical":
            categories = column["categories"]
            if categories is not None:
                outside = cells.notna() & ~cells.isin(categories)
                cells = cells.where(~outside, column.get("other"))
                domain[name] = {"categories": categories}
            frame[name] = cells.astype(object)
        elif column["kind"] in TIME_UNITS:  # days/seconds since the epoch, as synthpriv reads it
            values = times_as_numbers(cells, column)
            frame[name] = values.clip(column["lower"], column["upper"])
            domain[name] = {"lower": column["lower"], "upper": column["upper"]}
        else:
            values = pd.to_numeric(cells, errors="coerce").astype(float)
            frame[name] = values.clip(column["lower"], column["upper"])
            domain[name] = {"lower": column["lower"], "upper": column["upper"]}
    return pd.DataFrame(frame), domain, spec


def times_as_numbers(cells: pd.Series, column: dict) -> pd.Series:
    """Date/datetime text as days/seconds since 1970-01-01 (naive times read as UTC), with the
    draft's ``format`` (ISO 8601 without one); NaN where a cell is missing or does not parse."""
    stamps = pd.to_datetime(cells, format=column.get("format") or "ISO8601", errors="coerce",
                            utc=True)
    return (stamps - pd.Timestamp(0, tz="UTC")) / pd.Timedelta(1, TIME_UNITS[column["kind"]])


def numbers_as_times(values: pd.Series, column: dict) -> pd.Series:
    """The inverse of ``times_as_numbers`` for a release: whole days/seconds written as text in
    the draft's format (missing stays missing)."""
    stamps = pd.to_datetime(values.round(), unit=TIME_UNITS[column["kind"]], errors="coerce")
    text = stamps.dt.strftime(column.get("format") or ("%Y-%m-%d" if column["kind"] == "date"
                                                       else "%Y-%m-%dT%H:%M:%S"))
    return text.where(stamps.notna(), None)


def fit_and_sample(domain_path: Path, model: str, epsilon: float, seed: int, out: Path,
                   pgm_iters: int | None = None) -> dict:
    """One dpmm run: fit on the train split, sample as many rows, write the CSV.
    ``pgm_iters``: MST's and AIM's final Private-PGM iterations (dpmm's defaults: 10,000 and
    1,000); None keeps dpmm's default."""
    import dpmm.pipelines as pipelines

    frame, domain, spec = load(domain_path)
    options = {"n_iters": pgm_iters} if pgm_iters and model in ("mst", "aim") else {}
    pipeline = getattr(pipelines, PIPELINES[model])(
        epsilon=epsilon - PROC_EPSILON, delta=spec["delta"], proc_epsilon=PROC_EPSILON, n_jobs=1,
        gen_kwargs=options,
    )
    started = time.perf_counter()
    pipeline.fit(frame, domain, random_state=seed)
    fitted = time.perf_counter()
    synthetic = pipeline.generate(n_records=len(frame), random_state=seed + 1)
    sampled = time.perf_counter()
    for name, column in spec["columns"].items():
        if column["kind"] in TIME_UNITS:
            synthetic[name] = numbers_as_times(synthetic[name].astype(float), column)
    synthetic[list(frame.columns)].to_csv(out, index=False)
    return {"seconds": sampled - started, "fit_seconds": fitted - started,
            "sample_seconds": sampled - fitted}


def cpu_since(before: resource.struct_rusage) -> float:
    """User + system CPU seconds of the reaped child processes since ``before`` (a run on a
    shared machine: its wall time depends on the load, its CPU time much less)."""
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    """Command line: every (table, model, repeat), or (internal) one run."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default="fair,randhie,anes96,mn_police,hhs_breaches,loans")
    parser.add_argument("--models", default="mst,aim,privbayes", help=", ".join(PIPELINES))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=300.0)
    parser.add_argument("--work", type=Path, default=ROOT / "benchmarks/.cache/suite",
                        help="where suite.py --prepare-only wrote <table>/domain.json")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/.cache/dpmm")
    parser.add_argument("--pgm-iters", type=int, default=0,
                        help="MST's and AIM's Private-PGM iterations (0: dpmm's defaults, "
                        "10,000 for MST, 1,000 for AIM)")
    parser.add_argument("--run-one", nargs=7,
                        metavar=("DOMAIN", "MODEL", "EPS", "SEED", "CSV", "ITERS", "RESULT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.run_one:
        domain, model, epsilon, seed, csv, iters, result = args.run_one
        figures = fit_and_sample(Path(domain), model, float(epsilon), int(seed), Path(csv),
                                 int(iters) or None)
        Path(result).write_text(json.dumps(figures))
        return
    from importlib.metadata import version

    args.out.mkdir(parents=True, exist_ok=True)
    for name in [t.strip() for t in args.tables.split(",") if t.strip()]:
        domain = args.work / name / "domain.json"
        if not domain.exists():
            parser.error(f"{domain} is missing: run benchmarks/suite.py --prepare-only --tables "
                         f"{name} first (in the project's venv)")
        (args.out / name).mkdir(exist_ok=True)
        for model in [m.strip() for m in args.models.split(",") if m.strip()]:
            for repeat in range(args.repeats):
                csv = args.out / name / f"{model}-eps{args.epsilon:g}-r{repeat}.csv"
                seed = int(np.random.SeedSequence().entropy % (2**31))
                command = [sys.executable, str(Path(__file__).resolve()), "--run-one",
                           str(domain), model, str(args.epsilon), str(seed), str(csv),
                           str(args.pgm_iters)]
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                outcome = run_isolated(command, args.max_seconds)
                outcome["cpu_seconds"] = cpu_since(before)  # the run's, killed ones included
                record = {"batch": datetime.now(UTC).isoformat(timespec="seconds"),
                          "table": name, "model": model, "epsilon": args.epsilon,
                          "repeat": repeat, "seed": seed, "csv": str(csv.resolve()),
                          "dpmm_version": version("dpmm"), "pgm_iters": args.pgm_iters or None,
                          **outcome}
                with (args.out / "runs.jsonl").open("a", encoding="utf-8") as handle:
                    handle.write(json.dumps(record) + "\n")
                shown = (f"{outcome['seconds']:.0f} s" if outcome["status"] == "ok"
                         else outcome.get("error", "").splitlines()[-1:] or "")
                print(f"{name} {model} #{repeat}: {outcome['status']} {shown}", flush=True)
                if outcome["status"] == "timeout":
                    break


if __name__ == "__main__":
    main()
