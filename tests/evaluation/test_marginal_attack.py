"""The attack built for marginal recipes: exposure, the likelihood ratio, power where there is
leakage (identity; the real pipeline at ε = 100), a bound within the ledger's ε at ε = 1, and the
report section through the real CLI path."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.evaluation.marginal_attack import (
    PRIOR_TABLES,
    CellQueries,
    exposed_targets,
    fit_likelihood_ratio,
    marginal_attack,
    mean_auc_interval,
)
from synthpriv.evaluation.shadow import IdentityGenerator, PipelineGenerator
from synthpriv.table import read_table
from tests.evaluation.tiny import NUMERIC, tiny_table, write_tiny_job


def tiny_job(tmp_path, epsilon: float, recipe: str = "independent"):
    path = write_tiny_job(tmp_path)
    raw = yaml.safe_load(path.read_text())
    raw["budget"]["epsilon"] = epsilon
    raw["pipeline"]["recipe"] = recipe
    path.write_text(yaml.safe_dump(raw))
    job = load_job(path)
    return job, read_table(job.data_path, job.schema)


def attack(real, generators, **sizes):
    settings = {"shadow_tables": 64, "records": 100, "targets": 6, "bootstrap": 200, **sizes}
    return marginal_attack(real, generators, numeric_columns=NUMERIC, neighbouring="add_remove",
                           delta=1e-4, progress=False, **settings)


def test_counts_are_rows_in_the_targets_cells():
    table = pd.DataFrame({"a": ["x", "x", "y", "y"], "b": ["p", "q", "q", "q"]})
    queries = CellQueries.fit(table, [], max_order=2)
    assert queries.names() == ["a", "b", "a × b"]
    counts = queries.counts(table, pd.DataFrame({"a": ["y", "x"], "b": ["q", "r"]}))
    np.testing.assert_array_equal(counts, [[2, 3, 2], [2, 0, 0]])  # "r" is in no row


def test_a_record_alone_in_its_cells_is_the_most_exposed():
    table = tiny_table(300, 0)
    table.loc[17] = ["blue", "odd", 20, 0]  # alone in most of its 1- and 2-way cells
    chosen = exposed_targets(table, CellQueries.fit(table, NUMERIC, 2), 3)
    assert chosen["row"].iloc[0] == 17
    assert chosen["exposure"].is_monotonic_decreasing and chosen["row"].is_unique


def test_weights_are_the_shift_over_the_shrunk_pooled_variance():
    x = np.array([[3.0, 1.0], [5.0, 1.0], [0.0, 1.0], [2.0, 1.0]])
    labels = np.array([True, True, False, False])
    weights, centre = fit_likelihood_ratio(x, labels)
    # query 0: shift 3, residuals ±1 in each class: (4 + prior) / (2 + prior) count²
    np.testing.assert_allclose(weights[0], 3 / ((4 + PRIOR_TABLES) / (2 + PRIOR_TABLES)))
    np.testing.assert_allclose(centre, [2.5, 1.0])
    assert weights[1] == 0  # a query the record does not move gets no weight, however constant


def test_the_mean_auc_interval_resamples_whole_test_tables():
    scores = np.array([[1.0, 0.0], [0.0, 1.0], [2.0, 2.0], [-1.0, -1.0]])
    truth = np.array([[True, False], [False, True], [True, True], [False, False]])
    assert mean_auc_interval(scores, truth, 50, np.random.default_rng(0)) == [1.0, 1.0]
    assert mean_auc_interval(scores, ~truth, 50, np.random.default_rng(0)) == [0.0, 0.0]
    one = np.array([[True, False]])
    assert mean_auc_interval(np.zeros((1, 2)), one, 10, np.random.default_rng(0)) is None
    assert mean_auc_interval(scores, truth, 0, np.random.default_rng(0)) is None


def test_the_identity_control_is_caught_and_the_pipeline_at_eps_100_shows_power(tmp_path):
    """Power where there is leakage. 32 test tables per target (16 in, 16 out): one target's AUC
    has standard error √(33 / (12·16·16)) ≈ 0.10 at ½, the mean over 6 targets ≈ 0.04 if
    independent. The identity release moves a unique record's cells by exactly one: near-perfect.
    The real pipeline (independent recipe) at ε = 100: σ ≈ 0.3 against a shift of one in each of
    the target's 1-way counts; 'clearly above ½' = the 95 % bootstrap interval of the mean AUC
    (over test tables) lies above ½."""
    job, real = tiny_job(tmp_path, 100.0)
    result = attack(real, {"identity": IdentityGenerator(), "pipeline": PipelineGenerator(job)})
    identity, pipeline = result["generators"]["identity"], result["generators"]["pipeline"]
    assert result["test_tables"] == 32 and len(pipeline["targets"]) == 6
    assert identity["power"] and identity["mean_auc"] > 0.9
    assert pipeline["power"] and pipeline["mean_auc_ci"][0] > 0.5
    assert identity["mean_auc"] > pipeline["mean_auc"]
    exposures = [t["exposure"] for t in pipeline["targets"]]
    assert exposures == sorted(exposures, reverse=True)


def test_at_eps_1_the_bound_stays_within_the_ledger(tmp_path):
    """σ ≈ 14 against a shift of one: the attack must not certify more than the ledger's ε (a
    correct mechanism exceeds it with probability ≤ 2α over all targets)."""
    job, real = tiny_job(tmp_path, 1.0)
    result = attack(real, {"pipeline": PipelineGenerator(job)}, shadow_tables=32, targets=3)
    worst = result["generators"]["pipeline"]["worst_case"]
    assert worst["eps_lower_bound"] <= 1.0
    assert result["generators"]["pipeline"]["mean_auc"] < 0.75  # s.e. ≈ 0.08 over 3 × (8 + 8)


@pytest.mark.slow
def test_at_eps_1_the_bound_could_exceed_the_ledger_and_does_not(tmp_path):
    """Enough test tables that a perfect attack would certify more than ε = 1 (48 test tables, 12
    in and 12 out scored after choosing the threshold: at most ≈ 1.26), so the check can fail."""
    job, real = tiny_job(tmp_path, 1.0)
    result = attack(real, {"pipeline": PipelineGenerator(job)}, shadow_tables=96, targets=1)
    worst = result["generators"]["pipeline"]["worst_case"]
    assert worst["max_certifiable"] > 1.0
    assert worst["eps_lower_bound"] <= 1.0


def test_the_default_run_reports_the_attack(tmp_path, capsys):
    evaluation = {"controls": [], "anonymeter": False, "quality_report": False, "bootstrap": 20,
                  "marginal_attack": {"shadow_tables": 8, "records": 60, "targets": 2}}
    config = write_tiny_job(tmp_path, evaluation=evaluation)
    assert main(["run", str(config)]) == 0
    assert "attack built for marginal recipes, mean AUC on the exposed rows" in capsys.readouterr().out
    folder = tmp_path / "out" / "tiny.evaluation"
    report = json.loads((folder / "report.json").read_text())
    result = report["privacy"]["marginal_attack"]
    assert set(result["generators"]) == {"pipeline", "identity"}
    assert result["threat_model"] == {"data_knowledge": "auxiliary", "generator_knowledge": "rerun"}
    assert "marginal/pipeline" in report["privacy"]["verdict"]["bounds"]
    for page in ("report.md", "report.html"):
        text = (folder / page).read_text()
        assert "Attack built for marginal recipes" in text and "The attacker knows" in text
        assert "most telling marginals" in text and "best advantage" in text
    rows = [line for line in (folder / "report.md").read_text().splitlines()
            if line.startswith("| pipeline |")]
    assert len(rows) == 2  # one per exposed target
