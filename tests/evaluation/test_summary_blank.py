"""The terminal summary and the report on a release whose columns came back all missing
(statsmodels committee / scotvote / statecrime / danish_data at ε = 1, safe draft: every scored
column blank; benchmarks/README.md "newtables"): ``synthpriv run`` crashed on the undefined
SDMetrics score after writing the release, and the TVD of 0 read as a perfect release."""

from __future__ import annotations

from synthpriv.evaluation.job import summary_lines
from synthpriv.evaluation.report import _summary_section, to_markdown
from synthpriv.evaluation.scored import blank_columns_note

BLANK = ("nothing in a, b was above the domain step's noise (too few rows for its σ: see "
         "'synthpriv plan'), so they are released all missing (or all 'other').")
LOST = "discovery kept categories holding about 10% of c's non-empty cells"


def _report(score: float | None, warnings: list[str]) -> dict:
    return {"utility": {"marginals": {"1-way": {"mean": 0.0}, "2-way": {"mean": 0.0}},
                        "association": {"mean": 0.0},
                        "sdv_quality": {"score": score, "properties": {}}},
            "notes": [], "domain_warnings": warnings}


def test_an_undefined_quality_score_is_said_not_formatted() -> None:
    lines = summary_lines(_report(None, [BLANK]))
    assert "utility: SDMetrics quality score not defined" in lines[1]
    assert summary_lines(_report(0.5, []))[1] == "utility: SDMetrics quality score 0.500"


def test_blank_columns_are_said_to_score_zero_in_summary_and_report() -> None:
    note = blank_columns_note([BLANK])
    assert note is not None and "TVD 0" in note
    assert f"note: {note}" in summary_lines(_report(0.5, [BLANK]))
    assert blank_columns_note([LOST]) is None and blank_columns_note([]) is None
    assert not any("TVD 0" in line for line in summary_lines(_report(0.5, [LOST])))
    report = {"name": "t", "notice": "n", "data": {"rows_real": 20, "rows_synthetic": 20,
              "rows_holdout": None, "holdout_source": None}, "created_utc": "now",
              "seconds": 0.0, "notes": [], "domain_warnings": [BLANK]}
    assert f"Note: {note}" in to_markdown([_summary_section(report)])
