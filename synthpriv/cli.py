"""The `synthpriv` command: run | plan | schema infer."""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

from synthpriv.config import Job, load_job
from synthpriv.errors import SynthprivError
from synthpriv.privacy.plan import Plan


def _job(args: argparse.Namespace) -> Job:
    job = load_job(args.config)
    if getattr(args, "epsilon", None) is not None or getattr(args, "delta", None) is not None:
        job = job.with_budget(args.epsilon, args.delta)
    return job


def format_plan(plan: Plan) -> str:
    lines = [
        f"budget: ε = {plan.target_epsilon:g}, δ = {plan.delta:g} ({plan.neighbouring})",
        f"{'stage':<12} {'share':>6} {'rho (zCDP)':>12}  noise",
    ]
    for stage in plan.stages:
        noise = ", ".join(f"{k} = {v:.4g}" for k, v in stage.noise.items()) or "none (no data access)"
        fixed = " [fixed by config]" if stage.fixed else ""
        lines.append(f"{stage.stage:<12} {stage.share:>6.2f} {stage.rho:>12.5g}  {noise}{fixed}")
    lines.append(f"composed plan: ε = {plan.epsilon:.4f} at δ = {plan.delta:g}")
    return "\n".join(lines)


def command_plan(args: argparse.Namespace) -> int:
    from synthpriv.pipeline import plan_job

    plan, _ = plan_job(_job(args))
    print(format_plan(plan))
    return 0


def command_run(args: argparse.Namespace) -> int:
    from synthpriv.runner import run_job

    job = _job(args)
    started = time.perf_counter()
    result = run_job(job, out=args.out, force=args.force)
    guarantee = result.manifest["guarantee"]
    print(f"released {result.records} synthetic rows in {time.perf_counter() - started:.1f} s")
    print(f"privacy: ε = {guarantee['epsilon']:.4f}, δ = {guarantee['delta']:g} "
          f"({guarantee['neighbouring']}; ledger: RDP {result.manifest['ledger']['epsilon_rdp']:.4f},"
          f" PLD {result.manifest['ledger']['epsilon_pld']:.4f})")
    if result.manifest["randomness"]["mode"] == "seeded":
        print("WARNING: seeded run — reproducible noise, NOT FOR RELEASE")
    print(f"synthetic data: {result.out_dir / 'synthetic.csv'}")
    print(f"manifest:       {result.out_dir / 'manifest.json'}")
    return 0


def command_schema_infer(args: argparse.Namespace) -> int:
    from synthpriv.schema_infer import WARNING, infer_schema, schema_yaml

    schema, notes = infer_schema(args.data)
    print(WARNING, file=sys.stderr)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    sys.stdout.write(schema_yaml(schema))
    return 0


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="synthpriv", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)

    def budget_flags(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("config", type=Path, help="job config (YAML)")
        sub.add_argument("--epsilon", type=float, help="override budget.epsilon")
        sub.add_argument("--delta", type=float, help="override budget.delta")

    run = commands.add_parser("run", help="run a job end to end and write its release")
    budget_flags(run)
    run.add_argument("--out", type=Path, help="release folder (default: out/<job name>)")
    run.add_argument("--force", action="store_true", help="replace an existing release")
    run.set_defaults(handler=command_run)

    plan = commands.add_parser("plan", help="show the budget split and noise, without the data")
    budget_flags(plan)
    plan.set_defaults(handler=command_plan)

    schema = commands.add_parser("schema", help="schema tools")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True)
    infer = schema_commands.add_parser("infer", help="draft a schema from a CSV (NOT private)")
    infer.add_argument("data", type=Path)
    infer.set_defaults(handler=command_schema_infer)
    return root


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.handler(args)
    except SynthprivError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted: nothing was released", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
