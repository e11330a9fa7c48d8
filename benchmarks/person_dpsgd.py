"""Person-level vs row-level DP-SGD (issue 27) on a synthetic panel, at the same (ε, δ).

The panel (made up here, public): persons with 1 + Poisson(2) rows (at most 8), two person-level
columns (group, sex) and three row-level ones (visit, severity, outcome) that depend on them and
on a per-person propensity. Each person keeps at most k rows (a random choice, as the data path
does) and every mode trains on that same bounded table:

* ``row``: today's row-level DP-SGD (q over rows; a person with k rows is protected at ≈ k·ε only);
* ``person``: q over persons, each person's summed gradient clipped to C;
* ``rows``: q over persons, each row clipped to C/k (multiplier z·k).

The generator stage runs alone (no guidance), planned at ε with δ = 1e-6 by the planner's own
calibration (one SubsampledGaussianEvent, the same z for every mode: q and steps are equal), the
record count public. Reported: mean 1-way and 2-way TVD of 2n synthetic rows to the bounded table,
mean ± standard deviation over seeds. Nothing here was tuned: the generator's defaults throughout.

    .venv/bin/python benchmarks/person_dpsgd.py --ks 2 4 --seeds 5
"""

from __future__ import annotations

import argparse
import logging
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

from synthpriv.encoding import TableEncoder
from synthpriv.evaluation.utility import marginal_tvd
from synthpriv.generators.stage import GeneratorStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.calibration import calibrate_scale
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import load_schema
from synthpriv.stage import PipelineState, PlanContext

SIZES = {"group": 4, "sex": 2, "visit": 5, "severity": 3, "outcome": 2}
DELTA = 1e-6


def panel(persons: int, seed: int) -> pd.DataFrame:
    """The synthetic panel: one line per row, ``person`` its person."""
    rng = np.random.default_rng(seed)
    rows = np.minimum(1 + rng.poisson(2.0, persons), 8)
    person = np.repeat(np.arange(persons), rows)
    group = rng.integers(0, 4, persons)[person]
    sex = rng.integers(0, 2, persons)[person]
    propensity = rng.normal(0.0, 1.0, persons)[person]  # ties a person's rows together
    visit = np.clip(np.round(group + propensity + rng.normal(0, 0.7, len(person))), 0, 4)
    severity = np.clip(np.round(0.5 * visit + 0.6 * sex + rng.normal(0, 0.6, len(person))), 0, 2)
    outcome = (rng.random(len(person)) < 0.15 + 0.3 * severity / 2 + 0.1 * (group == 3))
    frame = pd.DataFrame({"group": group, "sex": sex, "visit": visit.astype(int),
                          "severity": severity.astype(int), "outcome": outcome.astype(int)})
    frame = frame.apply(lambda c: c.name[0] + c.astype(str))
    frame.insert(0, "person", person)
    return frame


def bound(frame: pd.DataFrame, k: int, rng: np.random.Generator) -> pd.DataFrame:
    """At most k rows per person, chosen at random (never the first k)."""
    priority = rng.random(len(frame))
    rank = pd.Series(priority).groupby(frame["person"].to_numpy()).rank(method="first")
    return frame[rank.to_numpy() <= k].reset_index(drop=True)


def encoder_for(folder: Path) -> TableEncoder:
    columns = [{"name": name, "kind": "categorical",
                "categories": [name[0] + str(i) for i in range(size)]}
               for name, size in SIZES.items()]
    path = folder / "schema.yaml"
    path.write_text(yaml.safe_dump({"columns": columns}))
    return TableEncoder(load_schema(path))


def run(frame: pd.DataFrame, k: int, mode: str, encoder: TableEncoder, seed: int,
        epsilon: float) -> tuple[float, float, float]:
    """(1-way TVD, 2-way TVD, z) of one release of the generator alone at (ε, δ)."""
    data = encoder.encode(frame[list(SIZES)])
    person_level = mode != "row"
    context = PlanContext(encoder.domain, "add_remove", DELTA, public_records=len(frame),
                          rows_per_person=k if person_level else None)
    options = {"guide": False, "person_clipping": mode if person_level else "person"}
    stage = GeneratorStage(options, context, "benchmark")
    plan = stage.plan(calibrate_scale(lambda t: stage.plan(t).events, epsilon, DELTA,
                                      "add_remove"))
    codes = frame["person"].to_numpy() if person_level else None
    state = PipelineState(context, encoder, data, person_codes=codes)
    stage.run(state, plan, Ledger(), RandomSource.seeded(seed))
    synthetic = state.model.sample(2 * len(frame), np.random.default_rng(seed))
    sizes = list(SIZES.values())
    one = marginal_tvd(data.codes, synthetic, 1, sizes=sizes)["mean"]
    two = marginal_tvd(data.codes, synthetic, 2, sizes=sizes)["mean"]
    return one, two, plan.noise["noise_multiplier"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--persons", type=int, default=3000)
    parser.add_argument("--ks", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--epsilon", type=float, default=1.0)
    args = parser.parse_args()
    logging.disable(logging.WARNING)  # dp-accounting's RDP orders that do not converge
    full = panel(args.persons, seed=0)
    print(f"panel: {args.persons} persons, {len(full)} rows; ε = {args.epsilon}, δ = {DELTA}")
    print("| k | rows kept | mode | 1-way TVD | 2-way TVD | z | seconds/run |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        encoder = encoder_for(Path(folder))
        for k in args.ks:
            frame = bound(full, k, np.random.default_rng(k))
            for mode in ("row", "person", "rows"):
                started, results = time.perf_counter(), []
                for seed in range(args.seeds):
                    results.append(run(frame, k, mode, encoder, seed, args.epsilon))
                (one, two, z), (one_sd, two_sd, _) = (np.mean(results, axis=0),
                                                      np.std(results, axis=0, ddof=1))
                spent = (time.perf_counter() - started) / args.seeds
                print(f"| {k} | {len(frame)} | {mode} | {one:.4f} ± {one_sd:.4f} | "
                      f"{two:.4f} ± {two_sd:.4f} | {z:.2f} | {spent:.0f} |", flush=True)


if __name__ == "__main__":
    main()
