"""Atomic release: the synthetic CSV, the model and the manifest appear together, complete, or not
at all.

Files are written into a temporary folder beside the target and renamed into place only when
complete. A lock beside the target makes two jobs writing the same release fail cleanly instead of
both winning. Leftovers of a killed run (hidden ``.NAME.tmp-*`` folders) are removed next time.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import IO

import numpy as np
import pandas as pd

from synthpriv.errors import ReleaseError

SYNTHETIC = "synthetic.csv"
MANIFEST = "manifest.json"


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_target(target: Path, force: bool) -> None:
    """Fail before any work if the release cannot be written (exists without --force, or the
    parent folder is not writable)."""
    if target.exists() and not target.is_dir():
        raise ReleaseError(f"output path {target} exists and is not a folder. Choose another --out.")
    if target.exists() and any(target.iterdir()) and not force:
        raise ReleaseError(
            f"a release already exists at {target}. Pass --force to replace it, or choose "
            "another --out."
        )
    parent = _existing_parent(target)
    if not parent.is_dir():
        raise ReleaseError(f"cannot create {target}: {parent} is a file. Choose another --out.")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ReleaseError(f"cannot write to {parent}: permission denied. Choose another --out.")
    _probe_writable(parent, target)


def _probe_writable(parent: Path, target: Path) -> None:
    """Create and remove an empty hidden folder in ``parent``: permission bits alone do not say
    whether a write will succeed (root ignores them; read-only or special file systems refuse)."""
    try:
        os.rmdir(tempfile.mkdtemp(prefix=f".{target.name}.probe-", dir=parent))
    except OSError as error:
        raise ReleaseError(
            f"cannot write the release under {parent}: {error.strerror}. Choose another --out "
            "(a folder you can write to)."
        ) from None


def _existing_parent(target: Path) -> Path:
    parent = target.parent
    while not parent.exists():
        parent = parent.parent
    return parent


@contextlib.contextmanager
def release_lock(target: Path) -> Iterator[None]:
    """Exclusive lock for writing ``target``; a second job fails at once with a clear error.

    The lock file (``.<name>.lock`` beside the target) is removed when the lock is released,
    whether the job succeeded, failed or was interrupted. A job that opened the file just before
    its previous holder removed it finds, once it holds the lock, that the name no longer points
    at its file, and locks the new one instead."""
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise ReleaseError(f"cannot create {target.parent}: {error.strerror}") from None
    lock_path = target.parent / f".{target.name}.lock"
    while True:
        try:
            handle = lock_path.open("a")
        except OSError as error:
            raise ReleaseError(f"cannot write to {target.parent}: {error.strerror}") from None
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            handle.close()
            raise ReleaseError(
                f"another synthpriv job is writing {target} right now. Wait for it, or choose "
                "another --out."
            ) from None
        if _names(lock_path, handle):
            break
        handle.close()  # the previous holder removed the file we opened: lock the new one
    try:
        yield
    finally:
        lock_path.unlink(missing_ok=True)  # under the lock, so no other job holds this file
        fcntl.flock(handle, fcntl.LOCK_UN)
        handle.close()


def _names(path: Path, handle: IO) -> bool:
    """Whether ``path`` still names the file open as ``handle``."""
    try:
        return os.stat(path).st_ino == os.fstat(handle.fileno()).st_ino
    except FileNotFoundError:
        return False


def _remove_stale(target: Path) -> None:
    """Remove what a killed run may have left: staging, set-aside and probe folders."""
    for kind in ("tmp", "old", "probe"):
        for stale in target.parent.glob(f".{target.name}.{kind}-*"):
            shutil.rmtree(stale, ignore_errors=True)


def write_release(
    target: Path, synthetic: Iterable[pd.DataFrame], manifest: dict, force: bool,
    extra: dict[str, bytes] | None = None,
) -> dict[str, str]:
    """Write ``synthetic`` (blocks of one table, written as they come: a ``SyntheticRows``
    streams them, so memory holds one block), the ``extra`` files
    (the released model: name → content) and ``manifest`` (plus every file's checksum, and the
    row count) to ``target`` atomically.

    Call under ``release_lock(target)``. Returns the files' sha256 by name.
    """
    check_target(target, force)
    _remove_stale(target)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.tmp-", dir=target.parent))
    try:
        csv_path = staging / SYNTHETIC
        rows = write_csv_blocks(csv_path, synthetic)
        checksums = {SYNTHETIC: sha256_of(csv_path)}
        files: dict[str, dict] = {SYNTHETIC: {"sha256": checksums[SYNTHETIC], "rows": rows}}
        written = [csv_path]
        for name, content in (extra or {}).items():
            path = staging / name
            path.write_bytes(content)
            checksums[name] = sha256_of(path)
            files[name] = {"sha256": checksums[name]}
            written.append(path)
        manifest = {**manifest, "files": files}
        manifest_path = staging / MANIFEST
        manifest_path.write_text(json.dumps(manifest, indent=2, default=str) + "\n")
        for path in (*written, manifest_path):
            with path.open("rb") as handle:
                os.fsync(handle.fileno())
        _swap_into_place(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return checksums


def write_csv_blocks(path: Path, blocks: Iterable[pd.DataFrame]) -> int:
    """Append ``blocks`` to one CSV at ``path`` (header from the first), as pandas writes one
    table but with floats in plain positional notation (``plain_float``); returns the number of
    rows written."""
    rows = 0
    with path.open("w", encoding="utf-8", newline="") as handle:
        for block in blocks:
            block.to_csv(handle, index=False, header=rows == 0, float_format=plain_float)
            rows += len(block)
    return rows


def plain_float(value: float) -> str:
    """A float as a person writes it: shortest round-trip digits, never an exponent (pandas
    writes 1.5e-05 for a value near a DP lower bound of 0), no trailing ``.0``."""
    return np.format_float_positional(value, trim="-")


def _swap_into_place(staging: Path, target: Path) -> None:
    """Rename the complete staging folder to ``target``; an old release is moved aside first and
    deleted after, so ``target`` only ever holds a complete release: the old one, the new one, or
    (for the instant between two renames) none."""
    if not target.exists():
        os.rename(staging, target)
        _fsync_folder(target.parent)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.old-", dir=target.parent))
    os.rename(target, old / "release")
    os.rename(staging, target)
    _fsync_folder(target.parent)
    shutil.rmtree(old, ignore_errors=True)


def _fsync_folder(folder: Path) -> None:
    """Make the renames in ``folder`` durable (a crash after return keeps the new release)."""
    handle = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(handle)
    finally:
        os.close(handle)
