"""Public constraints (synthpriv.constraints) and numeric derived formulas: checked against the
schema when it is loaded, enforced when sampling (rejection = the model conditioned on the rules),
counted in the evaluation report, and end to end through ``synthpriv.cli.main``."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.constraints import (
    MAX_ROUNDS,
    ConstraintError,
    Enforcer,
    breaking,
    constraint_report,
    holds,
)
from synthpriv.encoding import TableEncoder
from synthpriv.errors import DataError, SchemaError
from synthpriv.schema import parse_schema
from synthpriv.table import read_table
from tests.evaluation.tiny import SCHEMA, tiny_table, write_tiny_job

COLUMNS = [
    {"name": "Apps", "kind": "integer", "lower": 0, "upper": 100},
    {"name": "Accept", "kind": "integer", "lower": 0, "upper": 100},
    {"name": "Top10", "kind": "continuous", "lower": 0, "upper": 100},
    {"name": "sex", "kind": "categorical", "categories": ["Male", "Female"], "missing": True},
    {"name": "role", "kind": "categorical", "categories": ["Husband", "Wife", "Child"]},
]


def schema_with(*rules: dict, columns: list[dict] = COLUMNS):
    return parse_schema({"columns": columns, "constraints": list(rules)}, "s.yaml")


def test_rules_are_read_and_described() -> None:
    schema = schema_with({"check": "Accept <= Apps"}, {"check": "Top10 <= 100"},
                         {"forbidden": {"role": "Wife", "sex": "Male"}},
                         {"allowed": {"columns": ["role", "sex"],
                                      "values": [["Husband", "Male"], ["Wife", "Female"]]}})
    assert len(schema.constraints) == 4


@pytest.mark.parametrize(("rule", "message"), [
    ({"check": "Accept <= Apples"}, r"constraints\[1\] 'Accept <= Apples': 'Apples' is not a column"),
    ({"check": "sex <= Apps"}, "'sex' is categorical"),
    ({"check": "Apps >= Accept + 101"}, "no row within the schema's bounds can satisfy it"),
    ({"check": "Top10 > 100"}, "no row within the schema's bounds can satisfy it"),
    ({"check": "Apps = Accept"}, "not a formula"),
    ({"check": "Apps"}, "compares nothing"),
    ({"check": "1 <= 2"}, "name a column"),
    ({"forbidden": {"role": "Wife", "Apps": 3}}, "'Apps' is numeric"),
    ({"forbidden": {"role": "Mother"}}, r"\['Mother'\] are not categories of 'role'"),
    ({"forbidden": {"role": ["Husband", "Wife", "Child"]}}, "forbids every combination"),
    ({"allowed": {"columns": ["role", "sex"], "values": [["Wife"]]}}, "has 1 values for 2 columns"),
    ({"allowed": {"columns": ["role", "role"], "values": [["Wife", "Wife"]]}}, "columns repeat"),
    ({"require": "Apps > 0"}, "constraints.0"),
])
def test_a_bad_rule_is_refused_when_the_schema_is_loaded_naming_it(rule: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        schema_with(rule)


@pytest.mark.parametrize(("rule", "message"), [
    ({"check": "Accept <= Apps"}, "'Apps' has no public bounds"),
    ({"forbidden": {"kind": "x"}}, "'kind' has no public categories"),
])
def test_a_rule_over_a_domain_left_to_the_dp_step_is_refused(rule: dict, message: str) -> None:
    # the DP bounds and categories exist only after the data is read: a rule must not wait on them
    columns = [{"name": "Apps", "kind": "integer"}, COLUMNS[1],
               {"name": "kind", "kind": "categorical", "other": "rest"}]
    with pytest.raises(SchemaError, match=message):
        schema_with(rule, columns=columns)


def test_forbidden_and_allowed_rows_and_missing_values_obey() -> None:
    table = pd.DataFrame({"role": ["Wife", "Wife", "Husband", "Child"],
                          "sex": ["Male", "Female", "Female", np.nan]})
    forbidden = schema_with({"forbidden": {"role": "Wife", "sex": ["Male"]}}).constraints[0]
    assert holds(forbidden, table).tolist() == [False, True, True, True]
    allowed = schema_with({"allowed": {"columns": ["role", "sex"], "values": [
        ["Husband", "Male"], ["Wife", "Female"], ["Child", "Male"], ["Child", "Female"]]}}
    ).constraints[0]
    assert holds(allowed, table).tolist() == [False, True, False, True]  # missing sex obeys


def test_rejection_draws_the_model_conditioned_on_the_rules() -> None:
    """Draws uniform on a 10 × 10 grid, rule a <= b: the kept rows are uniform on the 55 cells
    where the rule holds (the conditional), each cell within 5 binomial sd of its share."""
    schema = schema_with({"check": "Accept <= Apps"})
    rng = np.random.default_rng(7)

    def draw(size: int) -> pd.DataFrame:
        return pd.DataFrame({"Apps": rng.integers(0, 10, size), "Accept": rng.integers(0, 10, size)})

    enforcer = Enforcer(schema.constraints, draw)
    rows = pd.concat([enforcer.apply(draw(5_500)) for _ in range(10)])
    assert not breaking(schema.constraints, rows).any()
    counts = rows.groupby(["Accept", "Apps"]).size()
    assert len(counts) == 55
    expected, sd = 55_000 / 55, np.sqrt(55_000 * (1 / 55) * (54 / 55))
    assert (counts - expected).abs().max() < 5 * sd
    figures = enforcer.figures
    assert figures["rows_drawn"] > 55_000 and figures["rules"][0]["draws_breaking"] > 0
    assert abs(figures["acceptance_rate"] - 0.55) < 0.02  # 55 of the 100 cells


def test_a_model_that_never_obeys_fails_with_the_rule_named() -> None:
    schema = schema_with({"check": "Accept <= Apps"})
    calls = []

    def draw(size: int) -> pd.DataFrame:
        calls.append(size)
        return pd.DataFrame({"Apps": np.zeros(size, int), "Accept": np.ones(size, int)})

    with pytest.raises(ConstraintError, match="most often 'Accept <= Apps'.*raise budget.epsilon"):
        Enforcer(schema.constraints, draw).apply(draw(10))
    assert len(calls) == MAX_ROUNDS + 1 and max(calls) <= 50 * 10 + 1000  # bounded work


# --------------------------------------------------------------------------- derived formulas

FORMULA_COLUMNS = [
    {"name": "casual", "kind": "integer", "lower": 0, "upper": 400},
    {"name": "registered", "kind": "integer", "lower": 0, "upper": 900, "missing": True},
    {"name": "bikers", "kind": "integer", "lower": 0, "upper": 1300, "missing": True,
     "derived_from": {"formula": "casual + registered"}},
    {"name": "wage", "kind": "continuous", "lower": 20, "upper": 320},
    {"name": "logwage", "kind": "continuous", "lower": 2, "upper": 6, "precision": 4,
     "derived_from": {"formula": "log(wage)"}},
]


def test_formula_columns_are_not_modelled_and_filled_in_on_decode() -> None:
    schema = parse_schema({"columns": FORMULA_COLUMNS}, "s")
    encoder = TableEncoder(schema)
    assert encoder.domain.attributes == ("casual", "registered", "wage")
    codes = np.column_stack([np.random.default_rng(1).integers(0, n, 500)
                             for n in encoder.domain.shape])
    table = encoder.decode(codes, np.random.default_rng(2))
    present = table["registered"].notna()
    assert (table["bikers"][present] == table["casual"][present] + table["registered"][present]).all()
    assert table["bikers"][~present].isna().all()
    np.testing.assert_allclose(table["logwage"], np.log(table["wage"]).round(4))


@pytest.mark.parametrize(("change", "message"), [
    ({"derived_from": {"formula": "log(casual)"}}, r"log\(casual\) is undefined"),
    ({"derived_from": {"formula": "casual + sex"}}, "'sex' is not a column"),
    ({"derived_from": {"formula": "casual + bikers"}}, "'bikers' is derived itself"),
    ({"derived_from": {"formula": "casual + registered"}, "missing": False}, "set 'missing: true'"),
    ({"derived_from": {"formula": "open('x')"}}, "is not allowed"),
    ({"derived_from": {"formula": "3"}}, "reads no column"),
])
def test_a_bad_formula_is_refused_when_the_schema_is_loaded(change: dict, message: str) -> None:
    columns = [dict(c) for c in FORMULA_COLUMNS]
    columns[2] = {**columns[2], **change}
    with pytest.raises(SchemaError, match=message):
        parse_schema({"columns": columns}, "s")


def test_data_that_breaks_a_formula_is_refused_with_its_row(tmp_path: Path) -> None:
    schema = parse_schema({"columns": FORMULA_COLUMNS}, "s")
    good = "casual,registered,bikers,wage,logwage\n3,4,7,100,4.60517\n1,,,20.5,3.020425\n"
    (tmp_path / "good.csv").write_text(good)
    assert read_table(tmp_path / "good.csv", schema)["bikers"].tolist()[0] == 7
    (tmp_path / "bad.csv").write_text(good + "3,4,8,100,4.60517\n")
    with pytest.raises(DataError, match="'bikers' is declared derived_from formula 'casual \\+ "
                                        "registered', but disagrees with it at row 3"):
        read_table(tmp_path / "bad.csv", schema)


# --------------------------------------------------------------------------- end to end


def _constraint_job(folder: Path) -> dict:
    """The tiny job with two formula columns, three rules and a draft schema; its schema."""
    write_tiny_job(folder, rows=400, seed=1, evaluation={
        "attacks": False, "quality_report": False, "controls": [], "anonymeter": False})
    schema = json.loads(json.dumps(SCHEMA))
    schema["drafted_by"] = "a test"  # a plan-time warning, to find in the manifest
    schema["columns"] += [
        {"name": "total", "kind": "integer", "lower": 0, "upper": 70,
         "derived_from": {"formula": "size + weight"}},
        {"name": "logw", "kind": "continuous", "lower": 0, "upper": 4, "precision": 3,
         "derived_from": {"formula": "log(weight + 1)"}},
    ]
    schema["constraints"] = [{"check": "size <= weight"}, {"check": "2 * size <= weight <= 45"},
                             {"forbidden": {"colour": "blue", "shape": "odd"}}]
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    for name, seed in (("train", 1), ("holdout", 2)):
        table = tiny_table(400, seed)
        table["total"] = table["size"] + table["weight"]
        table["logw"] = np.log(table["weight"] + 1).round(3)
        table.to_csv(folder / f"{name}.csv", index=False)
    return schema


def test_run_enforces_rules_and_fills_formulas_on_every_row(tmp_path: Path) -> None:
    """Through the CLI: every released row obeys every rule and every formula; the manifest
    counts the model's rejected draws and records the plan's warnings."""
    loaded = parse_schema(_constraint_job(tmp_path), "s")
    assert main(["run", str(tmp_path / "job.yaml"), "--no-evaluation"]) == 0
    release = tmp_path / "out" / "tiny"
    synthetic = read_table(release / "synthetic.csv", loaded)  # checks both formulas on every row
    assert not breaking(loaded.constraints, synthetic).any()
    manifest = json.loads((release / "manifest.json").read_text())
    figures = manifest["constraints"]
    assert figures["rows_drawn"] > len(synthetic)  # the independent model breaks the rules often
    assert [r["rule"] for r in figures["rules"]][0] == "size <= weight"
    assert figures["rules"][1]["draws_breaking"] > 0
    assert any("is a draft written by 'a test'" in w for w in manifest["plan_warnings"])


@pytest.mark.slow
def test_the_evaluation_counts_real_and_synthetic_rows_breaking_each_rule(
    tmp_path: Path, capsys
) -> None:
    """Through the CLI: the report counts, per rule, the real and synthetic rows that break it,
    and says when the real table breaks a rule the release enforced."""
    loaded = parse_schema(_constraint_job(tmp_path), "s")
    assert main(["run", str(tmp_path / "job.yaml")]) == 0
    printed = capsys.readouterr().out
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    real = read_table(tmp_path / "train.csv", loaded)
    rules = report["constraints"]["rules"]
    assert [r["real_rows_breaking"] for r in rules] == breaking(loaded.constraints, real).sum(0).tolist()
    assert [r["synthetic_rows_breaking"] for r in rules] == [0, 0, 0]
    assert rules[1]["real_rows_breaking"] > 0  # weight > 45 or weight < 2·size occurs in the data
    assert "constraint '2 * size <= weight <= 45'" in printed and "enforces it as if" in printed
    assert "Public constraints" in (tmp_path / "out" / "tiny.evaluation" / "report.md").read_text()


def test_constraint_report_counts_each_rule_on_both_tables() -> None:
    schema = schema_with({"check": "Accept <= Apps"}, {"forbidden": {"role": "Wife", "sex": "Male"}})
    real = pd.DataFrame({"Apps": [5, 5, 1], "Accept": [3, 6, 2], "Top10": [1.0, 2.0, 3.0],
                         "sex": ["Male", "Male", np.nan], "role": ["Wife", "Child", "Wife"]})
    synthetic = real.assign(Accept=[1, 1, 1])
    report = constraint_report(schema.constraints, real, synthetic)
    assert [(r["real_rows_breaking"], r["synthetic_rows_breaking"]) for r in report["rules"]] == [
        (2, 0), (1, 1)]
    assert report["rules"][0]["real_fraction"] == pytest.approx(2 / 3)
    assert len(report["notes"]) == 2 and "2 real rows (66.67%) break it" in report["notes"][0]


@pytest.mark.slow
def test_the_dp_sgd_generator_samples_through_the_same_rejection(tmp_path: Path) -> None:
    """The generator-alone recipe draws through the one sampler: its rows obey the rules too."""
    loaded = parse_schema(_constraint_job(tmp_path), "s")
    config = yaml.safe_load((tmp_path / "job.yaml").read_text())
    config["pipeline"] = {"recipe": "dpsgd", "stages": {"generator": {  # as tests/generators
        "epochs": 1, "sample_rate": 0.02, "hidden": 8}}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    assert main(["run", str(tmp_path / "job.yaml"), "--no-evaluation", "--epsilon", "0.8"]) == 0
    synthetic = read_table(tmp_path / "out" / "tiny" / "synthetic.csv", loaded)
    assert not breaking(loaded.constraints, synthetic).any()
    manifest = json.loads((tmp_path / "out" / "tiny" / "manifest.json").read_text())
    assert manifest["constraints"]["rows_drawn"] >= len(synthetic)


def test_the_readme_examples_are_valid_schema_entries() -> None:
    """docs/schema.md's formula columns and constraints, as written, load (with the columns they
    name declared around them)."""
    text = (Path(__file__).resolve().parents[1] / "docs" / "schema.md").read_text()
    section = text[text.index("### Public formulas and constraints"):]
    columns_block, rules_block = re.findall(r"```yaml\n(.*?)```", section, re.S)[:2]
    columns = yaml.safe_load(columns_block) + [
        {"name": name, "kind": "integer", "lower": 0, "upper": 900}
        for name in ("casual", "registered", "Accept", "Apps", "Top10", "Top25", "Enroll")
    ] + [{"name": "relationship", "kind": "categorical", "categories": ["Husband", "Wife", "Own-child"]},
         {"name": "sex", "kind": "categorical", "categories": ["Male", "Female"]}]
    schema = parse_schema({"columns": columns, **yaml.safe_load(rules_block)}, "README")
    assert len(schema.constraints) == 5
    assert schema.column("logwage").derived_from.formula == "log(wage)"


def test_plan_refuses_a_bad_rule_before_reading_data_naming_rule_and_fix(
    tmp_path: Path, capsys
) -> None:
    schema = _constraint_job(tmp_path)
    schema["constraints"].append({"check": "weight <= size - 30"})  # size ≤ 20: never
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(schema))
    (tmp_path / "train.csv").unlink()  # nothing is read: the schema is refused first
    assert main(["plan", str(tmp_path / "job.yaml")]) == 2
    error = capsys.readouterr().err
    assert "constraints[4] 'weight <= size - 30': no row within the schema's bounds" in error
    assert "Fix the rule (its direction?) or the columns' bounds" in error
