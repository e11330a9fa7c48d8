"""Compact dates (``19580329``, statsmodels co2's `date`): whole numbers that are dates. The DP
kind step counts them in a class of their own; the data-read draft writes them as dates; the
release writes them back in the same shape."""

from __future__ import annotations

import numpy as np
import pandas as pd

from synthpriv import Synthesizer
from synthpriv.datetimes import COMPACT_DATE, compact_dates
from synthpriv.draft_columns import MIN_COMPACT_DATES, MIN_WEEKDAY_DATES
from synthpriv.kinds import CLASSES, class_counts
from synthpriv.schema_infer import infer_schema
from tests.test_kinds import assert_class_sensitivity_one

LABEL = f"date {COMPACT_DATE}"


def _saturdays(count: int) -> pd.Series:
    return pd.Series(pd.date_range("1958-03-29", periods=count, freq="7D").strftime("%Y%m%d"))


def test_only_eight_digits_that_are_real_days_read_as_compact_dates() -> None:
    cells = pd.Series(["19580329", "19581329", "19580230", "20991231", "17991231", "2020010",
                       "202001011", "20200101.5", "316", "2020-01-01"])
    assert compact_dates(cells).tolist() == [True, False, False, True, False, False, False,
                                             False, False, False]


def test_a_compact_date_is_counted_in_its_own_class_not_as_a_whole_number() -> None:
    counts = dict(zip(CLASSES, class_counts(pd.Series(["19580329", "20200101", "19581329",
                                                      "316", "3.5", "2020-01-01"])),
                      strict=True))
    assert counts[LABEL] == 2 and counts["whole"] == 2 and counts["1 decimal"] == 1
    assert counts["date %Y-%m-%d"] == 1


def test_the_class_histogram_keeps_sensitivity_one_with_compact_dates() -> None:
    column = pd.Series(["19580329", "20011229", "19581329", "316", "2.5", "2021-03-04", "a b"])
    assert_class_sensitivity_one(column, ["", "20200101", "20201301", "7", "0.5", "x"])


def test_the_data_read_draft_writes_compact_dates_from_enough_values() -> None:
    def drafted(days: pd.Series) -> dict:
        schema, _ = infer_schema(pd.DataFrame({"day": days, "n": np.arange(len(days)) % 3}))
        return next(c for c in schema["columns"] if c["name"] == "day")

    entry = drafted(_saturdays(MIN_COMPACT_DATES))
    assert entry["kind"] == "date" and entry["format"] == COMPACT_DATE
    assert entry["lower"] == "1958-03-29" and "weekdays" not in entry  # too few dates for it
    assert drafted(_saturdays(MIN_WEEKDAY_DATES))["weekdays"] == ["Sat"]  # a weekly series' day
    assert drafted(_saturdays(MIN_COMPACT_DATES - 1))["kind"] == "integer"
    codes = pd.Series([str(20_000_000 + 97 * i) for i in range(50)])  # some months > 12
    assert drafted(codes)["kind"] == "integer"


def test_an_auto_column_of_compact_dates_is_released_as_compact_dates() -> None:
    table = pd.DataFrame({"date": _saturdays(1500).sample(frac=1, random_state=0).values,
                          "co2": np.round(np.linspace(313, 374, 1500), 1)})
    schema = {"columns": [{"name": name, "kind": "auto"} for name in table.columns]}
    synth = Synthesizer(schema, epsilon=1.0, delta=1e-6, recipe="independent", seed=1).fit(table)
    column = synth._fitted.synthesis.job.schema.column("date")
    assert column.kind == "date" and column.format == COMPACT_DATE
    cells = synth.synthetic["date"].dropna().astype(str)
    assert len(cells) > 1000 and cells.str.fullmatch(r"\d{8}").all()
    parsed = pd.to_datetime(cells, format=COMPACT_DATE)  # raises if one is no real day
    assert parsed.min() >= pd.Timestamp("1957-01-01") and parsed.max() <= pd.Timestamp("1988-12-31")
