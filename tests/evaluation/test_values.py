"""The value-level yardstick: hand-made tables where every figure is known exactly."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from synthpriv.evaluation.plots import values_figure
from synthpriv.evaluation.report import json_ready, sections, to_markdown
from synthpriv.evaluation.values import csv_cells, format_checks, ks_distance, value_fidelity


def test_ks_distance_is_the_largest_gap_between_the_two_cdfs():
    # F_real(4) = 1, F_synth(4) = 1/4 → 0.75; identical samples → 0; disjoint → 1.
    assert ks_distance(np.array([1.0, 2, 3, 4]), np.array([3.0, 5, 6, 7])) == pytest.approx(0.75)
    assert ks_distance(np.array([1.0, 2, 2]), np.array([2.0, 1, 2])) == 0.0
    assert ks_distance(np.array([0.0, 0]), np.array([1.0])) == 1.0
    assert ks_distance(np.array([]), np.array([1.0])) is None


def test_a_lost_point_mass_is_measured_exactly_and_heads_the_summary():
    # Real: 975 zeros of 1000 rows (the 97.5 % zeros of issue 24); synthetic: 490 zeros.
    real = pd.DataFrame({"x": [0] * 975 + list(range(1, 26))})
    synthetic = pd.DataFrame({"x": [0] * 490 + list(range(1, 511))})
    values = value_fidelity(real, synthetic, ["x"])
    masses = values["columns"]["x"]["point_masses"]
    assert [m["value"] for m in masses] == [0]  # every other value holds 0.1 % < 1 %
    assert masses[0]["real"] == pytest.approx(0.975)
    assert masses[0]["synthetic"] == pytest.approx(0.49)
    assert masses[0]["error"] == pytest.approx(0.485)
    worst = values["summary"]["worst_point_mass"]
    assert (worst["column"], worst["value"]) == ("x", 0)
    assert worst["error"] == pytest.approx(0.485)
    assert values["columns"]["x"]["distance"] == pytest.approx(0.485)  # the KS gap at 0


def test_a_spike_absent_from_the_real_table_is_fake_and_a_real_mass_is_not():
    real = pd.DataFrame({"x": [50] * 20 + list(range(100, 1080))})  # 50 holds 2 %, 100.. 0.1 %
    synthetic = pd.DataFrame({"x": [1000] * 30 + [50] * 20 + [-5] * 15 + list(range(935))})
    spikes = value_fidelity(real, synthetic, ["x"])["columns"]["x"]["fake_spikes"]
    # 1000 occurs once in 1000 real rows (0.1 %, not < 0.1 %): not fake; -5 never: fake (1.5 %).
    assert [(s["value"], s["synthetic"]) for s in spikes] == [(-5, pytest.approx(0.015))]


def test_one_off_real_values_that_reappear_in_the_release_are_counted():
    real = pd.DataFrame({"city": ["a", "a", "b", "c", None], "n": [1.5, 1.5, 2.25, 7.0, 8.0]})
    synthetic = pd.DataFrame({"city": ["a", "c", "c", "d", "d"], "n": [2.25, 3.0, 3.0, 8.0, 1.5]})
    values = value_fidelity(real, synthetic, ["n"])
    # city: once in the real table: b, c; c is in the release → 1 of 2.
    assert values["columns"]["city"]["one_offs"] == {"real": 2, "copied": 1, "share": 0.5}
    # n: once: 2.25, 7, 8; the release holds 2.25 and 8 → 2 of 3.
    assert values["columns"]["n"]["one_offs"]["copied"] == 2
    assert values["summary"]["one_offs_copied"] == 3 and values["summary"]["one_offs_real"] == 5
    assert values["summary"]["one_off_share"] == pytest.approx(0.6)


def test_categorical_distance_is_the_tvd_with_missing_as_a_value():
    real = pd.DataFrame({"c": ["a", "a", "b", None]})
    synthetic = pd.DataFrame({"c": ["a", "b", "b", "b"]})
    column = value_fidelity(real, synthetic, [])["columns"]["c"]
    # shares a .5/.25, b .25/.75, missing .25/0 → (0.25 + 0.5 + 0.25) / 2
    assert column["distance_name"] == "TVD"
    assert column["distance"] == pytest.approx(0.5)
    assert column["missing"] == {"real": 0.25, "synthetic": 0.0}


def test_categories_beyond_the_top_ten_are_grouped_for_the_plot():
    labels = [f"k{i:02d}" for i in range(15)]
    real = pd.DataFrame({"c": [label for i, label in enumerate(labels) for _ in range(20 - i)]})
    synthetic = pd.DataFrame({"c": labels + ["new"]})
    categories = value_fidelity(real, synthetic, [])["columns"]["c"]["categories"]
    assert categories["labels"] == labels[:10]
    assert categories["other_count"] == 6  # k10..k14 and the synthetic-only "new"
    assert categories["other_real"] == pytest.approx(sum(range(6, 11)) / len(real))
    assert categories["other_synthetic"] == pytest.approx(6 / 16)


def test_format_checks_find_integers_as_floats_extra_decimals_and_negatives():
    real_cells = pd.Series(["30", "41", "", "7"])
    synthetic_cells = pd.Series(["30.0", "41", "7.000", "-3"])
    check = format_checks(real_cells, synthetic_cells, np.array([30.0, 41, np.nan, 7]),
                          np.array([30.0, 41, 7, -3]))
    assert check["real_integers"] and check["integer_as_float"] == pytest.approx(0.5)
    assert check["real_max_decimals"] == 0 and check["synthetic_max_decimals"] == 3
    assert check["more_decimals"] == pytest.approx(0.5)
    assert check["negative"] == pytest.approx(0.25)
    decimals = format_checks(pd.Series(["1.5", "2.25"]), pd.Series(["1.125", "2.5", "3.1e-2"]),
                             np.array([1.5, 2.25]), np.array([1.125, 2.5, 0.031]))
    assert not decimals["real_integers"] and decimals["integer_as_float"] == 0.0
    assert decimals["more_decimals"] == pytest.approx(2 / 3)  # 1.125 and 3.1e-2 = 0.031
    assert decimals["negative"] == 0.0


def test_negatives_are_no_issue_where_the_real_column_has_them():
    check = format_checks(pd.Series(["-1", "2"]), pd.Series(["-4", "5"]), np.array([-1.0, 2]),
                          np.array([-4.0, 5]))
    assert not check["real_non_negative"] and check["negative"] == 0.0


def test_value_fidelity_reads_format_from_csv_cells_and_renders(tmp_path):
    real = pd.DataFrame({"age": [30, 41, 41, 52], "job": ["x", "y", "y", "z"]})
    (tmp_path / "real.csv").write_text("age,job\n30,x\n41,y\n41,y\n52,z\n")
    (tmp_path / "synth.csv").write_text("age,job\n30.0,x\n41.0,y\n40.5,y\n41,z\n")
    synthetic = pd.DataFrame({"age": [30.0, 41.0, 40.5, 41.0], "job": ["x", "y", "y", "z"]})
    values = value_fidelity(real, synthetic, ["age"], real_cells=csv_cells(tmp_path / "real.csv", None),
                            synthetic_cells=csv_cells(tmp_path / "synth.csv", None))
    check = values["columns"]["age"]["format"]
    assert check["integer_as_float"] == pytest.approx(0.5)  # 30.0, 41.0 (40.5 is no integer)
    assert check["more_decimals"] == pytest.approx(0.75)
    assert values["summary"]["integer_as_float_columns"] == 1
    assert values["columns"]["job"].get("format") is None
    assert csv_cells(real, None) is None  # a table in memory has no written cells
    json.dumps(json_ready(values))  # report.json must hold it
    markdown = to_markdown([s for s in sections_of(values) if s.title == "Values"])
    assert "integers as floats" in markdown and "values.png" in markdown
    assert values_figure(values)[:4] == b"\x89PNG"


def sections_of(values: dict) -> list:
    """The report's sections for a report that holds only ``values`` (and what the first two
    sections read)."""
    utility = {"marginals": {"bins": 16}, "association": {"mean": 0.0, "max": 0.0, "worst": []}}
    report = {"name": "t", "notice": "n", "data": {"rows_real": 4, "rows_synthetic": 4,
              "rows_holdout": None, "holdout_source": None}, "created_utc": "now", "seconds": 0.0,
              "notes": [], "utility": utility, "column_fidelity": {"columns": []}, "values": values}
    return sections(report)


def test_the_evaluation_reads_the_release_csv_as_written(tmp_path):
    """Wired into evaluate_sources: a release from CSV files gets the format checks of its cells
    (another tool writing every integer as 30.0); a release in memory gets none."""
    from synthpriv.config import EvaluationConfig
    from synthpriv.evaluation.evaluate import evaluate_sources, evaluate_tables
    from synthpriv.schema import load_schema
    from tests.evaluation.tiny import NUMERIC, tiny_table, write_tiny_job

    write_tiny_job(tmp_path)
    release = tiny_table(400, 5)
    release.astype({"size": float}).to_csv(tmp_path / "release.csv", index=False)
    settings = EvaluationConfig(attacks=False, quality_report=False)
    report = evaluate_sources(
        {"real": tmp_path / "train.csv", "synthetic": tmp_path / "release.csv"},
        load_schema(tmp_path / "schema.yaml"), numeric_columns=NUMERIC, settings=settings,
        progress=False)
    columns = report["values"]["columns"]
    assert columns["size"]["format"]["integer_as_float"] == 1.0
    assert columns["weight"]["format"]["integer_as_float"] == 0.0
    assert report["values"]["summary"]["integer_as_float_columns"] == 1
    in_memory = evaluate_tables(tiny_table(400, 1), release, numeric_columns=NUMERIC,
                                settings=settings, progress=False)
    assert in_memory["values"]["columns"]["size"]["format"] is None


def test_format_checks_count_values_outside_the_real_range():
    check = format_checks(pd.Series(["1990", "2010"]), pd.Series(["1545", "2000", "2046", "1990"]),
                          np.array([1990.0, 2010]), np.array([1545.0, 2000, 2046, 1990]))
    assert check["outside"] == pytest.approx(0.5)  # 1545 and 2046; the bounds themselves are in


def test_the_fake_spike_thresholds_can_be_set():
    real = pd.DataFrame({"x": np.r_[np.zeros(5), np.arange(1.0, 96)]})  # 0 holds 5 % of real
    synthetic = pd.DataFrame({"x": np.r_[np.zeros(30), np.arange(1.0, 71)]})
    default = value_fidelity(real, synthetic, ["x"])["columns"]["x"]["fake_spikes"]
    assert default == []  # 5 % of the real rows: not fake at the report's 0.1 %
    wide = value_fidelity(real, synthetic, ["x"], spike=(0.05, 0.06))
    assert [s["value"] for s in wide["columns"]["x"]["fake_spikes"]] == [0]
    assert wide["thresholds"]["spike_real"] == 0.06
