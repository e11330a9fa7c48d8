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

# A list is adopted only from at least this many discovered categories. One or two short
# codes ("CA", "NY"; "en") fall in several lists by chance and say little about how the column
# is written; three matching values of one list rarely do. On the development suite the columns
# the names suggest lists for discover far more (loans' state 40+, hhs_breaches' State 30+ at
# ε = 1: benchmarks/README.md, "autolist"), so the minimum only guards tiny tables.
MIN_DISCOVERED = 3


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
