"""Metadata test: fit the whole pipeline on neighbours D and D' that differ by one extreme row far
outside the public bounds, with the same seed. Every field of the release that is not the output
of a mechanism (the manifest without timestamps and noisy outputs; the domain and bins; the plan;
the CSV's header and column types) must be identical: nothing computed from the raw table reaches
the release except through a mechanism."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.encoding import TableEncoder
from synthpriv.runner import run_job

from .conftest import job_config

EXTREME = "1000000,Nice,-1e300\n"  # age and income far beyond [0, 100] and [0, 1000]
# Outputs of mechanisms (noisy counts and what is post-processed from them) and the clock:
MECHANISM_OUTPUTS = {("created_utc",), ("records", "released"), ("files",)}


def table(rows: int, seed: int) -> str:
    rng = np.random.default_rng(seed)
    ages = rng.integers(18, 90, rows)
    cities = rng.choice(["Paris", "Lyon", "Nice"], rows)
    incomes = np.where(rng.random(rows) < 0.1, np.nan, rng.uniform(0, 1000, rows).round(2))
    lines = [f"{a},{c},{'' if np.isnan(i) else i}" for a, c, i in zip(ages, cities, incomes,
                                                                        strict=True)]
    return "age,city,income\n" + "\n".join(lines) + "\n"


def without(manifest: dict, paths: set[tuple[str, ...]]) -> dict:
    pruned = copy.deepcopy(manifest)
    for path in paths:
        node = pruned
        for key in path[:-1]:
            node = node[key]
        del node[path[-1]]
    return pruned


FAST_AIM = {"aim_rounds_per_attribute": 2, "aim_round_iterations": 5, "iterations": 20}
FAST_GENERATOR = {"epochs": 2, "sample_rate": 0.2, "hidden": 8}
STAGE_OPTIONS = {
    "aim": {"marginals": FAST_AIM},
    "dpsgd": {"generator": FAST_GENERATOR},
    "hybrid": {"marginals": FAST_AIM, "generator": FAST_GENERATOR},
}
HOLD_BACK = {"enabled": True, "holdout_fraction": 0.25}


@pytest.mark.parametrize(
    ("recipe", "public_records", "hold_back"),
    [("independent", None, False), ("mst", None, False), ("mst", 150, False),
     ("aim", None, False), ("dpsgd", None, False), ("hybrid", None, False),
     ("independent", None, True), ("aim", None, True), ("hybrid", 150, True)],
)
def test_neighbours_with_one_extreme_row_release_identical_metadata(
    tmp_path: Path, recipe: str, public_records: int | None, hold_back: bool
) -> None:
    """Every recipe, with and without the evaluation hold-back (privacy review, issue 12)."""
    data = tmp_path / "data.csv"
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump(job_config(
        data, tmp_path / "unused", seed=7,
        pipeline={"recipe": recipe, "stages": STAGE_OPTIONS.get(recipe, {})},
        data={"public_records": public_records},
        evaluation=HOLD_BACK if hold_back else {"enabled": False},
    )))
    base = table(150, seed=1)
    releases = []
    for name, content in (("D", base), ("D_prime", base + EXTREME)):
        data.write_text(content)  # same path, same config: only the table differs
        job = load_job(config)
        result = run_job(job, out=tmp_path / name)
        releases.append((job, result, tmp_path / name))

    (job_d, result_d, out_d), (job_p, result_p, out_p) = releases
    manifest_d = json.loads((out_d / "manifest.json").read_text())
    manifest_p = json.loads((out_p / "manifest.json").read_text())
    # an adaptive stage's realised events are choices made from noisy outputs (mechanism
    # outputs); the ledger's figures are fixed by the plan for every recipe
    adaptive = {("ledger", "adaptive")}
    assert (without(manifest_d, MECHANISM_OUTPUTS | adaptive)
            == without(manifest_p, MECHANISM_OUTPUTS | adaptive))
    for filter_d, filter_p in zip(manifest_d["ledger"]["adaptive"],
                                  manifest_p["ledger"]["adaptive"], strict=True):
        assert filter_d["reserved_rho"] == filter_p["reserved_rho"]
    assert result_d.plan.to_dict() == result_p.plan.to_dict()
    assert TableEncoder(job_d.schema).domain == TableEncoder(job_p.schema).domain
    synthetic_d = pd.read_csv(out_d / "synthetic.csv")
    synthetic_p = pd.read_csv(out_p / "synthetic.csv")
    assert list(synthetic_d.columns) == list(synthetic_p.columns)
    assert dict(synthetic_d.dtypes) == dict(synthetic_p.dtypes)
    # released values stay inside the public bounds, whatever the extreme row held
    for synthetic in (synthetic_d, synthetic_p):
        assert synthetic["age"].between(0, 100).all()
        assert synthetic["income"].dropna().between(0, 1000).all()
    if public_records is not None:
        assert manifest_d["records"] == manifest_p["records"]
        assert len(synthetic_d) == len(synthetic_p) == public_records
