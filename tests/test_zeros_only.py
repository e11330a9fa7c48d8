"""DP bounds that read "zeros only" release no fake value (issue 24 item 4): values outside them
are read as missing (``outside: missing``) instead of clipped onto the bound (a capital gain of
exactly 1 in 10 % of the rows of Adult's first 2,000, safe draft)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.domain_stage import dp_bounds
from synthpriv.encoding import TableEncoder
from synthpriv.errors import SchemaError
from synthpriv.privacy.bounds import Buckets, occupancy_threshold, read_bounds
from synthpriv.schema import NumericColumn, parse_schema


def _column(**extra) -> dict:
    return {"name": "x", "kind": "integer", "lower": 0, "upper": 10} | extra


def test_outside_missing_needs_missing_true_and_clip_is_the_default() -> None:
    with pytest.raises(SchemaError, match="outside: missing .* needs 'missing: true'"):
        parse_schema({"columns": [_column(outside="missing")]}, "test")
    with pytest.raises(SchemaError, match="outside"):
        parse_schema({"columns": [_column(outside="drop", missing=True)]}, "test")
    assert parse_schema({"columns": [_column()]}, "test").column("x").outside == "clip"
    column = parse_schema({"columns": [_column(outside="missing", missing=True)]}, "test")
    assert column.column("x").outside == "missing"


@pytest.mark.parametrize("outside", ["clip", "missing"])
def test_encoding_reads_values_outside_the_bounds_as_missing_or_clips_them(outside: str) -> None:
    encoder = TableEncoder(parse_schema(
        {"columns": [_column(outside=outside, missing=True)]}, "test"))
    table = pd.DataFrame({"x": [-5.0, 0.0, 7.0, 10.0, 11.0, 1e6, np.nan]})
    codes = encoder.encode(table).codes[:, 0]
    missing = encoder.domain.shape[0] - 1
    inside = encoder.encode(pd.DataFrame({"x": [0.0, 7.0, 10.0]})).codes[:, 0]
    assert list(codes[[1, 2, 3]]) == list(inside) and codes[6] == missing
    expected = [missing] * 3 if outside == "missing" else [inside[0], inside[2], inside[2]]
    assert list(codes[[0, 4, 5]]) == expected
    assert encoder.clipped == {"x": 3}  # the operator's note counts them either way


def _reading(counts: dict[float, int]):
    """The reading of a histogram with these exact counts (a noisy one as the test's noise
    draws it: the read-out is post-processing, what it reads is the point here)."""
    buckets = Buckets("integer")
    values = np.repeat(list(counts), list(counts.values()))
    return read_bounds(buckets.counts(values).astype(float), 10.0, buckets)


def test_the_domain_step_reads_outside_as_missing_only_for_a_zeros_only_reading() -> None:
    sigma = 10.0
    assert occupancy_threshold(sigma, Buckets("integer").size) < 400  # the zero bucket shows
    zeros = _reading({0.0: 1000, 5000.0: 20, 300.0: 20})  # tails below the threshold
    spread = _reading({0.0: 1000, 300.0: 200, 5000.0: 200})
    assert zeros.zeros_only and not spread.zeros_only
    column = NumericColumn(name="x", kind="integer", missing=False)
    found = dp_bounds(column, zeros)
    assert found["outside"] == "missing" and found["missing"] is True
    assert found["lower"] == 0 and 0 < found["upper"] < 1  # 0 is its only whole value
    kept = dp_bounds(column, spread)
    assert kept.get("outside", "clip") == "clip" and kept["upper"] >= 5000


def test_a_mostly_zero_amount_releases_no_fake_value_at_its_dp_bound() -> None:
    """1,500 rows, 90 % zeros and 10 % spread over 100–100,000, every column auto, ε = 1: no
    released value is 1 (nobody has it) and the zero share is the input's within the noise.
    The DP reading is zeros only (the non-zero rows read as missing) unless the bounds'
    step 1c (``privacy.bounds.beyond_zero``) sees the spread beyond zero (seed 1 of 3)."""
    rows = 1500
    rng = np.random.default_rng(7)
    zero = rng.uniform(size=rows) < 0.9
    amount = np.where(zero, 0, np.floor(10 ** rng.uniform(2, 5, rows))).astype(np.int64)
    table = pd.DataFrame({"amount": amount, "kind": rng.choice(["a", "b"], rows)})
    schema = {"columns": [{"name": "amount", "kind": "auto"}, {"name": "kind", "kind": "auto"}]}
    assert not (table["amount"] == 1).any()
    for seed in range(3):
        synth = Synthesizer(schema, epsilon=1.0, seed=seed).fit(table)
        column = synth._fitted.synthesis.job.schema.column("amount")
        released = pd.to_numeric(synth.synthetic["amount"])
        assert not (released == 1).any()
        if column.outside == "missing":  # the DP reading was zeros only
            assert set(released.dropna()) <= {0}
        # the zero cell's 1-way noise (the largest σ any measurement of it has) at 4σ; the
        # non-zero rows are read as missing and come back blank (an outside: missing column's
        # missing cell is never folded into the zero cell: marginals.compress.keeps_missing)
        sigma = max(v for stage in synth._fitted.synthesis.plan.stages
                    for k, v in stage.noise.items()
                    if k.startswith("sigma"))
        share, true, tolerance = (released == 0).mean(), zero.mean(), 4 * sigma / rows
        assert share >= true - tolerance and released.isna().mean() <= 1 - true + tolerance
