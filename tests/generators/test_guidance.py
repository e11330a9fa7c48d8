"""Raking to target marginals and low-variance resampling (post-processing)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Domain
from synthpriv.generators.guidance import Target, rake, rake_conditional, resample


def test_raking_matches_feasible_target_marginals() -> None:
    rng = np.random.default_rng(0)
    domain = Domain(("a", "b", "c"), (3, 4, 2))
    codes = np.stack([rng.integers(0, s, 5000) for s in domain.shape], axis=1)
    joint = rng.dirichlet(np.ones(24)).reshape(3, 4, 2)  # a different, dependent distribution
    targets = [Target(("a", "b"), joint.sum(axis=2)), Target(("c", "b"), joint.sum(axis=0).T),
               Target(("a",), joint.sum(axis=(1, 2)) * 1000)]  # counts are normalised too
    weights = rake(codes, domain, targets, iterations=200, tolerance=1e-9)
    assert weights.sum() == pytest.approx(1.0) and weights.min() >= 0
    for target in targets:
        axes = list(domain.axes(target.clique))
        index = np.ravel_multi_index(codes[:, axes].T, domain.project(target.clique).shape)
        got = np.bincount(index, weights=weights, minlength=target.probabilities.size)
        goal = target.probabilities.ravel() / target.probabilities.sum()
        assert np.abs(got - goal).max() < 1e-6
    before = np.bincount(codes[:, 0], minlength=3) / len(codes)
    assert np.abs(before - joint.sum(axis=(1, 2))).max() > 0.01  # raking had work to do


def test_systematic_resampling_keeps_each_row_within_one_of_its_share() -> None:
    rng = np.random.default_rng(1)
    weights = rng.dirichlet(np.ones(50))
    drawn = resample(weights, 1000, rng, systematic=True)
    counts = np.bincount(drawn, minlength=50)
    assert counts.sum() == 1000
    assert np.all(np.abs(counts - 1000 * weights) < 1 + 1e-9)
    iid = np.bincount(resample(weights, 1000, rng, systematic=False), minlength=50)
    assert iid.sum() == 1000 and np.abs(iid - 1000 * weights).max() >= 1


def test_conditional_raking_gives_every_context_cell_the_targets_conditional() -> None:
    """Rows fix a and b (uniform, independent); y's probabilities are raked to the (a, y) and
    (b, y) marginals of a joint with that context, so the targets are feasible. The rows'
    expected y per cell of a (and of b) then follows the joint's conditionals, every row's
    probabilities still sum to 1, and no target leaves them as they were."""
    domain = Domain.from_sizes({"a": 3, "b": 2, "y": 2})
    rng = np.random.default_rng(4)
    codes = np.column_stack([rng.integers(0, 3, 3000), rng.integers(0, 2, 3000),
                             np.zeros(3000, int)])
    network = rng.dirichlet([1.0, 1.0], size=3000)  # what an untrained network might say
    y_given_ab = np.array([[0.9, 0.6], [0.2, 0.4], [0.5, 0.7]])  # p(y = 0 | a, b)
    joint = np.stack([y_given_ab, 1 - y_given_ab], axis=-1) / 6  # p(a, b, y), a and b uniform
    joint_ay, joint_by = joint.sum(axis=1), joint.sum(axis=0)
    targets = [Target(("y", "a"), joint_ay.T), Target(("b", "y"), joint_by)]
    raked = rake_conditional(network, codes, "y", domain, targets, iterations=200,
                             tolerance=1e-9)
    np.testing.assert_allclose(raked.sum(axis=1), 1.0)
    for column, joint in ((0, joint_ay), (1, joint_by)):
        for cell in range(joint.shape[0]):
            rows = codes[:, column] == cell
            expected = joint[cell] / joint[cell].sum()
            np.testing.assert_allclose(raked[rows].mean(axis=0), expected, atol=0.01)
    untouched = rake_conditional(network, codes, "y", domain, [], iterations=5)
    np.testing.assert_array_equal(untouched, network)
