"""Raking to target marginals and low-variance resampling (post-processing)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Domain
from synthpriv.generators.guidance import Target, rake, resample


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
