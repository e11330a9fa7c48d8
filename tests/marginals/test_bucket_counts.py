"""The DP bounds' noisy bucket counts as free measurements of the 1-way cells (issue 24 item 4,
bucketmeas): ``bucket_counts`` on the resolved numeric column (DP outputs of the domain step's
one histogram event), combined by generalised least squares with the grid-level 1-way counts
(``compress.with_buckets``) before the adaptive domain is chosen. Post-processing: no budget,
no event."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv import Synthesizer
from synthpriv.config import load_job
from synthpriv.errors import SchemaError
from synthpriv.marginals import stage as stage_module
from synthpriv.marginals.compress import (
    BucketGroup,
    bucket_groups,
    bucket_masses,
    fitted_masses,
    with_buckets,
)
from synthpriv.marginals.measurement import Measurement
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import Buckets
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from tests.marginals.noise_checks import assert_error_variance, assert_same_spend


def _column(buckets: list[tuple[float, float, float, float]], **extra):
    entry = {"name": "x", "kind": "integer", "lower": 0, "upper": 100, "missing": True,
             "bucket_counts": [{"lower": lo, "upper": hi, "count": c, "sigma": s}
                               for lo, hi, c, s in buckets], **extra}
    return parse_schema({"columns": [entry]}, "test").column("x")


def _gls(counts: np.ndarray, variance: np.ndarray, rows: list[np.ndarray],
         measured: list[float], measured_var: list[float]) -> tuple[np.ndarray, np.ndarray]:
    """The textbook GLS estimate of the cells from the cells' own noisy counts and sums over
    ``rows`` (cell sets): (AᵀWA)⁻¹AᵀWy with A = [I; indicator rows], and its variances."""
    size = len(counts)
    design = np.vstack([np.eye(size)] + [np.isin(np.arange(size), r).astype(float)[None, :]
                                         for r in rows])
    weights = np.diag(1.0 / np.concatenate([variance, measured_var]))
    y = np.concatenate([counts, measured])
    precision = design.T @ weights @ design
    cov = np.linalg.inv(precision)
    return cov @ design.T @ weights @ y, np.diag(cov)


def test_a_bucket_is_the_gls_update_of_its_cells() -> None:
    """Known input: one grid cell per integer 0..100 (σ 10, cell 3 σ 5), bucket counts for
    [0, 0] (the cell of 0 alone), [4, 7] and [8, 15]: each cell equals the textbook GLS estimate
    of all measurements (independent noises), with its variance; cells of no bucket and the
    missing code keep theirs."""
    spans = [(0, 0), (1, 1), (2, 3), (4, 7), (8, 15), (16, 31), (32, 63), (64, 127)]
    rng = np.random.default_rng(0)
    column = _column([(lo, hi, 10 * (hi - lo + 1) + rng.normal(0, 6), s) for (lo, hi), s
                      in zip(spans, [4, 4, 4, 6, 8, 8, 8, 8], strict=True)], upper=127)
    cells = len(column.bin_edges()) - 1 + 1
    noisy = rng.normal(10, 5, cells)
    sigma = np.full(cells, 10.0)
    sigma[3] = 5.0
    to_grid = np.arange(cells)
    out = with_buckets(column, Measurement(("x",), noisy, sigma), to_grid)
    rows = [np.arange(lo, hi + 1) for lo, hi in spans]
    expected, variance = _gls(noisy, sigma ** 2, rows, [b.count for b in column.bucket_counts],
                              [b.sigma ** 2 for b in column.bucket_counts])
    assert np.allclose(out.noisy_counts, expected)
    assert np.allclose(np.square(out.sigma), variance)
    assert out.noisy_counts[-1] == noisy[-1]  # the missing code


def test_a_straddled_bucket_edge_reads_the_two_buckets_as_one() -> None:
    """Grid cells [0], [1..5], [6..9], [10..100] (public): the edge 8 of the bucket [8, 15]
    falls inside [6..9], so [4, 7] and [8, 15] measure the cells [1..5]'s part … only together;
    with [2, 3] (edge 2 inside [1..5]) and [16, 31], [32, 63], [64, 127] (inside [10..100])
    all buckets from 1 on are one sum: its count the buckets' sum, its variance theirs."""
    buckets = [(0, 0, 30, 4), (1, 1, 7, 4), (2, 3, 9, 4), (4, 7, 50, 6), (8, 15, 20, 8),
               (16, 31, 60, 8), (32, 63, 80, 8), (64, 127, 90, 8)]
    column = _column(buckets)
    values = len(column.bin_edges()) - 1
    to_grid = np.concatenate([[0], np.full(5, 1), np.full(4, 2), np.full(values - 10, 3), [4]])
    groups = bucket_groups(column, to_grid)
    assert [g.cells.tolist() for g in groups] == [[0], [1, 2, 3]]
    assert groups[1].count == pytest.approx(sum(b[2] for b in buckets[1:]))
    assert groups[1].variance == pytest.approx(sum(b[3] ** 2 for b in buckets[1:]))
    assert groups[0].sides == ("lower",) and groups[1].sides == ("upper",)
    # buckets beyond the upper bound 100 ([64, 127] holds it): counted in the last group
    assert groups[1].beyond == {"upper": (0.0, 0.0)}


def test_cells_holding_rows_clipped_from_unseen_buckets_are_left_alone() -> None:
    """Bounds [0, 3] on a column whose rows go far beyond (the noise showed no bucket there):
    the cell of 3 holds every clipped row, 500 where the bucket [2, 3] counts 60; the group is
    left unchanged (the one-sided test), while the zero bucket still combines."""
    column = _column([(0, 0, 100, 10), (1, 1, 40, 10), (2, 3, 60, 10)], upper=3, missing=False)
    noisy = np.array([90.0, 45.0, 30.0, 500.0])
    out = with_buckets(column, Measurement(("x",), noisy, 20.0), np.arange(4))
    assert out.noisy_counts[3] == 500.0 and out.noisy_counts[2] == 30.0
    assert out.noisy_counts[0] == pytest.approx((90 / 400 + 100 / 100) / (1 / 400 + 1 / 100))


def _bound_heap_column(top: float):
    """Bounds [0, 50], heaps at both; carried buckets [-1, -1] (beyond 0) to [32, 63] (holding
    50 inside: 51-63 clipped onto it), the last counting ``top``."""
    return _column([(-1, -1, 5, 3), (0, 0, 100, 10), (1, 1, 40, 10), (2, 3, 60, 10),
                    (4, 7, 10, 10), (8, 15, 10, 10), (16, 31, 10, 10), (32, 63, top, 10)],
                   lower=0, upper=50, missing=False, point_masses=[0, 50],
                   heap_counts=[{"value": 0, "count": 110, "sigma": 8},
                                {"value": 50, "count": 30, "sigma": 8}])


@pytest.mark.parametrize("top", [10.0, 200.0])
def test_a_heap_at_a_clipped_bound_is_combined_from_what_the_buckets_measure(top: float) -> None:
    """The heap at the lower bound 0 (its bucket [0, 0] starts there) measures the cell of 0
    with the carried bucket beyond it ([-1, -1], clipped onto 0): heap + beyond, variance
    σ_h² + σ_b²; the cell is the GLS of its count, that and the zero bucket + beyond. The heap
    at 50, inside its bucket [32, 63]: combined (variance σ_h² + σ_R², σ_R² = σ_b² + σ_h²) when
    the bucket less its heap reads as no other rows (10 − 30: < 2.5σ_R), not when it holds
    170 more (rows of 51-63 are clipped onto 50)."""
    column = _bound_heap_column(top)
    noisy = np.full(len(column.bin_edges()) - 1, 2.0)
    noisy[0] = 90.0
    out = with_buckets(column, Measurement(("x",), noisy, 20.0), np.arange(len(noisy)))
    expected, _ = _gls(np.array([90.0]), np.array([400.0]), [[0], [0]], [115, 105],
                       [64 + 9, 100 + 9])
    assert out.noisy_counts[0] == pytest.approx(expected[0])
    last = len(noisy) - 2  # the cell of 50 among the cells from 1 on
    spans = [np.arange(lo - 1, hi) for lo, hi in [(1, 1), (2, 3), (4, 7), (8, 15), (16, 31),
                                                  (32, 50)]]
    counts, variances = [40, 60, 10, 10, 10, top], [100] * 6
    if top - 30 < 2.5 * np.sqrt(100 + 64):
        spans, counts, variances = spans + [[last]], counts + [30], variances + [64 + 164]
    reference, _ = _gls(noisy[1:], np.full(len(noisy) - 1, 400.0), spans, counts, variances)
    assert np.allclose(out.noisy_counts[1:], reference)


def test_an_empty_bucket_groups_cells_take_at_most_what_its_sum_holds() -> None:
    """Masses (``bucket_masses``): a group of 4 cells of noise beyond the data (sum 5, below 3σ
    of its bucket counts' σ = 10) keeps 5 rows in all (scaled with the column to its total),
    where the column's one projection (``fitted_masses``) left 62 rows of its noise there; the
    group holding rows (1,200, far above 3σ) keeps the column's projection; every mass ≥ 0
    and the column keeps its total. With the noise group's sum significant (σ = 1) nothing
    changes."""
    noisy = np.array([500.0, 400.0, 300.0, 60.0, -50.0, 40.0, -45.0])
    total = 1205.0
    one = fitted_masses(noisy, total)
    assert one[3:].sum() > 60  # the one projection: the noise stays
    groups = [BucketGroup(np.arange(3), 1190.0, 100.0), BucketGroup(np.arange(3, 7), 0.0, 100.0)]
    mass = bucket_masses(noisy, total, groups)
    assert mass.sum() == pytest.approx(total) and (mass >= 0).all()
    scale = total / (one[:3].sum() + 5.0)
    assert mass[3:].sum() == pytest.approx(5.0 * scale)
    assert np.allclose(mass[:3], one[:3] * scale)
    seen = [groups[0], BucketGroup(np.arange(3, 7), 0.0, 1.0)]
    assert np.array_equal(bucket_masses(noisy, total, seen), one)
    assert np.array_equal(bucket_masses(noisy, total, []), one)


def test_bucket_counts_must_be_disjoint_and_on_an_adaptive_column() -> None:
    with pytest.raises(SchemaError, match="disjoint buckets in increasing order"):
        _column([(0, 3, 1, 1), (2, 7, 1, 1)])
    with pytest.raises(SchemaError, match="adaptive column"):
        _column([(0, 0, 1, 1)], bins=10)


# --- the domain step and the pipeline: noisy counts, the ledger unchanged ---------------------

ROWS = 2000


def _table(seed: int = 5) -> pd.DataFrame:
    """An integer count, 25 % zeros, the rest spread over 1-1,000 (bounds read [0, 2,047]
    whatever the noise: the guard adds a bucket), and a categorical column."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(ROWS) < 0.25, 0, rng.integers(1, 1001, ROWS))
    return pd.DataFrame({"x": x, "g": rng.choice(["u", "v", "w"], ROWS)})


SCHEMA = {"columns": [{"name": "x", "kind": "integer"},
                      {"name": "g", "kind": "categorical", "categories": ["u", "v", "w"]}]}


def test_the_carried_bucket_counts_are_the_histograms_noisy_ones(tmp_path) -> None:
    """24 seeded domain steps: each carried bucket count less the exact count of its bucket has
    mean 0 and variance σ² (the plan's bounds σ), and the entry's σ says so. Carried exact
    (mutation 'bucket-counts-exact') the variance is 0."""
    table = _table()
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump(SCHEMA))
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({
        "name": "buckets", "data": {"path": "train.csv", "schema": "schema.yaml"},
        "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "mst"},
        "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")}}))
    table.to_csv(tmp_path / "train.csv", index=False)
    job = load_job(tmp_path / "job.yaml")
    planned = plan_job(job)
    sigma = next(s for s in planned[0].stages if s.stage == "domain").noise["sigma"]
    grid = Buckets("integer")
    exact = grid.counts(table["x"].to_numpy(dtype=float))
    errors, widened = [], 0
    for seed in range(24):
        resolved, _ = resolve_domain(job, planned, Ledger("add_remove"),
                                     RandomSource.seeded(seed), [table])
        column = resolved.schema.column("x")
        # [0, 1,023] and the guard's bucket beyond (further where the bounds' tail windows read
        # the noise beyond as a tail, ≤ FALSE_TAIL ≈ 0.6 % of draws): every bucket inside
        # carried, none selected
        assert column.lower == 0.0 and column.upper >= 2047.0, (column.lower, column.upper)
        widened += column.upper > 2047.0
        top = int(np.log2(column.upper + 1))
        assert [b.lower for b in column.bucket_counts] == [0] + [2 ** j for j in range(top)]
        for bucket in column.bucket_counts:
            assert bucket.sigma == pytest.approx(sigma)
            errors.append(bucket.count - exact[grid.index(np.array([bucket.lower]))[0]])
    assert_error_variance(np.asarray(errors), sigma ** 2, "carried bucket counts")
    assert widened <= 2, f"bounds past [0, 2,047] in {widened} of 24 draws"


def test_the_combined_zero_cell_carries_every_noise(monkeypatch) -> None:
    """MST at ε = 1, 12 seeded runs: the grid cell of 0 after ``with_buckets`` less its exact
    count (500-ish zeros) has mean 0 and the variance its σ states, 1/(1/v + 1/σ_b² +
    1/(σ_h² + …)) from its input's v — well below the input's; with exact bucket counts the
    spread would be below the stated variance, with the buckets dropped above it."""
    table = _table()
    seen: list[tuple[dict, dict]] = []
    combine = stage_module.MarginalsStage._with_buckets

    def spy(state, one_way, combined, grid):  # the real combination, its in- and output kept
        out, groups = combine(state, one_way, combined, grid)
        seen.append(({m.clique[0]: m for m in one_way} | dict(combined), out))
        return out, groups

    monkeypatch.setattr(stage_module.MarginalsStage, "_with_buckets", staticmethod(spy))
    zeros = int((table["x"] == 0).sum())
    errors, ratios = [], []
    for seed in range(12):
        seen.clear()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            Synthesizer(SCHEMA, epsilon=1.0, recipe="mst", seed=seed).fit(table)
        before, after = seen[0]
        sigma = np.broadcast_to(after["x"].sigma, np.shape(after["x"].noisy_counts))
        prior = np.broadcast_to(before["x"].sigma, np.shape(before["x"].noisy_counts))
        errors.append((after["x"].noisy_counts[0] - zeros) / sigma[0])
        ratios.append(sigma[0] / prior[0])
    assert max(ratios) < 0.9, ratios  # the buckets (and the heap at 0) did add information
    assert_error_variance(np.asarray(errors), 1.0, "combined zero cells (standardised)")


@pytest.mark.parametrize("recipe", ["mst", "aim"])
def test_a_release_spends_the_same_with_and_without(recipe: str, monkeypatch) -> None:
    """The same seeded job with and without the combination records the same ε (and, for MST,
    the same events); the release differs, so the combination was used."""
    table = _table()

    def run() -> Synthesizer:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return Synthesizer(SCHEMA, epsilon=1.0, recipe=recipe, seed=4).fit(table)

    after = run()
    assert after.job.schema.column("x").bucket_counts
    monkeypatch.setattr(stage_module, "with_buckets", lambda column, m, to_grid: m)
    assert_same_spend(after, run(), recipe)
