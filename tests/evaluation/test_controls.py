"""The Gaussian-copula positive control: beta marginals for numeric columns, the exact uniform
marginal for SDV's uniform-encoded categorical columns."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthpriv.evaluation.controls import _sdv_synthesizer, sdv_generator


def _table(rows: int = 600) -> pd.DataFrame:
    rng = np.random.default_rng(16)
    return pd.DataFrame({
        "colour": rng.choice(["red", "green", "blue", "grey"], rows, p=[0.62, 0.25, 0.1, 0.03]),
        "age": rng.integers(18, 90, rows).astype(float),
        "size": rng.choice(["s", "m", "l"], rows, p=[0.15, 0.7, 0.15]),
    })


def test_copula_fits_uniform_categorical_and_beta_numeric_marginals():
    train = _table()
    synthesizer = _sdv_synthesizer("gaussian_copula", list(train.columns), ["age"], 0)
    synthesizer.fit({"table": train})
    learned = {c: d["distribution"] for c, d in synthesizer.get_learned_distributions().items()}
    assert learned == {"colour": "uniform", "age": "beta", "size": "uniform"}


def test_copula_control_keeps_category_shares():
    """Each category's share in the control's output is its training share within sampling error
    (binomial: 4 standard errors of a share of 600 rows is at most 4 * 0.5 / sqrt(600) = 0.082)."""
    train = _table()
    fake = sdv_generator("gaussian_copula", train, ["age"], 0)
    assert list(fake.columns) == list(train.columns) and len(fake) == len(train)
    for column in ("colour", "size"):
        real = train[column].value_counts(normalize=True)
        synthetic = fake[column].value_counts(normalize=True).reindex(real.index, fill_value=0)
        assert (real - synthetic).abs().max() < 4 * 0.5 / np.sqrt(len(train))
