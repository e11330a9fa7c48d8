"""Progress on stderr (issue 25, item 2): each step of a run, the budget given out so far; quiet
when asked, and off by default when stderr is not a terminal."""

from __future__ import annotations

import re
from pathlib import Path

from synthpriv.cli import main
from synthpriv.progress import expected_steps, wanted
from tests.evaluation.tiny import write_tiny_job


def test_run_shows_each_step_when_asked(tmp_path: Path, capsys) -> None:
    config = write_tiny_job(tmp_path, evaluation={"enabled": False})
    assert main(["run", str(config), "--progress"]) == 0
    err = capsys.readouterr().err
    for step in ("read", "stage:marginals", "stage:sample", "release"):
        assert f"  {step}: " in err
    assert "budget given out: 0% of ρ" in err and "budget given out: 100% of ρ" in err


def test_quiet_and_not_a_terminal_show_nothing(tmp_path: Path, capsys) -> None:
    config = write_tiny_job(tmp_path, evaluation={"enabled": False})
    assert main(["run", str(config), "--quiet"]) == 0
    assert main(["run", str(config), "--force"]) == 0  # stderr is captured: not a terminal
    err = capsys.readouterr().err
    assert "budget given out" not in err and "stage:marginals:" not in err
    assert wanted(None, quiet=False) is False and wanted(True, quiet=True) is False


def test_the_steps_follow_the_plan(tmp_path: Path) -> None:
    from synthpriv.config import load_job
    from synthpriv.pipeline import plan_job

    plan, _ = plan_job(load_job(write_tiny_job(tmp_path)))
    assert expected_steps(plan) == ["read", "stage:marginals", "stage:sample", "release"]


def test_the_api_shows_progress_when_asked(capsys) -> None:
    import numpy as np
    import pandas as pd

    from synthpriv import Synthesizer

    frame = pd.DataFrame({"a": np.arange(300) % 7, "b": np.where(np.arange(300) % 3, "x", "y")})
    Synthesizer(epsilon=1.0, recipe="independent", progress=True).fit(frame)
    err = capsys.readouterr().err
    assert "  domain: " in err and "  stage:marginals: " in err


def test_aim_rounds_and_the_evaluation_parts_show_inside_their_steps(tmp_path: Path, capsys) -> None:
    """Inside the marginals step: AIM's rounds with the share of its budget spent; after the
    release: each part of the evaluation with its time."""
    small_aim = {"aim_rounds_per_attribute": 1, "aim_round_iterations": 20, "iterations": 50}
    config = write_tiny_job(
        tmp_path, pipeline={"recipe": "aim", "stages": {"marginals": small_aim}},
        evaluation={"controls": ["identity"], "anonymeter": False, "quality_report": False,
                    "bootstrap": 0, "marginal_attack": {"enabled": False}})
    assert main(["run", str(config), "--progress"]) == 0
    err = capsys.readouterr().err
    spent = [int(share) for share in re.findall(r"AIM round \d+, (\d+)% of its budget spent", err)]
    assert "AIM round 1," in err and spent and spent == sorted(spent)  # spent only grows
    for part in ("utility", "values", "attacks on the release", "control identity"):
        assert f"  evaluation: {part}: " in err
