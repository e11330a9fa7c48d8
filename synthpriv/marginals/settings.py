"""Recipe settings that follow the table, from public quantities only (issue 13, item 4).

Public here: n̂ (``data.public_records``, or a noisy count the stage bought), the noise σ (from ε,
δ and the plan), the number of columns d and the public domain. Nothing is read from the table
outside a mechanism, so these settings are post-processing of public or DP values.

What each setting follows, and where the rest live (README, "Recipe settings"):

* AIM's model-size cap: ``model_cells`` below (n̂, d, the domain);
* AIM's rounds: 16 per column up to ``AimSettings.max_rounds`` (d: ``aim.aim_rounds``); the 1-way
  round is d of those rounds, so its share of AIM's measurement budget is d / rounds (1/16 below
  the cap, d / 400 above it; from 445 columns one batch of MST's 1-way share, ``one_way_batch``),
  raised on a small table with adaptive columns until the measured
  grid's floor of cells meets the grid's own accuracy rule (``one_way_sigma``), and on a table
  of few columns to one round per candidate marginal (``one_way_rounds``), at most MST's 1-way
  share;
* the grid an adaptive column is measured on and its number of bins: n̂ / (2σ) cells and
  √(n̂ / σ) bins (``compress.grid_cells``, ``compress.bin_count``: n̂ and ε through σ);
* the domain step's share of ρ: ``privacy.domain_budget.domain_share`` (MST's 1-way noise).

Tuned on: nothing. The rules come from the arithmetic in their docstrings and were checked on
the development suite only (Adult drafted, ISLP tables: benchmarks/README.md, "Recipe settings
that follow the table").
"""

from __future__ import annotations

from itertools import combinations
from math import comb

from synthpriv.domain import Domain
from synthpriv.marginals.compress import GRID_CELLS_MIN
from synthpriv.privacy.domain_budget import ONE_WAY_SHARE

ONE_WAY_MOST = ONE_WAY_SHARE  # AIM's 1-way round takes at most MST's 1-way share of its ρ


def one_way_sigma(records: float) -> float:
    """The noise σ of AIM's first 1-way measurements at which an adaptive column's measured grid
    meets its own accuracy rule at its floor of cells: ``compress.grid_cells`` measures n̂/(2σ)
    cells, at least GRID_CELLS_MIN, so on a table where n̂/(2σ) < GRID_CELLS_MIN the floor's
    cells are measured at more noise than the rule allows (the noisy cumulative count at the
    middle errs by more than half a bin), and from those counts the adaptive domain picks the
    bins, the point masses and each bin's inner shape, which later rounds never measure again
    (College, 622 rows at ε = 1: σ ≈ 98, n̂/(2σ) ≈ 3; released heavy-tailed counts' KS 0.2-0.3).
    σ = n̂ / (2·GRID_CELLS_MIN) restores the rule; ``privacy.budget.first_round_noise`` spends
    at most ONE_WAY_MOST of AIM's ρ on it and never raises the noise. A table where the rounds'
    own noise already meets it (Wage, Adult, …) is unchanged. ``records``: public or DP n̂."""
    return max(float(records), 1.0) / (2.0 * GRID_CELLS_MIN)


def one_way_rule_rows(sigma: float) -> float:
    """The row count below which ``one_way_sigma`` asks for less noise than ``sigma`` (the
    rounds' own σ), so that AIM's 1-way round follows n̂: n̂ < 2·GRID_CELLS_MIN·σ. The plan
    states it (public: σ comes from ε, δ, d and the recipe)."""
    return 2.0 * GRID_CELLS_MIN * sigma


def one_way_rounds(rounds: int, columns: int, degree: int) -> int:
    """The rounds whose per-round noise AIM's 1-way round takes: ``rounds``, or, where the
    workload has fewer distinct candidate marginals than that (Σ C(d, j) for j ≤ the workload's
    degree: 14 at d = 4 against 16·d = 64 rounds; fewer than 16·d up to d = 9), one round per
    candidate. Why: 16·d rounds (McKenna et al.) assume many more candidates than rounds; with
    few columns annealing spends the reserve in a handful of rounds (ISLP Default: 7 after the
    1-way round, annealed from σ 46.5 to 8.4, the 1-way round at 46.5), so the 1-way round — from which the
    adaptive domain takes the bins, point masses and inner shapes no later round measures
    again — was the noisiest measurement of the release. Public: d, the degree and the rounds
    only. Checked on ISLP Default, NYSE and statsmodels co2 (2–6 columns) and the guards
    (benchmarks/README.md, "defaultdpmm"); d ≥ 10 is unchanged."""
    candidates = sum(comb(columns, j) for j in range(1, min(degree, columns) + 1))
    return min(rounds, max(candidates, 1))


def one_way_batch(rounds: int, columns: int, gaussian_fraction: float) -> bool:
    """Whether AIM measures its d 1-way marginals as one batch spending ONE_WAY_MOST of its ρ,
    followed by ``rounds`` adaptive rounds sharing the rest (``budget.batch_noise``), instead of
    as d of its rounds. It does where d rounds' measurements would cost more than all the rounds
    (``rounds`` < α·d: 445 columns and more at the default 400 rounds, ISLP Fund's 2,000 and
    Khan's 2,308), which AIM could not plan before (a refusal); every narrower table is planned
    and run as before. Why a batch and not 16·d rounds (McKenna et al.): time grows with the
    rounds (each refits the model over all d columns) and 32,000 rounds at Fund's width would
    spread the rest of the budget too thin to tell marginals apart; why MST's 1-way share: the
    1-way marginals of every column are what a wide table's release most needs, as in MST.
    Public: d, the rounds and α only."""
    return rounds < gaussian_fraction * columns


MODEL_CELLS_LIMIT = 2_000_000  # memory/time bound, whatever the table: 16 MB a float64 copy


def largest_pair(domain: Domain, coarse: dict[str, int] | None = None) -> int:
    """Cells of the largest 2-way marginal of ``domain``, a column's size replaced by ``coarse``
    where given (an adaptive column counted at its most bins). A function of the public domain."""
    sizes = _sizes(domain, coarse)
    if len(sizes) < 2:
        return max(sizes, default=1)
    return max(a * b for a, b in combinations(sizes, 2))


def smallest_cap(domain: Domain, coarse: dict[str, int] | None = None) -> int:
    """The least model-size cap AIM can run under: its first model holds every 1-way marginal
    (AIM measures each column alone first: the sum of the column sizes, a junction tree of
    singletons), and every pair stays selectable (``largest_pair``). Without this floor a tiny
    noisy n̂ gave a cap below the 1-way model and AIM refused its own first step (statsmodels
    strikes, n̂ = 1, sizes 1 and 2: 3 cells over a cap of 2). Sizes as ``largest_pair``'s;
    a function of the public domain."""
    return max(largest_pair(domain, coarse), sum(_sizes(domain, coarse)))


def _sizes(domain: Domain, coarse: dict[str, int] | None) -> list[int]:
    return [min(domain[a], (coarse or {}).get(a, domain[a])) for a in domain.attributes]


def model_cells(
    records: float, columns: int, smallest: int = 1, limit: int = MODEL_CELLS_LIMIT
) -> int:
    """AIM's model-size cap: d · n̂ cells, at least ``smallest`` (``smallest_cap``: the 1-way
    model and the largest 2-way marginal, so every pair stays selectable) and at most ``limit``
    (a memory and time bound).

    Why d · n̂: a junction tree over d columns has at most d cliques, and a clique with more cells
    than the release has rows (n̂) holds cells that no sample can show and that the estimator
    fits from noise alone; a bigger model only costs time (AIM's time grows with the model's
    cells). A 700-row table of 10 columns gets 7,000 cells (or its largest pair), Adult
    (14 columns, 32,561 rows) 455,854, a 10-million-row table the limit. ``records`` is public
    or a DP estimate; ``columns`` and ``smallest`` are public."""
    wanted = max(float(records), 1.0) * max(columns, 1)
    return int(min(max(wanted, smallest), limit))
