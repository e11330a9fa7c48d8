"""A stage records what the plan fixed but it did not run (privacy.accountant.unrun_events), so
a run's ledger reports the plan's ε whatever the domain step's kinds decided: a column decided
text is not modelled, MST and AIM measure one marginal fewer, and a ledger of only what ran
reported an ε that depended on that DP output (0.918 against the plan's 0.9996), smaller than
the guarantee proven (the worst case over the kinds decided: the plan)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy.accountant import (
    UNRUN_LABEL,
    DiscreteGaussianEvent,
    ExponentialEvent,
    SubsampledGaussianEvent,
    ThresholdEvent,
    unrun_events,
)
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job


def test_the_events_not_run_are_the_plans_remainder() -> None:
    planned = [DiscreteGaussianEvent(30.0, 9), ExponentialEvent(0.07, 8), ThresholdEvent(1e-9),
               ThresholdEvent(1e-9), SubsampledGaussianEvent(0.01, 1.1, 100)]
    ran = [DiscreteGaussianEvent(30.0, 1, label="one-way")] * 7 + [
        ExponentialEvent(0.07, 6), ThresholdEvent(1e-9), SubsampledGaussianEvent(0.01, 1.1, 100)]
    padding = unrun_events(planned, ran, "why")
    assert sorted(map(repr, padding)) == sorted(map(repr, [
        DiscreteGaussianEvent(30.0, 2, label=f"{UNRUN_LABEL} (why)"),
        ExponentialEvent(0.07, 2, label=f"{UNRUN_LABEL} (why)"),
        ThresholdEvent(1e-9, label=f"{UNRUN_LABEL} (why)")]))
    assert unrun_events(planned, planned) == []
    # other parameters than the plan's are not the plan's events: nothing offsets them
    assert unrun_events([DiscreteGaussianEvent(30.0, 2)], [DiscreteGaussianEvent(29.0, 2)]) == [
        DiscreteGaussianEvent(30.0, 2, label=UNRUN_LABEL)]


def _job(folder: Path, recipe: str):
    """Every column auto; one of them long free text (decided text under DP: not modelled)."""
    rng = np.random.default_rng(0)
    rows = 3000
    table = pd.DataFrame({
        "a": rng.choice(["x", "y", "z"], rows, p=[0.5, 0.3, 0.2]),
        "b": rng.integers(0, 50, rows),
        "c": rng.normal(10.0, 2.0, rows).round(2),
        "note": [f"free text entry number {i} written by someone at length, one of a kind"
                 for i in range(rows)],
    })
    table.to_csv(folder / "train.csv", index=False)
    (folder / "schema.yaml").write_text(yaml.safe_dump(
        {"columns": [{"name": name, "kind": "auto"} for name in table.columns]}))
    config = {"name": "unrun", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": recipe},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return load_job(folder / "job.yaml")


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_a_run_with_a_text_column_reports_the_plans_epsilon(tmp_path: Path, recipe: str) -> None:
    """The text column is decided text (the long-text share is far above the noise) and not
    modelled; the run's ledger still reports the plan's ε (to 1e-6), holding the marginals it
    did not measure as planned, not run. Without the padding MST's ledger is below the plan."""
    job = _job(tmp_path, recipe)
    plan, _ = plan_job(job)
    result = run_job(job, source=RandomSource.seeded(3), evaluate=False, force=True)
    assert result.job.schema.column("note").kind == "text"
    delta = job.config.budget.delta
    assert result.ledger.epsilon(delta) == pytest.approx(plan.epsilon, rel=1e-6)
    unrun = [e for e in result.ledger.events if e.label.startswith(f"{UNRUN_LABEL} (stage")]
    assert unrun, "the marginals the text column did not get are recorded"
