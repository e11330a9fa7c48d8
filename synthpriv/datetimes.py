"""Dates and timestamps as numbers and back: the reading and writing rules of ``date`` and
``datetime`` columns (synthpriv.schema.DatetimeColumn).

A ``date`` is read as whole days since 1970-01-01, a ``datetime`` as whole seconds since
1970-01-01T00:00:00Z, so the DP bounds, the fine grid and the adaptive domain of an integer
column apply unchanged. Parsing is pandas' (``pd.to_datetime``): a declared strftime ``format``,
else ISO 8601 (``2021-03-04``, ``2021-03-04T10:00:00+01:00``). A cell that carries no zone is read
in the column's ``timezone`` (UTC when none is given; a date column without a format reads ISO 8601
and keeps the day of a timestamp, in UTC); released values are written back in the
column's format, in its ``timezone``: ISO 8601 with that offset, or naive ISO when no zone is
declared. Seconds are the finest unit kept (fractions of a second are dropped).
Nothing here reads budgets or releases anything: parsing, formatting and weekdays only.
"""

from __future__ import annotations

import datetime as dt
import re

import numpy as np
import pandas as pd

ISO_DATE = "%Y-%m-%d"
# The public formats a column of dates is recognised in (the data-read draft, synthpriv.
# draft_columns, and the DP kind decision of an auto column, synthpriv.kinds): fixed here, never
# read from data. Timestamps with a zone are ISO 8601 (``ISO_ZONED``), read and written by pandas.
DATE_FORMATS = ("%Y-%m-%d", "%m/%d/%Y", "%d/%m/%Y", "%Y/%m/%d", "%d.%m.%Y", "%d-%m-%Y",
                "%m-%d-%Y", "%b %d, %Y", "%B %d, %Y", "%d %b %Y", "%d %B %Y", "%m/%d/%y",
                "%d/%m/%y", "%d-%b-%Y", "%d-%b-%y", "%b-%d-%Y")  # Jan-1-1995: statsmodels elec_equip
DATETIME_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M",
                    "%Y-%m-%dT%H:%M", "%m/%d/%Y %H:%M:%S", "%m/%d/%Y %H:%M",
                    "%d/%m/%Y %H:%M:%S", "%d/%m/%Y %H:%M", "%m/%d/%Y %I:%M:%S %p",
                    "%m/%d/%Y %I:%M %p", "%Y-%m-%d %H:%M:%S.%f", "%Y-%m-%dT%H:%M:%S.%f",
                    "%Y/%m/%d %H:%M:%S", "%Y/%m/%d %H:%M")
# Compact dates (``19580329``): cells that read as whole numbers, so the kind and draft rules
# take them apart from numbers by this format alone: 8 digits, a year 1800–2199 and a real day.
COMPACT_DATE = "%Y%m%d"
_COMPACT = re.compile(r"^(18|19|20|21)\d{6}$")
ISO_ZONED = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)$")
_OFFSET = re.compile(r"^(?:UTC)?([+-])(\d{2}):?(\d{2})$")
_ZONED = re.compile(r"(?:Z|[+-]\d{2}:?\d{2})$")
_EPOCH = pd.Timestamp("1970-01-01", tz="UTC")


def zone(name: str | None) -> dt.tzinfo | str:
    """A ``timezone`` setting as pandas takes it: ``+01:00`` (a fixed offset), an IANA name
    (``Europe/Paris``), or UTC when none is given."""
    if name is None:
        return "UTC"
    match = _OFFSET.match(name.strip())
    if match:
        sign = -1 if match.group(1) == "-" else 1
        minutes = int(match.group(2)) * 60 + int(match.group(3))
        return dt.timezone(sign * dt.timedelta(minutes=minutes))
    return name


def parse_times(cells: pd.Series, kind: str, format: str | None = None,
                timezone: str | None = None) -> np.ndarray:
    """``cells`` (text, NaN or '' for missing) as days (``kind='date'``) or seconds
    (``'datetime'``) since the epoch; NaN where a cell is missing or does not parse (the caller
    decides whether that refuses the table)."""
    text = cells.astype(object).where(cells.notna(), "").astype(str).str.strip()
    present = text != ""
    numbers = np.full(len(text), np.nan)
    if not present.any():
        return numbers
    values = text[present]
    if kind == "date":  # without a format: ISO 8601, a time of day (a timestamp) dropped
        stamps = pd.to_datetime(values, format=format or "ISO8601", errors="coerce",
                                utc=format is None)
        stamps = stamps.dt.tz_localize(None) if stamps.dt.tz is not None else stamps
        days = (stamps.dt.normalize() - pd.Timestamp("1970-01-01")).dt.days
        numbers[present.to_numpy()] = days.to_numpy(dtype=float, na_value=np.nan)
        return numbers
    zoned = values.str.contains(_ZONED) if format is None else pd.Series(
        "%z" in format or "%Z" in format, index=values.index)
    seconds = pd.Series(np.nan, index=values.index)
    for has_zone, part in values.groupby(zoned):
        stamps = pd.to_datetime(part, format=format or "ISO8601", errors="coerce",
                                utc=bool(has_zone))
        if not has_zone:
            stamps = stamps.dt.tz_localize(zone(timezone), ambiguous="NaT",
                                           nonexistent="NaT").dt.tz_convert("UTC")
        delta = stamps - _EPOCH
        seconds[part.index] = np.floor(delta.dt.total_seconds().to_numpy(dtype=float))
    numbers[present.to_numpy()] = seconds.to_numpy(dtype=float)
    return numbers


def format_times(numbers: pd.Series, kind: str, format: str | None = None,
                 timezone: str | None = None) -> pd.Series:
    """Days or seconds since the epoch (NaN/NA: missing) written as the column's cells are."""
    values = pd.to_numeric(numbers, errors="coerce").astype(float)
    present = values.notna()
    out = pd.Series(np.nan, index=numbers.index, dtype=object)
    if not present.any():
        return out
    if kind == "date":
        stamps = pd.Timestamp("1970-01-01") + pd.to_timedelta(values[present], unit="D")
        out[present] = stamps.dt.strftime(format or ISO_DATE)
        return out
    stamps = (_EPOCH + pd.to_timedelta(values[present], unit="s")).dt.tz_convert(zone(timezone))
    if format is not None:
        out[present] = stamps.dt.strftime(format)
    elif timezone is None:
        out[present] = stamps.dt.tz_localize(None).map(lambda t: t.isoformat())
    else:
        out[present] = stamps.map(lambda t: t.isoformat())
    return out


def as_number(value: object, kind: str, format: str | None = None,
              timezone: str | None = None) -> float | None:
    """A bound written in a schema (``2021-03-04``, a YAML date, or a number of days/seconds)
    as the column's number; None for None. ValueError naming the value if it does not parse."""
    if value is None or (isinstance(value, int | float) and not isinstance(value, bool)):
        return value  # type: ignore[return-value]
    if isinstance(value, dt.datetime | dt.date):
        value = value.isoformat()
    number = parse_times(pd.Series([str(value)]), kind, None if isinstance(value, str)
                         and _iso_like(value) else format, timezone)[0]
    if np.isnan(number):
        raise ValueError(f"the bound '{value}' does not read as a {kind} "
                         f"({'format ' + repr(format) if format else 'ISO 8601, e.g. 2021-03-04'})")
    return float(number)


def _iso_like(text: str) -> bool:
    return bool(re.match(r"^\d{4}-\d{2}-\d{2}", text.strip()))


_DAY_NAMES = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def weekday_numbers(names: list[str]) -> list[int]:
    """Weekday names or three-letter abbreviations (any case) as numbers, Monday = 0, sorted,
    each once. ValueError naming an unknown name, or for an empty list."""
    numbers = set()
    for name in names:
        key = str(name).strip().lower()
        found = [day for day, full in enumerate(_DAY_NAMES) if key in (full, full[:3])]
        if not found:
            raise ValueError(f"'{name}' is no weekday (Mon … Sun, or Monday … Sunday)")
        numbers.add(found[0])
    if not numbers:
        raise ValueError("an empty list: name at least one day (e.g. [Mon, Tue, Wed, Thu, Fri])")
    return sorted(numbers)


def weekdays_of(numbers: np.ndarray, kind: str, timezone: str | None = None) -> np.ndarray:
    """The weekday (Monday = 0) of days (``kind='date'``) or seconds (``'datetime'``) since the
    epoch, a datetime's in the column's ``timezone`` (UTC when none): the day its cell shows."""
    values = np.asarray(numbers, dtype=float)
    if kind == "date":  # 1970-01-01 was a Thursday
        return ((np.floor(values).astype(np.int64) + 3) % 7).astype(np.int64)
    stamps = (_EPOCH + pd.to_timedelta(values, unit="s")).tz_convert(zone(timezone))
    return np.asarray(stamps.dayofweek, dtype=np.int64)


def shift_days(numbers: np.ndarray, days: np.ndarray, kind: str,
               timezone: str | None = None) -> np.ndarray:
    """Days or seconds since the epoch moved by whole calendar ``days``, a datetime's in the
    column's ``timezone``: its clock time is kept across a daylight-saving change (a time the
    change skips moves forward; a repeated one reads as standard time)."""
    values = np.asarray(numbers, dtype=float)
    if kind == "date":
        return values + days
    local = (_EPOCH + pd.to_timedelta(values, unit="s")).tz_convert(zone(timezone))
    moved = (local.tz_localize(None) + pd.to_timedelta(days, unit="D")).tz_localize(
        zone(timezone), ambiguous=np.zeros(len(values), dtype=bool), nonexistent="shift_forward")
    return np.floor((moved.tz_convert("UTC") - _EPOCH).total_seconds().to_numpy(dtype=float))


def compact_dates(cells: pd.Series) -> np.ndarray:
    """Which of ``cells`` (stripped text) are compact dates: eight digits that read as a real
    day under ``COMPACT_DATE`` with a year 1800–2199 (``19580329``; ``19581329`` is not)."""
    text = cells.astype(str)
    shaped = text.str.fullmatch(_COMPACT).to_numpy(dtype=bool)
    hit = np.zeros(len(text), dtype=bool)
    if shaped.any():
        stamps = pd.to_datetime(text[shaped], format=COMPACT_DATE, errors="coerce")
        hit[shaped] = stamps.notna().to_numpy()
    return hit
