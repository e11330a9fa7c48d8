"""Issue 24 item 1: date/datetime, id, text and ignored columns, read, modelled (or not) and
released in the input's format; bad cells refuse the table naming column and row."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.datetimes import format_times, parse_times
from synthpriv.encoding import TableEncoder
from synthpriv.errors import DataError, SchemaError
from synthpriv.ids import KeyMaker, space, template
from synthpriv.runner import run_job
from synthpriv.schema import parse_schema
from synthpriv.table import check_frame

ROWS = 400


def _run(folder: Path, table: pd.DataFrame, columns: list[dict], **schema) -> pd.DataFrame:
    """Run the independent recipe on ``table`` with ``columns`` as the schema: the release."""
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "train.csv", index=False)
    (folder / "schema.yaml").write_text(yaml.safe_dump({"columns": columns, **schema}))
    config = {"name": "kinds", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 2.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}, "seed": 3}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    run_job(load_job(folder / "job.yaml"))
    return pd.read_csv(folder / "out" / "synthetic.csv", dtype=str, keep_default_na=False)


def _dates(rows: int, seed: int = 0) -> pd.Series:
    days = np.random.default_rng(seed).integers(0, 365, rows)
    return pd.Series(pd.Timestamp("2021-01-01") + pd.to_timedelta(days, unit="D"))


@pytest.mark.parametrize(("cells", "kind", "format", "timezone"), [
    (["2021-03-04", "", "1999-12-31"], "date", None, None),
    (["04/03/2021", "31/12/1999", ""], "date", "%d/%m/%Y", None),
    (["2021-03-04T10:00:00+01:00", "", "2020-06-30T23:59:59+01:00"], "datetime", None, "+01:00"),
    (["2021-03-04T10:00:00", "2020-06-30T23:59:59"], "datetime", None, None),
    (["2021-03-04 10:00", "2020-06-30 23:59"], "datetime", "%Y-%m-%d %H:%M", None),
    (["2021-03-04T10:00:00+0100", "2021-01-04T10:00:00+0100"], "datetime", "%Y-%m-%dT%H:%M:%S%z",
     "+01:00"),
])
def test_dates_round_trip_through_numbers(cells, kind, format, timezone) -> None:
    numbers = parse_times(pd.Series(cells), kind, format, timezone)
    assert np.isnan(numbers).tolist() == [cell == "" for cell in cells]
    back = format_times(pd.Series(numbers), kind, format, timezone)
    assert back.fillna("").tolist() == cells


def test_a_zone_is_read_as_an_instant() -> None:
    """+01:00 and the UTC hour before it are the same second; a naive cell is read in the
    column's zone."""
    zoned = parse_times(pd.Series(["2021-03-04T10:00:00+01:00", "2021-03-04T09:00:00Z"]),
                        "datetime")
    assert zoned[0] == zoned[1]
    naive = parse_times(pd.Series(["2021-03-04T10:00:00"]), "datetime", timezone="+01:00")
    assert naive[0] == zoned[0]


def test_dates_in_a_run_are_released_in_the_input_format(tmp_path: Path) -> None:
    dates = _dates(ROWS)
    table = pd.DataFrame({
        "day": dates.dt.strftime("%d/%m/%Y").where(np.arange(ROWS) % 10 != 0, ""),
        "stamp": (dates + pd.to_timedelta(np.arange(ROWS) % 86400, unit="s")).dt.strftime(
            "%Y-%m-%dT%H:%M:%S+01:00"),
        "n": np.arange(ROWS) % 7,
    })
    released = _run(tmp_path, table, [
        {"name": "day", "kind": "date", "format": "%d/%m/%Y", "lower": "2021-01-01",
         "upper": "2021-12-31", "missing": True},
        {"name": "stamp", "kind": "datetime", "timezone": "+01:00"},  # bounds bought under DP
        {"name": "n", "kind": "integer", "lower": 0, "upper": 6},
    ])
    days = released["day"][released["day"] != ""]
    assert 0 < len(days) < len(released)  # missing values released as empty cells
    parsed = pd.to_datetime(days, format="%d/%m/%Y")  # raises if one is not in the format
    assert parsed.min() >= pd.Timestamp("2021-01-01") and parsed.max() <= pd.Timestamp("2021-12-31")
    assert released["stamp"].str.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+01:00").all()
    # the DP bounds span the data: the release is not stuck at one bound (about a year of dates)
    assert pd.to_datetime(released["stamp"]).nunique() > ROWS // 2


def test_a_date_that_does_not_parse_names_column_and_row(tmp_path: Path) -> None:
    table = pd.DataFrame({"day": _dates(ROWS).dt.strftime("%Y-%m-%d"), "n": np.arange(ROWS) % 3})
    table.loc[6, "day"] = "2021-02-30"
    with pytest.raises(DataError, match=r"column 'day' is date .*'2021-02-30'.* at row 7\b"):
        _run(tmp_path, table, [{"name": "day", "kind": "date"},
                               {"name": "n", "kind": "integer", "lower": 0, "upper": 2}])
    assert not (tmp_path / "out").exists()


def test_ids_are_fresh_unique_keys_of_the_declared_format(tmp_path: Path) -> None:
    real = [f"ID-{i:020d}" for i in range(ROWS)]
    table = pd.DataFrame({"key": real, "n": np.arange(ROWS) % 5})
    fmt = "\\ID-" + "9" * 20
    released = _run(tmp_path, table, [{"name": "key", "kind": "id", "format": fmt},
                                      {"name": "n", "kind": "integer", "lower": 0, "upper": 4}])
    keys = released["key"]
    assert keys.str.fullmatch(r"ID-\d{20}").all()
    assert keys.is_unique and not set(keys) & set(real)


def test_keys_never_repeat_across_draws_even_in_a_tiny_space() -> None:
    maker = KeyMaker("a9", np.random.default_rng(0))  # 260 keys: a bijection covers them all
    keys = maker.draw(100) + maker.draw(160)
    assert len(set(keys)) == 260 == space("a9")
    assert template("\\a9") == ["a", "0123456789"]


def test_an_id_format_with_a_small_space_is_refused() -> None:
    with pytest.raises(SchemaError, match="at least 2\\^64"):
        parse_schema({"columns": [{"name": "k", "kind": "id", "format": "999999"}]}, "t")


def test_a_repeated_id_names_column_and_both_rows(tmp_path: Path) -> None:
    table = pd.DataFrame({"key": [f"k{i}" for i in range(ROWS)], "n": np.arange(ROWS) % 3})
    table.loc[250, "key"] = "k17"
    with pytest.raises(DataError, match="column 'key' is declared id.*'k17' repeats at rows 18 "
                                        "and 251"):
        _run(tmp_path, table, [{"name": "key", "kind": "id"},
                               {"name": "n", "kind": "integer", "lower": 0, "upper": 2}])
    assert not (tmp_path / "out").exists()


def test_a_repeat_across_chunks_is_found(tmp_path: Path) -> None:
    from synthpriv.chunks import iter_chunks

    (tmp_path / "t.csv").write_text("key,n\n" + "\n".join(["a,1", "b,2", "c,3", "a,4"]) + "\n")
    schema = parse_schema({"columns": [{"name": "key", "kind": "id"},
                                       {"name": "n", "kind": "integer", "lower": 0, "upper": 9}]},
                          "t")
    with pytest.raises(DataError, match="repeats at rows 1 and 4"):
        list(iter_chunks(tmp_path / "t.csv", schema, chunk_rows=2))


def _paragraphs(rows: int) -> list[str]:
    rng = np.random.default_rng(5)
    return [f"Report {i}: " + " ".join(rng.choice(["a", "breach", "laptop", "of"], 12))
            for i in range(rows)]


def test_text_never_reaches_the_model_or_the_release(tmp_path: Path) -> None:
    text = _paragraphs(ROWS)
    table = pd.DataFrame({"notes": text, "about": text, "tag": text, "n": np.arange(ROWS) % 3})
    released = _run(tmp_path, table, [
        {"name": "notes", "kind": "text"},
        {"name": "about", "kind": "text", "placeholder": "[redacted]"},
        {"name": "tag", "kind": "text", "values": ["x", "y"]},
        {"name": "n", "kind": "integer", "lower": 0, "upper": 2},
    ])
    assert set(released["notes"]) == {""}
    assert set(released["about"]) == {"[redacted]"}
    assert set(released["tag"]) == {"x", "y"}
    assert not set(text) & set(released.to_numpy().ravel())


def test_the_encoder_refuses_text_and_id_values() -> None:
    schema = parse_schema({"columns": [{"name": "notes", "kind": "text"},
                                       {"name": "key", "kind": "id"},
                                       {"name": "n", "kind": "integer", "lower": 0, "upper": 2}]},
                          "t")
    read = check_frame(pd.DataFrame({"notes": ["a b", "c"], "key": ["1", "2"], "n": [0, 1]}),
                       schema)
    assert read["notes"].isna().all() and read["key"].isna().all()  # the reader drops them
    encoder = TableEncoder(schema)
    assert encoder.domain.attributes == ("n",)
    for name in ("notes", "key"):
        leaked = read.assign(**{name: ["a b", "c"]})
        with pytest.raises(ValueError, match=f"'{name}' is .* must never reach the model"):
            encoder.encode(leaked)


def test_ignored_and_extra_columns_are_not_read_or_released(tmp_path: Path) -> None:
    table = pd.DataFrame({"n": np.arange(ROWS) % 3, "secret": ["x"] * ROWS,
                          "extra": ["oops"] * ROWS})
    table.loc[3, "secret"] = "not a number"
    released = _run(tmp_path, table, [{"name": "n", "kind": "integer", "lower": 0, "upper": 2,
                                       "ignore": False},
                                      {"name": "secret", "kind": "integer", "ignore": True}],
                    extra_columns="ignore")
    assert list(released.columns) == ["n"]
    with pytest.raises(DataError, match=r"not in the schema \['extra'\].*extra_columns: ignore"):
        _run(tmp_path / "strict", table, [
            {"name": "n", "kind": "integer", "lower": 0, "upper": 2},
            {"name": "secret", "ignore": True}])


def test_a_schema_that_models_nothing_is_refused_with_the_reason() -> None:
    with pytest.raises(SchemaError, match="no column is modelled"):
        parse_schema({"columns": [{"name": "notes", "kind": "text"},
                                  {"name": "key", "kind": "id"}]}, "t")


def test_the_api_reads_pandas_timestamps_into_date_and_datetime_columns() -> None:
    from synthpriv import Synthesizer

    days = _dates(ROWS)
    table = pd.DataFrame({"day": days, "at": days.dt.tz_localize("Europe/Paris"),
                          "n": np.arange(ROWS) % 3})
    schema = {"columns": [{"name": "day", "kind": "date", "lower": "2021-01-01",
                           "upper": "2021-12-31"},
                          {"name": "at", "kind": "datetime", "timezone": "Europe/Paris",
                           "lower": "2021-01-01T00:00:00+01:00", "upper": "2022-01-01T00:00:00+01:00"},
                          {"name": "n", "kind": "integer", "lower": 0, "upper": 2}]}
    synthetic = Synthesizer(schema, epsilon=2.0, delta=1e-6, recipe="independent").fit(
        table).synthetic
    assert synthetic["day"].str.fullmatch(r"2021-\d\d-\d\d").all()
    assert synthetic["at"].str.fullmatch(r"202[12]-\d\d-\d\dT\d\d:\d\d:\d\d\+0[12]:00").all()
