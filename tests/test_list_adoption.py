"""A public code list adopted from the DP-discovered categories (``lists:`` on a column;
synthpriv.list_adoption): the decision is a function of the released set S only, the column
then takes the whole list, and no noisy count of a list member below the threshold is released."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.domain_stage import domain_lines
from synthpriv.list_adoption import MEMBERSHIP_Z, MIN_DISCOVERED, adopted_list, list_decision, membership
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.public_lists import list_values
from synthpriv.schema import parse_schema

STATES = ["CA", "NY", "TX", "FL", "WA"]
LISTS = ["us_state_name", "us_state_code"]  # the names first: the codes must be found second


def test_the_first_candidate_holding_every_discovered_value_is_adopted() -> None:
    assert adopted_list(STATES, LISTS) == "us_state_code"
    assert adopted_list(["California", "Texas", "Ohio"], LISTS) == "us_state_name"
    assert adopted_list(STATES + ["ZZ"], LISTS) is None  # one value outside: no list
    assert adopted_list(STATES[:MIN_DISCOVERED - 1], LISTS) is None  # too few to tell
    assert adopted_list(STATES[:MIN_DISCOVERED], LISTS) == "us_state_code"
    assert adopted_list(STATES + ["Other"], LISTS, other="Other") == "us_state_code"
    assert adopted_list(STATES, []) is None
    assert adopted_list(["CA"], LISTS) == "us_state_code"  # one code tells the form (hhs: 0-2 kept)
    assert adopted_list(["Other"], LISTS, other="Other") is None  # the other label tells nothing


def _table(rare: str | None) -> pd.DataFrame:
    """100 rows in each of five states, and one row of ``rare`` (a value outside the list:
    far below any threshold)."""
    cells = [s for s in STATES for _ in range(100)] + ([rare] if rare else [])
    return pd.DataFrame({"State": cells, "n": range(len(cells))})


def _resolve(folder: Path, table: pd.DataFrame, column: dict, seed: int = 3,
             epsilon: float = 4.0):
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "train.csv", index=False)
    schema = {"columns": [column, {"name": "n", "kind": "integer", "lower": 0, "upper": 600}]}
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "lists", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": epsilon, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(folder / "job.yaml")
    planned = plan_job(job)
    resolved, _ = resolve_domain(job, planned, Ledger(job.config.budget.neighbouring),
                                 RandomSource.seeded(seed), [table])
    return job, resolved


@pytest.mark.parametrize("kind", [{"kind": "auto"}, {"kind": "categorical", "missing": True}])
def test_the_list_is_adopted_from_s_not_from_the_cells(tmp_path: Path, kind: dict) -> None:
    """A table with one row of 'ZZ' (outside the list, below the threshold) and its neighbour
    without it: S is the five states in both, so both adopt us_state_code — deciding from the
    real distinct values would refuse the first (the planted bug 'list-adopted-from-raw-cells')."""
    column = {"name": "State", **kind, "lists": LISTS}
    decisions = []
    for rare in ("ZZ", None):
        job, resolved = _resolve(tmp_path / str(rare), _table(rare), column)
        state = resolved.schema.column("State")
        assert state.categories == list_values("us_state_code")
        assert state.adopted_list.name == "us_state_code" and state.adopted_list.discovered == 5
        assert state.unknown_categories == "missing" and state.kept_rows is None
        # noisy counts only for S; none for a list member below the threshold (GU, AK, …)
        counted = {c for c, k in zip(state.categories, state.kept_counts, strict=True) if k}
        assert counted == set(STATES)
        lines = "\n".join(domain_lines(job.schema, resolved.schema))
        assert "State: categorical" in lines and (
            f"5 discovered categories, all in us_state_code: categories = its "
            f"{len(list_values('us_state_code'))} values") in lines
        decisions.append((state.categories, state.adopted_list))
    assert decisions[0] == decisions[1]


def test_without_lists_or_outside_every_list_discovery_is_unchanged(tmp_path: Path) -> None:
    """No ``lists``: the discovered values as before. Values written otherwise ('Calif.'):
    no list holds S, so the column keeps S and no adopted_list."""
    _, plain = _resolve(tmp_path / "plain", _table(None),
                        {"name": "State", "kind": "categorical", "missing": True})
    assert sorted(plain.schema.column("State").categories) == sorted(STATES)
    table = _table(None).replace({"CA": "Calif."})
    _, other = _resolve(tmp_path / "other", table,
                        {"name": "State", "kind": "categorical", "missing": True, "lists": LISTS})
    state = other.schema.column("State")
    assert "Calif." in state.categories and len(state.categories) == 5
    assert state.adopted_list is None and state.kept_rows is not None


def test_unknown_list_names_are_refused_with_the_known_ones() -> None:
    with pytest.raises(Exception, match="did you mean us_state_code"):
        parse_schema({"columns": [{"name": "s", "kind": "auto", "lists": ["us_state_cod"]}]},
                     "t")


def test_the_plan_states_that_the_domain_is_conditional(tmp_path: Path) -> None:
    """``synthpriv plan`` reads no data: it names the column, its lists and their sizes."""
    from synthpriv.plan_warnings import domain_messages

    _, _ = _resolve(tmp_path, _table(None), {"name": "State", "kind": "auto", "lists": LISTS})
    job = load_job(tmp_path / "job.yaml")
    texts = [text for _, text in domain_messages(job, plan_job(job)[0])]
    [note] = [text for text in texts if "conditional on DP discovery" in text]
    assert f"us_state_code ({len(list_values('us_state_code'))} values)" in note
    assert "State:" in note and str(MIN_DISCOVERED) in note
    assert "when discovery keeps none" in note and f"{MEMBERSHIP_Z:g} σ·√(list size)" in note


# --- the membership test (S empty: the in-list noisy sum against its bar) ---------------------

CODES = list_values("us_state_code")


def test_the_membership_test_is_the_sum_of_the_listed_noisy_counts_at_sigma_root_l() -> None:
    """M_L = Σ of L's noisy counts (each at σ; L2 sensitivity 1 per row, the histogram's): σ_L =
    σ·√|L| and the bar MEMBERSHIP_Z·σ_L (definition)."""
    noisy = {code: 2 for code in CODES} | {"Calif.": 500}  # a value outside L is not summed
    test = membership("us_state_code", noisy, 10.0)
    assert test.in_list == 2 * len(CODES)
    assert test.sigma == pytest.approx(10.0 * len(CODES) ** 0.5)
    assert test.bar == pytest.approx(MEMBERSHIP_Z * test.sigma) and not test.passed
    assert membership("us_state_code", {c: 20 for c in CODES}, 10.0).passed  # 1140 ≥ 3·75.5


def test_an_empty_s_adopts_only_when_the_test_passes_and_a_kept_value_keeps_todays_rule() -> None:
    high, low = {c: 30 for c in CODES}, {c: 0 for c in CODES}
    name, test = list_decision([], ["us_state_code"], high, 10.0)
    assert name == "us_state_code" and test is not None and test.passed
    assert list_decision([], ["us_state_code"], low, 10.0) == (None, None)
    assert list_decision([], [], {}, 10.0) == (None, None)  # no lists: nothing to test
    # S non-empty: today's rule (S ⊆ L), no test, whatever the in-list sum
    assert list_decision(["CA"], ["us_state_code"], low, 10.0) == ("us_state_code", None)
    assert list_decision(["ZZ"], ["us_state_code"], high, 10.0) == (None, None)


EPSILON = 0.5  # discovery T = 126 rows at σ ≈ 23 (95 at σ ≈ 18 for an auto column): 30 never pass


def _rare_states(copies: int) -> pd.DataFrame:
    """``copies`` rows of each of 40 state codes: every state below the threshold (S empty)."""
    cells = [s for s in CODES[:40] for _ in range(copies)]
    return pd.DataFrame({"State": cells, "n": [i % 600 for i in range(len(cells))]})


@pytest.mark.parametrize("kind", [{"kind": "auto"}, {"kind": "categorical", "missing": True}])
def test_rare_states_adopt_the_list_from_the_noisy_in_list_sum(tmp_path: Path, kind: dict) -> None:
    """No state passes the threshold, so S is empty; the membership test adopts us_state_code.
    Over seeds, the released M_L scatters around the exact in-list count with sd σ_L (a noisy
    count: reading the exact count, the planted bug 'list-test-without-noise', gives sd 0), the
    manifest's schema carries the test, the domain line says why."""
    table = _rare_states(30)
    figures = []
    for seed in range(12 if kind["kind"] == "categorical" else 2):  # the spread: categorical
        job, resolved = _resolve(tmp_path / str(seed), table,
                                 {"name": "State", **kind, "lists": LISTS}, seed=seed,
                                 epsilon=EPSILON)
        state = resolved.schema.column("State")
        assert state.adopted_list is not None and state.adopted_list.discovered == 0
        test = state.adopted_list.test
        assert test is not None and test.in_list >= test.bar
        assert state.categories[:len(CODES)] == CODES
        figures.append((test.in_list, test.sigma))
    lines = "\n".join(domain_lines(job.schema, resolved.schema))
    assert "no category discovered; membership test" in lines
    if len(figures) < 12:
        return
    sigma_l = figures[0][1]
    spread = float(np.std([f for f, _ in figures], ddof=1))
    # 12 draws: the sample sd lies within [0.5, 1.6]·σ_L with probability > 0.99 (χ² with 11 df)
    assert 0.5 * sigma_l <= spread <= 1.6 * sigma_l
    assert abs(np.mean([f for f, _ in figures]) - len(table)) <= 4 * sigma_l / 12 ** 0.5


def test_the_membership_test_costs_no_budget_and_a_listless_column_keeps_its_draws(
        tmp_path: Path) -> None:
    """The same ledger events and plan figures with and without ``lists`` (the listed values are
    named candidates of the discovery histogram: no ρ, no δ); a column holding no listed value
    (S empty, M_L ≈ 0) adopts nothing and stays all missing, as a column without lists does."""
    table = _rare_states(30).replace({c: c.lower() + "x" for c in CODES})  # no value in any list
    events, planned = [], []
    for lists in (LISTS, None):
        folder = tmp_path / str(bool(lists))
        job, resolved = _resolve(folder, table, {"name": "State", "kind": "categorical",
                                                 "missing": True, "lists": lists},
                                 epsilon=EPSILON)
        ledger = Ledger(job.config.budget.neighbouring)
        plan = plan_job(job)
        resolve_domain(job, plan, ledger, RandomSource.seeded(3), [table])
        events.append([repr(e) for e in ledger.events])
        planned.append(plan[0].stages[0].noise)
        state = resolved.schema.column("State")
        assert state.adopted_list is None and state.categories == []
    assert events[0] == events[1] and planned[0] == planned[1]
