"""The DP kind decision of an ``auto`` column: categorical, integer, continuous, date/datetime (in
one public format), text or id.

Each cell of an auto column falls in at most one of the public ``CLASSES``: ``token`` (text
without whitespace), ``words`` (text with whitespace, shorter than ``LONG_TEXT`` characters),
``long text`` (with whitespace, ``LONG_TEXT`` characters or more), ``fraction`` (a finite number
that is not whole), ``whole`` (a whole number), or one class per public date/datetime format
(``TIME_FORMATS``: the formats synthpriv.datetimes lists, fixed in code; a cell is in the first
one it parses under). Empty cells and common missing markers (``MISSING_MARKERS``: NA, NaN,
null, a dump's NULL, …; compared without case) fall in none. Besides its class histogram, the
domain step counts a column's ``singletons``: the cells of the text classes whose (stripped)
value occurs exactly once in the column.
It adds discrete Gaussian noise to both; ``decide`` then reads the kind from the noisy counts and
the public noise scales alone, so the kind is post-processing of DP counts.

Sensitivity (named in synthpriv.privacy.domain_budget, the one place a person-level bound k
multiplies them): a row holds one cell per column, in at most one class, so adding or removing a
row changes one count of a column's class histogram by 1 (L2 sensitivity 1; √2 under
replace-one). Adding a row changes the count of one value by 1: from 0 to 1 (one singleton more),
from 1 to 2 (one fewer) or otherwise none, so the singleton count moves by at most 1 (2 under
replace-one: one value loses a cell, another gains one). tests/test_kinds.py checks all three by
brute force.

The decision rule (constants below; chosen from the noise arithmetic and the data-read draft's
public rules, not tuned on any table). Groups: text = token + words + long text, numbers =
fraction + whole, and each date format on its own:
* the date/datetime format with the largest noisy count when it exceeds both text and numbers
  (cells in another format are then read as missing);
* else, when text ≥ numbers (ties and nothing above the noise included):
  - ``text`` when long text is at least half the text (sentences: categories they are not);
  - near-unique when the noisy singletons are at least ``NEAR_UNIQUE`` of the noisy text and
    ``SINGLETON_NOISE``·σ: most values occur once, so categories cannot model the column (DP
    discovery would drop every one of them). Then ``id`` when tokens are the majority of the text
    and the singletons at least ``ID_SHARE`` of it (keys: short, distinct, no spaces), else
    ``text``;
  - else ``categorical`` (a column of codes written as numbers reads as integer: declare it
    categorical where that is public knowledge);
* else continuous when the noisy fractions exceed both ``FRACTION_SHARE`` of the noisy numbers
  and ``FRACTION_NOISE``·σ (an integer column, with no fraction at all, then reads as continuous
  with probability Φ(−3) ≈ 0.1 % per run); a column decided integer rounds the few fractions
  it may hold;
* else integer.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthpriv.datetimes import DATE_FORMATS, DATETIME_FORMATS, ISO_ZONED

# backslash-N (compared as backslash-n): the NULL of MySQL and PostgreSQL text dumps
MISSING_MARKERS = frozenset({"na", "n/a", "nan", "null", "none", "?", "-", ".", "...", "\\n"})
FRACTION_SHARE = 0.05
FRACTION_NOISE = 3.0
LONG_TEXT = 50  # characters: a category label is a name, a sentence is longer (as the draft's)
NEAR_UNIQUE = 0.5  # singletons / text cells above this: not categories (as the draft's rule)
ID_SHARE = 0.9  # singletons / text cells for keys: nearly every key occurs once
SINGLETON_NOISE = 3.0  # the singleton count must clear 3σ of its noise too
ZONE = "+00:00"  # zoned timestamps are released in UTC, written with this offset (public)


@dataclass(frozen=True)
class TimeFormat:
    """One public date/datetime format: its class label and the schema entry it decides."""

    label: str
    kind: str
    format: str | None = None
    timezone: str | None = None

    def parsed(self, cells: pd.Series) -> np.ndarray:
        """Which of ``cells`` (stripped text) are written in this format."""
        if self.format is None:
            return cells.str.fullmatch(ISO_ZONED).to_numpy(dtype=bool)
        stamps = pd.to_datetime(cells, format=self.format, errors="coerce")
        return stamps.notna().to_numpy()


TIME_FORMATS: tuple[TimeFormat, ...] = (
    TimeFormat("datetime ISO 8601 with zone", "datetime", None, ZONE),
    *(TimeFormat(f"datetime {f}", "datetime", f) for f in DATETIME_FORMATS),
    *(TimeFormat(f"date {f}", "date", f) for f in DATE_FORMATS),
)
TEXT_CLASSES = ("token", "words", "long text")
NUMBER_CLASSES = ("fraction", "whole")
CLASSES = (*TEXT_CLASSES, *NUMBER_CLASSES, *(f.label for f in TIME_FORMATS))
_MAX_TIME_CHARS = 40  # longer cells are no date in any of the formats


def present_cells(cells: pd.Series) -> pd.Series:
    """``cells`` stripped, without empty cells and missing markers."""
    text = cells.dropna().astype(str).str.strip()
    return text[(text != "") & ~text.str.lower().isin(MISSING_MARKERS)]


def cell_classes(cells: pd.Series) -> tuple[np.ndarray, pd.Series]:
    """How many of ``cells`` (text, NaN for missing) fall in each of CLASSES (exact counts:
    the domain step adds the noise), and the cells of the text classes (stripped), whose
    values the singleton count reads."""
    text = present_cells(cells)
    counts = dict.fromkeys(CLASSES, 0)
    numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    finite = np.isfinite(numbers)
    whole = finite & (numbers == np.round(numbers))
    counts["fraction"], counts["whole"] = int((finite & ~whole).sum()), int(whole.sum())
    rest = text[~finite]
    timed = np.zeros(len(rest), dtype=bool)
    left = np.flatnonzero((rest.str.contains(r"\d") & (rest.str.len() <= _MAX_TIME_CHARS))
                          .to_numpy(dtype=bool))
    for time_format in TIME_FORMATS:  # each cell in the first format it parses under
        if not left.size:
            break
        hit = time_format.parsed(rest.iloc[left])
        counts[time_format.label] = int(hit.sum())
        timed[left[hit]] = True
        left = left[~hit]
    words = rest[~timed]
    spaced = words.str.contains(r"\s").to_numpy(dtype=bool)
    long = spaced & (words.str.len() >= LONG_TEXT).to_numpy(dtype=bool)
    counts["token"], counts["words"] = int((~spaced).sum()), int((spaced & ~long).sum())
    counts["long text"] = int(long.sum())
    return np.array([counts[c] for c in CLASSES], dtype=np.int64), words


def class_counts(cells: pd.Series) -> np.ndarray:
    """How many of ``cells`` fall in each of CLASSES (``cell_classes``' counts)."""
    return cell_classes(cells)[0]


def value_counts(cells: pd.Series) -> Counter:
    """How often each value of the text classes occurs in ``cells``: summed over chunks, it
    gives the column's ``singletons`` (numbers and dates are left out: the decision reads
    singletons only for text, and a column of a million distinct amounts would fill memory)."""
    return Counter(cell_classes(cells)[1].value_counts().to_dict())


def singletons(counts: Counter) -> int:
    """How many text cells hold a value that occurs exactly once (exact: the domain step adds
    the noise)."""
    return sum(1 for count in counts.values() if count == 1)


def decide(noisy: np.ndarray, sigma: float, noisy_singletons: float = 0.0,
           singleton_sigma: float | None = None) -> str:
    """The kind read from one column's noisy class counts (``noisy``, in CLASSES order), their
    noise scale ``sigma`` and its noisy singleton count (scale ``singleton_sigma``, default
    ``sigma``): post-processing only (the module docstring gives the rule). A date/datetime
    decision is returned as its TimeFormat label."""
    counts = dict(zip(CLASSES, np.maximum(np.asarray(noisy, dtype=float), 0.0), strict=True))
    text = sum(counts[c] for c in TEXT_CLASSES)
    numbers = sum(counts[c] for c in NUMBER_CLASSES)
    best = max(TIME_FORMATS, key=lambda f: counts[f.label])
    if counts[best.label] > max(text, numbers):
        return best.label
    if text >= numbers:
        if counts["long text"] > 0 and counts["long text"] >= text / 2:
            return "text"
        unique = max(float(noisy_singletons), 0.0)
        noise = sigma if singleton_sigma is None else singleton_sigma
        if unique > 0 and unique >= NEAR_UNIQUE * text and unique >= SINGLETON_NOISE * noise:
            tokens = counts["token"] > text / 2
            return "id" if tokens and unique >= ID_SHARE * text else "text"
        return "categorical"
    fraction = counts["fraction"]
    if fraction > max(FRACTION_SHARE * numbers, FRACTION_NOISE * sigma):
        return "continuous"
    return "integer"


def decided_column(name: str, kind: str) -> dict:
    """The schema entry of auto column ``name`` decided ``kind``: its domain is then found under
    DP (no bounds, no categories), and cells that do not fit the kind are read as missing. A
    text column is released empty; an id column as fresh keys of the public default format
    (synthpriv.ids: no key is read, so no shape is learnt from the data) and its keys are not
    checked for repeats (a refusal would turn on one row; they are never read)."""
    time_format = next((f for f in TIME_FORMATS if f.label == kind), None)
    if time_format is not None:
        entry = {"name": name, "kind": time_format.kind, "missing": True, "coerce": True}
        if time_format.format is not None:
            entry["format"] = time_format.format
        if time_format.timezone is not None:
            entry["timezone"] = time_format.timezone
        return entry
    if kind == "categorical":
        return {"name": name, "kind": kind, "missing": True, "unknown_categories": "missing"}
    if kind == "text":
        return {"name": name, "kind": "text"}
    if kind == "id":
        return {"name": name, "kind": "id", "missing": True, "refuse_repeats": False}
    return {"name": name, "kind": kind, "missing": True, "coerce": True}

