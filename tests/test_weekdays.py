"""`weekdays` on date/datetime columns: public days of the week the release's dates fall on
(trading or business days), drafted by the data-read draft when the data shows them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.datetimes import parse_times, weekday_numbers, weekdays_of
from synthpriv.draft_columns import MIN_WEEKDAY_DATES
from synthpriv.encoding import TableEncoder
from synthpriv.runner import run_job
from synthpriv.schema import parse_schema

WORKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri"]


def test_names_and_abbreviations_read_as_monday_zero() -> None:
    assert weekday_numbers(["fri", "Monday", "MON", " sun "]) == [0, 4, 6]
    with pytest.raises(ValueError, match="'Fry' is no weekday"):
        weekday_numbers(["Mon", "Fry"])
    with pytest.raises(ValueError, match="empty list"):
        weekday_numbers([])


@pytest.mark.parametrize(("cells", "kind", "timezone"), [
    (["2026-11-26", "1970-01-01", "2024-02-29", "1969-12-28", "1900-03-01"], "date", None),
    (["2026-11-26T23:30:00Z", "2026-11-29T00:10:00Z"], "datetime", None),
    (["2026-11-26T23:30:00Z", "2026-11-29T00:10:00Z"], "datetime", "+01:00"),
    (["2026-11-26T14:30:00Z", "2026-03-29T01:30:00Z"], "datetime", "Pacific/Auckland"),
])
def test_weekdays_of_is_the_day_the_released_cell_shows(cells, kind, timezone) -> None:
    numbers = parse_times(pd.Series(cells), kind)
    stamps = pd.to_datetime(pd.Series(cells), utc=True)
    if timezone is not None:
        stamps = stamps.dt.tz_convert(pd.Timestamp(0, tz="UTC").tz_convert(timezone).tz
                                      if timezone != "+01:00" else "Etc/GMT-1")
    assert weekdays_of(numbers, kind, timezone).tolist() == stamps.dt.dayofweek.tolist()


def test_the_schema_writes_weekdays_back_as_abbreviations_and_names_a_bad_one() -> None:
    schema = parse_schema({"columns": [{"name": "d", "kind": "date",
                                        "weekdays": ["monday", "TUE", "Fri"]}]}, "t")
    assert schema.column("d").weekdays == ["Mon", "Tue", "Fri"]
    with pytest.raises(Exception, match=r"'d': weekdays: 'Sabbath' is no weekday"):
        parse_schema({"columns": [{"name": "d", "kind": "date", "weekdays": ["Sabbath"]}]}, "t")


def _decoded(column: dict, rows: int = 20_000, seed: int = 1) -> pd.Series:
    """Decode uniformly drawn codes of ``column`` (the only column) as the release would."""
    encoder = TableEncoder(parse_schema({"columns": [column]}, "t"))
    cells = encoder.domain.shape[0]
    codes = np.random.default_rng(seed).integers(0, cells, (rows, 1))
    return encoder.decode(codes, np.random.default_rng(seed + 1))[column["name"]]


def test_decoded_dates_fall_on_the_declared_days_evenly() -> None:
    column = {"name": "d", "kind": "date", "lower": "2020-01-01", "upper": "2023-12-31"}
    before = pd.to_datetime(_decoded(column)).dt.dayofweek
    assert before.isin([5, 6]).mean() > 0.25  # without the option: weekends, 2/7 of the draws
    after = pd.to_datetime(_decoded({**column, "weekdays": WORKDAYS})).dt.dayofweek
    assert not after.isin([5, 6]).any()
    shares = after.value_counts(normalize=True)
    # uniform over 5 days: each share's sd is √(0.2·0.8/20,000) = 0.0028; 5 sd
    assert np.abs(shares - 0.2).max() < 0.014
    dates = pd.to_datetime(_decoded({**column, "weekdays": WORKDAYS}))
    assert dates.min() >= pd.Timestamp("2020-01-01") and dates.max() <= pd.Timestamp("2023-12-31")


def test_a_move_stays_in_its_cell_and_keeps_the_time_of_day() -> None:
    """Each value moves by whole days (its time of day kept, in the column's zone) to a date
    within 6 days of where the model drew it."""
    column = {"name": "t", "kind": "datetime", "lower": "2021-01-01T00:00:00",
              "upper": "2021-12-31T23:59:59", "timezone": "Europe/Paris"}
    plain = _decoded(column, rows=5_000, seed=4)
    moved = _decoded({**column, "weekdays": ["Sat", "Sun"]}, rows=5_000, seed=4)
    plain_t, moved_t = (pd.to_datetime(cells, utc=True).dt.tz_convert("Europe/Paris")
                        for cells in (plain, moved))
    assert moved_t.dt.dayofweek.isin([5, 6]).all()
    assert (moved_t.dt.time == plain_t.dt.time).all()  # the clock time, across DST changes too
    assert ((moved_t - plain_t).abs() <= pd.Timedelta(days=6, hours=1)).all()
    assert ((moved_t - plain_t) == pd.Timedelta(0)).mean() == pytest.approx(2 / 7, abs=0.03)


def _business_days(count: int, start: str = "2019-01-01") -> pd.Series:
    return pd.Series(pd.bdate_range(start, periods=count).strftime("%Y-%m-%d"))


def test_the_data_read_draft_drafts_the_days_it_sees_only_from_enough_dates(tmp_path) -> None:
    from synthpriv.schema_infer import infer_schema

    def drafted(days: pd.Series) -> dict:
        schema, _ = infer_schema(pd.DataFrame({"day": days, "n": np.arange(len(days)) % 3}))
        return next(c for c in schema["columns"] if c["name"] == "day")

    assert drafted(_business_days(MIN_WEEKDAY_DATES))["weekdays"] == WORKDAYS
    assert "weekdays" not in drafted(_business_days(MIN_WEEKDAY_DATES - 1))
    every_day = pd.Series(pd.date_range("2019-01-01", periods=400).strftime("%Y-%m-%d"))
    assert "weekdays" not in drafted(every_day)


def test_a_run_releases_business_days_only(tmp_path: Path) -> None:
    rows = 400
    table = pd.DataFrame({"day": _business_days(rows).sample(frac=1, random_state=0).values,
                          "n": np.arange(rows) % 3})
    table.to_csv(tmp_path / "train.csv", index=False)
    (tmp_path / "schema.yaml").write_text(yaml.safe_dump({"columns": [
        {"name": "day", "kind": "date", "weekdays": WORKDAYS},  # bounds bought under DP
        {"name": "n", "kind": "integer", "lower": 0, "upper": 2}]}))
    (tmp_path / "job.yaml").write_text(yaml.safe_dump({
        "name": "wd", "data": {"path": "train.csv", "schema": "schema.yaml"},
        "budget": {"epsilon": 2.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
        "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")}, "seed": 3}))
    run_job(load_job(tmp_path / "job.yaml"))
    released = pd.read_csv(tmp_path / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    days = pd.to_datetime(released["day"][released["day"] != ""], format="%Y-%m-%d")
    assert len(days) > rows // 2 and not days.dt.dayofweek.isin([5, 6]).any()
