"""benchmarks/vs_dpmm.py: our margin against dpmm's best is judged with the noise of both sets of
runs (a Welch interval), not by the means alone, and per column."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
VS = runpy.run_path(str(BENCHMARKS / "vs_dpmm.py"))


def _run(recipe: str, tvd_2: float, tvd_3: float, mode: str = "safe", **extra: object) -> dict:
    return {"kind": "run", "table": "t", "recipe": recipe, "status": "ok", "tvd_2": tvd_2,
            "tvd_3": tvd_3, "schema_mode": "public bounds" if recipe.startswith("dpmm") else mode,
            **extra}


def test_welch_interval_matches_a_hand_computation() -> None:
    """ours 1, 2, 3 (mean 2, variance 1), theirs 4, 6 (mean 5, variance 2): difference -3, standard
    error √(1/3 + 1) = 1.1547, Welch's degrees of freedom (4/3)² / ((1/3)²/2 + 1²/1) = 1.6842."""
    from scipy import stats

    difference, low, high = VS["welch"]([1.0, 2.0, 3.0], [4.0, 6.0])
    half = stats.t.ppf(0.975, (4 / 3) ** 2 / ((1 / 3) ** 2 / 2 + 1)) * (4 / 3) ** 0.5
    assert difference == -3.0
    assert abs(low - (-3 - half)) < 1e-9 and abs(high - (-3 + half)) < 1e-9
    assert VS["welch"]([1.0], [4.0, 6.0]) == (-4.0, None, None)


def test_verdict_needs_the_interval_to_exclude_zero() -> None:
    """The same means (ours 0.039 against 0.042) are a tie with spread runs and a win with tight
    ones; with a single dpmm run the verdict is the means' and says so."""
    welch, verdict = VS["welch"], VS["verdict"]
    assert verdict(*welch([0.034, 0.044, 0.036, 0.042], [0.040, 0.044])) == "tie"
    assert verdict(*welch([0.0385, 0.0395, 0.0390, 0.0390], [0.0418, 0.0422])) == "below"
    assert verdict(*welch([0.0500, 0.0510], [0.0418, 0.0422])) == "above"
    assert verdict(*welch([0.039, 0.040], [0.042])) == "below (1 run)"


def test_command_line_pools_dpmm_and_lists_columns(tmp_path) -> None:
    """dpmm's best 2-way variant is PrivBayes (mean 0.10 over a file each), ours 0.20 / 0.21 is
    above it outside the noise, and above MST's single 3-way run 0.20; the column table sets our
    safe draft beside each dpmm variant."""
    ours = [_run("aim", 0.20, 0.30, distance_by_column={"a": 0.9}),
            _run("aim", 0.21, 0.31, distance_by_column={"a": 0.7})]
    dpmm = [_run("dpmm-privbayes", 0.10, 0.40, distance_by_column={"a": 0.2}),
            _run("dpmm-privbayes", 0.10, 0.40, distance_by_column={"a": 0.3}),
            _run("dpmm-mst", 0.15, 0.20)]
    for name, records in (("ours", ours), ("a", dpmm[:1]), ("b", dpmm[1:])):
        (tmp_path / f"{name}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    shown = subprocess.run(
        [sys.executable, str(BENCHMARKS / "vs_dpmm.py"), str(tmp_path / "ours.jsonl"),
         "--dpmm", str(tmp_path / "a.jsonl"), "--dpmm", str(tmp_path / "b.jsonl"),
         "--columns", "t"], capture_output=True, text=True, check=True).stdout
    row = next(line for line in shown.splitlines() if line.startswith("| t |"))
    two, three = (c.strip() for c in row.strip("|").split("|")[1:])
    assert "0.1000 privbayes (2)" in two and two.endswith("**above**")
    assert "0.2000 mst (1)" in three and three.endswith("**above (1 run)**")
    column = next(line for line in shown.splitlines() if line.startswith("| a |"))
    assert [c.strip() for c in column.strip("|").split("|")] == ["a", "0.800", "0.250"]
