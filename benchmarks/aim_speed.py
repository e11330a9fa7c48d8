"""Where AIM's time goes: run one job through the CLI and time AIM's three parts.

Wraps (for this process only) ``aim._within_size`` (the model-size screen of the candidates),
``aim.aim_scores`` (every candidate's marginal from the model) and the estimator's descents,
then prints wall seconds per part, the process's CPU seconds (user + system, steadier than wall
time on a shared machine) and the md5 of the released synthetic.csv, so two code versions run
with a seeded config (``seed:``, NOT FOR RELEASE) can be checked to release the same bytes.

    PYTHONPATH=. .venv/bin/python benchmarks/aim_speed.py configs/adult.yaml --epsilon 1 \
        --seed 7 --out /tmp/aim-speed
"""

from __future__ import annotations

import argparse
import hashlib
import json
import resource
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

from synthpriv.cli import main as cli_main
from synthpriv.marginals import aim, estimation

SECONDS = {"size screen": 0.0, "scores": 0.0, "estimation": 0.0}
COUNTS = {"evaluations": 0}


def timed(part: str, function: Callable) -> Callable:
    def wrapper(*args, **kwargs):
        started = time.perf_counter()
        try:
            return function(*args, **kwargs)
        finally:
            SECONDS[part] += time.perf_counter() - started
    return wrapper


def counted(function: Callable) -> Callable:
    def wrapper(*args, **kwargs):
        COUNTS["evaluations"] += 1
        return function(*args, **kwargs)
    return wrapper


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("config", type=Path)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, help="seeded noise (NOT FOR RELEASE): same bytes check")
    parser.add_argument("--out", type=Path, default=Path(tempfile.mkdtemp()) / "release")
    args = parser.parse_args()
    config = args.config
    if args.seed is not None:
        document = yaml.safe_load(config.read_text())
        for key in ("path", "schema", "holdout"):
            if key in document.get("data", {}):
                document["data"][key] = str((config.parent / document["data"][key]).resolve())
        document["seed"] = args.seed
        config = args.out.parent / f"{config.stem}-seeded.yaml"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(yaml.safe_dump(document, sort_keys=False))
    aim._within_size = timed("size screen", aim._within_size)
    aim.aim_scores = timed("scores", aim.aim_scores)
    estimation._mirror_descent = timed("estimation", estimation._mirror_descent)
    if hasattr(estimation, "_similar_triangles"):  # the warm fits' method since branch eps10
        estimation._similar_triangles = timed("estimation", estimation._similar_triangles)
    estimation._Problem.evaluate = counted(estimation._Problem.evaluate)
    started = time.perf_counter()
    cli_main(["run", str(config), "--epsilon", str(args.epsilon), "--no-evaluation",
              "--out", str(args.out), "--force"])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    digest = hashlib.md5((args.out / "synthetic.csv").read_bytes()).hexdigest()
    print(json.dumps({
        "config": str(args.config), "epsilon": args.epsilon, "seed": args.seed,
        "wall_seconds": round(time.perf_counter() - started, 1),
        "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 1),
        "part_wall_seconds": {k: round(v, 1) for k, v in SECONDS.items()},
        "evaluations": COUNTS["evaluations"], "synthetic_md5": digest,
    }))


if __name__ == "__main__":
    main()
