"""Privacy review, issue 12, items 2 and 3, through the real job: an adaptive stage is reported by
the bound that holds under adaptivity, and replace-one either has a valid bound or is refused at
plan time with one message."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.privacy.accountant import ZCDPEvent, rdp_epsilon
from synthpriv.runner import run_job

from ..reliability.conftest import job_config
from ..reliability.test_metadata import table

FAST_GENERATOR = {"epochs": 2, "sample_rate": 0.2, "hidden": 8}


def write_job(tmp_path: Path, **overrides) -> Path:
    data = tmp_path / "data.csv"
    data.write_text(table(150, seed=1))
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(data, tmp_path / "out", seed=3, **overrides)))
    return config


def test_aim_with_gaussian_fraction_099_reports_the_filter_bound(tmp_path: Path) -> None:
    """With aim_gaussian_fraction 0.99, PLD over the realised events gave 0.92–0.95 for a budget
    whose proven (filter) bound is ≈ 1: the report must be the proven bound."""
    config = write_job(tmp_path, pipeline={
        "recipe": "aim",
        "stages": {"marginals": {"aim_gaussian_fraction": 0.99, "aim_rounds_per_attribute": 2,
                                 "aim_round_iterations": 5, "iterations": 20}},
    })
    job = load_job(config)
    result = run_job(job)
    ledger = result.manifest["ledger"]
    (stage,) = result.plan.stages[:1]
    assert ledger["bound"] == "rdp" and ledger["epsilon_pld"] is None
    assert ledger["epsilon"] == pytest.approx(rdp_epsilon([ZCDPEvent(stage.rho)], 1e-6,
                                                          "add_remove"))
    assert 0.999 <= result.manifest["guarantee"]["epsilon_if_noise_secret"] <= 1.0
    (adaptive,) = ledger["adaptive"]
    assert adaptive["spent_rho"] == pytest.approx(adaptive["reserved_rho"], rel=1e-9)
    assert len(adaptive["events"]) > 3  # the 1-way measurements and the rounds are listed


def test_hybrid_reports_rdp_over_the_filter_and_dp_sgd(tmp_path: Path) -> None:
    config = write_job(tmp_path, pipeline={
        "recipe": "hybrid",
        "stages": {"marginals": {"aim_rounds_per_attribute": 2, "aim_round_iterations": 5,
                                 "iterations": 20},
                   "generator": {**FAST_GENERATOR, "complete": ["city"]}},
    })
    result = run_job(load_job(config))
    ledger = result.manifest["ledger"]
    assert ledger["bound"] == "rdp" and ledger["epsilon_pld"] is None
    assert [e["kind"] for e in ledger["events"]] == ["subsampled_gaussian"]
    assert ledger["epsilon"] <= 1.0


def test_dpsgd_under_replace_one_has_a_pld_bound(tmp_path: Path, capsys) -> None:
    config = write_job(tmp_path, budget={"neighbouring": "replace_one"},
                       pipeline={"recipe": "dpsgd", "stages": {"generator": FAST_GENERATOR}})
    assert main(["run", str(config)]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["ledger"]["bound"] == "pld"
    assert manifest["ledger"]["epsilon_rdp"] == float("inf") or manifest["ledger"][
        "epsilon_rdp"] is None
    assert manifest["ledger"]["epsilon"] <= 1.0


def test_hybrid_under_replace_one_is_refused_at_plan_time(tmp_path: Path, capsys) -> None:
    config = write_job(tmp_path, budget={"neighbouring": "replace_one"},
                       pipeline={"recipe": "hybrid"})
    assert main(["run", str(config)]) != 0
    error = capsys.readouterr().err
    assert "recipe 'hybrid'" in error and "add_remove" in error
    assert "Traceback" not in error
    assert not (tmp_path / "out").exists()
