"""Messages of a user's first hour (issue 25, item 4): each says what was expected, what was found
and the fix, in one line, naming the file and line where there is one."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from synthpriv.cli import main
from synthpriv.config import DEFAULT_DELTA, load_job
from tests.evaluation.tiny import write_tiny_job


def test_a_misspelt_kind_names_the_column_the_kinds_and_the_fix(tmp_path: Path, capsys) -> None:
    config = write_tiny_job(tmp_path)
    schema = yaml.safe_load((tmp_path / "schema.yaml").read_text())
    schema["columns"][2]["kind"] = "interger"
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(schema))
    assert main(["plan", str(config)]) == 2
    err = capsys.readouterr().err
    assert "'columns.2.kind' (column 'size'): 'interger' is not a kind; expected one of " \
           "categorical, integer, continuous, " in err and "Did you mean 'integer'?" in err
    assert "Input tag" not in err


def test_malformed_yaml_names_the_file_line_and_column(tmp_path: Path, capsys) -> None:
    config = write_tiny_job(tmp_path)
    config.write_text(config.read_text().replace("name: tiny", "name: [tiny\nx: 1", 1))
    assert main(["plan", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{config}, line " in err and "column" in err and "<unicode string>" not in err
    config = write_tiny_job(tmp_path)
    schema = tmp_path / "schema.yaml"
    schema.write_text("columns:\n  - name: a\n   kind: integer\n")
    assert main(["plan", str(config)]) == 2
    err = capsys.readouterr().err
    assert f"{schema}, line 3" in err and "<unicode string>" not in err


def test_the_draft_keeps_non_ascii_names_readable(tmp_path: Path, capsys) -> None:
    pd.DataFrame({"région": ["Île-de-France", "Bretagne"], "âge": [30, 40]}).to_csv(
        tmp_path / "data.csv", index=False)
    for flags in ([], ["--from-data"]):
        assert main(["schema", "infer", *flags, str(tmp_path / "data.csv")]) == 0
        written = capsys.readouterr().out
        assert "région" in written and "âge" in written and "\\x" not in written


def test_delta_has_a_public_default_stated_by_the_plan(tmp_path: Path, capsys) -> None:
    config = write_tiny_job(tmp_path)
    raw = yaml.safe_load(config.read_text())
    del raw["budget"]["delta"]
    config.write_text(yaml.safe_dump(raw))
    assert load_job(config).config.budget.delta == DEFAULT_DELTA == 1e-6
    assert main(["plan", str(config)]) == 0
    assert "δ = 1e-06 (default: budget.delta not given)" in capsys.readouterr().out
    raw["budget"]["delta"] = 1e-6
    config.write_text(yaml.safe_dump(raw))
    assert main(["plan", str(config)]) == 0
    assert "(default" not in capsys.readouterr().out


def test_a_parquet_file_written_by_pandas_with_its_index_reads_as_pandas_reads_it(
        tmp_path: Path) -> None:
    """A sampled DataFrame keeps its index; pandas stores it as ``__index_level_0__`` and reads
    it back as the index, not as a column: so does synthpriv."""
    config = write_tiny_job(tmp_path, evaluation={"enabled": False})
    table = pd.read_csv(tmp_path / "train.csv").sample(frac=0.9, random_state=np.random.default_rng(0))
    table.to_parquet(tmp_path / "train.parquet")  # index kept: rows are no longer 0..n-1
    named = table.rename_axis("row")
    named.to_parquet(tmp_path / "named.parquet")
    for name in ("train.parquet", "named.parquet"):
        raw = yaml.safe_load(config.read_text())
        raw["data"]["path"] = name
        raw["data"].pop("holdout", None)
        config.write_text(yaml.safe_dump(raw))
        assert main(["run", str(config), "--force"]) == 0
        released = pd.read_csv(tmp_path / "out" / "tiny" / "synthetic.csv")
        assert list(released.columns) == list(table.columns)


def test_clipped_values_are_counted_on_the_terminal_never_in_the_release(tmp_path: Path,
                                                                         capsys) -> None:
    config = write_tiny_job(tmp_path, evaluation={"enabled": False})
    table = pd.read_csv(tmp_path / "train.csv")
    schema = yaml.safe_load((tmp_path / "schema.yaml").read_text())
    size = next(c for c in schema["columns"] if c["name"] == "size")
    table.loc[:2, "size"] = size["upper"] + 5  # three values above the declared bound
    table.to_csv(tmp_path / "train.csv", index=False)
    assert main(["run", str(config)]) == 0
    captured = capsys.readouterr()
    assert f"note: 3 value(s) of 'size' outside its bounds [{size['lower']:g}, " \
           f"{size['upper']:g}] were clipped" in captured.err
    assert "were clipped" not in captured.out
    release = tmp_path / "out" / "tiny"
    assert '"clipped"' not in (release / "manifest.json").read_text()  # no such field


def test_the_ledger_line_says_why_one_bound_is_reported(tmp_path: Path, capsys) -> None:
    config = write_tiny_job(tmp_path, evaluation={"enabled": False})
    assert main(["run", str(config)]) == 0
    out = capsys.readouterr().out
    assert "the smaller is reported; the larger is a looser proof, not more privacy spent" in out


def test_a_clipped_date_column_names_its_bounds_as_dates(tmp_path: Path, capsys) -> None:
    """statsmodels elec_equip (benchmarks/README.md "newtables"): the note said "outside its
    bounds [8766, 15339]" (days since 1970) for dates written 'Jan-1-1995'."""
    config = write_tiny_job(tmp_path, evaluation={"enabled": False})
    table = pd.read_csv(tmp_path / "train.csv")
    days = pd.Timestamp("1995-01-01") + pd.to_timedelta(np.arange(len(table)) % 300, unit="D")
    table["when"] = days.strftime("%b-%d-%Y")
    table.loc[:3, "when"] = "Jan-05-2001"  # four values above the declared upper bound
    table.to_csv(tmp_path / "train.csv", index=False)
    schema = yaml.safe_load((tmp_path / "schema.yaml").read_text())
    schema["columns"].append({"name": "when", "kind": "date", "format": "%b-%d-%Y",
                              "lower": "1995-01-01", "upper": "1995-12-31"})
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(schema))
    assert main(["run", str(config)]) == 0
    err = capsys.readouterr().err
    assert "note: 4 value(s) of 'when' outside its bounds [Jan-01-1995, Dec-31-1995] were " \
           "clipped" in err
