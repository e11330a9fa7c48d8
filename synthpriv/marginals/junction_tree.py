"""Junction trees: triangulate the graph that a set of cliques induces, and connect its maximal
cliques into a tree with the running-intersection property.

The graph has one node per domain attribute and an edge between two attributes that share a
clique. It is made chordal by greedy elimination (each eliminated attribute's neighbourhood
becomes a clique); the maximal ones are the cliques of the junction tree, and a maximum-weight
spanning tree of their intersection graph (weight = shared attributes) is a valid junction tree.
All cliques are tuples of attributes in domain order.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
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
    adjacency = _adjacency(domain, cliques)
    best = _triangulation(domain.shape, adjacency, thorough)
    return sorted(
        (tuple(domain.attributes[i] for i in _bits(mask)) for mask in best),
        key=lambda c: domain.axes(c),
    )


def model_cells(domain: Domain, cliques: Sequence[Sequence[str]]) -> int:
    """An upper bound on the cells of the junction tree that ``cliques`` induce, from one greedy
    triangulation: ``JunctionTree.build`` keeps the best of three, so it is never larger. Cheap
    enough to screen hundreds of candidate marginals per AIM round: the graph is a tuple of
    bitmasks and its result is cached, so a graph met again (another candidate adding the same
    edges, a later round whose graph did not change) costs a dictionary look-up."""
    return _greedy_cells(domain.shape, _adjacency(domain, cliques))


class SizeScreen:
    """``model_cells(domain, measured + [candidate])`` for many candidates against one measured
    set (AIM's model-size screen, once per round). The measured graph, its connected components
    and each component's cells are computed once; a candidate changes only the components it
    touches (it merges them into one), so its cells are the measured total minus those
    components' cells plus the merged component's, instead of a walk over every component of a
    150-column graph per candidate. Equal to ``model_cells`` by construction (``_greedy_cells``
    is the same sum over components, each a function of its own nodes and edges only);
    integers, public bookkeeping, no data."""

    def __init__(self, domain: Domain, measured: Sequence[Sequence[str]]) -> None:
        self._shape = domain.shape
        self._index = {a: i for i, a in enumerate(domain.attributes)}
        self._base = _adjacency(domain, measured)
        self._component = [0] * len(self._base)  # node -> its component's mask
        self._component_cells: dict[int, int] = {}
        for component in _components(self._base):
            nodes = tuple(_bits(component))
            self._component_cells[component] = _component_cells(
                self._shape, nodes, tuple(self._base[i] for i in nodes))
            for i in nodes:
                self._component[i] = component
        self._total = sum(self._component_cells.values())

    def cells(self, candidate: Sequence[str]) -> int:
        """``model_cells`` of the measured cliques plus ``candidate``."""
        mask = 0
        for a in candidate:
            mask |= 1 << self._index[a]
        touched = {self._component[i] for i in _bits(mask)}
        merged = 0
        for component in touched:
            merged |= component
        nodes = tuple(_bits(merged))
        edges = tuple(self._base[i] | (mask & ~(1 << i)) if mask >> i & 1 else self._base[i]
                      for i in nodes)
        untouched = self._total - sum(self._component_cells[c] for c in touched)
        return untouched + _component_cells(self._shape, nodes, edges)


@lru_cache(maxsize=8192)
def _greedy_cells(shape: tuple[int, ...], adjacency: tuple[int, ...]) -> int:
    """Cells of ``_triangulation(shape, adjacency, False)``: the sum over components, each
    component's cells cached with its cliques."""
    total = 0
    for component in _components(adjacency):
        nodes = tuple(_bits(component))
        total += _component_cells(shape, nodes, tuple(adjacency[i] for i in nodes))
    return total


@lru_cache(maxsize=16384)
def _component_cells(shape: tuple[int, ...], nodes: tuple[int, ...], edges: tuple[int, ...]) -> int:
    return _cells(shape, _eliminate(shape, nodes, edges, "cells"))


def _adjacency(domain: Domain, cliques: Sequence[Sequence[str]]) -> tuple[int, ...]:
    """The graph ``cliques`` induce: bit j of entry i is set when attributes i and j share a
    clique (no self loops)."""
    index = {a: i for i, a in enumerate(domain.attributes)}
    adjacency = [0] * len(index)
    for clique in cliques:
        mask = 0
        for a in clique:
            if a not in index:
                raise ValueError(f"attribute {a!r} is not in the domain")
            mask |= 1 << index[a]
        for a in clique:
            adjacency[index[a]] |= mask
    return tuple(m & ~(1 << i) for i, m in enumerate(adjacency))


def _bits(mask: int) -> list[int]:
    """Indices of the set bits of ``mask``, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def _cells(shape: tuple[int, ...], masks: Sequence[int]) -> int:
    return sum(prod(shape[i] for i in _bits(m)) for m in masks)


@lru_cache(maxsize=8192)
def _triangulation(
    shape: tuple[int, ...], adjacency: tuple[int, ...], thorough: bool
) -> tuple[int, ...]:
    """Maximal cliques (bitmasks) of the greedy triangulation with the fewest cells: by cells
    then fill-in, and if ``thorough`` also by fill-in then cells and by weighted fill-in then
    cells (the first found wins ties).

    Each connected component is eliminated on its own: eliminating an attribute changes the
    costs of its own component only, so the greedy order within a component is the one the
    whole graph would give it, and the maximal cliques are the union over components. Cached
    per component, so a candidate marginal re-triangulates only the component it joins."""
    orders = ("cells", "fill", "weighted") if thorough else ("cells",)
    found: list[list[int]] = [[] for _ in orders]
    for component in _components(adjacency):
        nodes = tuple(_bits(component))
        edges = tuple(adjacency[i] for i in nodes)
        for cliques, order in zip(found, orders, strict=True):
            cliques.extend(_eliminate(shape, nodes, edges, order))
    if len(found) == 1:
        return tuple(found[0])
    return tuple(min(found, key=lambda masks: _cells(shape, masks)))


def _components(adjacency: tuple[int, ...]) -> Iterator[int]:
    """Connected components of the graph, as bitmasks, lowest attribute first."""
    left = (1 << len(adjacency)) - 1
    while left:
        frontier = left & -left
        component = 0
        while frontier:
            component |= frontier
            reached = 0
            for i in _bits(frontier):
                reached |= adjacency[i]
            frontier = reached & ~component
        left &= ~component
        yield component


def _fill(adj: list[int], i: int) -> int:
    """Edges missing between neighbours of ``i`` (added if ``i`` is eliminated)."""
    nbrs = adj[i]
    return sum((nbrs & ~adj[b]).bit_count() - 1 for b in _bits(nbrs)) // 2


def _weighted_fill(adj: list[int], i: int, shape: tuple[int, ...]) -> int:
    """Missing edges between neighbours of ``i``, each weighted by its endpoints' sizes."""
    nbrs = adj[i]
    return sum(shape[b] * shape[c] for b in _bits(nbrs)
               for c in _bits(nbrs & ~adj[b] & ~((2 << b) - 1)))


@lru_cache(maxsize=16384)
def _eliminate(
    shape: tuple[int, ...], nodes: tuple[int, ...], adjacency: tuple[int, ...], order: str
) -> tuple[int, ...]:
    """Maximal cliques (bitmasks) produced by eliminating the attributes ``nodes`` (ascending;
    ``adjacency`` their neighbours) greedily: ``order`` "cells" takes the fewest cells in the new
    clique, then the least fill-in; "fill" the least fill-in, then cells; "weighted" the least
    size-weighted fill-in, then cells (ties: domain order). Each elimination turns the
    attribute's remaining neighbourhood into a clique."""
    adj = [0] * len(shape)
    for i, m in zip(nodes, adjacency, strict=True):
        adj[i] = m
    cells = [0] * len(shape)
    for i in nodes:
        cells[i] = shape[i] * prod(shape[j] for j in _bits(adj[i]))
    remaining = list(nodes)
    produced: list[int] = []
    while remaining:
        if order == "cells":
            least = min(cells[i] for i in remaining)
            tied = [i for i in remaining if cells[i] == least]
            a = tied[0] if len(tied) == 1 else min(tied, key=lambda i: _fill(adj, i))
        elif order == "fill":
            a = min(remaining, key=lambda i: (_fill(adj, i), cells[i]))
        else:
            a = min(remaining, key=lambda i: (_weighted_fill(adj, i, shape), cells[i]))
        remaining.remove(a)
        nbrs = adj[a]
        for b in _bits(nbrs):
            new = nbrs & ~adj[b] & ~(1 << b)
            cells[b] = cells[b] // shape[a] * prod(shape[j] for j in _bits(new))
            adj[b] = (adj[b] | new) & ~(1 << a)
        produced.append(nbrs | 1 << a)
    produced.sort(key=int.bit_count, reverse=True)
    maximal: list[int] = []
    for clique in produced:
        if not any(clique & ~kept == 0 for kept in maximal):
            maximal.append(clique)
    return tuple(maximal)


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
    junction tree (zero-weight edges join the components of a disconnected graph).

    Only pairs sharing an attribute are weighed (found through each attribute's cliques), not
    all N² pairs (2,308 singleton cliques of a wide table: 2.7 million, sorted every fit). The
    zero-weight edges Kruskal would then take in its (i, j) order are (i, 0) for each i not yet
    joined to clique 0: after edge candidates (i, ·), cliques 0..i are one component. Same
    edges in the same order as the complete graph's."""
    holding: dict[str, list[int]] = {}
    for i, node in enumerate(nodes):
        for attribute in set(node):
            holding.setdefault(attribute, []).append(i)
    sharing = {(i, j) for members in holding.values() for i in members for j in members if j < i}
    pairs = sorted(
        ((len(set(nodes[i]) & set(nodes[j])), i, j) for i, j in sharing),
        key=lambda e: (-e[0], e[1], e[2]),
    )
    pairs += [(0, i, 0) for i in range(1, len(nodes))]
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
