"""Adjacency is declared once, and every sensitivity the code assumes is checked by brute force.

On small tables over a 12-row domain we enumerate *every* neighbour (add any possible row, remove
any row, replace any row by any possible row) and compare the largest change of each query with
the sensitivity the code passes to its mechanism:

* marginal counts (``Dataset.marginal``), L1 and L2: ``histogram_l1/l2_sensitivity``;
* the record count (the empty marginal);
* MST's selection scores (``selection.l1_error``) against a fixed model: ``stage.sensitivity.l1``;
* AIM's weighted scores (``aim.aim_scores``): ``aim.aim_score_sensitivity``.

Models are fixed across neighbours because they are post-processing of earlier noisy outputs.
"""

from __future__ import annotations

import ast
import itertools
import math
from pathlib import Path

import numpy as np
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.domain import Dataset, Domain
from synthpriv.marginals.aim import aim_score_sensitivity, aim_scores
from synthpriv.marginals.independent import IndependentModel
from synthpriv.marginals.measurement import Measurement
from synthpriv.marginals.selection import downward_closure, l1_error, workload, workload_weights
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.pipeline import plan_job
from synthpriv.privacy.mechanisms import histogram_l1_sensitivity, histogram_l2_sensitivity
from synthpriv.runner import run_job
from synthpriv.stage import PlanContext

from .conftest import GOOD_ROWS, job_config

DOMAIN = Domain(("a", "b", "c"), (2, 3, 2))
ALL_ROWS = np.array(list(itertools.product(*(range(s) for s in DOMAIN.shape))), dtype=np.int64)
RELATIONS = ("add_remove", "replace_one")
CLIQUES = [c for k in range(1, 4) for c in itertools.combinations(DOMAIN.attributes, k)]


def tables() -> list[Dataset]:
    """Small tables: empty, one row, and random tables of 3 to 7 rows."""
    rng = np.random.default_rng(11)
    out = [np.zeros((0, 3), dtype=np.int64), ALL_ROWS[[5]]]
    out += [ALL_ROWS[rng.integers(0, len(ALL_ROWS), n)] for n in (3, 5, 7)]
    return [Dataset(codes, DOMAIN) for codes in out]


def neighbours(data: Dataset, relation: str) -> list[Dataset]:
    """Every neighbour of ``data`` under ``relation`` over the whole domain."""
    codes = data.codes
    found = []
    if relation == "add_remove":
        found += [np.vstack([codes, row]) for row in ALL_ROWS]
        found += [np.delete(codes, i, axis=0) for i in range(len(codes))]
    else:
        for i, row in itertools.product(range(len(codes)), ALL_ROWS):
            replaced = codes.copy()
            replaced[i] = row
            found.append(replaced)
    return [Dataset(c, DOMAIN) for c in found]


def pairs(relation: str):
    for data in tables():
        for neighbour in neighbours(data, relation):
            yield data, neighbour


@pytest.mark.parametrize("relation", RELATIONS)
def test_marginal_counts_change_by_exactly_the_assumed_l1_and_l2_sensitivity(relation) -> None:
    l1 = l2 = 0.0
    for data, neighbour in pairs(relation):
        for clique in CLIQUES:
            change = (neighbour.marginal(clique) - data.marginal(clique)).ravel()
            l1, l2 = max(l1, np.abs(change).sum()), max(l2, np.sqrt((change**2).sum()))
    assert l1 == histogram_l1_sensitivity(relation)
    assert math.isclose(l2, histogram_l2_sensitivity(relation))


@pytest.mark.parametrize(("relation", "sensitivity"), [("add_remove", 1.0), ("replace_one", 0.0)])
def test_record_count_sensitivity(relation, sensitivity) -> None:
    """The count (empty marginal) moves by 1 under add/remove and not at all under replace-one,
    so the histogram sensitivity the code uses for every marginal also covers it."""
    largest = max(abs(float(n.marginal(()) - d.marginal(()))) for d, n in pairs(relation))
    assert largest == sensitivity <= histogram_l2_sensitivity(relation)


def fixed_models(rng: np.random.Generator) -> list[IndependentModel]:
    """Models built from made-up noisy 1-way measurements (they do not depend on the table)."""
    models = []
    for scale in (0.0, 1.0, 3.0, 20.0):
        measured = [Measurement((a,), rng.uniform(0, scale, DOMAIN[a]) + 1e-9, 1.0)
                    for a in DOMAIN.attributes]
        models.append(IndependentModel.from_measurements(DOMAIN, measured))
    return models


def stage_sensitivity(relation: str):
    """The sensitivities the marginals stage passes to its mechanisms under ``relation``."""
    return MarginalsStage({}, PlanContext(DOMAIN, relation, 1e-6), "test").sensitivity


@pytest.mark.parametrize("relation", RELATIONS)
def test_mst_selection_scores_have_the_assumed_sensitivity(relation) -> None:
    rng = np.random.default_rng(3)
    largest = 0.0
    for model in fixed_models(rng):
        for data, neighbour in pairs(relation):
            for pair in itertools.combinations(DOMAIN.attributes, 2):
                fitted = model.project(pair)
                change = (l1_error(neighbour.marginal(pair), fitted)
                          - l1_error(data.marginal(pair), fitted))
                largest = max(largest, abs(change))
    assert math.isclose(largest, stage_sensitivity(relation).l1)


@pytest.mark.parametrize("relation", RELATIONS)
@pytest.mark.parametrize("degree", [2, 3])
def test_aim_weighted_scores_have_the_assumed_sensitivity(relation, degree) -> None:
    rng = np.random.default_rng(4)
    candidates = downward_closure(workload(DOMAIN.attributes, degree))
    weights = workload_weights(candidates, workload(DOMAIN.attributes, degree))
    assumed = aim_score_sensitivity(candidates, weights, stage_sensitivity(relation).l1)
    largest = 0.0
    for model in fixed_models(rng):
        for data, neighbour in pairs(relation):
            before = aim_scores({c: data.marginal(c) for c in candidates}, model, candidates,
                                weights, sigma=2.0)
            after = aim_scores({c: neighbour.marginal(c) for c in candidates}, model, candidates,
                               weights, sigma=2.0)
            largest = max(largest, float(np.abs(after - before).max()))
    assert math.isclose(largest, assumed)
    assert assumed == max(weights.values()) * histogram_l1_sensitivity(relation)


# ------------------------------------------------------------------ adjacency declared once
PACKAGE = Path(__file__).resolve().parents[2] / "synthpriv"
# Modules that may name a neighbouring relation: the config declares the choice, the mechanisms
# map it to sensitivities, the accountant to dp-accounting, the runner words the guarantee,
# partition selection maps it to its δ. Evaluation (not released) simulates attacks under it.
DECLARING = {"config.py", "privacy/mechanisms.py", "privacy/accountant.py", "runner.py",
             "privacy/partition.py"}


def test_neighbouring_relations_are_named_only_where_declared_or_mapped() -> None:
    naming = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and node.value in RELATIONS:
                naming.add(relative)
    assert {m for m in naming if not m.startswith("evaluation/")} <= DECLARING
    assert "config.py" in naming


def test_one_declared_relation_reaches_plan_stage_ledger_and_manifest(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text(GOOD_ROWS)
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(
        data, tmp_path / "out", seed=1, pipeline={"recipe": "mst"},
        budget={"epsilon": 1.0, "delta": 1e-6, "neighbouring": "replace_one"},
    )))
    job = load_job(config)
    plan, stages = plan_job(job)
    marginals = stages[0][0]
    assert plan.neighbouring == marginals.context.neighbouring == "replace_one"
    assert (marginals.sensitivity.l1, marginals.sensitivity.l2) == (2.0, math.sqrt(2.0))
    result = run_job(job)
    assert result.ledger.neighbouring == "replace_one"
    assert result.manifest["guarantee"]["neighbouring"] == "replace_one"
    assert result.manifest["ledger"]["neighbouring"] == "replace_one"
    assert "replacing one row" in result.manifest["guarantee"]["statement"]
    # σ of each measurement = noise multiplier × the relation's L2 sensitivity
    planned = plan.stages[0].noise
    events = [e for e in result.ledger.events if e.label.startswith("marginal")]
    assert {round(e.noise_multiplier * math.sqrt(2.0), 9) for e in events} == {
        round(planned["sigma_one_way"], 9), round(planned["sigma_two_way"], 9)
    }
