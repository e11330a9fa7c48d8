"""benchmarks/value_sweep.py's checks, on hand-made releases (no run): each class of problem is
found where it is and only there."""

from __future__ import annotations

import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from value_sweep import check_table, real_type, summary_table  # noqa: E402


def _schema(**kinds: str) -> dict:
    return {"columns": [{"name": name, "kind": kind} for name, kind in kinds.items()]}


def test_each_check_finds_its_problem_and_a_faithful_release_has_none() -> None:
    real = pd.DataFrame({
        "count": [str(v) for v in [0, 1, 2, 3] * 25],
        "when": ["2021-03-04", "2021-05-06"] * 50,
        "key": [f"k{i}" for i in range(100)],
        "label": ["a"] * 60 + ["b"] * 40,
        "rate": [f"{v / 10:.1f}" for v in range(100)],
    })
    kinds = _schema(count="integer", when="date", key="id", label="categorical",
                    rate="continuous")
    faithful = real.assign(key=[f"fresh{i}" for i in range(100)])  # ids: fresh keys
    assert check_table("t", real, faithful, kinds) == []
    bad = pd.DataFrame({
        "count": ["-1", "1.0", "2", "30"] * 25,               # negative, 30.0-style, outside
        "when": ["03/04/2021", "2021-05-06"] * 50,            # another format
        "key": ["k1"] + [f"new{i}" for i in range(99)],       # a real key copied
        "label": [""] * 60 + ["b"] * 40,                      # 'a' lost to blanks
        "rate": [f"{v / 1000:.3f}" for v in range(100)],      # more decimals
    })
    found = {(p.column, p.check) for p in check_table("t", real, bad, kinds)}
    assert {("count", "negative"), ("count", "integer_float"), ("count", "outside"),
            ("when", "date_format"), ("key", "leak"), ("label", "missing"),
            ("label", "lost_spike"), ("rate", "decimals"), ("count", "fake_spike")} <= found
    assert not any(check in ("dropped", "not_number") for _, check in found)


def test_the_reader_types_and_the_summary_counts_columns() -> None:
    assert real_type(pd.Series(["1", "NA", "3"])) == "integer"
    assert real_type(pd.Series(["1.5", ""])) == "number"
    assert real_type(pd.Series(["2021-01-02"])) == "date"
    assert real_type(pd.Series(["x", "1"])) == "text"
    problems = [{"check": "lost_spike", "column": "c", "table": "t", "detail": ""}] * 3
    table = summary_table([{"table": "t", "rows": 5, "columns": 1, "note": "", "seconds": 1.0,
                            "problems": problems}])
    assert "| t | 5 | 1 | 1 |" in table and table.count("| 1 |") >= 2  # 3 lines, one column
