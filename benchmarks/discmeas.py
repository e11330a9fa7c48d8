"""The safe draft's utility with and without the domain step's discovery counts as 1-way
measurements (issue 24, branch discmeas): each seeded run of ``schema infer`` (every column
``auto``) at ε = 1 on a suite table's train split, scored against that split with the
data-read draft: mean 1-, 2- and 3-way TVD (numeric columns in 16 quantile bins), and the mean
1-way TVD of the columns the data-read draft calls categorical and of those the run decided
categorical (discovered: the ones the change touches).

Run it once on main's tree and once on this branch's (PYTHONPATH picks the ``synthpriv`` that
runs; the seeds are the same), then compare the JSON lines:

    PYTHONPATH=/path/to/tree .venv/bin/python benchmarks/discmeas.py --table wage \\
        --recipe mst --seeds 3 --label after

``--draft`` runs the data-read draft instead (no discovered column: the divisor of issue 24's
safe/data-read ratio). ``--compare BEFORE.jsonl AFTER.jsonl`` prints, per table and recipe,
each figure's mean before and after and the mean ± sd of the paired (same seed) differences.

Development-suite tables only (none is held out).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from safe_gap import both_drafts, column_tvd  # noqa: E402
from suite import TABLES, job_config, read_scored  # noqa: E402

from synthpriv.config import load_job  # noqa: E402
from synthpriv.evaluation.utility import evaluate_utility  # noqa: E402
from synthpriv.privacy.randomness import RandomSource  # noqa: E402
from synthpriv.runner import run_job  # noqa: E402
from synthpriv.schema import CategoricalColumn  # noqa: E402

KEYS = ("tvd_1", "tvd_2", "tvd_3", "tvd_1_categorical", "tvd_1_discovered")


def compare(before: Path, after: Path) -> None:
    """Paired differences (after − before, same seeds) of each figure, per table and recipe."""
    def read(path: Path) -> dict:
        records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        return {(r["table"], r["recipe"]): {run["seed"]: run for run in r["runs"]}
                for r in records}

    first, second = read(before), read(after)
    for key in sorted(set(first) & set(second)):
        seeds = sorted(set(first[key]) & set(second[key]))
        cells = []
        for figure in KEYS:
            pairs = [(first[key][s][figure], second[key][s][figure]) for s in seeds
                     if first[key][s].get(figure) is not None]
            if pairs:
                a, b = np.array(pairs).T
                cells.append(f"{figure} {a.mean():.4f} → {b.mean():.4f} "
                             f"(Δ {np.mean(b - a):+.4f} ± {np.std(b - a):.4f})")
        print(f"{key[0]} {key[1]} ({len(seeds)} seeds): " + "; ".join(cells))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    parser.add_argument("--draft", action="store_true",
                        help="run the data-read draft instead (the safe/draft ratio's divisor)")
    parser.add_argument("--table", default="wage", help=", ".join(TABLES))
    parser.add_argument("--recipe", default="mst")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--label", default="", help="a name for the tree measured (main, after)")
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks/results/discmeas.jsonl")
    args = parser.parse_args()
    if args.compare:
        compare(*args.compare)
        return
    work, draft, safe, scoring = both_drafts(args.table, args.cache, "discmeas-")
    real = read_scored(draft.train, scoring)
    config = job_config(draft if args.draft else safe, args.recipe, 1.0, len(real))
    config_path = work / "job.yaml"
    config_path.write_text(yaml.safe_dump(config))
    numeric = list(scoring.numeric_names)
    categorical = [c.name for c in scoring.modelled if c.name not in numeric]
    runs = []
    for seed in range(args.seeds):
        result = run_job(load_job(config_path), source=RandomSource.seeded(100 + seed),
                         evaluate=False, force=True)
        csv = work / f"release-{seed}.csv"
        result.synthetic.to_csv(csv, index=False)
        synthetic = read_scored(csv, scoring)
        marginals = evaluate_utility(real, synthetic, numeric_columns=numeric,
                                     quality_report=False)["marginals"]
        decided = [c.name for c in result.job.schema.modelled
                   if isinstance(c, CategoricalColumn) and c.categories is not None]
        one_way = {name: column_tvd(real[name], synthetic[name], name in numeric)
                   for name in categorical + [n for n in decided if n not in categorical]}
        discovered = [one_way[name] for name in decided]
        runs.append({"seed": 100 + seed, "tvd_1": marginals["1-way"]["mean"],
                     "tvd_2": marginals["2-way"]["mean"], "tvd_3": marginals["3-way"]["mean"],
                     "tvd_1_categorical": float(np.mean([one_way[n] for n in categorical]))
                     if categorical else None,
                     "tvd_1_discovered": float(np.mean(discovered)) if discovered else None,
                     "discovered": decided,
                     "columns": one_way,
                     "epsilon": result.ledger.epsilon(config["budget"]["delta"])})
        print(f"{args.label} {args.table} {args.recipe} seed {100 + seed}: "
              + ", ".join(f"{k} {runs[-1][k]:.4f}" for k in KEYS if runs[-1][k] is not None),
              flush=True)
    summary = {k: (float(np.mean([r[k] for r in runs])), float(np.std([r[k] for r in runs])))
               for k in KEYS if runs[0][k] is not None}
    record = {"label": args.label, "table": args.table, "recipe": args.recipe,
              "schema": "draft" if args.draft else "safe",
              "seeds": args.seeds, "summary": summary, "runs": runs}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with args.out.open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")
    print(f"{args.label} {args.table} {args.recipe}: " + ", ".join(
        f"{k} {m:.4f} ± {s:.4f}" for k, (m, s) in summary.items()), flush=True)


if __name__ == "__main__":
    main()
