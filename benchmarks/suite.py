"""Suite of public tables (issue 13): recipes run on tables nobody tuned them for.

Tables: Adult (data/adult, already split) and tables shipped inside the ISLP package's wheel
(Wage, Default, College, Bikeshare, Caravan), downloaded with ``pip download --no-deps`` into
benchmarks/.cache/ and read from the wheel with zipfile, never installed. Each ISLP table is split
once (seeded, 80/20) into train and test CSVs; the schema is drafted from the train split with
``synthpriv schema infer`` (``--schema-mode draft``: exactly what a new user gets, no edits).

Each run is one job (``synthpriv.runner.run_job``, evaluation off) in a subprocess of its own, so
``--max-seconds`` can stop it; figures are computed here with
``synthpriv.evaluation.utility.evaluate_utility``: mean TVD of 1-, 2- and 3-way marginals against
the train split, TSTR AUC of gradient boosting trained on the release and tested on the test
split, fit + sample seconds and the ledger's ε. Per table once, the sampling floor: the test split
scored as if it were the release (TVD against the train split; TSTR = trained on the test split,
tested on the train split).

    .venv/bin/python benchmarks/suite.py --tables adult,wage --recipes aim,mst --epsilons 1,3 \
        --repeats 2 --max-seconds 300
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import zipfile
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from synthpriv.config import load_job
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.schema import Schema, load_schema, parse_schema
from synthpriv.schema_infer import infer_schema, schema_yaml
from synthpriv.table import read_table

ROOT = Path(__file__).resolve().parent.parent
ISLP_VERSION = "0.4.0"
SPLIT_SEED = 13
TEST_FRACTION = 0.2
DELTA = 1e-5
SCHEMA_MODES = ("draft",)
CODE_ENV = "SYNTHPRIV_SUITE_CODE"  # set when the suite runs on a snapshot of git HEAD
FIGURES = ("tvd_1", "tvd_2", "tvd_3", "tstr_auc", "seconds", "epsilon")


@dataclass(frozen=True)
class Table:
    """One public table of the suite: where it comes from, its TSTR target and why."""

    name: str
    source: str  # "adult" (data/adult) or the CSV's stem in the ISLP wheel's ISLP/data/
    target: str
    note: str


TABLES = {
    table.name: table
    for table in (
        Table("adult", "adult", "income", "UCI Adult, the project's own split; income >50K"),
        Table("wage", "Wage", "health_ins",
              "Mid-Atlantic wage survey; health_ins (has health insurance, binary as shipped)"),
        Table("default", "Default", "default", "simulated credit-card default; default (3 % Yes)"),
        Table("college", "College", "Private", "US colleges 1995; Private (public or private)"),
        Table("bikeshare", "Bikeshare", "workingday",
              "hourly bike rentals 2011; workingday (a function of weekday and holiday)"),
        Table("caravan", "Caravan", "Purchase",
              "insurance customers, 86 columns; Purchase (caravan policy, 6 % Yes)"),
    )
}


@dataclass(frozen=True)
class Prepared:
    """A table ready to run: train and test CSVs, the schema and its reviewer notes."""

    table: Table
    train: Path
    test: Path
    schema_path: Path
    notes: list[str]


def islp_wheel(cache: Path, version: str = ISLP_VERSION) -> Path:
    """The ISLP wheel in ``cache``, downloaded (no dependencies, not installed) when absent."""
    folder = cache / f"islp-{version}"
    wheels = sorted(folder.glob("ISLP-*.whl")) if folder.exists() else []
    if not wheels:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             f"ISLP=={version}", "-d", str(folder)],
            check=True, stdout=subprocess.DEVNULL,
        )
        wheels = sorted(folder.glob("ISLP-*.whl"))
    return wheels[-1]


def islp_frame(wheel: Path, stem: str) -> pd.DataFrame:
    """The CSV ``ISLP/data/<stem>.csv`` from the wheel, cells as text, an unnamed index dropped."""
    with zipfile.ZipFile(wheel) as archive, archive.open(f"ISLP/data/{stem}.csv") as handle:
        frame = pd.read_csv(handle, dtype=str, keep_default_na=False)
    unnamed = [c for c in frame.columns if not c.strip() or c.startswith("Unnamed")]
    return frame.drop(columns=unnamed)


def split(frame: pd.DataFrame, seed: int = SPLIT_SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A fixed random split into train (1 − TEST_FRACTION) and test rows."""
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = len(frame) - round(TEST_FRACTION * len(frame))
    return frame.iloc[np.sort(order[:cut])], frame.iloc[np.sort(order[cut:])]


def draft_schema(train: Path, path: Path) -> list[str]:
    """Write the schema ``synthpriv schema infer`` drafts from ``train``; return its notes."""
    schema, notes = infer_schema(train)
    path.write_text(schema_yaml(schema), encoding="utf-8")
    return notes


def prepare(table: Table, work: Path, cache: Path, schema_mode: str) -> Prepared:
    """Train/test CSVs and a schema for ``table`` in ``work/<name>/``."""
    if schema_mode not in SCHEMA_MODES:
        raise ValueError(f"unknown schema mode {schema_mode!r}; known: {SCHEMA_MODES}")
    folder = work / table.name
    folder.mkdir(parents=True, exist_ok=True)
    if table.source == "adult":
        train, test = ROOT / "data/adult/adult_train.csv", ROOT / "data/adult/adult_test.csv"
    else:
        train, test = folder / "train.csv", folder / "test.csv"
        for frame, path in zip(split(islp_frame(islp_wheel(cache), table.source)), (train, test),
                               strict=True):
            frame.to_csv(path, index=False)
    schema_path = folder / f"schema-{schema_mode}.yaml"
    notes = draft_schema(train, schema_path)
    return Prepared(table, train, test, schema_path, notes)


def job_config(prepared: Prepared, recipe: str, epsilon: float, rows: int) -> dict:
    """The job for one run: δ = 1e-5 (or 1/(10 n) if smaller), evaluation off."""
    return {
        "name": f"suite-{prepared.table.name}-{recipe}",
        "data": {"path": str(prepared.train), "schema": str(prepared.schema_path),
                 "holdout": str(prepared.test)},
        "budget": {"epsilon": epsilon, "delta": min(DELTA, 0.1 / rows)},
        "pipeline": {"recipe": recipe},
        "evaluation": {"enabled": False, "target": prepared.table.target},
    }


def figures(real: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame, schema: Schema,
            target: str) -> dict:
    """TVD (1/2/3-way) of ``synthetic`` against ``real``; GBM AUCs: trained on ``synthetic``
    and on ``real``, both tested on ``test``. A numeric target (a 0/1 column the draft calls
    integer) is scored as a class label, like a categorical one."""
    numeric = [name for name in schema.numeric_names if name != target]
    utility = evaluate_utility(real, synthetic, numeric_columns=numeric,
                               target=target, holdout=test, quality_report=False)
    marginals = utility["marginals"]
    model = utility["ml_efficacy"]["models"]["gradient_boosting"]
    return {
        "tvd_1": marginals["1-way"]["mean"],
        "tvd_2": marginals["2-way"]["mean"],
        "tvd_3": marginals["3-way"]["mean"],
        "tstr_auc": model["tstr"]["auc"],
        "trtr_auc": model["trtr"]["auc"],
        "positive_class": utility["ml_efficacy"]["positive_class"],
    }


def holdout_schema(schema_path: Path) -> Schema:
    """The drafted schema with unknown categories read as missing: the test split may hold a
    category the train split (hence the draft) lacks; only evaluation reads it so."""
    raw = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    raw["unknown_categories"] = "missing"
    for column in raw["columns"]:
        if column["kind"] == "categorical" or column.get("derived_from"):
            column["missing"] = True
    return parse_schema(raw, f"{schema_path} (for the test split)")


def read_test(prepared: Prepared, schema: Schema) -> tuple[pd.DataFrame, int]:
    """The test split, and how many of its cells hold a category the drafted schema lacks."""
    strict_unknown = 0
    loose = holdout_schema(prepared.schema_path)
    test = read_table(prepared.test, loose)
    raw = pd.read_csv(prepared.test, dtype=str, keep_default_na=False)
    for column in schema.columns:
        if column.kind == "categorical":
            values = raw[column.name].str.strip()
            strict_unknown += int((~values.isin(column.categories) & (values != "")).sum())
    return test, strict_unknown


def run_one(config_path: Path, result_path: Path) -> None:
    """Child process: run the job at ``config_path`` and write its figures to ``result_path``."""
    from synthpriv.runner import run_job  # imported here: the parent never runs a job itself

    job = load_job(config_path)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = run_job(job, out=Path(folder) / "release", force=True)
        seconds = time.perf_counter() - started
        synthetic = result.synthetic
        real = result.real
    test = read_table(job.holdout_path, holdout_schema(job.resolve(job.config.data.table_schema)))
    scores = figures(real, synthetic, test, job.schema, job.config.evaluation.target)
    scores.update(seconds=seconds, epsilon=result.ledger.epsilon(job.config.budget.delta),
                  records=int(result.records))
    result_path.write_text(json.dumps(scores), encoding="utf-8")


def run_isolated(config_path: Path, max_seconds: float) -> dict:
    """Run one job in a subprocess (own session) and return its figures with ``status`` ok,
    timeout (killed after ``max_seconds``) or error (with the last lines of stderr)."""
    with tempfile.TemporaryDirectory() as folder:
        result_path = Path(folder) / "result.json"
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, str(Path(__file__).resolve()), "--run-one", str(config_path),
             str(result_path)],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True,
            cwd=os.environ.get(CODE_ENV, ROOT),  # recipes are looked up in ./pipelines first
        )
        try:
            _, stderr = child.communicate(timeout=max_seconds)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"status": "timeout", "wall": time.perf_counter() - started}
        wall = time.perf_counter() - started
        if child.returncode != 0 or not result_path.exists():
            tail = "\n".join(stderr.strip().splitlines()[-5:])
            return {"status": "error", "wall": wall, "returncode": child.returncode,
                    "error": tail}
        return {"status": "ok", "wall": wall, **json.loads(result_path.read_text())}


def floor(prepared: Prepared) -> dict:
    """The sampling floor: the real test split scored as if it were the release (TVD against
    the train split; TSTR = GBM trained on the test split, tested on the train split). TRTR
    (trained on train, tested on test) is recorded beside it as the real-data reference."""
    schema = load_schema(prepared.schema_path)
    train = read_table(prepared.train, schema)
    test, unknown = read_test(prepared, schema)
    as_release = figures(train, test, train, schema, prepared.table.target)
    reference = figures(train, train, test, schema, prepared.table.target)
    return {
        "tvd_1": as_release["tvd_1"], "tvd_2": as_release["tvd_2"], "tvd_3": as_release["tvd_3"],
        "tstr_auc": as_release["tstr_auc"], "trtr_auc": reference["trtr_auc"],
        "positive_class": as_release["positive_class"], "rows_train": len(train),
        "rows_test": len(test), "columns": len(schema.columns),
        "modelled_columns": sum(1 for c in schema.columns if c.derived_from is None),
        "test_unknown_category_cells": unknown, "schema_notes": prepared.notes,
    }


def summarise(runs: list[dict]) -> dict:
    """Mean and standard deviation of each figure over the runs that finished."""
    done = [run for run in runs if run["status"] == "ok"]
    summary: dict = {"ok": len(done), "timeout": sum(r["status"] == "timeout" for r in runs),
                     "error": sum(r["status"] == "error" for r in runs),
                     "skipped": sum(r["status"] == "skipped" for r in runs)}
    for figure in FIGURES:
        values = [run[figure] for run in done if run.get(figure) is not None]
        if values:
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            summary[figure] = {"mean": statistics.fmean(values), "std": spread}
    return summary


def _git(*args: str) -> str:
    """The output of a git command run in the repository."""
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout.strip()


def git_state() -> dict:
    """Which code ran: a snapshot of a commit (``--code head``), or the work tree at a commit
    and whether its synthpriv/ had uncommitted changes then."""
    snapshot = os.environ.get(CODE_ENV)
    if snapshot:
        return {"code": "head", "commit": Path(snapshot).name.removeprefix("code-")}
    return {"code": "worktree", "commit": _git("rev-parse", "--short", "HEAD"),
            "synthpriv_dirty": bool(_git("status", "--porcelain", "--", "synthpriv"))}


def head_snapshot(cache: Path) -> Path:
    """synthpriv/ and pipelines/ as committed at git HEAD, extracted (once) under ``cache``:
    other people's uncommitted edits in the work tree do not leak into the figures."""
    commit = _git("rev-parse", "--short", "HEAD")
    folder = cache / f"code-{commit}"
    if not (folder / "synthpriv" / "__init__.py").exists():
        folder.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "archive", commit, "synthpriv", "pipelines"], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def load_records(path: Path) -> list[dict]:
    """The records of a runs.jsonl file (none if it does not exist)."""
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _cell(summary: dict, figure: str, digits: int = 4) -> str:
    """``mean ± std`` of a figure (the mean alone for one run, a dash for none)."""
    if figure not in summary:
        return "–"
    mean, std = summary[figure]["mean"], summary[figure]["std"]
    return f"{mean:.{digits}f} ± {std:.{digits}f}" if summary["ok"] > 1 else f"{mean:.{digits}f}"


def _status(summary: dict) -> str:
    """How the runs of a cell ended, e.g. ``1 ok, 1 timeout``."""
    words = [f"{summary['ok']} ok"]
    words += [f"{summary[k]} {k}" for k in ("timeout", "error", "skipped") if summary[k]]
    return ", ".join(words)


def markdown(records: list[dict], order: list[str]) -> str:
    """Two markdown tables from the records: the tables and their floors, then every
    (table, recipe, ε) cell with mean ± std over its runs."""
    floors = {r["table"]: r for r in records if r["kind"] == "floor"}
    runs: dict[tuple[str, str, float], list[dict]] = {}
    for record in records:
        if record["kind"] == "run":
            key = (record["table"], record["recipe"], record["epsilon_target"])
            runs.setdefault(key, []).append(record)
    lines = [
        "| table | train / test rows | columns (modelled) | target (positive) | floor TVD 1 / 2 / 3"
        " | floor TSTR | TRTR |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in order:
        if name not in floors:
            continue
        f = floors[name]
        lines.append(
            f"| {name} | {f['rows_train']:,} / {f['rows_test']:,} | {f['columns']} "
            f"({f['modelled_columns']}) | {TABLES[name].target} ({f['positive_class']}) | "
            f"{f['tvd_1']:.4f} / {f['tvd_2']:.4f} / {f['tvd_3']:.4f} | {f['tstr_auc']:.4f} | "
            f"{f['trtr_auc']:.4f} |")
    lines += [
        "",
        "| table | recipe | ε | TVD 1-way | TVD 2-way | TVD 3-way | TSTR AUC | fit + sample s"
        " | ledger ε | runs |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, recipe, epsilon), cell in sorted(
            runs.items(), key=lambda item: (order.index(item[0][0]) if item[0][0] in order
                                            else len(order), item[0][1], item[0][2])):
        s = summarise(cell)
        seconds = f"{s['seconds']['mean']:.0f}" if "seconds" in s else "–"
        ledger = f"{s['epsilon']['mean']:.4g}" if "epsilon" in s else "–"
        lines.append(
            f"| {name} | {recipe} | {epsilon:g} | {_cell(s, 'tvd_1')} | {_cell(s, 'tvd_2')} | "
            f"{_cell(s, 'tvd_3')} | {_cell(s, 'tstr_auc')} | {seconds} | {ledger} | "
            f"{_status(s)} |")
    return "\n".join(lines)


def run_suite(args: argparse.Namespace) -> None:
    """Prepare each table, score its floor, run every (recipe, ε, repeat); append the records
    to ``out/runs.jsonl`` as they come and rewrite the summary from all records there."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    records_path = out / "runs.jsonl"
    if args.fresh and records_path.exists():
        records_path.unlink()
    work, cache = args.cache / "suite", args.cache
    batch = {"batch": datetime.now(UTC).isoformat(timespec="seconds"), **git_state(),
             "schema_mode": args.schema_mode, "max_seconds": args.max_seconds,
             "islp_version": ISLP_VERSION, "split_seed": SPLIT_SEED}
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    recipes = [r.strip() for r in args.recipes.split(",") if r.strip()]
    epsilons = [float(e) for e in args.epsilons.split(",")]

    def append(record: dict) -> None:
        with records_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({**batch, **record}) + "\n")

    for name in tables:
        prepared = prepare(TABLES[name], work, cache, args.schema_mode)
        (out / "schemas").mkdir(exist_ok=True)
        (out / "schemas" / f"{name}.yaml").write_text(prepared.schema_path.read_text())
        table_floor = floor(prepared)
        append({"kind": "floor", "table": name, **table_floor})
        print(f"{name}: floor TVD {table_floor['tvd_2']:.4f} (2-way), TSTR "
              f"{table_floor['tstr_auc']:.4f}, TRTR {table_floor['trtr_auc']:.4f}", flush=True)
        for recipe in recipes:
            for epsilon in epsilons:
                config = job_config(prepared, recipe, epsilon, table_floor["rows_train"])
                config_path = work / name / f"job-{recipe}-eps{epsilon:g}.yaml"
                config_path.write_text(yaml.safe_dump(config, sort_keys=False))
                stopped = False
                for repeat in range(args.repeats):
                    key = {"kind": "run", "table": name, "recipe": recipe,
                           "epsilon_target": epsilon, "repeat": repeat}
                    if stopped:
                        append({**key, "status": "skipped", "reason": "an earlier repeat timed out"})
                        continue
                    outcome = run_isolated(config_path, args.max_seconds)
                    append({**key, **outcome})
                    stopped = outcome["status"] == "timeout"
                    shown = (f"TVD {outcome['tvd_2']:.4f} TSTR {outcome['tstr_auc']:.4f} "
                             f"{outcome['seconds']:.0f} s" if outcome["status"] == "ok"
                             else "".join(outcome.get("error", "").splitlines()[-1:]))
                    print(f"  {name} {recipe} ε={epsilon:g} #{repeat}: {outcome['status']} "
                          f"{shown}", flush=True)
    write_summary(out, [t.name for t in TABLES.values()])


def write_summary(out: Path, order: list[str]) -> None:
    """summary.json and summary.md from all records in ``out/runs.jsonl`` (the latest floor of
    each table; every run record)."""
    records = load_records(out / "runs.jsonl")
    latest_floor = {r["table"]: r for r in records if r["kind"] == "floor"}
    runs = [r for r in records if r["kind"] == "run"]
    cells: dict[str, list[dict]] = {}
    for record in runs:
        key = f"{record['table']}/{record['recipe']}/{record['epsilon_target']:g}"
        cells.setdefault(key, []).append(record)
    summary = {"floors": latest_floor,
               "cells": {key: summarise(cell) for key, cell in cells.items()}}
    (out / "summary.json").write_text(json.dumps(summary, indent=2, default=str) + "\n")
    table = markdown(list(latest_floor.values()) + runs, order)
    (out / "summary.md").write_text(table + "\n")
    print(table)


def main() -> None:
    """Command line: run the suite, rewrite its summary, or (internal) run one job."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tables", default=",".join(TABLES), help=f"from {', '.join(TABLES)}")
    parser.add_argument("--recipes", default="aim,mst", help="recipes in pipelines/")
    parser.add_argument("--epsilons", default="1,3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--max-seconds", type=float, default=300.0,
                        help="per run (fit, sample and scoring); longer runs are killed: timeout")
    parser.add_argument("--schema-mode", choices=SCHEMA_MODES, default="draft",
                        help="draft: the schema `synthpriv schema infer` drafts from train")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/suite")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--code", choices=("head", "worktree"), default="head",
                        help="head: synthpriv/ and pipelines/ as committed at git HEAD (default); "
                        "worktree: the files as they are, uncommitted edits included")
    parser.add_argument("--fresh", action="store_true", help="start a new runs.jsonl")
    parser.add_argument("--summary-only", action="store_true",
                        help="rewrite summary.{json,md} from runs.jsonl and stop")
    parser.add_argument("--run-one", nargs=2, type=Path, metavar=("CONFIG", "RESULT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.code == "head" and not (args.run_one or args.summary_only) and CODE_ENV not in os.environ:
        snapshot = head_snapshot(args.cache.resolve())
        python_path = os.pathsep.join(filter(None, [str(snapshot), os.environ.get("PYTHONPATH")]))
        environment = {**os.environ, CODE_ENV: str(snapshot), "PYTHONPATH": python_path}
        os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]],
                  environment)
    if args.run_one:
        run_one(*args.run_one)
    elif args.summary_only:
        write_summary(args.out, list(TABLES))
    else:
        unknown = [t for t in args.tables.split(",") if t.strip() and t.strip() not in TABLES]
        if unknown:
            parser.error(f"unknown tables {unknown}; known: {', '.join(TABLES)}")
        run_suite(args)


if __name__ == "__main__":
    main()
