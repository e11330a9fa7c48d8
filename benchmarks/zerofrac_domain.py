"""Branch zerofrac (issue 24): the domain step alone (kinds pass, DP bounds, heaps: the whole
``pipeline.resolve_domain`` of the safe draft, ε = 1, as ``kind_draws.safe_domain_step`` runs it)
on seeded runs of development tables, per auto column: the kind the released schema holds and
whether ``fraction_flip`` flipped it (decided integer, released continuous), with the column's
real type (``value_sweep.real_type``: ``integer`` cells are whole, ``number`` cells hold
fractions); and per run the SHA-256 of the resolved schema (byte-identity of the guard
tables' domains before/after: the rule draws nothing, so an unflipped run's release is the same).
Runs whatever synthpriv is first on PYTHONPATH. Reads the real table: a measurement.

    PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/zerofrac_domain.py adult,islp/OJ 4 \\
        --json out.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from pathlib import Path

import pandas as pd

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))
from kind_draws import safe_domain_step  # noqa: E402
from value_sweep import real_type  # noqa: E402


def runs(table: str, seeds: int, work: Path) -> dict:
    """Per seed, the resolved schema's hash and kinds; per auto column, its real type."""
    job, stage, _, chunks = safe_domain_step(table, work, "zerofrac")
    config = work / table.replace("/", "_") / "job-zerofrac.yaml"
    real = {n: real_type(pd.concat([c[n] for c in chunks]).fillna("").astype(str))
            for n in stage.kinds}
    out = {"table": table, "real": real, "runs": []}
    for seed in range(seeds):
        job = load_job(config)
        resolved, _ = resolve_domain(job, plan_job(job), Ledger(job.config.budget.neighbouring),
                                     RandomSource.seeded(seed), [c.copy() for c in chunks])
        dump = resolved.schema.model_dump(mode="json")
        out["runs"].append({
            "seed": seed,
            "sha256": hashlib.sha256(json.dumps(dump, sort_keys=True).encode()).hexdigest(),
            "kinds": {c["name"]: c["kind"] for c in dump["columns"] if c["name"] in real},
            "precision": {c["name"]: c.get("precision") for c in dump["columns"]
                          if c["name"] in real and c["kind"] == "continuous"},
            "bounds": {c["name"]: [c.get("lower"), c.get("upper")] for c in dump["columns"]
                       if c["name"] in real and c["kind"] in ("integer", "continuous")}})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("tables", help="comma-separated suite or development tables")
    parser.add_argument("seeds", type=int)
    parser.add_argument("--work", type=Path, default=Path("/tmp/zerofrac-domain-work"))
    parser.add_argument("--json", type=Path, required=True)
    args = parser.parse_args()
    results = []
    for table in args.tables.split(","):
        results.append(runs(table, args.seeds, args.work))
        print(table, [r["sha256"][:8] for r in results[-1]["runs"]], flush=True)
        args.json.write_text(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
