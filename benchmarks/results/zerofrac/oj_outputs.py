"""Branch zerofrac: every noisy output the domain step draws for OJ's four discount columns, on
seeds 0-5 of the safe draft (the seeds ``value_sweep.py --seed`` uses): the kinds pass's class
histogram and decision, each DP bounds reading (its grid, hence MIN_EXPONENT, its σ, the cells'
DP count it was given, the reading, the zero bucket and the buckets ≥ 2.5σ by offset from the
zero bucket), heap discovery's kept values, and the released domain. Reads the real table.

    PYTHONPATH=<tree> /work/main/.venv/bin/python benchmarks/results/zerofrac/oj_outputs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

import synthpriv.domain_stage as ds
from synthpriv.config import load_job
from synthpriv.kinds import CLASSES, fraction_noise
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from kind_draws import safe_domain_step  # noqa: E402

TABLE, WATCHED = "islp/OJ", ("DiscCH", "DiscMM", "PctDiscMM", "PctDiscCH")


def main() -> None:
    work = Path("/tmp/zerofrac-diag")
    _, stage, _, chunks = safe_domain_step(TABLE, work, "diag")
    config = work / TABLE.replace("/", "_") / "job-diag.yaml"
    log: list[tuple] = []
    decide, read, heaps = ds.decide, ds.read_bounds, ds.heap_selection

    def decided(noisy, sigma, *args, **kwargs):  # noqa: ANN001, ANN202
        kind = decide(noisy, sigma, *args, **kwargs)
        log.append(("kind", np.asarray(noisy).copy(), sigma, kind))
        return kind

    def reading(noisy, sigma, grid, columns=1, present=None):  # noqa: ANN001, ANN202
        found = read(noisy, sigma, grid, columns, present)
        log.append(("bounds", np.asarray(noisy).copy(), sigma, grid, found, present, columns))
        return found

    def kept(counter, named, sigma, threshold, source):  # noqa: ANN001, ANN202
        found = heaps(counter, named, sigma, threshold, source)
        log.append(("heaps", sigma, threshold, found))
        return found

    ds.decide, ds.read_bounds, ds.heap_selection = decided, reading, kept
    try:
        for seed in range(6):
            log.clear()
            job = load_job(config)
            planned = plan_job(job)
            step = planned[1][0][0]
            resolved, _ = resolve_domain(job, planned, Ledger(job.config.budget.neighbouring),
                                         RandomSource.seeded(seed), [c.copy() for c in chunks])
            kinds = [e for e in log if e[0] == "kind"]
            print(f"## seed {seed}: n̂ {step.records_estimate:.0f} small {step.small_taken} "
                  f"kind σ {kinds[0][2]:.1f} z {fraction_noise(len(stage.kinds)):.2f}")
            for name, entry in zip(stage.kinds, kinds, strict=True):
                if name not in WATCHED:
                    continue
                classes = {c: int(v) for c, v in zip(CLASSES, entry[1], strict=True)
                           if c == "whole" or "decimal" in c}
                column = resolved.schema.column(name)
                print(f"  {name}: kind {entry[3]}  classes(σ={entry[2]:.1f}) {classes}")
                print(f"     released: {column.kind} lower {getattr(column, 'lower', None)} "
                      f"upper {getattr(column, 'upper', None)} "
                      f"pm {getattr(column, 'point_masses', None)} "
                      f"prec {getattr(column, 'precision', None)}")
            print("   bounds readings (in bucket order):")
            for entry in (e for e in log if e[0] == "bounds"):
                noisy, sigma, grid, found, present, columns = entry[1:]
                mid = grid.zero
                shown = {b - mid: int(noisy[b]) for b in range(max(0, mid - 3),
                                                               min(len(noisy), mid + 20))
                         if abs(noisy[b]) >= 2.5 * sigma}
                cells = None if present is None else (round(present.count), round(present.sigma, 1))
                result = None if found is None else (found.lower, found.upper, found.zeros_only)
                print(f"     grid {grid.kind} (MIN_EXP {grid.low}) σ {sigma:.1f} cols {columns} "
                      f"present {cells} -> {result}  zero-bucket {int(noisy[mid])}  "
                      f"≥2.5σ (offset from zero) {shown}")
            for entry in (e for e in log if e[0] == "heaps"):
                print(f"     heaps σ {entry[1]:.1f} thr {entry[2]} kept "
                      f"{sorted(entry[3][0].items())[:6]}")
    finally:
        ds.decide, ds.read_bounds, ds.heap_selection = decide, read, heaps


if __name__ == "__main__":
    main()
