"""Exact marginal counts on a Dask cluster; only counts come back to the driver.

The table is split into partitions (a Parquet file by row groups; a CSV file is one partition,
streamed in chunks by one worker). For each batch of cliques every worker reads its partition
with the same checked chunk reader as the local engine (synthpriv.chunks), encodes it with the
same ``TableEncoder`` and returns int64 counts of each clique; the driver adds them up. What
crosses the network: to the workers, the file path, the public schema, the partition's row-group
numbers and the cliques; back, the count arrays and row counts (or a DataError, whose message
names rows and values of the table as the local engine's does). No row is sent.

Workers need synthpriv and the file at the same path (a shared filesystem or a mounted bucket).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from itertools import accumulate
from pathlib import Path

import numpy as np

from synthpriv.chunks import file_header, is_parquet, iter_chunks, iter_parquet_part, parquet_row_groups
from synthpriv.counting import CachedCounts, Clique, count_chunks
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.schema import Schema
from synthpriv.table import no_rows_error

Part = tuple[list[int], int] | None  # (row groups, first row) of a Parquet file; None: whole file


def count_part(
    path: Path, schema: Schema, part: Part, chunk_rows: int | None, cliques: list[Clique]
) -> tuple[list[np.ndarray], int]:
    """Runs on a worker: exact counts of ``cliques`` over one partition, and its row count."""
    chunks = (iter_chunks(path, schema, chunk_rows) if part is None
              else iter_parquet_part(path, schema, part[0], part[1], chunk_rows))
    return count_chunks(chunks, TableEncoder(schema), cliques)


def partitions(path: Path) -> list[Part]:
    """One partition per Parquet row group (first rows from the file's metadata), or the whole
    file for CSV."""
    if not is_parquet(path):
        return [None]
    sizes = parquet_row_groups(path)
    if not sum(sizes):
        raise no_rows_error(path)
    starts = [0, *accumulate(sizes)][:-1]
    return [([group], start + 1) for group, (start, size) in enumerate(zip(starts, sizes,
                                                                          strict=True)) if size]


class DaskCounts(CachedCounts):
    """Counts computed by a ``distributed.Client``'s workers, summed on the driver."""

    def __init__(self, client, path: Path, schema: Schema, chunk_rows: int | None) -> None:
        super().__init__(TableEncoder(schema).domain)
        file_header(path, schema)
        self.client, self.path, self.schema, self.chunk_rows = client, path, schema, chunk_rows
        self.parts = partitions(path)
        self._records: int | None = None

    @classmethod
    @contextlib.contextmanager
    def connect(
        cls, path: Path, schema: Schema, chunk_rows: int | None, scheduler: str | None, workers: int
    ) -> Iterator[DaskCounts]:
        """A source on the cluster at ``scheduler``, or on a local cluster of ``workers``
        processes (one thread each) started here and shut down on exit."""
        try:
            from distributed import Client, LocalCluster
        except ImportError:
            raise ConfigError(
                "data.engine: dask needs the 'distributed' package. Install it with "
                "pip install 'synthpriv[dask]', or use engine: local."
            ) from None
        with contextlib.ExitStack() as stack:
            if scheduler is None:
                cluster = stack.enter_context(LocalCluster(
                    n_workers=workers, threads_per_worker=1, processes=True,
                    dashboard_address=None))
                client = stack.enter_context(Client(cluster))
            else:
                try:
                    client = stack.enter_context(Client(scheduler, timeout="30s"))
                except OSError as error:
                    raise ConfigError(
                        f"data.scheduler: cannot reach the Dask scheduler at {scheduler} "
                        f"({error}). Check the address, or omit it for a local cluster."
                    ) from None
            yield cls(client, path, schema, chunk_rows)

    @property
    def records(self) -> int:
        """Rows of the table (counted in a pass that also counts every 1-way marginal, which
        every selection measures first)."""
        if self._records is None:
            self.marginals([(), *((a,) for a in self.domain.attributes)])
        assert self._records is not None
        return self._records

    def _count(self, cliques: list[Clique]) -> list[np.ndarray]:
        futures = [
            self.client.submit(count_part, self.path, self.schema, part, self.chunk_rows, cliques,
                               pure=False)
            for part in self.parts
        ]
        totals = [np.zeros(self.domain.project(c).shape, dtype=np.int64) for c in cliques]
        rows = 0
        for counts, part_rows in self.client.gather(futures):
            rows += part_rows
            for total, count in zip(totals, counts, strict=True):
                total += count
        self._records = rows
        return totals
