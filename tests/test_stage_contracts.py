"""Typed stage contracts (issue 14, item 5): each stage says what it requires and provides; the
job object checks the recipe's order when it plans, before any data is read. Marginal selections
are one class each over a shared base, listed in a registry."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.errors import ConfigError
from synthpriv.job import Hooks, SynthesisJob
from synthpriv.marginals.stage import (
    SELECTIONS,
    AimStage,
    IndependentStage,
    MarginalsStage,
    MstStage,
)
from synthpriv.pipeline import STAGE_MODULES, build_stages, check_contracts, plan_context
from synthpriv.recipe import load_recipe
from synthpriv.stage import ARTEFACTS, STAGES


def recipe(tmp_path: Path, *stages: dict) -> str:
    path = tmp_path / "custom.yaml"
    path.write_text(yaml.safe_dump({"name": "custom", "stages": list(stages)}))
    return str(path)


def planned_without_data(config: Path) -> tuple[SynthesisJob, list[str]]:
    """A job object on ``config`` whose input file is gone: planning must not need it."""
    job = load_job(config)
    Path(job.data_path).unlink(missing_ok=True)
    steps: list[str] = []
    return SynthesisJob(job, hooks=Hooks(started=steps.append)), steps


@pytest.mark.parametrize(("stages", "message"), [
    ([{"stage": "sample"}, {"stage": "marginals", "share": 1.0}],
     "stage 'sample' needs a fitted model that draws rows, which no stage before it provides"),
    ([{"stage": "generator", "share": 1.0, "options": {"complete": ["income"]}},
      {"stage": "sample"}],
     "complete needs a marginals stage before it"),
    ([{"stage": "generator", "share": 1.0}, {"stage": "sample"}],
     "takes the record count from a marginals stage .* set records_from: measure"),
    ([{"stage": "marginals", "share": 1.0}],
     "releases nothing: no stage provides the synthetic rows. End the recipe with the 'sample'"),
])
def test_a_recipe_out_of_order_is_refused_when_the_job_is_planned(
    write_job, tmp_path: Path, stages: list[dict], message: str
) -> None:
    runner, steps = planned_without_data(
        write_job({"pipeline": {"recipe": recipe(tmp_path, *stages)}}))
    with pytest.raises(ConfigError, match=message):
        runner.plan  # noqa: B018
    assert steps == ["plan"]  # refused before reading anything


def checked_stages(config: Path) -> list:
    """The recipe's stages, their contracts checked (as ``plan_job`` does before calibrating)."""
    job = load_job(config)
    recipe = load_recipe(job.config.pipeline.recipe, job.base_dir)
    stages = [stage for stage, _ in build_stages(job, recipe, plan_context(job))]
    check_contracts(job, recipe.name, stages)
    return stages


def test_contracts_of_the_bundled_recipes_hold(write_job) -> None:
    for name in ("independent", "mst", "aim", "dpsgd", "hybrid"):
        stages = checked_stages(write_job({"pipeline": {"recipe": name}}))
        assert "synthetic" in stages[-1].provides
        assert all(set(s.requires) | set(s.provides) <= set(ARTEFACTS) for s in stages)


def test_a_public_count_lifts_the_generators_need_for_a_marginals_model(write_job, tmp_path):
    config = write_job({
        "data": {"public_records": 2000},
        "pipeline": {"recipe": recipe(tmp_path, {"stage": "generator", "share": 1.0},
                                      {"stage": "sample"})},
    })
    generator, _ = checked_stages(config)
    assert generator.requires == {"rows"}


def test_each_selection_is_its_own_stage_class_from_one_registry(write_job) -> None:
    job = load_job(write_job())
    context = plan_context(job)
    assert {"one_way": IndependentStage, "mst": MstStage, "aim": AimStage} == SELECTIONS
    for name, cls in SELECTIONS.items():
        stage = MarginalsStage({"selection": name}, context, "test")
        assert type(stage) is cls and isinstance(stage, MarginalsStage)
        assert stage.options.selection == name and cls.selection == name
        copy = pickle.loads(pickle.dumps(stage))  # the shadow attack's workers get stages
        assert type(copy) is cls and copy.options == stage.options
    with pytest.raises(ConfigError, match="selection"):
        MarginalsStage({"selection": "nope"}, context, "test")
    assert set(STAGE_MODULES) == set(STAGES.names) >= {"marginals", "generator", "sample"}
