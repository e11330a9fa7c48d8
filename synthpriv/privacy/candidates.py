"""Heap and category discovery with named candidates: the noisy counts of values fixed before the
counts are read (round values for heaps; public paired labels, ``PAIRED_LABELS``, for categories).

Heap discovery (synthpriv.domain_stage) is Gaussian thresholding (``partition.noisy_selection``):
every value present gets its exact count plus N_Z(0, σ_h²), and only the values passing T_h are
released, because a value only one of two neighbouring tables holds must not show (the δ of a
ThresholdEvent). On a small table T_h is far above the piles a user sees (College, 622 rows:
σ_h ≈ 49, T_h = 268, `Books` = 500 holds 139 rows).

A value named in advance needs no threshold. ``candidates`` is a list fixed before this
histogram's noise is drawn, from public figures and earlier DP outputs only (the domain step
passes the round values of a column's DP bounds and grid shape, ``rounds.round_values``). Each
candidate gets a noise draw whether the table holds it or not (count 0), and its noisy count is
released whatever it is. This is one histogram over (values present) ∪ (candidates):

* sensitivity: a row is in one value, so the whole histogram has L2 sensitivity Δ₂ (1 under
  add/remove, √2 under replace-one, × k per person), the same as discovery's; the heap
  histogram's DiscreteGaussianEvent (σ_h / Δ₂) covers every cell released, candidates included
  (a Gaussian histogram's cost does not depend on how many of its cells are released);
* threshold: ``partition``'s argument compares the output with the histogram noised over the
  union U of both tables' values; here over U ∪ candidates, and the outputs differ only when a
  count-0 value of U outside the candidates passes T_h: the same ThresholdEvent's δ (a candidate
  is noised on both tables, so it adds nothing to it).

So the candidates' counts cost no ρ and no δ beyond the heap histogram's events, which the
ledger holds already (its label says so: ``domain_budget.HEAP_LABEL``). What they buy: the
round values' own fine cells get a second noisy count (``marginals.compress.with_round_counts``)
and the adaptive grid keeps alone those whose count shows a pile (``compress._round_cells``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from synthpriv.privacy.partition import named_selection
from synthpriv.privacy.randomness import RandomSource

# Category discovery's named candidates: the public pairs of labels a two-valued column is
# written with (fixed in code, never read from a table). The same argument as the round values
# above: each label gets a draw in the discovery histogram whether the column holds it or not,
# so its noisy count needs no threshold. A label is kept when its partner passed the threshold
# and its own noisy count reaches PARTNER_BAR·σ (``with_partners``): on a small table T is far
# above the smaller half of a yes/no column (College, 622 rows: `Private` = No holds 172 rows,
# under the discovery threshold in some runs, and the column was then released Yes or blank).
PAIRED_LABELS: tuple[tuple[str, str], ...] = (
    ("Yes", "No"), ("yes", "no"), ("YES", "NO"), ("Y", "N"), ("y", "n"),
    ("True", "False"), ("true", "false"), ("TRUE", "FALSE"), ("T", "F"),
    ("Male", "Female"), ("male", "female"), ("MALE", "FEMALE"), ("M", "F"),
)
# σ of the partner's own noisy count: the tail rule's bar (bounds.EXTEND_NOISE), a count the noise
# alone reaches with probability Φ(−2.5) ≈ 0.6 % (a label the column never holds, kept beside its
# partner: one fake category of ~σ rows). Arithmetic, not tuned on a table.
PARTNER_BAR = 2.5


def heap_selection(
    counts: Mapping[float, int], candidates: Sequence[float], sigma: float, threshold: int,
    source: RandomSource,
) -> tuple[dict[float, int], dict[float, int]]:
    """Heap discovery over ``counts`` (values present, exact counts ≥ 1) with the named
    ``candidates`` (fixed before this call from public figures or DP outputs, never from
    ``counts``): one N_Z(0, σ²) draw per value of present ∪ candidates. Returns (the values
    whose noisy count is ≥ ``threshold``, as ``partition.noisy_selection``; every candidate's
    noisy count, passing or not). Privacy: the module docstring (the heap histogram's events;
    sensitivity Δ₂: a row is in one value). Without candidates, the same draws as
    ``noisy_selection``."""
    return named_selection(counts, sorted({float(v) for v in candidates}), sigma, threshold,
                           source)


def category_selection(
    counts: Mapping[str, int], sigma: float, threshold: int, source: RandomSource,
) -> tuple[dict[str, int], dict[str, float]]:
    """Category discovery over ``counts`` (a column's values present, exact counts ≥ 1) with the
    PAIRED_LABELS as named candidates (one N_Z(0, σ²) draw per value of present ∪ labels):
    (the values kept, in sorted order, with their noisy counts: those ≥ ``threshold`` and the
    partners ``with_partners`` adds; the selection bar of each, T or PARTNER_BAR·σ). Privacy:
    the module docstring's argument over the discovery histogram (its DiscreteGaussianEvent and
    ThresholdEvent; sensitivity Δ₂); the partner rule is post-processing of its noisy counts."""
    chosen, bars, _ = listed_selection(counts, (), sigma, threshold, source)
    return chosen, bars


def listed_selection(
    counts: Mapping[str, int], listed: Sequence[str], sigma: float, threshold: int,
    source: RandomSource,
) -> tuple[dict[str, int], dict[str, float], dict[str, int]]:
    """``category_selection`` with the values of the column's public lists (``listed``: fixed by
    the schema, never read from ``counts``) as named candidates too: (the values kept, their
    bars, every listed value's noisy count, passing or not). Privacy: the module docstring's
    argument (one histogram over present ∪ labels ∪ listed, sensitivity Δ₂, the discovery
    histogram's events; a listed value is noised on both neighbours, so its count costs no ρ and
    no δ). Without ``listed``, the same draws as ``category_selection`` (sorted keys)."""
    named = sorted({label for pair in PAIRED_LABELS for label in pair} | set(listed))
    kept, drawn = named_selection(counts, named, sigma, threshold, source, key=str)
    chosen = with_partners(kept, drawn, sigma)
    bars = {v: float(threshold) if v in kept else PARTNER_BAR * sigma for v in chosen}
    return chosen, bars, {v: drawn[v] for v in listed}


def with_partners(kept: Mapping[str, int], named: Mapping[str, int], sigma: float
                  ) -> dict[str, int]:
    """``kept`` (the values that passed the threshold) plus each paired label whose partner is in
    it and whose own noisy count (``named``) is ≥ PARTNER_BAR·σ, sorted. Post-processing."""
    chosen = dict(kept)
    for pair in PAIRED_LABELS:
        for label, partner in (pair, pair[::-1]):
            if label not in kept and partner in kept and named[label] >= PARTNER_BAR * sigma:
                chosen[label] = named[label]
    return dict(sorted(chosen.items(), key=lambda item: str(item[0])))

