"""The DP kind decision of an ``auto`` column: categorical, integer, continuous, date/datetime (in
one public format), text or id.

Each cell of an auto column falls in at most one of the public ``CLASSES``: ``token`` (text
without whitespace), ``words`` (text with whitespace, shorter than ``LONG_TEXT`` characters),
``long text`` (with whitespace, ``LONG_TEXT`` characters or more), one ``FRACTION_CLASSES``
class per number of decimals its text writes (a finite number that is not whole, with 1, 2, …,
``DECIMAL_CAP`` decimals, or more: ``synthpriv.decimals.cell_decimals``, the rule the data-read
draft's ``precision`` reads, float artefacts counted as their short form), ``whole`` (a whole
number), or one class per public date/datetime format (``TIME_FORMATS``: the formats
synthpriv.datetimes lists, fixed in code; a cell is in the first one it parses under). Empty
cells and common missing markers (``MISSING_MARKERS``: NA, NaN, null, a dump's NULL, …;
compared without case) fall in none. Besides its class histogram, the domain step counts a
column's ``singletons``: the cells of the text classes whose (stripped) value occurs exactly
once in the column.
It adds discrete Gaussian noise to both; ``decide`` then reads the kind, and ``decide_precision``
a continuous column's ``precision``, from the noisy counts and the public noise scales alone, so
both are post-processing of DP counts.

Sensitivity (named in synthpriv.privacy.domain_budget, the one place a person-level bound k
multiplies them): a row holds one cell per column, and a cell's class is a function of that
cell's text alone (its decimals included), so each cell is in at most one class: adding or
removing a row changes one count of a column's class histogram by 1 (L2 sensitivity 1; √2 under
replace-one), however many classes there are. Splitting the former one ``fraction`` class into
the decimals classes therefore adds no ρ: the histogram is still one release at σ per count.
Adding a row changes the count of one value by 1: from 0 to 1 (one singleton more), from 1 to 2
(one fewer) or otherwise none, so the singleton count moves by at most 1 (2 under replace-one:
one value loses a cell, another gains one). tests/test_kinds.py and tests/test_precision.py
check them by brute force.

The decision rule (constants below; chosen from the noise arithmetic and the data-read draft's
public rules, not tuned on any table). Groups: text = token + words + long text, numbers =
whole + the decimals classes that clear the fraction test below (``number_cells``), and each
date format on its own:
* the date/datetime format with the largest noisy count when it exceeds text, numbers and
  ``time_noise``·σ (cells in another format are then read as missing);
* else, when text ≥ numbers (ties and nothing above the noise included):
  - ``text`` when long text is at least half the text (sentences: categories they are not);
  - near-unique when the noisy singletons are at least ``NEAR_UNIQUE`` of the noisy text and
    ``SINGLETON_NOISE``·σ: most values occur once, so categories cannot model the column (DP
    discovery would drop every one of them). Then ``id`` when tokens are the majority of the text
    and the singletons at least ``ID_SHARE`` of it (keys: short, distinct, no spaces), else
    ``text``;
  - else ``categorical`` (a column of codes written as numbers reads as integer: declare it
    categorical where that is public knowledge);
* else continuous when some decimals class's noisy count clears ``fraction_noise``·σ (one
  count's σ, not the sum's; the others read as 0: ``number_cells``), whatever share of the
  numbers it holds: a cleared class is real fractions (a noise-only one clears it with
  probability ≤ KIND_ERROR a run), and an integer decision would round them away (OJ
  ``DiscMM``'s 0.4s; the former 5 % share rule did so to a column of integers with a few
  hundred fractions);
* else integer (fractions within the noise, if any, are rounded).

Why a date format must clear ``time_noise``·σ (branch kinds): the decision takes the largest of
len(TIME_FORMATS) noisy counts, and on a small table the largest of ~30 noise-only counts
(≈ 2σ) beat a column's numbers held within a few σ: statsmodels macrodata (203 rows at kind
σ 77) had most of its 14 number columns decided a date or datetime in most draws
(benchmarks/README.md, "kinds"). z = Φ⁻¹(1 − KIND_ERROR / (columns · formats)) bounds the chance
that any noise-only format of any auto column is decided by KIND_ERROR per run, as the decimals
test does; a real date column then needs z·σ cells in its format (≈ 4σ–4.6σ) to be found.

Why one class at z·σ with z from the number of auto columns (``fraction_noise``, as
``time_noise``: ``class_noise``): a column with
no fraction at all holds pure noise in each of its len(FRACTION_CLASSES) decimals classes, and a
run tests every auto column, so a fixed 3σ (the former rule: Φ(−3) ≈ 0.13 % per column) made a
run of College's 16 integer columns release one of them with decimals in ~3 % of runs (measured:
6 of 200 draws of its kind step; benchmarks/README.md, "precision"). z = Φ⁻¹(1 − ``KIND_ERROR``
/ (columns · classes)) bounds the chance that any noise-only decimals class of any auto column
clears it by ``KIND_ERROR`` per run (union bound), whatever the number of columns (public).
Real decimals concentrate in one class (the column's precision; shorter cells are the rarer
trailing zeros), so testing each class at one count's σ detects them at z·σ rows where the sum
of the classes would need z·σ·√(DECIMAL_CAP + 1).

Faint columns (``faint_peaks``): on a small table the kind σ is tens of rows (Hitters, 322 rows and
20 columns at ε = 1: σ ≈ 93; statsmodels star98, 303 × 22: σ ≈ 97) and a column's cells, all in one
class, may clear neither the decimals bar nor stand clear of the clipped text noise: the rule above
then read a column of 6-decimal fractions as "nothing above the noise" → categorical, and DP
discovery released it all missing (star98: 17 of 22 columns blank in one run; macrodata, grunfeld,
Publication alike), and an integer column lost to the text classes' clipped noise (three counts of
E[max(N, 0)] ≈ 0.4σ each) in ~7 % of draws (Hitters). When no text or number class clears z·σ but
some count is positive, the cells are read as sitting in one class: the likeliest is the largest
count, each group's peak first lessened by the expected maximum of its noise-only classes (0.85σ for
the 3 text classes, 1.42σ for the 8 number classes, 1.35σ for the 7 decimals classes against whole:
a group with more classes shows a higher peak from noise alone). Whole or fractions, once numbers
won (``fractions_likelier``, branch smallkinds): the likelier of "all n cells whole" and "all in one
decimals class", even prior between the two, n the largest number count; the column is then
continuous at the peak class's decimals. The former test (the decimals peak less 1.35σ must beat
whole) read a faint fraction column as integers in ~1 draw of 5 (statsmodels ``tbilrate`` 199 cells
of 2 decimals at σ 77.7: 2.82 released as 3; star98 ``PTRATIO`` released at 20, 21, 22, 23):
fractions must now beat whole by σ·log 7/(n/σ), 0.75σ at n = 2.6σ. Over 1,000 draws a column at each
table's kind σ (benchmarks/README.md "smallkinds"): number columns read integer macrodata 0.18 →
0.10, star98 0.26 → 0.21, grunfeld 0.13 → 0.06, Publication 0.27 → 0.19; integer columns read
continuous Hitters 0.001 → 0.006, macrodata 0.015 → 0.035, and ~0.1 more on tables under 100 rows,
where either reading is mostly noise. The faint rule itself, measured over 1,000 draws a column at
each table's own kind σ (benchmarks/faint_kinds.py; benchmarks/README.md "faint"): columns read as
what their cells are, star98 0.08 → 0.69, macrodata 0.16 → 0.74, grunfeld 0.52 → 0.88, Publication
0.71 → 0.89, Hitters 0.90 → 0.94; number columns read as text (released all missing) Hitters 0.073 →
0.007, Boston 0.049 → 0.001. The price: text columns of a few hundred cells read as numbers more
often (Hitters 0.002 → 0.035; a 64-row one-column table, NCI60labs, 0.006 → 0.070). Tables whose
classes clear the bar (College, OJ, anes96, Smarket…) decide as before. Arithmetic from the class
counts, not tuned on a table.

Precision (``decide_precision``): the largest d whose decimals class clears the same z·σ;
``None`` (full float precision, as before) when the class of more than DECIMAL_CAP decimals
clears it. Costs: too few decimals merges distinct values (the released grid loses resolution),
too many releases decimals no cell has (College's one-decimal ratios released as 14.556). A class above
the column's true precision holds pure noise, so the second error is bounded by the same
KIND_ERROR per run; the first needs the true top class below z·σ plus its noise, i.e. a column
whose most precise cells are few (within ~(z + 2)·σ rows): their values are then rounded to the
precision most cells have.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from functools import cache
from statistics import NormalDist

import numpy as np
import pandas as pd

from synthpriv.datetimes import (
    COMPACT_DATE,
    DATE_FORMATS,
    DATETIME_FORMATS,
    ISO_ZONED,
    compact_dates,
)
from synthpriv.decimals import cell_decimals

# backslash-N (compared as backslash-n): the NULL of MySQL and PostgreSQL text dumps
MISSING_MARKERS = frozenset({"na", "n/a", "nan", "null", "none", "?", "-", ".", "...", "\\n"})
# per run: the chance that a noise-only decimals class of any auto column clears the test (an
# integer column decided continuous, or a decimal released that no cell has), union bound
KIND_ERROR = 1e-3  # as the DP bounds' false buckets (privacy.bounds.FALSE_OCCUPANCY)
DECIMAL_CAP = 6  # decimals classes 1..DECIMAL_CAP, then one for more (public, fixed in code)
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
        if self.format == COMPACT_DATE:
            return compact_dates(cells)
        stamps = pd.to_datetime(cells, format=self.format, errors="coerce")
        return stamps.notna().to_numpy()


TIME_FORMATS: tuple[TimeFormat, ...] = (
    TimeFormat("datetime ISO 8601 with zone", "datetime", None, ZONE),
    *(TimeFormat(f"datetime {f}", "datetime", f) for f in DATETIME_FORMATS),
    *(TimeFormat(f"date {f}", "date", f) for f in DATE_FORMATS),
    # compact dates (19580329) read as whole numbers: ``cell_classes`` takes them from ``whole``
    TimeFormat(f"date {COMPACT_DATE}", "date", COMPACT_DATE),
)
COMPACT = TIME_FORMATS[-1]
TEXT_CLASSES = ("token", "words", "long text")
FRACTION_CLASSES = (*(f"{d} decimal{'s' * (d > 1)}" for d in range(1, DECIMAL_CAP + 1)),
                    f"more than {DECIMAL_CAP} decimals")
NUMBER_CLASSES = (*FRACTION_CLASSES, "whole")
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
    for label, count in fraction_counts(text[finite & ~whole]).items():
        counts[label] = count
    compact = whole & compact_dates(text)  # a compact date is in its own class, not whole
    counts["whole"], counts[COMPACT.label] = int((whole & ~compact).sum()), int(compact.sum())
    rest = text[~finite]
    timed = np.zeros(len(rest), dtype=bool)
    left = np.flatnonzero((rest.str.contains(r"\d") & (rest.str.len() <= _MAX_TIME_CHARS))
                          .to_numpy(dtype=bool))
    for time_format in TIME_FORMATS[:-1]:  # each cell in the first format it parses under
        # (COMPACT, last, is counted above from the whole numbers)
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


def fraction_class(cell: str) -> str:
    """The decimals class of one fraction cell (stripped text of a finite number that is not
    whole): its decimals (``cell_decimals``, at least 1: a fraction writes one), capped into
    the last class. A function of the cell alone (sensitivity: module docstring)."""
    places = max(cell_decimals(cell) or 1, 1)
    return FRACTION_CLASSES[min(places, len(FRACTION_CLASSES)) - 1]


def fraction_counts(fractions: pd.Series) -> dict[str, int]:
    """How many of ``fractions`` (stripped text of non-whole finite numbers) fall in each of
    FRACTION_CLASSES: each distinct text classed once, its cells counted."""
    counts = dict.fromkeys(FRACTION_CLASSES, 0)
    for cell, count in fractions.value_counts().items():
        counts[fraction_class(cell)] += int(count)
    return counts


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


def class_noise(columns: int, classes: int) -> float:
    """The multiple z of one count's σ that one of ``classes`` classes must clear, tested in
    each of ``columns`` auto columns: the chance that any noise-only class of any column clears
    it is at most KIND_ERROR (union bound, with the Gaussian tail: the discrete Gaussian's is
    the same to close approximation at the kind step's σ, tens of rows). Public: the number of
    auto columns and of classes only."""
    tests = max(int(columns), 1) * max(int(classes), 1)
    return NormalDist().inv_cdf(1.0 - KIND_ERROR / tests)


def fraction_noise(columns: int) -> float:
    """The z a decimals class must clear (module docstring): ``class_noise`` over the
    len(FRACTION_CLASSES) decimals classes of each of ``columns`` auto columns."""
    return class_noise(columns, len(FRACTION_CLASSES))


def time_noise(columns: int) -> float:
    """The z a date/datetime format's class must clear to be decided (module docstring):
    ``class_noise`` over the len(TIME_FORMATS) formats of each of ``columns`` auto columns, the
    decision taking the largest of them."""
    return class_noise(columns, len(TIME_FORMATS))


def cleared_decimals(noisy: np.ndarray, sigma: float, columns: int = 1) -> list[int]:
    """The indexes (0 for 1 decimal, …, DECIMAL_CAP for more) of the decimals classes whose noisy
    count (``noisy``: the class histogram in CLASSES order, σ ``sigma`` per count) clears
    ``fraction_noise(columns)``·σ; in a faint column (``faint_peaks``) whose peaks read
    fractions, the largest decimals class alone. Post-processing only."""
    counts = dict(zip(CLASSES, np.asarray(noisy, dtype=float), strict=True))
    bar = fraction_noise(columns) * sigma
    cleared = [i for i, label in enumerate(FRACTION_CLASSES) if counts[label] > bar]
    peaks = faint_peaks(noisy, sigma, columns)
    if peaks is not None and peaks[0] == "fractions":
        return [peaks[1]]
    return cleared


@cache
def expected_maximum(classes: int) -> float:
    """E[max of ``classes`` independent standard normals] (0 for one): how far the largest of that
    many noise-only counts sits above zero, in σ (∫ x·k·φ(x)·Φ(x)^(k−1) dx as a Riemann
    sum). Public arithmetic."""
    if classes <= 1:
        return 0.0
    grid = np.linspace(-12.0, 12.0, 24001)
    cdf = 0.5 * (1.0 + np.array([math.erf(x / math.sqrt(2.0)) for x in grid]))
    pdf = np.exp(-grid**2 / 2.0) / math.sqrt(2.0 * math.pi)
    density = classes * pdf * cdf ** (classes - 1)
    return float(np.sum(grid * density) * (grid[1] - grid[0]))


def faint_peaks(noisy: np.ndarray, sigma: float, columns: int = 1) -> tuple[str, int] | None:
    """A faint column's reading (a small table: no text or number class clears
    ``fraction_noise(columns)``·σ, yet some holds a positive noisy count): ``("text", i)``,
    ``("whole", -1)`` or ``("fractions", i)`` (i: the peak class's index in TEXT_CLASSES or
    FRACTION_CLASSES); None when the column is not faint. Its cells are taken to sit in one
    class, the likeliest given the counts (module docstring, "faint columns"): each group's
    peak less the expected maximum of its noise-only classes (``expected_maximum``; 3 text, 8
    number classes); numbers then read as fractions when ``fractions_likelier``. A
    function of the noisy counts and public sizes: post-processing only."""
    raw = dict(zip(CLASSES, np.asarray(noisy, dtype=float), strict=True))
    tested = (*TEXT_CLASSES, *NUMBER_CLASSES)
    bar = fraction_noise(columns) * sigma
    if any(raw[c] > bar for c in tested) or not any(raw[c] > 0 for c in tested):
        return None
    text = max(range(len(TEXT_CLASSES)), key=lambda i: raw[TEXT_CLASSES[i]])
    decimals = max(range(len(FRACTION_CLASSES)), key=lambda i: raw[FRACTION_CLASSES[i]])
    text_score = raw[TEXT_CLASSES[text]] - expected_maximum(len(TEXT_CLASSES)) * sigma
    fraction_score = (raw[FRACTION_CLASSES[decimals]]
                      - expected_maximum(len(FRACTION_CLASSES)) * sigma)
    number_score = max(raw["whole"], fraction_score) + (
        expected_maximum(len(FRACTION_CLASSES)) - expected_maximum(len(NUMBER_CLASSES))) * sigma
    if text_score >= number_score:
        return ("text", text)
    fractions = fractions_likelier(raw["whole"], [raw[c] for c in FRACTION_CLASSES], sigma)
    return ("fractions", decimals) if fractions else ("whole", -1)


def fractions_likelier(whole: float, decimals: list[float], sigma: float) -> bool:
    """A faint number column (``faint_peaks``): whether its cells are likelier fractions than
    whole numbers, given the noisy count ``whole`` of its whole class and ``decimals`` of its
    decimals classes (σ ``sigma`` each). Its n cells sit in one class, n read as the largest of
    these counts (at least 0); each hypothesis (all in whole; all in decimals class d) has
    likelihood ratio exp((n·x − n²/2)/σ²) against "no cells" for x its class's count, and the
    prior is even between whole and fractions, fractions spread evenly over the
    len(FRACTION_CLASSES) classes (a public, untuned choice: either error costs a column, an
    integer one released with decimals or a fraction one rounded to whole: statsmodels
    ``tbilrate`` 2.82 → 3, star98 ``PTRATIO`` fake spikes at 20, 21, 22). Fractions when
    log Σ_d exp(n·x_d/σ²) − log len(FRACTION_CLASSES) > n·x_whole/σ²: with one class holding
    the cells, when its count beats whole by σ·log 7/(n/σ) (0.75σ at n = 2.6σ) rather than the
    fixed E[max of 7] = 1.35σ the former rule took (module docstring, "faint columns"). A
    function of the noisy counts and public sizes: post-processing only."""
    counts = np.asarray(decimals, dtype=float)
    n = max(float(whole), float(counts.max()), 0.0)
    scaled = n * counts / sigma**2
    top = float(scaled.max())
    mixed = top + math.log(float(np.exp(scaled - top).sum())) - math.log(len(counts))
    return mixed > n * float(whole) / sigma**2


def number_cells(noisy: np.ndarray, sigma: float, columns: int = 1) -> tuple[float, float]:
    """The noisy count of a column's number cells and its σ: whole (clipped at 0) plus the
    decimals classes that clear ``fraction_noise(columns)``·σ (``cleared_decimals``), the others
    read as 0 (noise-only classes clear it with probability ≤ KIND_ERROR a run). Summed whole,
    the DECIMAL_CAP + 1 classes would carry σ·√(DECIMAL_CAP + 2) and, clipped one by one, ~2.8σ
    of noise-only fractions: a continuous column then lost its numbers to a noisy date format
    or text in 6 of 200 College draws. Post-processing only."""
    counts = np.asarray(noisy, dtype=float)
    kept = [counts[CLASSES.index(FRACTION_CLASSES[i])] for i in cleared_decimals(counts, sigma,
                                                                                 columns)]
    whole = max(float(counts[CLASSES.index("whole")]), 0.0)
    return whole + float(sum(kept)), sigma * math.sqrt(1 + len(kept))


def decide(noisy: np.ndarray, sigma: float, noisy_singletons: float = 0.0,
           singleton_sigma: float | None = None, columns: int = 1) -> str:
    """The kind read from one column's noisy class counts (``noisy``, in CLASSES order), their
    noise scale ``sigma`` and its noisy singleton count (scale ``singleton_sigma``, default
    ``sigma``); ``columns``: the run's number of auto columns (public; ``fraction_noise``).
    Post-processing only (the module docstring gives the rule). A date/datetime decision is
    returned as its TimeFormat label."""
    raw = dict(zip(CLASSES, np.asarray(noisy, dtype=float), strict=True))
    counts = {label: max(count, 0.0) for label, count in raw.items()}
    text = sum(counts[c] for c in TEXT_CLASSES)
    fractions = number_cells(noisy, sigma, columns)[0] - counts["whole"]
    numbers = fractions + counts["whole"]
    best = max(TIME_FORMATS, key=lambda f: counts[f.label])
    if counts[best.label] > max(text, numbers, time_noise(columns) * sigma):
        return best.label
    peaks = faint_peaks(noisy, sigma, columns)
    if (text >= numbers) if peaks is None else (peaks[0] == "text"):
        if counts["long text"] > 0 and counts["long text"] >= text / 2:
            return "text"
        unique = max(float(noisy_singletons), 0.0)
        noise = sigma if singleton_sigma is None else singleton_sigma
        if unique > 0 and unique >= NEAR_UNIQUE * text and unique >= SINGLETON_NOISE * noise:
            tokens = counts["token"] > text / 2
            return "id" if tokens and unique >= ID_SHARE * text else "text"
        return "categorical"
    if fractions > 0:  # some decimals class cleared its noise: real fractions, not rounded
        return "continuous"
    return "integer"


def decide_precision(noisy: np.ndarray, sigma: float, columns: int = 1) -> int | None:
    """A column decided continuous: the decimals its values are released with, the largest d
    whose decimals class clears ``fraction_noise(columns)``·σ (``cleared_decimals``); None (full
    float precision) when the class of more than DECIMAL_CAP decimals clears it, or none does.
    Post-processing of the noisy class counts only (module docstring: the rule and its costs)."""
    cleared = cleared_decimals(noisy, sigma, columns)
    if not cleared or cleared[-1] == DECIMAL_CAP:
        return None
    return cleared[-1] + 1


def decided_column(name: str, kind: str, precision: int | None = None) -> dict:
    """The schema entry of auto column ``name`` decided ``kind``: its domain is then found under
    DP (no bounds, no categories), and cells that do not fit the kind are read as missing. A
    text column is released empty; an id column as fresh keys of the public default format
    (synthpriv.ids: no key is read, so no shape is learnt from the data) and its keys are not
    checked for repeats (a refusal would turn on one row; they are never read). A continuous
    column carries its ``precision`` (``decide_precision``: a DP output) when one is decided."""
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
    entry = {"name": name, "kind": kind, "missing": True, "coerce": True}
    if kind == "continuous" and precision is not None:
        entry["precision"] = precision
    return entry

