"""Property tests: generated schemas and tables, written as CSV, either load and round-trip through
the loader and the encoder, or fail cleanly with one DataError. Nothing else may happen."""

from __future__ import annotations

import csv
import io
import math
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from synthpriv.encoding import TableEncoder
from synthpriv.errors import DataError
from synthpriv.schema import Schema
from synthpriv.table import read_table

NAMES = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1, max_size=8)
TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=10)


@st.composite
def categorical(draw, name: str) -> dict:
    categories = draw(st.lists(TEXT.map(str.strip).filter(bool), min_size=1, max_size=5,
                               unique=True))
    return {"name": name, "kind": "categorical", "categories": categories,
            "missing": draw(st.booleans())}


@st.composite
def numeric(draw, name: str) -> dict:
    kind = draw(st.sampled_from(["integer", "continuous"]))
    lower = draw(st.integers(-1000, 1000))
    upper = lower + draw(st.integers(1, 500))
    column = {"name": name, "kind": kind, "lower": lower, "upper": upper,
              "missing": draw(st.booleans())}
    if draw(st.booleans()):
        column["bins"] = draw(st.integers(1, 40))
    return column


@st.composite
def schema_and_rows(draw) -> tuple[dict, list[list[str]]]:
    names = draw(st.lists(NAMES.map(str.strip).filter(bool), min_size=1, max_size=4, unique=True))
    columns = [draw(st.one_of(categorical(n), numeric(n))) for n in names]
    rows = draw(st.lists(st.tuples(*[cell(c) for c in columns]).map(list), min_size=1,
                         max_size=12))
    return {"columns": columns}, rows


def cell(column: dict) -> st.SearchStrategy[str]:
    """Mostly valid values, sometimes an empty cell, junk, or (numeric) out of bounds/non-finite."""
    junk = st.one_of(TEXT, st.sampled_from(["nan", "inf", "-inf", "1e400", "NaN", " ", ","]))
    if column["kind"] == "categorical":
        valid = st.sampled_from(column["categories"])
    else:
        span = column["upper"] - column["lower"]
        low, high = column["lower"] - span, column["upper"] + span
        valid = (st.integers(low, high).map(str) if column["kind"] == "integer"
                 else st.floats(low, high, allow_nan=False).map(repr))
    return st.one_of(*[valid] * 12, st.just(""), junk)


def write_csv(header: list[str], rows: list[list[str]]) -> bytes:
    buffer = io.StringIO()
    writer = csv.writer(buffer)  # RFC 4180: CRLF line ends, CR and LF quoted inside fields
    writer.writerow(header)
    writer.writerows(rows)
    return buffer.getvalue().encode("utf-8")


def expected_value(raw: str, kind: str) -> object:
    text = raw.strip()
    if text == "":
        return None
    return text if kind == "categorical" else float(text)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(schema_and_rows())
def test_loader_and_encoder_round_trip_or_fail_cleanly(generated) -> None:
    raw_schema, rows = generated
    schema = Schema.model_validate(raw_schema)
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes(write_csv(schema.names, rows))
        try:
            table = read_table(path, schema)
        except DataError as error:
            assert str(error).startswith(f"{path}: ")  # names the file, then what and the fix
            return
    assert rows, "a table with no rows must be refused"
    assert list(table.columns) == schema.names and len(table) == len(rows)
    for j, column in enumerate(schema.columns):
        for i, row in enumerate(rows):
            expected, got = expected_value(row[j], column.kind), table[column.name].iloc[i]
            if expected is None:
                assert pd.isna(got)
            elif column.kind == "categorical":
                assert got == expected
            else:
                assert math.isclose(got, expected, rel_tol=1e-12, abs_tol=1e-12)

    encoder = TableEncoder(schema)
    codes = encoder.encode(table).codes
    assert ((codes >= 0) & (codes < np.array(encoder.domain.shape))).all()
    decoded = encoder.decode(codes, np.random.default_rng(0))
    assert np.array_equal(encoder.encode(decoded).codes, codes)


@settings(max_examples=100, deadline=None)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_load_or_fail_with_a_data_error(content: bytes) -> None:
    schema = Schema.model_validate({"columns": [
        {"name": "a", "kind": "integer", "lower": 0, "upper": 9, "missing": True},
        {"name": "b", "kind": "categorical", "categories": ["x", "y"], "missing": True},
    ]})
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "t.csv"
        path.write_bytes(b"a,b\n" + content)
        try:
            table = read_table(path, schema)
        except DataError:
            return
    codes = TableEncoder(schema).encode(table).codes
    assert codes.shape == (len(table), 2)
