"""Issue 24's target table (benchmarks/issue24_targets.py) on hand-made suite records: an
AIM-only suite is judged on AIM alone, and the data-read draft is compared with dpmm too."""

from __future__ import annotations

import importlib.util
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _targets():
    spec = importlib.util.spec_from_file_location("issue24_targets", BENCHMARKS / "issue24_targets.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _run(recipe: str, mode: str, tvd_2: float, tvd_3: float) -> dict:
    return {"kind": "run", "table": "t", "recipe": recipe, "schema_mode": mode, "status": "ok",
            "tvd_2": tvd_2, "tvd_3": tvd_3, "worst_mass": 0.01, "mean_ks": 0.01}


def _cells(records: list[dict]) -> list[str]:
    floor = {"kind": "floor", "table": "t", "rows_train": 5000, "tvd_2": 0.05, "worst_mass": 0.0,
             "mean_ks": 0.0}
    (row,) = _targets().table_rows([floor, *records])
    return [c.strip() for c in row.strip("|").split("|")]


def test_aim_only_ratio_is_judged_and_draft_compared_with_dpmm() -> None:
    """AIM only: safe 0.12 / draft 0.10 = 1.2 holds, 0.13 / 0.10 fails (MST not run is not a
    failure, nor a reason to leave the verdict blank); dpmm's best 0.11 / 0.30: the data-read
    draft (0.10 / 0.20) is below it, the safe draft (0.12) is not."""
    dpmm = _run("dpmm-mst", "draft", 0.11, 0.30)
    held = _cells([_run("aim", "draft", 0.10, 0.20), _run("aim", "safe", 0.12, 0.25), dpmm])
    assert held[4] == "yes"
    assert held[6:8] == ["**no** / –", "yes / –"]
    failed = _cells([_run("aim", "draft", 0.10, 0.20), _run("aim", "safe", 0.13, 0.25), dpmm])
    assert failed[4] == "**no**"


def test_a_recipe_run_on_one_draft_only_does_not_decide_the_ratio() -> None:
    """MST safe only (no data-read MST run) beside AIM on both: the ratio verdict is AIM's."""
    cells = _cells([_run("aim", "draft", 0.10, 0.20), _run("aim", "safe", 0.11, 0.22),
                    _run("mst", "safe", 0.50, 0.60)])
    assert cells[2] == "– / 0.500 = –"
    assert cells[4] == "yes"
