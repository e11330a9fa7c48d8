"""The bitmask triangulation equals its definition: the greedy elimination on attribute sets
that it replaced (kept here as the reference), on random graphs and domains."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from itertools import combinations
from math import prod

import numpy as np
import pytest

from synthpriv.domain import Domain
from synthpriv.marginals.junction_tree import maximal_cliques, model_cells


def _reference_eliminate(
    adjacency: dict[str, set[str]], cost: Callable[[str, dict[str, set[str]]], tuple[int, int]]
) -> list[frozenset[str]]:
    adj = {a: set(nbrs) for a, nbrs in adjacency.items()}
    produced: list[frozenset[str]] = []
    while adj:
        a = min(adj, key=lambda b: cost(b, adj))
        nbrs = adj.pop(a)
        for b in nbrs:
            adj[b] |= nbrs
            adj[b].discard(b)
            adj[b].discard(a)
        produced.append(frozenset(nbrs | {a}))
    produced.sort(key=len, reverse=True)
    maximal: list[frozenset[str]] = []
    for clique in produced:
        if not any(clique <= kept for kept in maximal):
            maximal.append(clique)
    return maximal


def reference_maximal_cliques(
    domain: Domain, cliques: Sequence[Sequence[str]], thorough: bool = True
) -> list[tuple[str, ...]]:
    """The triangulation as written before the bitmask version (commit 7053f65)."""
    size = dict(zip(domain.attributes, domain.shape, strict=True))
    adjacency: dict[str, set[str]] = {a: set() for a in domain.attributes}
    for clique in cliques:
        for a in clique:
            adjacency[a].update(b for b in clique if b != a)

    def cells(a: str, adj: dict[str, set[str]]) -> int:
        return size[a] * prod(size[b] for b in adj[a])

    def fill(a: str, adj: dict[str, set[str]]) -> int:
        nbrs = adj[a]
        return sum(len(nbrs - adj[b]) - 1 for b in nbrs) // 2

    def weighted_fill(a: str, adj: dict[str, set[str]]) -> int:
        nbrs = adj[a]
        return sum(size[b] * size[c] for b in nbrs for c in nbrs - adj[b] if b < c)

    found = [_reference_eliminate(adjacency, lambda a, adj: (cells(a, adj), fill(a, adj)))]
    if thorough:
        found += [
            _reference_eliminate(adjacency, lambda a, adj: (fill(a, adj), cells(a, adj))),
            _reference_eliminate(adjacency, lambda a, adj: (weighted_fill(a, adj), cells(a, adj))),
        ]
    best = min(found, key=lambda cs: sum(prod(size[a] for a in c) for c in cs))
    index = {a: i for i, a in enumerate(domain.attributes)}
    ordered = [tuple(sorted(c, key=index.__getitem__)) for c in best]
    return sorted(ordered, key=lambda c: [index[a] for a in c])


def random_case(rng: np.random.Generator) -> tuple[Domain, list[tuple[str, ...]]]:
    """A domain of 3-16 attributes, now and then 40 (names not in alphabetical order, sizes with
    many ties) and 1-30 random cliques of 1-4 attributes."""
    d = 40 if rng.random() < 0.1 else int(rng.integers(3, 17))
    names = [f"c{int(k)}" for k in rng.permutation(100)[:d]]
    sizes = rng.choice([2, 2, 3, 5, 8, 16, 40], size=d)
    domain = Domain(tuple(names), tuple(int(s) for s in sizes))
    cliques = [
        tuple(rng.choice(names, size=int(rng.integers(1, min(4, d) + 1)), replace=False))
        for _ in range(int(rng.integers(1, 31)))
    ]
    return domain, cliques


@pytest.mark.parametrize("seed", range(200))
def test_bitmask_triangulation_equals_the_set_version(seed: int) -> None:
    domain, cliques = random_case(np.random.default_rng(seed))
    for thorough in (False, True):
        assert maximal_cliques(domain, cliques, thorough) == reference_maximal_cliques(
            domain, cliques, thorough)
    expected = sum(domain.size(c) for c in reference_maximal_cliques(domain, cliques, False))
    assert model_cells(domain, cliques) == expected


def test_triangulation_of_structured_graphs() -> None:
    """Cycles, a grid and a complete graph: ties everywhere, fill-in needed."""
    domain = Domain(tuple(f"x{i}" for i in range(9)), (3,) * 9)
    names = domain.attributes
    cycle = [(names[i], names[(i + 1) % 9]) for i in range(9)]
    grid = [(names[i], names[i + 1]) for i in range(9) if i % 3 != 2] + [
        (names[i], names[i + 3]) for i in range(6)]
    complete = list(combinations(names[:5], 2))
    for cliques in (cycle, grid, complete, []):
        for thorough in (False, True):
            assert maximal_cliques(domain, cliques, thorough) == reference_maximal_cliques(
                domain, cliques, thorough)


def test_unknown_attribute_is_refused() -> None:
    with pytest.raises(ValueError, match="'z' is not in the domain"):
        model_cells(Domain(("a", "b"), (2, 2)), [("a", "z")])
