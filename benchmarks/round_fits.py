"""AIM's round fits replayed: capture every ``estimate`` call of a seeded job, then refit chosen
calls with each estimator method and print loss, calibrations and CPU seconds.

    PYTHONPATH=. .venv/bin/python benchmarks/round_fits.py capture configs/adult.yaml \
        --epsilon 10 --seed 7 --file /tmp/adult-e10.pkl          # seeded: NOT FOR RELEASE
    PYTHONPATH=. .venv/bin/python benchmarks/round_fits.py replay /tmp/adult-e10.pkl \
        --calls 10,25,40,46,47 --methods mirror,triangles

The loss is the estimator's objective in noise-variance units (½ Σ ‖M(p) − y‖²/σ²); a call
keeps its own settings (iterations, warm start, resolution) unless ``--iterations`` is given.
The pickle holds noisy measurements and models of a seeded run, not for release.
"""

from __future__ import annotations

import argparse
import json
import pickle
import sys
import time
from pathlib import Path

from synthpriv.marginals import aim, estimation

sys.path.insert(0, str(Path(__file__).resolve().parent))
from estimator_vs_mbi import seeded_run  # noqa: E402  (the seeded CLI run both benchmarks use)


def capture(config: Path, epsilon: float, seed: int, file: Path) -> None:
    """Run the job seeded through the CLI with ``aim.estimate`` wrapped to keep its calls."""
    from synthpriv.cli import main as cli_main

    calls = []
    fit = aim.estimate

    def keeping(domain, measurements, **settings):
        calls.append((domain, list(measurements), settings))
        return fit(domain, measurements, **settings)

    aim.estimate = keeping
    seeded_run(cli_main, config, epsilon, seed)
    file.write_bytes(pickle.dumps(calls))
    print(f"{len(calls)} estimate calls kept in {file}")


def replay(file: Path, calls: list[int], methods: list[str], iterations: int | None) -> None:
    kept = pickle.loads(file.read_bytes())
    evaluations = [0]
    evaluate = estimation._Problem.evaluate

    def counted(self, *args, **kwargs):
        evaluations[0] += 1
        return evaluate(self, *args, **kwargs)

    estimation._Problem.evaluate = counted
    for index in calls:
        domain, measurements, settings = kept[index]
        settings = dict(settings, **({} if iterations is None else {"iterations": iterations}))
        for method in methods:
            evaluations[0] = 0
            started = time.process_time()
            model = estimation.estimate(domain, measurements, method=method, **settings)
            cpu = time.process_time() - started
            objective = estimation._Objective.build(domain, measurements)
            loss = sum(0.5 * float((w * (model.project(c) - t.values) ** 2).sum())
                       for c, t, w in zip(objective.cliques, objective.targets, objective.weights,
                                          strict=True))
            print(json.dumps({"call": index, "method": method, "model_cells": model.tree.cells(),
                              "measured_cliques": len(objective.cliques),
                              "iterations": settings.get("iterations"),
                              "warm": settings.get("warm_start") is not None,
                              "loss": round(loss, 2), "calibrations": evaluations[0],
                              "cpu_seconds": round(cpu, 2)}), flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    commands = parser.add_subparsers(dest="command", required=True)
    take = commands.add_parser("capture")
    take.add_argument("config", type=Path)
    take.add_argument("--epsilon", type=float, default=10.0)
    take.add_argument("--seed", type=int, default=7)
    take.add_argument("--file", type=Path, required=True)
    again = commands.add_parser("replay")
    again.add_argument("file", type=Path)
    again.add_argument("--calls", default="10,25,40,46")
    again.add_argument("--methods", default="mirror,triangles")
    again.add_argument("--iterations", type=int)
    args = parser.parse_args()
    if args.command == "capture":
        capture(args.config, args.epsilon, args.seed, args.file)
    else:
        replay(args.file, [int(c) for c in args.calls.split(",")], args.methods.split(","),
               args.iterations)


if __name__ == "__main__":
    main()
