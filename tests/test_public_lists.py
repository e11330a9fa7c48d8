"""Named public lists: their values (from pycountry and fixed calendars), a schema column over one
(``categories: {list: NAME}``) end to end, the error for an unknown name, and the drafts'
suggestions (the safe draft from the header only, the data-read draft from the values seen)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pycountry
import pytest
import yaml

from synthpriv import Synthesizer
from synthpriv.errors import DataError, SchemaError
from synthpriv.public_lists import LISTS, list_values, suggested_lists
from synthpriv.schema import load_schema, parse_schema
from synthpriv.schema_infer import infer_schema

US = list(pycountry.subdivisions.get(country_code="US"))


def state_column(**fields) -> dict:
    return {"columns": [{"name": "State", "kind": "categorical", **fields},
                        {"name": "n", "kind": "integer", "lower": 0, "upper": 9}]}


def test_us_state_codes_are_the_states_dc_and_the_territories_pycountry_gives() -> None:
    codes = list_values("us_state_code")
    kinds = {s.code.removeprefix("US-"): s.type for s in US}
    assert sorted(codes) == sorted(kinds)
    assert sum(kinds[c] == "State" for c in codes) == 50
    assert [c for c in codes if kinds[c] == "District"] == ["DC"]
    territories = sorted(c for c in codes if kinds[c] == "Outlying area")
    assert {"PR", "GU", "VI", "AS", "MP"} <= set(territories)
    assert len(codes) == 50 + 1 + len(territories)
    assert all(len(code) == 2 and code.isupper() for code in codes)
    assert "California" in list_values("us_state_name") and len(list_values("us_state_name")) == len(codes)


def test_iso_lists_hold_every_country_currency_and_language_once() -> None:
    for name in ("iso_country_alpha2", "iso_country_alpha3", "iso_country_name",
                 "iso_country_common_name"):
        assert len(list_values(name)) == 249 == len(pycountry.countries), name
    assert {"DE", "US", "CA"} <= set(list_values("iso_country_alpha2"))
    assert "DEU" in list_values("iso_country_alpha3") and "Germany" in list_values("iso_country_name")
    assert "Bolivia" in list_values("iso_country_common_name")
    assert "Bolivia" not in list_values("iso_country_name")  # ISO's short name is longer
    assert {"EUR", "USD", "JPY"} <= set(list_values("iso_currency_code"))
    assert {"en", "de"} <= set(list_values("iso_language_alpha2"))
    assert "English" in list_values("iso_language_name")
    for name in LISTS:
        values = list_values(name)
        assert values and len(values) == len(set(values)), name


def test_weekday_and_month_lists_are_fixed_in_calendar_order() -> None:
    assert list_values("weekday_name")[0] == "Monday" and len(list_values("weekday_name")) == 7
    assert list_values("weekday_abbrev") == ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]
    assert list_values("month_name")[-1] == "December" and len(list_values("month_name")) == 12
    assert list_values("month_abbrev")[8] == "Sep"


def test_a_column_names_a_list_in_one_line_and_gets_its_values() -> None:
    schema = parse_schema(state_column(categories={"list": "us_state_code"}, missing=True,
                                       unknown_categories="missing"), "t")
    assert schema.column("State").categories == list_values("us_state_code")
    assert not schema.column("State").discovered  # public: the domain step buys nothing
    other = parse_schema(state_column(categories={"list": "us_state_code", "extra": ["Other"]},
                                      other="Other"), "t")
    assert other.column("State").categories == list_values("us_state_code") + ["Other"]


@pytest.mark.parametrize(("categories", "expected"), [
    ({"list": "us_states"}, "did you mean us_state_"),
    ({"list": "nope"}, "names no public list"),
    ({"lst": "us_state_code"}, "takes 'list: <name>'"),
])
def test_a_wrong_list_names_the_column_the_key_and_the_known_lists(categories: dict,
                                                                    expected: str) -> None:
    with pytest.raises(SchemaError) as caught:
        parse_schema(state_column(categories=categories, missing=True), "schema.yaml")
    message = str(caught.value)
    assert expected in message and "column 'State'" in message and "categories" in message
    if "names no public list" in message:
        assert all(name in message for name in LISTS)


def test_a_list_in_a_schema_file_reads_as_written(tmp_path: Path) -> None:
    path = tmp_path / "schema.yaml"
    path.write_text("columns:\n- {name: day, kind: categorical, categories: {list: weekday_name}}\n")
    assert load_schema(path).column("day").categories == list_values("weekday_name")


def _states(rows: int, seed: int) -> pd.DataFrame:
    """Rows whose State is a US postal code, a few a Canadian province (outside the list)."""
    rng = np.random.default_rng(seed)
    codes = list_values("us_state_code")
    state = rng.choice(codes[:12] + ["ON", "QC"], size=rows)
    return pd.DataFrame({"State": state, "n": rng.integers(0, 10, size=rows)})


@pytest.mark.parametrize(("policy", "label"), [
    ({"missing": True, "unknown_categories": "missing"}, ""),
    ({"categories": {"list": "us_state_code", "extra": ["Other"]}, "other": "Other"}, "Other"),
])
def test_a_run_over_a_list_releases_only_its_values_or_the_unknown_label(
        tmp_path: Path, policy: dict, label: str) -> None:
    """End to end from a schema file: every released State is in the list, or the unknown
    policy's label (missing: an empty cell; other: its label); values outside (ON, QC) never."""
    schema_path = tmp_path / "schema.yaml"
    schema = state_column(**{"categories": {"list": "us_state_code"}, **policy})
    schema_path.write_text(yaml.safe_dump(schema))
    data = tmp_path / "data.csv"
    _states(800, 1).to_csv(data, index=False)
    synth = Synthesizer(schema=schema_path, epsilon=1.0, delta=1e-5, recipe="mst", seed=5)
    synth.fit(data)
    folder = synth.release(tmp_path / "release")
    released = pd.read_csv(folder / "synthetic.csv", dtype=str, keep_default_na=False)["State"]
    allowed = set(list_values("us_state_code")) | {label}
    assert len(released) > 0 and set(released) <= allowed
    assert not set(released) & {"ON", "QC"}
    assert label in set(released)  # 1 row in 7 is outside the list: its label is released
    assert released.isin(list_values("us_state_code")).mean() > 0.5


def test_a_value_outside_the_list_under_the_error_policy_refuses_the_table(tmp_path: Path) -> None:
    schema = state_column(categories={"list": "us_state_code"})
    synth = Synthesizer(schema=schema, epsilon=1.0, delta=1e-5, recipe="independent", seed=1)
    with pytest.raises(DataError, match="State"):
        synth.fit(_states(200, 2))


def test_the_safe_draft_suggests_a_list_from_the_header_only() -> None:
    """Two tables with one header and different cells draft the same file and notes (no cell
    read); the suggested entry is a valid schema column; a name that is no list's gets none."""
    frames = [pd.DataFrame({"State": ["CA", "NY"], "Statement": ["a", "b"]}),
              pd.DataFrame({"State": ["x", "y"], "Statement": ["CA", "TX"]})]
    drafts = [infer_schema(frame, safe=True) for frame in frames]
    assert drafts[0] == drafts[1]
    schema, notes = drafts[0]
    assert [c["kind"] for c in schema["columns"]] == ["auto", "auto"]  # suggested, not assumed
    # the candidate lists, adopted by the run only if every DP-discovered category is in one
    assert schema["columns"][0]["lists"] == list(suggested_lists("State"))
    assert "lists" not in schema["columns"][1]
    [note] = [n for n in notes if "public code list" in n]
    assert "'State'" in note and "us_state_code" in note and "No cell was read" in note
    entry = yaml.safe_load(note[note.index("{name:"):note.index("}", note.index("unknown_")) + 1])
    column = parse_schema({"columns": [entry]}, "note").column("State")
    assert column.categories == list_values("us_state_code")
    assert suggested_lists("Statement") == () and suggested_lists("country") != ()


def test_the_data_read_draft_suggests_the_list_holding_every_value_seen() -> None:
    frame = pd.DataFrame({"state": ["CA", "NY", "TX", "WA"] * 5,
                          "code": ["DE", "FR", "IT", "ZZ"] * 5,
                          "where": ["DEU", "FRA", "ITA", "USA"] * 5})
    schema, notes = infer_schema(frame)
    listed = {n.split("'")[1]: n for n in notes if "public list" in n}
    assert "{list: us_state_code}" in listed["state"]
    assert "code" not in listed  # ZZ is no ISO code
    assert "{list: iso_country_alpha3}" in listed["where"]  # the name suggests none: by values
    assert schema["columns"][0]["categories"] == ["CA", "NY", "TX", "WA"]  # the draft unchanged


@pytest.mark.parametrize(("header", "first"), [
    ("State", "us_state_code"), ("state_name", "us_state_name"), ("Country Code", "iso_country_alpha2"),
    ("country_name", "iso_country_name"), ("CURRENCY", "iso_currency_code"), ("lang", "iso_language_alpha2"),
    ("day_name", "weekday_name"), ("weekday", None), ("month", None), ("Statement", None), ("st", None),
])
def test_header_names_suggest_the_list_they_name_and_bare_numbers_names_none(header: str,
                                                                            first: str | None) -> None:
    """``weekday``/``month`` are most often numbers (bikeshare's weekday is 0-6): no suggestion."""
    suggested = suggested_lists(header)
    assert (suggested[0] if suggested else None) == first
    assert all(name in LISTS for name in suggested)


@pytest.mark.parametrize("header", ["Country Name", "country: code", "US, state"])
def test_the_suggested_line_parses_whatever_the_header_holds(header: str) -> None:
    """The note's one-line entry is valid YAML naming the column as the header writes it."""
    _, notes = infer_schema(pd.DataFrame({header: ["x"]}), safe=True)
    [note] = [n for n in notes if "public code list" in n]
    line = note[note.index("{name:"):note.index("unknown_categories: missing}") + 29]
    assert parse_schema({"columns": [yaml.safe_load(line)]}, "note").names == [header]


def test_the_data_read_draft_makes_a_column_of_unique_list_values_categorical_over_the_list(
        tmp_path: Path) -> None:
    """statsmodels statecrime: 51 state names, each once (3 with a trailing space), were
    drafted as free text and released empty; they are a public list's values, so the draft
    declares the list (public categories: no value read from the data is listed) and the run
    releases only its values. Unique values in no list stay keys / text."""
    names = list_values("us_state_name")[:40]
    frame = pd.DataFrame({"state": [*names[:-1], names[-1] + " "],
                          "code": [f"K{i:03d}" for i in range(40)],
                          "n": np.arange(40) % 7})
    schema, notes = infer_schema(frame)
    state, code = schema["columns"][0], schema["columns"][1]
    assert state == {"name": "state", "kind": "categorical", "categories": {"list": "us_state_name"},
                     "missing": True, "unknown_categories": "missing"}
    [note] = [n for n in notes if n.startswith("column 'state'")]
    assert "us_state_name" in note and "1 cell(s)" in note and "strip_labels" in note
    assert code["kind"] == "id"
    assert not any("public list" in n and "'state'" in n and "every category seen" in n
                   for n in notes)
    path = tmp_path / "schema.yaml"
    schema.pop("drafted_by")
    path.write_text(yaml.safe_dump(schema))
    synth = Synthesizer(schema=path, epsilon=1.0, delta=1e-5, recipe="mst", seed=3)
    synth.fit(frame)
    released = synth.sample(200)["state"].dropna()
    assert set(released) <= set(list_values("us_state_name"))
