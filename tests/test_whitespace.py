"""Whitespace-separated files (statsmodels' ``sep=r"\\s+"`` files: spector, interest_inflation
E6_jmulti) run on the first try: ``schema infer`` detects them from the header line alone (a
one-column header of words apart by spaces), its note gives ``data.delimiter: whitespace``, and
every reader (the run, both drafts, the chunked reader, the evaluation's cells) splits each line
at runs of spaces and tabs; the release stays comma-separated, and errors name the row and
column as for a CSV."""

from __future__ import annotations

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
from synthpriv.evaluation.values import csv_cells
from synthpriv.runner import run_job
from synthpriv.schema import parse_schema
from synthpriv.schema_infer import infer_schema, schema_yaml
from synthpriv.table import WHITESPACE, delimited, read_table
from tests.test_delimiters import _table  # a label holding a space and a comma


def _spaced(frame: pd.DataFrame, path: Path, seed: int = 0) -> Path:
    """``frame`` written with runs of 1-4 spaces or tabs between fields (the header's not tabs
    alone: that reads as a tab-separated header), some lines indented or ending in spaces, a
    field holding a space double-quoted."""
    rng = np.random.default_rng(seed)

    def line(cells: list[str], gaps: tuple[str, ...] = (" ", "  ", "\t", " \t ", "    ")) -> str:
        cells = [f'"{c}"' if " " in c else c for c in cells]
        gaps = [str(rng.choice(gaps)) for _ in cells[1:]]
        body = cells[0] + "".join(g + c for g, c in zip(gaps, cells[1:], strict=True))
        return " " * int(rng.integers(0, 3)) + body + " " * int(rng.integers(0, 2))

    lines = [line(list(frame.columns), (" ", "  ", " \t "))] + [line([str(v) for v in row])
                                           for row in frame.itertuples(index=False)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _job(tmp_path: Path, data: Path, delimiter: str | None) -> Path:
    config = {"name": "t", "data": {"path": data.name, "schema": "schema.yaml"},
              "budget": {"epsilon": 4.0}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")},
              "seed": 0}
    if delimiter is not None:
        config["data"]["delimiter"] = delimiter
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    return tmp_path / "job.yaml"


def test_schema_infer_then_run_round_trips_a_whitespace_file(tmp_path: Path, capsys) -> None:
    """Through the command line: the safe draft detects it from the header and gives the
    config line; the run reads the file with it and writes a comma-separated release holding
    the input's columns and labels (the quoted label with a space whole)."""
    data = _spaced(_table(), tmp_path / "data.txt")
    assert main(["schema", "infer", str(data)]) == 0
    captured = capsys.readouterr()
    (tmp_path / "schema.yaml").write_text(captured.out)
    line = re.search(r"Put the line  (delimiter: \S+)  under", captured.err.replace("\n", " "))
    assert line is not None, captured.err
    written = yaml.safe_load(line.group(1))["delimiter"]
    assert written == WHITESPACE
    assert [c["name"] for c in yaml.safe_load(captured.out)["columns"]] == ["group", "age", "score"]
    assert main(["run", str(_job(tmp_path, data, written))]) == 0
    text = (tmp_path / "out" / "synthetic.csv").read_text()
    assert text.splitlines()[0] == "group,age,score"
    synthetic = pd.read_csv(tmp_path / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    assert set(synthetic["group"]) <= {"north", "south", "east, far", ""}
    assert (synthetic["group"] == "east, far").mean() > 0.1
    # blanks: the auto column's modelled missing code, drawn from noise (a seeded draw: one
    # more public date format shifts every later draw; benchmarks/README.md "newtables")
    assert (synthetic["age"] == "").mean() < 0.05
    ages = pd.to_numeric(synthetic["age"][synthetic["age"] != ""])
    assert (ages == ages.round()).all() and ages.nunique() > 5


def test_both_drafts_and_every_reader_read_it_as_the_comma_file(tmp_path: Path) -> None:
    frame = _table(1)
    spaced = delimited(_spaced(frame, tmp_path / "s.txt", seed=1), WHITESPACE)
    comma = tmp_path / "c.csv"
    frame.to_csv(comma, index=False)
    draft_spaced, notes = infer_schema(spaced.with_name("s.txt"), safe=False)
    draft_comma, _ = infer_schema(comma, safe=False)
    assert draft_spaced == draft_comma
    assert any("runs of spaces and tabs (detected from the header)" in n for n in notes)
    assert infer_schema(spaced, safe=True)[0] == infer_schema(comma, safe=True)[0]
    schema = parse_schema({k: v for k, v in draft_comma.items() if k != "drafted_by"}, "draft")
    expected = read_input(comma, schema)
    pd.testing.assert_frame_equal(read_input(spaced, schema), expected)
    pd.testing.assert_frame_equal(pd.concat(iter_chunks(spaced, schema, chunk_rows=97)),
                                  expected)
    pd.testing.assert_frame_equal(csv_cells(spaced, 50), csv_cells(comma, 50))


def test_a_run_without_the_line_names_it(tmp_path: Path) -> None:
    data = _spaced(_table(), tmp_path / "data.txt")
    draft, notes = infer_schema(data, safe=True)
    (tmp_path / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    with pytest.raises(DataError, match="Set data.delimiter: whitespace"):
        run_job(load_job(_job(tmp_path, data, None)))


def test_errors_name_the_row_and_the_column(tmp_path: Path) -> None:
    """A short row and a bad number: the messages a CSV with the same defects gets (path
    aside), the short row's with the quoting hint for whitespace."""
    schema = parse_schema({"columns": [
        {"name": "a", "kind": "integer", "lower": 0, "upper": 9},
        {"name": "b", "kind": "categorical", "categories": ["x y", "z"]}]}, "t")
    (tmp_path / "s.txt").write_text('a   b\n1 "x y"\n2\tz\n3 x y\n')
    with pytest.raises(DataError, match=r"row 3 has 3 fields, the header has 2.*quote a value "
                                        "holding a space"):
        read_table(delimited(tmp_path / "s.txt", WHITESPACE), schema)
    (tmp_path / "s.txt").write_text('a   b\n1 "x y"\n2\tz\nthree z\n')
    (tmp_path / "c.csv").write_text("a,b\n1,x y\n2,z\nthree,z\n")
    messages = []
    for path in (delimited(tmp_path / "s.txt", WHITESPACE), tmp_path / "c.csv"):
        with pytest.raises(DataError) as error:
            read_table(path, schema)
        messages.append(str(error.value).replace(str(path), "PATH"))
    assert messages[0] == messages[1] and "'a'" in messages[0] and "row 3" in messages[0]


@pytest.mark.parametrize(("header", "names"), [
    ("a b  c", ["a", "b", "c"]), ("'OBS' 'GPA' 'TUCE'", ["'OBS'", "'GPA'", "'TUCE'"]),
    ("  -0.003\t0.083 ", ["-0.003", "0.083"]), ("a\tb c", ["a", "b c"]),
    ("a,b c", ["a", "b c"]), ('"one name"', ["one name"])])
def test_detection_reads_the_header_only(tmp_path: Path, header: str, names: list[str]) -> None:
    """Words apart by spaces in a one-column header: whitespace (rows of commas do not change
    it: they are never read); a tab wins over spaces; a comma keeps ','; a quoted name with a
    space stays one column."""
    (tmp_path / "d.txt").write_text(header + "\n" + "\n".join("x,y,z" for _ in range(20)) + "\n")
    draft, _ = infer_schema(tmp_path / "d.txt", safe=True)
    assert [c["name"] for c in draft["columns"]] == names


def test_a_header_of_numbers_gets_a_note(tmp_path: Path) -> None:
    """E6_jmulti has no header: its first row is read as the names, and the draft says so."""
    (tmp_path / "d.txt").write_text("-0.003 0.083\n0.018 0.083\n")
    _, notes = infer_schema(tmp_path / "d.txt", safe=True)
    assert any("every name in the header is a number" in note for note in notes)


@pytest.mark.parametrize(("header", "names"), [
    ("a \tb\t\tc", ["a", "b", "c"]), ("a\t\tb", ["a", "b"]), ("\ta\tb", ["", "a", "b"]),
    ("a b\tc d", ["a b", "c d"])])
def test_tabs_in_runs_or_beside_spaces_are_whitespace(tmp_path: Path, header: str,
                                                      names: list[str]) -> None:
    """A tab-separated header keeps its tab (an empty first name: pandas' index; names holding
    spaces); tabs in runs or next to spaces are one whitespace separator."""
    (tmp_path / "d.txt").write_text(header + "\n")
    draft, _ = infer_schema(tmp_path / "d.txt", safe=True)
    assert [c["name"] for c in draft["columns"]] == names
