"""Seeded Adult-shaped tables of any size (and wide variants) for the scale benchmark and tests.

The model: rows of the bundled Adult training table drawn with replacement (seeded), numeric
columns jittered within their public bounds, and for wide variants extra categorical columns
``x<k>`` that copy a parent column's code modulo a small domain with 20 % noise (so they carry
dependence a marginal model can find). Written in blocks with pyarrow, so 10^7 rows never sit in
memory at once.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.csv as pacsv
import yaml

ROOT = Path(__file__).resolve().parents[1]
ADULT = ROOT / "data" / "adult"
BLOCK = 500_000


def wide_schema(columns: int) -> dict:
    """Adult's schema plus ``columns - 15`` extra categorical columns (public by construction)."""
    schema = yaml.safe_load((ADULT / "schema.yaml").read_text())
    for k in range(columns - len(schema["columns"])):
        size = 2 + k % 9
        schema["columns"].append(
            {"name": f"x{k}", "kind": "categorical", "categories": [f"v{i}" for i in range(size)]}
        )
    return schema


def generate(path: Path, rows: int, columns: int = 15, seed: int = 0) -> Path:
    """Write a seeded Adult-shaped CSV (or Parquet, by suffix) of ``rows`` rows and ``columns``
    columns to ``path``; also writes the schema beside it as ``<stem>.schema.yaml``."""
    schema = wide_schema(columns)
    base = pd.read_csv(ADULT / "adult_train.csv", dtype=str, keep_default_na=False)
    numeric = {c["name"]: c for c in schema["columns"][:15] if c["kind"] != "categorical"}
    parents = list(base.columns)
    rng = np.random.default_rng(seed)
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / f"{path.stem}.schema.yaml").write_text(yaml.safe_dump(schema, sort_keys=False))
    writer = None
    for start in range(0, rows, BLOCK):
        size = min(BLOCK, rows - start)
        block = base.iloc[rng.integers(0, len(base), size)].reset_index(drop=True)
        for name, column in numeric.items():
            values = pd.to_numeric(block[name]).to_numpy()
            jitter = rng.integers(-1, 2, size) * (values > 0)
            block[name] = np.clip(values + jitter, column["lower"], column["upper"]).astype(str)
        for extra in schema["columns"][15:]:
            parent = block[parents[rng.integers(0, len(parents))]]
            size_k = len(extra["categories"])
            codes = pd.factorize(parent)[0] % size_k
            noise = rng.random(size) < 0.2
            codes[noise] = rng.integers(0, size_k, noise.sum())
            block[extra["name"]] = np.array(extra["categories"])[codes]
        table = pa.Table.from_pandas(block, preserve_index=False)
        if writer is None:
            writer = _writer(path, table.schema)
        writer.write_table(table)
    writer.close()
    return path


def _writer(path: Path, schema: pa.Schema):
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        return pq.ParquetWriter(path, schema)
    options = pacsv.WriteOptions(quoting_style="none")
    return pacsv.CSVWriter(path, schema, write_options=options)
