"""Why a column reads "zeros only" (issue 24, branch bounds): per named column of a development
table, the exact counts of its public bounds buckets (``privacy.bounds.Buckets``) in units of the
default release's bucket σ (read from one default run's manifest), and the score the best window
of its non-zero buckets would have against the seed's z (``seed_threshold``).

    PYTHONPATH=. .venv/bin/python benchmarks/zeros_side.py islp/Boston zn

Not DP (it reads the real table): a development tool; the table is not held out.
"""

from __future__ import annotations

import io
import sys
import tempfile
from pathlib import Path

import numpy as np
import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from fake_blanks import table_text  # noqa: E402
from value_sweep import released  # noqa: E402

from synthpriv.privacy.bounds import Buckets, seed_threshold  # noqa: E402


def main(table: str, column: str) -> None:
    text = table_text(table, 5000)
    real = pd.read_csv(io.StringIO(text))
    _, schema = released(text, Path(tempfile.mkdtemp(prefix="bounds-zeros-")), seed=0)
    entry = next(c for c in schema["columns"] if c["name"] == column)
    sigma = next(b["sigma"] for c in schema["columns"] for b in (c.get("bucket_counts") or []))
    print(f"{table} {column}: {len(real)} rows, bucket σ {sigma:.1f}; released "
          f"{ {k: entry.get(k) for k in ('kind', 'lower', 'upper', 'outside')} }")
    buckets = Buckets("continuous" if (real[column] % 1 != 0).any() else "integer")
    counts = buckets.counts(real[column].to_numpy(float))
    shown = [int(b) for b in np.flatnonzero(counts) if b != buckets.zero]
    for b in np.flatnonzero(counts):
        print(f"  bucket {buckets.value_range(int(b))}: {counts[b]} rows = {counts[b] / sigma:.2f}σ")
    z = seed_threshold(buckets.size)
    best = max((counts[i:j + 1].sum() / (sigma * np.sqrt(j - i + 1)), i, j)
               for i in shown for j in shown if j >= i)
    need = counts[best[1]:best[2] + 1].sum() / (z * np.sqrt(best[2] - best[1] + 1))
    print(f"  non-zero rows {counts[shown].sum()}; best window score {best[0]:.2f} against the "
          f"seed's z {z:.2f}: it needs σ ≤ {need:.1f}, ρ × {(sigma / need) ** 2:.1f}")


if __name__ == "__main__":
    main(*sys.argv[1:3])
