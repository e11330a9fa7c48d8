"""Estimation and sampling of the graphical model: exact marginals are reproduced for tree, cyclic
and 3-way structures; the size limit refuses cleanly; samples follow the model's marginals."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.marginals.estimation import ModelTooLargeError, estimate
from synthpriv.marginals.measurement import Measurement

DOMAIN = Domain(("a", "b", "c", "d"), (2, 3, 2, 3))
ROWS = 2000


def dependent_table(seed: int = 0) -> Dataset:
    """Four attributes, each depending on the previous ones, with a cycle-closing link d ~ a."""
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 2, ROWS)
    b = (a + rng.integers(0, 2, ROWS)) % 3
    c = ((b > 0) ^ (rng.random(ROWS) < 0.2)).astype(int)
    d = (a + c + (rng.random(ROWS) < 0.3)) % 3
    return Dataset(np.stack([a, b, c, d], axis=1), DOMAIN)


STRUCTURES = {
    "tree": [("a", "b"), ("b", "c"), ("c", "d")],
    "cycle": [("a", "b"), ("b", "c"), ("c", "d"), ("a", "d")],
    "three_way": [("a", "b", "c"), ("c", "d")],
}


def exact(data: Dataset, cliques) -> list[Measurement]:
    """Noise-free 'measurements' (sigma only weighs them)."""
    return [Measurement(c, data.marginal(c), 1.0) for c in cliques]


@pytest.mark.parametrize("structure", sorted(STRUCTURES))
def test_estimation_reproduces_exact_marginals(structure: str) -> None:
    data = dependent_table()
    cliques = STRUCTURES[structure]
    model = estimate(DOMAIN, exact(data, cliques), iterations=3000, tolerance=1e-9)
    assert model.total == pytest.approx(ROWS)
    for clique in cliques:
        # The measured marginals are consistent and realisable, so the optimum has zero loss:
        # what is left is optimiser error, well below one row per cell.
        np.testing.assert_allclose(model.project(clique), data.marginal(clique), atol=0.5)


def test_estimation_of_unmeasured_pairs_follows_the_structure() -> None:
    """With the tree a-b-c-d, a and c are independent given b: the model's (a, c) marginal is
    the one implied by the measured pairs, not independence of a and c."""
    data = dependent_table()
    model = estimate(DOMAIN, exact(data, STRUCTURES["tree"]), iterations=3000, tolerance=1e-9)
    ab, bc, b = data.marginal(("a", "b")), data.marginal(("b", "c")), data.marginal(("b",))
    implied = np.einsum("ab,bc->ac", ab, bc / b[:, None])
    np.testing.assert_allclose(model.project(("a", "c")), implied, atol=0.5)


def test_noisy_measurements_are_fitted_to_within_their_noise() -> None:
    data = dependent_table()
    rng = np.random.default_rng(3)
    sigma = 20.0
    measurements = [
        Measurement(c, data.marginal(c) + rng.normal(0, sigma, DOMAIN.project(c).shape), sigma)
        for c in STRUCTURES["three_way"] + [("a",), ("b",), ("d",)]
    ]
    model = estimate(DOMAIN, measurements, iterations=1000)
    # Least squares over consistent marginals averages the noise of overlapping measurements:
    # each fitted cell is within a few σ of the truth (σ = 20 counts, 12 cells in (a, b, c)).
    error = np.abs(model.project(("a", "b", "c")) - data.marginal(("a", "b", "c")))
    assert error.max() < 4 * sigma
    assert model.total == pytest.approx(ROWS, abs=4 * sigma)


def test_model_size_limit_refuses_before_allocating() -> None:
    data = dependent_table()
    with pytest.raises(ModelTooLargeError, match="max_cells=10"):
        estimate(DOMAIN, exact(data, STRUCTURES["three_way"]), max_cells=10)


def _sample_marginal(codes: np.ndarray, clique) -> np.ndarray:
    return Dataset(codes, DOMAIN).marginal(clique)


@pytest.mark.parametrize("structure", ["tree", "three_way"])
def test_iid_samples_follow_the_model_within_sampling_error(structure: str) -> None:
    model = estimate(DOMAIN, exact(dependent_table(), STRUCTURES[structure]), iterations=2000)
    n = 50_000
    codes = model.sample(n, np.random.default_rng(0))
    for clique in STRUCTURES[structure] + [("a", "d")]:
        p = model.project(clique) / model.total
        observed = _sample_marginal(codes, clique) / n
        # Each cell frequency is Binomial(n, p)/n: 4.5 standard deviations over ≤ 12 cells.
        assert np.all(np.abs(observed - p) <= 4.5 * np.sqrt(p * (1 - p) / n) + 1e-12)


def test_rounded_samples_match_the_model_to_within_rounding() -> None:
    model = estimate(DOMAIN, exact(dependent_table(), STRUCTURES["tree"]), iterations=2000)
    n = 3000
    codes = model.sample_rounded(n, np.random.default_rng(1))
    for clique in STRUCTURES["tree"]:
        expected = model.project(clique) * n / model.total
        # Controlled rounding: a cell is off only by the rounding of each conditioning group it
        # draws from (at most one row per group; the largest separator here has 3 values).
        assert np.abs(_sample_marginal(codes, clique) - expected).max() <= 3 + 1e-9
    assert codes.shape == (n, 4)
