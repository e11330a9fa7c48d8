"""The small-table rule without a public row count (privacy.domain_budget, "The small-table rule
without a public row count"; branch dpn, issue 24): both branches planned before any data is
read, at the same total ρ; the run takes the small-table branch when the DP n̂ (the kinds pass's
noisy class counts) is at most the plan's public threshold. Checked by behaviour: the plan's
figures, the branch against the noisy counts (not the table's size), and the ledgers."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.plan_warnings import domain_messages
from synthpriv.privacy.accountant import Ledger, ThresholdEvent, zcdp_rho
from synthpriv.privacy.domain_budget import (
    RECORDS_CLEAR,
    SMALL_TABLE_NEED,
    SMALL_TABLE_SHARE,
    records_estimate,
    thresholds_delta,
)
from synthpriv.privacy.randomness import RandomSource

COLUMNS = [f"x{i}" for i in range(8)] + ["word"]


def _table(rows: int, seed: int = 0) -> pd.DataFrame:
    """Eight wide integer columns (decided numeric: DP bounds) and one of three words (decided
    categorical: its discovery takes the reallocated threshold, δ split as its branch plans)."""
    rng = np.random.default_rng(seed)
    table = {name: rng.integers(1, 4000, rows) for name in COLUMNS[:-1]}
    return pd.DataFrame(table | {"word": rng.choice(["red", "green", "blue"], rows)})


def _job(folder: Path, rows: int, recipe: str = "aim") -> Path:
    """A safe-draft-like job: every column ``kind: auto`` (the domain step reads the kinds, then
    buys bounds), no public row count, ε = 1."""
    folder.mkdir(parents=True, exist_ok=True)
    _table(rows).to_csv(folder / "train.csv", index=False)
    schema = {"columns": [{"name": name, "kind": "auto"} for name in COLUMNS]}
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "dpn", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": recipe},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")},
              "seed": 5}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def test_the_dp_row_count_reads_the_cleared_classes_median() -> None:
    sigma = 10.0
    noise_only = RECORDS_CLEAR * sigma  # not above the bar: not counted
    columns = [np.array([300.0, noise_only, -20.0]), np.array([250.0, 40.0, 5.0]),
               np.array([500.0, 0.0, 0.0])]
    assert records_estimate(columns, sigma) == pytest.approx(300.0)  # 300, 290, 500
    with pytest.raises(ValueError):
        records_estimate([], sigma)


def test_the_plan_states_both_branches_at_the_same_total_rho(tmp_path: Path) -> None:
    """Planned from the config alone: the default plan's domain row names n̂'s threshold (its
    one-octave bounds count over SMALL_TABLE_NEED), the small branch's share and σ; the small
    branch has the same total ρ and ε, its kinds pass at the default's noise."""
    job = load_job(_job(tmp_path / "a", 100))
    plan, stages = plan_job(job)
    domain, small = plan.stages[0], stages[0][0].small
    assert small is not None and domain.share < SMALL_TABLE_SHARE
    assert domain.noise["small_table_below"] == pytest.approx(
        small.below) and small.below > 100
    assert domain.noise["small_table_share"] == SMALL_TABLE_SHARE
    assert domain.noise["small_table_sigma"] == small.plan.stages[0].noise["sigma"] < \
        domain.noise["sigma"]
    assert sum(s.rho for s in small.plan.stages) == pytest.approx(
        sum(s.rho for s in plan.stages), rel=1e-12)
    assert small.plan.stages[0].rho == pytest.approx(
        SMALL_TABLE_SHARE * sum(s.rho for s in plan.stages), rel=1e-12)
    assert small.plan.epsilon == pytest.approx(plan.epsilon, rel=1e-9) and plan.epsilon <= 1.0
    kinds = [e for e in domain.events if e.label.startswith("DP kinds")]
    small_kinds = [e for e in small.plan.stages[0].events if e.label.startswith("DP kinds")]
    assert kinds and [(e.label, e.count) for e in kinds] == [
        (e.label, e.count) for e in small_kinds]
    assert [e.noise_multiplier for e in small_kinds] == pytest.approx(
        [e.noise_multiplier for e in kinds], rel=1e-12)
    notes = [t for _, t in domain_messages(job, plan) if "small-table rule" in t]
    assert len(notes) == 1 and f"if n̂ ≤ {small.below:,.0f}" in notes[0]
    # the same plan whatever the file holds: planning reads no data
    again, _ = plan_job(load_job(_job(tmp_path / "b", 20_000)))
    assert again.stages == plan.stages


def test_a_recipe_priced_by_pld_keeps_the_default_share(tmp_path: Path) -> None:
    """The PLD bound of an adaptively chosen branch is not proven: no branch there."""
    plan, stages = plan_job(load_job(_job(tmp_path, 100, recipe="independent")))
    assert stages[0][0].small is None and "small_table_below" not in plan.stages[0].noise


def _resolved(tmp_path: Path, rows: int, seed: int, planned=None):
    """The domain step resolved on ``_table(rows)`` at ``seed`` (``planned``: the job's plan,
    reused across seeds as a job's reruns reuse it): the plan, and the branch's plan, stages and
    ledger."""
    job = load_job(_job(tmp_path, rows))
    planned = plan_job(job) if planned is None else planned
    ledger = Ledger(job.config.budget.neighbouring)
    _, (plan, stages) = resolve_domain(job, planned, ledger, RandomSource.seeded(seed),
                                       [_table(rows)])
    return planned, plan, stages, ledger


def test_the_branch_follows_the_dp_row_count_not_the_table(tmp_path: Path) -> None:
    """A table of about the threshold's rows: the noisy n̂ falls on either side of it, so the
    branch varies over seeds with the table fixed, and each run took the branch its stated n̂
    (a DP output, not the row count) calls for."""
    (default, _), *_ = _resolved(tmp_path / "probe", 100, 0)
    rows = int(default.stages[0].noise["small_table_below"]) + 10
    taken, estimates, planned = [], [], None
    for seed in range(10):  # one plan, rerun: a rerun after the small branch starts afresh
        planned, plan, stages, _ = _resolved(tmp_path / "s", rows, seed, planned)
        noise = plan.stages[0].noise
        taken.append(noise["small_table_taken"] == 1.0)
        estimates.append(noise["dp_records"])
        assert taken[-1] == (noise["dp_records"] <= noise["small_table_below"])
        assert stages[0][1] == pytest.approx(SMALL_TABLE_SHARE if taken[-1] else
                                             default.stages[0].share)
    assert 0 < sum(taken) < len(taken), (taken, estimates)
    assert len(set(estimates)) > 1 and rows not in estimates


@pytest.mark.parametrize("rows", [150, 20_000])
def test_either_branchs_ledger_holds_the_plan_and_reports_rdp(tmp_path: Path, rows: int) -> None:
    """Small table → small branch, large → default; either way the domain step's events are
    the branch plan's ρ (pass 2 in a zCDP filter: RDP only), and the branch plan's total ρ is
    the default plan's."""
    (default, _), plan, _, ledger = _resolved(tmp_path, rows, 3)
    small = rows < default.stages[0].noise["small_table_below"] / 2
    assert plan.stages[0].noise["small_table_taken"] == float(small)
    spent = sum(zcdp_rho(e) for e in ledger.accounted_events if not isinstance(e, ThresholdEvent))
    assert spent == pytest.approx(plan.stages[0].rho, rel=1e-9)
    assert thresholds_delta(list(ledger.events)) == pytest.approx(
        thresholds_delta(list(plan.stages[0].events)), rel=1e-9)
    assert thresholds_delta(list(plan.stages[0].events)) == pytest.approx(
        thresholds_delta(list(default.stages[0].events)), rel=1e-9)
    assert plan.stages[0].share == pytest.approx(SMALL_TABLE_SHARE if small else
                                                 default.stages[0].share)
    assert sum(s.rho for s in plan.stages) == pytest.approx(
        sum(s.rho for s in default.stages), rel=1e-12)
    assert len(ledger.filters) == 1 and ledger.epsilon_bounds(1e-6)["pld"] is None
    assert SMALL_TABLE_NEED > 0
