"""Small tables' value-level errors (issue 24; branch smallks): a development-suite table's safe
draft (``schema infer``: every column auto) run with one or more code trees at ε = 1 and the
suite's job (``suite.job_config``: δ = min(1e-5, 0.1/n)), each release scored as the suite scores
it (``suite.score``: mean KS, worst point mass, 2-way TVD, per-column distance) and kept, so the
columns that carry the KS can be read as a user would (``--explain``: per numeric column the
real and released quantiles, top values and their shares, share outside the real range).

    .venv/bin/python benchmarks/smallks.py --trees OLD,NEW --table college --recipes mst,aim \
        --seeds 0,1,2 --output benchmarks/results/smallks-college.json [--explain]

Each run is ``synthpriv run`` in a subprocess with the tree on PYTHONPATH. Development-suite
tables only: nothing here is a held-out table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from suite import TABLES, job_config, prepare, read_scored, score  # noqa: E402

from synthpriv.schema import load_schema  # noqa: E402

QUANTILES = (0.05, 0.25, 0.5, 0.75, 0.95)
WIDE_QUANTILES = (0.01, 0.05, 0.25, 0.5, 0.75, 0.95, 0.99)


def resolved(csv: Path) -> dict[str, dict]:
    """The release's resolved schema entries by name (manifest.json next to the CSV): the DP
    bounds, grid shape and bucket counts the domain step bought."""
    manifest = json.loads((csv.parent / "manifest.json").read_text())
    return {c["name"]: c for c in manifest["schema"]["columns"]}


def ks(a: np.ndarray, b: np.ndarray) -> float:
    """Two-sample KS distance of two non-empty samples."""
    grid = np.union1d(a, b)
    cdf = [np.searchsorted(np.sort(x), grid, side="right") / len(x) for x in (a, b)]
    return float(np.abs(cdf[0] - cdf[1]).max())


def bounds_parts(name: str, real: pd.Series, fake: pd.Series, entry: dict) -> str:
    """What the DP bounds cost a column and what is left: share of real rows clipped below /
    above, KS of the real column against itself clipped to the bounds (the clipping's floor),
    KS of the release against the clipped real column (what the marginals and the grid lose
    given the bounds), wide quantiles, and the octave counts the domain step bought."""
    r, f = real.dropna().to_numpy(), fake.dropna().to_numpy()
    if not len(f) or entry.get("lower") is None:
        return f"      bounds: none ({entry.get('kind')})"
    low, high = float(entry["lower"]), float(entry["upper"])
    clipped = np.clip(r, low, high)
    buckets = " ".join(f"[{b['lower']:g},{b['upper']:g}]:{b['count']:g}"
                       for b in entry.get("bucket_counts") or ())
    return (f"      bounds [{low:g}, {high:g}] clip below {np.mean(r < low):.1%} above "
            f"{np.mean(r > high):.1%}; KS clip floor {ks(r, clipped):.3f}, release vs clipped "
            f"{ks(clipped, f):.3f}\n"
            f"      q1..99 real {np.quantile(r, WIDE_QUANTILES).round(0).tolist()} "
            f"fake {np.quantile(f, WIDE_QUANTILES).round(0).tolist()}\n"
            f"      shape {entry.get('grid_shape')}; buckets {buckets}")


def release(tree: Path, job: dict, work: Path, seed: int) -> Path:
    """One seeded run of ``job`` with the code at ``tree``; the release's CSV."""
    (work / "job.yaml").write_text(yaml.safe_dump({**job, "seed": seed}))
    subprocess.run([sys.executable, "-m", "synthpriv.cli", "run", str(work / "job.yaml"),
                    "--no-evaluation", "--out", str(work / "out"), "--force"],
                   env={**os.environ, "PYTHONPATH": str(tree)}, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, cwd=work)
    return work / "out" / "synthetic.csv"


def explain(name: str, real: pd.Series, fake: pd.Series) -> str:
    """One column as a user reads it: quantiles, top values' shares, missing, outside range."""
    r, f = real.dropna(), fake.dropna()

    def tops(values: pd.Series) -> str:
        shares = values.value_counts(normalize=True).head(4)
        return ", ".join(f"{v:g}:{s:.0%}" for v, s in shares.items())

    if f.empty:
        return f"  {name}: released all missing"
    outside = float(((f < r.min()) | (f > r.max())).mean())
    return (f"  {name}: q real {np.quantile(r, QUANTILES).round(1).tolist()} "
            f"fake {np.quantile(f, QUANTILES).round(1).tolist()}\n"
            f"      top real [{tops(r)}] fake [{tops(f)}]; missing {real.isna().mean():.0%} → "
            f"{fake.isna().mean():.0%}; fake outside real range {outside:.1%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trees", required=True, help="comma-separated code trees")
    for flag, default in (("--table", "college"), ("--recipes", "mst,aim"), ("--seeds", "0,1,2")):
        parser.add_argument(flag, default=default)
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--cache", type=Path, default=ROOT / "benchmarks/.cache")
    parser.add_argument("--keep", type=Path, help="folder for the releases (default: a temp dir)")
    parser.add_argument("--output", type=Path)
    parser.add_argument("--explain", action="store_true", help="each column as a user reads it")
    parser.add_argument("--bounds", action="store_true",
                        help="with --explain: each column's DP bounds, clipped share, the KS "
                             "the clipping costs and the KS left given the bounds")
    parser.add_argument("--stages", type=json.loads, default={},
                        help='stage option overrides, e.g. \'{"marginals": {"max_bins": 8}}\' '
                             "(pipeline.stages: an experiment, not the default)")
    parser.add_argument("--label", default="", help="suffix of the release folders")
    parser.add_argument("--reuse", action="store_true",
                        help="score a release already in --keep instead of running it again")
    args = parser.parse_args()
    work = args.keep or Path(tempfile.mkdtemp(prefix="smallks-"))
    work.mkdir(parents=True, exist_ok=True)
    table = TABLES[args.table]
    draft, safe = prepare(table, work, args.cache, "draft"), prepare(table, work, args.cache, "safe")
    scoring = load_schema(draft.schema_path)
    real = read_scored(draft.train, scoring)
    numeric = [n for n in scoring.numeric_names if n != table.target]
    job = job_config(safe, "mst", args.epsilon, len(real))
    job["data"].pop("holdout")
    records = []
    for recipe in args.recipes.split(","):
        for tree in args.trees.split(","):
            for seed in (int(s) for s in args.seeds.split(",")):
                folder = work / f"{recipe}-{Path(tree).name}{args.label}-{seed}"
                folder.mkdir(exist_ok=True)
                csv = folder / "out" / "synthetic.csv"
                if not (args.reuse and csv.exists()):
                    pipeline = {"recipe": recipe, **({"stages": args.stages} if args.stages else {})}
                    csv = release(Path(tree).resolve(), {**job, "pipeline": pipeline}, folder, seed)
                scores = score(draft.train, csv, draft.test, scoring, table.target)
                record = {"table": args.table, "recipe": recipe, "tree": tree, "seed": seed,
                          "release": str(csv),
                          **{k: scores[k] for k in ("tvd_2", "mean_ks", "worst_mass",
                                                     "worst_mass_at", "distance_by_column")}}
                records.append(record)
                print(json.dumps({k: v for k, v in record.items() if k != "distance_by_column"}),
                      flush=True)
                if args.explain:
                    fake = read_scored(csv, scoring)
                    distance = record["distance_by_column"]
                    entries = resolved(csv)
                    for name in sorted(numeric, key=lambda n: -(distance.get(n) or 0)):
                        print(f"  KS {distance.get(name)}", explain(name, real[name], fake[name]))
                        if args.bounds:
                            print(bounds_parts(name, real[name], fake[name], entries[name]))
    if args.output:
        args.output.write_text(json.dumps(records, indent=1))
    print("| recipe | tree | mean KS | worst point mass | 2-way TVD |")
    print("|---|---|---|---|---|")
    for recipe in args.recipes.split(","):
        for tree in args.trees.split(","):
            rows = [r for r in records if r["recipe"] == recipe and r["tree"] == tree]
            cells = [f"{statistics.mean(v):.3f} ± {statistics.pstdev(v):.3f}" if v else "–"
                     for v in ([r[k] for r in rows if r[k] is not None]  # None: no value ≥ 5 %
                               for k in ("mean_ks", "worst_mass", "tvd_2"))]
            print(f"| {recipe} | {Path(tree).name} | {' | '.join(cells)} |")


if __name__ == "__main__":
    main()
