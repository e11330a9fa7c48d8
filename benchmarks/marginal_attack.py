"""Power of the attack built for marginal recipes: the default job's pipeline (AIM) at several ε on
a small Adult sample, with the identity control.

    .venv/bin/python benchmarks/marginal_attack.py --epsilons 1,10,100 \
        --out benchmarks/results/marginal-attack.json

The pool is a seeded sample of ``--pool`` rows of Adult's training table; the attack
(``synthpriv.evaluation.marginal_attack``) picks its ``--targets`` most exposed rows, runs the job's
pipeline (configs/adult.yaml, recipe and δ as there, ε as given) on ``--tables`` shadow tables of
``--records`` rows, fits on half and measures on the other half. Per ε: the mean AUC over the
exposed rows with its 95 % bootstrap interval (over test tables), whether that interval lies above
½ ("power"), the worst per-row ε lower bound (level 0.05/targets per row, 90 % confidence) against
the ledger's ε, and the seconds. One JSON document with every figure goes to ``--out``.

``--time-one`` runs no attack: it times one shadow run (the pipeline on the pool's first
``--records`` rows) per ε under cProfile, prints its wall and CPU seconds and the functions that
took longest, and writes nothing (what an attack of ``--tables`` tables would cost, before
spending it).
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from synthpriv.config import load_job  # noqa: E402
from synthpriv.evaluation.marginal_attack import marginal_attack  # noqa: E402
from synthpriv.evaluation.report import json_ready  # noqa: E402
from synthpriv.evaluation.shadow import IdentityGenerator, PipelineGenerator  # noqa: E402
from synthpriv.job import SynthesisJob  # noqa: E402
from synthpriv.privacy.randomness import RandomSource  # noqa: E402
from synthpriv.table import read_table  # noqa: E402


def ledger_epsilon(job, real) -> float:
    """The ε the ledger composes one run of the job to (what its release would claim)."""
    run = SynthesisJob(job, source=RandomSource.seeded(0)).synthesise(real)
    return float(run.ledger.epsilon(run.plan.delta))


def time_one_run(job, table, seed: int) -> None:
    """One run of the job's pipeline on ``table`` under cProfile: wall and CPU seconds, the
    ledger's ε and the 25 functions with the largest cumulative time."""
    synthesis, profile = SynthesisJob(job), cProfile.Profile()
    wall, cpu = time.perf_counter(), time.process_time()
    run = profile.runcall(synthesis.synthesise, table, RandomSource.seeded(seed))
    wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    print(f"{job.config.pipeline.recipe} ε = {job.config.budget.epsilon:g} (ledger "
          f"{run.ledger.epsilon(run.plan.delta):.4g}), {len(table)} rows: {wall:.0f} s wall, "
          f"{cpu:.0f} s CPU (under cProfile)", flush=True)
    pstats.Stats(profile).sort_stats("cumulative").print_stats(25)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default=str(ROOT / "configs" / "adult.yaml"))
    parser.add_argument("--epsilons", default="1,10,100")
    parser.add_argument("--recipe", default=None, help="override the config's pipeline.recipe")
    parser.add_argument("--pool", type=int, default=3000)
    parser.add_argument("--tables", type=int, default=32)
    parser.add_argument("--records", type=int, default=300)
    parser.add_argument("--targets", type=int, default=10)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--time-one", action="store_true",
                        help="time and profile one shadow run per ε instead of attacking")
    args = parser.parse_args()
    if args.out is None and not args.time_one:
        parser.error("--out is required (unless --time-one)")
    runs = []
    for epsilon in (float(e) for e in args.epsilons.split(",")):
        job = load_job(args.config)
        job.config.budget.epsilon = epsilon
        if args.recipe:
            job.config.pipeline.recipe = args.recipe
        real = read_table(job.data_path, job.schema).sample(args.pool, random_state=args.seed)
        if args.time_one:
            time_one_run(job, real.iloc[: args.records], args.seed)
            continue
        start = time.perf_counter()
        result = marginal_attack(
            real, {"pipeline": PipelineGenerator(job), "identity": IdentityGenerator()},
            numeric_columns=job.schema.numeric_names, neighbouring=job.config.budget.neighbouring,
            delta=job.config.budget.delta, shadow_tables=args.tables, records=args.records,
            targets=args.targets, workers=args.workers, seed=args.seed, progress=True,
        )
        seconds = time.perf_counter() - start
        claimed = ledger_epsilon(job, real.iloc[: args.records])
        recipe = job.config.pipeline.recipe
        runs.append({"epsilon": epsilon, "recipe": recipe, "ledger_epsilon": claimed,
                     "seconds": seconds, **result})
        for name, g in result["generators"].items():
            worst = g["worst_case"]
            print(f"{recipe} ε = {epsilon:g} (ledger {claimed:.4g}) {name}: "
                  f"mean AUC {g['mean_auc']:.3f} "
                  f"[{g['mean_auc_ci'][0]:.3f}, {g['mean_auc_ci'][1]:.3f}] power {g['power']}; "
                  f"worst ε lower bound {worst['eps_lower_bound']:.3f} (certifiable at most "
                  f"{worst['max_certifiable']:.3f}); {g['seconds']:.0f} s", flush=True)
    if args.time_one:
        return
    args.out.parent.mkdir(parents=True, exist_ok=True)
    settings = {k: v for k, v in vars(args).items() if k != "out"}
    args.out.write_text(json.dumps(json_ready({"settings": settings, "runs": runs}), indent=1) + "\n")


if __name__ == "__main__":
    main()
