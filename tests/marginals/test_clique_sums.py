"""The merge plan: sums onto a junction tree's cliques and projections back through shared
sub-tables equal the plain ones, and cost fewer passes over the tree cliques."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Domain
from synthpriv.marginals.clique_sums import merge_plan
from synthpriv.marginals.factor import Factor
from synthpriv.marginals.junction_tree import JunctionTree


def random_case(seed: int) -> tuple[Domain, list[tuple[str, ...]]]:
    """4-9 attributes (names not in domain order), 2-12 cliques of 1-4 attributes, each in a
    random attribute order (the plan must transpose)."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(4, 10))
    names = [f"c{int(k)}" for k in rng.permutation(50)[:d]]
    domain = Domain(tuple(names), tuple(int(s) for s in rng.choice([2, 3, 4, 5], size=d)))
    cliques = {tuple(rng.choice(names, size=int(rng.integers(1, 5)), replace=False))
               for _ in range(int(rng.integers(2, 13)))}
    return domain, sorted(cliques)


@pytest.mark.parametrize("seed", range(12))
def test_the_sum_onto_the_tree_equals_the_plain_broadcast_sum(seed: int) -> None:
    domain, cliques = random_case(seed)
    tree = JunctionTree.build(domain, cliques)
    rng = np.random.default_rng(seed)
    tables = {c: rng.normal(size=domain.project(c).shape) for c in cliques}
    if seed % 3 == 0:  # a clique absent from the tables counts 0 (a gradient of fewer cliques)
        del tables[cliques[0]]
    out = [np.full(domain.project(c).shape, np.nan) for c in tree.cliques]  # spent buffers
    found = merge_plan(tree, tuple(cliques)).sum_onto_tree(tables, out)
    assert found is out
    for i, clique in enumerate(tree.cliques):
        expected = Factor.zeros(domain.project(clique))
        for c, values in tables.items():
            if tree.host(c) == i:
                expected = (expected + Factor(domain.project(c), values)).transpose(clique)
        np.testing.assert_allclose(out[i], expected.values, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(12))
def test_projections_down_the_plan_equal_each_cliques_marginal(seed: int) -> None:
    domain, cliques = random_case(seed)
    tree = JunctionTree.build(domain, cliques)
    rng = np.random.default_rng(seed + 100)
    marginals = [rng.random(domain.project(c).shape) for c in tree.cliques]
    wanted = cliques[::2]
    found = merge_plan(tree, tuple(cliques)).project(marginals, wanted)
    assert set(found) == set(wanted)
    for c in wanted:
        host = tree.host(c)
        expected = Factor(domain.project(tree.cliques[host]), marginals[host]).project(c)
        assert found[c].shape == domain.project(c).shape
        np.testing.assert_allclose(found[c], expected.values, rtol=1e-12, atol=1e-12)


def test_cliques_sharing_a_sub_table_meet_there_before_the_tree_clique() -> None:
    """Three 2-way cliques inside a 4-way one: summed on their 3-way union (1,000 cells), then
    once onto the 10,000-cell tree clique; projected the same way (not four passes over it)."""
    domain = Domain(("a", "b", "c", "d"), (10, 10, 10, 10))
    cliques = [("a", "b"), ("a", "c"), ("b", "c"), ("a", "b", "c", "d")]
    tree = JunctionTree.build(domain, cliques)
    assert tree.cliques == (("a", "b", "c", "d"),)
    plan = merge_plan(tree, tuple(cliques))
    unions = [node.domain.attributes for node in plan.nodes[0] if node.clique is None]
    assert unions == [("a", "b", "c"), ("a", "b", "c"), ("a", "b", "c", "d")]
    assert plan.root_is_clique == (True,)
    rng = np.random.default_rng(5)
    marginal = rng.random(domain.shape)
    wanted = [("b", "c"), ("a", "b"), ("a", "c")]  # not the 4-way one: it is the tree clique
    found = plan.project([marginal], wanted)
    for c in wanted:
        expected = Factor(domain, marginal).project(c).values
        np.testing.assert_allclose(found[c], expected, rtol=1e-12, atol=1e-12)
    steps = plan._schedules[frozenset(wanted)][0]
    sources = [(source, len(summed), clique) for source, summed, _, clique in steps]
    # the 3-way sub-table once from the 4-way marginal (a pass of 10,000 cells), then each
    # 2-way one from it (1,000 cells each), not three passes over the 10,000
    assert sources[0] == (-1, 1, None)
    assert sorted(sources[1:], key=str) == sorted([(0, 1, c) for c in wanted], key=str)
