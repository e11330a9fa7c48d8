"""The Dask engine (a real local cluster of 2 worker processes) returns exactly the local
engine's counts, raises the same DataError, and runs a whole job through the config."""

from __future__ import annotations

from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from synthpriv.chunks import iter_chunks
from synthpriv.config import load_job
from synthpriv.counting import SpooledCodes
from synthpriv.encoding import TableEncoder
from synthpriv.engines.dask_engine import DaskCounts, partitions
from synthpriv.errors import DataError
from synthpriv.runner import run_job
from synthpriv.schema import Schema

distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def scheduler():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster:
        yield cluster.scheduler_address


def wanted(encoder: TableEncoder) -> list[tuple[str, ...]]:
    attributes = encoder.domain.attributes
    return [(), *[(a,) for a in attributes], *combinations(attributes, 2),
            *combinations(attributes[-5:], 3)]


@pytest.mark.parametrize("fmt", ["csv", "parquet"])
def test_dask_counts_equal_local_counts(
    scheduler: str, adult_csv: Path, adult_parquet: Path, adult_schema: Schema,
    encoder: TableEncoder, fmt: str,
) -> None:
    path = adult_csv if fmt == "csv" else adult_parquet
    cliques = wanted(encoder)
    with SpooledCodes(iter_chunks(adult_csv, adult_schema, 1000), encoder) as local:
        expected = local.marginals(cliques)
        with DaskCounts.connect(path, adult_schema, 256, scheduler, 1) as remote:
            got = remote.marginals(cliques)
            assert remote.records == local.records == 3001
    assert len(partitions(path)) == (1 if fmt == "csv" else 5)
    for clique in cliques:
        assert got[clique].dtype == expected[clique].dtype
        np.testing.assert_array_equal(got[clique], expected[clique])


def test_worker_errors_name_the_global_row(scheduler: str, adult_parquet: Path, tmp_path: Path,
                                           adult_schema: Schema) -> None:
    import pyarrow.parquet as pq

    table = pq.read_table(adult_parquet).to_pandas()
    table.loc[2100, "sex"] = "Unknown"  # row 2101, in the 4th row group
    path = tmp_path / "bad.parquet"
    table.to_parquet(path, row_group_size=700, index=False)
    with DaskCounts.connect(path, adult_schema, 100, scheduler, 1) as remote, \
            pytest.raises(DataError, match=r"'sex' has value\(s\) \['Unknown'\].* at row 2101\."):
        remote.marginal(("sex",))


def test_job_with_dask_engine(scheduler: str, write_job, adult_parquet: Path) -> None:
    config = write_job({"data": {"path": str(adult_parquet), "engine": "dask",
                                 "scheduler": scheduler}, "pipeline": {"recipe": "mst"}, "seed": 2})
    result = run_job(load_job(config))
    assert result.records > 0
    assert [e["label"] for e in result.manifest["ledger"]["events"]][-1].startswith("marginal")
