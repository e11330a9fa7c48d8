"""Atomic release: complete or absent, never overwritten without force, one writer at a time."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from synthpriv.errors import ReleaseError
from synthpriv.release import check_target, release_lock, sha256_of, write_release

TABLE = pd.DataFrame({"a": [1, 2], "b": ["x", "y"]})


def test_release_writes_csv_and_manifest_with_checksum(tmp_path: Path) -> None:
    target = tmp_path / "release"
    write_release(target, [TABLE], {"job": "t"}, force=False)
    manifest = json.loads((target / "manifest.json").read_text())
    assert manifest["files"]["synthetic.csv"]["sha256"] == sha256_of(target / "synthetic.csv")
    assert manifest["files"]["synthetic.csv"]["rows"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["release"]


def test_existing_release_needs_force(tmp_path: Path) -> None:
    target = tmp_path / "release"
    write_release(target, [TABLE], {"job": "first"}, force=False)
    with pytest.raises(ReleaseError, match="already exists.*--force"):
        write_release(target, [TABLE], {"job": "second"}, force=False)
    write_release(target, [TABLE.head(1)], {"job": "second"}, force=True)
    assert json.loads((target / "manifest.json").read_text())["job"] == "second"
    assert not list(tmp_path.glob(".release.*-*"))


def test_failure_while_writing_leaves_the_previous_release(tmp_path: Path, monkeypatch) -> None:
    target = tmp_path / "release"
    write_release(target, [TABLE], {"job": "first"}, force=False)

    def explode(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr("synthpriv.release.sha256_of", explode)
    with pytest.raises(OSError, match="disk full"):
        write_release(target, [TABLE], {"job": "second"}, force=True)
    assert json.loads((target / "manifest.json").read_text())["job"] == "first"
    assert not list(tmp_path.glob(".release.tmp-*"))


def test_stale_staging_folders_of_a_killed_run_are_removed(tmp_path: Path) -> None:
    stale = tmp_path / ".release.tmp-abc"
    stale.mkdir()
    (stale / "synthetic.csv").write_text("partial")
    write_release(tmp_path / "release", [TABLE], {}, force=False)
    assert not stale.exists()


def test_second_writer_fails_cleanly_while_the_first_holds_the_lock(tmp_path: Path) -> None:
    target = tmp_path / "release"
    with release_lock(target), pytest.raises(ReleaseError, match="another synthpriv job"), \
            release_lock(target):
        pass


def test_unwritable_or_file_target_is_refused_before_work(tmp_path: Path) -> None:
    file_target = tmp_path / "file"
    file_target.write_text("x")
    with pytest.raises(ReleaseError, match="not a folder"):
        check_target(file_target, force=True)
    with pytest.raises(ReleaseError, match="is a file"):
        check_target(file_target / "release", force=True)
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        import os

        if os.access(locked, os.W_OK):
            pytest.skip("running as a user that can write anywhere")
        with pytest.raises(ReleaseError, match="permission denied"):
            check_target(locked / "release", force=False)
    finally:
        locked.chmod(0o700)


def test_the_lock_file_is_removed_whether_the_job_succeeds_or_fails(tmp_path: Path) -> None:
    target = tmp_path / "release"
    lock = tmp_path / ".release.lock"
    with release_lock(target):
        assert lock.exists()
    assert not lock.exists()
    with pytest.raises(RuntimeError), release_lock(target):
        raise RuntimeError("a run that fails on its data")
    assert not lock.exists()
    with pytest.raises(KeyboardInterrupt), release_lock(target):
        raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_a_job_that_opened_a_removed_lock_file_locks_the_new_one(tmp_path: Path,
                                                                monkeypatch) -> None:
    """The race the removal opens: job B opens the lock file, job A (holding it) removes it and
    unlocks, B locks the removed file. B must notice and lock the file the name now points at,
    or a third job C could hold the lock at the same time."""
    import synthpriv.release as release

    target = tmp_path / "release"
    lock = tmp_path / ".release.lock"
    stale = lock.open("a")  # B's handle on a file that A then removes
    lock.unlink()
    opened = []
    real_open = Path.open

    def open_once_stale(self: Path, *args, **kwargs):
        if self == lock and not opened:
            opened.append(self)
            return stale
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", open_once_stale)
    with release.release_lock(target):
        assert stale.closed and lock.exists()  # B moved to the new file
        with pytest.raises(ReleaseError, match="another synthpriv job"), release.release_lock(target):
            pass
    assert not lock.exists()
