"""A newcomer's first hour (issue 16): defaults, start-up, clean output and messages, through
``synthpriv.cli.main`` where the item is a command-line one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import SIGPIPE_EXIT, main
from synthpriv.config import load_job
from synthpriv.errors import DataError, SchemaError
from synthpriv.schema import load_schema, parse_schema
from synthpriv.table import read_table
from tests.evaluation.tiny import write_tiny_job

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "data" / "adult"
HEAVY = ("torch", "sdv", "opacus", "anonymeter", "pandas", "scipy", "dp_accounting")


def _child(code: str, **popen: object) -> subprocess.Popen:
    """A Python child running ``code`` with this source tree first on its path."""
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.Popen([sys.executable, "-c", code], env=env, cwd=ROOT, **popen)


def _without(config_path: Path, *keys: str) -> Path:
    """The config at ``config_path`` rewritten without the dotted ``keys``."""
    config = yaml.safe_load(config_path.read_text())
    for key in keys:
        *parents, last = key.split(".")
        node = config
        for parent in parents:
            node = node[parent]
        del node[last]
    config_path.write_text(yaml.safe_dump(config))
    return config_path


# --------------------------------------------------------------------------- default recipe


@pytest.mark.parametrize("missing", ["pipeline", "pipeline.recipe"])
def test_a_config_without_a_recipe_runs_aim(write_job, capsys, missing: str) -> None:
    path = write_job({"pipeline": {"recipe": "independent", "stages": {"marginals": {}}}})
    job = load_job(_without(path, missing))
    assert job.config.pipeline.recipe == "aim"
    assert main(["plan", str(path)]) == 0
    assert "sigma_first_rounds" in capsys.readouterr().out  # AIM's noise, not independent's


# --------------------------------------------------------------------------- start-up, --version


def test_importing_the_cli_imports_no_heavy_module() -> None:
    code = ("import sys, synthpriv.cli\n"
            "try:\n    synthpriv.cli.main(['--help'])\nexcept SystemExit:\n    pass\n"
            f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))")
    child = _child(code, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 0, err
    assert out.strip().splitlines()[-1] == "[]"


def test_version_prints_the_package_version(capsys) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--version"])
    assert exit_.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith("synthpriv ") and out.split()[1][0].isdigit()


# --------------------------------------------------------------------------- broken pipe


@pytest.mark.parametrize("columns", [3, 2000])  # output flushed at exit / written mid-run
def test_a_closed_pipe_ends_quietly(tmp_path: Path, columns: int) -> None:
    data = tmp_path / "wide.csv"  # integer columns (unique codes would be drafted as an id)
    pd.DataFrame({f"c{i:05d}": [5, 7, 5] for i in range(columns)}).to_csv(data, index=False)
    code = f"import sys; from synthpriv.cli import main; sys.exit(main(['schema', 'infer', {str(data)!r}]))"
    child = _child(code, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    child.stdout.close()  # the reader went away, as `| head` does
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == SIGPIPE_EXIT
    assert "Traceback" not in err and "BrokenPipe" not in err, err


# --------------------------------------------------------------------------- anonymeter's log


def test_anonymeter_log_warnings_go_to_the_report_not_the_console(caplog) -> None:
    pytest.importorskip("anonymeter")
    from synthpriv.evaluation.attacks import anonymeter_risks
    from synthpriv.evaluation.report import Section, _anonymeter_section

    rng = np.random.default_rng(0)
    table = lambda n: pd.DataFrame({"a": rng.choice(["x", "y", "z"], n),  # noqa: E731
                                    "b": rng.choice(["p", "q"], n)})
    with caplog.at_level("WARNING"):
        risks = anonymeter_risks(table(300), table(300), table(300), n_attacks=50, seed=0)
    assert not [r for r in caplog.records if r.name.startswith("anonymeter")]
    logged = [w for w in risks["warnings"] if "singling out queries" in w]
    assert logged  # 6 possible rows cannot give 50 singling-out queries: anonymeter says so
    section: Section = _anonymeter_section(risks)
    said = [block[1] for block in section.blocks if block[0] == "p"]
    assert any("singling-out queries" in text and "too few attacks for a reliable estimate" in text
               for text in said)  # in plain words, not anonymeter's raw log line


# --------------------------------------------------------------------------- evaluate's notes


def test_evaluate_without_holdout_names_its_option_not_config_keys(tmp_path: Path, capsys) -> None:
    write_tiny_job(tmp_path, rows=200)
    args = ["evaluate", "--real", str(tmp_path / "train.csv"), "--synthetic",
            str(tmp_path / "holdout.csv"), "--schema", str(tmp_path / "schema.yaml"),
            "--target", "colour", "--controls", "", "--no-anonymeter", "--out", str(tmp_path / "ev")]
    assert main(args) == 0
    out = capsys.readouterr().out
    notes = " ".join(json.loads((tmp_path / "ev" / "report.json").read_text())["notes"])
    for text in (out, notes):  # the terminal and report.json alike
        assert "--holdout H.csv" in text and "membership attacks need" in text and "TSTR" in text
        assert "data.holdout" not in text and "holdout_fraction" not in text


# --------------------------------------------------------------------------- schema messages


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


def test_numeric_category_lists_are_read_as_written(tmp_path: Path) -> None:
    schema = load_schema(_write(tmp_path / "s.yaml", """
columns:
- {name: year, kind: categorical, categories: [2003, 2004, 007, 1.50, '1.0']}
- name: decade
  kind: integer
  lower: 0
  upper: 9
  derived_from: {column: year, values: {2003: 0, 2004: 0, 007: 1, 1.50: 2, '1.0': 3}}
"""))
    assert schema.column("year").categories == ["2003", "2004", "007", "1.50", "1.0"]
    assert set(schema.column("decade").derived_from.values) == {"2003", "2004", "007", "1.50", "1.0"}
    assert type(schema.column("decade").upper) is float  # other numbers stay plain numbers
    inline = parse_schema({"columns": [{"name": "y", "kind": "categorical",
                                        "categories": [2003, 1.5]}]}, "inline")
    assert inline.column("y").categories == ["2003", "1.5"]


def test_a_year_list_matches_the_data(tmp_path: Path) -> None:
    schema = load_schema(_write(tmp_path / "s.yaml",
                                "columns: [{name: year, kind: categorical, categories: [2003, 2004]}]"))
    data = _write(tmp_path / "d.csv", "year\n2003\n2004\n2003\n")
    assert read_table(data, schema)["year"].tolist() == ["2003", "2004", "2003"]


@pytest.mark.parametrize(("listed", "message"), [
    ("[yes, no]", "reads as the boolean true: YAML reads unquoted yes/no"),
    ("[a, null]", "a category is empty (null"),
])
def test_yaml_booleans_and_nulls_in_categories_say_quote_them(tmp_path: Path, listed, message) -> None:
    path = _write(tmp_path / "s.yaml", f"columns: [{{name: c, kind: categorical, categories: {listed}}}]")
    with pytest.raises(SchemaError, match=message.replace("(", r"\(")):
        load_schema(path)


def test_numbers_in_a_categorical_column_hint_that_it_may_be_numeric(tmp_path: Path) -> None:
    schema = parse_schema({"columns": [{"name": "n", "kind": "categorical",
                                        "categories": ["0", "1"]}]}, "inline")
    with pytest.raises(DataError, match="all numbers: if 'n' is numeric, declare it 'kind: integer'"):
        read_table(_write(tmp_path / "d.csv", "n\n0\n0.0\n2.5\n"), schema)
    with pytest.raises(DataError) as error:
        read_table(_write(tmp_path / "e.csv", "n\n0\nzero\n2\n"), schema)
    assert "numeric" not in str(error.value)


# --------------------------------------------------------------------------- unnamed index column


def test_a_drafted_schema_for_an_unnamed_index_column_runs(tmp_path: Path, capsys) -> None:
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"colour": rng.choice(["red", "blue"], 300), "size": rng.integers(0, 9, 300)})
    table.to_csv(tmp_path / "data.csv")  # pandas writes the index first, under an empty name
    assert main(["schema", "infer", "--from-data", str(tmp_path / "data.csv")]) == 0
    drafted = capsys.readouterr()
    assert "column 1 has no name in the header" in drafted.err
    (tmp_path / "schema.yaml").write_text(drafted.out)
    assert yaml.safe_load(drafted.out)["columns"][0]["name"] == ""
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({
        "name": "indexed", "data": {"path": "data.csv", "schema": "schema.yaml"},
        "budget": {"epsilon": 1.0, "delta": 1e-4}, "pipeline": {"recipe": "independent"},
        "evaluation": {"enabled": False},
    }))
    out = tmp_path / "release"
    assert main(["run", str(tmp_path / "job.yaml"), "--out", str(out)]) == 0
    assert (out / "synthetic.csv").read_text().splitlines()[0] == ",colour,size"


def test_two_unnamed_columns_and_an_old_unnamed_draft_say_what_to_do(tmp_path: Path) -> None:
    _write(tmp_path / "two.csv", ",,a\n1,2,x\n")
    assert main(["schema", "infer", "--from-data", str(tmp_path / "two.csv")]) == 2
    schema = parse_schema({"columns": [  # drafted before header_names: pandas' name
        {"name": "Unnamed: 0", "kind": "integer", "lower": 0, "upper": 9},
        {"name": "a", "kind": "categorical", "categories": ["x"]}]}, "inline")
    with pytest.raises(DataError, match="An empty header cell is read as the name ''"):
        read_table(_write(tmp_path / "one.csv", ",a\n1,x\n"), schema)


def test_infer_drafts_adult_as_before() -> None:
    from synthpriv.schema_infer import infer_schema

    schema, _ = infer_schema(ADULT / "adult_test.csv")
    assert [c["name"] for c in schema["columns"]][:3] == ["age", "workclass", "fnlwgt"]
    assert parse_schema(schema, "draft").names == load_schema(ADULT / "schema.yaml").names


# --------------------------------------------------------------------------- paths


def test_config_path_errors_show_the_path_as_written_and_resolved(
    tmp_path: Path, capsys, monkeypatch
) -> None:
    job = write_tiny_job(tmp_path / "jobs")
    monkeypatch.chdir(tmp_path)  # elsewhere than the config: where wrong paths come from
    config = yaml.safe_load(job.read_text())
    config["data"]["path"] = "jobs/train.csv"  # relative to the current folder: wrong
    job.write_text(yaml.safe_dump(config))
    assert main(["run", str(job.relative_to(tmp_path))]) == 2
    err = capsys.readouterr().err
    assert "data.path 'jobs/train.csv'" in err
    assert str(tmp_path / "jobs" / "jobs" / "train.csv") in err
    assert "relative to the config file's folder" in err
    assert not (tmp_path / "jobs" / "out").exists()

    config["data"]["path"], config["data"]["schema"] = "train.csv", "nowhere.yaml"
    job.write_text(yaml.safe_dump(config))
    assert main(["plan", str(job)]) == 2
    err = capsys.readouterr().err
    assert "schema file not found: data.schema 'nowhere.yaml'" in err
    assert str(tmp_path / "jobs" / "nowhere.yaml") in err


def test_release_errors_say_where_the_folder_came_from(tmp_path: Path, capsys, monkeypatch) -> None:
    job = write_tiny_job(tmp_path, evaluation={"enabled": False})
    monkeypatch.chdir(tmp_path)
    _without(job, "output")
    assert main(["run", "job.yaml"]) == 0  # the default: out/<name> in the current folder
    assert (tmp_path / "out" / "tiny" / "synthetic.csv").is_file()
    capsys.readouterr()
    assert main(["run", "job.yaml"]) == 2
    assert f"default out/tiny (no output.dir or --out; relative to the current folder: " \
           f"{tmp_path / 'out' / 'tiny'})" in capsys.readouterr().err
    assert main(["run", "job.yaml", "--out", "out/tiny"]) == 2
    assert "--out 'out/tiny' (relative to the current folder" in capsys.readouterr().err


def test_command_line_data_paths_show_the_resolved_path(tmp_path: Path, capsys, monkeypatch) -> None:
    write_tiny_job(tmp_path)
    monkeypatch.chdir(tmp_path)
    args = ["evaluate", "--real", "missing.csv", "--synthetic", "holdout.csv", "--schema", "schema.yaml"]
    assert main(args) == 2
    err = capsys.readouterr().err
    assert f"'missing.csv' (resolved: {tmp_path / 'missing.csv'})" in err
    assert "on the command line to the current folder" in err
