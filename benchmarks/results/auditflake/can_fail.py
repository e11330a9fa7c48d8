"""The new exact-masses expectation (``_exact_reading``) can fail: 5 unmutated runs a side
(noisy masses in model.npz), each line the mass view's reading and the expectation (or the
expectation's own assertion).

    PYTHONPATH=. python benchmarks/results/auditflake/can_fail.py
"""

import importlib.util
import tempfile
from pathlib import Path

from synthpriv.evaluation import release_audit as ra

spec = importlib.util.spec_from_file_location("t", "tests/reliability/test_release_audit.py")
tests = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tests)
setting = ra.SETTINGS["point_mass"]()
with tempfile.TemporaryDirectory() as tmp:
    folder = Path(tmp)
    for _ in range(5):
        scores, *_ = ra.audit_release_runs(setting, 1, folder)
        for side in ("in", "out"):
            release = ra.Release.read(folder / f"{side}-release")
            try:
                expected = tests._exact_reading(release, setting, side == "in")
            except AssertionError as error:
                expected = f"assert: {error}"
            print("unmutated", side, scores["model.npz:mass"][side][0], expected)
