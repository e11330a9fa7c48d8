"""Fixtures of the evaluation tests: Adult's train and test splits, read with inferred dtypes."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

ADULT = Path(__file__).resolve().parents[2] / "data" / "adult"
NUMERIC = ["age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week"]


@pytest.fixture(scope="session")
def adult() -> tuple[pd.DataFrame, pd.DataFrame]:
    """(train, test) splits of Adult, or skip when data/adult is absent."""
    train, test = ADULT / "adult_train.csv", ADULT / "adult_test.csv"
    if not (train.exists() and test.exists()):
        pytest.skip("data/adult is absent")
    return pd.read_csv(train), pd.read_csv(test)
