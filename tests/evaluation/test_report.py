"""The evaluation step: report files and sections, the verdict against the ledger, where it goes."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import EvaluationConfig
from synthpriv.evaluation.evaluate import Claim, evaluate_tables
from synthpriv.evaluation.job import evaluation_dir
from synthpriv.evaluation.report import write_report
from tests.evaluation.tiny import NUMERIC, evaluate_other_tool_args, tiny_table, write_tiny_job

FAST = {"controls": ["identity"], "anonymeter": False, "quality_report": False, "bootstrap": 20,
        "marginal_attack": {"shadow_tables": 8, "records": 60, "targets": 2}}
SECTIONS = ("# Evaluation of", "## Utility", "## Values", "## Membership-inference attacks")


def evaluate(synthetic: pd.DataFrame, claim: Claim | None, **settings) -> dict:
    real, holdout = tiny_table(400, 1), tiny_table(400, 2)
    return evaluate_tables(
        real, synthetic, numeric_columns=NUMERIC, holdout=holdout, holdout_source="test",
        settings=EvaluationConfig(target="colour", **{**FAST, **settings}), claim=claim,
        name="tiny", progress=False,
    )


def test_report_files_hold_every_section_and_embed_the_plots(tmp_path):
    report = evaluate(tiny_table(400, 3), Claim(1.0, 1e-4))
    files = write_report(tmp_path / "x.evaluation", report)
    markdown = files["report.md"].read_text()
    for heading in SECTIONS:
        assert heading in markdown
    assert "NOT differentially private and NOT part of the DP release" in markdown
    assert "identity (control)" in markdown and "gradient_boosting" in markdown
    page = files["report.html"].read_text()
    assert page.count('src="data:image/png;base64,') == 4  # marginals, associations, values, ROC
    assert not re.search(r'src="(?!data:)', page)  # self-contained: no external file
    for name in ("marginals.png", "associations.png", "values.png", "roc.png"):
        assert (tmp_path / "x.evaluation" / "plots" / name).read_bytes()[:4] == b"\x89PNG"
    stored = json.loads(files["report.json"].read_text())
    assert stored["differentially_private"] is False
    assert stored["privacy"]["verdict"]["bug_signal"] is False
    assert {c["column"] for c in stored["column_fidelity"]["columns"]} == set(NUMERIC) | {"colour", "shape"}


def test_an_empirical_bound_above_the_claim_is_a_loud_bug_signal(tmp_path):
    """Releasing the training rows while claiming ε = 0.1: the attacks must catch it."""
    real = tiny_table(400, 1)
    report = evaluate(real, Claim(0.1, 1e-4), controls=[])
    verdict = report["privacy"]["verdict"]
    assert verdict["bug_signal"] and verdict["eps_lower_bound"] > 0.1
    assert verdict["message"].startswith("BUG SIGNAL")
    markdown = write_report(tmp_path / "bug.evaluation", report)["report.md"].read_text()
    assert "**BUG SIGNAL" in markdown


def test_run_ends_with_the_evaluation_beside_the_release_not_in_it(tmp_path, capsys):
    config = write_tiny_job(tmp_path, evaluation=FAST)
    assert main(["run", str(config)]) == 0
    printed = capsys.readouterr().out
    release = tmp_path / "out" / "tiny"
    assert sorted(p.name for p in release.iterdir()) == ["manifest.json", "model.json", "model.npz",
                                                           "synthetic.csv"]
    folder = evaluation_dir(release)
    assert folder == tmp_path / "out" / "tiny.evaluation"
    report = json.loads((folder / "report.json").read_text())
    ledger = json.loads((release / "manifest.json").read_text())["guarantee"]["epsilon"]
    assert report["claim"]["epsilon"] == ledger
    assert "NOT part of the DP release" in printed and "empirical ε lower bound" in printed
    assert f"claimed ε = {ledger:.4g}" in printed


def test_held_back_rows_serve_as_non_members_when_there_is_no_holdout(tmp_path):
    config = write_tiny_job(tmp_path, evaluation={**FAST, "holdout_fraction": 0.25})
    raw = yaml.safe_load(config.read_text())
    del raw["data"]["holdout"]
    config.write_text(yaml.safe_dump(raw))
    assert main(["run", str(config)]) == 0
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    # each row is held back on its own coin: Binomial(400, 0.25), mean 100, std 8.7 (5σ bounds)
    assert report["data"]["rows_real"] + report["data"]["rows_holdout"] == 400
    assert 56 <= report["data"]["rows_holdout"] <= 144
    assert report["data"]["holdout_source"] == "held back from the input"
    assert "privacy" in report and any("held back" in note for note in report["notes"])


def test_evaluate_command_on_two_small_csvs(tmp_path, capsys):
    write_tiny_job(tmp_path)
    args = evaluate_other_tool_args(tmp_path, "--controls", "identity", "--no-anonymeter")
    assert main(args) == 0
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    assert report["claim"] is None and report["utility"]["ml_efficacy"]["target"] == "shape"
    assert set(report["privacy"]["controls"]) == {"identity"}
    # A disjoint sample is guessing (AUC s.e. ≈ 0.03 over 200 + 200 targets); the identity control
    # is not perfect here only because this tiny table has many duplicate rows.
    assert report["privacy"]["release"]["worst_case"]["auc"] < 0.6
    assert report["privacy"]["controls"]["identity"]["worst_case"]["auc"] > 0.7
    assert "no claimed ε" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("change", "message"),
    [(["--target", "nope"], "--target 'nope' is not a column"),
     (["--synthetic", "missing.csv"], "data file not found"),
     (["--controls", "identity,gan"], "--controls: expected names among")],
)
def test_evaluate_command_errors_are_one_clear_line(tmp_path, capsys, change, message):
    write_tiny_job(tmp_path)
    options = {"--real": "train.csv", "--synthetic": "holdout.csv", "--schema": "schema.yaml"}
    args = ["evaluate"] + [x for k, v in options.items() for x in (k, str(tmp_path / v))]
    if change[0] == "--synthetic":
        change = [change[0], str(tmp_path / change[1])]
    assert main(args + change) == 2
    assert message in capsys.readouterr().err


def test_opt_in_shadow_attack_reaches_the_report(tmp_path):
    shadow = {"enabled": True, "shadow_tables": 8, "vulnerable_targets": 1, "random_targets": 0,
              "records": 50}
    config = write_tiny_job(tmp_path, evaluation={**FAST, "controls": [], "shadow": shadow})
    assert main(["run", str(config)]) == 0
    folder = tmp_path / "out" / "tiny.evaluation"
    report = json.loads((folder / "report.json").read_text())
    result = report["privacy"]["shadow"]
    assert set(result["generators"]) == {"pipeline", "identity"}
    assert result["test_tables"] == 4 and result["records_per_table"] == 50
    assert "shadow/pipeline" in report["privacy"]["verdict"]["bounds"]
    assert "## Shadow-model attack" in (folder / "report.md").read_text()


def _tree(folder) -> dict:
    """Every file under ``folder`` with its bytes (what "nothing was touched" compares)."""
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*"))
            if p.is_file()}


def test_evaluate_out_on_a_release_is_refused_and_the_release_kept(tmp_path, capsys):
    """``--out`` naming a release folder: one clear line, exit 2, the release byte for byte."""
    config = write_tiny_job(tmp_path)
    assert main(["run", str(config), "--no-evaluation"]) == 0
    release = tmp_path / "out" / "tiny"
    before = _tree(release)
    capsys.readouterr()
    args = evaluate_other_tool_args(tmp_path)  # ends with --out DIR
    assert main([*args[:-1], str(release), "--controls", "identity", "--no-anonymeter"]) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "holds a release (manifest.json, synthetic.csv)" in error
    assert _tree(release) == before


def test_evaluate_out_keeps_a_users_file_and_replaces_only_its_own_report(tmp_path, capsys):
    """A folder with a file the report did not write is refused untouched; a folder holding an
    earlier report (and nothing else) is replaced by the new one."""
    write_tiny_job(tmp_path)
    args = evaluate_other_tool_args(tmp_path, "--controls", "identity", "--no-anonymeter")
    folder = tmp_path / "eval"
    (folder / "plots").mkdir(parents=True)
    (folder / "plots" / "notes.txt").write_text("mine")
    assert main(args) == 2
    error = capsys.readouterr().err
    assert error.count("\n") == 1 and "does not write (plots/notes.txt)" in error
    assert _tree(folder) == {"plots/notes.txt": b"mine"}
    (folder / "plots" / "notes.txt").unlink()
    (folder / "report.md").write_text("an earlier report")
    assert main(args) == 0  # an earlier report (only report files) is replaced
    assert (folder / "report.md").read_text().startswith("# Evaluation of")
