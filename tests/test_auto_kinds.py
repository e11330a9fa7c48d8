"""Dates, free text and ids decided under DP (issue 24): an ``auto`` column becomes date/datetime
in one public format, text, or id from noisy class counts and a noisy singleton count only."""

from __future__ import annotations

import itertools
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv import Synthesizer, domain_stage
from synthpriv.config import load_job
from synthpriv.kinds import CLASSES, class_counts, decide, singletons, value_counts
from synthpriv.pipeline import plan_job
from synthpriv.privacy.accountant import DiscreteGaussianEvent
from synthpriv.privacy.domain_budget import KIND_NOISE_FACTOR, singleton_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import DatetimeColumn, IdColumn, TextColumn
from tests.test_kinds import _job, assert_class_sensitivity_one

ISO = "date %Y-%m-%d"
SLASH = "datetime %Y/%m/%d %H:%M:%S"


def noisy(**counts: float) -> np.ndarray:
    """A noisy class histogram in CLASSES order; keys are class labels with '_' for ' '."""
    given = {label.replace("_", " "): count for label, count in counts.items()}
    return np.array([given.get(c, 0.0) for c in CLASSES])


def dated(label: str, count: float, **counts: float) -> np.ndarray:
    histogram = noisy(**counts)
    histogram[CLASSES.index(label)] = count
    return histogram


@pytest.mark.parametrize(("histogram", "unique", "kind"), [
    (dated(ISO, 400, token=10, whole=5), 0, ISO),           # dates are the noisy majority
    (dated(SLASH, 300, whole=200, token=50), 0, SLASH),
    (dated(ISO, 100, token=100), 0, "categorical"),         # a tie is not a majority
    (dated(ISO, 100, whole=150), 0, "integer"),
    (noisy(long_text=300, words=50, token=40), 0, "text"),  # sentences, even if they repeat
    (noisy(long_text=100, words=150, token=100), 0, "categorical"),
    (noisy(token=500), 480, "id"),                          # distinct tokens: keys
    (noisy(token=500), 300, "text"),                        # mostly distinct: not categories
    (noisy(words=500), 490, "text"),                        # distinct names with spaces
    (noisy(token=500), 100, "categorical"),
    (noisy(token=20), 20, "categorical"),                   # singletons within 3σ of 0
    (noisy(token=500, whole=600), 500, "integer"),          # numbers first: unchanged rule
])
def test_the_decision_rule_for_dates_text_and_ids(histogram: np.ndarray, unique: float,
                                                   kind: str) -> None:
    assert decide(histogram, 10.0, unique, 10.0) == kind


def test_dates_and_long_text_keep_the_class_histogram_at_sensitivity_one() -> None:
    """Brute force over neighbours of a column mixing every class: a row added or removed moves
    the histogram by 0 or 1 in L2, replace-one by at most √2 (each cell is in one class)."""
    column = pd.Series(["2021-03-04", "2021/03/04 10:00:00", "03/04/2021", "25/12/2020",
                        "2021-03-04T10:00:00+01:00", "a b", "w " * 30, "K7", "1", "2.5", "NA"])
    candidates = ["", "2020-01-01", "2020-01-01 00:00:00", "12/31/2020", "x y", "z " * 40,
                  "tok", "3", "0.5", "2020-13-45"]
    assert_class_sensitivity_one(column, candidates)


def test_a_dump_null_is_missing_and_sentences_are_long_text() -> None:
    """``\\N`` (a SQL dump's NULL) is a missing marker, not a token; a sentence with spaces of
    LONG_TEXT characters or more is long text, a short label with spaces is words."""
    cells = pd.Series(["\\N", "\\N", "\\n", "Network Server", "A laptop with the records of "
                       "1,272 people was stolen from a car.", "Theft"])
    counts = dict(zip(CLASSES, class_counts(cells).tolist(), strict=True))
    assert {c: n for c, n in counts.items() if n} == {"token": 1, "words": 1, "long text": 1}


def _singletons(column: pd.Series) -> int:
    return singletons(value_counts(column))


def test_the_singleton_count_has_the_sensitivity_the_budget_states_by_brute_force() -> None:
    """Every neighbour of a column with singletons, pairs and a triple (a row removed; a new
    value, a singleton's or a pair's value added; every replacement) moves the count of cells
    whose value occurs once by at most ``singleton_sensitivity``, and some move by exactly it."""
    column = pd.Series(["a", "b", "b", "c", "c", "c", "d", "", "NA", " a2 "])
    candidates = ["a", "b", "c", "d", "new", "", "NA", "a2"]
    base = _singletons(column)
    added = [abs(_singletons(pd.concat([column, pd.Series([c])], ignore_index=True)) - base)
             for c in candidates]
    removed = [abs(_singletons(column.drop(index=i)) - base) for i in range(len(column))]
    assert max(added + removed) == singleton_sensitivity("add_remove") == 1
    replaced = [abs(_singletons(column.where(column.index != i, c)) - base)
                for i in range(len(column)) for c in candidates]
    assert max(replaced) == singleton_sensitivity("replace_one") == 2


@pytest.mark.parametrize("k", [2, 3])
def test_the_singleton_count_per_person_moves_by_at_most_k_by_brute_force(k: int) -> None:
    """data.person: adding or removing one person's k rows (any values, repeats allowed) moves
    the singleton count by at most ``singleton_sensitivity(.., k)`` = k, and some person moves it
    by exactly k; replacing one person by another, by at most 2k."""
    column = ["a", "b", "b", "c", "c", "c", "d", "e"]
    values = ["a", "b", "c", "new", "new2", "new3"]

    def count(cells: list[str]) -> int:
        return singletons(Counter(cells))

    base = count(column)
    persons = [list(rows) for rows in itertools.product(values, repeat=k)]
    outs = [set(out) for out in itertools.combinations(range(len(column)), k)]
    kept = [[cell for i, cell in enumerate(column) if i not in out] for out in outs]
    added = [abs(count(column + rows) - base) for rows in persons]
    removed = [abs(count(rest) - base) for rest in kept]
    assert max(added + removed) == singleton_sensitivity("add_remove", k) == k
    replaced = [abs(count(rest + rows) - base) for rest in kept for rows in persons]
    assert max(replaced) <= singleton_sensitivity("replace_one", k) == 2 * k


def _forced(monkeypatch, histogram: np.ndarray, unique: float) -> list[tuple]:
    """Every noisy class histogram the domain step draws becomes ``histogram`` and every noisy
    singleton count ``unique``; records (exact input, σ) of both."""
    calls: list[tuple] = []
    real = domain_stage.discrete_gaussian_histogram

    def wrapped(counts, sigma, source):
        out = real(counts, sigma, source)
        if np.shape(counts) == (len(CLASSES),):
            calls.append(("classes", np.array(counts), sigma))
            return histogram.copy()
        if np.shape(counts) == (1,):
            calls.append(("singletons", int(counts[0]), sigma))
            return np.array([unique])
        return out

    monkeypatch.setattr(domain_stage, "discrete_gaussian_histogram", wrapped)
    return calls


def _table(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    days = pd.Timestamp("2019-01-01") + pd.to_timedelta(rng.integers(0, 900, rows), unit="D")
    seconds = pd.Timestamp("2016-01-01") + pd.to_timedelta(rng.integers(0, 10**8, rows), unit="s")
    sentences = np.array([f"The covered entity reported a theft of {k} laptops from a locked "
                          "office; it notified everyone affected." for k in range(5)])
    return pd.DataFrame({
        "when": days.strftime("%Y-%m-%d"),
        "stamp": seconds.strftime("%Y/%m/%d %H:%M:%S"),
        "note": rng.choice(sentences, rows),
        "key": [f"K{i:06d}x" for i in rng.permutation(rows)],
        "amount": rng.integers(0, 500, rows),
    })


@pytest.mark.parametrize(("histogram", "unique", "kind", "expected"), [
    (dated(ISO, 10_000), 0, "date", DatetimeColumn),
    (dated(SLASH, 10_000), 0, "datetime", DatetimeColumn),
    (noisy(long_text=10_000), 0, "text", TextColumn),
    (noisy(token=10_000), 10_000, "id", IdColumn),
])
def test_the_kind_follows_the_noisy_output_whatever_the_cells(
        tmp_path: Path, monkeypatch, histogram: np.ndarray, unique: float, kind: str,
        expected: type) -> None:
    """Post-processing: forced noisy counts decide every column alike, whatever it holds; the
    exact inputs were the columns' class counts and singleton counts, at the planned σ (the
    amounts are declared: a release needs one modelled column)."""
    path = _job(tmp_path, _table())
    schema_path = tmp_path / "job-schema.yaml"
    raw = yaml.safe_load(schema_path.read_text())
    raw["columns"][-1] = {"name": "amount", "kind": "integer", "lower": 0, "upper": 500}
    schema_path.write_text(yaml.safe_dump(raw))
    job = load_job(path)
    plan, stages = plan_job(job)
    calls = _forced(monkeypatch, histogram, unique)
    decided = stages[0][0]._decide_kinds(job, plan.stages[0], RandomSource.seeded(1), None)
    auto = decided.columns[:-1]
    assert all(isinstance(c, expected) and c.kind == kind for c in auto)
    if kind == "datetime":
        assert {c.format for c in auto} == {"%Y/%m/%d %H:%M:%S"}
    if kind == "id":
        assert not any(c.refuse_repeats for c in auto)
    table = pd.read_csv(tmp_path / "job.csv", dtype=str, keep_default_na=False)
    z = plan.stages[0].noise["noise_multiplier"]
    assert [(c[1].tolist(), c[2]) for c in calls if c[0] == "classes"] == [
        (class_counts(table[n]).tolist(), pytest.approx(KIND_NOISE_FACTOR * z))
        for n in job.schema.auto]
    assert [(c[1], c[2]) for c in calls if c[0] == "singletons"] == [
        (_singletons(table[n]), pytest.approx(KIND_NOISE_FACTOR * z)) for n in job.schema.auto]


def test_dates_text_and_ids_end_to_end(tmp_path: Path) -> None:
    """The safe path on a table of dates, timestamps, repeated sentences, keys (one repeated)
    and amounts: kinds decided under DP (clear at ε = 1 with 1,500 rows); dates released in
    their own format within the DP bounds, text empty, keys fresh and distinct; the ledger holds
    the singleton counts' event.

    Seeded: unseeded, its kinds assertion failed once in 26 runs, and at 2 of 361 seeds here
    (17, and one of 100-400), each time ``amount`` (whole numbers, no fraction) decided
    continuous because the noisy fraction count passed 3σ (seed 17: 122 against 3 × 40.3): the
    rule's stated false rate then (Φ(−3) ≈ 0.13 % an integer column a run; over those 301 seeds the
    noisy fraction / σ had mean −0.01 and sd 0.98, the noise as planned), not a defect. Since
    branch precision the rule bounds it at kinds.KIND_ERROR = 0.1 % a run (all columns). Seed 1
    since then: the larger class histogram (decimals classes) moved seed 0's draws, where
    ``key`` read as text (its id margin here, 1,498 singletons against 0.9 × the noisy text, is
    ~1.9 σ: a few % of seeds), not a kind-rule change."""
    table = _table(1500)
    table.loc[1, "key"] = table.loc[0, "key"]  # a repeat: an id decided under DP must not refuse
    schema = {"columns": [{"name": name, "kind": "auto"} for name in table.columns]}
    synth = Synthesizer(schema, epsilon=1.0, delta=1e-6, recipe="independent",
                        seed=1).fit(table)
    resolved = synth._fitted.synthesis.job.schema
    assert {c.name: c.kind for c in resolved.columns} == {
        "when": "date", "stamp": "datetime", "note": "text", "key": "id", "amount": "integer"}
    released = synth.synthetic
    for name in ("when", "stamp"):
        column = resolved.column(name)
        cells = released[name].dropna()
        assert len(cells) > 1000
        parsed = pd.to_datetime(cells, format=column.format)  # raises if one is not in format
        numbers = (parsed - pd.Timestamp("1970-01-01")) / pd.Timedelta(
            days=1 if name == "when" else 0, seconds=0 if name == "when" else 1)
        assert numbers.min() >= column.lower and numbers.max() <= column.upper
    assert released["note"].isna().all()
    keys = released["key"].tolist()
    assert len(set(keys)) == len(keys) and not set(keys) & set(table["key"])
    labels = [e.label for e in synth._fitted.synthesis.ledger.events
              if isinstance(e, DiscreteGaussianEvent)]
    assert any("singleton counts" in label for label in labels)


def test_year_buckets_partition_the_time_line_and_bound_a_date_column_by_years() -> None:
    """Each value (days or seconds) falls in the one bucket whose range holds it, the buckets
    tile the line without gaps, and a 2019–2021 date column's DP range is whole years around
    its data (octaves of days since 1970 gave 2014–2059)."""
    from synthpriv.privacy.bounds import YearBuckets, bounds_from_noisy

    rng = np.random.default_rng(3)
    for kind, scale in (("date", 1.0), ("datetime", 86400.0)):
        buckets = YearBuckets(kind)
        ranges = [buckets.value_range(b) for b in range(buckets.size)]
        assert all(high + 1 == nxt for (_, high), (nxt, _) in zip(ranges, ranges[1:], strict=False))
        values = np.floor(rng.uniform(-80_000, 80_000, 2000) * scale)  # 1750–2189
        for value, bucket in zip(values, buckets.index(values), strict=True):
            low, high = ranges[bucket]
            assert low <= value <= high
    days = (pd.to_datetime(_table(3000)["when"]) - pd.Timestamp("1970-01-01")).dt.days
    buckets = YearBuckets("date")
    counts = buckets.counts(days.to_numpy(dtype=float))
    lower, upper = bounds_from_noisy(counts + rng.normal(0, 10, counts.size), 10.0, buckets)
    first, last = (pd.Timestamp("1970-01-01") + pd.to_timedelta([lower, upper], unit="D"))
    assert first.year >= 2018 and last.year <= 2022 and (first.month, first.day) == (1, 1)
