"""Row samples for evaluating large tables: each part of the evaluation reads at most a stated
number of rows of each table.

Why: the evaluation's cost grows with the rows (models fitted on every row, nearest neighbours
over every synthetic row, copulas fitted for the controls), while its figures settle long before
10^6 rows. A part whose table has more rows than its size reads a uniform random sample of that
many rows, drawn without replacement with a generator seeded by ``SampleSizes.seed`` (the
config's ``attack_seed``), so a report is reproducible. Samples are nested: one random order per
table, and a part of size k reads its first k rows, so every part reads the same rows as far as
its size allows and only one sample per table is held in memory.

Sizes (rows per table; None = every row):

===============  ========  ===================================================================
part             default   what reads the sample
===============  ========  ===================================================================
marginals        100,000   TVD of 1-, 2- and 3-way marginals; per-column fidelity
association       50,000   association matrices (Pearson r, Cramér's V, correlation ratio)
tstr              50,000   TRTR/TSTR training rows (real, synthetic) and holdout test rows
quality_report    20,000   SDMetrics QualityReport (real and synthetic)
attacks           10,000   members (real), non-members (holdout), the synthetic rows attacked;
                           the positive controls are fitted on these members; anonymeter
===============  ========  ===================================================================

Why these sizes: on a 10^6-row Adult-shaped job they keep the evaluation near the MST synthesis
time (benchmarks/README.md, "Evaluation at scale"); 50,000 holdout rows give a TSTR AUC of 0.9
a standard error near 0.002 (Hanley-McNeil, 24 % positives as in Adult); 10,000 attack rows are a
third of Adult's own training table and hold the default 1,000 targets per class. The attacks
draw their ``attack_targets`` targets from these pools. Attacking a random subset of
the release is an attack on the release (post-processing), so its empirical ε is still a valid
lower bound, if a looser one. The shadow-model attack re-runs the pipeline on its own small
tables (``shadow.records``) and is not sampled here.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Literal

import numpy as np
import pandas as pd

Part = Literal["marginals", "association", "tstr", "quality_report", "attacks"]
TableName = Literal["real", "synthetic", "holdout"]
_STREAMS: dict[str, int] = {"real": 1, "synthetic": 2, "holdout": 3}
WHAT: dict[str, str] = {
    "marginals": "TVD of 1-, 2- and 3-way marginals and per-column fidelity",
    "association": "association matrices",
    "tstr": "TRTR/TSTR training rows and holdout test rows",
    "quality_report": "SDMetrics quality report",
    "attacks": "membership attacks, positive controls and anonymeter (member, non-member and "
               "synthetic pools)",
}


@dataclass(frozen=True)
class SampleSizes:
    """The most rows of each table a part of the evaluation reads (None = all); ``seed`` fixes
    which rows."""

    marginals: int | None = 100_000
    association: int | None = 50_000
    tstr: int | None = 50_000
    quality_report: int | None = 20_000
    attacks: int | None = 10_000
    seed: int = 0

    def __post_init__(self) -> None:
        for part in self.parts():
            size = getattr(self, part)
            if size is not None and size < 2:
                raise ValueError(f"sample size for {part} must be at least 2 rows, got {size}")

    @staticmethod
    def parts() -> tuple[str, ...]:
        """The parts of the evaluation that have a size."""
        return tuple(f.name for f in fields(SampleSizes) if f.name != "seed")

    @classmethod
    def disabled(cls, seed: int = 0) -> SampleSizes:
        """Every part reads every row (the behaviour before sampling; slow on large tables)."""
        return cls(None, None, None, None, None, seed)

    def largest(self) -> int | None:
        """The largest size over the parts (None if any part reads every row)."""
        sizes = [getattr(self, part) for part in self.parts()]
        return None if any(s is None for s in sizes) else max(sizes)


class TableSamples:
    """One seeded random order per table, cut to each part's size; remembers what was cut."""

    def __init__(self, tables: dict[str, pd.DataFrame | None], sizes: SampleSizes) -> None:
        self.sizes = sizes
        self.full: dict[str, pd.DataFrame] = {k: v for k, v in tables.items() if v is not None}
        self._ordered: dict[str, pd.DataFrame] = {}
        self.used: dict[str, dict[str, dict[str, int]]] = {}
        cap = sizes.largest()
        cut = [getattr(sizes, part) for part in sizes.parts() if getattr(sizes, part) is not None]
        for name, table in self.full.items():
            # a table some part cuts is ordered, as far as the largest part reads (all of it when
            # that part is larger than the table, or reads every row)
            if cut and len(table) > min(cut):
                size = len(table) if cap is None else min(cap, len(table))
                rng = np.random.default_rng([sizes.seed, _STREAMS.get(name, 0)])
                order = rng.choice(len(table), size=size, replace=False)
                self._ordered[name] = table.iloc[order]

    def rows(self, name: str, part: Part) -> pd.DataFrame:
        """Table ``name`` as part ``part`` reads it: whole, or its first ``size`` sampled rows."""
        table = self.full[name]
        size = getattr(self.sizes, part)
        if size is None or len(table) <= size:
            return table
        self.used.setdefault(part, {})[name] = {"rows": size, "of": len(table)}
        if name not in self._ordered:  # another part reads every row (no common cap): order all
            rng = np.random.default_rng([self.sizes.seed, _STREAMS.get(name, 0)])
            self._ordered[name] = table.iloc[rng.permutation(len(table))]
        return self._ordered[name].iloc[:size]

    def summary(self) -> dict[str, Any]:
        """For ``report["data"]["sampled"]``: the seed, every part's size, and what each part
        read of each table it sampled (``{"rows": k, "of": n}``)."""
        return {
            "seed": self.sizes.seed,
            "sizes": {part: getattr(self.sizes, part) for part in self.sizes.parts()},
            "parts": {part: dict(tables) for part, tables in self.used.items()},
        }

    def note(self) -> str | None:
        """One sentence for the report's notes, or None if nothing was sampled."""
        if not self.used:
            return None
        parts = "; ".join(
            f"{WHAT[part]}: "
            + ", ".join(f"{t['rows']:,} of {t['of']:,} {name} rows" for name, t in tables.items())
            for part, tables in self.used.items()
        )
        return (f"large tables were evaluated on seeded random samples of rows (seed "
                f"{self.sizes.seed}): {parts}. The figures are estimates from those rows.")
