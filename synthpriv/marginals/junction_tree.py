"""Junction trees: triangulate the graph that a set of cliques induces, and connect its maximal
cliques into a tree with the running-intersection property.

The graph has one node per domain attribute and an edge between two attributes that share a
clique. It is made chordal by greedy elimination (each eliminated attribute's neighbourhood
becomes a clique); the maximal ones are the cliques of the junction tree, and a maximum-weight
spanning tree of their intersection graph (weight = shared attributes) is a valid junction tree.
All cliques are tuples of attributes in domain order.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from math import prod

from synthpriv.domain import Domain

Clique = tuple[str, ...]


def maximal_cliques(
    domain: Domain, cliques: Sequence[Sequence[str]], thorough: bool = True
) -> list[Clique]:
    """Maximal cliques of a chordal completion of the graph ``cliques`` induce on ``domain``.

    Every attribute of the domain is in at least one returned clique, and every given clique is
    inside one. Three greedy elimination orders are tried (fewest cells in the new clique; fewest
    fill-in edges; least fill-in weighted by the product of the endpoints' sizes) and the
    triangulation with the fewest total cells is kept; ``thorough=False`` tries the first only.
    """
    size = dict(zip(domain.attributes, domain.shape, strict=True))
    adjacency: dict[str, set[str]] = {a: set() for a in domain.attributes}
    for clique in cliques:
        for a in clique:
            if a not in size:
                raise ValueError(f"attribute {a!r} is not in the domain")
            adjacency[a].update(b for b in clique if b != a)

    def cells(a: str, adj: dict[str, set[str]]) -> int:
        return size[a] * prod(size[b] for b in adj[a])

    def fill(a: str, adj: dict[str, set[str]]) -> int:
        nbrs = adj[a]
        return sum(len(nbrs - adj[b]) - 1 for b in nbrs) // 2

    def weighted_fill(a: str, adj: dict[str, set[str]]) -> int:
        nbrs = adj[a]
        return sum(size[b] * size[c] for b in nbrs for c in nbrs - adj[b] if b < c)

    candidates = [_eliminate(adjacency, lambda a, adj: (cells(a, adj), fill(a, adj)))]
    if thorough:
        candidates += [
            _eliminate(adjacency, lambda a, adj: (fill(a, adj), cells(a, adj))),
            _eliminate(adjacency, lambda a, adj: (weighted_fill(a, adj), cells(a, adj))),
        ]
    best = min(candidates, key=lambda cs: sum(prod(size[a] for a in c) for c in cs))
    index = {a: i for i, a in enumerate(domain.attributes)}
    ordered = [tuple(sorted(c, key=index.__getitem__)) for c in best]
    return sorted(ordered, key=lambda c: [index[a] for a in c])


def _eliminate(
    adjacency: dict[str, set[str]], cost: Callable[[str, dict[str, set[str]]], tuple[int, int]]
) -> list[frozenset[str]]:
    """Maximal cliques produced by eliminating attributes in greedy ``cost`` order (ties: domain
    order). Each elimination turns the attribute's remaining neighbourhood into a clique."""
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


def model_cells(domain: Domain, cliques: Sequence[Sequence[str]]) -> int:
    """An upper bound on the cells of the junction tree that ``cliques`` induce, from one greedy
    triangulation: ``JunctionTree.build`` keeps the best of three, so it is never larger. Cheap
    enough to screen hundreds of candidate marginals per AIM round."""
    return sum(domain.size(c) for c in maximal_cliques(domain, cliques, thorough=False))


@dataclass(frozen=True)
class Edge:
    """Index bookkeeping for messages between clique ``child`` and its ``parent``.

    ``*_axes`` are the axes of that clique's table outside the separator (summed out to get a
    table over the separator, in domain order); ``*_shape`` reshapes a separator table so it
    broadcasts against that clique's table.
    """

    child: int
    parent: int
    child_axes: tuple[int, ...]
    parent_axes: tuple[int, ...]
    child_shape: tuple[int, ...]
    parent_shape: tuple[int, ...]

    @classmethod
    def between(cls, domain: Domain, child: int, parent: int, cliques: Sequence[Clique]) -> Edge:
        separator = set(cliques[child]) & set(cliques[parent])

        def axes(clique: Clique) -> tuple[int, ...]:
            return tuple(k for k, a in enumerate(clique) if a not in separator)

        def shape(clique: Clique) -> tuple[int, ...]:
            return tuple(domain[a] if a in separator else 1 for a in clique)

        c, p = cliques[child], cliques[parent]
        return cls(child, parent, axes(c), axes(p), shape(c), shape(p))


@dataclass(frozen=True)
class JunctionTree:
    """Maximal cliques joined in a tree with the running-intersection property.

    ``parent[i]`` is the clique that clique ``i`` hangs from (-1 for the root), ``separator[i]``
    the attributes it shares with its parent (empty where the graph was disconnected), and
    ``order`` lists cliques root first, each after its parent; ``children[i]`` are the cliques
    whose parent is ``i``.
    """

    domain: Domain
    cliques: tuple[Clique, ...]
    parent: tuple[int, ...]
    separator: tuple[Clique, ...]
    order: tuple[int, ...]
    children: tuple[tuple[int, ...], ...]
    edges: tuple[Edge | None, ...]  # edges[i] joins clique i to its parent (None for the root)

    @classmethod
    def build(cls, domain: Domain, cliques: Sequence[Sequence[str]]) -> JunctionTree:
        """The junction tree over the maximal cliques of the triangulated graph of ``cliques``."""
        nodes = maximal_cliques(domain, cliques)
        edges = _maximum_spanning_tree(nodes)
        neighbours: list[list[int]] = [[] for _ in nodes]
        for i, j in edges:
            neighbours[i].append(j)
            neighbours[j].append(i)
        root = max(range(len(nodes)), key=lambda i: domain.size(nodes[i]))
        parent = [-1] * len(nodes)
        order = [root]
        for i in order:  # breadth-first; `order` grows while we walk it
            for j in sorted(neighbours[i]):
                if j != root and parent[j] == -1:
                    parent[j] = i
                    order.append(j)
        separator = tuple(
            () if p < 0 else tuple(a for a in nodes[i] if a in nodes[p])
            for i, p in enumerate(parent)
        )
        children = tuple(tuple(j for j in order if parent[j] == i) for i in range(len(nodes)))
        edges = tuple(
            None if p < 0 else Edge.between(domain, i, p, nodes) for i, p in enumerate(parent)
        )
        return cls(domain, tuple(nodes), tuple(parent), separator, tuple(order), children, edges)

    def host(self, attributes: Sequence[str]) -> int | None:
        """Index of the smallest clique containing ``attributes``, or None if no clique does."""
        wanted = set(attributes)
        inside = [i for i, c in enumerate(self.cliques) if wanted <= set(c)]
        if not inside:
            return None
        return min(inside, key=lambda i: self.domain.size(self.cliques[i]))

    def cells(self) -> int:
        return sum(self.domain.size(c) for c in self.cliques)


def _maximum_spanning_tree(nodes: Sequence[Clique]) -> list[tuple[int, int]]:
    """Kruskal on the complete clique graph weighted by shared attributes: the result is a
    junction tree (zero-weight edges join the components of a disconnected graph)."""
    pairs = sorted(
        ((len(set(nodes[i]) & set(nodes[j])), i, j) for i in range(len(nodes)) for j in range(i)),
        key=lambda e: (-e[0], e[1], e[2]),
    )
    root = list(range(len(nodes)))

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    edges = []
    for _, i, j in pairs:
        ri, rj = find(i), find(j)
        if ri != rj:
            root[ri] = rj
            edges.append((i, j))
    return edges
