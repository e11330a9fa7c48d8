"""Chunked (spooled) counts equal the in-memory Dataset's exactly; batches cost one pass; the
spool is private and removed; a job reads, counts and releases in blocks."""

from __future__ import annotations

import json
import tempfile
from itertools import combinations
from pathlib import Path

import numpy as np
import pytest

from synthpriv.chunks import iter_chunks
from synthpriv.config import load_job
from synthpriv.counting import SpooledCodes, code_dtype
from synthpriv.domain import Domain
from synthpriv.encoding import TableEncoder
from synthpriv.release import sha256_of
from synthpriv.runner import run_job
from synthpriv.schema import Schema
from synthpriv.table import read_table


def cliques(domain: Domain) -> list[tuple[str, ...]]:
    attributes = domain.attributes
    return [(), *[(a,) for a in attributes], *combinations(attributes, 2),
            *combinations(attributes[:6], 3)]


@pytest.mark.parametrize("chunk_rows", [1, 3001, 1000, 64, 5000])  # 1 and n divide n = 3001
def test_spooled_counts_equal_in_memory_counts(
    adult_csv: Path, adult_schema: Schema, encoder: TableEncoder, chunk_rows: int
) -> None:
    rows = adult_csv if chunk_rows > 1 else _head(adult_csv, 60)
    dataset = encoder.encode(read_table(rows, adult_schema))
    with SpooledCodes(iter_chunks(rows, adult_schema, chunk_rows), encoder) as counts:
        assert counts.records == dataset.records
        batch = counts.marginals(cliques(encoder.domain))
        assert counts.passes == 1
        for clique, table in batch.items():
            expected = dataset.marginal(clique)
            assert table.dtype == expected.dtype and table.shape == expected.shape
            np.testing.assert_array_equal(table, expected)
        np.testing.assert_array_equal(counts.marginal(("age", "sex")), dataset.marginal(("age", "sex")))
        assert counts.passes == 1  # served from the batch, no second pass
        np.testing.assert_array_equal(counts.codes, dataset.codes)  # rows, for DP-SGD


def _head(path: Path, rows: int) -> Path:
    out = path.with_name(f"head{rows}.csv")
    out.write_text("".join(path.read_text().splitlines(keepends=True)[: rows + 1]))
    return out


def test_parquet_counts_equal_csv_counts(
    adult_csv: Path, adult_parquet: Path, adult_schema: Schema, encoder: TableEncoder
) -> None:
    wanted = cliques(encoder.domain)
    with SpooledCodes(iter_chunks(adult_csv, adult_schema, 999), encoder) as a, \
         SpooledCodes(iter_chunks(adult_parquet, adult_schema, 999), encoder) as b:
        left, right = a.marginals(wanted), b.marginals(wanted)
    for clique in wanted:
        np.testing.assert_array_equal(left[clique], right[clique])


def test_spool_is_private_narrow_and_unnamed(
    adult_csv: Path, adult_schema: Schema, encoder: TableEncoder, tmp_path: Path
) -> None:
    folder = tmp_path / "spool"
    folder.mkdir()
    with SpooledCodes(iter_chunks(adult_csv, adult_schema, 500), encoder, folder) as counts:
        assert counts.mode == 0o600
        assert counts.size == 3001 * len(encoder.domain)  # one byte per cell for Adult
        assert list(folder.iterdir()) == []  # no name points at it, even while it is open
        first, second = counts.blocks(1000), counts.blocks(1000)  # readers with their own offset
        assert np.array_equal(next(first), next(second)) and np.array_equal(next(first),
                                                                             next(second))
    assert counts._handle.closed
    assert code_dtype(Domain(("a", "b"), (256, 3))) == np.uint8
    assert code_dtype(Domain(("a",), (257,))) == np.uint16


def test_spool_is_removed_when_reading_fails(tmp_path: Path, adult_schema: Schema,
                                            encoder: TableEncoder,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    bad = tmp_path / "bad.csv"
    bad.write_text(",".join(adult_schema.names) + "\n" + "x," * 14 + "x\n")
    private = tmp_path / "tmp"  # a temp folder of its own: other jobs' spools come and go in /tmp
    private.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(private))
    with pytest.raises(Exception, match="row 1"):
        SpooledCodes(iter_chunks(bad, adult_schema, 10), encoder)
    assert list(private.iterdir()) == []


def test_job_releases_in_blocks(write_job, tmp_path: Path) -> None:
    config = write_job({
        "data": {"chunk_rows": 333},
        "pipeline": {"recipe": "mst", "records": 2500,
                     "stages": {"sample": {"block_rows": 1000}}},
        "seed": 5,
    })
    result = run_job(load_job(config))
    manifest = json.loads((result.out_dir / "manifest.json").read_text())
    csv = result.out_dir / "synthetic.csv"
    assert manifest["files"]["synthetic.csv"] == {"sha256": sha256_of(csv), "rows": 2500}
    table = read_table(csv, load_job(config).schema)  # one header, 2,500 valid rows
    assert len(table) == 2500 and result.records == 2500
    assert list(table.columns) == list(read_table(load_job(config).data_path,
                                                  load_job(config).schema).columns)


@pytest.mark.parametrize(("data", "message"), [
    ({"engine": "spark"}, r"data\.engine"),
    ({"chunk_rows": 0}, r"data\.chunk_rows"),
])
def test_engine_options_are_checked(write_job, data: dict, message: str) -> None:
    from synthpriv.errors import ConfigError

    with pytest.raises(ConfigError, match=message):
        load_job(write_job({"data": data}))


@pytest.mark.parametrize(("recipe", "passes"), [("independent", 1), ("mst", 2), ("aim", 2)])
def test_marginal_recipes_pass_over_the_data_at_most_twice(
    write_job, adult_schema: Schema, encoder: TableEncoder, recipe: str, passes: int
) -> None:
    from synthpriv.pipeline import plan_job, run_stages
    from synthpriv.privacy.randomness import RandomSource
    from synthpriv.stage import PipelineState

    stages_options = {"marginals": {"aim_rounds_per_attribute": 1, "iterations": 20,
                                    "aim_round_iterations": 5}} if recipe == "aim" else {}
    job = load_job(write_job({"pipeline": {"recipe": recipe, "stages": stages_options,
                                           "records": 100}}))
    plan, stages = plan_job(job)
    with SpooledCodes(iter_chunks(job.data_path, job.schema, 700), encoder) as counts:
        state = PipelineState(context=stages[0][0].context, encoder=encoder, data=counts,
                              requested_records=100)
        run_stages(stages, plan, state, RandomSource.seeded(1))
        # the 1-way marginals (one pass), then, on the adaptive domain they chose, every other
        # marginal the recipe counts (one more pass: all pairs for mst, all candidates for aim)
        recoded = state.data.passes if state.data is not counts else 0
        assert counts.passes + recoded == passes
