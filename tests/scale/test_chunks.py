"""The chunked reader returns what read_table returns, and raises read_table's errors with global
row numbers, whatever the chunk size; Parquet input gives the same table."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import synthpriv.chunks as chunks
from synthpriv.chunks import file_header, iter_chunks
from synthpriv.errors import DataError
from synthpriv.schema import Schema, parse_schema
from synthpriv.table import read_table

SMALL = parse_schema(
    {"columns": [
        {"name": "age", "kind": "integer", "lower": 0, "upper": 100},
        {"name": "colour", "kind": "categorical", "categories": ["red", "blue"], "missing": True},
    ]},
    "test",
)


@pytest.mark.parametrize("chunk_rows", [1000, 3001, 389, 10_000])  # n = 3001 is prime
def test_chunks_concatenate_to_read_table(adult_csv: Path, adult_schema: Schema, chunk_rows: int) -> None:
    parts = list(iter_chunks(adult_csv, adult_schema, chunk_rows))
    assert [len(p) for p in parts[:-1]] == [chunk_rows] * (len(parts) - 1)
    pd.testing.assert_frame_equal(pd.concat(parts), read_table(adult_csv, adult_schema))


def test_parquet_gives_the_csv_table(adult_csv: Path, adult_parquet: Path, adult_schema: Schema) -> None:
    expected = read_table(adult_csv, adult_schema)
    got = pd.concat(list(iter_chunks(adult_parquet, adult_schema, 1000)))
    pd.testing.assert_frame_equal(got, expected)
    assert file_header(adult_parquet, adult_schema) == list(expected.columns)


def errors(path: Path, schema: Schema, chunk_rows: int) -> tuple[str, str]:
    found = []
    for read in (lambda: read_table(path, schema), lambda: list(iter_chunks(path, schema, chunk_rows))):
        with pytest.raises(DataError) as error:
            read()
        found.append(str(error.value))
    return found[0], found[1]


GOOD = "30,red\n" * 9


@pytest.mark.parametrize(
    "content",
    [
        "age,colour\n" + GOOD + "old,red\n",                 # bad number in the 2nd chunk
        "age,colour\n" + GOOD + "30,green\n",                # unknown category
        "age,colour\n" + GOOD + ",red\n",                     # missing where none may be
        "age,colour\n" + GOOD + "30,red,1\n",                 # ragged (too many fields)
        "age,colour\n" + GOOD + "\n  \n",                     # ragged (a blank-looking row)
        'age,colour\n"3\n0",red\n' + GOOD + "30\n",           # ragged after a quoted newline
        "age;colour\n30;red\n",                               # wrong delimiter
        "age\n30\n",                                          # missing column
        "age,colour\n",                                       # header only
        "",                                                   # empty
        " \n\n",                                              # blank
    ],
)
def test_errors_are_read_tables_with_global_rows(tmp_path: Path, content: str) -> None:
    path = tmp_path / "t.csv"
    path.write_text(content)
    expected, got = errors(path, SMALL, chunk_rows=4)
    assert got == expected


@pytest.mark.parametrize("prefix", [b"", b"\xef\xbb\xbf"])
def test_invalid_utf8_offset_is_read_tables_across_blocks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, prefix: bytes
) -> None:
    monkeypatch.setattr(chunks, "BLOCK_BYTES", 5)  # cut multi-byte characters at block ends
    path = tmp_path / "t.csv"
    path.write_bytes(prefix + b"age,colour\n" + "30,réd\n".encode() * 7 + b"30,r\xe9d\n")
    expected, got = errors(path, SMALL, chunk_rows=3)
    assert "not UTF-8" in got and got == expected


def test_missing_file_and_folder(tmp_path: Path) -> None:
    for path in (tmp_path / "nope.csv", tmp_path):
        assert errors(path, SMALL, 5)[1] == errors(path, SMALL, 5)[0]


def test_not_parquet(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    path.write_text("age,colour\n30,red\n")
    with pytest.raises(DataError, match="not a readable Parquet file"):
        list(iter_chunks(path, SMALL))


def test_an_unnamed_index_column_is_named_alike_by_schema_infer_and_every_reader(
    tmp_path: Path,
) -> None:
    """One header rule (``table.header_names``): the drafted schema of a file whose first column
    has no name (pandas' ``to_csv`` index) reads it back whole and in chunks."""
    from synthpriv.schema_infer import infer_schema

    path = tmp_path / "indexed.csv"
    pd.DataFrame({" age ": [30, 41, 52], "colour": ["red", "blue", "red"]}).to_csv(path)
    draft, _notes = infer_schema(path)
    schema = parse_schema(draft, "draft")
    assert schema.names == ["", "age", "colour"]
    assert file_header(path, schema) == schema.names
    whole = read_table(path, schema)
    pd.testing.assert_frame_equal(pd.concat(list(iter_chunks(path, schema, 2))), whole)
