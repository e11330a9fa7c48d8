"""Reading a CSV against its schema: every bad input gets one clear error naming column and row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthpriv.errors import DataError
from synthpriv.schema import parse_schema
from synthpriv.table import read_table

SCHEMA = parse_schema(
    {"columns": [
        {"name": "age", "kind": "integer", "lower": 0, "upper": 100},
        {"name": "colour", "kind": "categorical", "categories": ["red", "blue"], "missing": True},
        {"name": "score", "kind": "continuous", "lower": 0, "upper": 1},
    ]},
    "test",
)


def write(tmp_path: Path, content: str | bytes) -> Path:
    path = tmp_path / "t.csv"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def test_reads_a_good_table_with_missing_and_bom(tmp_path: Path) -> None:
    path = write(tmp_path, "\ufeffage,colour,score\n30,red,0.5\n41,,0.25\n")
    table = read_table(path, SCHEMA)
    assert table["age"].tolist() == [30, 41]
    assert table["colour"].isna().tolist() == [False, True]
    assert table["score"].dtype == np.float64


def test_quoted_newlines_and_column_order_are_kept(tmp_path: Path) -> None:
    path = write(tmp_path, 'score,colour,age\n0.5,"red",30\n0.1,"blue",2\n')
    table = read_table(path, SCHEMA)
    assert list(table.columns) == ["score", "colour", "age"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("age,colour\n30,red\n", r"missing column\(s\) \['score'\]"),
        ("age,colour,score,extra\n30,red,0.5,1\n", r"not in the schema \['extra'\]"),
        ("age,colour,colour,score\n30,red,red,0.5\n", r"repeats column\(s\) \['colour'\]"),
        ("age;colour;score\n30;red;0.5\n", r"seems to use ';'\. Set data\.delimiter"),
        (b"age,colour,score\n30,r\xe9d,0.5\n", r"not UTF-8"),
        ("", r"the file is empty"),
        ("age,colour,score\n", r"header but no rows"),
        ("age,colour,score\n30,red,0.5,9\n", r"row 1 has 4 fields, the header has 3"),
        ("age,colour,score\n30,red,0.5\nold,red,0.1\n", r"'age' is integer .* \['old'\] at row 2"),
        ("age,colour,score\n30,red,inf\n", r"'score' has infinite value\(s\) at row 1"),
        ("age,colour,score\n30,red,nan\n", r"'score' .* non-numeric value\(s\) \['nan'\]"),
        ("age,colour,score\n30,green,0.5\n", r"'colour' has value\(s\) \['green'\] .* row 1"),
        ("age,colour,score\n,red,0.5\n", r"'age' has missing values at row 1"),
    ],
)
def test_bad_csvs_are_refused_with_column_and_row(tmp_path: Path, content, message) -> None:
    with pytest.raises(DataError, match=message):
        read_table(write(tmp_path, content), SCHEMA)


def test_unknown_categories_map_to_missing_when_declared(tmp_path: Path) -> None:
    schema = SCHEMA.model_copy(update={"unknown_categories": "missing"})
    table = read_table(write(tmp_path, "age,colour,score\n30,green,0.5\n"), schema)
    assert table["colour"].isna().all()


def test_many_rows_listed_briefly(tmp_path: Path) -> None:
    rows = "".join(f"x{i},red,0.1\n" for i in range(20))
    with pytest.raises(DataError, match=r"row 1, 2, 3, 4, 5 and 15 more"):
        read_table(write(tmp_path, "age,colour,score\n" + rows), SCHEMA)


def test_missing_file_and_folder(tmp_path: Path) -> None:
    with pytest.raises(DataError, match="not found"):
        read_table(tmp_path / "nope.csv", SCHEMA)
    with pytest.raises(DataError, match="is a folder"):
        read_table(tmp_path, SCHEMA)


def test_a_derived_column_that_disagrees_with_its_mapping_is_refused(tmp_path: Path) -> None:
    schema = parse_schema({"columns": [
        {"name": "level", "kind": "categorical", "categories": ["low", "high"], "missing": True},
        {"name": "code", "kind": "integer", "lower": 1, "upper": 2, "missing": True,
         "derived_from": {"column": "level", "values": {"low": 1, "high": 2}}},
    ]}, "t")
    good = read_table(write(tmp_path, "level,code\nlow,1\nhigh,2\n,\n"), schema)
    assert good["code"].tolist()[:2] == [1, 2]
    for bad, row in (("low,1\nhigh,1\n", "row 2"), ("low,1\n,2\n", "row 2"), ("low,\n", "row 1")):
        with pytest.raises(DataError, match=f"'code' is declared derived_from 'level'.*at {row}"):
            read_table(write(tmp_path, "level,code\n" + bad), schema)
