"""A tiny job (a few hundred rows, four columns) written to a folder: fast end-to-end tests."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import yaml

SCHEMA = {
    "columns": [
        {"name": "colour", "kind": "categorical", "categories": ["red", "green", "blue"]},
        {"name": "shape", "kind": "categorical", "categories": ["round", "square", "flat", "odd"]},
        {"name": "size", "kind": "integer", "lower": 0, "upper": 20},
        {"name": "weight", "kind": "integer", "lower": 0, "upper": 50},
    ]
}
NUMERIC = ["size", "weight"]


def tiny_table(rows: int, seed: int) -> pd.DataFrame:
    """Correlated columns; 'odd' shapes are rare, so a few records are isolated."""
    rng = np.random.default_rng(seed)
    colour = rng.choice(["red", "green", "blue"], size=rows, p=[0.5, 0.3, 0.2])
    shape = rng.choice(["round", "square", "flat", "odd"], size=rows, p=[0.5, 0.3, 0.18, 0.02])
    size = np.clip(rng.normal(8 + 4 * (colour == "blue"), 2, rows).round(), 0, 20).astype(int)
    weight = np.clip(2 * size + rng.normal(5, 3, rows).round(), 0, 50).astype(int)
    return pd.DataFrame({"colour": colour, "shape": shape, "size": size, "weight": weight})


def write_tiny_job(folder: Path, rows: int = 400, evaluation: dict | None = None, **extra) -> Path:
    """Train/holdout CSVs, schema and a job config (independent recipe) under ``folder``."""
    folder.mkdir(parents=True, exist_ok=True)
    tiny_table(rows, 1).to_csv(folder / "train.csv", index=False)
    tiny_table(rows, 2).to_csv(folder / "holdout.csv", index=False)
    (folder / "schema.yaml").write_text(yaml.safe_dump(SCHEMA))
    config = {
        "name": "tiny",
        "data": {"path": "train.csv", "schema": "schema.yaml", "holdout": "holdout.csv"},
        "budget": {"epsilon": 1.0, "delta": 1e-4},
        "pipeline": {"recipe": "independent"},
        "evaluation": {"target": "colour", **(evaluation or {})},
        "output": {"dir": str(folder / "out" / "tiny")},
        **extra,
    }
    path = folder / "job.yaml"
    path.write_text(yaml.safe_dump(config))
    return path


def evaluate_other_tool_args(folder: Path, *options: str) -> list[str]:
    """``synthpriv evaluate`` arguments for the tiny job's tables (``write_tiny_job``) against a
    400-row table from "another tool" (written here), target 'shape', report to ``folder/eval``."""
    tiny_table(400, 5).to_csv(folder / "other_tool.csv", index=False)
    return ["evaluate", "--real", str(folder / "train.csv"), "--synthetic",
            str(folder / "other_tool.csv"), "--holdout", str(folder / "holdout.csv"),
            "--schema", str(folder / "schema.yaml"), "--target", "shape",
            "--out", str(folder / "eval"), *options]
