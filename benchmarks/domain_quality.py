"""Safe draft against the data-read draft on a development-suite table of ≥ 1,000 rows (issue 24's
target: the safe draft within 1.25× of the data-read draft's 2-way TVD), before and after the
domain-step change of branch ``bounds``.

Wage (ISLP), the suite's seeded 80/20 split (2,400 train rows), MST and AIM at ε = 1, δ = 1e-5:
four schemas/code versions — the data-read draft (``schema infer``, not private) with this
code, and the safe draft (``schema infer --safe``: every column auto, kinds, bounds and categories
under DP) with this code, with this code and the row count public (``data.public_records``), and
with the code of commit a007373 (before the change; extracted with
``git archive`` into a temporary folder). Each release is read back with the data-read draft
(unknown categories as missing) and scored against the train split with the suite's figures
(synthpriv.evaluation.utility: mean TVD of 1/2/3-way marginals, numeric columns in 16 quantile
bins of the real table).

    .venv/bin/python benchmarks/domain_quality.py --seeds 2 --recipes mst,aim \
        --versions "draft;safe, this;safe, a007"
    .venv/bin/python benchmarks/domain_quality.py --seeds 2 --recipes mst --versions "safe + public"
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import pandas as pd
import yaml
from suite import TABLES, figures, holdout_schema, prepare

from synthpriv.privacy.domain_budget import domain_share
from synthpriv.schema import parse_schema
from synthpriv.schema_infer import infer_schema, schema_yaml
from synthpriv.table import read_table

ROOT = Path(__file__).resolve().parent.parent
OLD_COMMIT = "a007373"
RUN = """
import sys
from pathlib import Path
from synthpriv.config import load_job
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
result = run_job(load_job(Path(sys.argv[1])), source=RandomSource.seeded(int(sys.argv[2])),
                 evaluate=False, force=True)
result.synthetic.to_csv(sys.argv[3], index=False)
"""


def old_code(folder: Path) -> Path:
    """The package, recipes and data of commit OLD_COMMIT, extracted under ``folder``."""
    archive = subprocess.run(["git", "archive", OLD_COMMIT, "synthpriv", "pipelines"], cwd=ROOT,
                             check=True, capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
    return folder


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seeds", type=int, default=2)
    parser.add_argument("--recipes", default="mst,aim")
    parser.add_argument("--versions", default="", help="';'-separated name prefixes (all: '')")
    parser.add_argument("--rows", type=int, default=None,
                        help="a seeded sample of this many train rows (default: all 2,400)")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="domain-quality-"))
    prepared = prepare(TABLES["wage"], work, ROOT / "benchmarks" / ".cache", "draft")
    if args.rows is not None:
        frame = pd.read_csv(prepared.train, dtype=str, keep_default_na=False)
        frame.sample(args.rows, random_state=24).sort_index().to_csv(prepared.train, index=False)
    safe, _ = infer_schema(prepared.train, safe=True)
    (work / "safe.yaml").write_text(schema_yaml(safe))
    versions = {"draft, this code": (ROOT, prepared.schema_path),
                "safe, this code": (ROOT, work / "safe.yaml"),
                "safe + public n, this code": (ROOT, work / "safe.yaml"),
                "safe + public n at the default share": (ROOT, work / "safe.yaml"),
                f"safe, {OLD_COMMIT}": (old_code(Path(tempfile.mkdtemp())), work / "safe.yaml")}
    versions = {k: v for k, v in versions.items() if not args.versions
                or any(k.startswith(w) for w in args.versions.split(";"))}
    raw = holdout_schema(prepared.schema_path).model_dump(exclude_none=True)
    for column in raw["columns"]:  # a safe release may leave any cell missing (coerce, dropped)
        column["missing"] = True
    loose = parse_schema(raw, "the data-read draft, every column missing: true (scoring only)")
    real, test = read_table(prepared.train, loose), read_table(prepared.test, loose)
    report: dict = {}
    for recipe in args.recipes.split(","):
        for name, (code, schema) in versions.items():
            scores = []
            for seed in range(1, args.seeds + 1):
                config = {"name": "quality", "data": {"path": str(prepared.train),
                                                      "schema": str(schema)},
                          "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": recipe},
                          "evaluation": {"enabled": False},
                          "output": {"dir": str(work / "out" / recipe / name / str(seed))}}
                if "public n" in name:
                    config["data"]["public_records"] = len(real)
                if "default share" in name:  # the share without n̂ (11 auto columns of 11)
                    config["budget"]["domain_share"] = domain_share(11, 11, 11)
                path = work / f"job-{recipe}-{seed}-{len(report)}.yaml"
                path.write_text(yaml.safe_dump(config))
                csv = work / f"synthetic-{recipe}-{seed}-{abs(hash(name))}.csv"
                done = subprocess.run([sys.executable, "-c", RUN, str(path), str(seed), str(csv)],
                                      cwd=code, env={"PYTHONPATH": str(code), "PATH": "/usr/bin"},
                                      capture_output=True, text=True)
                if done.returncode != 0:
                    scores.append({"error": done.stderr.strip().splitlines()[-1]})
                    continue
                synthetic = read_table(csv, loose)
                scores.append(figures(real, synthetic, test, loose, TABLES["wage"].target))
            ok = [s for s in scores if "error" not in s]
            report[f"{recipe} | {name}"] = {
                "runs": scores,
                **{key: statistics.mean(s[key] for s in ok) for key in ("tvd_1", "tvd_2", "tvd_3",
                                                                        "tstr_auc") if ok}}
            print(json.dumps({f"{recipe} | {name}": report[f"{recipe} | {name}"]}), flush=True)
    floor = figures(real, test, real, loose, TABLES["wage"].target)
    report["floor (test split as the release)"] = {k: floor[k] for k in ("tvd_1", "tvd_2", "tvd_3")}
    tag = args.recipes.replace(",", "-") + (f"-{args.rows}rows" if args.rows else "")
    tag = tag + ("-" + args.versions.replace(";", "-").replace(" ", "")
                                            if args.versions else "")
    out = ROOT / "benchmarks" / "results" / f"domain-quality-wage-{tag}.json"
    out.write_text(json.dumps(report, indent=1))
    print(json.dumps(report["floor (test split as the release)"]))


if __name__ == "__main__":
    main()
