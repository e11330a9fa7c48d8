"""benchmarks/suite.py --list TABLE.COLUMN=LIST: the safe draft with one column over a named public
list, written as a user writes it (the one line), read back through the schema's list resolution;
the other columns stay auto."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

from synthpriv.public_lists import list_values
from synthpriv.schema import load_schema

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
SUITE = runpy.run_path(str(BENCHMARKS / "suite.py"))


def test_the_list_line_replaces_only_its_column(tmp_path: Path) -> None:
    lists = SUITE["parse_lists"](["hhs_breaches.State=us_state_code", "loans.state=us_state_code"])
    assert lists == {"hhs_breaches": {"State": "us_state_code"}, "loans": {"state": "us_state_code"}}
    path = tmp_path / "schema-safe.yaml"
    path.write_text("columns:\n- {name: State, kind: auto}\n- {name: n, kind: auto}\n")
    SUITE["with_lists"](path, lists["hhs_breaches"])
    assert "list: us_state_code" in path.read_text()  # the name, not 57 values typed out
    schema = load_schema(path)
    assert schema.column("State").categories == list_values("us_state_code")
    assert schema.column("n").kind == "auto"


def test_a_list_for_a_missing_column_or_a_bad_option_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "schema-safe.yaml"
    path.write_text("columns:\n- {name: n, kind: auto}\n")
    with pytest.raises(ValueError, match="lacks"):
        SUITE["with_lists"](path, {"State": "us_state_code"})
    with pytest.raises(ValueError, match="TABLE.COLUMN=LIST"):
        SUITE["parse_lists"](["State=us_state_code"])
