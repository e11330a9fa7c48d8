"""What a release says of its guarantee (issue 23, item 3): a schema still marked ``drafted_by``
(its domain read from the rows) gives no guarantee, in the manifest and on the terminal, as a
seeded run does; both together name both conditions; every reader of the guarantee still works."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from synthpriv import Synthesizer
from synthpriv.cli import main
from synthpriv.schema_infer import DRAFTED_BY
from tests.evaluation.tiny import write_tiny_job

FAST = {"controls": [], "anonymeter": False, "quality_report": False, "bootstrap": 20,
        "marginal_attack": {"enabled": False}}
DRAFT_OPENING = f"NO GUARANTEE: the schema is a draft read from the data (drafted_by: {DRAFTED_BY})"


def _drafted_job(folder: Path, capsys, **extra) -> Path:
    """The tiny job with the schema ``synthpriv schema infer`` drafts from its table (exact
    minima and maxima, every category seen), left marked ``drafted_by``."""
    config = write_tiny_job(folder, evaluation=FAST, **extra)
    assert main(["schema", "infer", "--from-data", str(folder / "train.csv")]) == 0
    draft = yaml.safe_load(capsys.readouterr().out)
    assert draft["drafted_by"] == DRAFTED_BY
    (folder / "schema.yaml").write_text(yaml.safe_dump(draft))
    return config


def _run(config: Path, capsys) -> tuple[dict, str]:
    assert main(["run", str(config)]) == 0
    printed = capsys.readouterr().out
    manifest = json.loads((config.parent / "out" / "tiny" / "manifest.json").read_text())
    return manifest, printed


def test_a_drafted_schema_gives_no_guarantee_and_its_readers_say_so(tmp_path: Path,
                                                                    capsys) -> None:
    manifest, printed = _run(_drafted_job(tmp_path, capsys), capsys)
    guarantee, ledger = manifest["guarantee"], manifest["ledger"]
    assert manifest["randomness"]["mode"] == "secure"  # fresh noise: the schema alone voids it
    assert guarantee["epsilon"] is None and guarantee["delta"] is None
    assert guarantee["epsilon_if_schema_public"] == ledger["epsilon"] > 0
    assert guarantee["delta_if_schema_public"] == 1e-4
    assert guarantee["statement"].startswith(DRAFT_OPENING)
    assert "If the schema were public (a research figure only), it would be: (" in (
        guarantee["statement"])
    line = (f"privacy: NONE — domain read from the data (draft schema), NOT COVERED "
            f"(ε = {ledger['epsilon']:.4f}, δ = 0.0001 only if the schema were public;")
    assert line in printed and "privacy: ε =" not in printed
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    assert report["privacy"]["verdict"]["claim"]["source"] == "ledger, if the schema were public"
    assert report["privacy"]["verdict"]["claim"]["epsilon"] == ledger["epsilon"]
    # synthpriv sample copies the guarantee and prints the same line; the API loads it
    assert main(["sample", str(tmp_path / "out" / "tiny"), "--rows", "20",
                 "--out", str(tmp_path / "more")]) == 0
    assert line in capsys.readouterr().out
    resample = json.loads((tmp_path / "more" / "manifest.json").read_text())
    assert resample["guarantee"] == guarantee
    loaded = Synthesizer.load(tmp_path / "out" / "tiny")
    assert loaded.epsilon == ledger["epsilon"] and len(loaded.sample(5)) == 5


def test_a_seeded_run_on_a_drafted_schema_names_both_conditions(tmp_path: Path, capsys) -> None:
    manifest, printed = _run(_drafted_job(tmp_path, capsys, seed=5), capsys)
    guarantee, ledger = manifest["guarantee"], manifest["ledger"]
    assert guarantee["epsilon"] is None and guarantee["delta"] is None
    assert guarantee["epsilon_if_noise_secret_and_schema_public"] == ledger["epsilon"] > 0
    assert "epsilon_if_noise_secret" not in guarantee  # the seed alone is not the only reason
    assert "epsilon_if_schema_public" not in guarantee
    statement = guarantee["statement"]
    assert statement.startswith("NO GUARANTEE: this is a seeded run.") and DRAFT_OPENING in statement
    assert "If the noise were secret and the schema were public (a research figure only)" in statement
    assert (f"privacy: NONE — seeded run, NOT FOR RELEASE; domain read from the data (draft "
            f"schema), NOT COVERED (ε = {ledger['epsilon']:.4f}, δ = 0.0001 only if the noise "
            "were secret and the schema were public;") in printed
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    assert report["privacy"]["verdict"]["claim"]["source"] == (
        "ledger, if the noise were secret and the schema were public")


def test_a_reviewed_public_schema_keeps_its_guarantee_and_says_what_it_rests_on(
    tmp_path: Path, capsys
) -> None:
    """The same job on the public schema: a numeric ε, and the statement says the refusals that
    turn on single rows are safe only because the schema is public."""
    manifest, printed = _run(write_tiny_job(tmp_path, evaluation=FAST), capsys)
    guarantee = manifest["guarantee"]
    assert guarantee["epsilon"] == manifest["ledger"]["epsilon"] > 0
    assert not [key for key in guarantee if key.startswith("epsilon_if_")]
    assert "safe only because the schema is public" in guarantee["statement"]
    assert "a category not listed under unknown_categories: error" in guarantee["statement"]
    assert f"privacy: ε = {guarantee['epsilon']:.4f}" in printed
