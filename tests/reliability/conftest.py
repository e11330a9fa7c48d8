"""Shared helpers for the reliability tests: a small public schema, CSV and job writers, and a
runner that calls the command line the way a user does and returns (exit code, stderr)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from synthpriv.cli import main

SCHEMA = {
    "columns": [
        {"name": "age", "kind": "integer", "lower": 0, "upper": 100, "bins": 10},
        {"name": "city", "kind": "categorical", "categories": ["Paris", "Lyon", "Nice"]},
        {"name": "income", "kind": "continuous", "lower": 0, "upper": 1000, "bins": 8,
         "missing": True},
    ]
}
GOOD_ROWS = "age,city,income\n30,Paris,100.5\n41,Lyon,\n25,Nice,999\n67,Paris,12\n"


def job_config(data_path: Path, out: Path, **overrides: dict) -> dict:
    """A small job on ``data_path`` (inline schema above) releasing to ``out``; ``overrides`` replace
    whole sections or merge into mapping sections."""
    config = {
        "name": "rel",
        "data": {"path": str(data_path), "schema": SCHEMA},
        "budget": {"epsilon": 1.0, "delta": 1e-6},
        "pipeline": {"recipe": "independent"},
        "evaluation": {"enabled": False},
        "output": {"dir": str(out)},
    }
    for key, value in overrides.items():
        if isinstance(value, dict) and isinstance(config.get(key), dict):
            config[key] = {**config[key], **value}
        else:
            config[key] = value
    return config


@pytest.fixture
def cli_run(tmp_path: Path, capsys) -> Callable[..., tuple[int, str]]:
    """Write ``csv`` (text or bytes) and a job config, run ``synthpriv run``; return the exit code
    and what was printed on stderr. ``config`` is a full mapping (or YAML text) to use instead."""

    def run(csv: str | bytes = GOOD_ROWS, config: dict | str | None = None,
            args: tuple[str, ...] = (), **overrides: dict) -> tuple[int, str]:
        data = tmp_path / "data.csv"
        data.write_bytes(csv if isinstance(csv, bytes) else csv.encode("utf-8"))
        if config is None:
            config = job_config(data, tmp_path / "release", **overrides)
        path = tmp_path / "job.yaml"
        path.write_text(config if isinstance(config, str) else yaml.safe_dump(config))
        capsys.readouterr()
        code = main(["run", str(path), *args])
        return code, capsys.readouterr().err

    return run
