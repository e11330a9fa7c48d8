"""The declared precision on the private path (issue 24 item 4): the kind histogram's decimals
classes (synthpriv.kinds), the precision decided from their noisy counts, and the release that
rounds to it; integer columns stay integers (missing cells blank)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import binom, norm

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.decimals import cell_decimals, decimals
from synthpriv.domain_stage import precision_within
from synthpriv.errors import SchemaError
from synthpriv.kinds import (
    CLASSES,
    DECIMAL_CAP,
    FRACTION_CLASSES,
    KIND_ERROR,
    class_counts,
    decide,
    decide_precision,
    fraction_class,
    fraction_noise,
)
from synthpriv.pipeline import plan_job
from synthpriv.privacy.mechanisms import discrete_gaussian_histogram
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from tests.test_kinds import _job, assert_class_sensitivity_one

CELLS = ["1.5", "1.50", "2e-3", "3.200000047683716", "0.1234567", "12.345678", "7", "-0.25",
         "x", "", "NA", "1e-9", "2.000001", "0.30000000000000004"]


def test_each_fraction_cell_is_in_the_class_of_the_drafts_decimals() -> None:
    """The decimals classes read a cell as the data-read draft's precision does ('1.50' has 2, a
    float artefact its short form), capped into the last class."""
    assert [fraction_class(c) for c in ("1.5", "1.50", "2e-3", "3.200000047683716",
                                        "0.1234567", "0.30000000000000004")] == [
        "1 decimal", "2 decimals", "3 decimals", "1 decimal", f"more than {DECIMAL_CAP} decimals",
        "1 decimal"]
    for cell in ("1.5", "1.50", "2e-3", "12.345678", "2.000001", "-0.25", "1e-9"):
        places = decimals(pd.Series([cell]))
        assert places == cell_decimals(cell)
        assert fraction_class(cell) == FRACTION_CLASSES[min(places, DECIMAL_CAP + 1) - 1]


def test_the_decimals_classes_keep_sensitivity_one_by_brute_force() -> None:
    """Every neighbour of a column holding every decimals class (a row removed, one of many cells
    added) moves the refined class histogram by exactly 0 or 1 in L2; replace-one by at most √2:
    splitting the fraction class adds no ρ."""
    column = pd.Series(CELLS)
    candidates = ["0.5", "0.55", "0.555", "1e-7", "3.200000047683716", "1.10", "4", "", "w"]
    counts = class_counts(column)
    assert sum(counts[CLASSES.index(label)] for label in FRACTION_CLASSES) == 10
    assert_class_sensitivity_one(column, candidates)


def _exact(whole: int = 0, **decimals_counts: int) -> np.ndarray:
    """Exact class counts: ``whole`` whole numbers and, per ``d<k>``, cells of k decimals
    (``more`` for more than DECIMAL_CAP)."""
    counts = dict.fromkeys(CLASSES, 0) | {"whole": whole}
    for key, count in decimals_counts.items():
        index = DECIMAL_CAP if key == "more" else int(key[1:]) - 1
        counts[FRACTION_CLASSES[index]] = count
    return np.array([counts[c] for c in CLASSES], dtype=np.int64)


def _decisions(exact: np.ndarray, sigma: float, draws: int, columns: int = 1) -> list:
    """(kind, precision) over ``draws`` seeded noisy draws of ``exact`` at ``sigma``."""
    noisy = discrete_gaussian_histogram(np.tile(exact, draws), sigma, RandomSource.seeded(11))
    rows = noisy.reshape(draws, len(CLASSES))
    return [(decide(r, sigma, columns=columns), decide_precision(r, sigma, columns))
            for r in rows]


def test_the_rule_on_noisy_counts_meets_its_stated_rates() -> None:
    """Seeded draws, tolerances from theory (binomial, 6 sd's worth): an integer column (pure
    noise in every decimals class) is read continuous in at most KIND_ERROR/columns of draws per
    column; a column whose d-decimal class holds (z + 2)σ cells is read continuous with precision
    d in at least Φ(2) of them, and with more decimals than it has in at most KIND_ERROR of them
    (noise-only classes above clear z·σ at the same bounded rate)."""
    sigma, draws, columns = 10.0, 4000, 1
    z = fraction_noise(columns)
    assert z == pytest.approx(norm.isf(KIND_ERROR / len(FRACTION_CLASSES)))
    integer = _decisions(_exact(whole=5000), sigma, draws, columns)
    false = sum(kind == "continuous" for kind, _ in integer)
    assert false <= binom.isf(1e-9, draws, KIND_ERROR)  # ≤ 14 of 4000 at 0.1 %
    for places in (1, 2, DECIMAL_CAP):
        count = math.ceil((z + 2) * sigma)
        decided = _decisions(_exact(whole=count // 10, **{f"d{places}": count}), sigma, draws)
        hits = sum(d == ("continuous", places) for d in decided)
        assert hits >= binom.ppf(1e-9, draws, norm.cdf(2) - KIND_ERROR)
        extra = sum(p is not None and p > places for _, p in decided)
        assert extra <= binom.isf(1e-9, draws, KIND_ERROR)
    more = _decisions(_exact(more=400, d2=40), sigma, 200)
    assert {d for d in more} == {("continuous", None)}  # more than DECIMAL_CAP: full precision


def _boundary_table(rows: int, at_bar: int, seed: int = 0) -> pd.DataFrame:
    """One auto column: ``rows`` cells of 1 decimal and ``at_bar`` cells of 2 decimals, as text."""
    rng = np.random.default_rng(seed)
    one = [f"{v:.1f}" for v in rng.integers(10, 990, rows) / 10 + 0.1]
    one = [c if not c.endswith(".0") else c[:-1] + "5" for c in one]
    two = [f"{v:.2f}" for v in rng.integers(1000, 9900, at_bar) / 100]
    two = [c if not c.endswith("0") else c[:-1] + "5" for c in two]
    return pd.DataFrame({"x": rng.permutation(one + two)})


def test_the_precision_reads_the_noisy_decimals_classes_of_the_domain_step(tmp_path: Path) -> None:
    """Behavioural, through the domain step itself: a column whose 2-decimals class holds its
    bar z·σ (rounded) is decided precision 2 in about half of the seeded draws and 1 in the
    rest (the noise decides; binomial tolerance), so the decision reads the noisy counts. Read
    from the exact counts (a planted bug), it is the same every draw."""
    probe = load_job(_job(tmp_path / "probe", _boundary_table(50, 5), epsilon=4.0))
    plan, _ = plan_job(probe)
    sigma = plan.stages[0].noise["kind_sigma"]
    bar = fraction_noise(len(probe.schema.auto)) * sigma
    assert plan.stages[0].noise["decimals_bar"] == pytest.approx(bar)  # the plan states it
    job = load_job(_job(tmp_path / "real", _boundary_table(3000, round(bar)), epsilon=4.0))
    plan, stages = plan_job(job)
    stage, stage_plan = stages[0][0], plan.stages[0]
    assert stage_plan.noise["kind_sigma"] == pytest.approx(sigma)
    chunks = [pd.read_csv(job.data_path, dtype=str, keep_default_na=False)]
    draws = 300
    precisions = [stage._decide_kinds(job, stage_plan, RandomSource.seeded(seed),
                                      chunks).column("x").precision for seed in range(draws)]
    assert set(precisions) <= {1, 2}
    # P(noise > bar − round(bar)) is ½ within 0.5/(σ√(2π)) (σ ≥ 5 here)
    assert sigma >= 5
    low, high = binom.ppf(1e-6, draws, 0.45), binom.isf(1e-6, draws, 0.55)
    assert low <= precisions.count(2) <= high


def test_a_released_column_keeps_its_decimals_and_integers_their_blanks(tmp_path: Path,
                                                                        capsys) -> None:
    """Round trip on the safe draft (every column auto): a column of 1-decimal cells is released
    with at most 1 decimal (the precision decided under DP, in the manifest's schema), an
    integer column with missing cells as whole numbers written without decimals, and blanks."""
    rng = np.random.default_rng(4)
    rows = 1500
    count = rng.integers(0, 400, rows).astype(object)
    count[rng.random(rows) < 0.2] = ""
    table = pd.DataFrame({"ratio": [f"{v:.1f}" for v in rng.normal(14, 4, rows).clip(2, 40)],
                          "count": count, "city": rng.choice(["Lyon", "Nice"], rows)})
    config = _job(tmp_path, table, recipe="independent", seed=0)
    assert main(["run", str(config)]) == 0
    assert "released with 1 decimal\n" in capsys.readouterr().out  # the report says so
    out = tmp_path / "out" / "job"
    schema = {c["name"]: c for c in json.loads((out / "manifest.json").read_text())["schema"][
        "columns"]}
    assert schema["ratio"]["kind"] == "continuous" and schema["ratio"]["precision"] == 1
    assert schema["count"]["kind"] == "integer"
    released = pd.read_csv(out / "synthetic.csv", dtype=str, keep_default_na=False)
    ratio = released["ratio"][released["ratio"] != ""]
    assert len(ratio) > 1000 and max(cell_decimals(c) for c in ratio) <= 1
    assert ratio.map(cell_decimals).eq(1).mean() > 0.5  # not rounded to whole numbers
    cells = released["count"]
    assert (cells == "").sum() > 20  # blanks released (20 % of the real cells are)
    assert cells[cells != ""].str.fullmatch(r"-?\d+").all()  # '12', never '12.0'


def test_a_decided_precision_is_raised_until_a_value_fits_its_bounds() -> None:
    """The schema refuses a precision no value within the bounds has (a refusal that would turn
    on the data): the decided one is raised until the schema accepts it (post-processing), and
    never raised when it fits already."""
    assert precision_within(1, 2.5, 39.8) == 1
    assert precision_within(1, 0.01, 0.05) == 2
    for decided, lower, upper in ((1, 0.01, 0.05), (2, 0.011, 0.0111), (1, 0.123, 0.1234)):
        places = precision_within(decided, lower, upper)
        assert places > decided
        entries = [{"columns": [{"name": "x", "kind": "continuous", "lower": lower,
                                 "upper": upper, "precision": p}]} for p in (places, places - 1)]
        assert parse_schema(entries[0], "test").column("x").precision == places
        with pytest.raises(SchemaError, match="no value with"):
            parse_schema(entries[1], "test")


def test_a_run_of_many_integer_columns_reads_one_continuous_at_most_at_the_stated_rate() -> None:
    """The cause of College's integer columns released with decimals: a per-column test over
    many columns. Over seeded runs of 20 auto columns with no fraction at all, on a small table
    (100 rows at σ = 10, as College's 622 at σ = 78: the 5 % share is below the noise test, so
    only the noise test stands), the share of runs where any column is read continuous stays
    within KIND_ERROR (binomial tolerance). The former rule, 3σ on one fraction class, failed it
    (~20 × 0.13 % ≈ 2.6 % of runs); 3σ on each decimals class would fail it worse (285 of these
    2,000 runs, measured with ``fraction_noise`` patched to 3)."""
    sigma, runs, columns = 10.0, 2000, 20
    exact = np.tile(_exact(whole=100), runs * columns)
    noisy = discrete_gaussian_histogram(exact, sigma, RandomSource.seeded(23))
    rows = noisy.reshape(runs, columns, len(CLASSES))
    hit = [any(decide(column, sigma, columns=columns) == "continuous" for column in run)
           for run in rows]
    assert sum(hit) <= binom.isf(1e-9, runs, KIND_ERROR)  # ≤ 12 of 2000
