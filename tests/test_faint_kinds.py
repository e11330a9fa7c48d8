"""Faint columns in the DP kind step (synthpriv.kinds, "faint columns"): on a small table no class
clears the decimals bar, and the kind is read from the groups' peaks, each lessened by the
expected maximum of its noise-only classes. Seeded discrete Gaussian draws at a small table's kind
σ; each lower bound is a product of independent events that imply the right reading (derived in
the test's docstring), checked at a binomial 1e-9 quantile."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import binom, norm

from synthpriv.domain_stage import valued_cells
from synthpriv.kinds import (
    CLASSES,
    FRACTION_CLASSES,
    NUMBER_CLASSES,
    TEXT_CLASSES,
    decide,
    decide_precision,
    expected_maximum,
    faint_peaks,
    fraction_noise,
)
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource

DRAWS = 3000


def _exact(**counts: int) -> np.ndarray:
    """Exact class counts by label (underscores for spaces)."""
    table = dict.fromkeys(CLASSES, 0)
    for label, count in counts.items():
        table[label.replace("_", " ")] = count
    return np.array([table[c] for c in CLASSES], dtype=np.int64)


def _draws(exact: np.ndarray, sigma: float, seed: int = 3) -> np.ndarray:
    noisy = discrete_gaussian_histogram(np.tile(exact, DRAWS), sigma, RandomSource.seeded(seed))
    return noisy.reshape(DRAWS, len(CLASSES))


def _at_least(hits: int, p: float) -> bool:
    return hits >= binom.ppf(1e-9, DRAWS, p)


def test_expected_maximum_matches_closed_forms() -> None:
    """E[max of 2] = 1/√π, E[max of 3] = 3/(2√π); one count has no maximum to take (0)."""
    assert expected_maximum(1) == 0.0
    assert expected_maximum(2) == pytest.approx(1 / math.sqrt(math.pi), abs=1e-6)
    assert expected_maximum(3) == pytest.approx(3 / (2 * math.sqrt(math.pi)), abs=1e-6)
    assert expected_maximum(len(NUMBER_CLASSES)) > expected_maximum(len(FRACTION_CLASSES)) \
        > expected_maximum(len(TEXT_CLASSES))


def test_a_faint_fraction_column_is_read_continuous_at_its_decimals() -> None:
    """star98's shape: 303 cells of 6 decimals, 22 auto columns, kind σ 97 (the bar is 4.4σ: the
    class rarely clears it). Right when (A) the class draws ≥ 303 − σ/2 (Φ(0.5)), and then (B)
    whole ≤ that − 1.352σ (Φ(1.26)), (C) the other 6 decimals classes stay under it
    (Φ(2.62)^6) and (D) the text peak under it − 0.578σ (Φ(2.05)^3): ≥ 0.56. The former rule
    read it so in ~1 draw of 10 (nothing above the noise: categorical)."""
    sigma, columns = 97.0, 22
    assert fraction_noise(columns) * sigma > 303
    rows = _draws(_exact(**{"6_decimals": 303}), sigma)
    read = [(decide(r, sigma, columns=columns), decide_precision(r, sigma, columns)) for r in rows]
    hits = sum(d == ("continuous", 6) for d in read)
    a = norm.cdf(0.5)
    level = (303 - sigma / 2) / sigma
    b = norm.cdf(level - expected_maximum(len(FRACTION_CLASSES)))
    c = norm.cdf(level) ** 6
    d = norm.cdf(level - (expected_maximum(len(NUMBER_CLASSES))
                          - expected_maximum(len(TEXT_CLASSES)))) ** 3
    assert _at_least(hits, a * b * c * d)
    assert a * b * c * d > 0.5


def test_a_faint_integer_column_stays_integer() -> None:
    """Hitters' shape: 322 whole numbers, 20 auto columns, σ 93 (bar b = fraction_noise·σ ≈ 4.3σ).
    With every decimals class ≤ L = 322 − σ: log Σ_d exp(n·x_d/σ²) − log 7 ≤ n·max_d x_d/σ², so
    whole wins ``fractions_likelier`` once whole ≥ L. Right when either (A) whole in [L, b)
    (faint: Φ(b/σ − 322/σ) − Φ(−1)), every decimals class ≤ L (Φ(L/σ)^7) and every text class
    under whole + 0.774σ (its score below the numbers': Φ(L/σ + 0.774)^3); or (A′) whole ≥ b
    (not faint: 1 − Φ(b/σ − 322/σ)), no decimals class clears b (Φ(b/σ)^7) and the three
    clipped text classes sum under b (each under b/3: Φ(b/3σ)^3). Disjoint: the bound is the
    sum."""
    sigma, columns = 93.0, 20
    rows = _draws(_exact(whole=322), sigma)
    hits = sum(decide(r, sigma, columns=columns) == "integer" for r in rows)
    bar = fraction_noise(columns)
    level = (322 - sigma) / sigma
    gap = expected_maximum(len(NUMBER_CLASSES)) - expected_maximum(len(FRACTION_CLASSES)) \
        - expected_maximum(len(TEXT_CLASSES))
    faint = (norm.cdf(bar - 322 / sigma) - norm.cdf(-1)) * norm.cdf(level) ** 7 * \
        norm.cdf(level - gap) ** 3
    clear = (1 - norm.cdf(bar - 322 / sigma)) * norm.cdf(bar) ** 7 * norm.cdf(bar / 3) ** 3
    assert _at_least(hits, faint + clear)
    assert faint + clear > 0.75


def test_a_faint_fraction_column_is_not_rounded_to_integers() -> None:
    """macrodata's ``tbilrate``: 200 cells of 2 decimals, 14 auto columns, σ 77.7 (the bar b ≈
    4.3σ). With the 2-decimals class x ≥ L = 200 − σ/2 the largest number count (n = x): log
    Σ_d exp(n·x_d/σ²) − log 7 ≥ n·x/σ² − log 7, so fractions win once whole ≤ x − σ²·log 7/x,
    which whole ≤ L − σ²·log 7/L implies. Right (continuous, 2 decimals) when (A) x in [L, b)
    (Φ(b/σ − 200/σ) − Φ(−0.5)), (B) whole under L − σ²·log 7/L, (C) the other 6 decimals
    classes under L (Φ(L/σ)^6) and (D) every text class under L − 0.578σ (its score below the
    numbers': Φ(·)^3): ≥ 0.40 (measured ~0.82). The former rule (the decimals peak less 1.35σ must
    beat whole) read this column as integers in ~1 draw of 6; the exact cases of
    test_faint_peaks_reads_the_likeliest_class tell the two rules apart."""
    sigma, columns = 77.7, 14
    rows = _draws(_exact(**{"2_decimals": 200}), sigma)
    read = [(decide(r, sigma, columns=columns), decide_precision(r, sigma, columns)) for r in rows]
    hits = sum(d == ("continuous", 2) for d in read)
    low = 200 - sigma / 2
    a = norm.cdf(fraction_noise(columns) - 200 / sigma) - norm.cdf(-0.5)
    b = norm.cdf((low - sigma**2 * math.log(len(FRACTION_CLASSES)) / low) / sigma)
    c = norm.cdf(low / sigma) ** 6
    d = norm.cdf(low / sigma - (expected_maximum(len(NUMBER_CLASSES))
                                - expected_maximum(len(TEXT_CLASSES)))) ** 3
    assert _at_least(hits, a * b * c * d)
    assert a * b * c * d > 0.4


def test_a_faint_text_column_stays_text() -> None:
    """Hitters' `League`: 322 tokens, σ 93. Right when (A) tokens ≥ 322 − σ (Φ(1)), (B) whole
    under its score + 0.072σ and (C) every decimals class under that + 1.352σ."""
    sigma, columns = 93.0, 20
    rows = _draws(_exact(token=322), sigma)
    hits = sum(decide(r, sigma, columns=columns) == "categorical" for r in rows)
    score = (322 - sigma) / sigma - expected_maximum(len(TEXT_CLASSES))
    gap = expected_maximum(len(NUMBER_CLASSES)) - expected_maximum(len(FRACTION_CLASSES))
    bound = norm.cdf(1) * norm.cdf(score + gap) * \
        norm.cdf(score + gap + expected_maximum(len(FRACTION_CLASSES))) ** 7
    assert _at_least(hits, bound)
    assert bound > 0.75


@pytest.mark.parametrize(("counts", "reading"), [
    ({"6_decimals": 300}, ("fractions", 5)),
    ({"whole": 300}, ("whole", -1)),
    ({"words": 300}, ("text", 1)),
    ({"whole": 300, "2_decimals": 320}, ("whole", -1)),  # fractions must beat whole by 61 rows
    ({"whole": 150, "2_decimals": 320}, ("fractions", 1)),
    ({"whole": 100, "2_decimals": 200}, ("fractions", 1)),  # by 97 rows: the former 1.35σ said whole
    ({"whole": 110, "2_decimals": 200}, ("whole", -1)),
    ({"whole": 100, "2_decimals": 200, "3_decimals": 200}, ("fractions", 1)),  # two: log 7 − log 2
])
def test_faint_peaks_reads_the_likeliest_class(counts: dict, reading: tuple) -> None:
    """Exact counts as the noisy ones (σ 100, 22 columns: every count under the 4.4σ bar)."""
    assert faint_peaks(_exact(**counts).astype(float), 100.0, 22) == reading


def test_a_column_with_a_class_above_the_bar_is_not_faint() -> None:
    """Any text or number class above z·σ, or no positive count at all: the former rule reads
    it (an empty histogram stays categorical: nothing to read)."""
    sigma, columns = 10.0, 3
    bar = fraction_noise(columns) * sigma
    assert faint_peaks(_exact(whole=int(bar) + 1).astype(float), sigma, columns) is None
    assert faint_peaks(_exact().astype(float), sigma, columns) is None
    assert decide(_exact().astype(float), sigma, columns=columns) == "categorical"


def test_a_faint_fraction_column_counts_as_holding_numbers() -> None:
    """The DP bounds' seed reads the decided kind's cells (``valued_cells``): a faint column read
    as fractions counts its peak decimals class, not only its (empty) whole class."""
    noisy = _exact(**{"6_decimals": 300}).astype(float)
    present = valued_cells(noisy, 100.0, "continuous", 22)
    assert present.count == pytest.approx(300.0)
