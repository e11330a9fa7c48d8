"""The oracles of benchmarks/safe_gap.py (branch adultgap) do what their docstrings claim: ``rho``
runs the data-read draft at the recipe ρ the safe draft's plan leaves, ``grids`` swaps the
numeric entries after the DP domain step without touching what it spent, and the per-pair
figures are the suite's 2-way TVD split by pair."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.evaluation.utility import evaluate_utility
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
from tests.evaluation.tiny import SCHEMA, tiny_table

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from safe_gap import (  # noqa: E402 - a benchmarks script, on the path above
    branch_share,
    column_ks,
    epsilon_for_rho,
    merged,
    pair_tvds,
    recipe_rho,
    resolved_safe,
    watched_domain,
)
from suite import Prepared, Table  # noqa: E402

from synthpriv import pipeline  # noqa: E402
from synthpriv.pipeline import plan_job  # noqa: E402

SAFE = {"columns": [{"name": c["name"], "kind": "auto"} for c in SCHEMA["columns"]]}


def _config(folder: Path, schema: dict, recipe: str = "independent") -> dict:
    """A tiny job's config (400 rows) with ``schema`` written under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    tiny_table(400, 1).to_csv(folder / "train.csv", index=False)
    (folder / f"{id(schema)}.yaml").write_text(yaml.safe_dump(schema))
    return {"name": "oracle", "data": {"path": str(folder / "train.csv"),
                                       "schema": str(folder / f"{id(schema)}.yaml")},
            "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": recipe},
            "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}


@pytest.mark.slow  # ~5 s alone, 12 s on a loaded 2-core machine (seven calibrated plans)
def test_rho_oracle_gives_the_public_draft_the_safe_drafts_recipe_rho(tmp_path: Path) -> None:
    public, safe = _config(tmp_path, SCHEMA), _config(tmp_path, SAFE)
    full = recipe_rho(public, tmp_path / "public.job.yaml")
    target = recipe_rho(safe, tmp_path / "safe.job.yaml")
    assert target < 0.9 * full  # the domain step takes a share of the safe draft's ρ
    epsilon = epsilon_for_rho(public, tmp_path / "bisect.job.yaml", target)
    assert epsilon < 1.0
    reached = recipe_rho({**public, "budget": {**public["budget"], "epsilon": epsilon}},
                         tmp_path / "check.job.yaml")
    assert reached == pytest.approx(target, rel=2e-3)


def test_grids_oracle_swaps_numeric_entries_and_keeps_the_domain_steps_ledger(
    tmp_path: Path
) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(yaml.safe_dump(_config(tmp_path, SAFE)))
    public = {c["name"]: c for c in SCHEMA["columns"] if c["kind"] == "integer"}
    outcomes = []
    for replaced in (None, public):
        seen: dict = {}
        with watched_domain(seen, replaced):
            result = run_job(load_job(path), source=RandomSource.seeded(5), evaluate=False,
                             force=True, out=tmp_path / "out")
        schema = result.manifest["schema"]["columns"]
        outcomes.append((seen, {c["name"]: (c["kind"], c.get("lower"), c.get("upper"))
                                for c in schema}, result.ledger.epsilon(1e-5)))
    (plain_seen, plain, plain_eps), (swapped_seen, swapped, swapped_eps) = outcomes
    assert plain_seen["thresholds"] and plain_seen == swapped_seen  # same DP step, same seed
    assert swapped_eps == pytest.approx(plain_eps)
    assert swapped["size"] == ("integer", 0, 20) and swapped["weight"] == ("integer", 0, 50)
    assert plain["size"] != swapped["size"]  # DP bounds are powers of two, not [0, 20]
    assert swapped["colour"] == plain["colour"]


def test_pair_tvds_are_the_suites_two_way_tvd_split_by_pair() -> None:
    real, synthetic = tiny_table(500, 1), tiny_table(500, 2)
    synthetic["size"] = synthetic["size"].where(synthetic["size"] < 12, 20)  # a real difference
    pairs = pair_tvds(real, synthetic, ["size", "weight"])
    assert len(pairs) == 6
    suite = evaluate_utility(real, synthetic, numeric_columns=["size", "weight"],
                             quality_report=False)["marginals"]["2-way"]["mean"]
    assert np.mean(list(pairs.values())) == pytest.approx(suite)
    assert max(pairs, key=pairs.get).count("size") == 1  # the changed column's pairs lead


def test_column_ks_is_the_largest_gap_between_the_two_cdfs() -> None:
    real = pd.Series([1.0, 2.0, 3.0, 4.0, None])
    assert column_ks(real, real) == 0.0
    assert column_ks(real, pd.Series([1.0, 1.0, 1.0, 4.0])) == pytest.approx(0.5)
    assert column_ks(real, pd.Series([None, None])) == 1.0


def test_free_oracle_is_the_safe_runs_domain_with_no_domain_step_left(tmp_path: Path) -> None:
    """``free``: the safe draft's domain step alone at a seed gives the schema the safe run of
    that seed resolved, and that schema, given as public, leaves the recipe the whole ρ."""
    config = _config(tmp_path, SAFE)
    prepared = Prepared(Table("tiny", "tiny", "colour", "test table"), Path(config["data"]["path"]),
                        Path(config["data"]["path"]), Path(config["data"]["schema"]), [])
    free = resolved_safe(prepared, "independent", 5, tmp_path / "free.yaml")
    path = tmp_path / "safe.job.yaml"
    path.write_text(yaml.safe_dump(config))
    result = run_job(load_job(path), source=RandomSource.seeded(5), evaluate=False, force=True,
                     out=tmp_path / "out")

    def domains(columns: list[dict]) -> dict:
        return {c["name"]: (c["kind"], c.get("lower"), c.get("upper"), c.get("categories"))
                for c in columns}

    assert domains(yaml.safe_load(free.read_text())["columns"]) == domains(
        result.manifest["schema"]["columns"])
    public = {**config, "data": {**config["data"], "schema": str(free)}}
    (tmp_path / "free.job.yaml").write_text(yaml.safe_dump(public))
    plan, _ = plan_job(load_job(tmp_path / "free.job.yaml"))
    assert [s.stage for s in plan.stages if s.rho > 0] == ["marginals"]
    # the whole job's ρ (a little more: the thresholds' δ is handed back too)
    assert sum(s.rho for s in plan.stages) >= sum(s.rho for s in result.plan.stages)


def test_branch_share_what_if_patches_the_plan_and_restores_it() -> None:
    saved = pipeline.small_table_share, pipeline.small_table_below
    with branch_share(0.3):
        assert pipeline.small_table_share(0.42, 10.0, 100) == 0.3
        assert pipeline.small_table_below(10.0) > 1e9
    assert (pipeline.small_table_share, pipeline.small_table_below) == saved
    with branch_share(None):
        assert (pipeline.small_table_share, pipeline.small_table_below) == saved


def test_merged_pools_one_seed_records_in_seed_order() -> None:
    one = [{"runs": [r], "runs_3": [2 * r], "columns": {"a": r}, "ks": {"a": r},
            "pairs": {"a|b": r}, "domain": {"rho": 1.0}, "epsilon": 1.0} for r in (0.1, 0.3)]
    out = merged(one)
    assert out["runs"] == [0.1, 0.3] and out["runs_3"] == [0.2, 0.6]
    assert out["tvd_2"] == pytest.approx(0.2) and out["tvd_2_sd"] == pytest.approx(0.1)
    assert out["pairs"] == {"a|b": pytest.approx(0.2)}
