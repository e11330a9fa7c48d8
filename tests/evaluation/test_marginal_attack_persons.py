"""The attack built for marginal recipes, per person (data.person): a target is a whole person, in
or out of a shadow table with all its rows, scored by its cell counts summed over its rows; power
on a release that memorises persons (identity control) and on the person-level pipeline at
ε = 100, a bound within the ledger at ε = 1, and the report section through the real CLI path."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.evaluation.marginal_attack import (
    CellQueries,
    PersonCellQueries,
    exposed_persons,
    marginal_attack,
)
from synthpriv.evaluation.shadow import IdentityGenerator, PipelineGenerator
from synthpriv.table import read_table
from tests.evaluation.tiny import NUMERIC, SCHEMA, tiny_table

ROWS_EACH = 3


def person_table(persons: int, seed: int) -> pd.DataFrame:
    """``persons`` persons of ``ROWS_EACH`` rows each (tiny_table's columns): a person's rows
    share its colour and shape, so a person with a rare shape is rare in every row."""
    rows = tiny_table(persons * ROWS_EACH, seed)
    first = rows.iloc[::ROWS_EACH][["colour", "shape"]].to_numpy()
    rows[["colour", "shape"]] = np.repeat(first, ROWS_EACH, axis=0)
    return rows.assign(pid=np.repeat([f"p{i:03d}" for i in range(persons)], ROWS_EACH))


def person_job(folder, epsilon: float, persons: int = 150, evaluation: dict | None = None,
               per_person: bool = True):
    """The tiny job per person (k = ROWS_EACH: bounding drops nothing) at ``epsilon`` — or, not
    ``per_person``, the same job per row (the person column ignored); its config path, job and
    typed training table (with the person column)."""
    person_table(persons, 1).to_csv(folder / "train.csv", index=False)
    person_table(persons, 2).to_csv(folder / "holdout.csv", index=False)
    key = {"name": "pid", "kind": "id"} if per_person else {"name": "pid", "ignore": True}
    schema = {"columns": [*SCHEMA["columns"], key]}
    persons_data = {"person": "pid", "rows_per_person": ROWS_EACH} if per_person else {}
    config = {
        "name": "tiny", "budget": {"epsilon": epsilon, "delta": 1e-4},
        "data": {"path": "train.csv", "schema": schema, "holdout": "holdout.csv",
                 **persons_data},
        "pipeline": {"recipe": "independent"},
        "evaluation": {"target": "colour", **(evaluation or {"enabled": False})},
        "output": {"dir": str(folder / "out" / "tiny")},
    }
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(config))
    job = load_job(path)
    return path, job, read_table(job.data_path, job.schema)


def attack(real, generators, **sizes):
    settings = {"shadow_tables": 64, "records": 150, "targets": 6, "bootstrap": 200, **sizes}
    return marginal_attack(real, generators, numeric_columns=NUMERIC, neighbouring="add_remove",
                           delta=1e-4, progress=False, person="pid", **settings)


def test_a_persons_features_are_its_rows_counts_summed_and_its_exposure_their_sum():
    table = pd.DataFrame({"pid": ["a", "a", "b", "c"], "x": ["u", "v", "u", "w"]})
    queries = CellQueries.fit(table.drop(columns="pid"), [], max_order=1)
    synthetic = pd.DataFrame({"x": ["u", "u", "v", "w", "w", "w"]})
    person_a = PersonCellQueries(queries, np.array([0, 0]), 1)
    np.testing.assert_array_equal(person_a.features(synthetic, table.iloc[:2]), [[2 + 1]])
    chosen, groups, rest = exposed_persons(table, table["pid"], queries, 2)
    # exposures: a = 1/2 + 1/1, b = 1/2, c = 1/1: a first, then c
    assert chosen["row"].tolist() == [0, 3] and chosen["rows"].tolist() == [2, 1]
    np.testing.assert_allclose(chosen["exposure"], [1.5, 1.0])
    assert [g["pid"].unique().tolist() for g in groups] == [["a"], ["c"]]
    assert rest["pid"].tolist() == ["b"]


def test_a_target_person_is_in_or_out_with_all_its_rows(tmp_path):
    """The shadow tables with and without target t differ by all of t's rows, and no base table
    holds a row of a target person; the key is never a query."""
    real = person_table(60, 1)
    seen: list[pd.DataFrame] = []

    def recording(table: pd.DataFrame, seed: int) -> pd.DataFrame:
        seen.append(table.copy())
        return table.assign(pid="fresh")  # a release's fresh keys: no key matches a real one

    result = attack(real, {"identity": recording}, shadow_tables=16, records=60, targets=4,
                    bootstrap=0)
    assert result["target"] == "a whole person (all its rows)"
    assert result["queries"] == 10  # 4 columns: 4 + 6 pairs, no pid
    targets = result["generators"]["identity"]["targets"]
    target_persons = set(real.loc[[t["row"] for t in targets], "pid"])
    assert len(target_persons) == 4 and all(t["rows"] == ROWS_EACH for t in targets)
    for table in seen:
        counts = table["pid"].value_counts()
        assert all(counts.get(p, 0) in (0, ROWS_EACH) for p in target_persons)
        assert len(table) - sum(counts.get(p, 0) for p in target_persons) == 60
    with pytest.raises(ValueError, match="add_remove"):
        marginal_attack(real, {"identity": recording}, numeric_columns=NUMERIC,
                        neighbouring="replace_one", delta=1e-4, shadow_tables=8, progress=False,
                        person="pid")


def test_per_person_memorised_persons_are_caught_and_the_pipeline_at_eps_100_shows_power(tmp_path):
    """The identity release holds every row of a member person: each of its 3 rows moves its
    cells by one, near-perfect. The person-level pipeline (independent recipe, k = 3) at ε = 100:
    σ ≈ 3 × 0.3 per 1-way count against a shift of 3 in the summed counts: power, i.e. the 95 %
    interval of the mean AUC over 6 persons × 32 test tables lies above ½."""
    _, job, real = person_job(tmp_path, 100.0)
    result = attack(real, {"identity": IdentityGenerator(), "pipeline": PipelineGenerator(job)})
    identity, pipeline = result["generators"]["identity"], result["generators"]["pipeline"]
    assert identity["power"] and identity["mean_auc"] > 0.9
    assert pipeline["power"] and pipeline["mean_auc_ci"][0] > 0.5
    assert max(t["advantage"] for t in identity["targets"]) > 0.8


class PerRowRelease:
    """The same recipe per row (the person column ignored): a person of 3 rows has 3·ε, the
    person-level noise missing. The release's person column: fresh keys."""

    def __init__(self, job) -> None:
        self.pipeline = PipelineGenerator(job)

    def __call__(self, table: pd.DataFrame, seed: int) -> pd.DataFrame:
        return self.pipeline(table.drop(columns="pid"), seed).assign(pid="fresh")


def test_per_person_at_eps_1_the_attack_is_within_the_noise_unless_the_noise_is_per_row(tmp_path):
    """At ε = 1 the person-level pipeline (σ ≈ 3 × 14 per count against a shift of ≤ 3): no bound
    above the ledger's ε and the mean AUC's interval holds ½. The same job per row at ε = 1 (σ a
    third as large: the guarantee per person is only 3ε) on the same shadow tables: the attack
    per person has power — what it must find if the person-level noise went missing. 96 tables:
    48 test tables × 6 persons (measured over attack seeds 0–2, 64 and 96 tables: per row the
    interval's lower end 0.52–0.64, per person it held ½ every time)."""
    _, job, real = person_job(tmp_path, 1.0)
    _, per_row, _ = person_job(tmp_path, 1.0, per_person=False)
    result = attack(real, {"person": PipelineGenerator(job), "row": PerRowRelease(per_row)},
                    shadow_tables=96)
    person, row = result["generators"]["person"], result["generators"]["row"]
    assert person["worst_case"]["eps_lower_bound"] <= 1.0
    assert person["mean_auc_ci"][0] <= 0.5 <= person["mean_auc_ci"][1]
    assert row["power"] and row["mean_auc"] > person["mean_auc"] + 0.1


def test_the_run_per_person_reports_the_attack_on_persons(tmp_path, capsys):
    evaluation = {"controls": [], "anonymeter": False, "quality_report": False, "bootstrap": 20,
                  "marginal_attack": {"shadow_tables": 8, "records": 60, "targets": 2}}
    path, _, _ = person_job(tmp_path, 1.0, persons=60, evaluation=evaluation)
    assert main(["run", str(path)]) == 0
    assert "mean AUC on the exposed persons" in capsys.readouterr().out
    folder = tmp_path / "out" / "tiny.evaluation"
    result = json.loads((folder / "report.json").read_text())["privacy"]["marginal_attack"]
    assert "skipped" not in result and result["target"] == "a whole person (all its rows)"
    assert set(result["generators"]) == {"pipeline", "identity"}
    assert all(t["rows"] == ROWS_EACH for t in result["generators"]["pipeline"]["targets"])
    text = (folder / "report.md").read_text()
    assert "training persons most alone in their cells" in text
    assert "summed over the person's rows" in text and "Each exposed person" in text
