"""No fake spike at a DP bound (issue 24): the tail beyond a bound the domain step chose under DP
is clipped onto that bound; decoding spreads those rows over the range's outermost 1/32 instead
of stacking them on the bound, and never releases a value outside the DP bounds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.encoding import SPREAD_BINS, TableEncoder
from synthpriv.evaluation.values import SPIKE_SYNTHETIC, value_fidelity
from synthpriv.schema import parse_schema


def _heavy_tail(rows: int = 1500, seed: int = 0) -> pd.DataFrame:
    """Amounts from 500 with a Pareto(½) tail (as breach sizes: 500 to millions)."""
    rng = np.random.default_rng(seed)
    amounts = np.floor(500 * rng.uniform(size=rows) ** -2.0).astype(np.int64)
    return pd.DataFrame({"affected": amounts, "kind": rng.choice(["a", "b"], rows)})


def _schema(spread: list[str]) -> dict:
    return {"columns": [{"name": "x", "kind": "integer", "lower": 0, "upper": 32767,
                         "spread_clipped": spread}]}


@pytest.mark.parametrize("spread", [["upper"], ["lower", "upper"]])
def test_rows_at_a_dp_bound_are_spread_inside_it(spread: list[str]) -> None:
    """Codes of the bound's own fine cell decode over [upper − range/32, upper] (whole values,
    none above the bound, none holding a fake spike's share); without the flag they stack."""
    encoder = TableEncoder(parse_schema(_schema(spread), "test"))
    cells = encoder.domain.shape[0]
    codes = np.array([[cells - 1]] * 4000 + [[0]] * 4000)
    values = encoder.decode(codes, np.random.default_rng(0))["x"].to_numpy(dtype=float)
    top, bottom = values[:4000], values[4000:]
    assert top.max() <= 32767 and top.min() >= 32767 - 32767 / SPREAD_BINS
    assert (top % 1 == 0).all() and pd.Series(top).value_counts(normalize=True).max() < 0.01
    if "lower" in spread:
        assert bottom.min() >= 0 and bottom.max() <= 32767 / SPREAD_BINS
        assert pd.Series(bottom).value_counts(normalize=True).max() < 0.01
    else:
        assert set(bottom) == {0.0}
    stacked = TableEncoder(parse_schema(_schema([]), "test"))
    assert set(stacked.decode(codes[:4000], np.random.default_rng(0))["x"]) == {32767}


@pytest.mark.parametrize("kind", ["integer", "auto"])
def test_a_heavy_tail_leaves_no_fake_spike_at_its_dp_upper_bound(kind: str) -> None:
    """A heavy-tailed column whose DP upper bound clips its tail (checked: more than 2 % of the
    real values lie above it, in two of the first eight seeds; which seeds depends on the random
    stream, which any new noisy count shifts): the release holds no fake spike (values.py's
    check: ≥ 1 % of synthetic rows, < 0.1 % of real) and no value outside the DP bounds."""
    table = _heavy_tail()
    schema = {"columns": [{"name": "affected", "kind": kind},
                          {"name": "kind", "kind": "categorical", "categories": ["a", "b"]}]}
    checked = 0
    for seed in range(8):  # the scenario is a property of the draw: check the first two seeds
        if checked == 2:  # whose DP upper bound clips a tail that would make a spike
            break
        synth = Synthesizer(schema, epsilon=1.0, delta=1e-6, recipe="independent",
                            seed=seed).fit(table)
        column = synth._fitted.synthesis.job.schema.column("affected")
        assert "upper" in column.spread_clipped
        clipped = (table["affected"] > column.upper).mean()
        if clipped <= 2 * SPIKE_SYNTHETIC:  # the tail the bound clips would not be a spike
            continue
        checked += 1
        released = pd.to_numeric(synth.synthetic["affected"]).dropna()
        assert released.min() >= column.lower and released.max() <= column.upper
        values = value_fidelity(table, pd.DataFrame({"affected": released}), ["affected"])
        assert values["columns"]["affected"]["fake_spikes"] == []
    assert checked == 2  # the scenario occurs (a bound clipping > 2 % of rows) in 2 of 8 draws


def test_a_heaped_cell_of_a_datetime_column_is_not_decoded_at_one_second() -> None:
    """A fine cell the noisy counts flag as heaped decodes at its roundest value for a number
    (a heap at 40 hours), but for seconds since 1970 that value is no round time (10:40:00 on
    some day: a fake spike of mn_police's timestamps at the data's last cell), so a datetime
    column's rows are drawn within the cell."""
    raw = {"columns": [{"name": "t", "kind": "datetime", "lower": "2016-01-01T00:00:00",
                        "upper": "2021-12-31T23:59:59"},
                       {"name": "n", "kind": "integer", "lower": 0, "upper": 100_000}]}
    encoder = TableEncoder(parse_schema(raw, "test"))
    codes = np.full((2000, 2), 700)
    atoms = {name: np.zeros(size, dtype=bool) for name, size in
             zip(("t", "n"), encoder.domain.shape, strict=True)}
    atoms["t"][700] = atoms["n"][700] = True
    decoded = encoder.decode(codes, np.random.default_rng(0), atoms)
    assert decoded["n"].nunique() == 1  # a number's heap: one value
    assert decoded["t"].value_counts(normalize=True).max() < SPIKE_SYNTHETIC
