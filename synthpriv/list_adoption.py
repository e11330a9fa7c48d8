"""Adopting a public code list from DP-discovered categories (``lists: [us_state_code, ...]``
on a categorical or auto column; docs in README.md, "Public lists").

Category discovery (synthpriv.privacy.candidates.category_selection) releases a set S of a
column's values under DP. Whether every member of S is in a public list L is a function of S
(a DP output), of L (public) and of the candidate lists the schema names (public): post-
processing, no budget, no event. When it holds, the column's categories become the whole of L
(public: no threshold), so a value too rare for the threshold keeps its own category instead of
being read as missing. Only S is read here, never the table's cells.

When discovery keeps nothing (a small table: hhs_breaches' threshold is above every state's
count), the membership test decides instead (``membership``): the discovery histogram names every
value of the column's lists as a candidate (privacy.candidates.listed_selection: each gets a
noise draw whether the table holds it or not, so its noisy count costs no ρ and no δ beyond the
histogram's events), and the sum of list L's noisy counts, M_L (σ·√|L| under add/remove; Δ₂·σ
per cell is already in σ), is compared with a bar z·σ·√|L|. Post-processing of DP outputs.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from synthpriv.public_lists import value_set

# A list is adopted from as few as one discovered category. The candidates are only the lists the
# column's public NAME suggests (public_lists.suggested_lists: a "state" column gets the US codes
# and names, not the ISO country codes), and those lists are disjoint in form (a 2-letter code is
# no state name), so one discovered value already tells which one the column is written in. A
# larger minimum would rarely fire on a small table: hhs_breaches' State (921 train rows, a
# discovery threshold of about 114 rows at eps = 1) keeps 0-2 states (CA, TX) in 4 seeded runs of
# the safe draft, AIM (benchmarks/README.md, "autolist"; tuned on the development tables
# hhs_breaches and loans). Adoption never drops a value discovery kept (S lies in the list) and
# the values outside S were read as missing anyway, so the price of a false match (a "state"
# column of other codes whose only discovered value happens to be one, e.g. "OK") is noise mass
# on the list's empty codes, not lost values, and never privacy: the decision reads S only.
# None discovered: nothing to tell, no list.
MIN_DISCOVERED = 1
# The membership test's bar in σ's of the in-list sum: a column holding no value of L passes it
# with probability Φ(−3) ≈ 0.13 % (arithmetic, not tuned on a table). A false pass costs what a
# false one-value match costs above (noise on empty codes, never a kept value, never privacy); the
# test only runs when S is empty. hhs_breaches' State (921 train rows, safe draft, ε = 1: σ ≈ 19
# per cell, σ_L ≈ 142 on 57 codes) sums ~921 rows against a bar of ≈ 426 (benchmarks/README.md,
# "listtest").
MEMBERSHIP_Z = 3.0


@dataclass(frozen=True)
class Membership:
    """The membership test of one list: M_L (the sum of its values' noisy counts: a DP output),
    its σ and the bar it was compared with (public)."""

    name: str
    in_list: float
    sigma: float
    bar: float

    @property
    def passed(self) -> bool:
        return self.in_list >= self.bar


def membership(name: str, noisy: Mapping[str, int], sigma: float) -> Membership:
    """The membership test of public list ``name`` from ``noisy`` (every listed value's noisy
    count at ``sigma``, privacy.candidates.listed_selection: DP outputs, the list's values absent
    from it counted as their draw is: nothing here reads the table)."""
    values = value_set(name)
    total = float(sum(noisy[v] for v in values))
    spread = sigma * math.sqrt(len(values))
    return Membership(name, total, spread, MEMBERSHIP_Z * spread)


def adopted_list(discovered: Iterable[str], candidates: Sequence[str],
                 other: str | None = None) -> str | None:
    """The first of the public lists ``candidates`` that holds every discovered category
    (``discovered``: the DP output S, the ``other`` label left out), or None when S has fewer
    than MIN_DISCOVERED members or no candidate holds it all (a list whose package is not
    installed holds nothing). Reads S only: post-processing of a DP output."""
    found = set(discovered) - {other}
    if len(found) < MIN_DISCOVERED:
        return None
    return next((name for name in candidates if (values := value_set(name)) and found <= values),
                None)


def list_decision(discovered: Iterable[str], candidates: Sequence[str], noisy: Mapping[str, int],
                sigma: float, other: str | None = None) -> tuple[str | None, Membership | None]:
    """``adopted_list`` when S (``discovered``) has members; when it has none, the first of
    ``candidates`` (installed) whose membership test passes (``noisy``: the listed values' noisy
    counts at ``sigma``), with the test; (None, None) when none passes. A function of DP outputs
    and public lists only."""
    if set(discovered) - {other}:
        return adopted_list(discovered, candidates, other), None
    for name in candidates:
        if value_set(name) and (test := membership(name, noisy, sigma)).passed:
            return name, test
    return None, None
