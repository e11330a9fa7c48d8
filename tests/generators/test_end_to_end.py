"""End to end: the hybrid and generator-alone recipes on a 2,000-row sample of Adult write a valid
release within the requested ε, with the DP-SGD steps in the manifest's ledger."""

from __future__ import annotations

import json

import pytest

from synthpriv.cli import main
from synthpriv.schema import load_schema
from synthpriv.table import read_table

from ..conftest import ADULT

SMALL_GENERATOR = {"epochs": 1, "sample_rate": 0.02, "hidden": 8, "candidate_factor": 2}


@pytest.mark.parametrize("recipe", ["hybrid", "dpsgd"])
def test_a_tiny_run_writes_a_valid_release_within_budget(write_job, tmp_path, recipe) -> None:
    stages = {"generator": SMALL_GENERATOR}
    if recipe == "hybrid":  # a small AIM workload: the same code path, fast
        stages["generator"] = {**SMALL_GENERATOR, "complete": ["income"]}
        stages["marginals"] = {"aim_rounds_per_attribute": 1, "aim_round_iterations": 20,
                               "iterations": 50}
    out = tmp_path / recipe
    job = write_job({"pipeline": {"recipe": recipe, "stages": stages}, "seed": 2})
    assert main(["run", str(job), "--out", str(out), "--epsilon", "0.8"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    schema = load_schema(ADULT / "schema.yaml")
    synthetic = read_table(out / "synthetic.csv", schema)
    assert manifest["guarantee"]["epsilon_if_noise_secret"] <= 0.8  # seeded: no guarantee
    assert manifest["records"]["released"] == len(synthetic) > 0
    assert list(synthetic.columns) == schema.names
    for column in schema.columns:  # numeric values stay inside their public bounds
        if hasattr(column, "lower"):
            values = synthetic[column.name].dropna().astype(float)
            assert values.between(column.lower, column.upper).all()
    (training,) = [e for e in manifest["ledger"]["events"] if e["kind"] == "subsampled_gaussian"]
    assert training["steps"] == 50 and training["sample_rate"] == 0.02
    planned = {s["stage"]: s for s in manifest["plan"]["stages"]}
    assert planned["generator"]["noise"]["noise_multiplier"] == training["noise_multiplier"]
