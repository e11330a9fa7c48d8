"""The release audit's mass view under the planted exact_masses bug, run after run (issue 24,
"auditflake"): how often it reads one more than the canary cell's exact count (the old test's
expectation) and how often it misses ``_exact_reading`` (the new one), with each odd run's coarse
map and masses.

    PYTHONPATH=. python benchmarks/results/auditflake/pooling_loop.py --seeds 0:1000 --out X.json
    PYTHONPATH=. python benchmarks/results/auditflake/pooling_loop.py --fresh 300 --out Y.json

``--seeds a:b``: one seeded run per seed and side (the job's ``seed``: reproducible); ``--fresh
N``: N runs per side with fresh OS noise through ``audit_release_runs``, as the test runs them.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import tempfile
import time
from pathlib import Path

import yaml

from synthpriv import runner
from synthpriv.config import load_job
from synthpriv.evaluation import release_audit as ra
from synthpriv.evaluation.audit import cached_accounting

ROOT = Path(__file__).resolve().parents[3]


def _load(name: str, path: Path):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", help="a:b, one seeded run per seed and side")
    parser.add_argument("--fresh", type=int, default=0, help="runs per side with OS noise")
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    bench = _load("release_audit_benchmark", ROOT / "benchmarks" / "release_audit.py")
    tests = _load("release_audit_tests", ROOT / "tests" / "reliability" / "test_release_audit.py")
    s = ra.SETTINGS["point_mass"]()
    heap = sum(1 for row in s.rows if row[0] == s.canary[0])
    records, start = [], time.process_time()

    def score(label, side: str, reading: float, folder: Path) -> None:
        release = ra.Release.read(folder)
        expected = tests._exact_reading(release, s, side == "in")
        mapping, mass = release.coarsening(s.column)
        records.append({"run": label, "side": side, "reading": reading,
                        "old_ok": reading == heap + (side == "in"),
                        "new_ok": abs(reading - expected) <= 1e-9,
                        "map": mapping.tolist(), "mass": mass.tolist()})

    with tempfile.TemporaryDirectory(prefix="auditflake-") as tmp, bench.exact_masses():
        folder = Path(tmp)
        if args.seeds:
            low, high = map(int, args.seeds.split(":"))
            with cached_accounting():
                for seed in range(low, high):
                    for side, with_canary in (("in", True), ("out", False)):
                        (folder / f"{side}.csv").write_text(s.table(with_canary))
                        config = {**s.config(folder / f"{side}.csv", folder / f"{side}-release"),
                                  "seed": seed}
                        (folder / f"{side}.yaml").write_text(yaml.safe_dump(config))
                        runner.run_job(load_job(folder / f"{side}.yaml"), force=True,
                                       evaluate=False)
                        reading = ra.view_mass(ra.Release.read(folder / f"{side}-release"), s)
                        score(seed, side, reading, folder / f"{side}-release")
        for i in range(args.fresh):
            scores, *_ = ra.audit_release_runs(s, 1, folder)
            for side in ("in", "out"):
                score(f"fresh{i}", side, float(scores["model.npz:mass"][side][0]),
                      folder / f"{side}-release")
    summary = {"side_runs": len(records),
               "old_fails": sum(not r["old_ok"] for r in records),
               "new_fails": sum(not r["new_ok"] for r in records),
               "cpu_seconds": round(time.process_time() - start, 1),
               "odd": [r for r in records if not (r["old_ok"] and r["new_ok"])]}
    Path(args.out).write_text(json.dumps(summary, indent=1))
    print(json.dumps({k: v for k, v in summary.items() if k != "odd"}))
    for r in summary["odd"]:
        print(r["run"], r["side"], r["reading"], r["old_ok"], r["new_ok"], r["map"], r["mass"])


if __name__ == "__main__":
    main()
