"""Shadow-model attack: target choice, the shadow design, and identity vs DP on a tiny table."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv.config import load_job
from synthpriv.evaluation.attacks import MixedTypeDistance
from synthpriv.evaluation.shadow import (
    IdentityGenerator,
    PipelineGenerator,
    choose_targets,
    design,
    shadow_attack,
)
from synthpriv.table import read_table
from tests.evaluation.tiny import NUMERIC, tiny_table, write_tiny_job


def test_the_isolated_record_is_the_most_vulnerable_target():
    table = tiny_table(300, 0)
    table.loc[17] = ["blue", "odd", 20, 0]  # far from every other row
    distance = MixedTypeDistance.fit(table, NUMERIC)
    chosen = choose_targets(table, distance, 2, 3, np.random.default_rng(0))
    assert chosen["row"].iloc[0] == 17
    assert list(chosen["kind"]) == ["vulnerable"] * 2 + ["random"] * 3
    assert chosen["row"].is_unique
    assert chosen["vulnerability"].iloc[0] == chosen["vulnerability"].max()


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_design_is_balanced_and_tables_are_neighbours(neighbouring):
    pool = pd.DataFrame({"v": np.arange(50)})
    targets = pd.DataFrame({"v": [-1, -2]})
    shadow = design(len(pool), 2, 12, 10, neighbouring, np.random.default_rng(1))
    for part in (slice(0, 6), slice(6, 12)):
        assert (shadow.members[part].sum(axis=0) == 3).all()  # half in, in train and in test
    for j in range(12):
        table = shadow.table(pool, targets, j)
        inside = set(targets["v"][shadow.members[j]])
        assert set(table["v"]) & {-1, -2} == inside
        expected = 10 if neighbouring == "replace_one" else 10 + len(inside)
        assert len(table) == expected


def test_shadow_attack_separates_the_identity_generator_from_a_dp_pipeline(tmp_path):
    job = load_job(write_tiny_job(tmp_path))
    real = read_table(job.data_path, job.schema)
    result = shadow_attack(
        real, {"identity": IdentityGenerator(), "dp": PipelineGenerator(job)},
        numeric_columns=NUMERIC, neighbouring="add_remove", delta=1e-4, shadow_tables=32,
        vulnerable_targets=2, random_targets=1, records=100, bootstrap=20, progress=False,
    )
    identity, dp = result["generators"]["identity"], result["generators"]["dp"]
    assert result["test_tables"] == 16 and len(identity["targets"]) == 3
    # Identity: the target's exact row is in the output iff it was in the input.
    assert identity["pooled"]["auc"] > 0.9
    # DP (ε = 1, counts with noise σ ≈ 14 against a change of 1): close to guessing. The pooled
    # AUC over 48 test scores has standard error ≈ 0.08 at 0.5; 0.75 is three of them above.
    assert dp["pooled"]["auc"] < 0.75
    assert identity["pooled"]["auc"] - dp["pooled"]["auc"] > 0.2
    assert dp["worst_case"]["eps_lower_bound"] <= 1.0


@pytest.mark.slow
def test_a_worker_pool_gives_the_same_features_as_one_process(tmp_path):
    """Seeds travel with each shadow table, so where a run happens does not change its result."""
    job = load_job(write_tiny_job(tmp_path))
    real = read_table(job.data_path, job.schema)
    runs = [
        shadow_attack(
            real, {"dp": PipelineGenerator(job), "identity": IdentityGenerator()},
            numeric_columns=NUMERIC, neighbouring="replace_one", delta=1e-4, shadow_tables=8,
            vulnerable_targets=1, random_targets=1, records=60, workers=workers, bootstrap=0,
            progress=False,
        )
        for workers in (1, 2)
    ]
    for name in ("dp", "identity"):
        one, pool = (run["generators"][name] for run in runs)
        assert [t["auc"] for t in one["targets"]] == [t["auc"] for t in pool["targets"]]
        assert one["pooled"]["roc"] == pool["pooled"]["roc"]


def test_the_pipeline_generator_reuses_the_runs_plan(tmp_path, monkeypatch):
    """The evaluation's shadow runs take the plan the run made of the same job (planning
    calibrates noise: about a second); without one they plan once themselves."""
    from synthpriv import job as job_module
    from synthpriv.job import SynthesisJob
    from synthpriv.privacy.randomness import RandomSource

    job = load_job(write_tiny_job(tmp_path, pipeline={"recipe": "independent"}, seed=3))
    plans = []
    plan_job = job_module.plan_job
    monkeypatch.setattr(job_module, "plan_job", lambda j: plans.append(j) or plan_job(j))
    result = SynthesisJob(job).run(tmp_path / "release", evaluate=False)
    assert len(plans) == 1 and result.planned is not None
    table = read_table(job.data_path, job.schema)
    reused = PipelineGenerator(job, result.planned)
    assert reused.job.planned is result.planned
    reused(table, 5)
    assert len(plans) == 1  # no second plan
    fresh = PipelineGenerator(job)
    pd.testing.assert_frame_equal(fresh(table, 5), reused(table, 5))
    assert len(plans) == 2
    assert reused.job.synthesise(table, RandomSource.seeded(5)).plan is result.planned[0]


def test_per_person_a_target_is_a_whole_person_in_or_out():
    """data.person: the shadow tables with and without target t differ by all of t's person's
    rows, and no base table holds a row of any target person."""
    pool = pd.DataFrame({"pid": np.repeat([f"p{i}" for i in range(40)], 3),
                         "x": np.arange(120) % 7, "y": np.arange(120) % 5})
    identity = IdentityGenerator()
    seen: list[pd.DataFrame] = []

    def recording(table: pd.DataFrame, seed: int) -> pd.DataFrame:
        seen.append(table.copy())
        return identity(table, seed)

    result = shadow_attack(
        pool, {"identity": recording}, numeric_columns=[], neighbouring="add_remove", delta=1e-4,
        shadow_tables=16, vulnerable_targets=2, random_targets=1, records=30, bootstrap=0,
        progress=False, persons=pool["pid"],
    )
    assert result["target"] == "a whole person (all its rows)"
    rows = [t["row"] for t in result["generators"]["identity"]["targets"]]
    target_persons = set(pool.loc[rows, "pid"])
    assert len(target_persons) == len(rows)  # one target per person
    for table in seen:
        counts = table["pid"].value_counts()
        for person in target_persons:
            assert counts.get(person, 0) in (0, 3)  # all of the person's rows, or none
        assert len(table) - sum(counts.get(p, 0) for p in target_persons) == 30  # base only
    with pytest.raises(ValueError, match="add_remove"):
        shadow_attack(pool, {"identity": identity}, numeric_columns=[], neighbouring="replace_one",
                      delta=1e-4, shadow_tables=16, records=30, progress=False,
                      persons=pool["pid"])
