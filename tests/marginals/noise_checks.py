"""Shared behavioural check for combined noisy counts (discmeas, heapmeas tests)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import chi2, norm


def assert_error_variance(errors: np.ndarray, expected: float, what: str) -> None:
    """``errors`` (released count less exact count, over seeds and cells) have mean 0 and
    variance ``expected``, both within their 1e-4 sampling bounds (normal mean, χ² variance)."""
    errors = np.asarray(errors, dtype=float)
    draws = len(errors)
    assert abs(errors.mean()) <= norm.isf(1e-4 / 2) * np.sqrt(expected / draws), errors.mean()
    low, high = chi2.ppf([1e-4 / 2, 1 - 1e-4 / 2], draws - 1) / (draws - 1)
    ratio = errors.var(ddof=1) / expected
    assert low <= ratio <= high, (
        f"the {what}' error variance is {ratio:.2f}× the formula's: 1 when both the recipe's "
        "and the domain step's noisy counts are combined")


def assert_same_spend(after, before, recipe: str) -> None:
    """Two seeded releases (``Synthesizer``), with and without a post-processing combination,
    spent the same: the same ε on their ledgers and, for MST (no adaptive rounds), the same
    events; and the combination was used (the releases differ)."""
    delta = after.job.config.budget.delta
    assert after._fitted.synthesis.ledger.epsilon(delta) == pytest.approx(
        before._fitted.synthesis.ledger.epsilon(delta), rel=1e-12)
    assert after.epsilon <= 1.0 + 1e-9
    if recipe == "mst":
        assert after._fitted.synthesis.ledger.events == before._fitted.synthesis.ledger.events
    assert not after.synthetic.equals(before.synthetic)
