"""End-to-end privacy audit of the recipes (synthpriv.evaluation.audit): the real job run ``--runs`` times on
D and on D' = D + one canary, black-box and white-box ε lower bounds at 90 % confidence.

    .venv/bin/python benchmarks/audit.py --recipes independent,mst,aim --epsilons 1,4 --runs 2000
    .venv/bin/python benchmarks/audit.py --recipes independent --options holdback,dask,replace_one

Each line of the output (and of ``--out``, JSON lines) is one setting: claimed ε (the ledger's),
certified ε (white box, black box, and the larger), runs per side, seconds; and in Gaussian-DP
terms the ledger's ρ and μ = √(2ρ), the exact μ of the white box's test on the ledger's discrete
Gaussians (``discrete_mu``), the white box's distribution-free μ lower bound at threshold 0
(``gdp_mu_white``, confidence ``gdp_confidence`` = 1 − alpha), its share of the ledger's μ and
its ε if the mechanism's curve is Gaussian (``synthpriv.evaluation.gdp_audit``). Timings depend
on the machine's load; compare them only within one run.
"""

from __future__ import annotations

import argparse
import functools
import json
import logging
import sys
from collections.abc import Callable, Iterable
from pathlib import Path

import numpy as np

from synthpriv.evaluation.audit import FAST_STAGES, RECIPES, TIGHT_STAGES, AuditSetting, run_audit

OPTIONS = {
    "plain": {},
    "holdback": {"holdout_fraction": 0.25},
    "dask": {"engine": "dask"},
    "replace_one": {"neighbouring": "replace_one"},
}


def audit_arguments(parser: argparse.ArgumentParser, runs: int) -> None:
    """The options every audit script shares: runs per side, alpha, selection share, --out."""
    parser.add_argument("--runs", type=int, default=runs, help="runs per side (D and D')")
    parser.add_argument("--alpha", type=float, default=0.05, help="confidence is 1 - 2·alpha")
    parser.add_argument("--selection-fraction", type=float, default=0.5,
                        help="share of the runs that chooses the threshold (the rest bound ε)")
    parser.add_argument("--out", type=Path, help="append JSON lines here")


def progress(message: str) -> None:
    """An audit's progress, on stderr (stdout holds the JSON lines)."""
    print(message, file=sys.stderr, flush=True)


def run_settings(audits: Iterable[Callable[[], dict]], args: argparse.Namespace) -> int:
    """The audit scripts' loop: each of ``audits`` runs one setting and returns its summary;
    each summary, with the selection fraction, is printed as a JSON line and appended to
    ``--out``. dp-accounting's RDP warnings (DP-SGD plans) are silenced."""
    logging.getLogger().setLevel(logging.ERROR)
    for audit in audits:
        line = json.dumps({**audit(), "selection_fraction": args.selection_fraction})
        print(line, flush=True)
        if args.out is not None:
            with args.out.open("a") as out:
                out.write(line + "\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--recipes", default="independent,mst,aim",
                        help=f"comma-separated, of {','.join(RECIPES)}")
    parser.add_argument("--epsilons", default="1,4")
    parser.add_argument("--delta", type=float, default=1e-3)
    parser.add_argument("--records", type=int, default=8, help="rows of D")
    parser.add_argument("--options", default="plain", help=f"comma-separated, of {','.join(OPTIONS)}")
    parser.add_argument("--stages", choices=("fast", "tight"), default="fast",
                        help="stage settings: FAST_STAGES, or TIGHT_STAGES (marginal recipes "
                             "whose white box sees nearly all they spend)")
    parser.add_argument("--scores", type=Path, help="save each setting's scores (.npz) here")
    audit_arguments(parser, runs=500)
    args = parser.parse_args(argv)
    chosen = TIGHT_STAGES if args.stages == "tight" else FAST_STAGES

    def audit(setting: AuditSetting) -> dict:
        result = run_audit(setting, args.runs, args.alpha, progress=progress,
                           selection_fraction=args.selection_fraction)
        if args.scores is not None:
            args.scores.mkdir(parents=True, exist_ok=True)
            name = f"{setting.label.replace(' ', '_')}_{args.stages}_{args.runs}.npz"
            np.savez(args.scores / name, **result.scores)
        return {**result.summary(), "stages": args.stages, "stage_settings": setting.stages}

    settings = (AuditSetting(recipe, epsilon, args.delta, args.records,
                             stages=chosen.get(recipe), **OPTIONS[option])
                for recipe in args.recipes.split(",") for option in args.options.split(",")
                for epsilon in (float(e) for e in args.epsilons.split(",")))
    return run_settings((functools.partial(audit, setting) for setting in settings), args)


if __name__ == "__main__":
    raise SystemExit(main())
