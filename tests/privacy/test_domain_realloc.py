"""The domain step's reallocation (synthpriv.privacy.domain_budget, "Reallocation"): the weight
and threshold δ of what the decided kinds do not run go to the auto columns decided categorical.
Behavioural checks: the category counts' noise measured from the outputs, the keep probability
at the realised threshold, the ρ and δ (and the ledger's ε) of every outcome of small cases
against the plan's, and a whole run's ledger against its plan."""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from synthpriv import domain_stage
from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.privacy.accountant import Ledger, ThresholdEvent, zcdp_rho
from synthpriv.privacy.domain_budget import (
    DECIDED,
    REALLOCATE_MIN_MULTIPLIER,
    heap_column_weight,
    plan_domain_noise,
    realised_domain_noise,
)
from synthpriv.privacy.partition import discrete_gaussian_tails
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job

AUTO = ["c1", "c2", "t", "n"]  # decided categorical, categorical, id (none), integer (numeric)
DECIDED_KINDS = {"c1": "categorical", "c2": "categorical", "t": "none", "n": "numeric"}


def _job(folder: Path, epsilon: float = 4.0, recipe: str = "independent"):
    """A job whose every column is auto; the plan reads no data (a placeholder file)."""
    folder.mkdir(parents=True, exist_ok=True)
    pd.DataFrame({name: ["x"] for name in AUTO}).to_csv(folder / "train.csv", index=False)
    schema = {"columns": [{"name": name, "kind": "auto"} for name in AUTO]}
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "realloc", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": epsilon, "delta": 1e-6},
              "pipeline": {"recipe": recipe}, "evaluation": {"enabled": False},
              "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(folder / "job.yaml")
    plan, stages = plan_job(job)
    return job, plan, stages[0][0]


def _realised(job, plan, stage):
    return realised_domain_noise(
        plan.rho, stage.bounds, stage.categories, stage.delta, stage.context.neighbouring,
        stage.epsilon, stage.kinds, DECIDED_KINDS, 1, stage.heaps)


def _table(values: dict[str, int], rng: np.random.Generator) -> pd.DataFrame:
    """c1 and c2 holding each value its count of rows (shuffled apart), t a distinct key per
    row, n whole numbers."""
    cells = np.concatenate([np.full(count, value, dtype=object) for value, count in
                            values.items()])
    rows = len(cells)
    return pd.DataFrame({"c1": cells, "c2": rng.permutation(cells),
                         "t": [f"key{i:07d}" for i in range(rows)],
                         "n": rng.integers(0, 1000, rows).astype(str)})


def _spy(monkeypatch) -> list[tuple[float, int, dict]]:
    """Records each category discovery's σ, threshold and kept noisy counts (the real
    function runs: its outputs are what the step releases)."""
    calls: list[tuple[float, int, dict]] = []
    real = domain_stage.listed_selection

    def recorded(counts, listed, sigma, threshold, source):
        kept, bars, noisy = real(counts, listed, sigma, threshold, source)
        calls.append((sigma, threshold, kept))
        return kept, bars, noisy

    monkeypatch.setattr(domain_stage, "listed_selection", recorded)
    return calls


def test_category_counts_carry_the_reallocated_noise(tmp_path: Path, monkeypatch) -> None:
    """With c1, c2 decided categorical, t an id and n an integer, the categorical columns get
    the weight of t's histograms and of the three unused heap histograms (each with its bounds
    refinement), half each: w = 1 + (1 + 3·(1/F² + 1/F_r²))/2, σ_c = σ/√w. The kept values'
    noisy counts minus their exact counts have std σ_c within the chi-square bounds (two-sided,
    1e-4 each side); the plan's σ (no reallocation) and a σ with all of the unused weight on
    each column both lie outside."""
    job, plan, stage = _job(tmp_path)
    domain = plan.stages[0]
    realised = _realised(job, domain, stage)
    weight = 1 + (1 + 3 * heap_column_weight()) / 2
    assert realised.weight == pytest.approx(weight)
    sigma_c = realised.category_sigma
    assert sigma_c == pytest.approx(domain.noise["sigma"] / np.sqrt(weight))
    rng = np.random.default_rng(5)
    counts = {f"v{i:02d}": int(realised.category_threshold + 12 * sigma_c + 3 * i)
              for i in range(40)}  # each far above the threshold: always kept
    table = _table(counts, rng)
    calls = _spy(monkeypatch)
    errors = []
    for seed in range(6):
        resolved = stage.resolve(job, domain, Ledger(job.config.budget.neighbouring),
                                 RandomSource.seeded(seed), chunks=[table])
        assert [resolved.schema.column(n).kind for n in AUTO] == [
            "categorical", "categorical", "id", "integer"]
        for _, _, kept in calls:
            assert set(kept) == set(counts)
            errors += [kept[v] - counts[v] for v in counts]
        calls.clear()
    errors = np.asarray(errors, dtype=float)
    df = len(errors) - 1
    low, high = stats.chi2.ppf(1e-4, df) / df, stats.chi2.ppf(1 - 1e-4, df) / df
    variance = float(np.var(errors, ddof=1))
    assert low <= variance / sigma_c**2 <= high, variance / sigma_c**2
    assert not low <= variance / domain.noise["sigma"] ** 2 <= high  # the plan's σ
    all_weight = domain.noise["sigma"] / np.sqrt(1 + 1 + 3 * heap_column_weight())
    assert not low <= variance / all_weight**2 <= high  # each column taking all of it
    assert abs(errors.mean()) <= 4 * sigma_c / np.sqrt(len(errors))  # unbiased


def test_the_realised_threshold_keeps_values_as_its_noise_predicts(tmp_path: Path,
                                                                   monkeypatch) -> None:
    """Values of T_c − 2σ_c and T_c + 2σ_c rows (rounded) are kept at the rates the realised
    discrete Gaussian predicts, P(Z ≥ T_c − count) (binomial bounds, 1e-4 each side); the
    plan's threshold and σ predict rates outside those bounds. The run's threshold is T_c, below
    the plan's T, and the stage reports it per column."""
    job, plan, stage = _job(tmp_path)
    domain = plan.stages[0]
    realised = _realised(job, domain, stage)
    threshold, sigma_c = realised.category_threshold, realised.category_sigma
    assert threshold < domain.noise["category_threshold"]
    low_count = int(round(threshold - 2 * sigma_c))
    high_count = int(round(threshold + 2 * sigma_c))
    counts = {f"lo{i:03d}": low_count for i in range(150)}
    counts.update({f"hi{i:03d}": high_count for i in range(150)})
    table = _table(counts, np.random.default_rng(2))
    calls = _spy(monkeypatch)
    kept_low = kept_high = 0
    for seed in range(2):
        stage.resolve(job, domain, Ledger(job.config.budget.neighbouring),
                      RandomSource.seeded(seed), chunks=[table])
        assert stage.thresholds == {"c1": threshold, "c2": threshold}
        for _, _, kept in calls:
            kept_low += sum(v.startswith("lo") for v in kept)
            kept_high += sum(v.startswith("hi") for v in kept)
        calls.clear()
    trials = 2 * 2 * 150  # seeds × columns × values per level

    def keep_rate(sigma: float, cut: int, count: int) -> float:
        tails, offset = discrete_gaussian_tails(sigma)
        return float(tails[cut - count + offset])

    for kept, count in ((kept_low, low_count), (kept_high, high_count)):
        low, high = stats.binom.ppf([1e-4, 1 - 1e-4], trials,
                                    keep_rate(sigma_c, threshold, count))
        assert low <= kept <= high, (count, kept, low, high)
        planned = keep_rate(domain.noise["sigma"], int(domain.noise["category_threshold"]),
                            count) * trials
        assert not low <= planned <= high


@pytest.mark.parametrize("neighbouring", ["add_remove", "replace_one"])
@pytest.mark.parametrize(("rho", "moves"), [(0.004, True), (0.05, True), (0.3, False)])
def test_every_outcome_spends_the_plans_rho_and_delta(neighbouring: str, rho: float,
                                                      moves: bool) -> None:
    """Over every outcome of three auto columns (with a declared numeric and a declared
    categorical column): the events recorded hold the plan's ρ and δ exactly, those that ran
    no more; each categorical column's weight is its equal share; T_c ≤ the plan's T; the
    ledger's ε (RDP and PLD, at δ = 1e-5) is never above the plan's (1e-9 relative: floating
    point). At ρ = 0.3 (z ≈ 3.9) the noise is too small to move: z/√w < REALLOCATE_MIN_MULTIPLIER
    for the largest weight w an outcome could give (4.92), so every outcome runs as planned."""
    kinds, bounds, categories = ["a", "b", "c"], ["x"], ["k"]
    heaps = ["x", *kinds]
    plan = plan_domain_noise(rho, bounds, categories, 1e-6, neighbouring, 1.0, kinds, 1, heaps)
    planned_rho = sum(zcdp_rho(e) for e in plan.events if not isinstance(e, ThresholdEvent))
    planned_delta = sum(e.delta for e in plan.events if isinstance(e, ThresholdEvent))
    most = 1 + (len(kinds) - 1) + len(kinds) * heap_column_weight()
    assert (plan.multiplier / np.sqrt(most) >= REALLOCATE_MIN_MULTIPLIER) == moves
    ledger = Ledger(neighbouring)
    ledger.extend(plan.events)
    planned_eps = ledger.epsilon_bounds(1e-5)
    for outcome in itertools.combinations_with_replacement(DECIDED, len(kinds)):
        decided = dict(zip(kinds, outcome, strict=True))
        realised = realised_domain_noise(rho, bounds, categories, 1e-6, neighbouring, 1.0,
                                         kinds, decided, 1, heaps)
        gaussians = [e for e in realised.events if not isinstance(e, ThresholdEvent)]
        ran = [e for e in gaussians if not e.label.startswith("planned")]
        assert sum(zcdp_rho(e) for e in gaussians) == pytest.approx(planned_rho, rel=1e-12)
        assert sum(zcdp_rho(e) for e in ran) <= planned_rho * (1 + 1e-12)
        assert sum(e.delta for e in realised.events if isinstance(e, ThresholdEvent)) == \
            pytest.approx(planned_delta, rel=1e-12)
        cats = outcome.count("categorical")
        if cats and moves:
            # a date's heap weight is its refinement's (domain_budget.date_refine_multiplier)
            unused = outcome.count("none") + (len(kinds) - outcome.count("numeric")
                                              - outcome.count("date")) * heap_column_weight()
            assert realised.weight == pytest.approx(1 + unused / cats)
            assert realised.category_threshold <= plan.threshold
        else:  # nothing reallocated
            assert realised.category_sigma is None
        if not moves:  # the plan's own events, regrouped: the PLD of each is slow at this ε
            continue
        ledger = Ledger(neighbouring)
        ledger.extend(realised.events)
        bounds_now = ledger.epsilon_bounds(1e-5)
        for name in ("rdp", "pld"):
            assert bounds_now[name] <= planned_eps[name] * (1 + 1e-9), (outcome, name)


def test_a_run_reports_no_more_than_its_plan(tmp_path: Path) -> None:
    """A whole run (every column auto, two decided categorical, one id): its ledger's ε is
    never above the plan's, and its domain events hold the plan's domain ρ and δ exactly, the
    reallocated discovery among them. (The recipe's stages run on the resolved schema: the id
    column is not measured, and what they did not run is recorded as planned, not run:
    tests/privacy/test_unrun_events.py.)"""
    job, plan, _ = _job(tmp_path, epsilon=1.0)
    table = _table({f"v{i}": 300 + 10 * i for i in range(8)}, np.random.default_rng(1))
    table.to_csv(tmp_path / "train.csv", index=False)
    result = run_job(job, source=RandomSource.seeded(4), evaluate=False, force=True)
    assert result.ledger.epsilon(job.config.budget.delta) <= plan.epsilon * (1 + 1e-9)
    domain = plan.stages[0]
    events = [e for e in result.ledger.events if not e.label.startswith("marginal")
              and "(stage '" not in e.label]
    assert [e.label for e in events if "(reallocated)" in e.label] == [
        "category threshold: c1 (reallocated)", "category threshold: c2 (reallocated)"]
    assert sum(zcdp_rho(e) for e in events if not isinstance(e, ThresholdEvent)) == \
        pytest.approx(sum(zcdp_rho(e) for e in domain.events
                          if not isinstance(e, ThresholdEvent)), rel=1e-9)
    assert sum(e.delta for e in events if isinstance(e, ThresholdEvent)) == pytest.approx(
        sum(e.delta for e in domain.events if isinstance(e, ThresholdEvent)), rel=1e-12)


def test_the_plan_and_the_run_state_the_thresholds(tmp_path: Path) -> None:
    """The plan's note gives the threshold with every auto column decided categorical (public:
    the realised noise of that outcome, below the plan's T); the run's domain lines give the
    threshold each discovered column used."""
    from synthpriv.domain_stage import domain_lines
    from synthpriv.plan_warnings import domain_messages

    job, plan, stage = _job(tmp_path)
    domain = plan.stages[0]
    every = realised_domain_noise(
        domain.rho, stage.bounds, stage.categories, stage.delta, stage.context.neighbouring,
        stage.epsilon, stage.kinds, dict.fromkeys(AUTO, "categorical"), 1, stage.heaps)
    assert every.category_threshold < domain.noise["category_threshold"]
    notes = [text for _, text in domain_messages(job, plan) if "before reallocation" in text]
    assert len(notes) == 1 and f"at most {every.category_threshold:,} rows" in notes[0]
    table = _table({f"v{i}": 400 for i in range(5)}, np.random.default_rng(3))
    resolved = stage.resolve(job, domain, Ledger(job.config.budget.neighbouring),
                             RandomSource.seeded(1), chunks=[table])
    lines = domain_lines(job.schema, resolved.schema, stage.kept_shares, stage.thresholds)
    used = _realised(job, domain, stage).category_threshold
    assert [line for line in lines if f"threshold {used:,} rows" in line] == [
        line for line in lines if line.startswith(("  c1:", "  c2:"))]
