"""Tab- and ';'-separated files are read, not refused: ``schema infer`` detects the delimiter from
the header line alone (public) or takes ``--delimiter``, its note gives the job config's
``data.delimiter`` line, and every reader of the input (the run's domain step and counts, the
hold-back, the evaluation's samples) reads the file with it. The release stays comma-separated."""

from __future__ import annotations

import pickle
import re
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.chunks import iter_chunks, read_input
from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.errors import DataError
from synthpriv.evaluation.sampling import sample_file
from synthpriv.runner import run_job
from synthpriv.schema import parse_schema
from synthpriv.schema_infer import infer_schema, schema_yaml
from synthpriv.table import delimited

ROWS = 600


def _table(seed: int = 0) -> pd.DataFrame:
    """A small table whose columns depend on each other (a city label holds a space and a
    comma, which a ','-reader would split)."""
    rng = np.random.default_rng(seed)
    group = rng.integers(0, 3, ROWS)
    return pd.DataFrame({
        "group": np.array(["north", "south", "east, far"])[group],
        "age": rng.integers(18, 80, ROWS),
        "score": np.round(group * 10 + rng.normal(size=ROWS), 2),
    })


def _write(frame: pd.DataFrame, path: Path, delimiter: str) -> Path:
    frame.to_csv(path, sep=delimiter, index=False)
    return path


def _job(tmp_path: Path, data: Path, delimiter: str | None, **extra: object) -> Path:
    config = {"name": "t", "data": {"path": data.name, "schema": "schema.yaml"},
              "budget": {"epsilon": 4.0}, "pipeline": {"recipe": "independent"},
              "output": {"dir": str(tmp_path / "out")}, "seed": 0, **extra}
    if delimiter is not None:
        config["data"]["delimiter"] = delimiter
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    return tmp_path / "job.yaml"


@pytest.mark.parametrize("delimiter", ["\t", ";"])
def test_schema_infer_then_run_reads_the_file(tmp_path: Path, capsys, delimiter: str) -> None:
    """End to end through the command line: the safe draft detects the delimiter from the header
    and says so, the job config's line from its note is valid YAML that the run reads, and the
    release (comma-separated) holds the input's columns and categories."""
    data = _write(_table(), tmp_path / "data.txt", delimiter)
    assert main(["schema", "infer", str(data)]) == 0
    captured = capsys.readouterr()
    (tmp_path / "schema.yaml").write_text(captured.out)
    line = re.search(r'Put the line  (delimiter: "[^"]+")  under',
                     captured.err.replace("\n", " "))
    assert line is not None, captured.err
    written = yaml.safe_load(line.group(1))["delimiter"]
    assert written == delimiter
    assert [c["name"] for c in yaml.safe_load(captured.out)["columns"]] == ["group", "age", "score"]
    assert main(["run", str(_job(tmp_path, data, written, evaluation={"enabled": False}))]) == 0
    synthetic = pd.read_csv(tmp_path / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    assert list(synthetic.columns) == ["group", "age", "score"]
    # a few blanks may come from noise (the column is auto: missing: true, and its missing code
    # is modelled); a value split at its comma would show here as a value outside the set
    assert set(synthetic["group"]) <= {"north", "south", "east, far", ""}
    assert (synthetic["group"] == "").mean() < 0.05
    assert len(set(synthetic["group"]) - {""}) >= 2
    # blanks: the auto column's modelled missing code, drawn from noise (a seeded draw: one
    # more public date format shifts every later draw; benchmarks/README.md "newtables")
    assert (synthetic["age"] == "").mean() < 0.05
    ages = pd.to_numeric(synthetic["age"][synthetic["age"] != ""])
    assert (ages == ages.round()).all() and ages.nunique() > 5


def test_a_run_reads_with_the_config_delimiter_else_names_the_key(tmp_path: Path) -> None:
    """The same tab file and draft: refused by a run whose config keeps the default ',', with an
    error naming data.delimiter and its fix; read by one that says tab."""
    data = _write(_table(), tmp_path / "data.tsv", "\t")
    draft, notes = infer_schema(data, safe=True)
    (tmp_path / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    config = _job(tmp_path, data, None, evaluation={"enabled": False})
    with pytest.raises(DataError, match=r'seems to use .\\t.\. Set data.delimiter: "\\t"'):
        run_job(load_job(config))
    tab = _job(tmp_path, data, "tab", evaluation={"enabled": False})
    run_job(load_job(tab))
    assert len(pd.read_csv(tmp_path / "out" / "synthetic.csv")) > 0
    config = yaml.safe_load(tab.read_text())
    config["data"]["holdout"] = data.name  # the holdout is read with data.delimiter too
    tab.write_text(yaml.safe_dump(config))
    job = load_job(tab)
    pd.testing.assert_frame_equal(read_input(job.holdout_path, job.schema),
                                  read_input(job.data_path, job.schema))
    assert list(read_input(job.holdout_path, job.schema).columns) == ["group", "age", "score"]


@pytest.mark.parametrize(("header", "found"), [
    ("a\tb\tc", "\t"), ("a;b;c", ";"), ("a|b|c", "|"), ("a,b;c", None), ("a;b,c", None)])
def test_detection_reads_the_header_only(tmp_path: Path, header: str, found: str | None) -> None:
    """A header with no comma and exactly one of tab/';'/'|' is read with it, whatever the rows
    hold (rows full of commas do not change it: the rows are never read); a header with a
    comma is read comma-separated."""
    rows = "\n".join("x,y,z,w" for _ in range(50))
    (tmp_path / "d.csv").write_text(header + "\n" + rows + "\n")
    draft, notes = infer_schema(tmp_path / "d.csv", safe=True)
    names = [c["name"] for c in draft["columns"]]
    if found is None:
        assert names == header.split(",")
        assert not any("delimiter" in note for note in notes)
    else:
        assert names == ["a", "b", "c"]
        assert any("detected from the header" in note for note in notes)


def test_a_header_with_two_other_delimiters_asks_for_the_option(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text("a;b\tc\n1;2\t3\n")
    with pytest.raises(DataError, match="seems to use '\\\\t' or ';'.*--delimiter"):
        infer_schema(tmp_path / "d.csv", safe=True)
    draft, notes = infer_schema(tmp_path / "d.csv", safe=True, delimiter=";")
    assert [c["name"] for c in draft["columns"]] == ["a", "b\tc"]
    assert any("given by --delimiter" in note for note in notes)


def test_from_data_draft_and_chunked_readers_use_the_delimiter(tmp_path: Path) -> None:
    """The data-read draft, ``read_input`` (csv module) and ``iter_chunks`` (pyarrow) all read
    the ';' file as the comma file holding the same table."""
    frame = _table(1)
    semi = _write(frame, tmp_path / "t.csv", ";")
    comma = _write(frame, tmp_path / "c.csv", ",")
    draft_semi, _ = infer_schema(semi, safe=False)
    draft_comma, _ = infer_schema(comma, safe=False)
    assert draft_semi == draft_comma
    schema = parse_schema({k: v for k, v in draft_comma.items() if k != "drafted_by"}, "draft")
    expected = read_input(comma, schema)
    pd.testing.assert_frame_equal(read_input(delimited(semi, ";"), schema), expected)
    chunked = pd.concat(iter_chunks(delimited(semi, ";"), schema, chunk_rows=97))
    pd.testing.assert_frame_equal(chunked, expected)
    with pytest.raises(DataError, match="seems to use ';'"):
        read_input(semi, schema)


def test_the_evaluation_sample_and_a_dask_worker_read_with_it(tmp_path: Path) -> None:
    """The evaluation streams the input from its path (``sample_file``), and the dask engine
    pickles the path to its workers: both keep the delimiter."""
    frame = _table(2)
    comma = _write(frame, tmp_path / "c.csv", ",")
    tab = delimited(_write(frame, tmp_path / "t.tsv", "\t"), "\t")
    draft, _ = infer_schema(comma, safe=False)
    schema = parse_schema({k: v for k, v in draft.items() if k != "drafted_by"}, "draft")
    from_tab = sample_file(pickle.loads(pickle.dumps(tab)), schema, None, seed=0, stream=0)
    from_comma = sample_file(comma, schema, None, seed=0, stream=0)
    pd.testing.assert_frame_equal(from_tab.rows, from_comma.rows)


def test_a_wrong_delimiter_option_is_one_clear_error(tmp_path: Path, capsys) -> None:
    (tmp_path / "d.csv").write_text("a\tb\n1\t2\n")
    with pytest.raises(SystemExit):
        main(["schema", "infer", str(tmp_path / "d.csv"), "--delimiter", "::"])
    assert "--delimiter must be one character" in capsys.readouterr().err
