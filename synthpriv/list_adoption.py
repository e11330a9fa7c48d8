"""Adopting a public code list from DP-discovered categories (``lists: [us_state_code, ...]``
on a categorical or auto column; docs in README.md, "Public lists").

Category discovery (synthpriv.privacy.candidates.category_selection) releases a set S of a
column's values under DP. Whether every member of S is in a public list L is a function of S
(a DP output), of L (public) and of the candidate lists the schema names (public): post-
processing, no budget, no event. When it holds, the column's categories become the whole of L
(public: no threshold), so a value too rare for the threshold keeps its own category instead of
being read as missing. Only S is read here, never the table's cells.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

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
