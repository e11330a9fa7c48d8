"""The small-table rule (privacy.domain_budget.small_table_share; branch tiny, issue 24): with a
public row count n̂ for which DP bounds at the default share would need ≥ SMALL_TABLE_NEED·n̂ rows
in one octave, the domain step takes SMALL_TABLE_SHARE of ρ. Checked by behaviour: the plan's
shares, the ledger's events against the plan, and the noise measured on the bucket counts
against the σ the plan states."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.domain_stage import bounds_rows
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.plan_warnings import domain_messages
from synthpriv.privacy.accountant import Ledger, ThresholdEvent, zcdp_rho
from synthpriv.privacy.domain_budget import SMALL_TABLE_NEED, SMALL_TABLE_SHARE, small_table_share
from synthpriv.privacy.randomness import RandomSource

COLUMNS = [f"x{i}" for i in range(8)]


def _table(rows: int, seed: int = 0) -> pd.DataFrame:
    """Integers spread over ~12 octaves (1 … 4,000): many buckets, each far above the noise."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame({name: rng.integers(1, 4000, rows) for name in COLUMNS})


def _job(folder: Path, records: int | None, share: float | None = None) -> Path:
    """A job on ``_table`` whose integer columns give no bounds (the domain step buys them),
    with ``records`` as data.public_records and ``share`` as budget.domain_share."""
    folder.mkdir(parents=True, exist_ok=True)
    _table(6000).to_csv(folder / "train.csv", index=False)
    schema = {"columns": [{"name": name, "kind": "integer"} for name in COLUMNS]}
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    data = {"path": "train.csv", "schema": "schema.yaml"}
    budget = {"epsilon": 1.0, "delta": 1e-6}
    if records is not None:
        data["public_records"] = records
    if share is not None:
        budget["domain_share"] = share
    config = {"name": "small", "data": data, "budget": budget,
              "pipeline": {"recipe": "independent"}, "evaluation": {"enabled": False},
              "output": {"dir": str(folder / "out")}, "seed": 5}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def test_the_rule_follows_the_public_row_count_only() -> None:
    assert small_table_share(0.4, 100.0, None) == 0.4  # n̂ not public: the default
    assert small_table_share(0.4, 100.0, 401) == 0.4  # 100 < 25 % of 401
    assert small_table_share(0.4, 100.0, 400) == SMALL_TABLE_SHARE
    assert small_table_share(0.9, 100.0, 100) == 0.9  # never lowers a larger share
    assert small_table_share(0.4, None, 10) == 0.4  # no column gets DP bounds


def test_the_plan_takes_the_rule_share_and_states_its_figures(tmp_path: Path) -> None:
    """No public n̂: the default share, and a note giving the n̂ below which the rule applies. A
    small public n̂: SMALL_TABLE_SHARE, the default's figures stated. A large n̂: the default
    plan exactly. A configured share: the rule stays out."""
    default, _ = plan_job(load_job(_job(tmp_path / "none", None)))
    rows = bounds_rows(default.stages[0].noise)
    assert default.stages[0].share < SMALL_TABLE_SHARE and rows is not None
    small = rows / SMALL_TABLE_NEED  # the largest n̂ the rule applies to
    job = load_job(_job(tmp_path / "none", None))
    notes = [t for _, t in domain_messages(job, default) if "small-table rule" in t]
    assert len(notes) == 1 and f"up to {small:,.0f} rows" in notes[0]

    job = load_job(_job(tmp_path / "small", int(small)))
    plan, stages = plan_job(job)
    domain, recipe = plan.stages[0], plan.stages[1]
    assert [share for _, share in stages][:2] == pytest.approx(
        [SMALL_TABLE_SHARE, 1 - SMALL_TABLE_SHARE])
    assert domain.rho / (domain.rho + recipe.rho) == pytest.approx(SMALL_TABLE_SHARE)
    assert domain.noise["default_share"] == pytest.approx(default.stages[0].share)
    assert domain.noise["default_bounds_rows"] == pytest.approx(rows)
    assert domain.noise["sigma"] < default.stages[0].noise["sigma"]
    assert plan.epsilon <= 1.0 + 1e-9
    notes = [t for _, t in domain_messages(job, plan) if "small-table rule" in t]
    assert len(notes) == 1 and f"takes {SMALL_TABLE_SHARE:.2f} of ρ" in notes[0]
    assert f"about {rows:,.0f} rows in one octave" in notes[0]

    large, _ = plan_job(load_job(_job(tmp_path / "large", int(small) + 1)))
    assert large.stages[0] == default.stages[0]
    fixed, _ = plan_job(load_job(_job(tmp_path / "fixed", 10, share=0.3)))
    assert fixed.stages[0].share == pytest.approx(0.3) and "default_share" not in \
        fixed.stages[0].noise


def test_the_ledger_holds_the_rule_share_and_the_bucket_noise_is_the_stated_sigma(
    tmp_path: Path,
) -> None:
    """With the rule on, the domain step's events on the ledger are the plan's (their ρ is
    SMALL_TABLE_SHARE of the job's), and the noise on its bucket counts, measured against the
    exact counts, is the σ the plan states, not the default share's (about 1.4 times it)."""
    default, _ = plan_job(load_job(_job(tmp_path / "none", None)))
    records = int(bounds_rows(default.stages[0].noise) / SMALL_TABLE_NEED)
    path = _job(tmp_path / "small", records)
    job = load_job(path)
    planned = plan_job(job)
    plan = planned[0]
    sigma, old = plan.stages[0].noise["sigma"], default.stages[0].noise["sigma"]
    assert old > 1.3 * sigma
    table = _table(6000)
    errors = []
    for seed in range(3):
        ledger = Ledger(job.config.budget.neighbouring)
        resolved, _ = resolve_domain(job, planned, ledger, RandomSource.seeded(seed), [table])
        spent = sum(zcdp_rho(e) for e in ledger.events if not isinstance(e, ThresholdEvent))
        assert spent == pytest.approx(plan.stages[0].rho, rel=1e-9)
        total = sum(s.rho for s in plan.stages)
        assert spent / total == pytest.approx(SMALL_TABLE_SHARE, rel=1e-9)
        for name in COLUMNS:
            for bucket in resolved.schema.column(name).bucket_counts or []:
                values = table[name]
                exact = ((values >= bucket.lower) & (values <= bucket.upper)).sum()
                assert bucket.sigma == pytest.approx(sigma)
                errors.append(bucket.count - exact)
    assert len(errors) >= 150
    measured = float(np.std(errors))
    # 3 runs × 8 columns × ~12 buckets: the std is within ~12 % of σ (4 standard errors)
    assert abs(measured / sigma - 1) < 0.12, (measured, sigma, old)


def test_the_rule_never_reads_the_table(tmp_path: Path) -> None:
    """The share follows the declared n̂ only: a 60-row table with no public row count is planned
    exactly as a 6,000-row one (the default share), and a declared n̂ decides it whatever the
    table holds."""
    big, _ = plan_job(load_job(_job(tmp_path / "big", None)))
    path = _job(tmp_path / "tiny", None)
    _table(60).to_csv(path.parent / "train.csv", index=False)
    tiny, _ = plan_job(load_job(path))
    assert tiny.stages == big.stages and tiny.stages[0].share < SMALL_TABLE_SHARE
    declared, _ = plan_job(load_job(_job(tmp_path / "declared", 60)))  # 6,000 rows in the file
    assert declared.stages[0].share == pytest.approx(SMALL_TABLE_SHARE)
