"""The evaluation scores the modelled columns only (synthpriv.evaluation.scored): an id column's
fresh keys and a text column's placeholder change no utility, value or attack figure, the report
names them as left out, and a release that copies a real key or paragraph is still flagged."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv.config import EvaluationConfig
from synthpriv.evaluation.evaluate import evaluate_sources
from synthpriv.evaluation.scored import FRESH_KEYS, PLACEHOLDER, left_out
from synthpriv.ids import KeyMaker
from synthpriv.schema import Schema
from tests.evaluation.tiny import NUMERIC, SCHEMA, tiny_table

KEY = {"name": "key", "kind": "id", "format": "XXXXXXXXXXXXXXXX"}
NOTE = {"name": "note", "kind": "text", "placeholder": "redacted"}
WITH_KEYS = Schema.model_validate({"columns": [KEY, *SCHEMA["columns"], NOTE]})
PLAIN = Schema.model_validate(SCHEMA)


def with_keys(table: pd.DataFrame, seed: int, *, real: bool) -> pd.DataFrame:
    """``table`` with a key column (random keys) and a text column: a real table's texts are
    distinct paragraphs (one of them the placeholder's word), a release's the placeholder."""
    keys = KeyMaker(KEY["format"], np.random.default_rng(seed)).draw(len(table))
    texts = ([f"paragraph {seed}-{i} about row {i}" for i in range(len(table) - 1)] + ["redacted"]
             if real else ["redacted"] * len(table))
    return table.assign(key=keys, note=texts)[WITH_KEYS.names]


def evaluate(real: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame, schema: Schema,
             **settings) -> dict:
    config = EvaluationConfig(target="colour", quality_report=False, anonymeter=False,
                              controls=[], **settings)
    return evaluate_sources({"real": real, "synthetic": synthetic, "holdout": holdout}, schema,
                            numeric_columns=NUMERIC, settings=config, progress=False)


@pytest.fixture(scope="module")
def tables() -> dict[str, pd.DataFrame]:
    return {"real": tiny_table(400, 1), "synthetic": tiny_table(400, 5), "holdout": tiny_table(400, 2)}


def keyed(tables: dict[str, pd.DataFrame]) -> dict[str, pd.DataFrame]:
    return {name: with_keys(table, i, real=name != "synthetic")
            for i, (name, table) in enumerate(tables.items())}


def test_the_rule_names_id_text_and_person_columns_with_why():
    reasons = left_out(["key", "colour", "note", "pid"], WITH_KEYS, person="pid")
    assert reasons == {"key": FRESH_KEYS, "note": PLACEHOLDER, "pid": reasons["pid"]}
    assert "data.person" in reasons["pid"]
    assert left_out(["key", "colour"], None) == {}  # no schema: nothing is known to be a key


def test_id_and_text_columns_change_no_utility_or_value_figure(tables):
    """The same table with and without an id and a text column: equal TVD (1/2/3-way),
    association, TSTR and value figures; the report names both columns as left out."""
    plain = evaluate(tables["real"], tables["synthetic"], tables["holdout"], PLAIN, attacks=False)
    withk = evaluate(*keyed(tables).values(), WITH_KEYS, attacks=False)
    for order in ("1-way", "2-way", "3-way"):
        assert withk["utility"]["marginals"][order]["mean"] == plain["utility"]["marginals"][order]["mean"]
        assert withk["utility"]["marginals"][order]["total"] == plain["utility"]["marginals"][order]["total"]
    assert withk["utility"]["association"]["mean"] == plain["utility"]["association"]["mean"]
    assert withk["utility"]["ml_efficacy"]["models"] == plain["utility"]["ml_efficacy"]["models"]
    assert set(withk["values"]["columns"]) == set(plain["values"]["columns"])
    assert withk["values"]["summary"]["one_off_share"] == plain["values"]["summary"]["one_off_share"]
    assert withk["data"]["left_out"] == {"key": FRESH_KEYS, "note": PLACEHOLDER}
    line = [n for n in withk["notes"] if n.startswith("not scored")]
    assert len(line) == 1 and "'key' (id: fresh keys by design)" in line[0] and "'note'" in line[0]
    assert not any(n.startswith("not scored") for n in plain["notes"])
    # fresh keys and the placeholder (a real text's word, but public) copy nothing
    assert withk["values"]["left_out"]["key"]["copied"] == 0
    assert withk["values"]["left_out"]["note"]["copied"] == 0
    assert not any("LEAK" in n for n in withk["notes"])


def test_a_release_that_copies_real_keys_or_paragraphs_is_flagged(tables):
    """The copy check still reads the left-out columns: 3 real keys and 2 real paragraphs
    planted in the release are counted, and the report says so."""
    real, synthetic, holdout = keyed(tables).values()
    synthetic = synthetic.copy()
    synthetic.loc[[0, 7, 9], "key"] = real["key"].iloc[[3, 50, 399]].to_numpy()
    synthetic.loc[[1, 2], "note"] = real["note"].iloc[[10, 11]].to_numpy()
    report = evaluate(real, synthetic, holdout, WITH_KEYS, attacks=False)
    copied = report["values"]["left_out"]
    assert copied["key"]["copied"] == 3 and copied["key"]["one_offs"]["copied"] == 3
    assert copied["note"]["copied"] == 2
    assert report["values"]["summary"]["left_out_copied"] == {"key": 3, "note": 2}
    leak = [n for n in report["notes"] if n.startswith("LEAK SIGNAL")]
    assert len(leak) == 1 and "'key': 3" in leak[0] and "'note': 2" in leak[0]


def test_the_attacks_do_not_read_the_left_out_columns(tables):
    """A release that copies every real key (its other columns independent draws): the attacks'
    figures equal those without the key columns, so no attack read them."""
    real, synthetic, holdout = keyed(tables).values()
    synthetic = synthetic.assign(key=real["key"].to_numpy())
    options = {"attack_targets": 50, "bootstrap": 0}
    plain = evaluate(tables["real"], tables["synthetic"], tables["holdout"], PLAIN, **options)
    withk = evaluate(real, synthetic, holdout, WITH_KEYS, **options)
    attacks = {name: m["auc"] for name, m in plain["privacy"]["release"]["attacks"].items()}
    assert attacks == {name: m["auc"] for name, m in withk["privacy"]["release"]["attacks"].items()}
    assert withk["values"]["summary"]["left_out_copied"] == {"key": 400}


def test_a_target_that_is_left_out_skips_tstr_with_a_note(tables):
    config = EvaluationConfig(target="note", quality_report=False, anonymeter=False, controls=[],
                              attacks=False)
    report = evaluate_sources(dict(zip(("real", "synthetic", "holdout"), keyed(tables).values(),
                                       strict=True)), WITH_KEYS, numeric_columns=NUMERIC,
                              settings=config, progress=False)
    assert "ml_efficacy" not in report["utility"]
    assert any("evaluation.target 'note' is not scored" in n for n in report["notes"])


def test_a_job_with_id_and_text_columns_is_evaluated_without_them(tmp_path):
    """End to end (run → report.json): the job's id and text columns are left out of every
    figure (with the note), the attacks that re-run the pipeline run on the modelled columns,
    and no real key is found in the release (its keys are fresh)."""
    import json

    import yaml

    from synthpriv.cli import main
    from tests.evaluation.tiny import write_tiny_job

    config = write_tiny_job(tmp_path, evaluation={"quality_report": False, "bootstrap": 0,
                                                  "controls": [], "anonymeter": False})
    for i, name in enumerate(("train", "holdout")):
        table = pd.read_csv(tmp_path / f"{name}.csv")
        with_keys(table, i, real=True).to_csv(tmp_path / f"{name}.csv", index=False)
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(
        {"columns": [KEY, *SCHEMA["columns"], NOTE]}))
    assert main(["run", str(config)]) == 0
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    assert report["data"]["left_out"] == {"key": FRESH_KEYS, "note": PLACEHOLDER}
    assert set(report["values"]["columns"]) == {"colour", "shape", "size", "weight"}
    assert report["values"]["summary"]["left_out_copied"] == {}
    assert report["utility"]["marginals"]["1-way"]["total"] == 4
    assert "generators" in report["privacy"]["marginal_attack"]
    assert any(n.startswith("not scored") for n in report["notes"])


@pytest.mark.slow  # a run with a DP domain step and a TSTR: 10-15 s on a loaded 2-core machine
def test_a_job_scores_auto_columns_as_the_run_decided_them(tmp_path):
    """Columns drafted ``kind: auto`` and decided integer under DP are scored as numeric (KS,
    quantile bins), as the resolved schema reads them; before, the draft's numeric names (none)
    scored them as categories."""
    import json

    import yaml

    from synthpriv.cli import main
    from tests.evaluation.tiny import write_tiny_job

    config = write_tiny_job(tmp_path, rows=600, evaluation={
        "quality_report": False, "controls": [], "anonymeter": False, "attacks": False})
    columns = [*SCHEMA["columns"][:2], {"name": "size", "kind": "auto"},
               {"name": "weight", "kind": "auto"}]
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump({"columns": columns}))
    raw = yaml.safe_load(config.read_text())
    config.write_text(yaml.safe_dump({**raw, "budget": {**raw["budget"], "epsilon": 5.0}}))
    assert main(["run", str(config)]) == 0
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    assert report["data"]["numeric_columns"] == ["size", "weight"]
    assert report["values"]["columns"]["size"]["kind"] == "numeric"
