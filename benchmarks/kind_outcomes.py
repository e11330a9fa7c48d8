"""The DP kind step as a run uses it (branch smallkinds, issue 24): on seeded runs of the whole
domain step (``pipeline.resolve_domain``: the kinds pass, n̂ and its branch, DP bounds and
categories) on a development table's safe draft, per column, the kind the kinds pass decided and
the kind the released schema holds (a numeric column whose DP bounds found nothing becomes
categorical with no category: released all missing, ``domain_stage.dp_bounds``). Tells a wrong
kind decision from a right one undone by the bounds; for each numeric column the bounds left
blank, why (``reason``): the kinds pass's DP count of its cells under the seed's presence gate
(``privacy.bounds.presence_threshold``), or no window of its bucket counts scoring the seed's
threshold (``seed_threshold``). Seeds 0, 1, … are the seeds of
``value_sweep.py --seed`` (the domain step draws first). Reads the real table: a measurement,
not a release.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/kind_outcomes.py \\
        statsmodels/macrodata/macrodata,islp/Hitters 10 [--work DIR] [--json out.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import sys
from pathlib import Path

import numpy as np
import pandas as pd

import synthpriv.domain_stage as domain_stage
from synthpriv.config import load_job
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import core, presence_threshold
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import CategoricalColumn

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from faint_kinds import right  # noqa: E402
from kind_draws import safe_domain_step  # noqa: E402
from value_sweep import real_type  # noqa: E402


def released_kind(column: object) -> str:
    """The released schema's kind, ``blank`` for a categorical column with no category (all
    missing)."""
    if isinstance(column, CategoricalColumn) and not column.categories:
        return "blank"
    return column.kind


def blank_reason(noisy: np.ndarray, sigma: float, columns: int, present: object) -> str:
    """Why a reading found nothing: ``presence gate`` (the DP count of cells under the gate; a
    declared column has none) or ``seed score`` (no window of 1–16 buckets scores the seed's
    threshold); ``core`` when the occupancy thresholds showed a bucket (not blank)."""
    if core(noisy, sigma, columns).any():
        return "core"
    if present is None or present.count < presence_threshold(columns) * present.sigma:
        return "presence gate"
    return "seed score"


def outcomes(table: str, seeds: int, work: Path) -> dict:
    """Per column of ``table``: its real type and, per seed, the kinds pass's decision and the
    released kind; per seed n̂ and whether the small-table branch ran."""
    job, stage, _, chunks = safe_domain_step(table, work, "outcomes")
    config = work / table.replace("/", "_") / "job-outcomes.yaml"
    real = {name: real_type(pd.concat([c[name] for c in chunks]).fillna("").astype(str))
            for name in stage.kinds}
    decided: list[str] = []
    original = domain_stage.decide

    def recorded(*args: object, **kwargs: object) -> str:
        decided.append(original(*args, **kwargs))
        return decided[-1]

    reasons: dict[str, str] = {}
    original_read = domain_stage.read_bounds

    def read(noisy, sigma, grid, columns=1, present=None):  # noqa: ANN001, ANN202
        reading = original_read(noisy, sigma, grid, columns, present)
        if reading is None:
            reasons[len(reasons)] = blank_reason(np.asarray(noisy, float), sigma, columns, present)
        return reading

    domain_stage.decide = recorded
    domain_stage.read_bounds = read
    columns = {name: {"real": real[name], "pass": [], "released": [], "reason": []}
               for name in stage.kinds}
    runs = []
    try:
        for seed in range(seeds):
            job = load_job(config)
            planned = plan_job(job)
            step = planned[1][0][0]
            decided.clear()
            reasons.clear()
            resolved, _ = resolve_domain(job, planned, Ledger(job.config.budget.neighbouring),
                                         RandomSource.seeded(seed), [c.copy() for c in chunks])
            blanks = iter(reasons.values())  # the bounds run in the kinds' column order
            for name, kind in zip(step.kinds, decided, strict=True):
                released = released_kind(resolved.schema.column(name))
                columns[name]["pass"].append(kind)
                columns[name]["released"].append(released)
                unbounded = released == "blank" and kind not in ("categorical", "text", "id")
                columns[name]["reason"].append(next(blanks) if unbounded else "")
            runs.append({"seed": seed, "dp_records": step.records_estimate,
                         "small_table": step.small_taken,
                         "kind_sigma": planned[0].stages[0].noise["kind_sigma"]})
    finally:
        domain_stage.decide, domain_stage.read_bounds = original, original_read
    return {"table": table, "columns": columns, "runs": runs}


def summary(result: dict) -> dict:
    """Shares over columns × seeds: pass right, released right (not blank), numbers blank, and
    the numbers blank although the pass read them numeric (the bounds found nothing)."""
    cells = [(c["real"], p, r) for c in result["columns"].values()
             for p, r in zip(c["pass"], c["released"], strict=True)]
    numbers = [(p, r) for real, p, r in cells if real in ("integer", "number")]
    texts = [(p, r) for real, p, r in cells if real == "text"]
    share = lambda xs: sum(xs) / len(xs) if xs else None  # noqa: E731
    return {"pass_right": share([right(real, p) for real, p, _ in cells]),
            "released_right": share([right(real, r) for real, _, r in cells]),
            "numbers_blank": share([r == "blank" for _, r in numbers]),
            "numbers_pass_text": share([p in ("categorical", "text", "id") for p, _ in numbers]),
            "numbers_pass_numeric_blank": share([p in ("integer", "continuous") and r == "blank"
                                                 for p, r in numbers]),
            "text_read_numeric": share([p in ("integer", "continuous") for p, _ in texts]),
            "blank_reasons": dict(collections.Counter(
                reason for c in result["columns"].values() for reason in c["reason"] if reason))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", help="comma-separated development tables")
    parser.add_argument("seeds", type=int)
    parser.add_argument("--work", type=Path, default=Path("/tmp/kind-outcomes-work"))
    parser.add_argument("--json")
    args = parser.parse_args()
    results = []
    print("| table | column | real | kinds pass | released |\n|---|---|---|---|---|")
    for table in args.tables.split(","):
        result = outcomes(table, args.seeds, args.work)
        result["summary"] = summary(result)
        results.append(result)
        for name, c in result["columns"].items():
            shown = [", ".join(f"{k} {n}" for k, n in collections.Counter(c[key]).most_common())
                     for key in ("pass", "released")]
            print(f"| {table} | `{name}` | {c['real']} | {shown[0]} | {shown[1]} |", flush=True)
        print(f"<!-- {table}: {json.dumps(result['summary'])} n̂ "
              f"{[round(r['dp_records']) for r in result['runs']]} -->", flush=True)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
