"""Exact marginal counts of a table too large for memory: codes spooled to disk, counted in blocks.

``SpooledCodes`` reads the input once in checked chunks (synthpriv.chunks), encodes each chunk and
appends its codes to a private temporary file in the narrowest unsigned type the domain allows
(one byte per cell for Adult), then answers marginal queries by passing over that file in blocks.
Memory is one chunk plus the counts asked for: it grows with the model's domain, not with rows.
Counts are exact integers, the same as ``Dataset.marginal`` on the whole table (sensitivity 1 per
marginal under add/remove), and are cached, so a marginal measured after selection costs no pass.

The spool holds the encoded sensitive table. It is an unnamed temporary file in ``$TMPDIR`` (or
the folder given): Linux's O_TMPFILE, else a file unlinked as soon as it is created, readable by
its owner only. No name ever points at it, so the kernel frees it when the process's handle
closes — on exit, on an exception, and on SIGKILL or a crash alike: no copy of the sensitive table
outlives the run.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pandas as pd

from synthpriv.domain import Domain, clique_counts
from synthpriv.encoding import TableEncoder

Clique = tuple[str, ...]
BLOCK_ROWS = 1 << 20


def code_dtype(domain: Domain) -> np.dtype:
    """The narrowest unsigned integer type that holds every code of ``domain``."""
    largest = max(domain.shape, default=1) - 1
    for dtype in (np.uint8, np.uint16, np.uint32):
        if largest <= np.iinfo(dtype).max:
            return np.dtype(dtype)
    return np.dtype(np.int64)


def count_chunks(
    chunks: Iterable[pd.DataFrame], encoder: TableEncoder, cliques: Sequence[Clique]
) -> tuple[list[np.ndarray], int]:
    """Exact int64 counts of each clique summed over checked ``chunks``, and the row count: the
    one counting loop that every engine runs over its share of the table."""
    domain = encoder.domain
    totals = [np.zeros(domain.project(c).shape, dtype=np.int64) for c in cliques]
    rows = 0
    for chunk in chunks:
        codes = encoder.encode(chunk).codes
        rows += len(codes)
        add_counts(totals, codes, domain, cliques)
    return totals, rows


def add_counts(
    totals: list[np.ndarray], codes: np.ndarray, domain: Domain, cliques: Sequence[Clique]
) -> None:
    """Add the counts of a block of ``codes`` to each clique's running ``totals`` (in place)."""
    for total, clique in zip(totals, cliques, strict=True):
        total += clique_counts(codes, domain, clique)


class CachedCounts:
    """Base of the count sources: answers ``marginal``/``marginals`` from a cache, counting the
    cliques not seen yet in one batched pass (``_count``) over the data."""

    def __init__(self, domain: Domain) -> None:
        self.domain = domain
        self._cache: dict[Clique, np.ndarray] = {}
        self.passes = 0

    def marginal(self, attributes: Sequence[str]) -> np.ndarray:
        """Exact counts of the marginal over ``attributes`` (float64, like ``Dataset.marginal``).
        Sensitivity 1 (L1 and L2) under add/remove-one-row."""
        return self.marginals([attributes])[tuple(attributes)]

    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[Clique, np.ndarray]:
        """Exact counts of every clique, those not cached counted together in one pass."""
        wanted = list(dict.fromkeys(tuple(c) for c in cliques))
        new = [c for c in wanted if c not in self._cache]
        if new:
            self.passes += 1
            for clique, counts in zip(new, self._count(new), strict=True):
                counts = counts.astype(np.float64)
                counts.setflags(write=False)
                self._cache[clique] = counts
        return {c: self._cache[c] for c in wanted}

    def _count(self, cliques: list[Clique]) -> list[np.ndarray]:
        raise NotImplementedError


class SpooledCodes(CachedCounts):
    """The encoded table in an unnamed temporary file (see the module docstring); a context
    manager that closes it, and so frees it, on exit."""

    def __init__(
        self, chunks: Iterable[pd.DataFrame], encoder: TableEncoder, folder: str | Path | None = None
    ) -> None:
        super().__init__(encoder.domain)
        self.dtype = code_dtype(self.domain)
        # unnamed (O_TMPFILE where the OS has it, else unlinked at once), mode 0600
        self._handle = tempfile.TemporaryFile(prefix="synthpriv-codes-", dir=folder)  # noqa: SIM115 - closed by close()
        self._records = 0
        try:
            for chunk in chunks:
                codes = encoder.encode(chunk).codes.astype(self.dtype)
                self._handle.write(np.ascontiguousarray(codes).tobytes())
                self._records += len(codes)
            self._handle.flush()
        except BaseException:
            self.close()
            raise

    @property
    def records(self) -> int:
        return self._records

    @property
    def codes(self) -> np.ndarray:
        """Every row's codes in memory (one byte per cell for narrow domains): for a stage that
        needs rows, like DP-SGD; the count-only stages never call it."""
        blocks = list(self.blocks())
        if not blocks:
            return np.empty((0, len(self.domain)), dtype=self.dtype)
        return np.concatenate(blocks)

    def blocks(self, rows: int = BLOCK_ROWS) -> Iterator[np.ndarray]:
        """The codes in blocks of ``rows`` rows, read with plain reads (no memory map, so pages
        already counted do not stay in this process's resident memory)."""
        width = len(self.domain)
        with self._reader() as handle:
            while True:
                block = np.fromfile(handle, dtype=self.dtype, count=rows * width)
                if not block.size:
                    return
                yield block.reshape(-1, width)

    def _count(self, cliques: list[Clique]) -> list[np.ndarray]:
        totals = [np.zeros(self.domain.project(c).shape, dtype=np.int64) for c in cliques]
        for block in self.blocks():
            add_counts(totals, block, self.domain, cliques)
        return totals

    def _reader(self) -> BinaryIO:
        """A reader of the spool from its start, with an offset of its own (Linux: a new open
        of /proc/self/fd/N; elsewhere a duplicate of the handle, whose offset it shares)."""
        fd = self._handle.fileno()
        proc = Path(f"/proc/self/fd/{fd}")
        handle = proc.open("rb") if proc.exists() else os.fdopen(os.dup(fd), "rb")
        handle.seek(0)
        return handle

    @property
    def size(self) -> int:
        """Bytes spooled (the codes: one per cell for narrow domains)."""
        return os.fstat(self._handle.fileno()).st_size

    @property
    def mode(self) -> int:
        """The spool's permission bits (0o600: its owner only)."""
        return os.fstat(self._handle.fileno()).st_mode & 0o777

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> SpooledCodes:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
