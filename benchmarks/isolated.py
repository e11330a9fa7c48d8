"""Run one benchmark step in a subprocess of its own session, killed after a time limit.

No synthpriv import: ``dpmm_baseline.py`` uses it from another venv, ``suite.py`` from ours.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path


def run_isolated(command: list[str], max_seconds: float, cwd: Path | str | None = None) -> dict:
    """Run ``command`` plus one last argument, a path where the child writes its JSON result;
    return that result with ``status`` ok, timeout (the whole process group killed after
    ``max_seconds``) or error (with the return code and the last lines of stderr)."""
    with tempfile.TemporaryDirectory() as folder:
        result_path = Path(folder) / "result.json"
        started = time.perf_counter()
        child = subprocess.Popen([*command, str(result_path)], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True,
                                 cwd=cwd)
        try:
            _, stderr = child.communicate(timeout=max_seconds)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.communicate()
            return {"status": "timeout", "wall": time.perf_counter() - started}
        wall = time.perf_counter() - started
        if child.returncode != 0 or not result_path.exists():
            tail = "\n".join(stderr.strip().splitlines()[-5:])
            return {"status": "error", "wall": wall, "returncode": child.returncode,
                    "error": tail}
        return {"status": "ok", "wall": wall, **json.loads(result_path.read_text())}
