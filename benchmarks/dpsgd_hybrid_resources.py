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

from synthpriv.config import load_job
from synthpriv.job import SynthesisJob


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--epsilon", type=float)
    args = parser.parse_args()
    job = load_job(args.config)
    if args.epsilon is not None:
        job = job.with_budget(args.epsilon, None)
    started = time.perf_counter()
    runner = SynthesisJob(job)  # times each step, each stage included, into runner.timings
    with tempfile.TemporaryDirectory() as folder:
        result = runner.run(Path(folder) / "release", force=True)
    total = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps({
        "command": " ".join(sys.argv), "epsilon": result.ledger.epsilon(job.config.budget.delta),
        "seconds_total": round(total, 1),
        "seconds_by_stage": {k.removeprefix("stage:"): round(v, 1)
                             for k, v in runner.timings.items() if k.startswith("stage:")},
        "seconds_by_step": {k: round(v, 1) for k, v in runner.timings.items()},
        "peak_rss_mb": round(peak_mb),
    }, indent=2))


if __name__ == "__main__":
    main()
