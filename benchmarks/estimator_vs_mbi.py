"""Our estimator against mbi 2.0.0's ``MirrorDescent`` on the same noisy marginals.

A seeded AIM run on a job (NOT FOR RELEASE) is stopped at its final estimate and its
measurements are saved (``capture``, synthpriv's venv); each estimator then fits them from a
uniform start for a fixed number of iterations (``ours``; ``mbi`` in a venv with ``mbi==2.0.0``
and its CPU ``jax``, float64), and reports CPU seconds and the loss
``1/2 sum_m ||M_m(p) - y_m||^2 / sigma_m^2`` (the same function for both). mbi's first call
compiles (JIT): it is timed apart.

    PYTHONPATH=. .venv/bin/python benchmarks/estimator_vs_mbi.py capture configs/adult.yaml \
        --epsilon 3 --file /tmp/adult-e3.npz
    PYTHONPATH=. .venv/bin/python benchmarks/estimator_vs_mbi.py ours /tmp/adult-e3.npz --iterations 200
    /work/venv-mbi/bin/python benchmarks/estimator_vs_mbi.py mbi /tmp/adult-e3.npz --iterations 200
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
from pathlib import Path

import numpy as np


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load(path: Path) -> tuple[list[str], list[int], list[tuple], float]:
    saved = np.load(path, allow_pickle=False)
    header = json.loads(str(saved["header"]))
    measured = [(tuple(m["clique"]), saved[f"y{i}"], saved[f"s{i}"])
                for i, m in enumerate(header["measurements"])]
    return header["attributes"], header["shape"], measured, float(header["total"])


def loss(project, measured) -> float:
    total = 0.0
    for clique, y, sigma in measured:
        residual = np.asarray(project(clique)).reshape(y.shape) - y
        total += 0.5 * float(np.sum(residual * residual / np.square(sigma)))
    return total


def seeded_run(cli_main, config: Path, epsilon: float, seed: int) -> dict:
    """Run the job ``config`` at ``epsilon`` with ``seed:`` added (NOT FOR RELEASE) and its
    data paths made absolute, into a temporary folder; return the job document."""
    import tempfile

    import yaml
    document = yaml.safe_load(config.read_text())
    for key in ("path", "schema", "holdout"):
        if key in document.get("data", {}):
            document["data"][key] = str((config.parent / document["data"][key]).resolve())
    document["seed"] = seed
    folder = Path(tempfile.mkdtemp())
    seeded = folder / "seeded.yaml"
    seeded.write_text(yaml.safe_dump(document, sort_keys=False))
    cli_main(["run", str(seeded), "--epsilon", str(epsilon), "--no-evaluation", "--quiet",
              "--out", str(folder / "release"), "--force"])
    return document


def capture(args: argparse.Namespace) -> None:
    from synthpriv.cli import main as cli_main
    from synthpriv.marginals import aim

    caught = {}
    run = aim.run_aim

    def wrapped(*positional, **named):
        measurements, model = run(*positional, **named)
        caught["measurements"], caught["model"] = measurements, model
        return measurements, model

    aim.run_aim = wrapped
    import synthpriv.marginals.stage as stage
    stage.run_aim = wrapped
    seeded_run(cli_main, args.config, args.epsilon, args.seed)
    model = caught["model"]
    arrays, header = {}, {"attributes": list(model.domain.attributes),
                          "shape": list(model.domain.shape), "total": model.total,
                          "measurements": []}
    for i, m in enumerate(caught["measurements"]):
        header["measurements"].append({"clique": list(m.clique)})
        arrays[f"y{i}"] = np.asarray(m.noisy_counts, dtype=float)
        arrays[f"s{i}"] = np.asarray(m.sigma, dtype=float)
    np.savez(args.file, header=json.dumps(header), **arrays)
    print(json.dumps({"file": str(args.file), "measurements": len(caught["measurements"]),
                      "model_cells": model.tree.cells()}))


def ours(args: argparse.Namespace) -> None:
    from synthpriv.domain import Domain
    from synthpriv.marginals.estimation import estimate
    from synthpriv.marginals.measurement import Measurement

    attributes, shape, measured, total = load(args.file)
    domain = Domain(tuple(attributes), tuple(shape))
    measurements = [Measurement(c, y, s if s.ndim else float(s)) for c, y, s in measured]
    started = cpu()
    model = estimate(domain, measurements, total=total, iterations=args.iterations,
                     tolerance=0.0)
    seconds = cpu() - started
    print(json.dumps({"estimator": "synthpriv", "iterations": args.iterations,
                      "cpu_seconds": round(seconds, 2),
                      "loss": round(loss(model.project, measured), 2)}))


def mbi(args: argparse.Namespace) -> None:
    import jax
    jax.config.update("jax_enable_x64", True)
    from mbi import Domain, LinearMeasurement
    from mbi.estimation import MirrorDescent

    attributes, shape, measured, total = load(args.file)
    domain = Domain(attributes, shape)
    measurements = []
    for clique, y, sigma in measured:
        if np.ndim(sigma):  # a coarsened 1-way measurement: one sigma per cell, as y / sigma
            scale = 1.0 / sigma.ravel()
            measurements.append(LinearMeasurement(
                y.ravel() * scale, clique, 1.0,
                query=lambda factor, scale=scale: factor.datavector() * scale))
        else:
            measurements.append(LinearMeasurement(y.ravel(), clique, float(sigma)))
    for label in ("with compilation", "compiled"):
        started = cpu()
        model = MirrorDescent().estimate(domain, measurements, known_total=total,
                                         iters=args.iterations)
        jax.block_until_ready(model.marginals)
        seconds = cpu() - started
        value = loss(lambda c, m=model: np.asarray(m.project(c).datavector(flatten=False)),
                     measured)
        print(json.dumps({"estimator": f"mbi 2.0.0 MirrorDescent ({label})",
                          "iterations": args.iterations, "cpu_seconds": round(seconds, 2),
                          "loss": round(value, 2)}), flush=True)


def add_capture(sub, epsilon: float) -> None:
    """The ``capture`` subcommand's arguments: a job file, its ε, the seed, the output file."""
    first = sub.add_parser("capture")
    first.add_argument("config", type=Path)
    first.add_argument("--epsilon", type=float, default=epsilon)
    first.add_argument("--seed", type=int, default=7)
    first.add_argument("--file", type=Path, required=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_capture(sub, epsilon=3.0)
    for name in ("ours", "mbi"):
        fit = sub.add_parser(name)
        fit.add_argument("file", type=Path)
        fit.add_argument("--iterations", type=int, default=200)
    args = parser.parse_args()
    {"capture": capture, "ours": ours, "mbi": mbi}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
