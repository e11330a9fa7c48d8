"""A date column's weekdays decided under DP: one noisy 7-cell weekday histogram.

Why (issue 24, "values that look like the input"; benchmarks/README.md, "weekdays"): the model
draws a date uniformly inside its grid cell, so a table of trading days (ISLP NYSE) came back
with 29 % of its dates on weekends. A public ``weekdays`` list fixes that in decoding
(``encoding.on_weekdays``, post-processing), but the safe path cannot know the days.

Mechanism: an auto column decided date (or datetime) gets the exact count of its cells on each
weekday (Monday … Sunday, in the column's zone: the day its cell shows), one histogram with
discrete Gaussian noise N_Z(0, σ_w²) per cell. Each row is on one weekday, so the histogram's L2
sensitivity is Δ₂ (1 under add/remove, √2 under replace-one, × k per person); σ_w = z_w·Δ₂ with
z_w = ``domain_budget.weekday_multiplier`` (F_r·z: the slot of the integer refinement a date
does not run), one DiscreteGaussianEvent per run, planned in the date's heap-column weight (the
plan's ρ and δ unchanged for every outcome). The histogram runs, and its event is recorded,
whatever it shows.

Read-out (``decided_weekdays``, post-processing of the noisy counts only): a day is kept when
its noisy count reaches ``located_bar``(7)·σ_w (≈ 3.1σ_w: an empty day reaches it with
probability ≤ FALSE_TAIL/7, so some empty day is kept ≤ 0.6 % of the time, union bound), and
the column's ``weekdays`` become the kept days only when every kept day holds SHARP times that
bar (≈ 6.3σ_w): a sharp gap between the days with rows and those without. Otherwise (no day
kept, all 7, or a kept day near the bar: a small table, or a day with few rows) no weekdays are
set and the release draws every day. What an evenly spread column loses: a day is dropped only
when one day's noise falls below the bar while all the kept ones clear twice it, two draws of one
mean ≥ 3.1σ_w apart; simulated at every mean 0 … 19σ_w, worst 1.4e-4 (at n/7 ≈ 2.9σ_w). A day
with real rows below the bar (weekend rows of a business-day log) is dropped with the empty
ones: its rows then fall on the kept days. Arithmetic on the rule's own bars, not tuned.
"""

from __future__ import annotations

import numpy as np

from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from synthpriv.privacy.refine import SHARP, located_bar

WEEKDAYS = 7  # Monday = 0 … Sunday = 6 (datetimes.weekdays_of)


def weekday_counts(weekdays: np.ndarray) -> np.ndarray:
    """Exact counts of ``weekdays`` (one weekday number per cell, Monday = 0). Never released:
    ``noisy_weekdays`` noises it (each cell in one count: L2 sensitivity Δ₂)."""
    return np.bincount(np.asarray(weekdays, dtype=np.int64), minlength=WEEKDAYS).astype(np.int64)


def noisy_weekdays(exact: np.ndarray, sigma: float, source: RandomSource) -> np.ndarray:
    """The weekday histogram ``exact`` with N_Z(0, ``sigma``²) on each of its 7 cells; ``sigma``
    is σ_w = z_w·Δ₂ (Δ₂: each row on one weekday), the DiscreteGaussianEvent the domain step
    records (``domain_budget.WEEKDAY_LABEL``)."""
    if len(exact) != WEEKDAYS:
        raise ValueError(f"a weekday histogram has {WEEKDAYS} cells, not {len(exact)}")
    return discrete_gaussian_histogram(np.asarray(exact, dtype=np.int64), sigma, source)


def decided_weekdays(noisy: np.ndarray, sigma: float) -> list[int] | None:
    """The weekdays (Monday = 0) whose noisy count reaches ``located_bar``(7)·``sigma`` when every
    one of them holds SHARP times that bar and some day does not (module docstring); None
    otherwise (every day released). Post-processing of the noisy counts: no budget."""
    noisy = np.asarray(noisy, dtype=float)
    bar = located_bar(WEEKDAYS) * sigma
    kept = np.flatnonzero(noisy >= bar)
    if kept.size in (0, WEEKDAYS) or float(noisy[kept].min()) < SHARP * bar:
        return None
    return [int(day) for day in kept]
