"""AIM's per-round shortcuts equal what they replace: the size screen's shared measured graph
gives ``model_cells`` of each candidate, and the candidates' model marginals summed from larger
candidates equal ``GraphicalModel.project`` (random domains, cliques and models)."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from synthpriv.domain import Domain
from synthpriv.marginals.aim import _within_size, candidate_marginals
from synthpriv.marginals.estimation import estimate
from synthpriv.marginals.factor import contract
from synthpriv.marginals.junction_tree import SizeScreen, model_cells
from synthpriv.marginals.measurement import Measurement
from synthpriv.marginals.selection import downward_closure


def random_case(seed: int) -> tuple[Domain, list[tuple[str, ...]]]:
    rng = np.random.default_rng(seed)
    d = int(rng.integers(6, 11))
    domain = Domain(tuple(f"x{i}" for i in range(d)), tuple(int(s) for s in rng.integers(2, 7, d)))
    measured = [(a,) for a in domain.attributes] + [
        tuple(sorted(rng.choice(domain.attributes, size=int(rng.integers(2, 4)), replace=False),
                     key=domain.attributes.index))
        for _ in range(int(rng.integers(2, 7)))
    ]
    return domain, measured


def fitted(domain: Domain, measured: list[tuple[str, ...]], seed: int):
    rng = np.random.default_rng(seed)
    measurements = [
        Measurement(c, rng.normal(200.0 / domain.size(c), 2.0, domain.project(c).shape), 2.0)
        for c in measured
    ]
    return estimate(domain, measurements, iterations=20)


@pytest.mark.parametrize("seed", range(10))
def test_size_screen_equals_model_cells_of_each_candidate(seed: int) -> None:
    domain, measured = random_case(seed)
    screen = SizeScreen(domain, measured)
    candidates = list(combinations(domain.attributes, 3)) + list(combinations(domain.attributes, 2))
    cells = [screen.cells(c) for c in candidates]
    assert cells == [model_cells(domain, measured + [c]) for c in candidates]
    assert len(set(cells)) > 1  # the candidates differ: the check can tell them apart


@pytest.mark.parametrize("seed", range(4))
def test_size_screen_on_a_wide_graph_of_many_components(seed: int) -> None:
    """A 60-column domain whose measured graph has many components (isolated columns, chains,
    triangles): candidates inside one component, joining two or three, and on isolated columns
    all give ``model_cells`` (the screen recomputes only the components a candidate touches)."""
    rng = np.random.default_rng(100 + seed)
    domain = Domain(tuple(f"c{i}" for i in range(60)), tuple(int(s) for s in rng.integers(2, 9, 60)))
    names = domain.attributes
    measured = [(a,) for a in names] + [
        tuple(sorted(rng.choice(names[:40], size=int(rng.integers(2, 4)), replace=False),
                     key=names.index))
        for _ in range(15)
    ]
    screen = SizeScreen(domain, measured)
    candidates = [tuple(sorted(rng.choice(names, size=k, replace=False), key=names.index))
                  for k in (1, 2, 3) for _ in range(150)]
    cells = [screen.cells(c) for c in candidates]
    assert cells == [model_cells(domain, measured + [c]) for c in candidates]
    assert len(set(cells)) > 20


@pytest.mark.parametrize("seed", range(6))
def test_within_size_keeps_exactly_the_candidates_the_definition_keeps(seed: int) -> None:
    domain, measured = random_case(seed)
    model = fitted(domain, measured, seed)
    candidates = downward_closure(list(combinations(domain.attributes, 3)))
    base = model_cells(domain, measured)
    for limit in (base, 2 * base, 5 * base):
        hosts = [set(c) for c in model.cliques]
        expected = [c for c in candidates if any(set(c) <= h for h in hosts)
                    or (domain.size(c) <= limit and model_cells(domain, measured + [c]) <= limit)]
        assert _within_size(domain, model, measured, candidates, limit) == expected


@pytest.mark.parametrize("seed", range(8))
def test_candidate_marginals_equal_the_models_projections(seed: int) -> None:
    domain, measured = random_case(seed)
    model = fitted(domain, measured, seed)
    rng = np.random.default_rng(seed)
    candidates = downward_closure(list(combinations(domain.attributes, 3)))
    allowed = [candidates[i] for i in sorted(rng.choice(len(candidates), len(candidates) // 2,
                                                        replace=False))]
    found = candidate_marginals(model, allowed)
    assert set(found) == set(allowed)
    for clique in allowed:
        direct = model.project(clique)
        assert found[clique].shape == direct.shape
        np.testing.assert_allclose(found[clique], direct, rtol=1e-9, atol=1e-9 * model.total)


@pytest.mark.parametrize("seed", range(4))
def test_sum_axes_equals_numpy_sum_over_every_subset_of_axes(seed: int) -> None:
    from synthpriv.marginals.factor import sum_axes

    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(1, 6, size=int(rng.integers(2, 6))))
    values = rng.normal(size=shape)
    for table in (values, values.transpose(tuple(reversed(range(values.ndim))))):
        for k in range(1, table.ndim + 1):
            for axes in combinations(range(table.ndim), k):
                np.testing.assert_allclose(sum_axes(table, axes), table.sum(axis=axes),
                                           rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(4))
def test_sum_axes_by_slabs_equals_numpy_sum_on_tables_with_large_inner_blocks(seed: int) -> None:
    """Tables like the estimator's (up to 12 cells an axis, small last axes): every subset of
    axes, summed partly as contiguous slabs (``_sum_slabs``), equals ``ndarray.sum``; and the
    slab path is taken (its partial sums are not the whole answer for a run it cannot add)."""
    from synthpriv.marginals.factor import SLAB, _sum_slabs, sum_axes

    rng = np.random.default_rng(seed)
    shape = tuple(int(n) for n in rng.integers(2, 13, size=int(rng.integers(3, 6)))) + (2,)
    values = rng.normal(size=shape)
    slabbed = 0
    for k in range(1, values.ndim):
        for axes in combinations(range(values.ndim), k):
            np.testing.assert_allclose(sum_axes(values, axes), values.sum(axis=axes),
                                       rtol=1e-12, atol=1e-12)
            partial, rest = _sum_slabs(values, axes)
            if partial is not values:
                slabbed += 1
                done = axes[:len(axes) - len(rest)]  # the runs added as slabs: a prefix
                assert np.prod(shape[done[-1] + 1:]) >= SLAB
                np.testing.assert_allclose(partial, values.sum(axis=done), rtol=1e-12,
                                           atol=1e-12)
                assert rest == tuple(a - len(done) for a in axes[len(done):])
    assert slabbed > 0


@pytest.mark.parametrize("seed", range(4))
def test_linear_updates_on_the_tree_equal_the_sum_of_the_updated_potentials(seed: int) -> None:
    """The mirror descent steps and extrapolates the tree cliques' potentials directly; they
    must equal ``tree_potentials`` of the measured cliques' updated potentials."""
    from synthpriv.marginals.estimation import _extrapolate, _Objective, _Problem

    domain, measured = random_case(seed)
    model = fitted(domain, measured, seed)
    rng = np.random.default_rng(seed)
    measurements = [Measurement(c, rng.normal(50.0, 2.0, domain.project(c).shape), 2.0)
                    for c in measured]
    objective = _Objective.build(domain, measurements)
    problem = _Problem(model.tree, objective, model.total,
                       {c: model.tree.host(c) for c in model.potentials})
    start = problem.evaluate(dict(model.potentials))
    potentials, theta = problem.step(start, 0.3)
    moved = problem.evaluate(potentials, theta)
    for a, b in zip(theta, problem.tree_potentials(potentials), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)
    assert moved.loss == pytest.approx(problem.evaluate(potentials).loss, rel=1e-10)
    assert max(np.abs(a - b).max() for a, b in zip(theta, start.theta, strict=True)) > 1e-6
    potentials, theta = _extrapolate(moved, start, 0.4)
    for a, b in zip(theta, problem.tree_potentials(potentials), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("seed", range(4))
def test_evaluate_leaves_the_tree_potentials_it_is_given_unchanged(seed: int) -> None:
    """``evaluate`` calibrates without copying the point's tree potentials first, so it must
    never write into them (a later step and extrapolation start from them), and its marginals
    must equal ``calibrate`` on owned copies."""
    from synthpriv.marginals.estimation import _Objective, _Problem, calibrate
    from synthpriv.marginals.factor import Factor

    domain, measured = random_case(seed)
    model = fitted(domain, measured, seed)
    rng = np.random.default_rng(seed)
    measurements = [Measurement(c, rng.normal(50.0, 2.0, domain.project(c).shape), 2.0)
                    for c in measured]
    problem = _Problem(model.tree, _Objective.build(domain, measurements), model.total,
                       {c: model.tree.host(c) for c in model.potentials})
    potentials = {c: Factor(p.domain, p.values + rng.normal(0.0, 0.5, p.values.shape))
                  for c, p in model.potentials.items()}
    theta = problem.tree_potentials(potentials)
    before = [t.copy() for t in theta]
    point = problem.evaluate(potentials, theta)
    for given, kept in zip(theta, before, strict=True):
        np.testing.assert_array_equal(given, kept)
    expected = calibrate(model.tree, [Factor(d, t) for d, t in
                                      zip(problem._clique_domains, before, strict=True)],
                         model.total)
    for found, wanted in zip(point.marginals, expected, strict=True):
        np.testing.assert_allclose(found.values, wanted.values, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_covering_subtree_is_the_smallest_and_projects_as_the_whole_tree(seed: int) -> None:
    """The subtree a cross-clique projection contracts (neighbours and separators cached per
    model) is connected, covers the wanted attributes, keeps no leaf it could drop, and gives
    the marginal that contracting the whole tree gives."""
    domain, measured = random_case(seed)
    model = fitted(domain, measured, seed)
    tree = model.tree
    whole = [model.marginals[tree.order[0]]] + [model._conditionals[i] for i in tree.order[1:]]
    spanning = [c for c in combinations(domain.attributes, 2) if tree.host(c) is None]
    assert spanning  # the case has projections across cliques
    for wanted in spanning:
        subtree = set(model._covering_subtree(set(wanted)))
        assert set(wanted) <= set().union(*(tree.cliques[i] for i in subtree))
        inner = {i: {j for j in (*tree.children[i], tree.parent[i]) if j in subtree}
                 for i in subtree}
        reached, frontier = set(), [min(subtree)]
        while frontier:
            i = frontier.pop()
            reached.add(i)
            frontier.extend(inner[i] - reached)
        assert reached == subtree  # connected
        for i, near in inner.items():
            if len(near) == 1 and len(subtree) > 1:  # a leaf holds a wanted attribute alone
                assert (set(tree.cliques[i]) - set(tree.cliques[next(iter(near))])) & set(wanted)
        assert np.allclose(model.project(wanted), contract(whole, wanted).values, rtol=1e-9)
