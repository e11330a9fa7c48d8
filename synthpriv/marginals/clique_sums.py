"""Sums onto a junction tree's cliques, and projections back, through shared sub-tables.

A tree clique hosts several measured cliques. Adding each one's table onto it costs a pass over
the tree clique per measured clique, and so does summing the clique's marginal onto each of
them (Adult at ε = 10: ~60 measured cliques in 8 tree cliques, 1.6 M cells of broadcast adds a
sum onto a 305 k-cell tree). ``MergePlan`` joins the tables a tree clique hosts two at a time,
the pair with the smallest union first (a table inside another costs that one's size), into
a binary tree of sub-tables: a sum adds each pair on their union's table and broadcasts the
last union onto the tree clique once; a projection goes down the same tree, each sub-table
summed from its parent's, not from the tree clique. The same sums and marginals as the plain
ones, to floating-point rounding (another order of the additions). Index bookkeeping only:
planned once per (tree, cliques) from public domains; it reads no data.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from synthpriv.domain import Domain
from synthpriv.marginals.factor import _alignment, sum_axes
from synthpriv.marginals.junction_tree import Clique, JunctionTree

_Placement = tuple[tuple[int, ...] | None, tuple[int, ...]]


@dataclass(frozen=True)
class _Node:
    """A table of the plan: a leaf (``clique`` set, no children) or the union of two nodes
    (attributes in domain order). ``placement`` broadcasts it over its parent (or the tree
    clique, for a root)."""

    domain: Domain
    clique: Clique | None
    children: tuple[int, ...]
    placement: _Placement


# (source: -1 = the tree clique's marginal, else an earlier step; axes summed out of it; then a
# transposition or None; the wanted clique this step makes, or None for a shared sub-table)
_Step = tuple[int, tuple[int, ...], tuple[int, ...] | None, Clique | None]
SMALL = 4096  # cells: a shared sub-table is made only if it saves more than this many reads


@dataclass(frozen=True)
class MergePlan:
    """Per tree clique, its nodes (children before parents, the root last; empty when it hosts
    no clique) and whether the root's domain is the tree clique's own."""

    nodes: tuple[tuple[_Node, ...], ...]
    root_is_clique: tuple[bool, ...]
    tops: tuple[Domain, ...]
    _schedules: dict[frozenset[Clique], list[list[_Step]]] = field(
        default_factory=dict, compare=False, repr=False)  # per wanted set: the sums to make

    def sum_onto_tree(
        self, tables: Mapping[Clique, np.ndarray], out: list[np.ndarray]
    ) -> list[np.ndarray]:
        """Each tree clique's table in ``out`` set to the sum of the ``tables`` it hosts,
        broadcast over it (0 where it hosts none; a clique missing from ``tables`` counts 0)."""
        for nodes, to_clique, target in zip(self.nodes, self.root_is_clique, out, strict=True):
            values: list[np.ndarray | None] = []
            for k, node in enumerate(nodes):
                if node.clique is not None:
                    values.append(tables.get(node.clique))
                    continue
                placed = [_placed(values[c], nodes[c].placement) for c in node.children
                          if values[c] is not None]
                last = k == len(nodes) - 1 and to_clique
                if len(placed) == 2:
                    values.append(np.add(*placed, out=target if last else None))
                else:  # one side absent: the other broadcast over the union alone (a view)
                    values.append(np.broadcast_to(placed[0], node.domain.shape) if placed
                                  else None)
            root = values[-1] if values else None
            if root is None:
                target.fill(0.0)
            elif root is not target:
                np.copyto(target, _placed(root, nodes[-1].placement))
        return out

    def project(
        self, marginals: Sequence[np.ndarray], wanted: Sequence[Clique]
    ) -> dict[Clique, np.ndarray]:
        """Each clique of ``wanted``'s marginal (axes in its own order): summed down the plan
        from its tree clique's marginal, through the shared sub-tables that pay for themselves
        (``_schedule``)."""
        wanted_set = frozenset(wanted)
        if wanted_set not in self._schedules:
            self._schedules[wanted_set] = [_schedule(nodes, top, wanted_set)
                                           for nodes, top in zip(self.nodes, self.tops, strict=True)]
        found: dict[Clique, np.ndarray] = {}
        for marginal, steps in zip(marginals, self._schedules[wanted_set], strict=True):
            made: list[np.ndarray] = []
            for source, summed, order, clique in steps:
                values = sum_axes(marginal if source < 0 else made[source], summed)
                made.append(values if order is None else values.transpose(order))
                if clique is not None:
                    found[clique] = made[-1]
        return found


def _schedule(nodes: Sequence[_Node], top: Domain, wanted: frozenset[Clique]) -> list[_Step]:
    """The sums that make one tree clique's wanted cliques, top-down along its merge tree: each
    from the nearest sub-table made above it. A shared sub-table ``N`` summed from a source
    ``S`` is made only when ``|S| >= 2|N| + SMALL`` (its two children then read less than
    they would from ``S``, by more than the cost of one more numpy call)."""
    needed = _needed(nodes, wanted)
    steps: list[_Step] = []

    def visit(k: int, source: int, above: Domain) -> None:
        node = nodes[k]
        if not needed[k]:
            return
        if node.clique is None and above.size() < 2 * node.domain.size() + SMALL:
            for child in node.children:
                visit(child, source, above)
            return
        steps.append((source, *_from(above, node.domain), node.clique))
        made = len(steps) - 1  # before the children add theirs
        for child in node.children:
            visit(child, made, node.domain)

    if nodes:
        visit(len(nodes) - 1, -1, top)
    return steps


def _from(above: Domain, below: Domain) -> tuple[tuple[int, ...], tuple[int, ...] | None]:
    """The axes of ``above`` summed out to get ``below``, then the transposition to
    ``below``'s attribute order (None if already)."""
    kept = tuple(a for a in above.attributes if a in below)
    summed = tuple(sorted(above.axes(tuple(a for a in above.attributes if a not in below))))
    return summed, None if kept == below.attributes else above.project(kept).axes(below.attributes)


def _needed(nodes: Sequence[_Node], wanted: frozenset[Clique]) -> list[bool]:
    """Whether each node has a wanted leaf below it (children come before parents)."""
    needed: list[bool] = []
    for node in nodes:
        needed.append(node.clique in wanted if node.clique is not None
                      else any(needed[c] for c in node.children))
    return needed


def _placed(values: np.ndarray, placement: _Placement) -> np.ndarray:
    axes, shape = placement
    return (values if axes is None else values.transpose(axes)).reshape(shape)


def merge_plan(tree: JunctionTree, cliques: tuple[Clique, ...]) -> MergePlan:
    """The plan for ``cliques`` (each inside some tree clique: it goes to ``tree.host``)."""
    domain = tree.domain
    hosted: list[list[Clique]] = [[] for _ in tree.cliques]
    for clique in cliques:
        host = tree.host(clique)
        if host is None:
            raise ValueError(f"{clique} is inside no clique of the junction tree")
        hosted[host].append(clique)
    plans = [_host_plan(domain, tree.cliques[h], members) for h, members in enumerate(hosted)]
    return MergePlan(tuple(p for p, _ in plans), tuple(r for _, r in plans),
                     tuple(domain.project(c) for c in tree.cliques))


def _host_plan(domain: Domain, host: Clique, members: list[Clique]) -> tuple[tuple[_Node, ...], bool]:
    """The binary merge tree of one tree clique's members: the pair with the smallest union is
    merged first (ties: the earliest pair)."""
    if not members:
        return (), False
    order = {a: i for i, a in enumerate(domain.attributes)}
    attributes: list[frozenset[str]] = [frozenset(c) for c in members]
    children: list[tuple[int, ...]] = [() for _ in members]
    live = list(range(len(members)))
    while len(live) > 1:
        i, j = min(((a, b) for n, b in enumerate(live) for a in live[:n]),
                   key=lambda ab: domain.size(tuple(attributes[ab[0]] | attributes[ab[1]])))
        attributes.append(attributes[i] | attributes[j])
        children.append((i, j))
        live = [k for k in live if k not in (i, j)] + [len(attributes) - 1]
    domains = [domain.project(c) for c in members] + [
        domain.project(tuple(sorted(a, key=order.__getitem__))) for a in attributes[len(members):]]
    parent = {c: k for k, kids in enumerate(children) for c in kids}
    top = domain.project(host)
    nodes = []
    for k, d in enumerate(domains):
        above = domains[parent[k]] if k in parent else top
        nodes.append(_Node(d, members[k] if k < len(members) else None, children[k],
                           _alignment(d, above)))
    return tuple(nodes), domains[-1].attributes == top.attributes
