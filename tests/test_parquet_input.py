"""Parquet input works everywhere a table is read: run (streamed), a run that holds rows back and
evaluates, the sweep, and `synthpriv evaluate` (before: "not UTF-8" from the CSV-only reader)."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from tests.evaluation.tiny import write_tiny_job

FAST = {"quality_report": False, "bootstrap": 0, "controls": [], "anonymeter": False}


def parquet_job(folder: Path, **overrides) -> Path:
    """The tiny job with its train and holdout tables as Parquet files."""
    config = write_tiny_job(folder, evaluation=FAST)
    for name in ("train", "holdout"):
        pd.read_csv(folder / f"{name}.csv").to_parquet(folder / f"{name}.parquet", index=False)
    raw = yaml.safe_load(config.read_text())
    raw["data"].update(path="train.parquet", holdout="holdout.parquet")
    for key, value in overrides.items():
        raw[key] = {**raw.get(key, {}), **value}
    config.write_text(yaml.safe_dump(raw))
    return config


def test_run_reads_parquet(tmp_path: Path) -> None:
    config = parquet_job(tmp_path, evaluation={"enabled": False})
    assert main(["run", str(config)]) == 0
    synthetic = pd.read_csv(tmp_path / "out" / "tiny" / "synthetic.csv")
    assert list(synthetic.columns) == ["colour", "shape", "size", "weight"]


@pytest.mark.slow
def test_hold_back_and_evaluate_read_parquet(tmp_path: Path) -> None:
    """No holdout file: rows are held back from the Parquet input, and the evaluation reads it."""
    config = parquet_job(tmp_path, data={"holdout": None},
                         evaluation={"holdout_fraction": 0.25, "attacks": True})
    assert main(["run", str(config)]) == 0
    report = json.loads((tmp_path / "out" / "tiny.evaluation" / "report.json").read_text())
    assert report["data"]["rows_holdout"] > 0
    assert report["data"]["rows_real"] + report["data"]["rows_holdout"] == 400


@pytest.mark.slow
def test_sweep_reads_parquet(tmp_path: Path) -> None:
    config = parquet_job(tmp_path)
    out = tmp_path / "sweep"
    assert main(["sweep", str(config), "--epsilons", "2", "--out", str(out),
                 "--no-reference"]) == 0
    assert "ok" in (out / "tradeoff.csv").read_text()


def test_evaluate_reads_parquet(tmp_path: Path) -> None:
    parquet_job(tmp_path)
    pd.read_csv(tmp_path / "holdout.csv").to_parquet(tmp_path / "synthetic.parquet", index=False)
    assert main(["evaluate", "--real", str(tmp_path / "train.parquet"), "--synthetic",
                 str(tmp_path / "synthetic.parquet"), "--holdout", str(tmp_path / "holdout.parquet"),
                 "--schema", str(tmp_path / "schema.yaml"), "--controls", "",
                 "--no-anonymeter", "--out", str(tmp_path / "report")]) == 0
    assert (tmp_path / "report" / "report.json").is_file()
