"""Row samples for evaluating large tables: each part of the evaluation reads at most a stated
number of rows of each table.

Why: the evaluation's cost grows with the rows (models fitted on every row, nearest neighbours
over every synthetic row, copulas fitted for the controls), while its figures settle long before
10^6 rows. No table is held whole: a file is streamed in chunks (``synthpriv.chunks.iter_raw``)
through a ``Reservoir`` that keeps a uniform random sample without replacement of the largest
size any part reads of that table (the k rows with the smallest i.i.d. uniform keys, seeded by
``SampleSizes.seed``, the config's ``attack_seed``, and the table's name), so a report is
reproducible and memory does not grow with the table. Only the kept rows are parsed and checked;
text columns are held as pandas ``category``. Counted exactly over every row: each table's rows
(and, in ``evaluate_sources``, the rows breaking each public constraint, which parses every row
of the real and synthetic tables when the schema has rules). Samples are nested: a part of size
k reads the first k rows in key order, itself a uniform sample, so every part reads the same
rows as far as its size allows; a table no larger than a part's size is read whole, in its own
order.

Sizes (rows per table; None = every row):

===============  ========  ===================================================================
part             default   what reads the sample
===============  ========  ===================================================================
marginals         50,000   TVD of 1-, 2- and 3-way marginals; per-column fidelity
association       50,000   association matrices (Pearson r, Cramér's V, correlation ratio)
tstr              20,000   TRTR/TSTR training rows (real, synthetic) and holdout test rows
quality_report    10,000   SDMetrics QualityReport (real and synthetic)
attacks            5,000   members (real), non-members (holdout), the synthetic rows attacked;
                           the positive controls are fitted on these members; anonymeter
===============  ========  ===================================================================

Why these sizes (measured on the 10^6-row Adult-shaped table of benchmarks/README.md,
"Evaluation at scale", where the commands are): each is where a figure's own sampling error is
small beside what it measures, at a cost that does not grow with the table.

* marginals, 50,000: a marginal's TVD estimated from m rows of each table is biased upwards by
  sampling noise. Its floor, the mean TVD of two samples of one distribution p over k cells, is
  about sum_i sqrt(p_i (1 - p_i)) / sqrt(pi m) <= sqrt((k - 1) / (pi m)) (each cell's difference
  of two binomial shares is normal with variance 2 p_i (1 - p_i) / m, mean absolute value
  sqrt(2 / pi) times its standard deviation): it halves when m quadruples. Two disjoint real
  samples of the 10^6-row table differ by 0.0067 / 0.016 / 0.033 (1- / 2- / 3-way) at 50,000
  rows, 0.0036 / 0.0097 / 0.022 at 100,000. Where the tables truly differ the bias is far below
  the floor: an MST release of that table scores 0.0219 / 0.0672 / 0.1229 on 50,000-row
  samples, 0.0203 / 0.0658 / 0.1201 on 100,000 and 0.0186 / 0.0639 / 0.1167 on every row, so
  the sample overstates the 3-way figure by 0.006 (5 %), the 1- and 2-way by 0.003. 1-way counts
  are not streamed exactly: the bins are quantiles of the real sample, known only after the pass.
* association, 50,000: the standard error of a correlation is at most 1 / sqrt(n) = 0.0045.
* tstr, 20,000: Hanley-McNeil's standard error of an AUC of 0.9 on 20,000 holdout rows (24 %
  positives, as in Adult) is 0.003; training on 20,000 rather than 50,000 rows moved TRTR's
  gradient-boosting AUC from 0.920 to 0.918 and halved TSTR's time.
* quality_report, 10,000: two samples of 10,000 rows of one distribution have an expected
  Kolmogorov-Smirnov distance of about 0.012 (0.87 / sqrt(n / 2)), the floor of SDMetrics' column
  shape scores; the report's time grows with the rows.
* attacks, 5,000: holds the default 1,000 targets per class (the ε bound's Clopper-Pearson test
  counts targets, not pool rows), and the positive controls are fitted on these members: SDV's
  Gaussian copula, the evaluation's costliest fixed part at 10,000 rows, fits in time
  proportional to them. The attacks draw their ``attack_targets`` targets from these pools,
  anonymeter attacks them, and the marginal (and shadow) attack draws its population, shadow
  tables and targets from the same real rows. Attacking a random subset of the release is an
  attack on the release (post-processing), so its empirical ε is still a valid lower bound, if a
  looser one: a member's nearest synthetic row is sought among 5,000 rows, not all.

The holdout is read only by TSTR and the attacks, so it is kept to the larger of those sizes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pandas as pd
import pyarrow as pa

from synthpriv.chunks import iter_raw, parse_rows
from synthpriv.schema import Schema
from synthpriv.table import no_rows_error, parse_chunk

Part = Literal["marginals", "association", "tstr", "quality_report", "attacks"]
TableName = Literal["real", "synthetic", "holdout"]
STREAMS: dict[str, int] = {"real": 1, "synthetic": 2, "holdout": 3}
READ_BY: dict[str, tuple[str, ...]] = {"holdout": ("tstr", "attacks")}  # else: every part
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

    marginals: int | None = 50_000
    association: int | None = 50_000
    tstr: int | None = 20_000
    quality_report: int | None = 10_000
    attacks: int | None = 5_000
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

    def largest(self, table: str | None = None) -> int | None:
        """The largest size over the parts that read ``table`` (default: over every part; None
        if one of them reads every row): the rows of it the evaluation keeps."""
        parts = self.parts() if table is None else READ_BY.get(table, self.parts())
        sizes = [getattr(self, part) for part in parts]
        return None if any(s is None for s in sizes) else max(sizes)


def row_keys(rows: int, seed: int, stream: int) -> np.ndarray:
    """The random keys of the ``rows`` rows of table ``stream``: i.i.d. Uniform[0, 1) from a
    generator seeded by (seed, stream). The generator's doubles come in row order, so keys drawn
    chunk by chunk (``Reservoir``) equal keys drawn at once."""
    return np.random.default_rng([seed, stream]).random(rows)


def smallest(keys: np.ndarray, size: int | None) -> np.ndarray:
    """Positions of the ``size`` smallest ``keys`` (all if None), smallest first: the rows of a
    uniform random sample without replacement, in a uniform random order."""
    if size is not None and size < len(keys):
        kept = np.argpartition(keys, size - 1)[:size]
        return kept[np.argsort(keys[kept], kind="stable")]
    return np.argsort(keys, kind="stable")


class Reservoir:
    """A seeded uniform random sample without replacement of at most ``size`` rows of a table
    streamed in chunks (pyarrow tables of text cells), held in memory as at most about twice
    ``size`` rows whatever the table's length.

    Every row gets an i.i.d. Uniform[0, 1) key (``row_keys``) and the sample is the ``size`` rows
    with the smallest keys. The keys' order is a uniform random permutation of the rows, so the
    sample is exactly uniform over the subsets of ``size`` rows, and, sorted by key, its first
    ``m`` rows are a uniform sample of ``m`` rows (the parts' nested samples). A row whose key is
    above the ``size``-th smallest key seen so far can never enter the sample and is dropped at
    once; the rest is cut back to ``size`` rows when it reaches twice that.
    """

    def __init__(self, size: int | None, seed: int, stream: int) -> None:
        self.size = size
        self.rng = np.random.default_rng([seed, stream])  # the same doubles as row_keys
        self.seen = 0
        self._tables: list[pa.Table] = []
        self._keys = np.empty(0)
        self._positions = np.empty(0, dtype=np.int64)
        self._threshold = np.inf

    def add(self, chunk: pa.Table) -> None:
        """The next ``chunk`` of rows of the table."""
        keys = self.rng.random(chunk.num_rows)
        keep = keys < self._threshold
        if keep.any():
            self._tables.append(chunk.filter(pa.array(keep)))
            self._keys = np.concatenate([self._keys, keys[keep]])
            self._positions = np.concatenate([self._positions, self.seen + np.flatnonzero(keep)])
        self.seen += chunk.num_rows
        if self.size is not None and len(self._keys) >= 2 * self.size:
            self._cut(smallest(self._keys, self.size))

    def _cut(self, order: np.ndarray) -> None:
        table = pa.concat_tables(self._tables).take(pa.array(order))
        self._tables, self._keys, self._positions = [table], self._keys[order], self._positions[order]
        if self.size is not None and len(order) >= self.size:
            self._threshold = float(self._keys.max())

    def sample(self) -> tuple[pa.Table, np.ndarray]:
        """The sample's rows, smallest key first, and their 0-based positions in the table."""
        self._cut(smallest(self._keys, self.size))
        return self._tables[0], self._positions


def compact(frame: pd.DataFrame) -> pd.DataFrame:
    """Text columns as pandas ``category`` (one code per cell instead of a Python string)."""
    text = [c for c in frame.columns if frame[c].dtype == object]
    return frame.astype(dict.fromkeys(text, "category")) if text else frame


def _drop_unused_categories(frame: pd.DataFrame) -> pd.DataFrame:
    """``frame`` without categories no row holds (a cut of a larger sample): readers such as
    SDV's synthesizers fail on a category that never occurs."""
    columns = [c for c in frame.columns if isinstance(frame[c].dtype, pd.CategoricalDtype)]
    if not columns:
        return frame
    return frame.assign(**{c: frame[c].cat.remove_unused_categories() for c in columns})


@dataclass
class Sample:
    """A table as the evaluation holds it: ``rows``, a uniform random sample of it (every row
    when the table is no larger than the sample) in random order, indexed by row position; and
    ``total``, the table's exact number of rows."""

    rows: pd.DataFrame
    total: int

    @property
    def whole(self) -> bool:
        return len(self.rows) == self.total


def sample_frame(table: pd.DataFrame, size: int | None, seed: int, stream: int) -> Sample:
    """The ``Sample`` of an in-memory table: the same rows ``Reservoir`` keeps when the table is
    streamed (the same keys)."""
    order = smallest(row_keys(len(table), seed, stream), size)
    rows = table.iloc[order]
    rows.index = pd.RangeIndex(len(table))[order]
    return Sample(compact(rows), len(table))


def sample_file(
    path: str | Path, schema: Schema, size: int | None, seed: int, stream: int,
    tally: Callable[[pd.DataFrame], None] | None = None, chunk_rows: int | None = None,
) -> Sample:
    """The ``Sample`` of the table at ``path`` (CSV or Parquet), streamed: memory holds one
    chunk and the reservoir. Only the sampled rows are parsed and checked (``parse_rows``),
    unless ``tally`` is given: then every chunk is parsed and checked and passed to ``tally``
    (for figures counted exactly over every row)."""
    reservoir = Reservoir(size, seed, stream)
    for chunk in iter_raw(path, schema, chunk_rows):
        if tally is not None:
            frame = chunk.to_pandas()
            frame.index = pd.RangeIndex(reservoir.seen, reservoir.seen + len(frame))
            tally(parse_chunk(frame, schema, Path(path), first_row=reservoir.seen + 1))
        reservoir.add(chunk)
    if reservoir.seen == 0:
        raise no_rows_error(Path(path))
    raw, positions = reservoir.sample()
    return Sample(compact(parse_rows(raw, positions, schema, path)), reservoir.seen)


Source = pd.DataFrame | str | Path


def sample_tables(
    sources: dict[str, Source | None], schema: Schema | None, sizes: SampleSizes,
    tally: Callable[[str, pd.DataFrame], None] | None = None,
) -> TableSamples:
    """Each table (in memory, or a CSV/Parquet file streamed and checked against ``schema``)
    sampled to ``sizes.largest(name)`` rows, seeded by ``sizes.seed`` and the table's name.
    ``tally(name, rows)`` (optional) sees every row of every table once, in chunks for a file,
    whole for a table in memory: for figures counted exactly."""
    samples = {}
    for name, source in sources.items():
        if source is None:
            continue
        stream = STREAMS.get(name, 0)
        if isinstance(source, pd.DataFrame):
            if tally is not None:
                tally(name, source)
            samples[name] = sample_frame(source, sizes.largest(name), sizes.seed, stream)
        else:
            if schema is None:
                raise ValueError(f"table '{name}' is a file: a schema is needed to read it")
            counted = None if tally is None else (lambda rows, name=name: tally(name, rows))
            samples[name] = sample_file(source, schema, sizes.largest(name), sizes.seed, stream,
                                        counted)
    return TableSamples.of(samples, sizes)


class TableSamples:
    """Each table's ``Sample`` (at most the largest part's size), cut to each part's size;
    remembers what was cut."""

    def __init__(self, tables: dict[str, pd.DataFrame | None], sizes: SampleSizes) -> None:
        """From tables held in memory (each sampled by ``sample_frame``)."""
        self.sizes = sizes
        self.samples = {
            name: sample_frame(table, sizes.largest(name), sizes.seed, STREAMS.get(name, 0))
            for name, table in tables.items() if table is not None
        }
        self.used: dict[str, dict[str, dict[str, int]]] = {}
        self._whole: dict[str, pd.DataFrame] = {}

    @classmethod
    def of(cls, samples: dict[str, Sample], sizes: SampleSizes) -> TableSamples:
        """From samples already drawn (``sample_file``, ``sample_frame``) with
        ``sizes.largest(name)`` rows at most."""
        made = cls({}, sizes)
        made.samples = dict(samples)
        return made

    def __contains__(self, name: str) -> bool:
        return name in self.samples

    def total(self, name: str) -> int:
        """The exact number of rows of table ``name``."""
        return self.samples[name].total

    def largest(self, name: str) -> pd.DataFrame:
        """Every row held of table ``name`` (the largest part's sample), not counted as read."""
        sample = self.samples[name]
        return self._in_order(name) if sample.whole else sample.rows

    def _in_order(self, name: str) -> pd.DataFrame:
        if name not in self._whole:
            self._whole[name] = self.samples[name].rows.sort_index()
        return self._whole[name]

    def rows(self, name: str, part: Part) -> pd.DataFrame:
        """Table ``name`` as part ``part`` reads it: whole (in its own row order), or its first
        ``size`` sampled rows."""
        sample = self.samples[name]
        size = getattr(self.sizes, part)
        if size is None or sample.total <= size:
            if not sample.whole:
                raise ValueError(f"part {part} reads every row of {name}, but only "
                                 f"{len(sample.rows):,} of {sample.total:,} were kept")
            return self._in_order(name)
        self.used.setdefault(part, {})[name] = {"rows": size, "of": sample.total}
        return _drop_unused_categories(sample.rows.iloc[:size])

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
