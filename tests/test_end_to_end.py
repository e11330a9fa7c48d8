"""End to end: `synthpriv run` on a 2,000-row sample of Adult, and bad jobs that leave nothing."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from synthpriv.cli import main
from synthpriv.schema import load_schema
from synthpriv.table import read_table

from .conftest import ADULT, ROOT


def test_run_writes_a_release_that_parses_back_to_the_schema(write_job, tmp_path, capsys) -> None:
    out = tmp_path / "release"
    assert main(["run", str(write_job({"seed": 3})), "--out", str(out), "--epsilon", "0.5"]) == 0
    printed = capsys.readouterr().out
    assert re.search(r"privacy: NONE — seeded run, NOT FOR RELEASE \(ε = 0\.(49|50)\d*, δ = 1e-05 "
                     r"only if the noise were secret", printed)
    schema = load_schema(ADULT / "schema.yaml")
    synthetic = read_table(out / "synthetic.csv", schema)
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["guarantee"]["epsilon"] is None  # seeded: no guarantee
    assert manifest["guarantee"]["epsilon_if_noise_secret"] <= 0.5
    assert manifest["ledger"]["epsilon"] == manifest["guarantee"]["epsilon_if_noise_secret"]
    assert abs(len(synthetic) - 2000) < 200  # DP estimate of n: σ ≈ 15 per count, 15 marginals
    assert manifest["records"]["released"] == len(synthetic)
    assert manifest["randomness"]["mode"] == "seeded"
    text = (out / "manifest.json").read_text()
    assert '"seed"' not in text
    assert list(synthetic.columns) == schema.names


def test_plan_prints_stages_noise_and_composed_epsilon(capsys) -> None:
    assert main(["plan", str(ROOT / "configs" / "adult.yaml")]) == 0
    printed = capsys.readouterr().out
    assert "marginals" in printed and "sigma_first_rounds" in printed
    assert "composed plan: ε = 1.0000" in printed or "composed plan: ε = 0.99" in printed


def test_the_default_job_is_the_bundled_schema_without_edges_binned_under_dp(capsys) -> None:
    hand, bare = load_schema(ADULT / "schema.yaml"), load_schema(ADULT / "schema-no-edges.yaml")
    assert bare.names == hand.names
    for a, b in zip(hand.columns, bare.columns, strict=True):
        assert a.model_dump(exclude={"edges"}) == b.model_dump(exclude={"edges"})  # only edges go
    numeric = [c for c in bare.modelled if c.kind != "categorical"]
    assert len(numeric) == 5 and all(c.adaptive for c in numeric)
    assert main(["plan", str(ROOT / "configs" / "adult.yaml")]) == 0
    printed = capsys.readouterr().out
    assert "sigma_count" in printed  # the noisy count that sizes the adaptive grid is planned
    assert "domain " not in printed  # bounds and categories are public: no DP domain step


def test_schema_infer_drafts_a_schema_and_warns(capsys) -> None:
    assert main(["schema", "infer", "--from-data", str(ADULT / "adult_test.csv")]) == 0
    captured = capsys.readouterr()
    assert "NOT private" in captured.err
    assert "kind: integer" in captured.out and "name: native-country" in captured.out


@pytest.mark.parametrize(
    ("overrides", "message"),
    [
        ({"budget": {"epsilon": 1.0, "delta": 0.01}}, "is not below 1/n"),
        ({"pipeline": {"recipe": "nonexistent"}}, "recipe 'nonexistent' not found"),
        ({"pipeline": {"recipe": "independent", "stages": {"marginals": {"sigmaa": 3}}}},
         "unknown key 'sigmaa'. Did you mean 'sigma'"),
        ({"pipeline": {"recipe": "independent", "stages": {"generator": {}}}},
         "does not run"),
        ({"data": {"path": "missing.csv"}}, "data file not found"),
    ],
)
def test_bad_jobs_fail_cleanly_and_leave_no_release(
    write_job, tmp_path: Path, capsys, overrides: dict, message: str
) -> None:
    out = tmp_path / "release"
    assert main(["run", str(write_job(overrides)), "--out", str(out)]) == 2
    error = capsys.readouterr().err
    assert message in error and "Traceback" not in error
    assert not out.exists()


def test_existing_release_is_not_overwritten_without_force(write_job, tmp_path, capsys) -> None:
    out = tmp_path / "release"
    config = str(write_job())
    assert main(["run", config, "--out", str(out)]) == 0
    before = (out / "manifest.json").read_text()
    assert main(["run", config, "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (out / "manifest.json").read_text() == before
    assert main(["run", config, "--out", str(out), "--force"]) == 0


@pytest.mark.parametrize("recipe", ["independent", "mst", "aim"])
def test_every_marginal_recipe_releases_within_budget(write_job, tmp_path, recipe: str) -> None:
    out = tmp_path / recipe
    overrides = {"pipeline": {"recipe": recipe}, "seed": 5}
    if recipe == "aim":  # a small workload keeps the test fast; the recipe is the same code path
        overrides["pipeline"]["stages"] = {
            "marginals": {"aim_rounds_per_attribute": 1, "aim_round_iterations": 20,
                          "iterations": 50}
        }
    assert main(["run", str(write_job(overrides)), "--out", str(out)]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    synthetic = read_table(out / "synthetic.csv", load_schema(ADULT / "schema.yaml"))
    assert manifest["guarantee"]["epsilon_if_noise_secret"] <= 1.0
    assert manifest["records"]["released"] == len(synthetic) > 0
