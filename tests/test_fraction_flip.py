"""Zero-heavy fraction columns decided integer, read back as continuous (synthpriv.fraction_flip,
branch zerofrac): the test against its definition (rounded − whole + one decimals class against
z·σ of that sum), its false-positive guard (integer columns with many zeros: a 0/1 flag, Boston's
``chas``, Adult's ``capital-gain``: never or at most KIND_ERROR), and the domain step's use of it
(post-processing: the same events, nothing else moved). Seeded discrete Gaussian draws; rates
checked at binomial 1e-9 quantiles."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, norm

from synthpriv import domain_stage
from synthpriv.config import load_job
from synthpriv.fraction_flip import fraction_domain, rounded_fractions
from synthpriv.kinds import CLASSES, FRACTION_CLASSES, KIND_ERROR, fraction_noise
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.bounds import Buckets, read_bounds
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from tests.test_kinds import _job

DRAWS = 3000
KIND_SIGMA, BOUNDS_SIGMA = 40.0, 20.0


def _exact(**counts: int) -> np.ndarray:
    table = dict.fromkeys(CLASSES, 0)
    for label, count in counts.items():
        table[label.replace("_", " ")] = count
    return np.array([table[c] for c in CLASSES], dtype=np.int64)


def _passes(classes: np.ndarray, rounded: int, columns: int = 1, seed: int = 3) -> list:
    """``rounded_fractions`` on DRAWS seeded draws of the class histogram (σ KIND_SIGMA) and of
    the three one-value buckets (σ BOUNDS_SIGMA each; ``rounded`` cells in all)."""
    source = RandomSource.seeded(seed)
    noisy = discrete_gaussian_histogram(np.tile(classes, DRAWS), KIND_SIGMA, source)
    ones = discrete_gaussian_histogram(np.tile([0, rounded, 0], DRAWS), BOUNDS_SIGMA, source)
    noisy, ones = noisy.reshape(DRAWS, len(CLASSES)), ones.reshape(DRAWS, 3).sum(axis=1)
    return [rounded_fractions(n, KIND_SIGMA, float(o), BOUNDS_SIGMA * math.sqrt(3), columns)
            for n, o in zip(noisy, ones, strict=True)]


def test_the_test_is_its_definition_on_exact_counts() -> None:
    """No noise: passes on the class c maximising rounded − whole + count(c) exactly when that
    sum exceeds fraction_noise(columns)·√(σ_r² + 2σ²)."""
    bar = fraction_noise(5) * math.sqrt(3 * BOUNDS_SIGMA**2 + 2 * KIND_SIGMA**2)
    for fractions in (0, 100, int(bar / 2) - 1, int(bar / 2) + 1, 400):
        classes = _exact(whole=750, **{"2_decimals": fractions})
        found = rounded_fractions(classes, KIND_SIGMA, 750.0 + fractions,
                                  BOUNDS_SIGMA * math.sqrt(3), 5)
        assert found == (1 if 2 * fractions > bar else None)


def test_a_faint_fraction_column_with_75_percent_zeros_is_found() -> None:
    """750 whole zeros and 250 fractions of 2 decimals, one auto column: the sum's mean is 500,
    its σ √(3·20² + 2·40²) = 63.2, the bar 3.63σ = 230; a draw fails only when the sum's noise
    is below −270 (4.3σ) or another class's beats it (each 250 below: ≥ 2.8σ of their
    difference's noise, 6 classes) — P(fail) ≤ Φ(−4.3) + 6·Φ(−250/56.6) ≈ 3e-5. The decimals
    test alone (250 against 3.63·40 = 145) is not the point here: the flip is read from the
    rounded buckets too."""
    found = _passes(_exact(whole=750, **{"2_decimals": 250}), 1000)
    p = 1 - (norm.sf(270 / 63.2) + 6 * norm.sf(250 / 56.6))
    assert sum(f == FRACTION_CLASSES.index("2 decimals") for f in found) >= binom.ppf(1e-9, DRAWS, p)


@pytest.mark.parametrize("whole, rounded", [(1000, 1000),  # a 0/1 flag: every cell in {0, 1}
                                            (1000, 1000),  # Boston's chas: 93 % 0, 7 % 1
                                            (1000, 911)])  # capital-gain: 91 % 0, rest ≥ 114
def test_integer_columns_with_many_zeros_pass_at_most_kind_error(whole: int, rounded: int) -> None:
    """No fraction cell: E[rounded − whole] ≤ 0 and every decimals class is noise, so a draw
    passes with probability ≤ KIND_ERROR (one auto column: the union bound over its 7 classes);
    a column with whole values outside {−1, 0, 1} (capital-gain's 89 cells) less often still."""
    found = _passes(_exact(whole=whole), rounded, seed=5)
    hits = sum(f is not None for f in found)
    assert hits <= binom.ppf(1 - 1e-9, DRAWS, KIND_ERROR)
    if rounded < whole:
        assert hits == 0  # 89 cells below: the bar is 3.63σ + 1.4σ away


def test_the_domain_of_a_flipped_column() -> None:
    """Zeros only on the integer grid: continuous [0, 0.5] at the passing class's decimals with 0
    its point mass; a reading [0, 1] (fractions ≥ 0.5 rounded to 1): upper 1.5, no pile at 1
    (it is fractions rounded there); an integer column of 0s and 1s is left alone (None)."""
    grid = Buckets("integer")
    def counts(values: dict[int, int]) -> np.ndarray:
        out = np.zeros(grid.size)
        for value, count in values.items():
            out[grid.zero + value] = count
        return out

    classes = _exact(whole=750, **{"1_decimal": 250})
    zeros = counts({0: 1000})
    reading = read_bounds(zeros, BOUNDS_SIGMA, grid)
    domain = {"lower": 0.0, "upper": 0.5, "spread_clipped": [], "point_masses": [0.0],
              "heap_counts": [{"value": 0.0, "count": 1000, "sigma": 20.0}]}
    flipped = fraction_domain("x", domain, reading, zeros, BOUNDS_SIGMA, grid, classes, KIND_SIGMA)
    assert flipped == {"name": "x", "kind": "continuous", "missing": True, "coerce": True,
                       "precision": 1, "lower": 0.0, "upper": 0.5, "spread_clipped": [],
                       "point_masses": [0.0]}
    ones = counts({0: 800, 1: 200})
    reading = read_bounds(ones, BOUNDS_SIGMA, grid)
    domain = {"lower": 0.0, "upper": 1.0, "spread_clipped": [], "point_masses": [0.0, 1.0]}
    flipped = fraction_domain("x", domain, reading, ones, BOUNDS_SIGMA, grid, classes, KIND_SIGMA)
    assert (flipped["lower"], flipped["upper"], flipped["point_masses"]) == (0.0, 1.5, [0.0])
    flag = _exact(whole=1000)
    assert fraction_domain("x", domain, reading, ones, BOUNDS_SIGMA, grid, flag, KIND_SIGMA) is None
    continuous = Buckets("continuous")  # decided continuous (its own grid): nothing to flip
    assert fraction_domain("x", domain, reading, np.zeros(continuous.size), BOUNDS_SIGMA,
                           continuous, classes, KIND_SIGMA) is None


def _table(n: int = 1500) -> pd.DataFrame:
    """75 % zeros and fractions of 1 and 2 decimals in (0, 0.4] (an OJ discount column), a 0/1
    flag, a 7 %-ones column (Boston's chas) and a 91 %-zero amount (Adult's capital-gain)."""
    rng = np.random.default_rng(0)
    k = n // 4
    disc = np.r_[np.zeros(n - k), rng.choice([0.1, 0.2, 0.3, 0.4], k // 2),
                 rng.choice([0.15, 0.25, 0.35], k - k // 2)]
    return pd.DataFrame({"disc": rng.permutation(disc), "flag": rng.integers(0, 2, n),
                         "chas": (rng.random(n) < 0.07).astype(int),
                         "gain": np.where(rng.random(n) < 0.91, 0, rng.integers(114, 99999, n))})


def _resolved(tmp_path: Path, seed: int, monkeypatch, flip: bool):
    """The domain step on ``_table`` with ``disc`` decided integer whatever its decimals classes
    show (the kinds pass's decision forced: the flip alone is under test), the rule on or off."""
    real = domain_stage.decide
    decided = iter(range(10**6))

    def decide(noisy, sigma, *args, **kwargs):
        kind = real(noisy, sigma, *args, **kwargs)
        return "integer" if next(decided) == 0 else kind  # ``disc``, the first auto column

    monkeypatch.setattr(domain_stage, "decide", decide)
    if not flip:
        monkeypatch.setattr(domain_stage, "fraction_domain", lambda *a, **k: None)
    job = load_job(_job(tmp_path / f"{seed}-{flip}", _table(), seed=seed))
    ledger = Ledger(job.config.budget.neighbouring)
    resolved, _ = resolve_domain(job, plan_job(job), ledger, RandomSource.seeded(seed))
    monkeypatch.undo()
    return resolved.schema, ledger


@pytest.mark.parametrize("seed", [0, 1])
def test_the_domain_step_flips_the_fraction_column_and_nothing_else(tmp_path: Path, seed: int,
                                                                    monkeypatch) -> None:
    """1,500 rows at ε = 1 (kind σ 38.8, bounds σ 19.4, 4 auto columns: the bar 3.97·62.1 =
    247 against a mean of 375 + 187): ``disc``, forced integer, is released continuous on [0,
    0.5] with 0 a point mass and 1 or 2 decimals; the flag, the chas-like and the capital-gain
    columns and the ledger are as with the rule off (post-processing: no event, no draw)."""
    on, ledger_on = _resolved(tmp_path, seed, monkeypatch, True)
    off, ledger_off = _resolved(tmp_path, seed, monkeypatch, False)
    disc = on.column("disc")
    assert (disc.kind, disc.lower, disc.upper, disc.point_masses) == ("continuous", 0.0, 0.5,
                                                                     [0.0])
    assert disc.precision in (1, 2) and off.column("disc").kind == "integer"
    for name in ("flag", "chas", "gain"):
        assert on.column(name) == off.column(name) and on.column(name).kind == "integer"
    assert [repr(e) for e in ledger_on.events] == [repr(e) for e in ledger_off.events]
