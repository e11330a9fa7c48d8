"""The estimator's fast paths equal their definitions: ``contract`` equals variable elimination,
a model's marginals equal variable elimination over its covering subtree, the in-place tree
potentials and calibration equal the Factor-algebra versions, on random models."""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pytest

from synthpriv.domain import Domain
from synthpriv.marginals.estimation import GraphicalModel, _Objective, _Problem, calibrate, estimate
from synthpriv.marginals.factor import (
    Factor,
    contract,
    product,
    variable_elimination,
)
from synthpriv.marginals.measurement import Measurement


def random_model(seed: int) -> tuple[GraphicalModel, list[tuple[str, ...]]]:
    """A model fitted to noisy random measurements of 6-9 attributes: random pairs and triples,
    so the junction tree has several cliques and many marginals lie across them."""
    rng = np.random.default_rng(seed)
    d = int(rng.integers(6, 10))
    domain = Domain(tuple(f"x{i}" for i in range(d)), tuple(int(s) for s in rng.integers(2, 6, d)))
    cliques = [(a,) for a in domain.attributes] + [
        tuple(sorted(rng.choice(domain.attributes, size=int(rng.integers(2, 4)), replace=False)))
        for _ in range(int(rng.integers(3, 7)))
    ]
    measurements = [
        Measurement(c, rng.normal(100.0 / domain.size(c), 3.0, domain.project(c).shape), 3.0)
        for c in cliques
    ]
    return estimate(domain, measurements, iterations=30), cliques


def reference_project(model: GraphicalModel, attributes: tuple[str, ...]) -> np.ndarray:
    """``GraphicalModel.project`` as written before the fast path (commit 7053f65)."""
    host = model.tree.host(attributes)
    if host is not None:
        return model.marginals[host].project(attributes).values
    subtree = model._covering_subtree(set(attributes))
    top = min(subtree, key=model.tree.order.index)
    factors = [model.marginals[top]]
    for i in subtree:
        if i != top:
            separator = model.marginals[i].project(model.tree.separator[i])
            factors.append(model.marginals[i] / separator)
    return variable_elimination(factors, attributes).values


@pytest.mark.parametrize("seed", range(12))
def test_every_marginal_equals_variable_elimination(seed: int) -> None:
    model, _ = random_model(seed)
    names = model.domain.attributes
    across = 0
    for k in (2, 3):
        for attributes in combinations(names, k):
            for order in (attributes, attributes[::-1]):
                expected = reference_project(model, order)
                np.testing.assert_allclose(model.project(order), expected, rtol=1e-10,
                                           atol=1e-10 * model.total)
            across += model.tree.host(attributes) is None
    assert across > 0  # the fast path was exercised


@pytest.mark.parametrize("seed", range(20))
def test_contract_equals_variable_elimination(seed: int) -> None:
    rng = np.random.default_rng(seed)
    domain = Domain(tuple("abcdefg"), tuple(int(s) for s in rng.integers(1, 5, 7)))
    factors = [
        Factor(domain.project(c), rng.random(domain.project(c).shape))
        for c in (tuple(rng.choice(list("abcdefg"), size=int(rng.integers(1, 4)), replace=False))
                  for _ in range(int(rng.integers(2, 6))))
    ]
    present = sorted({a for f in factors for a in f.attributes})
    keep = tuple(rng.permutation(present)[: int(rng.integers(0, min(3, len(present)) + 1))])
    expected = variable_elimination(factors, keep)
    result = contract(factors, keep)
    assert result.attributes == keep
    np.testing.assert_allclose(result.values, expected.values, rtol=1e-12)
    full = product(factors).project(keep) if keep else None
    if full is not None:
        np.testing.assert_allclose(result.values, full.values, rtol=1e-12)


@pytest.mark.parametrize("seed", range(6))
def test_a_contraction_planned_once_per_shape_serves_new_values(seed: int) -> None:
    """``contract`` plans its pairs once per (shapes, keep) and reuses the plan: tables of the
    same shapes with other values (a later candidate, a later round) must still give their own
    sum of products."""
    from synthpriv.marginals.factor import _contraction

    rng = np.random.default_rng(100 + seed)
    domain = Domain(tuple("abcdefg"), tuple(int(s) for s in rng.integers(2, 5, 7)))
    cliques = [tuple(sorted(rng.choice(list("abcdefg"), size=3, replace=False)))
               for _ in range(int(rng.integers(3, 6)))]
    present = sorted({a for c in cliques for a in c})
    keep = tuple(rng.permutation(present)[:3])
    hits = _contraction.cache_info().hits
    for _ in range(3):
        factors = [Factor(domain.project(c), rng.random(domain.project(c).shape)) for c in cliques]
        np.testing.assert_allclose(contract(factors, keep).values,
                                   product(factors).project(keep).values, rtol=1e-12)
    assert _contraction.cache_info().hits >= hits + 2


def test_contract_refuses_an_attribute_in_no_factor() -> None:
    factor = Factor(Domain(("a",), (2,)), np.ones(2))
    with pytest.raises(ValueError, match="not in any factor"):
        contract([factor], ("b",))


def brute_force_marginals(tree, theta: list[np.ndarray], total: float) -> list[np.ndarray]:
    """The definition: ``total * p`` with ``p ∝ exp(sum of the tree cliques' log-potentials)``
    over the whole domain, summed onto each clique."""
    domain = tree.domain
    log_joint = np.zeros(domain.shape)
    for clique, values in zip(tree.cliques, theta, strict=True):
        log_joint = log_joint + Factor(domain.project(clique), values).expand(domain).values
    joint = np.exp(log_joint - log_joint.max())
    joint *= total / joint.sum()
    full = Factor(domain, joint)
    return [full.project(clique).values for clique in tree.cliques]


@pytest.mark.parametrize("seed", range(8))
def test_tree_potentials_and_calibration_equal_their_definitions(seed: int) -> None:
    """The grouped sum of hosted potentials equals the Factor sum to rounding; calibrating it
    gives the clique marginals of the joint computed over the whole domain, also where one
    shift per clique underflows (log-potentials spread over 2,000 nats: the per-cell fallback)
    and with one cell far below the rest."""
    model, _ = random_model(seed)
    tree = model.tree
    rng = np.random.default_rng(seed)
    potentials = dict(model.potentials)
    if seed % 4 == 1:  # a spread that underflows one shift
        c = next(iter(potentials))
        potentials[c] = Factor(potentials[c].domain, rng.uniform(-2000, 0, potentials[c].domain.shape))
    if seed % 4 == 2:  # a cell far below the rest of its clique
        c = next(iter(potentials))
        values = potentials[c].values.copy()
        values.flat[0] = -300.0
        potentials[c] = Factor(potentials[c].domain, values)
    measurements = [Measurement(c, np.ones(model.domain.project(c).shape), 1.0) for c in potentials]
    objective = _Objective.build(model.domain, measurements)
    hosts = {c: tree.host(c) for c in potentials}
    problem = _Problem(tree, objective, model.total, hosts)
    theta = problem.tree_potentials(potentials)
    for i, clique in enumerate(tree.cliques):
        expected = Factor.zeros(model.domain.project(clique))
        for c, potential in potentials.items():
            if hosts[c] == i:
                expected = (expected + potential).transpose(clique)
        np.testing.assert_allclose(theta[i], expected.values, rtol=1e-12, atol=1e-12)
    factors = [Factor(model.domain.project(c), t) for c, t in zip(tree.cliques, theta, strict=True)]
    expected = brute_force_marginals(tree, theta, model.total)
    fast = problem.evaluate(potentials).marginals
    public = calibrate(tree, factors, model.total)
    for new, same, old in zip(fast, public, expected, strict=True):
        np.testing.assert_allclose(new.values, old, rtol=1e-9, atol=1e-12 * model.total)
        assert np.array_equal(new.values, same.values)
