"""Wall time (per stage and total) and peak memory of one job, e.g. the hybrid recipe on Adult.

Peak memory is the process's maximum resident set size (``ru_maxrss``), which includes the
Python interpreter, torch and the data. Timings depend on the machine's load.

    .venv/bin/python benchmarks/dpsgd_hybrid_resources.py configs/adult-hybrid.yaml
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import tempfile
import time
from pathlib import Path

from synthpriv import pipeline
from synthpriv.config import load_job
from synthpriv.runner import run_job
from synthpriv.stage import STAGES


def _timed_stages(timings: dict[str, float]) -> None:
    """Wrap every registered stage's ``run`` to record its wall time (benchmark only)."""
    for name, cls in STAGES.items():
        original = cls.run

        def run(self, *args, _original=original, _name=name, **kwargs):
            started = time.perf_counter()
            try:
                return _original(self, *args, **kwargs)
            finally:
                timings[_name] = timings.get(_name, 0.0) + time.perf_counter() - started

        cls.run = run  # type: ignore[method-assign]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--epsilon", type=float)
    args = parser.parse_args()
    assert pipeline.STAGES is STAGES
    timings: dict[str, float] = {}
    _timed_stages(timings)
    job = load_job(args.config)
    if args.epsilon is not None:
        job = job.with_budget(args.epsilon, None)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as folder:
        result = run_job(job, out=Path(folder) / "release", force=True)
    total = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "command": " ".join(sys.argv), "epsilon": result.ledger.epsilon(job.config.budget.delta),
        "seconds_total": round(total, 1),
        "seconds_by_stage": {k: round(v, 1) for k, v in timings.items()},
        "peak_rss_mb": round(peak_mb),
    }, indent=2))


if __name__ == "__main__":
    main()
