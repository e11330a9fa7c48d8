"""Where the adaptive domain may fold a missing code below 3σ into a value cell (issue 24 item
4, after missnoise): only where the code is expected empty (synthpriv.marginals.compress:
``keeps_missing``, ``missing_estimate``). A discovered column's missing code holds the rows of
the values DP discovery dropped: folded, they were released as the majority value (Wage's race,
White 0.83 → 0.90); an ``outside: missing`` column's holds the values outside zeros-only DP
bounds by design: folded, they came back as zeros (Adult's capital-gain, 1.000 against 0.911)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from scipy.optimize import brentq
from scipy.stats import binom, chi2, norm

from synthpriv import Synthesizer
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import SIGNIFICANT, choose_coarsening, missing_measured
from synthpriv.marginals.measurement import Measurement, estimate_total
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.privacy.zcdp_bound import zcdp_epsilon
from synthpriv.schema import parse_schema
from synthpriv.stage import PlanContext

ROWS = 2000
OTHERS = 6  # public categorical columns of 3 values: the record count n̂ comes from them
SHARES = np.array([0.62, 0.30])  # the two kept values; the rest of the rows are dropped


def _schema(kept_rows: dict | None) -> dict:
    group = {"name": "group", "kind": "categorical", "categories": ["a", "b"], "missing": True,
             "unknown_categories": "missing"}
    if kept_rows is not None:
        group["kept_rows"] = kept_rows
    return {"columns": [group] + [{"name": f"x{j}", "kind": "categorical",
                                   "categories": list("uvw")} for j in range(OTHERS)]}


def _sigma() -> float:
    """AIM's first-round 1-way σ for this schema at ε = 1 (the missing cell's noise)."""
    domain = TableEncoder(parse_schema(_schema(None), "test")).domain
    rho = brentq(lambda r: zcdp_epsilon(r, 1e-6) - 1.0, 1e-6, 1.0)
    plan = MarginalsStage({"selection": "aim"}, PlanContext(domain, "add_remove", 1e-6),
                          "test").plan(rho)
    return float(plan.noise["sigma_first_rounds"])


def _draw(dropped: float, seed: int, sigma: float, discovered: bool = True,
          records_sigma: float | None = None) -> tuple[bool, bool, float]:
    """One draw of the noisy 1-way counts (σ) and of the domain step's kept rows (σ/2 per kept
    value: about what its default share gives, 34 against 86 on Wage) for a table whose
    ``group`` has ``dropped`` of its rows outside the kept values (in its missing code), and,
    given ``records_sigma``, of the kinds pass's n̂ at that σ. Returns whether the missing code
    stays a cell of its own (this rule; main's rule, the 1-way count alone) and the kept rows' σ."""
    rng = np.random.default_rng(seed)
    kept = ROWS * (1 - dropped) * SHARES / SHARES.sum()
    sigma_kept = sigma / 2 * np.sqrt(len(kept))
    rows = {"count": float(kept.sum() + rng.normal(0, sigma_kept)), "sigma": sigma_kept}
    if records_sigma is not None:
        rows |= {"records": float(ROWS + rng.normal(0, records_sigma)),
                 "records_sigma": records_sigma}
    schema = parse_schema(_schema(rows if discovered else None), "test")
    exact = [np.append(kept, ROWS * dropped)] + [ROWS * np.array([0.5, 0.3, 0.2])] * OTHERS
    one_way = [Measurement((c.name,), e + rng.normal(0, sigma, len(e)), sigma)
               for c, e in zip(schema.modelled, exact, strict=True)]
    chosen = choose_coarsening(schema, TableEncoder(schema).domain, one_way,
                               estimate_total(one_way), merge_categories=False)
    mapping = chosen.maps["group"]
    return (bool((mapping[:-1] != mapping[-1]).all()), missing_measured(one_way[0]),
            sigma_kept)


def test_a_discovered_column_keeps_the_rows_discovery_dropped_blank() -> None:
    """2.5σ of rows outside the kept values (σ: AIM's at ε = 1, about 6 % of the rows). Main
    folded the code whenever its 1-way count was below 3σ (about 70 % of draws here): the rows
    went to the majority value. Now that count is combined with n̂ − K̂ (σ of n̂ from the 6
    other columns' totals, K̂ the domain step's kept rows) and the code is kept from 3σ of the
    combined noise: the share of 300 draws keeping it is at least the binomial's 1e-4 lower
    quantile at that rule's power, computed here from the noise, and above main's share."""
    sigma, draws = _sigma(), 300
    dropped = 2.5 * sigma / ROWS
    results = [_draw(dropped, seed, sigma) for seed in range(draws)]
    sigma_kept = results[0][2]
    records_var = sigma ** 2 * 3 / OTHERS  # each other column's total: 3 cells of σ
    second = records_var + sigma_kept ** 2
    combined = np.sqrt(sigma ** 2 * second / (sigma ** 2 + second))
    power = norm.sf(SIGNIFICANT - ROWS * dropped / combined)
    kept = sum(r[0] for r in results)
    assert kept >= binom.ppf(1e-4, draws, power), (
        f"the missing code holding {dropped:.0%} of the rows was kept in {kept} of {draws} "
        f"draws; the rule's power is {power:.0%}")
    assert kept > sum(r[1] for r in results), "no better than the 1-way count alone"


def _combined_sigma(sigma: float, sigma_kept: float, records_sigma: float | None) -> float:
    """The σ of ``missing_estimate`` in ``_draw``'s setting: n̂ from the 6 other columns'
    totals (3 cells of σ each) and, given, the kinds pass's n̂, by inverse variance; K̂'s σ
    added; combined with the 1-way count (σ) by inverse variance."""
    precision = OTHERS / (3 * sigma ** 2) + (0 if records_sigma is None else records_sigma ** -2)
    second = 1 / precision + sigma_kept ** 2
    return float(np.sqrt(sigma ** 2 * second / (sigma ** 2 + second)))


def test_the_kinds_records_keep_more_dropped_rows_blank() -> None:
    """``kept_rows.records`` (the kinds pass's n̂, its own noise; here at σ/3, about its σ on
    the release test's table: 26 rows against AIM's 74) joins n̂: 2.5σ of dropped rows are kept
    blank at least at the binomial's 1e-4 lower quantile of the rule's power with the smaller
    combined σ, and more often than without it on the same draws (32 of 300 releases folded
    8 % of dropped rows without it: benchmarks/README.md, "missingfold")."""
    sigma, draws = _sigma(), 300
    dropped, records_sigma = 2.5 * sigma / ROWS, sigma / 3
    kept = [_draw(dropped, seed, sigma, records_sigma=records_sigma) for seed in range(draws)]
    before = sum(_draw(dropped, seed, sigma)[0] for seed in range(draws))
    combined = _combined_sigma(sigma, kept[0][2], records_sigma)
    assert combined < _combined_sigma(sigma, kept[0][2], None)
    power = norm.sf(SIGNIFICANT - ROWS * dropped / combined)
    count = sum(k[0] for k in kept)
    assert count >= binom.ppf(1e-4, draws, power), (
        f"kept in {count} of {draws} draws; the rule's power with n̂ from the kinds is {power:.0%}")
    assert count > before, f"no better than without the kinds' n̂ ({count}, {before})"


def test_the_kinds_records_make_no_fake_blank() -> None:
    """Nothing dropped, the kinds pass's n̂ joined: the combined estimate still has mean ≤ 0,
    so an empty code is kept at most at P(Z > 3) a draw: 400 draws within the binomial's 1e-4
    upper quantile."""
    sigma, draws = _sigma(), 400
    kept = sum(_draw(0.0, seed, sigma, records_sigma=sigma / 3)[0] for seed in range(draws))
    assert kept <= binom.ppf(1 - 1e-4, draws, norm.sf(SIGNIFICANT)), (
        f"an empty missing code was kept (fake blanks) in {kept} of {draws} draws")


def test_a_discovered_column_that_dropped_nothing_releases_no_blank() -> None:
    """Nothing dropped and no blank: the combined estimate passes 3σ at P(Z > 3) ≈ 0.13 % a
    draw (less: the kept counts' selection errs towards folding); 400 draws stay within the
    binomial's 1e-4 upper quantile at that rate (missnoise's guarantee kept)."""
    sigma, draws = _sigma(), 400
    kept = sum(_draw(0.0, seed, sigma)[0] for seed in range(draws))
    assert kept <= binom.ppf(1 - 1e-4, draws, norm.sf(SIGNIFICANT)), (
        f"an empty missing code was kept (fake blanks) in {kept} of {draws} draws")


def test_public_categories_fold_a_missing_code_below_three_sigma() -> None:
    """Public categories (no ``kept_rows``): the 1-way count alone decides, as missnoise made it:
    the code is kept exactly when that count passes 3σ, in each of 100 draws with 4 % blank."""
    sigma = _sigma()
    for seed in range(100):
        kept, measured, _ = _draw(0.04, seed, sigma, discovered=False)
        assert kept == measured, f"draw {seed}: kept {kept}, 1-way rule {measured}"


def test_outside_missing_never_folds() -> None:
    """An ``outside: missing`` column (zeros-only DP bounds: the non-zero values are read as
    missing by design) keeps its missing code a cell of its own whatever its noisy count, in
    each of 50 draws with 9 % of the rows outside the bounds (at AIM's σ, below 3σ in most).
    Main folded it below 3σ and released those rows as zeros."""
    schema = parse_schema({"columns": [
        {"name": "gain", "kind": "integer", "lower": 0, "upper": 0.5, "missing": True,
         "outside": "missing"},
        {"name": "x", "kind": "categorical", "categories": list("uvw")}]}, "test")
    domain = TableEncoder(schema).domain
    sigma = _sigma()
    folded = []
    for seed in range(50):
        rng = np.random.default_rng(seed)
        exact = [np.append(np.zeros(domain["gain"] - 1), ROWS * 0.09),
                 ROWS * np.array([0.5, 0.3, 0.2])]
        exact[0][0] = ROWS * 0.91
        one_way = [Measurement((name,), e + rng.normal(0, sigma, len(e)), sigma)
                   for name, e in zip(("gain", "x"), exact, strict=True)]
        mapping = choose_coarsening(schema, domain, one_way, ROWS).maps["gain"]
        if (mapping[:-1] == mapping[-1]).any():
            folded.append(seed)
    assert not folded, f"the missing code of an outside: missing column was folded in {folded}"


def dropped_table() -> tuple[pd.DataFrame, list[str]]:
    """ROWS rows (seed 5): ``group`` 'a' 62 %, 'b' 30 % and 8 % over 40 rare values (returned),
    and 7 columns of three common values (benchmarks/missingfold_seeds.py runs it too)."""
    rng = np.random.default_rng(5)
    rare = [f"r{i:02d}" for i in range(40)]
    table = pd.DataFrame({"group": rng.choice(["a", "b"] + rare, ROWS,
                                              p=[0.62, 0.30] + [0.08 / 40] * 40)})
    for j in range(7):
        table[f"x{j}"] = rng.choice(list("uvw"), ROWS, p=[0.5, 0.3, 0.2])
    return table, rare


def test_a_release_returns_dropped_categories_blank_not_as_the_majority() -> None:
    """The user's view: 2,000 rows, 8 auto columns, AIM at ε = 1, seeds 0-3. ``group`` holds
    'a' 62 %, 'b' 30 % and 8 % over 40 values of ~4 rows each, which DP discovery drops. Their
    rows must come back blank (at least half their share in each seed), and 'a' no higher than
    its input share plus half the dropped share; the columns that dropped nothing release no
    blank. The domain step's ``kept_rows`` is the kept values' rows within 4σ of its noise.
    Main released 0 % blank and 'a' at 74 / 72 / 77 % in seeds 0-2."""
    table, rare = dropped_table()
    dropped, majority = table["group"].isin(rare).mean(), (table["group"] == "a").mean()
    schema = {"columns": [{"name": name, "kind": "auto"} for name in table.columns]}
    problems = []
    for seed in range(4):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the low-ε warning about 2-way noise
            synth = Synthesizer(schema, epsilon=1.0, recipe="aim", seed=seed).fit(table)
        column = synth._fitted.synthesis.job.schema.column("group")
        # every column is decided categorical: discovery at the reallocated σ_c (the plan's
        # figure for that outcome; privacy.domain_budget, "Reallocation")
        domain_sigma = next(s.noise["category_sigma_reallocated"]
                            for s in synth._fitted.synthesis.plan.stages if s.stage == "domain")
        assert column.categories == ["a", "b"] and column.kept_rows is not None
        assert abs(column.kept_rows.sigma - domain_sigma * np.sqrt(2)) < 1e-9
        assert abs(column.kept_rows.count - (ROWS - dropped * ROWS)) <= 4 * column.kept_rows.sigma
        released = synth.synthetic
        blank, top = released["group"].isna().mean(), (released["group"] == "a").mean()
        if blank < dropped / 2 or top > majority + dropped / 2:
            problems.append(f"seed {seed}: blank {blank:.3f}, 'a' {top:.3f}")
        if released.drop(columns="group").isna().any().any():
            problems.append(f"seed {seed}: blanks in a column with none")
    assert not problems, (f"input: {dropped:.3f} dropped, 'a' {majority:.3f}; released: "
                          + "; ".join(problems))


def test_kept_rows_carry_the_discovery_noise() -> None:
    """``kept_rows`` reaches the release (the resolved schema, in the manifest), so it must be
    the sum of the kept values' *noisy* counts: over 200 seeded runs of the domain step on a
    fixed table, count − the kept values' exact rows has mean 0 and standard deviation σ·√k
    (σ the plan's discovery noise, k = 2 kept values), both within their 1e-4 sampling bounds
    (a sum of exact counts has deviation 0; mutation 'kept-rows-exact')."""
    job = Synthesizer({"columns": [
        {"name": "group", "kind": "categorical", "missing": True},
        {"name": "x", "kind": "categorical", "categories": ["u", "v"]}]},
        epsilon=1.0, recipe="independent").job
    rng = np.random.default_rng(1)
    table = pd.DataFrame({"group": rng.choice(["a", "b", "r1", "r2", "r3"], ROWS,
                                              p=[0.6, 0.37, 0.01, 0.01, 0.01]),
                          "x": rng.choice(["u", "v"], ROWS)})
    planned = plan_job(job)
    sigma = planned[0].stages[0].noise["sigma"] * np.sqrt(2)
    exact = int(table["group"].isin(["a", "b"]).sum())
    errors = []
    for seed in range(200):
        resolved, _ = resolve_domain(job, planned, Ledger("add_remove"), RandomSource.seeded(seed),
                                     [table])
        column = resolved.schema.column("group")
        assert column.categories == ["a", "b"] and column.kept_rows.sigma == sigma
        errors.append(column.kept_rows.count - exact)
    errors = np.asarray(errors)
    draws = len(errors)
    assert abs(errors.mean()) <= norm.isf(1e-4 / 2) * sigma / np.sqrt(draws), errors.mean()
    low, high = chi2.ppf([1e-4 / 2, 1 - 1e-4 / 2], draws - 1) / (draws - 1)
    ratio = errors.var(ddof=1) / sigma ** 2
    assert low <= ratio <= high, (
        f"kept_rows' variance is {ratio:.2f} σ²k (σ = {sigma:.1f}): the noisy counts give 1")


def test_kept_rows_records_carry_the_kinds_noise() -> None:
    """``kept_rows.records`` reaches the release (the manifest's schema), so it must be the
    kinds pass's noisy n̂: with one auto column it is that column's noisy non-empty count, the
    sum of its classes above 3σ_k (σ_k the plan's ``kind_sigma``), with ``records_sigma`` =
    √(π/2·c)·σ_k for c classes cleared. In the 60 seeded domain steps (400 rows) where one
    class (the tokens) cleared, the error has mean 0 and variance σ_k², both within their 1e-4
    sampling bounds (a noise class clearing 3σ, ≈ 5 % of runs over 40 classes, adds its noise:
    left out); n̂ from exact class counts has deviation 0 (mutation 'kinds-records-exact')."""
    job = Synthesizer({"columns": [
        {"name": "group", "kind": "auto"},
        {"name": "x", "kind": "categorical", "categories": ["u", "v"]}]},
        epsilon=1.0, recipe="independent").job
    rng = np.random.default_rng(2)
    rows = 400
    table = pd.DataFrame({"group": rng.choice(["a", "b", "r1"], rows, p=[0.6, 0.37, 0.03]),
                          "x": rng.choice(["u", "v"], rows)})
    planned = plan_job(job)
    sigma = planned[0].stages[0].noise["kind_sigma"]
    errors = []
    for seed in range(60):
        resolved, _ = resolve_domain(job, planned, Ledger("add_remove"), RandomSource.seeded(seed),
                                     [table])
        kept = resolved.schema.column("group").kept_rows
        cleared = (kept.records_sigma / sigma) ** 2 / (np.pi / 2)
        assert abs(cleared - round(cleared)) < 1e-9 and round(cleared) >= 1, kept
        if round(cleared) == 1:
            errors.append(kept.records - rows)
    errors = np.asarray(errors)
    draws = len(errors)
    assert draws >= 45, f"a noise class cleared 3σ in {60 - draws} of 60 runs"
    assert abs(errors.mean()) <= norm.isf(1e-4 / 2) * sigma / np.sqrt(draws), errors.mean()
    low, high = chi2.ppf([1e-4 / 2, 1 - 1e-4 / 2], draws - 1) / (draws - 1)
    ratio = errors.var(ddof=1) / sigma ** 2
    assert low <= ratio <= high, f"records' variance is {ratio:.2f} σ_k²: the noisy counts give 1"
