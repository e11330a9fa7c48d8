"""Interrupts and crashes (issue 25, item 3): SIGINT, SIGTERM or an exception at any step of
``synthpriv run`` leave no copy of the sensitive table (the spool), no lock, no half release, and a
message that says exactly what exists. The signals are real: the test process sends them to itself
at the start of a step, and they arrive as they would from a terminal or a job scheduler."""

from __future__ import annotations

import contextlib
import os
import signal
import tempfile
from pathlib import Path

import pytest
import yaml

from synthpriv.cli import main
from synthpriv.job import SynthesisJob
from tests.evaluation.tiny import tiny_table

STEPS = ("plan", "domain", "read", "stage:marginals", "stage:sample", "release")


def _job(folder: Path, evaluate: bool = False) -> Path:
    tiny_table(600, 3).to_csv(folder / "train.csv", index=False)
    schema = {"columns": [
        {"name": "colour", "kind": "categorical", "missing": True},  # left to the domain step
        {"name": "shape", "kind": "categorical", "categories": ["round", "square", "flat", "odd"]},
        {"name": "size", "kind": "integer", "lower": 0, "upper": 100},
        {"name": "weight", "kind": "integer", "lower": 0, "upper": 1000},
    ]}
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "job", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "mst"},
              "evaluation": {"enabled": evaluate}, "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def _signal_at(monkeypatch, step: str, signum: int) -> None:
    """Send ``signum`` to this process when the job starts ``step``."""
    real = SynthesisJob.step

    @contextlib.contextmanager
    def step_with_signal(self, name: str):
        with real(self, name):
            if name == step:
                os.kill(os.getpid(), signum)
            yield

    monkeypatch.setattr(SynthesisJob, "step", step_with_signal)


def _open_files_under(folder: Path) -> list[str]:
    """Files this process holds open under ``folder`` (an unnamed spool shows as '… (deleted)')."""
    links = []
    for fd in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            links.append(os.readlink(f"/proc/self/fd/{fd}"))
    return [link for link in links if link.startswith(str(folder))]


@pytest.fixture()
def private_tmp(tmp_path: Path, monkeypatch) -> Path:
    folder = tmp_path / "tmp"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize("step", STEPS)
def test_a_signal_at_any_step_leaves_nothing(tmp_path: Path, private_tmp: Path, monkeypatch,
                                             capsys, step: str, signum: int) -> None:
    config = _job(tmp_path)
    _signal_at(monkeypatch, step, signum)
    assert main(["run", str(config)]) == 128 + signum
    err = capsys.readouterr().err
    assert f"interrupted ({signal.Signals(signum).name}): nothing was released" in err
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == []  # no release, no staging, no lock
    assert list(private_tmp.iterdir()) == [] and _open_files_under(private_tmp) == []
    assert signal.getsignal(signal.SIGTERM) is signal.SIG_DFL  # handlers restored after


def test_an_error_inside_a_stage_leaves_nothing(tmp_path: Path, private_tmp: Path,
                                                monkeypatch) -> None:
    from synthpriv.marginals import stage as marginals_stage

    config = _job(tmp_path)

    def broken(*args, **kwargs):
        raise RuntimeError("a bug inside the stage")

    monkeypatch.setattr(marginals_stage.MarginalsStage, "run", broken)
    with pytest.raises(RuntimeError, match="a bug inside the stage"):
        main(["run", str(config)])
    out = tmp_path / "out"
    assert not out.exists() or list(out.iterdir()) == []
    assert list(private_tmp.iterdir()) == [] and _open_files_under(private_tmp) == []


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_during_the_evaluation_keeps_the_release_and_says_so(
        tmp_path: Path, private_tmp: Path, monkeypatch, capsys, signum: int) -> None:
    from synthpriv.evaluation import job as evaluation_job

    config = _job(tmp_path, evaluate=True)

    def interrupted(*args, **kwargs):
        os.kill(os.getpid(), signum)
        raise AssertionError("the signal should have stopped the evaluation")

    monkeypatch.setattr(evaluation_job, "evaluate_job", interrupted)
    assert main(["run", str(config)]) == 128 + signum
    err = capsys.readouterr().err
    release = tmp_path / "out"
    assert "nothing was released" not in err
    assert f"interrupted ({signal.Signals(signum).name})" in err
    assert f"The release at {release} is complete and kept" in err
    assert sorted(p.name for p in release.iterdir()) == [
        "manifest.json", "model.json", "model.npz", "synthetic.csv"]
    assert not (tmp_path / ".out.lock").exists()
    assert list(private_tmp.iterdir()) == [] and _open_files_under(private_tmp) == []
