"""DP heap discovery (issue 24 item 4): the domain step measures each auto column's, and each
DP-bounded numeric column's, exact-value counts at HEAP_NOISE_FACTOR × its σ, keeps the values
whose noisy count passes a partition-selection threshold, and makes them the column's
``point_masses``. Behavioural checks: the noise measured from the outputs, the threshold seen in
repeated draws, the schema read from the noisy output only, the ledger's events, a release."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from synthpriv import domain_stage
from synthpriv.api import Synthesizer
from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, ThresholdEvent
from synthpriv.privacy.domain_budget import HEAP_NOISE_FACTOR
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource

SCHEMA = {"columns": [{"name": "g", "kind": "categorical", "categories": ["a", "b"]},
                      {"name": "x", "kind": "integer"}]}


def _job(folder: Path, table: pd.DataFrame, schema: dict = SCHEMA, **budget):
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "train.csv", index=False)
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "heaps", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6, **budget},
              "pipeline": {"recipe": "independent"}, "evaluation": {"enabled": False},
              "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(folder / "job.yaml")
    plan, stages = plan_job(job)
    return job, plan.stages[0], stages[0][0]


def _table(values: dict[float, int], rows: int | None = None) -> pd.DataFrame:
    """Column x holding each value its count of rows, g alternating."""
    x = np.concatenate([np.full(count, value, dtype=float) for value, count in values.items()])
    return pd.DataFrame({"g": np.where(np.arange(len(x)) % 2, "a", "b"), "x": x})


def _resolve(job, plan, stage, table: pd.DataFrame, seed: int, ledger: Ledger | None = None):
    ledger = ledger or Ledger(job.config.budget.neighbouring)
    resolved = stage.resolve(job, plan, ledger, RandomSource.seeded(seed), chunks=[table])
    return resolved, stage.heap_counts["x"]


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_heap_counts_carry_the_planned_noise(tmp_path: Path, neighbouring: str) -> None:
    """The kept values' noisy counts minus their exact counts have std F·z·Δ₂ (z: the domain
    step's multiplier, Δ₂ the histogram's L2 sensitivity), within the chi-square bounds of the
    sample variance (two-sided, 1e-4 each side)."""
    counts = {float(v): 3000 + 7 * v for v in range(40)}  # each far above the threshold
    table = _table(counts)
    job, plan, stage = _job(tmp_path, table, neighbouring=neighbouring)
    expected = HEAP_NOISE_FACTOR * plan.noise["noise_multiplier"] * histogram_l2_sensitivity(
        neighbouring)
    assert plan.noise["heap_sigma"] == pytest.approx(expected)
    errors = []
    for seed in range(8):
        _, kept = _resolve(job, plan, stage, table, seed)
        assert set(kept) == set(counts)
        errors += [kept[v] - counts[v] for v in counts]
    errors = np.asarray(errors, dtype=float)
    df = len(errors) - 1
    ratio = float(np.var(errors, ddof=1)) / expected**2
    assert stats.chi2.ppf(1e-4, df) / df <= ratio <= stats.chi2.ppf(1 - 1e-4, df) / df, ratio
    assert abs(errors.mean()) <= 4 * expected / np.sqrt(len(errors))  # unbiased


def test_the_threshold_keeps_heaps_above_it_and_drops_those_below(tmp_path: Path) -> None:
    """A value of T − 2σ rows is kept in at most 5 % of the draws (P ≈ 2.3 %), one of T + 3σ in
    at least 95 % (P ≈ 99.9 %); binomial tolerance 3 standard deviations over the draws."""
    job, plan, stage = _job(tmp_path, _table({1.0: 10}))
    threshold, sigma = plan.noise["heap_threshold"], plan.noise["heap_sigma"]
    low, high = int(threshold - 2 * sigma), int(threshold + 3 * sigma)
    table = _table({5.0: low, 9.0: high, 20.0: 600})
    draws = 150
    kept_low = kept_high = 0
    for seed in range(draws):
        _, kept = _resolve(job, plan, stage, table, seed)
        kept_low += 5.0 in kept
        kept_high += 9.0 in kept
    slack = 3 * np.sqrt(draws * 0.05 * 0.95)
    assert kept_low <= 0.05 * draws + slack, (kept_low, low, threshold)
    assert kept_high >= 0.95 * draws - slack, (kept_high, high, threshold)


def test_the_point_masses_follow_the_noisy_selection_only(tmp_path: Path, monkeypatch) -> None:
    """Post-processing: the resolved point masses are the values the heap selection released
    (within the DP bounds), whatever the raw table holds. With the selection's output replaced,
    the table's own heap (7, half the rows) is not in the schema and the replaced value (5,
    inside the DP bounds) is; a value only the raw table holds (once) never appears."""
    table = _table({7.0: 2000, 3.0: 500, 1234.0: 1})
    job, plan, stage = _job(tmp_path, table)
    resolved, kept = _resolve(job, plan, stage, table, 1)
    assert resolved.schema.column("x").point_masses == sorted(kept) and 7.0 in kept
    assert 1234.0 not in kept
    real = domain_stage.heap_selection

    def altered(counts, candidates, sigma, threshold, source):
        _, named = real(counts, candidates, sigma, threshold, source)
        return {5.0: 999}, named

    monkeypatch.setattr(domain_stage, "heap_selection", altered)
    resolved, _ = _resolve(job, plan, stage, table, 1)
    assert resolved.schema.column("x").point_masses == [5.0]
    changed = table.assign(x=np.where(table["x"] == 7.0, 8.0, table["x"]))  # raw table altered
    again, _ = _resolve(job, plan, stage, changed, 1)
    assert again.schema.column("x").point_masses == [5.0]


def test_the_ledger_counts_the_heap_histograms_and_thresholds(tmp_path: Path) -> None:
    """One Gaussian event at multiplier F·z for the heap columns that ran (x; the auto column y
    is decided categorical: its heap histogram does not run and its weight goes to y's
    discovery), one heap threshold each, sharing the domain δ with the category thresholds;
    the δ those left unused is recorded as planned, not spent: the plan's total."""
    schema = {"columns": SCHEMA["columns"] + [{"name": "y", "kind": "auto"}]}
    table = _table({7.0: 2000, 3.0: 500}).assign(y="word")
    job, plan, stage = _job(tmp_path, table, schema)
    ledger = Ledger(job.config.budget.neighbouring)
    _resolve(job, plan, stage, table, 1, ledger)
    z = plan.noise["noise_multiplier"]
    heaps = [e for e in ledger.events if isinstance(e, DiscreteGaussianEvent)
             and e.label.startswith("DP heaps")]
    assert [(e.count, e.noise_multiplier) for e in heaps] == [(1, pytest.approx(
        HEAP_NOISE_FACTOR * z))]
    thresholds = [e for e in ledger.events if isinstance(e, ThresholdEvent)]
    assert [e.label for e in thresholds if "heap" in e.label] == ["heap threshold: x"]
    planned = sum(e.delta for e in plan.events if isinstance(e, ThresholdEvent))
    assert sum(e.delta for e in thresholds) == pytest.approx(planned, rel=1e-12)
    assert planned <= job.config.budget.domain_delta_share * 1e-6
    assert [e.label for e in thresholds if "heap" not in e.label] == [
        "category threshold: y (reallocated)",
        "planned, not spent: the δ of the thresholds this outcome did not run"]


HEAP = 3.258096  # randhie's lncoins: 20 % of rows, 0 % in the safe release before


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_a_heap_found_on_the_safe_path_comes_back_at_its_value(recipe: str) -> None:
    """Every column auto (the safe draft): 20 % at 3.258096 comes back 20 % at exactly that
    value; tolerance 4σ of the fine cell's noise (the plan's sigma_fine) over the rows, plus 4σ
    of the release's binomial draw."""
    rows = 5000
    rng = np.random.default_rng(0)
    data = pd.DataFrame({
        "g": rng.choice(["a", "b"], rows),
        "lncoins": np.where(rng.random(rows) < 0.2, HEAP, np.round(rng.uniform(0, 4.6, rows), 4)),
    })
    synthesizer = Synthesizer(epsilon=1.0, delta=1e-6, recipe=recipe, public_records=rows,
                              seed=4).fit(data)
    column = synthesizer.schema.column("lncoins")
    assert column.kind == "continuous" and HEAP in column.point_masses
    (marginals,) = [s for s in synthesizer.plan().to_dict()["stages"] if s["stage"] == "marginals"]
    real = float(np.mean(data["lncoins"] == HEAP))
    released = float(np.mean(synthesizer.synthetic["lncoins"].astype(float) == HEAP))
    tolerance = 4 * marginals["noise"]["sigma_fine"] / rows + 4 * np.sqrt(0.2 * 0.8 / rows)
    assert abs(released - real) <= tolerance, (real, released, tolerance)


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
def test_per_person_heap_noise_and_threshold_take_k(neighbouring: str) -> None:
    """data.person (k rows each): the heap counts' σ is F·z·Δ₂(k) and their threshold's δ the
    per-person one (up to k count-0 values per side), within the same δ split."""
    from synthpriv.privacy.domain_budget import plan_domain_noise
    from synthpriv.privacy.partition import selection_delta

    k, delta = 4, 1e-7
    noise = plan_domain_noise(0.01, ["x"], ["c"], delta, neighbouring, 1.0,
                              rows_per_person=k, heaps=["x"])
    assert noise.heap_sigma == pytest.approx(
        HEAP_NOISE_FACTOR * noise.multiplier * histogram_l2_sensitivity(neighbouring, k))
    assert noise.heap_delta == pytest.approx(selection_delta(
        noise.heap_sigma, noise.heap_threshold, neighbouring, 1.0, rows_per_person=k))
    assert noise.heap_delta <= delta / 2 < selection_delta(
        noise.heap_sigma, noise.heap_threshold - 1, neighbouring, 1.0, rows_per_person=k)
    assert noise.delta_per_column + noise.heap_delta <= delta
