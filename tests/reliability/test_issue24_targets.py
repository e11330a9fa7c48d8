"""Issue 24's "below dpmm" target (benchmarks/issue24_targets.py): dpmm's best is the lowest mean
over one variant's runs, not its luckiest single run, and both our drafts are judged against it."""

from __future__ import annotations

import json
import runpy
import subprocess
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _run(recipe: str, mode: str, tvd_2: float, tvd_3: float, status: str = "ok") -> dict:
    return {"kind": "run", "table": "t", "recipe": recipe, "schema_mode": mode, "status": status,
            "tvd_2": tvd_2, "tvd_3": tvd_3}


def _records() -> list[dict]:
    """dpmm MST: runs 0.08 and 0.16 (mean 0.12, 3-way 0.24); PrivBayes: one run 0.10 / 0.30 and a
    timeout; ours: safe 0.11 / 0.22, data-read 0.09 / 0.19 for both recipes."""
    floor = {"kind": "floor", "table": "t", "tvd_2": 0.01, "rows_train": 5000}
    dpmm = [_run("dpmm-mst", "public bounds", 0.08, 0.20), _run("dpmm-mst", "public bounds", 0.16, 0.28),
            _run("dpmm-privbayes", "public bounds", 0.10, 0.30),
            _run("dpmm-privbayes", "public bounds", 0.0, 0.0, status="timeout")]
    ours = [_run(recipe, mode, *figures) for recipe in ("aim", "mst")
            for mode, figures in (("safe", (0.11, 0.22)), ("draft", (0.09, 0.19)))]
    return [floor, *dpmm, *ours]


def test_best_dpmm_is_the_lowest_variant_mean() -> None:
    """2-way: PrivBayes' 0.10 (its timeout not counted) beats MST's mean 0.12, though one MST run
    scored 0.08; 3-way: MST's mean 0.24 beats PrivBayes' 0.30."""
    best_dpmm = runpy.run_path(str(BENCHMARKS / "issue24_targets.py"))["best_dpmm"]
    runs: dict = {}
    for r in _records():
        if r["kind"] == "run":
            runs.setdefault((r["table"], r["recipe"], r["schema_mode"]), []).append(r)
    assert best_dpmm(runs, "t", "tvd_2") == (0.10, "privbayes")
    value, variant = best_dpmm(runs, "t", "tvd_3")
    assert (round(value, 6), variant) == (0.24, "mst")
    assert best_dpmm(runs, "other", "tvd_2") == (None, "–")


def test_both_drafts_are_judged_against_the_best(tmp_path) -> None:
    """Safe (0.11 / 0.22) is above dpmm's 2-way 0.10: no; data-read (0.09 / 0.19): yes; the
    command line pools dpmm's records from two files given with --dpmm."""
    records = _records()
    (tmp_path / "ours.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records
                                                 if not r.get("recipe", "").startswith("dpmm")))
    dpmm = [r for r in records if r.get("recipe", "").startswith("dpmm")]
    (tmp_path / "a.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dpmm[:2]))
    (tmp_path / "b.jsonl").write_text("".join(json.dumps(r) + "\n" for r in dpmm[2:]))
    shown = subprocess.run(
        [sys.executable, str(BENCHMARKS / "issue24_targets.py"), str(tmp_path / "ours.jsonl"),
         "--dpmm", str(tmp_path / "a.jsonl"), "--dpmm", str(tmp_path / "b.jsonl")],
        capture_output=True, text=True, check=True).stdout
    row = next(line for line in shown.splitlines() if line.startswith("| t |"))
    cells = [c.strip() for c in row.strip("|").split("|")]
    assert cells[5] == "0.100 / 0.240"
    assert cells[6] == "**no** / **no**"
    assert cells[7] == "yes / yes"


def _row(records: list[dict]) -> list[str]:
    floor = {"kind": "floor", "table": "t", "tvd_2": 0.01, "rows_train": 5000}
    table_rows = runpy.run_path(str(BENCHMARKS / "issue24_targets.py"))["table_rows"]
    (row,) = table_rows([floor, *records])
    return [c.strip() for c in row.strip("|").split("|")]


def test_ratio_is_judged_on_the_recipes_run_with_both_drafts() -> None:
    """An AIM-only suite: safe 0.12 / data-read 0.10 = 1.2 holds, 0.13 / 0.10 fails (MST not
    run is neither a failure nor a blank verdict); an MST run on the safe draft alone does not
    decide the ratio either."""
    draft = _run("aim", "draft", 0.10, 0.20)
    assert _row([draft, _run("aim", "safe", 0.12, 0.25)])[4] == "yes"
    assert _row([draft, _run("aim", "safe", 0.13, 0.25)])[4] == "**no**"
    cells = _row([draft, _run("aim", "safe", 0.11, 0.22), _run("mst", "safe", 0.50, 0.60)])
    assert cells[2] == "– / 0.500 = –"
    assert cells[4] == "yes"
