"""Where the safe draft loses to the data-read draft (issue 24: the safe draft within 1.25× of the
data-read draft's 2-way TVD on tables of ≥ 1,000 rows): schemas between the two, one part of
the domain made public at a time, and budget knobs of the safe path, on the suite's tables.

Variants of the schema (each run on the suite's train split, MST or AIM, ε = 1, δ = 1e-5, the
release read back with the data-read draft and scored by ``suite.figures``; per column the 1-way
TVD, numeric columns in 16 quantile bins of the real column):

* ``draft``: the data-read draft (kinds, bounds and categories read from the data; not private);
* ``safe``: ``schema infer --safe`` (every column ``auto``: kind, bounds, categories under DP);
* ``kinds``: the safe draft with each column's kind given (no kind histogram), domains under DP,
  the numeric columns' ``missing`` as the data-read draft has it (``kinds-missing``: true, as an
  auto column always is);
* ``cats``: the categorical columns as in the data-read draft (categories public), the others
  ``auto`` — the loss left is the numeric columns' DP kinds and bounds;
* ``bounds``: the numeric columns as in the data-read draft, the categorical ones ``auto`` — the
  loss left is DP discovery (and the kinds of the categorical columns);
* ``tcut``: an oracle, not a mechanism — the data-read draft with each categorical column's
  categories holding fewer than ``--tcut`` T rows of train removed (read as missing): what perfect
  discovery at threshold T would release with every other domain public. Its ratio to ``draft``
  is the part of the safe draft's gap that the category threshold alone costs. ``--tcut 0``:
  T is the threshold the safe draft's discovery used on its categorical columns (the realised,
  reallocated T of the first ``safe`` run of this invocation, else of the plan's kinds).
* ``grids``: an oracle, not a mechanism — the safe draft run as it is (DP kinds, DP bounds,
  discovery, the same domain share of ρ), but after its domain step every column the data-read
  draft calls numeric gets the data-read draft's entry (exact bounds and point masses, none of
  the DP heap/bucket counts; a ``derived_from`` dropped: the column stays modelled). Its gap to
  ``safe`` is what the DP numeric bounds, grids and their free measurements cost AIM.
* ``rho``: an oracle of the budget — the data-read draft run at the ε whose plan gives the recipe
  the ρ that the safe draft's recipe stages get after the domain step's share (found by fixed-point
  steps on ``plan_job``, public figures only). Its gap to ``draft`` is what the domain step's share
  of the budget costs by itself.
* ``free``: an oracle of a free domain step — per seed, the safe draft's domain step run alone
  (``DomainStage.resolve`` at that seed: the same kinds, bounds, categories and free counts as the
  ``safe`` run of the seed), its resolved schema then given as public and run at the job's ε, so
  the recipe gets the whole ρ. Its gap to ``safe`` is what the domain step's share of ρ costs the
  recipe with the safe draft's domains; its gap to ``draft`` is what the DP domains themselves
  (threshold included) cost.
* ``underived``: the data-read draft with every ``derived_from`` dropped (the column modelled
  like any other, as the safe draft, which never drafts one, models it); an oracle too.

Every run also records each 2-way pair's TVD and each numeric column's KS (``pairs``, ``ks``);
``benchmarks/safe_gap_pairs.py`` prints which pairs and columns carry a gap between two variants.
``--public NAME=FILE`` makes column NAME categorical over a public list (FILE: one value a line,
e.g. ``benchmarks/public_lists/us_postal_codes.txt``) in every variant: ``safe`` with it is what a
user who writes that one public list into the safe draft gets.
``--branch-share S`` (a what-if, not a mechanism of main): the domain step's pass 2 planned at
share S of the job's ρ through the small-table branch's machinery (``pipeline.small_table_branch``:
the kinds pass at the default plan's noise, the same total ρ, the branch chosen from the DP n̂),
with the branch's n̂ bar set so high that every run takes it: what a "large-table branch" that
gives pass 2's budget back to the recipe would release (S below the default share).
``--constants`` sets constants of ``synthpriv.privacy.domain_budget`` (a what-if: e.g. cheaper
kind statistics, ``'{"KIND_NOISE_FACTOR": 4}'``). ``--budget`` / ``--marginals`` set budget or
``pipeline.stages.marginals`` keys on every run (a JSON object), e.g. ``--budget
'{"domain_share": 0.4}'``. Development-suite tables only (every
table of ``suite.TABLES`` is one; none is held out).

    PYTHONPATH=. .venv/bin/python benchmarks/safe_gap.py --table wage --seeds 4 \\
        --variants draft,safe,kinds,cats,bounds
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from suite import TABLES, Prepared, figures, job_config, prepare, read_scored  # noqa: E402

from synthpriv import pipeline  # noqa: E402
from synthpriv.config import load_job  # noqa: E402
from synthpriv.domain_stage import DomainStage  # noqa: E402
from synthpriv.evaluation.discretize import Discretizer  # noqa: E402
from synthpriv.evaluation.utility import evaluate_utility, marginal_tvd  # noqa: E402
from synthpriv.pipeline import plan_job  # noqa: E402
from synthpriv.privacy import domain_budget  # noqa: E402
from synthpriv.privacy.accountant import Ledger  # noqa: E402
from synthpriv.privacy.randomness import RandomSource  # noqa: E402
from synthpriv.runner import run_job  # noqa: E402
from synthpriv.schema import Schema, load_schema, parse_schema  # noqa: E402

VARIANTS = ("draft", "safe", "kinds", "kinds-missing", "cats", "bounds", "tcut", "grids", "rho",
            "underived", "free")
MODELLED_KINDS = ("categorical", "integer", "continuous")


def variant_schema(name: str, draft: dict, safe: dict, train: pd.DataFrame | None = None,
                   threshold: int = 0) -> dict:
    """The schema of variant ``name`` (module docstring) from the two drafts' YAML (``tcut``:
    the ``train`` table's counts against ``threshold``)."""
    if name in ("draft", "rho"):
        return draft
    if name == "grids":
        return safe
    if name == "underived":
        return {**draft, "columns": [underived(c) for c in draft["columns"]]}
    if name == "tcut":  # a column other columns derive from is left whole (Adult: education)
        sources = {(c.get("derived_from") or {}).get("column") for c in draft["columns"]}
        return {**draft, "columns": [c if c["name"] in sources
                                     else cut_categories(c, train, threshold)
                                     for c in draft["columns"]]}
    public = {c["name"]: c for c in draft["columns"]}
    columns = []
    for column in safe["columns"]:
        given = public[column["name"]]
        categorical = given["kind"] == "categorical"
        if (name == "cats" and categorical) or (name == "bounds" and not categorical
                                                and given["kind"] != "id"):
            columns.append(given)
        elif name in ("kinds", "kinds-missing") and given["kind"] in MODELLED_KINDS:
            columns.append({"name": given["name"], "kind": given["kind"],
                            "missing": categorical or name == "kinds-missing"
                            or given.get("missing", False)})
        else:
            columns.append(column)
    return {**safe, "columns": columns}


def public_categories(schema: dict, given: dict[str, list[str]]) -> dict:
    """``schema`` with each column named in ``given`` categorical over that public list (``--public
    NAME=FILE``: a list known without the data, e.g. US postal codes; values outside it read as
    missing). The rest of the schema is unchanged: ``safe`` + a public list is what a user who
    writes that one list into the safe draft gets."""
    columns = [{"name": c["name"], "kind": "categorical", "categories": given[c["name"]],
                "missing": True, "unknown_categories": "missing"} if c["name"] in given else c
               for c in schema["columns"]]
    return {**schema, "columns": columns}


def read_public(option: str) -> tuple[str, list[str]]:
    """``NAME=FILE`` → (NAME, FILE's values: one a line, ``#`` lines are comments)."""
    name, _, path = option.partition("=")
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return name, [line.strip() for line in lines if line.strip() and not line.startswith("#")]


def cut_categories(column: dict, train: pd.DataFrame, threshold: int) -> dict:
    """A data-read categorical column without its categories held by fewer than ``threshold``
    rows of ``train`` (read as missing): the oracle ``tcut`` (not private: exact counts)."""
    if column["kind"] != "categorical":
        return column
    counts = train[column["name"]].astype(str).value_counts()
    kept = [v for v in column["categories"] if counts.get(str(v), 0) >= threshold]
    return {**column, "categories": kept, "unknown_categories": "missing", "missing": True}


def underived(column: dict) -> dict:
    """A data-read draft's column without its ``derived_from`` (modelled like any other)."""
    return {k: v for k, v in column.items() if k != "derived_from"}


def public_numeric(draft: dict) -> dict[str, dict]:
    """The data-read draft's numeric columns (oracle ``grids``), without ``derived_from``."""
    return {c["name"]: underived(c) for c in draft["columns"]
            if c["kind"] in ("integer", "continuous")}


@contextmanager
def watched_domain(seen: dict, replaced: dict[str, dict] | None = None) -> Iterator[None]:
    """Run jobs with the domain step's realised thresholds and kinds copied into ``seen``; with
    ``replaced`` (oracle ``grids``), the resolved schema's columns of those names swapped for
    the given entries after the step ran (its budget and events unchanged)."""
    original = DomainStage.resolve

    def resolve(self, job, plan, ledger, source, chunks=None):  # noqa: ANN001, ANN202
        resolved = original(self, job, plan, ledger, source, chunks)
        seen["thresholds"] = dict(self.thresholds)
        seen["branch"] = self.small_taken if self.small is not None else None
        seen["kinds"] = {c.name: c.kind for c in resolved.schema.columns}
        if replaced:
            raw = resolved.schema.model_dump()
            raw["columns"] = [replaced.get(c["name"], c) for c in raw["columns"]]
            resolved.schema = parse_schema(raw, "oracle grids: public numeric columns")
        return resolved

    DomainStage.resolve = resolve
    try:
        yield
    finally:
        DomainStage.resolve = original


@contextmanager
def branch_share(share: float | None) -> Iterator[None]:
    """With ``share``: every plan's small-table branch at that share, taken on every run (the
    ``--branch-share`` what-if); without: nothing changed."""
    if share is None:
        yield
        return
    saved = pipeline.small_table_share, pipeline.small_table_below
    pipeline.small_table_share = lambda default, rows, records: share
    pipeline.small_table_below = lambda rows: 1e12
    try:
        yield
    finally:
        pipeline.small_table_share, pipeline.small_table_below = saved


def resolved_safe(safe: Prepared, recipe: str, seed: int, path: Path) -> Path:
    """The safe draft's schema after its domain step alone at ``seed`` (oracle ``free``), written
    to ``path`` (the domain step draws first from the run's source, so it is the ``safe`` run's
    of that seed)."""
    job = load_job(write_job(safe, recipe))
    plan, stages = plan_job(job)
    stage = stages[0][0]
    resolved = stage.resolve(job, plan.stages[0], Ledger(job.config.budget.neighbouring),
                             RandomSource.seeded(seed))
    path.write_text(yaml.safe_dump(resolved.schema.model_dump(exclude_none=True),
                                   sort_keys=False))
    return path


def recipe_rho(config: dict, path: Path) -> float:
    """The zCDP ρ the job ``config`` (written to ``path``) plans for its recipe's stages (all
    but the domain step): public figures only."""
    path.write_text(yaml.safe_dump(config))
    plan, _ = plan_job(load_job(path))
    return sum(s.rho for s in plan.stages if s.stage != "domain")


def epsilon_for_rho(config: dict, path: Path, rho: float, tolerance: float = 2e-3) -> float:
    """The ε at which ``config``'s plan gives its recipe ``rho`` (within ``tolerance``,
    relative: the planner calibrates its scale within 1e-3, ``calibration.RELATIVE_TOLERANCE``):
    fixed-point steps ε ← ε·√(ρ / ρ(ε)), as ρ grows about as ε² (zCDP at small ε)."""
    epsilon = config["budget"]["epsilon"]
    for _ in range(30):
        planned = recipe_rho({**config, "budget": {**config["budget"], "epsilon": epsilon}}, path)
        if abs(planned - rho) <= tolerance * rho:
            return epsilon
        epsilon *= math.sqrt(rho / planned)
    raise RuntimeError(f"no ε gives the recipe ρ = {rho:.6g} within {tolerance:g}")


def column_ks(real: pd.Series, synthetic: pd.Series) -> float:
    """Two-sample KS distance of one numeric column's present values (1 if one side has none)."""
    a, b = np.sort(real.dropna().to_numpy(float)), np.sort(synthetic.dropna().to_numpy(float))
    if not len(a) or not len(b):
        return 1.0
    grid = np.union1d(a, b)
    return float(np.max(np.abs(np.searchsorted(a, grid, "right") / len(a)
                               - np.searchsorted(b, grid, "right") / len(b))))


def pair_tvds(real: pd.DataFrame, synthetic: pd.DataFrame, numeric: list[str]) -> dict[str, float]:
    """Every 2-way marginal's TVD, keyed ``a|b``, on the suite's 16 quantile bins (as
    ``evaluate_utility`` scores them)."""
    discretizer = Discretizer.fit(real, numeric, 16)
    scored = marginal_tvd(discretizer.transform(real), discretizer.transform(synthetic[real.columns]),
                          2, sizes=discretizer.sizes, columns=discretizer.columns, n_worst=10**6)
    return {"|".join(w["columns"]): w["tvd"] for w in scored["worst"]}


def column_tvd(real: pd.Series, synthetic: pd.Series, numeric: bool) -> float:
    """1-way TVD of one column (numeric: 16 quantile bins of the real column; missing a value)."""
    if numeric:
        edges = np.unique(np.nanquantile(real.dropna(), np.linspace(0, 1, 17)))
        cuts = np.r_[-np.inf, edges[1:-1], np.inf]
        real, synthetic = (pd.cut(s, cuts).astype(str).where(s.notna(), "NA")
                           for s in (real, synthetic))
    real, synthetic = (s.fillna("NA").astype(str) for s in (real, synthetic))
    share = real.value_counts(normalize=True).subtract(
        synthetic.value_counts(normalize=True), fill_value=0)
    return float(0.5 * share.abs().sum())


def tvds(real: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame, scoring: Schema,
         target: str) -> dict[str, float]:
    """The suite's 2- and 3-way TVD (``figures``; without the target's TSTR when the GBM cannot
    be fitted on the release, as ``suite.score`` does)."""
    try:
        scored = figures(real, synthetic, test, scoring, target)
        return {"tvd_2": scored["tvd_2"], "tvd_3": scored["tvd_3"]}
    except ValueError:
        numeric = [name for name in scoring.numeric_names if name != target]
        marginals = evaluate_utility(real, synthetic, numeric_columns=numeric,
                                     quality_report=False)["marginals"]
        return {"tvd_2": marginals["2-way"]["mean"], "tvd_3": marginals["3-way"]["mean"]}


def two_way(real: pd.DataFrame, synthetic: pd.DataFrame, test: pd.DataFrame, scoring: Schema,
            target: str) -> float:
    """The suite's 2-way TVD (``tvds``)."""
    return tvds(real, synthetic, test, scoring, target)["tvd_2"]


def run_variant(prepared: Prepared, schema_path: Path, scoring: Schema, recipe: str, seeds: int,
                extra: dict, work: Path, replaced: dict[str, dict] | None = None,
                epsilon: float = 1.0, seed0: int = 100) -> dict:
    """``seeds`` runs of one variant at ``epsilon``: 2- and 3-way TVD per run (2-way per pair too), mean
    1-way TVD per column and KS per numeric column, the domain step's planned noise (σ,
    threshold), share and realised thresholds; ``replaced``: oracle ``grids``'s entries; seeds
    ``seed0``, ``seed0`` + 1, …."""
    real = read_scored(prepared.train, scoring)
    test = read_scored(prepared.test, scoring)
    config = job_config(Prepared(prepared.table, prepared.train, prepared.test, schema_path, []),
                        recipe, epsilon, len(real))
    config["budget"].update(extra.get("budget", {}))
    if extra.get("marginals"):
        config["pipeline"]["stages"] = {"marginals": extra["marginals"]}
    config_path = schema_path.with_suffix(".job.yaml")
    config_path.write_text(yaml.safe_dump(config))
    numeric = set(scoring.numeric_names)
    runs, runs_3, per_column, ks, pairs, domain, seen = [], [], {}, {}, {}, {}, {}
    for seed in range(seeds):
        with watched_domain(seen, replaced):
            result = run_job(load_job(config_path), source=RandomSource.seeded(seed0 + seed),
                             evaluate=False, force=True, out=work / "release")
        csv = work / f"{schema_path.stem}-{seed}.csv"
        result.synthetic.to_csv(csv, index=False)
        synthetic = read_scored(csv, scoring)
        scored = tvds(real, synthetic, test, scoring, prepared.table.target)
        runs.append(scored["tvd_2"])
        runs_3.append(scored["tvd_3"])
        for name in real.columns:
            per_column.setdefault(name, []).append(
                column_tvd(real[name], synthetic[name], name in numeric))
            if name in numeric:
                ks.setdefault(name, []).append(column_ks(real[name], synthetic[name]))
        for pair, tvd in pair_tvds(real, synthetic, sorted(numeric)).items():
            pairs.setdefault(pair, []).append(tvd)
        total = sum(s.rho for s in result.plan.stages)
        stage = next((s for s in result.plan.stages if s.stage == "domain"), None)
        domain = {"rho": total, "recipe_rho": total - (stage.rho if stage else 0.0)}
        if stage is not None:
            domain.update({"share": stage.rho / total, "sigma": stage.noise.get("sigma"),
                           "threshold": stage.noise.get("category_threshold"),
                           "thresholds": seen.get("thresholds"), "kinds": seen.get("kinds"),
                           "branch_taken": seen.get("branch")})
    mean = {k: float(np.mean(v)) for k, v in per_column.items()}
    return {"tvd_2": float(np.mean(runs)), "tvd_2_sd": float(np.std(runs)), "runs": runs,
            "tvd_3": float(np.mean(runs_3)), "runs_3": runs_3,
            "columns": mean, "ks": {k: float(np.mean(v)) for k, v in ks.items()},
            "pairs": {k: float(np.mean(v)) for k, v in pairs.items()}, "domain": domain,
            "epsilon": epsilon}


def merged(outcomes: list[dict]) -> dict:
    """One record of several one-seed ``run_variant`` outcomes (oracle ``free``): runs in seed
    order, means over them."""
    runs = [r for o in outcomes for r in o["runs"]]
    runs_3 = [r for o in outcomes for r in o["runs_3"]]

    def mean(key: str) -> dict[str, float]:
        return {k: float(np.mean([o[key][k] for o in outcomes])) for k in outcomes[0][key]}

    return {"tvd_2": float(np.mean(runs)), "tvd_2_sd": float(np.std(runs)), "runs": runs,
            "tvd_3": float(np.mean(runs_3)), "runs_3": runs_3, "columns": mean("columns"),
            "ks": mean("ks"), "pairs": mean("pairs"), "domain": outcomes[-1]["domain"],
            "epsilon": outcomes[0]["epsilon"]}


def plan_threshold(safe: Prepared, draft: dict) -> int:
    """The threshold the safe draft's discovery uses on its categorical columns when its kinds
    are decided as the data-read draft's (realised, reallocated: ``DomainStage.realised``)."""
    plan, stages = plan_job(load_job(write_job(safe, "aim")))
    decided = parse_schema({**draft, "columns": [underived(c) for c in draft["columns"]]},
                           "kinds of the data-read draft")
    realised = stages[0][0].realised(plan.stages[0], decided)
    if realised.category_threshold is None:
        return int(plan.stages[0].noise["category_threshold"])
    return int(realised.category_threshold)


def write_job(prepared: Prepared, recipe: str, epsilon: float = 1.0) -> Path:
    """``prepared``'s job (the suite's) written next to its schema; its path."""
    rows = sum(1 for _ in prepared.train.open(encoding="utf-8")) - 1
    path = prepared.schema_path.with_suffix(f".{recipe}.job.yaml")
    path.write_text(yaml.safe_dump(job_config(prepared, recipe, epsilon, rows)))
    return path


def both_drafts(table: str, cache: Path, prefix: str) -> tuple[Path, Prepared, Prepared, Schema]:
    """A scratch folder with ``table``'s splits and both drafts (data-read, safe), and the
    data-read draft's schema (the one releases are scored with)."""
    work = Path(tempfile.mkdtemp(prefix=prefix))
    draft = prepare(TABLES[table], work, cache, "draft")
    safe = prepare(TABLES[table], work, cache, "safe")
    return work, draft, safe, load_schema(draft.schema_path)


def main() -> None:
    """Command line: the variants of one table, printed and appended to ``--out``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--table", default="wage", help=", ".join(TABLES))
    parser.add_argument("--recipe", default="mst")
    parser.add_argument("--seeds", type=int, default=4)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--tcut", type=int, default=0,
                        help="variant tcut: drop categories below this many train rows")
    parser.add_argument("--seed0", type=int, default=100, help="first seed (then +1, +2, …)")
    parser.add_argument("--public", action="append", default=[], metavar="NAME=FILE",
                        help="make column NAME categorical over FILE's public list in every "
                        "variant (one value a line); repeatable")
    parser.add_argument("--branch-share", type=float, default=None,
                        help="what-if: pass 2 of the domain step at this share of ρ (the "
                        "small-table branch's machinery, taken on every run)")
    parser.add_argument("--budget", type=json.loads, default={})
    parser.add_argument("--marginals", type=json.loads, default={})
    parser.add_argument("--constants", type=json.loads, default={},
                        help="synthpriv.privacy.domain_budget constants to set for every run, "
                        'e.g. \'{"KIND_NOISE_FACTOR": 4}\' (a what-if, not a default)')
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/safe-gap.jsonl")
    args = parser.parse_args()
    for key, value in args.constants.items():
        if not hasattr(domain_budget, key):
            raise SystemExit(f"synthpriv.privacy.domain_budget has no constant {key}")
        setattr(domain_budget, key, value)
    work, draft, safe, scoring = both_drafts(args.table, args.cache, "safe-gap-")
    drafts = [yaml.safe_load(p.schema_path.read_text()) for p in (draft, safe)]
    given = dict(read_public(option) for option in args.public)
    extra = {"budget": args.budget, "marginals": args.marginals,
             **({"constants": args.constants} if args.constants else {}),
             **({"public": sorted(given)} if given else {}),
             **({"branch_share": args.branch_share} if args.branch_share is not None else {})}
    train = pd.read_csv(draft.train, dtype=str, keep_default_na=False)
    tcut = args.tcut
    for name in args.variants.split(","):
        path = work / f"variant-{name}.yaml"
        if name == "tcut" and not tcut:
            tcut = plan_threshold(safe, drafts[0])
        schema = public_categories(variant_schema(name, *drafts, train, tcut), given)
        path.write_text(yaml.safe_dump(schema, sort_keys=False))
        epsilon = 1.0
        if name == "rho":  # the data-read draft at the safe draft's recipe ρ
            config = job_config(draft, args.recipe, 1.0, len(train))
            config["budget"].update(args.budget)
            safe_config = {**config, "data": {**config["data"], "schema": str(safe.schema_path)}}
            target = recipe_rho(safe_config, work / "rho-safe.job.yaml")
            epsilon = epsilon_for_rho(config, work / "rho-draft.job.yaml", target)
        replaced = public_numeric(drafts[0]) if name == "grids" else None
        with branch_share(args.branch_share):
            if name == "free":  # one resolved schema per seed, each run at its seed
                outcomes = [run_variant(draft, resolved_safe(
                    safe, args.recipe, args.seed0 + s, work / f"variant-free{s}.yaml"), scoring,
                    args.recipe, 1, extra, work, None, epsilon, args.seed0 + s)
                    for s in range(args.seeds)]
                outcome = merged(outcomes)
            else:
                outcome = run_variant(draft, path, scoring, args.recipe, args.seeds, extra, work,
                                      replaced, epsilon, args.seed0)
        record = {"table": args.table, "recipe": args.recipe, "variant": name,
                  **({"tcut": tcut} if name == "tcut" else {}),
                  "seeds": args.seeds, "seed0": args.seed0, **extra, **outcome}
        with args.out.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
        worst = sorted(outcome["columns"].items(), key=lambda kv: -kv[1])[:4]
        print(f"{args.table} {args.recipe} {name:7s} ε={epsilon:.4g} {json.dumps(extra)} 2-way TVD "
              f"{outcome['tvd_2']:.4f} ± {outcome['tvd_2_sd']:.4f} (3-way {outcome['tvd_3']:.4f}); "
              f"domain { {k: v for k, v in outcome['domain'].items() if k != 'kinds'} }; "
              "worst 1-way: " + ", ".join(f"{k} {v:.3f}" for k, v in worst), flush=True)


if __name__ == "__main__":
    main()
