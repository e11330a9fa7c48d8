"""Value shares of a table's narrow integer columns, real against released (branch narrowint,
issue 24: ISLP Auto's `cylinders` released 5 / 7 / 9, values the table never holds).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/narrow_columns.py islp/Auto 0,1,2,3,4,5
    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/narrow_columns.py path/to/train.csv 0,1 [max_rows]

A table is a development-suite name (substring, ``dev_tables.all_tables``) or a CSV path. Per
seed: the default release (``value_sweep.released``: safe draft, AIM, ε = 1, δ = 1e-6); per
narrow integer column (real values whole numbers, ≥ 95 % numeric, a range of 3–32 values): the
TVD between the real and released value shares (blank counted as a value) and the largest error
on a value holding ≥ 5 % of the real rows; mean ± standard error over the seeds. NOT
differentially private (it reads the real table): a development tool, for choosing defaults on
development tables only.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))
import value_sweep as vs  # noqa: E402
from dev_tables import all_tables  # noqa: E402


def narrow_columns(real: pd.DataFrame) -> list[str]:
    """Columns whose cells are whole numbers over a range of 3–32 values."""
    names = []
    for name in real.columns:
        values = pd.to_numeric(real[name], errors="coerce")
        whole = values.dropna()
        if values.notna().mean() > 0.95 and (whole % 1 == 0).all() and (
                2 < whole.max() - whole.min() + 1 <= 32):
            names.append(name)
    return names


def shares_error(real: pd.Series, released: pd.Series) -> tuple[float, float]:
    """(TVD of the value shares, largest error on a value holding ≥ 5 % of the real rows)."""
    r = pd.to_numeric(real, errors="coerce").value_counts(normalize=True)
    s = pd.to_numeric(released, errors="coerce").value_counts(normalize=True, dropna=False)
    index = r.index.union(s.index)
    r, s = r.reindex(index, fill_value=0), s.reindex(index, fill_value=0)
    gap = np.abs(r - s)
    return 0.5 * float(gap.sum()), float(gap[r >= 0.05].max()) if (r >= 0.05).any() else 0.0


def main(argv: list[str]) -> int:
    table, seeds = argv[0], [int(s) for s in argv[1].split(",")]
    max_rows = int(argv[2]) if len(argv) > 2 else 20_000
    text = (Path(table).read_text() if table.endswith(".csv")
            else next(t for name, t in all_tables() if table in name))
    delimiter = vs.text_delimiter(text)
    real = vs.read_cells(io.StringIO(text), delimiter)
    if len(real) > max_rows:
        real = real.sample(n=max_rows, random_state=0).reset_index(drop=True)
        buffer = io.StringIO()
        real.to_csv(buffer, index=False, sep=delimiter)
        text = buffer.getvalue()
    columns = narrow_columns(real)
    scores: dict[str, list[tuple[float, float]]] = {name: [] for name in columns}
    for seed in seeds:
        with tempfile.TemporaryDirectory() as folder:
            cells, _ = vs.released(text, Path(folder), 1.0, seed)
        for name in columns:
            scores[name].append(shares_error(real[name], cells[name]))
    for name, values in scores.items():
        figures = np.array(values)
        error = figures[:, 0].std(ddof=1) / np.sqrt(len(figures)) if len(figures) > 1 else 0.0
        print(f"{table} {name}: tvd {figures[:, 0].mean():.3f} ± {error:.3f}  worst "
              f"{figures[:, 1].mean():.3f}  per-seed tvd "
              + " ".join(f"{x:.2f}" for x in figures[:, 0]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
