"""A fitted tail beyond the bulk that reads as noise is estimated empty (``compress._noise_tails``,
issue 24 item 4, branch emptymass): the χ̄² of the non-increasing fit plus the rows the bulk
leaves for the tails must pass 3σ (9), else the side holds 0 and its fitted noise goes back to
the other cells (total kept). ISLP OJ: a fake store 5-6 at 8 % where the real ones are 0-4.

Theory used by the tolerances: under the null (every tail cell 0, the bulk holding the total)
the statistic is a mixture of χ²_l (l positive blocks, plus one for the bulk's shortfall half
the time) with l ≤ 3 in all but a small share of draws: P(≥ 9) ≤ P(χ²_3 ≥ 9) ≈ 2.9 %. A tail
of T rows makes the shortfall D ~ N(T, σ_D²): at T = 5σ_D, (D/σ_D)² ≥ 9 unless D < 3σ_D,
P(Z < −2) ≈ 2.3 %."""

from __future__ import annotations

import numpy as np

from synthpriv.domain import Dataset
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import tail_masses
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

SIGMA = 60.0
DRAWS = 400
BULK = np.array([350.0, 160.0, 220.0, 200.0, 140.0])  # OJ's STORE 0-4, 1,070 rows


def _tail_kept(exact: np.ndarray, tail: np.ndarray, seed: int) -> float:
    """The mass ``tail_masses`` leaves on the ``tail`` cells for one seeded noisy draw."""
    rng = np.random.default_rng(seed)
    noisy = exact + rng.normal(0, SIGMA, len(exact))
    mass, _ = tail_masses(noisy, np.full(len(exact), SIGMA), float(exact.sum()))
    return float(mass[tail].sum())


def test_an_empty_tail_of_noise_keeps_rows_at_most_at_the_stated_rate() -> None:
    """Stores 0-4 hold every row, 5-9 none (DP bounds wider than the data): the empty tail
    keeps mass in at most 2.9 % of draws (+3 binomial sd over 400 draws: 5.4 %); before, in
    about half (each draw whose isotonic fit had a positive first block)."""
    exact = np.concatenate([BULK * 3, np.zeros(5)])  # the bulk at ≥ 7σ: always the bulk
    tail = np.arange(len(exact)) >= 5
    kept = np.array([_tail_kept(exact, tail, seed) for seed in range(DRAWS)])
    bound = 0.029 + 3 * np.sqrt(0.029 * 0.971 / DRAWS)
    assert np.mean(kept > 0) <= bound, np.mean(kept > 0)


def test_a_real_tail_the_bulk_leaves_rows_for_is_kept() -> None:
    """A tail of 5σ_D rows (σ_D = σ√5 over the bulk's 5 cells) spread over 5 cells of about
    1.2σ each — none significant alone: kept in ≥ 97.7 % of draws less 3 binomial sd, and
    about its rows on average (the isotonic fit keeps its blocks' sums)."""
    rows = 5 * SIGMA * np.sqrt(5)
    tail_counts = rows * np.array([0.3, 0.25, 0.2, 0.15, 0.1])
    exact = np.concatenate([BULK * 3, tail_counts])
    tail = np.arange(len(exact)) >= 5
    kept = np.array([_tail_kept(exact, tail, seed) for seed in range(DRAWS)])
    assert np.mean(kept > 0) >= 0.977 - 3 * np.sqrt(0.977 * 0.023 / DRAWS), np.mean(kept > 0)
    assert abs(np.mean(kept) - rows) <= 0.25 * rows, (np.mean(kept), rows)


SCHEMA = parse_schema({"columns": [
    {"name": "store", "kind": "integer", "lower": 0, "upper": 255, "spread_clipped": ["upper"]},
    {"name": "city", "kind": "categorical", "categories": list("abc")},
]}, "test")


class _OneWayFrom:
    """1-way marginals of ``one_way``, everything else (row count included) of ``rest``: what
    the stage sees if the raw table were altered right after the 1-way measurement."""

    def __init__(self, one_way: Dataset, rest: Dataset) -> None:
        self.one_way, self.rest, self.domain = one_way, rest, one_way.domain

    @property
    def records(self) -> int:
        return self.rest.records

    @property
    def codes(self) -> np.ndarray:
        return self.rest.codes

    def marginal(self, attributes):
        return (self.one_way if len(attributes) == 1 else self.rest).marginal(attributes)

    def marginals(self, cliques):
        return {tuple(c): self.marginal(c) for c in cliques}


def _codes(rows: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return np.stack([rng.integers(0, 5, rows), rng.integers(0, 3, rows)], axis=1)


def _masses(data) -> np.ndarray:
    encoder = TableEncoder(SCHEMA)
    context = PlanContext(encoder.domain, "add_remove", 1e-6)
    state = PipelineState(context, encoder, data)
    stage = MarginalsStage({"selection": "mst", "iterations": 20}, context, "test")
    stage.run(state, stage.plan(0.05), Ledger(), RandomSource.seeded(3))
    return state.coarsening.masses["store"]


def test_the_tail_decision_reads_noisy_counts_only() -> None:
    """The DP-bounded column's decoding masses (tails tested and emptied) are the same when the
    raw table, its row count included, changes after the 1-way measurement: the test's total is
    n̂ from the noisy 1-way counts, never the true count."""
    domain = TableEncoder(SCHEMA).domain
    original = Dataset(_codes(1_070, 1), domain)
    altered = Dataset(_codes(1_500, 2), domain)
    plain = _masses(original)
    assert plain[5:].sum() < 1e-6 * plain.sum()  # the empty stores 5-255 release nothing
    assert np.array_equal(plain, _masses(_OneWayFrom(original, altered)))
