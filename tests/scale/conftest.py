"""Fixtures for the scale tests: the bundled Adult sample as CSV and as multi-row-group Parquet."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from synthpriv.encoding import TableEncoder
from synthpriv.schema import Schema, load_schema

ROOT = Path(__file__).resolve().parents[2]
ADULT = ROOT / "data" / "adult"


@pytest.fixture(scope="session")
def adult_schema() -> Schema:
    return load_schema(ADULT / "schema.yaml")


@pytest.fixture(scope="session")
def encoder(adult_schema: Schema) -> TableEncoder:
    return TableEncoder(adult_schema)


@pytest.fixture(scope="session")
def adult_csv(tmp_path_factory: pytest.TempPathFactory, adult_train: pd.DataFrame) -> Path:
    """3,001 rows of Adult (a prime number of rows, so no chunk size but 1 and n divides it)."""
    path = tmp_path_factory.mktemp("scale") / "adult.csv"
    adult_train.sample(3001, random_state=3).to_csv(path, index=False)
    return path


@pytest.fixture(scope="session")
def adult_parquet(adult_csv: Path) -> Path:
    """The same rows as Parquet in row groups of 700 (5 groups), typed columns and nulls."""
    frame = pd.read_csv(adult_csv, dtype=str, keep_default_na=False)
    for name in ("age", "fnlwgt", "capital-gain"):
        frame[name] = pd.to_numeric(frame[name])
    frame = frame.replace({"": None})
    path = adult_csv.with_suffix(".parquet")
    pq.write_table(pa.Table.from_pandas(frame, preserve_index=False), path, row_group_size=700)
    return path
