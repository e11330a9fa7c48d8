"""Job configs: typed validation with errors that name the key and suggest the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.errors import ConfigError, SchemaError


def test_valid_config_resolves_paths_relative_to_the_file(write_job) -> None:
    path = write_job()
    job = load_job(path)
    assert job.data_path.is_file()
    assert job.schema.names[0] == "age"
    assert job.config.budget.neighbouring == "add_remove"


def test_misspelled_key_is_named_with_a_suggestion(write_job) -> None:
    path = write_job({"budget": {"epsilon": 1.0, "delta": 1e-5, "epsilom": 2}})
    with pytest.raises(ConfigError, match=r"unknown key 'budget.epsilom'.*Did you mean 'epsilon'"):
        load_job(path)


def test_unknown_top_level_key_without_close_match(write_job) -> None:
    with pytest.raises(ConfigError, match=r"unknown key 'colour'. Remove it"):
        load_job(write_job({"colour": "blue"}))


@pytest.mark.parametrize(
    ("budget", "message"),
    [
        ({"epsilon": 0, "delta": 1e-5}, r"budget.epsilon': Input should be greater than 0"),
        ({"epsilon": -1, "delta": 1e-5}, r"budget.epsilon'"),
        ({"epsilon": 1, "delta": -0.1}, r"budget.delta': Input should be greater than 0"),
        ({"epsilon": 1, "delta": 1.0}, r"budget.delta': Input should be less than 1"),
        ({"epsilon": "lots", "delta": 1e-5}, r"budget.epsilon'.*found 'lots'"),
        ({"delta": 1e-5}, r"missing required key 'budget.epsilon'"),
    ],
)
def test_out_of_range_budget_is_refused(write_job, budget: dict, message: str) -> None:
    path = write_job()
    config = yaml.safe_load(path.read_text())
    config["budget"] = budget
    path.write_text(yaml.safe_dump(config))
    with pytest.raises(ConfigError, match=message):
        load_job(path)


def test_inline_schema_is_validated(write_job) -> None:
    bad = {"columns": [{"name": "a", "kind": "integer", "lower": 5, "upper": 1}]}
    with pytest.raises(SchemaError, match="lower < upper"):
        load_job(write_job({"data": {"schema": bad}}))


def test_missing_schema_file_and_config_file(write_job, tmp_path: Path) -> None:
    with pytest.raises(SchemaError, match="schema file not found"):
        load_job(write_job({"data": {"schema": "nowhere.yaml"}}))
    with pytest.raises(ConfigError, match="config file not found"):
        load_job(tmp_path / "absent.yaml")


def test_evaluation_target_must_be_a_column(write_job) -> None:
    with pytest.raises(ConfigError, match="evaluation.target 'salary' is not a column"):
        load_job(write_job({"evaluation": {"target": "salary"}}))


def test_budget_override_is_validated(write_job) -> None:
    job = load_job(write_job())
    assert job.with_budget(3.0, None).config.budget.epsilon == 3.0
    with pytest.raises(ConfigError, match="budget.epsilon"):
        job.with_budget(-1.0, None)
