"""The `synthpriv` command: run | plan | evaluate | sweep | sample | query | schema infer.

Heavy modules (pandas, scipy, dp-accounting, torch, sdv) are imported inside the command that
uses them, so ``synthpriv --help`` and ``--version`` start at once.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from synthpriv.errors import ReleaseError, SynthprivError

if TYPE_CHECKING:
    from synthpriv.config import Job
    from synthpriv.job import SynthesisJob

SIGPIPE_EXIT = 141  # 128 + SIGPIPE: what a shell reports for a writer whose reader went away


def _job(args: argparse.Namespace) -> Job:
    from synthpriv.config import load_job

    job = load_job(args.config)
    if getattr(args, "epsilon", None) is not None or getattr(args, "delta", None) is not None:
        job = job.with_budget(args.epsilon, args.delta)
    return job


def print_plan_messages(runner: SynthesisJob, evaluate: bool = True) -> list[str]:
    """Plan the job (public information only) and print its plan-time warnings and the TSTR
    note on stderr, before any data is read (synthpriv.plan_warnings); return them. The noise
    estimate that warns of nothing is left to ``plan``, so a run stays quiet."""
    from synthpriv.plan_warnings import plan_messages

    plan, stages = runner.planned
    messages = plan_messages(runner.job, plan, stages, evaluate, informational=False)
    for message in messages:
        print(message, file=sys.stderr)
    return messages


def command_plan(args: argparse.Namespace) -> int:
    from synthpriv.job import SynthesisJob
    from synthpriv.plan_warnings import plan_messages

    job = _job(args)
    plan, stages = SynthesisJob(job).planned
    print(plan.describe("delta" not in job.config.budget.model_fields_set))
    for message in plan_messages(job, plan, stages):
        print(message, file=sys.stderr)
    return 0


def command_run(args: argparse.Namespace) -> int:
    from synthpriv.domain_stage import bounds_text
    from synthpriv.job import SynthesisJob
    from synthpriv.runner import guarantee_lines

    job = _job(args)
    job.check_paths()
    evaluate = job.config.evaluation.enabled and not args.no_evaluation
    runner = SynthesisJob(job)
    if evaluate:  # the report's folder beside the release: refused now, not after the release
        from synthpriv.evaluation.job import evaluation_dir
        from synthpriv.evaluation.report import check_report_folder

        check_report_folder(evaluation_dir(job.output_dir(args.out)))
    said = print_plan_messages(runner, evaluate)
    from synthpriv.progress import StepProgress, wanted

    show = wanted(args.progress, args.quiet)
    progress = StepProgress(runner.plan, show)
    runner.hooks = progress.hooks()
    started = time.perf_counter()
    try:
        result = runner.run(args.out, force=args.force, evaluate=evaluate)
    except ReleaseError as error:
        raise ReleaseError(f"{error} The release folder is {job.describe_output(args.out)}.") from None
    finally:
        progress.close()
    print(f"released {result.records} synthetic rows in {time.perf_counter() - started:.1f} s")
    for name, count in runner.clipped.items():  # read from the raw table: stderr, never released
        column = result.job.schema.column(name)
        became = "read as missing" if column.outside == "missing" else "clipped to them"
        print(f"note: {count} value(s) of '{name}' outside its bounds {bounds_text(column)} "
              f"were {became} (this count is for you, not in the release)", file=sys.stderr)
    if runner.dropped is not None:  # data-dependent: stderr only, never released
        print(f"note: bounding each person to data.rows_per_person = "
              f"{job.config.data.contribution_bound} row(s) dropped {runner.dropped} row(s) (this "
              "count is for you, not in the release)", file=sys.stderr)
    for line in guarantee_lines(result.manifest):
        print(line)
    print(f"synthetic data: {result.out_dir / 'synthetic.csv'}")
    print(f"manifest:       {result.out_dir / 'manifest.json'}")
    from synthpriv.domain_stage import DomainStage, domain_lines

    steps = result.planned[1] if result.planned is not None else []
    step = next((s for s, _ in steps if isinstance(s, DomainStage)), None)
    for line in domain_lines(job.schema, result.job.schema, step and step.kept_shares,
                             step and step.thresholds, step and step.unbounded):
        print(line)
    for message in result.run_warnings:  # the noise at the sizes the run chose (not released)
        print(message, file=sys.stderr)
    if job.schema.drafted_by is not None:
        print(f"WARNING: released with a DRAFT schema (drafted_by: {job.schema.drafted_by}): "
              "NO GUARANTEE, as the manifest states. See the warning above.", file=sys.stderr)
    if evaluate:
        from synthpriv.evaluation.job import evaluate_job

        started = time.perf_counter()
        try:
            evaluation = evaluate_job(job, result, progress=show)
        except BaseException as error:  # the release stands: say so, whatever stopped the rest
            error.add_note(f"The release at {result.out_dir} is complete and kept; the "
                           "evaluation did not finish and wrote no report.")
            raise
        report = evaluation.report
        if any("(TSTR) will be skipped" in message for message in said):  # said once, above
            report = {**report, "notes": [note for note in report["notes"]
                                          if not (note.startswith("no holdout") and "TSTR" in note)]}
        print_evaluation(report, evaluation.files, time.perf_counter() - started)
    return 0


def print_evaluation(report: dict, files: dict[str, Path], seconds: float) -> None:
    """The evaluation's headline figures; a bug signal goes to stderr as well, loudly."""
    from synthpriv.evaluation.job import summary_lines

    print(f"evaluation ({seconds:.1f} s; reads the real data: NOT part of the DP release, do not "
          f"publish): {files['report.html']}")
    for line in summary_lines(report):
        print(f"  {line}")
    verdict = report.get("privacy", {}).get("verdict", {})
    if verdict.get("bug_signal"):
        banner = "!" * 78
        print(f"{banner}\n{verdict['message']}\n{banner}", file=sys.stderr)


def command_evaluate(args: argparse.Namespace) -> int:
    from synthpriv.evaluation.job import evaluate_files
    from synthpriv.table import delimited

    started = time.perf_counter()
    real = delimited(args.real, args.delimiter)
    holdout = None if args.holdout is None else delimited(args.holdout, args.delimiter)
    evaluation = evaluate_files(
        real, args.synthetic, args.schema, holdout=holdout, target=args.target,
        out=args.out, controls=args.controls, anonymeter=not args.no_anonymeter,
    )
    print_evaluation(evaluation.report, evaluation.files, time.perf_counter() - started)
    return 0


def command_sweep(args: argparse.Namespace) -> int:
    from synthpriv.config import load_job
    from synthpriv.sweep import parse_epsilons, run_sweep

    epsilons = parse_epsilons(args.epsilons)
    job = load_job(args.config)
    job.check_paths()
    out = args.out or Path.cwd() / "out" / f"{job.config.name}.sweep"
    started = time.perf_counter()
    reference = None if args.no_reference else args.reference
    result = run_sweep(job, epsilons, args.repeats, out, reference=reference)
    print(f"sweep: {len(result.rows)} runs in {time.perf_counter() - started:.1f} s "
          "(reads the real data: NOT part of any DP release)")
    for name, path in result.files.items():
        print(f"  {name}: {path}")
    for row in result.failures:
        print(f"FAILED: {row['method']} ε = {row['epsilon']}, repeat {row['repeat']}: {row['error']}",
              file=sys.stderr)
    return 1 if result.failures else 0


def command_sample(args: argparse.Namespace) -> int:
    from synthpriv.model_store import write_resample
    from synthpriv.runner import guarantee_lines

    out, manifest = write_resample(args.release, args.out, args.rows, parse_where(args.where),
                                   force=args.force)
    print(f"released {manifest['records']['released']} rows resampled from the model of "
          f"{args.release} (post-processing: no further privacy cost)")
    for line in guarantee_lines(manifest):
        print(line)
    print(f"synthetic data: {out / 'synthetic.csv'}")
    print(f"manifest:       {out / 'manifest.json'}")
    return 0


def parse_where(conditions: Sequence[str] | None) -> dict[str, str]:
    """``["sex=Female", ...]`` → ``{"sex": "Female"}``, with a clear error for a malformed one."""
    from synthpriv.errors import ConfigError

    where: dict[str, str] = {}
    for condition in conditions or ():
        name, equals, value = condition.partition("=")
        if not equals or not name.strip():
            raise ConfigError(f"--where {condition}: write COLUMN=VALUE, e.g. --where sex=Female.")
        if name.strip() in where:
            raise ConfigError(f"--where names '{name.strip()}' twice; give one value per column.")
        where[name.strip()] = value.strip()
    return where


def command_query(args: argparse.Namespace) -> int:
    from synthpriv.model_store import load_model

    table = load_model(args.release).query([a.strip() for a in args.marginal.split(",")])
    sys.stdout.write(table.to_csv(index=False))
    return 0


def _delimiter(value: str) -> str:
    """--delimiter's value: one character or 'tab' (``table.parse_delimiter``)."""
    from synthpriv.table import parse_delimiter

    try:
        return parse_delimiter(value, "--delimiter")
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def command_schema_infer(args: argparse.Namespace) -> int:
    from synthpriv.schema_infer import SAFE_HEADER, WARNING, infer_schema, schema_yaml

    safe = not args.from_data
    schema, notes = infer_schema(args.data, safe=safe, delimiter=args.delimiter)
    print(SAFE_HEADER if safe else WARNING, file=sys.stderr)
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    sys.stdout.write(schema_yaml(schema, safe=safe, notes=notes))
    return 0


def version() -> str:
    """The installed package's version (read only when asked: importlib.metadata is not free)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as installed_version

    try:
        return installed_version("synthpriv")
    except PackageNotFoundError:
        return "unknown (not installed: run from a source tree)"


class _VersionAction(argparse.Action):
    """``--version``: print ``synthpriv <version>`` and exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str = argparse.SUPPRESS,
                 help: str | None = None) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help=help)

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace,
                 values: object, option_string: str | None = None) -> None:
        print(f"synthpriv {version()}")
        parser.exit()


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="synthpriv", description=__doc__.split("\n", 1)[0],
        epilog="Paths in a job config are relative to the config file's folder; paths on the "
        "command line are relative to the current folder; the default release folder is "
        "out/<job name> in the current folder.",
    )
    root.add_argument("--version", action=_VersionAction, help="print the version and exit")
    commands = root.add_subparsers(dest="command", required=True)

    def budget_flags(sub: argparse.ArgumentParser) -> None:
        sub.add_argument("config", type=Path, help="job config (YAML)")
        sub.add_argument("--epsilon", type=float, help="override budget.epsilon")
        sub.add_argument("--delta", type=float, help="override budget.delta")

    run = commands.add_parser("run", help="run a job end to end and write its release")
    budget_flags(run)
    run.add_argument("--out", type=Path,
                     help="release folder (default: output.dir, else out/<job name> in the current folder)")
    run.add_argument("--force", action="store_true", help="replace an existing release")
    run.add_argument("--no-evaluation", action="store_true",
                     help="skip the evaluation step (evaluation.enabled: false does the same)")
    shown = run.add_mutually_exclusive_group()
    shown.add_argument("--progress", action="store_true", default=None,
                       help="show progress on stderr even when it is not a terminal")
    shown.add_argument("--quiet", action="store_true", help="show no progress")
    run.set_defaults(handler=command_run)

    plan = commands.add_parser("plan", help="show the budget split and noise, without the data")
    budget_flags(plan)
    plan.set_defaults(handler=command_plan)

    evaluate = commands.add_parser(
        "evaluate", help="evaluate any synthetic CSV against the real one (NOT private output)"
    )
    evaluate.add_argument("--real", type=Path, required=True, help="the real (training) table")
    evaluate.add_argument("--synthetic", type=Path, required=True, help="the synthetic table")
    evaluate.add_argument("--holdout", type=Path, help="real rows not used for training (non-members)")
    evaluate.add_argument("--schema", type=Path, required=True, help="schema YAML of the tables")
    evaluate.add_argument(
        "--delimiter", type=_delimiter, default=",",
        help="the character separating the fields of --real and --holdout (as the job's "
        "data.delimiter): ',' (default), ';', '|' or 'tab'; --synthetic is read comma-separated")
    evaluate.add_argument("--target", help="column to predict for train-synthetic/test-real")
    evaluate.add_argument("--out", type=Path, help="report folder (default: <synthetic>.evaluation)")
    evaluate.add_argument("--controls", default="identity,gaussian_copula",
                          help="positive controls to attack too: identity, gaussian_copula, cart, ctgan "
                          "(comma-separated; empty for none)")
    evaluate.add_argument("--no-anonymeter", action="store_true", help="skip anonymeter's risks")
    evaluate.set_defaults(handler=command_evaluate)

    sweep = commands.add_parser("sweep", help="run and evaluate a job at several ε: trade-off plot")
    sweep.add_argument("config", type=Path, help="job config (YAML)")
    sweep.add_argument("--epsilons", default="0.1,0.3,1,3,10", help="comma-separated ε values")
    sweep.add_argument("--repeats", type=int, default=1, help="runs per ε, each with fresh noise")
    sweep.add_argument("--out", type=Path, help="folder for tradeoff.csv/png (default: out/<job>.sweep)")
    sweep.add_argument("--reference", default="cart",
                       help="the non-DP reference drawn beside the DP runs: cart (sequential CART, "
                       "default), gaussian_copula, ctgan (slow)")
    sweep.add_argument("--no-reference", action="store_true", help="skip the non-DP reference")
    sweep.set_defaults(handler=command_sweep)

    sample = commands.add_parser(
        "sample", help="draw a new release from a release's model (no further privacy cost)")
    sample.add_argument("release", type=Path, help="release folder (holds model.json)")
    sample.add_argument("--rows", type=int, required=True, help="rows to draw")
    sample.add_argument("--out", type=Path, required=True, help="new release folder")
    sample.add_argument("--where", action="append", metavar="COLUMN=VALUE",
                        help="condition every row on a categorical column's value (repeatable)")
    sample.add_argument("--force", action="store_true", help="replace an existing release")
    sample.set_defaults(handler=command_sample)

    query = commands.add_parser(
        "query", help="a marginal from a release's model, with standard errors (CSV on stdout)")
    query.add_argument("release", type=Path, help="release folder (holds model.json)")
    query.add_argument("--marginal", required=True, metavar="A,B",
                       help="comma-separated columns of the marginal")
    query.set_defaults(handler=command_query)

    schema = commands.add_parser("schema", help="schema tools")
    schema_commands = schema.add_subparsers(dest="schema_command", required=True)
    infer = schema_commands.add_parser(
        "infer", help="draft a schema from a CSV or Parquet file: by default from its header "
        "only (safe to keep); --from-data reads the cells (NOT private: review it)")
    infer.add_argument("data", type=Path)
    infer.add_argument(
        "--delimiter", type=_delimiter, default=None,
        help="the character separating the CSV's fields: ',', ';', '|' or 'tab'; default: ',' "
        "unless the header has no comma and holds exactly one of tab, ';', '|' (the header only "
        "is read to decide). The draft's notes give the job config's data.delimiter line")
    reading = infer.add_mutually_exclusive_group()
    reading.add_argument(
        "--safe", action="store_true",
        help="the default: the header only, every column kind auto; the run decides kinds, "
        "bounds and categories under DP (budget.domain_share, budget.domain_delta_share)")
    reading.add_argument(
        "--from-data", action="store_true",
        help="read the cells: kinds, bounds, categories, dates, ids and free text as the data "
        "shows them. NOT private: for a person to review and replace with public knowledge")
    infer.set_defaults(handler=command_schema_infer)
    return root


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised where the program stands so that every cleanup runs as for
    Ctrl-C: the staging folder, the lock and the spool of the sensitive table go with it."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _terminate(signum: int, frame: object) -> None:
    raise Terminated(signum)


@contextlib.contextmanager
def _signals_as_interrupts() -> Iterator[None]:
    """SIGTERM and SIGHUP raise ``Terminated`` while the command runs (the main thread only:
    Python lets no other thread set handlers); the previous handlers come back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _terminate)
                for signum in (signal.SIGTERM, signal.SIGHUP)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (0 ok, 2 refused, 130 interrupted by SIGINT,
    143 by SIGTERM (128 + the signal), 141 when the reader of stdout went away, as in
    ``synthpriv ... | head``)."""
    try:
        try:
            with _signals_as_interrupts():
                return _dispatch(argv)
        finally:
            sys.stdout.flush()  # a closed pipe surfaces here, inside the handler below
    except BrokenPipeError:
        _stdout_to_devnull()
        return SIGPIPE_EXIT


def _stdout_to_devnull() -> None:
    """Point stdout at /dev/null so the interpreter's own flush at exit does not fail again (the
    recipe in Python's signal module documentation)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # stdout is not a file (captured, or closed): nothing to flush
        pass


def _dispatch(argv: Sequence[str] | None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.handler(args)
    except SynthprivError as error:
        print(f"error: {error}", file=sys.stderr)
        _print_notes(error)
        return 2
    except MemoryError as error:
        kept = getattr(error, "__notes__", None)
        print(
            f"error: out of memory{'' if kept else ': nothing was released'}. Use coarser bins "
            "or fewer categories, "
            "or lower pipeline.stages.marginals.max_model_cells so such models are refused early.",
            file=sys.stderr,
        )
        _print_notes(error)
        return 2
    except KeyboardInterrupt as interrupt:
        signum = interrupt.signum if isinstance(interrupt, Terminated) else signal.SIGINT
        kept = getattr(interrupt, "__notes__", None)
        what = "" if kept else (": nothing was released" if args.command in ("run", "sample")
                                else ": the command did not finish")
        print(f"interrupted ({signal.Signals(signum).name}){what}", file=sys.stderr)
        _print_notes(interrupt)
        return 128 + signum


def _print_notes(error: BaseException) -> None:
    """The notes a step added on its way out (a release kept when the evaluation stopped)."""
    for note in getattr(error, "__notes__", ()):
        print(note, file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
