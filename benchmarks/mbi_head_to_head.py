"""AIM head to head: synthpriv's AIM against an AIM on mbi 2.0.0 (JAX), same table, same ρ.

Issue 26. Both run on the same discretised Adult: the integer codes our run's domain step made
(its public schema, DP bins; captured from a seeded job, NOT FOR RELEASE), with the same zCDP ρ
(the ρ whose RDP bound is the job's (ε, δ): ``synthpriv.privacy.zcdp_bound``), the same workload
(every 3-way marginal, our AIM's ``workload_degree``; weights |candidate ∩ query|), the same
planned rounds (16 per column) and the same model-size cap (our job's ``max_model_cells``, given
to mbi in MB as private-pgm's ``max_model_size``). mbi has no AIM in its package (2.0.0): its
reference loop, private-pgm ``mechanisms/aim.py`` (written for the pre-2.0 API), is ported below
onto ``mbi.estimation.MirrorDescent`` with warm starts, as written there (``max_iters`` mirror-
descent iterations per round, 1000 by default). Each side reports the CPU seconds (user + sys) of
its AIM loop and sampling, and the mean 1/2/3-way TVD of its synthetic codes against the table.

    PYTHONPATH=. .venv/bin/python benchmarks/mbi_head_to_head.py capture configs/adult.yaml \
        --epsilon 1 --file /tmp/h2h-e1.npz
    PYTHONPATH=. .venv/bin/python benchmarks/mbi_head_to_head.py ours /tmp/h2h-e1.npz --seed 1
    /work/venv-mbi/bin/python benchmarks/mbi_head_to_head.py mbi /tmp/h2h-e1.npz --seed 1
    # or all three with a time cap on mbi (seconds of wall time):
    PYTHONPATH=. .venv/bin/python benchmarks/mbi_head_to_head.py compare configs/adult.yaml \
        --epsilons 1,3 --seeds 1 --work /tmp/h2h --mbi-timeout 1200
"""

from __future__ import annotations

import argparse
import itertools
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from estimator_vs_mbi import add_capture, seeded_run  # this script's folder is on sys.path

MBI_PYTHON = "/work/venv-mbi/bin/python"


def cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def load(path: Path) -> tuple[list[str], list[int], np.ndarray, dict]:
    saved = np.load(path, allow_pickle=False)
    header = json.loads(str(saved["header"]))
    return header["attributes"], header["shape"], saved["codes"], header


def counts(codes: np.ndarray, shape: list[int], axes: tuple[int, ...]) -> np.ndarray:
    flat = np.zeros(codes.shape[0], dtype=np.int64)
    for axis in axes:
        flat = flat * shape[axis] + codes[:, axis]
    return np.bincount(flat, minlength=int(np.prod([shape[a] for a in axes])))


def tvd(real: np.ndarray, synthetic: np.ndarray, shape: list[int]) -> dict[str, float]:
    """Mean total variation distance over every k-way marginal (k = 1, 2, 3) of the codes."""
    found = {}
    for k in (1, 2, 3):
        distances = []
        for axes in itertools.combinations(range(len(shape)), k):
            p = counts(real, shape, axes) / len(real)
            q = counts(synthetic, shape, axes) / len(synthetic)
            distances.append(0.5 * float(np.abs(p - q).sum()))
        found[f"tvd_{k}"] = round(float(np.mean(distances)), 5)
    return found


def capture(args: argparse.Namespace) -> None:
    """A seeded job (NOT FOR RELEASE); its AIM's table (after the domain step) and settings."""
    import dataclasses

    import synthpriv.marginals.stage as stage
    from synthpriv.cli import main as cli_main

    caught: dict = {}
    run = stage.run_aim

    def wrapped(data, settings, sensitivity, source, budget, adapt=None):
        def adapted(data, one_way):
            data, one_way = adapt(data, one_way) if adapt else (data, one_way)
            caught["codes"], caught["domain"] = np.asarray(data.codes), data.domain
            return data, one_way
        caught["settings"] = dataclasses.asdict(settings)
        return run(data, settings, sensitivity, source, budget, adapt=adapted)

    stage.run_aim = wrapped
    document = seeded_run(cli_main, args.config, args.epsilon, args.seed)
    domain = caught["domain"]
    header = {"attributes": list(domain.attributes), "shape": [int(s) for s in domain.shape],
              "epsilon": args.epsilon, "delta": float(document["budget"]["delta"]),
              "settings": caught["settings"]}
    np.savez(args.file, header=json.dumps(header), codes=caught["codes"].astype(np.int32))
    print(json.dumps({"file": str(args.file), "rows": len(caught["codes"]),
                      "domain": dict(zip(header["attributes"], header["shape"], strict=True))}))


def job_rho(epsilon: float, delta: float) -> float:
    """The zCDP ρ whose RDP bound (the Ledger's) is ``epsilon`` at ``delta``."""
    from scipy.optimize import brentq

    from synthpriv.privacy.zcdp_bound import zcdp_epsilon
    return float(brentq(lambda rho: zcdp_epsilon(rho, delta) - epsilon, 1e-9, 100.0, xtol=1e-12))


def ours(args: argparse.Namespace) -> None:
    from synthpriv.domain import Dataset, Domain
    from synthpriv.marginals.aim import AimSettings, Sensitivity, run_aim
    from synthpriv.privacy.accountant import Ledger
    from synthpriv.privacy.randomness import RandomSource

    attributes, shape, codes, header = load(args.file)
    domain = Domain(tuple(attributes), tuple(shape))
    rho = job_rho(header["epsilon"], header["delta"])
    ledger = Ledger("add_remove")
    budget = ledger.open_filter(rho, "AIM (head to head)")
    source = RandomSource.seeded(args.seed)  # NOT FOR RELEASE: a benchmark
    started = cpu()
    measurements, model = run_aim(Dataset(codes.astype(np.int64), domain),
                                  AimSettings(**header["settings"]), Sensitivity(1.0, 1.0),
                                  source, budget)
    synthetic = model.sample_rounded(len(codes), source.numpy_generator())
    seconds = cpu() - started
    print(json.dumps({"side": "synthpriv", "epsilon": header["epsilon"], "rho": rho,
                      "seed": args.seed, "cpu_seconds": round(seconds, 2),
                      "selections": len(measurements) - len(attributes),
                      "model_cells": model.tree.cells(), "spent_rho": budget.spent,
                      **tvd(codes, synthetic, shape)}))


def mbi_aim(data, domain, rho: float, cap_mb: float, max_iters: int, rng, log) -> tuple:
    """private-pgm's mechanisms/aim.py ``AIM.run`` on the mbi 2.0.0 API (workload: every
    3-way marginal, weight 1; candidates its downward closure, weighted by overlap)."""
    from mbi import LinearMeasurement, junction_tree
    from mbi.estimation import MirrorDescent

    attributes = list(domain.attributes)
    workload = list(itertools.combinations(attributes, 3))
    closure = {c for q in workload for r in (1, 2, 3) for c in itertools.combinations(q, r)}
    candidates = {c: float(sum(len(set(c) & set(q)) for q in workload))
                  for c in sorted(closure, key=len)}
    answers = {c: np.asarray(data.project(c).datavector()) for c in candidates}
    rounds = 16 * len(attributes)
    sigma = np.sqrt(rounds / (2 * 0.9 * rho))
    epsilon = np.sqrt(8 * 0.1 * rho / rounds)
    oneway = [c for c in candidates if len(c) == 1]
    measurements = [LinearMeasurement(answers[c] + rng.normal(0, sigma, answers[c].size), c,
                                      stddev=sigma) for c in oneway]
    rho_used = len(oneway) * 0.5 / sigma**2
    estimator = MirrorDescent()
    model = estimator.estimate(domain, measurements, iters=max_iters)
    terminate = False
    while not terminate:
        if rho - rho_used < 2 * (0.5 / sigma**2 + 1.0 / 8 * epsilon**2):
            remaining = rho - rho_used
            sigma = np.sqrt(1 / (2 * 0.9 * remaining))
            epsilon = np.sqrt(8 * 0.1 * remaining)
            terminate = True
        rho_used += 1.0 / 8 * epsilon**2 + 0.5 / sigma**2
        size_limit = cap_mb * rho_used / rho
        free = {s for c in model.cliques for r in range(1, len(c) + 1)
                for s in itertools.combinations(c, r)}
        small = [c for c in candidates if c in free or junction_tree.hypothetical_model_size(
            domain, list(model.cliques) + [c]) <= size_limit]
        errors = np.array([
            candidates[c] * (np.abs(answers[c] - np.asarray(model.project(c).datavector())).sum()
                             - np.sqrt(2 / np.pi) * sigma * domain.size(c)) for c in small])
        sensitivity = max(candidates[c] for c in small)
        logits = 0.5 * epsilon / sensitivity * (errors - errors.max())
        p = np.exp(logits) / np.exp(logits).sum()
        chosen = small[rng.choice(len(small), p=p)]
        y = answers[chosen] + rng.normal(0, sigma, answers[chosen].size)
        measurements.append(LinearMeasurement(y, chosen, stddev=sigma))
        before = np.asarray(model.project(chosen).datavector())
        model = estimator.estimate(domain, measurements, iters=max_iters, warm_start=model)
        after = np.asarray(model.project(chosen).datavector())
        log(f"round {len(measurements) - len(oneway)}: {chosen}, ρ used {rho_used / rho:.3f}, "
            f"CPU s {cpu():.1f}")
        if np.abs(after - before).sum() <= sigma * np.sqrt(2 / np.pi) * domain.size(chosen):
            sigma /= 2
            epsilon *= 2
    model = estimator.estimate(domain, measurements, iters=max_iters, warm_start=model)
    return model, len(measurements) - len(oneway)


def mbi(args: argparse.Namespace) -> None:
    import jax
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_compilation_cache", False)  # mbi's own advice
    from mbi import Dataset, Domain

    attributes, shape, codes, header = load(args.file)
    domain = Domain(attributes, shape)
    data = Dataset({a: codes[:, j] for j, a in enumerate(attributes)}, domain)
    cap_mb = header["settings"]["max_model_cells"] * 8 / 2**20  # the same cells as ours
    rng = np.random.default_rng(args.seed)
    started = cpu()
    model, selections = mbi_aim(data, domain, args.rho, cap_mb, args.max_iters, rng,
                                lambda line: print(line, file=sys.stderr, flush=True))
    synthetic = model.synthetic_data(rows=len(codes))
    frame = synthetic.to_dict() if hasattr(synthetic, "to_dict") else synthetic.data
    drawn = np.stack([np.asarray(frame[a]) for a in attributes], axis=1)
    seconds = cpu() - started
    print(json.dumps({"side": "mbi 2.0.0 (AIM of private-pgm, ported)",
                      "epsilon": header["epsilon"], "rho": args.rho, "seed": args.seed,
                      "max_iters": args.max_iters, "cpu_seconds": round(seconds, 2),
                      "selections": selections, **tvd(codes, drawn, shape)}))


def compare(args: argparse.Namespace) -> None:
    """capture, ours and mbi for each ε and seed; mbi under a wall-time cap."""
    args.work.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve()
    rows = []
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        table = args.work / f"adult-e{epsilon:g}.npz"
        if not table.exists():
            subprocess.run([sys.executable, str(here), "capture", str(args.config),
                            "--epsilon", str(epsilon), "--file", str(table)], check=True)
        for seed in (int(s) for s in args.seeds.split(",")):
            out = subprocess.run([sys.executable, str(here), "ours", str(table), "--seed",
                                  str(seed)], check=True, capture_output=True, text=True)
            row = json.loads(out.stdout.strip().splitlines()[-1])
            rows.append(row)
            print(json.dumps(row), flush=True)
            started = time.time()
            try:
                out = subprocess.run(
                    [args.mbi_python, str(here), "mbi", str(table), "--seed", str(seed),
                     "--rho", str(row["rho"]), "--max-iters", str(args.max_iters)],
                    check=True, capture_output=True, text=True, timeout=args.mbi_timeout)
                rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
            except subprocess.TimeoutExpired as stopped:
                progress = (stopped.stderr or b"").decode() if isinstance(stopped.stderr, bytes) \
                    else (stopped.stderr or "")
                rounds = progress.strip().splitlines()
                rows.append({"side": "mbi 2.0.0 (AIM of private-pgm, ported)",
                             "epsilon": epsilon, "seed": seed, "timeout_s": args.mbi_timeout,
                             "last_round": rounds[-1] if rounds else None,
                             "wall_seconds": round(time.time() - started)})
            print(json.dumps(rows[-1]), flush=True)
    if args.output:
        args.output.write_text(json.dumps(rows, indent=1) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    add_capture(sub, epsilon=1.0)
    mine = sub.add_parser("ours")
    mine.add_argument("file", type=Path)
    mine.add_argument("--seed", type=int, default=1)
    theirs = sub.add_parser("mbi")
    theirs.add_argument("file", type=Path)
    theirs.add_argument("--seed", type=int, default=1)
    theirs.add_argument("--rho", type=float, required=True, help="zCDP ρ (from `ours`)")
    theirs.add_argument("--max-iters", type=int, default=1000)
    both = sub.add_parser("compare")
    both.add_argument("config", type=Path)
    both.add_argument("--epsilons", default="1,3")
    both.add_argument("--seeds", default="1")
    both.add_argument("--work", type=Path, default=Path(tempfile.mkdtemp()))
    both.add_argument("--mbi-python", default=MBI_PYTHON)
    both.add_argument("--mbi-timeout", type=float, default=1200.0)
    both.add_argument("--max-iters", type=int, default=1000)
    both.add_argument("--output", type=Path)
    args = parser.parse_args()
    {"capture": capture, "ours": ours, "mbi": mbi, "compare": compare}[args.command](args)


if __name__ == "__main__":
    sys.exit(main())
