"""Encoding to codes over the public Domain, clipping, missing codes, and decoding back."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv.encoding import TableEncoder
from synthpriv.schema import load_schema, parse_schema
from synthpriv.table import read_table

from .conftest import ADULT

SCHEMA = parse_schema(
    {"columns": [
        {"name": "age", "kind": "integer", "lower": 18, "upper": 90, "edges": [18, 30, 60, 90]},
        {"name": "colour", "kind": "categorical", "categories": ["red", "blue"], "missing": True},
        {"name": "score", "kind": "continuous", "lower": 0, "upper": 1, "bins": 4,
         "missing": True},
    ]},
    "test",
)


def table(**columns) -> pd.DataFrame:
    return pd.DataFrame(columns)


def test_domain_comes_from_the_schema_alone() -> None:
    domain = TableEncoder(SCHEMA).domain
    assert domain.to_dict() == {"age": 3, "colour": 3, "score": 5}


def test_values_beyond_public_bounds_are_clipped_into_the_end_bins() -> None:
    encoder = TableEncoder(SCHEMA)
    data = table(age=[5.0, 18.0, 29.0, 30.0, 90.0, 500.0], colour=["red"] * 6,
                 score=[-3.0, 0.0, 0.26, 0.5, 1.0, 7.0])
    codes = encoder.encode(data).codes
    assert codes[:, 0].tolist() == [0, 0, 0, 1, 2, 2]
    assert codes[:, 2].tolist() == [0, 0, 1, 2, 3, 3]


def test_missing_values_get_their_own_code_and_come_back_missing() -> None:
    encoder = TableEncoder(SCHEMA)
    data = table(age=[20.0, 40.0], colour=["blue", np.nan], score=[np.nan, 0.3])
    codes = encoder.encode(data).codes
    assert codes[:, 1].tolist() == [1, 2]
    assert codes[:, 2].tolist() == [4, 1]
    decoded = encoder.decode(codes, np.random.default_rng(0))
    assert decoded["colour"].isna().tolist() == [False, True]
    assert decoded["score"].isna().tolist() == [True, False]


def test_decoding_draws_typed_values_within_the_bin() -> None:
    encoder = TableEncoder(SCHEMA)
    codes = np.array([[0, 0, 0], [1, 1, 1], [2, 0, 3]] * 500)
    decoded = encoder.decode(codes, np.random.default_rng(1))
    age = decoded["age"].to_numpy()
    assert decoded["age"].dtype == np.int64
    assert age[0::3].min() >= 18 and age[0::3].max() <= 29
    assert age[1::3].min() >= 30 and age[1::3].max() <= 59
    assert age[2::3].min() >= 60 and age[2::3].max() == 90  # last bin includes the upper bound
    score = decoded["score"].to_numpy()
    assert ((score[1::3] >= 0.25) & (score[1::3] < 0.5)).all()


@pytest.mark.parametrize("seed", [0, 1])
def test_adult_round_trip_keeps_every_code(seed: int) -> None:
    schema = load_schema(ADULT / "schema.yaml")
    encoder = TableEncoder(schema)
    real = read_table(ADULT / "adult_test.csv", schema).head(3000)
    codes = encoder.encode(real).codes
    decoded = encoder.decode(codes, np.random.default_rng(seed))
    np.testing.assert_array_equal(encoder.encode(decoded).codes, codes)
    assert list(decoded.columns) == schema.names
    assert (decoded["education-num"] == real["education-num"]).all()  # one bin per code: exact


def test_derived_columns_are_filled_in_from_their_source() -> None:
    schema = parse_schema({"columns": [
        {"name": "level", "kind": "categorical", "categories": ["low", "high"], "missing": True},
        {"name": "code", "kind": "integer", "lower": 1, "upper": 2, "missing": True,
         "derived_from": {"column": "level", "values": {"low": 1, "high": 2}}},
        {"name": "label", "kind": "categorical", "categories": ["L", "H"], "missing": True,
         "derived_from": {"column": "level", "values": {"low": "L", "high": "H"}}},
    ]}, "test")
    encoder = TableEncoder(schema)
    assert encoder.domain.to_dict() == {"level": 3}
    decoded = encoder.decode(np.array([[0], [1], [2]]), np.random.default_rng(0))
    assert list(decoded.columns) == ["level", "code", "label"]
    assert decoded["code"].tolist() == [1, 2, pd.NA]
    assert decoded["label"].tolist()[:2] == ["L", "H"] and pd.isna(decoded["label"][2])


def test_adult_education_num_is_derived_and_round_trips() -> None:
    schema = load_schema(ADULT / "schema.yaml")
    real = read_table(ADULT / "adult_train.csv", schema).head(500)
    encoder = TableEncoder(schema)
    assert "education-num" not in encoder.domain
    decoded = encoder.decode(encoder.encode(real).codes, np.random.default_rng(0))
    assert (decoded["education-num"] == real["education-num"]).all()
