"""Shared fixtures: the bundled Adult table and small job configs written to a temp folder."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "data" / "adult"


@pytest.fixture(scope="session")
def adult_train() -> pd.DataFrame:
    return pd.read_csv(ADULT / "adult_train.csv", dtype=str, keep_default_na=False)


@pytest.fixture
def adult_sample_csv(tmp_path: Path, adult_train: pd.DataFrame) -> Path:
    """A 2,000-row sample of Adult's train split, as a CSV file."""
    path = tmp_path / "adult_sample.csv"
    adult_train.sample(2000, random_state=7).to_csv(path, index=False)
    return path


@pytest.fixture
def write_job(tmp_path: Path, adult_sample_csv: Path):
    """Write a job config (dict, merged over a small Adult job) and return its path."""

    def write(overrides: dict | None = None, name: str = "job.yaml") -> Path:
        config = {
            "name": "small",
            "data": {"path": str(adult_sample_csv), "schema": str(ADULT / "schema.yaml")},
            "budget": {"epsilon": 1.0, "delta": 1e-5},
            "pipeline": {"recipe": "independent"},
            "evaluation": {"enabled": False},
            "output": {"dir": str(tmp_path / "out" / "small")},
        }
        for key, value in (overrides or {}).items():
            if isinstance(value, dict) and isinstance(config.get(key), dict):
                config[key] = {**config[key], **value}
            else:
                config[key] = value
        path = tmp_path / name
        path.write_text(yaml.safe_dump(config))
        return path

    return write
