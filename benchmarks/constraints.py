"""Public constraints on ISLP College (issue 16): how many synthetic rows break each rule without
constraints and with them, and what enforcing them costs in utility and time. With ``--formula``:
ISLP Wage's ``logwage`` modelled as a column (the draft) or derived by ``formula: log(wage)``.

The table, split and drafted schema are the suite's (``benchmarks/suite.py``: ISLP 0.4.0 wheel,
80/20 split, ``schema infer`` draft). Each run is one job (``run_job``, evaluation off, seeded:
research figures only) with the drafted schema, and again with the same schema plus the rules
below; figures are computed here: the share of real (train) and synthetic rows breaking each rule,
mean 1/2/3-way TVD against the train split and TSTR AUC on the test split (``suite.figures``),
and the sampler's acceptance rate from the manifest.

    .venv/bin/python benchmarks/constraints.py --recipes mst,aim --epsilons 1,3 --repeats 2
    .venv/bin/python benchmarks/constraints.py --formula --recipes mst,aim --epsilons 1 --repeats 2
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import yaml

from synthpriv.config import load_job
from synthpriv.constraints import breaking
from synthpriv.runner import run_job
from synthpriv.schema import load_schema
from synthpriv.table import read_table

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from suite import TABLES, figures, holdout_schema, prepare  # noqa: E402

RULES = [
    {"check": "Accept <= Apps"},
    {"check": "Enroll <= Accept"},
    {"check": "Top10perc <= Top25perc <= 100"},
    {"check": "Enroll <= `F.Undergrad`"},
    {"check": "PhD <= Terminal"},  # believable, but 12 train rows break it: reported, enforced
]


def with_rules(schema_path: Path, out: Path) -> Path:
    raw = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    raw["constraints"] = RULES
    out.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return out


def run(schema_path: Path, prepared, recipe: str, epsilon: float, seed: int, folder: Path,
        rules: list | None = None) -> dict:
    """One seeded job; the share of its rows breaking ``rules`` (College), or off the identity
    logwage = log(wage) by more than 0.01 (Wage, ``rules`` None); TVD, TSTR, seconds."""
    config = {
        "name": f"constraints-{prepared.table.name}-{recipe}",
        "data": {"path": str(prepared.train), "schema": str(schema_path),
                 "holdout": str(prepared.test)},
        "budget": {"epsilon": epsilon, "delta": 1e-5},
        "pipeline": {"recipe": recipe},
        "evaluation": {"enabled": False, "target": prepared.table.target},
        "seed": seed,
    }
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    job = load_job(path)
    started = time.perf_counter()
    result = run_job(job, out=folder / "release", force=True, evaluate=False)
    seconds = time.perf_counter() - started
    synthetic = result.synthetic
    test = read_table(prepared.test, holdout_schema(prepared.schema_path))
    scores = figures(result.real, synthetic, test, job.schema, prepared.table.target)
    enforcement = result.manifest["constraints"]
    if rules is None:
        off = (synthetic["logwage"] - np.log(synthetic["wage"])).abs() > 0.01
        return {"seconds": seconds, "identity_broken": float(off.mean()), **scores}
    broken = breaking(rules, synthetic).mean(axis=0)
    return {"seconds": seconds, "breaking": broken.tolist(), **scores,
            "acceptance": None if enforcement is None else enforcement["acceptance_rate"]}


def formula_schema(schema_path: Path, out: Path) -> Path:
    """The drafted Wage schema with logwage derived from wage by the public formula."""
    raw = yaml.safe_load(schema_path.read_text(encoding="utf-8"))
    for column in raw["columns"]:
        if column["name"] == "logwage":
            column["derived_from"] = {"formula": "log(wage)"}
    out.write_text(yaml.safe_dump(raw, sort_keys=False), encoding="utf-8")
    return out


def run_all(args: argparse.Namespace, prepared, work: Path, label: str,
            schemas: dict[str, Path], rules: list | None = None) -> list[dict]:
    """Every recipe × ε × seed, once per schema (``label``: the mode's key in each record)."""
    records = []
    for recipe in args.recipes.split(","):
        for epsilon in map(float, args.epsilons.split(",")):
            for seed in range(args.repeats):
                for mode, schema in schemas.items():
                    folder = Path(tempfile.mkdtemp(dir=work))
                    record = {"recipe": recipe, "epsilon": epsilon, "seed": seed, label: mode,
                              **run(schema, prepared, recipe, epsilon, seed, folder, rules)}
                    print(json.dumps(record), flush=True)
                    records.append(record)
    return records


def formula_runs(args: argparse.Namespace) -> None:
    with tempfile.TemporaryDirectory() as work:
        prepared = prepare(TABLES["wage"], Path(work), args.cache, "draft")
        derived = formula_schema(prepared.schema_path, Path(work) / "derived.yaml")
        records = run_all(args, prepared, Path(work), "logwage",
                       {"modelled": prepared.schema_path, "formula": derived})
    args.out.with_name("formula-wage.json").write_text(json.dumps({"runs": records}, indent=1))
    lines = ["| recipe | ε | rows off logwage = log(wage) | 1-way TVD | 2-way TVD | TSTR AUC | "
             "seconds |", "|---|---|---|---|---|---|---|"]
    for recipe, epsilon in sorted({(r["recipe"], r["epsilon"]) for r in records}):
        pair = [[r for r in records if (r["recipe"], r["epsilon"], r["logwage"]) == (recipe, epsilon,
                 mode)] for mode in ("modelled", "formula")]
        cells = [" → ".join(f"{statistics.mean(r[key] for r in runs):{spec}}" for runs in pair)
                 for key, spec in (("identity_broken", ".1%"), ("tvd_1", ".4f"), ("tvd_2", ".4f"),
                                   ("tstr_auc", ".3f"), ("seconds", ".0f"))]
        lines.append(f"| {recipe} | {epsilon:g} | " + " | ".join(cells) + " |")
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--recipes", default="mst,aim")
    parser.add_argument("--epsilons", default="1,3")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks" / ".cache")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/constraints-college.json")
    parser.add_argument("--formula", action="store_true",
                        help="the Wage logwage formula instead of the College constraints")
    args = parser.parse_args()
    if args.formula:
        formula_runs(args)
        return
    with tempfile.TemporaryDirectory() as work:
        prepared = prepare(TABLES["college"], Path(work), args.cache, "draft")
        constrained = with_rules(prepared.schema_path, Path(work) / "constrained.yaml")
        rules = load_schema(constrained).constraints
        real = read_table(prepared.train, load_schema(constrained))
        real_breaking = breaking(rules, real).mean(axis=0).tolist()
        print("real rows breaking:", dict(zip([r["check"] for r in RULES], real_breaking,
                                              strict=True)))
        records = run_all(args, prepared, Path(work), "constraints",
                       {"none": prepared.schema_path, "enforced": constrained}, rules)
    args.out.write_text(json.dumps({"rules": [r["check"] for r in RULES],
                                    "real_breaking": real_breaking, "runs": records}, indent=1))
    print(summary(records, [r["check"] for r in RULES], real_breaking))


def summary(records: list[dict], rules: list[str], real_breaking: list[float]) -> str:
    """A markdown table: per recipe and ε, the mean share of rows breaking each rule without →
    with constraints, and TVD / TSTR / seconds without → with."""
    lines = ["| recipe | ε | " + " | ".join(rules)
             + " | 2-way TVD | TSTR AUC | seconds | acceptance |",
             "|---|---|" + "---|" * (len(rules) + 4),
             "| real (train) | | " + " | ".join(f"{b:.1%}" for b in real_breaking) + " | | | | |"]
    keys = sorted({(r["recipe"], r["epsilon"]) for r in records})
    for recipe, epsilon in keys:
        runs = {mode: [r for r in records if (r["recipe"], r["epsilon"], r["constraints"])
                       == (recipe, epsilon, mode)] for mode in ("none", "enforced")}

        def mean(mode: str, key: str, index: int | None = None, runs: dict = runs) -> float:
            values = [r[key] if index is None else r[key][index] for r in runs[mode]]
            return statistics.mean(values)

        cells = [f"{mean('none', 'breaking', j):.1%} → {mean('enforced', 'breaking', j):.1%}"
                 for j in range(len(rules))]
        cells += [f"{mean('none', k):.3f} → {mean('enforced', k):.3f}" for k in ("tvd_2", "tstr_auc")]
        cells.append(f"{mean('none', 'seconds'):.0f} → {mean('enforced', 'seconds'):.0f}")
        cells.append(f"{mean('enforced', 'acceptance'):.2f}")
        lines.append(f"| {recipe} | {epsilon:g} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
