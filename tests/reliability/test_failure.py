"""A run killed at any point leaves the previous complete release or none, never a partial one,
and a rerun completes; two jobs writing the same release cannot both win.

Kills are placed, not timed: the child process runs the real command line with one function
wrapped so that it announces (a marker file) when it is reached, and the parent SIGKILLs it then.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml

from synthpriv.cli import main
from synthpriv.release import MANIFEST, SYNTHETIC, sha256_of

ROOT = Path(__file__).resolve().parents[2]

# The child: wrap ``module.function`` so that reaching it writes the marker and (when asked)
# sleeps, then run `synthpriv` with the given arguments.
CHILD = """
import importlib, pathlib, sys, time
module_name, function_name, marker, pause = sys.argv[1:5]
module = importlib.import_module(module_name)
original = getattr(module, function_name)
def announced(*args, **kwargs):
    result = None if pause == "before" else original(*args, **kwargs)
    pathlib.Path(marker).touch()
    time.sleep(float(pause) if pause != "before" else 60)
    return original(*args, **kwargs) if pause == "before" else result
setattr(module, function_name, announced)
from synthpriv.cli import main
sys.exit(main(sys.argv[5:]))
"""


def assert_complete_or_absent(target: Path) -> str | None:
    """The release at ``target`` is absent, or complete and self-consistent; its manifest text."""
    if not target.exists():
        return None
    manifest = json.loads((target / MANIFEST).read_text())
    # the files the manifest lists (synthetic.csv and the model), each whole, and nothing else
    assert sorted(p.name for p in target.iterdir()) == sorted([MANIFEST, *manifest["files"]])
    for name, entry in manifest["files"].items():
        assert entry["sha256"] == sha256_of(target / name)
    files = manifest["files"][SYNTHETIC]
    rows = (target / SYNTHETIC).read_text().count("\n") - 1
    assert rows == files["rows"] == manifest["records"]["released"]
    return (target / MANIFEST).read_text()


def kill_at(tmp_path: Path, where: str, args: list[str], pause: str = "60",
            timeout: float = 120) -> None:
    """Run `synthpriv ARGS` in a child process and SIGKILL it once ``where`` (module:function)
    is reached (after it returns, or just before it runs with ``pause='before'``)."""
    marker = tmp_path / "reached"
    marker.unlink(missing_ok=True)
    module, function = where.split(":")
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, module, function, str(marker), pause, *args],
        env={**os.environ, "PYTHONPATH": str(ROOT)}, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + timeout
    while not marker.exists():
        if child.poll() is not None:
            raise AssertionError(f"child ended before {where}: {child.communicate()}")
        if time.monotonic() > deadline:
            child.kill()
            raise AssertionError(f"child never reached {where}")
        time.sleep(0.02)
    child.send_signal(signal.SIGKILL)
    child.communicate(timeout=30)
    assert child.returncode == -signal.SIGKILL


@pytest.fixture
def jobs(tmp_path: Path, adult_sample_csv: Path):
    def write(recipe: str, stages: dict | None = None) -> Path:
        config = {
            "name": "killed",
            "data": {"path": str(adult_sample_csv),
                     "schema": str(ROOT / "data" / "adult" / "schema.yaml")},
            "budget": {"epsilon": 1.0, "delta": 1e-5},
            "pipeline": {"recipe": recipe, "stages": stages or {}},
            "evaluation": {"enabled": False},
        }
        path = tmp_path / f"{recipe}.yaml"
        path.write_text(yaml.safe_dump(config))
        return path

    return write


SLOW_AIM = {"marginals": {"aim_rounds_per_attribute": 2, "aim_round_iterations": 50}}


@pytest.mark.parametrize(
    ("where", "pause", "left"),
    [
        ("synthpriv.marginals.aim:estimate", "60", "previous"),  # while AIM fits its model
        ("synthpriv.release:sha256_of", "60", "previous"),  # new CSV written in the staging folder
        # the one instant with no release: the old one moved aside, the new one not yet in place
        pytest.param("os:rename", "60", "none", marks=pytest.mark.slow),
        # renamed into place, not yet synced
        pytest.param("synthpriv.release:_fsync_folder", "before", "new", marks=pytest.mark.slow),
    ],
    ids=["during fitting", "during the write", "between the two renames", "before the sync"],
)
def test_sigkill_leaves_a_complete_release_or_none_and_a_rerun_completes(
    jobs, tmp_path: Path, where: str, pause: str, left: str
) -> None:
    target = tmp_path / "release"
    assert main(["run", str(jobs("independent")), "--out", str(target)]) == 0
    previous = assert_complete_or_absent(target)

    killed = jobs("aim", SLOW_AIM) if "aim" in where else jobs("independent")
    kill_at(tmp_path, where, ["run", str(killed), "--out", str(target), "--force"], pause)
    after_kill = assert_complete_or_absent(target)
    expected = {"previous": previous, "none": None}.get(left, after_kill)
    assert after_kill == expected
    if left == "new":
        assert after_kill not in (None, previous)

    rerun = ["run", str(jobs("independent")), "--out", str(target)]
    assert main(rerun if after_kill is None else [*rerun, "--force"]) == 0
    assert assert_complete_or_absent(target) not in (None, previous, after_kill)
    # nothing beside the release: a killed job's staging, and its lock, went with the rerun
    assert sorted(p.name for p in tmp_path.iterdir() if p.name.startswith(".release.")) == []


def test_a_job_fails_cleanly_while_another_holds_the_lock_and_a_dead_holder_does_not_block(
    jobs, tmp_path: Path, capsys
) -> None:
    target = tmp_path / "release"
    marker = tmp_path / "locked"
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import pathlib, sys, time\n"
         "from synthpriv.release import release_lock\n"
         "with release_lock(pathlib.Path(sys.argv[1])):\n"
         "    pathlib.Path(sys.argv[2]).touch()\n"
         "    time.sleep(120)\n",
         str(target), str(marker)],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    try:
        deadline = time.monotonic() + 60
        while not marker.exists() and time.monotonic() < deadline and holder.poll() is None:
            time.sleep(0.02)
        assert marker.exists()
        capsys.readouterr()
        assert main(["run", str(jobs("independent")), "--out", str(target)]) == 2
        error = capsys.readouterr().err
        assert f"another synthpriv job is writing {target} right now" in error
        assert "Traceback" not in error and not target.exists()
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.wait(timeout=30)
    # the killed holder's lock file stays behind; the kernel released its lock
    assert (tmp_path / ".release.lock").exists()
    assert main(["run", str(jobs("independent")), "--out", str(target)]) == 0
    assert assert_complete_or_absent(target) is not None
    assert not (tmp_path / ".release.lock").exists()  # the run that took it over removed it


@pytest.mark.slow
def test_two_jobs_writing_the_same_release_cannot_both_win(jobs, tmp_path: Path) -> None:
    target = tmp_path / "release"
    command = [sys.executable, "-m", "synthpriv.cli", "run", str(jobs("independent")), "--out",
               str(target)]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    children = [subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                 text=True) for _ in range(2)]
    results = [(c.wait(timeout=300), c.communicate()[1]) for c in children]
    assert sorted(code for code, _ in results) == [0, 2]
    error = next(err for code, err in results if code == 2)
    assert ("another synthpriv job is writing" in error) or ("a release already exists" in error)
    assert "Traceback" not in error
    assert assert_complete_or_absent(target) is not None
