"""Where exact marginal counts are computed: ``local`` (this machine, streaming) or ``dask``.

Every engine reads the table in checked chunks with the same rules (synthpriv.chunks), encodes it
with the same ``TableEncoder`` and answers ``marginals(cliques)`` with the same exact counts
(sensitivity 1 per marginal under add/remove): noise, estimation and sampling then run here, on
the counts alone.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from synthpriv.chunks import iter_chunks
from synthpriv.config import Job
from synthpriv.counting import SpooledCodes
from synthpriv.domain import CountSource
from synthpriv.encoding import TableEncoder


@contextlib.contextmanager
def open_counts(job: Job, encoder: TableEncoder) -> Iterator[CountSource]:
    """The count source the job's ``data.engine`` names, closed (spool deleted, cluster
    released) on exit."""
    data = job.config.data
    if data.engine == "dask":
        from synthpriv.engines.dask_engine import DaskCounts

        with DaskCounts.connect(job.data_path, job.schema, data.chunk_rows, data.scheduler,
                                data.workers) as counts:
            yield counts
        return
    with SpooledCodes(iter_chunks(job.data_path, job.schema, data.chunk_rows), encoder) as counts:
        yield counts
