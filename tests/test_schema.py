"""Schemas: public domains, binning, and validation errors."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.errors import SchemaError
from synthpriv.schema import parse_schema

from .conftest import ADULT


def column(**fields) -> dict:
    return {"columns": [fields]}


def test_adult_schema_declares_every_column() -> None:
    from synthpriv.schema import load_schema

    schema = load_schema(ADULT / "schema.yaml")
    header = (ADULT / "adult_train.csv").read_text().splitlines()[0].split(",")
    assert schema.names == header
    assert schema.column("age").bin_edges()[[0, -1]].tolist() == [17, 90]


def test_integer_columns_get_one_bin_per_value_when_small() -> None:
    schema = parse_schema(column(name="x", kind="integer", lower=1, upper=5), "t")
    assert schema.columns[0].bin_edges().tolist() == [1, 2, 3, 4, 5, 6]


def test_explicit_edges_and_equal_width_bins() -> None:
    schema = parse_schema(
        {"columns": [
            {"name": "a", "kind": "continuous", "lower": 0, "upper": 1, "bins": 4},
            {"name": "b", "kind": "integer", "lower": 0, "upper": 100, "edges": [0, 1, 50, 100]},
        ]},
        "t",
    )
    np.testing.assert_allclose(schema.columns[0].bin_edges(), [0, 0.25, 0.5, 0.75, 1])
    assert schema.columns[1].bin_edges().tolist() == [0, 1, 50, 100]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (column(name="a", kind="integer", lower=0, upper=9, edges=[0, 5, 4, 9]), "increase"),
        (column(name="a", kind="integer", lower=0, upper=9, edges=[1, 9]), "start at lower"),
        (column(name="a", kind="integer", lower=0, upper=9, bins=3, edges=[0, 9]), "not both"),
        (column(name="a", kind="categorical", categories=["x", "x"]), "repeat"),
        (column(name="a", kind="prose"), "kind"),
        (column(name="a", kind="categorical", categories=["x"], colour=1), "unknown key"),
        ({"columns": [{"name": "a", "kind": "categorical", "categories": ["x"]}] * 2}, "repeat"),
        ({"columns": [{"name": "a", "kind": "categorical", "categories": ["x"]}],
          "unknown_categories": "missing"}, "needs 'missing: true'"),
    ],
)
def test_bad_schemas_are_refused_with_the_reason(raw: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_schema(raw, "t")


LEVEL = {"name": "level", "kind": "categorical", "categories": ["low", "high"]}


def derived(**fields) -> dict:
    """A schema with ``level`` and a column ``code`` derived from it (``fields`` override)."""
    code = {"name": "code", "kind": "integer", "lower": 1, "upper": 2,
            "derived_from": {"column": "level", "values": {"low": 1, "high": 2}}, **fields}
    return {"columns": [LEVEL, code]}


def test_derived_columns_are_not_modelled() -> None:
    schema = parse_schema(derived(), "t")
    assert [c.name for c in schema.modelled] == ["level"]
    assert schema.names == ["level", "code"]


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (derived(derived_from={"column": "nope", "values": {}}), "'nope' is not a column"),
        (derived(derived_from={"column": "code", "values": {}}), "must be a categorical"),
        (derived(derived_from={"column": "level", "values": {"low": 1}}), r"unmapped \['high'\]"),
        (derived(derived_from={"column": "level", "values": {"low": 1, "high": 2, "mid": 1}}),
         r"not categories \['mid'\]"),
        (derived(derived_from={"column": "level", "values": {"low": 1, "high": 3}}),
         "outside the domain"),
        (derived(derived_from={"column": "level", "values": {"low": 1, "high": 1.5}}),
         "outside the domain"),
        ({"columns": [{**LEVEL, "missing": True}, derived()["columns"][1]]}, "set 'missing: true'"),
    ],
)
def test_bad_derived_columns_are_refused(raw: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_schema(raw, "t")


def test_schema_infer_drafts_derived_columns_for_review(tmp_path) -> None:
    from synthpriv.schema import load_schema
    from synthpriv.schema_infer import infer_schema

    path = tmp_path / "t.csv"
    path.write_text("level,code,label,other,flat\nlow,1,L,a,x\nhigh,2,H,a,x\nlow,1,L,b,x\n,,,b,x\n"
                    "high,2,H,b,x\n,,,a,x\n")  # every value seen twice: a one-off is not listed
    draft, notes = infer_schema(path)
    derived = {c["name"]: c.get("derived_from") for c in draft["columns"]}
    assert derived["code"] == {"column": "level", "values": {"low": 1, "high": 2}}
    assert derived["label"] == {"column": "level", "values": {"low": "L", "high": "H"}}
    assert derived["level"] is derived["other"] is derived["flat"] is None  # not functions
    assert len(notes) == 2 and all("public knowledge" in note for note in notes)
    parse_schema(draft, "draft")  # a valid schema
    adult, _ = infer_schema(ADULT / "adult_train.csv")
    drafted = next(c for c in adult["columns"] if c["name"] == "education-num")
    assert drafted["derived_from"] == load_schema(ADULT / "schema.yaml").column(
        "education-num").derived_from.model_dump()
