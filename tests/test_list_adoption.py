"""A public code list adopted from the DP-discovered categories (``lists:`` on a column;
synthpriv.list_adoption): the decision is a function of the released set S only, the column
then takes the whole list, and no noisy count of a list member below the threshold is released."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.domain_stage import domain_lines
from synthpriv.list_adoption import MIN_DISCOVERED, adopted_list
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


def _resolve(folder: Path, table: pd.DataFrame, column: dict, seed: int = 3):
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / "train.csv", index=False)
    schema = {"columns": [column, {"name": "n", "kind": "integer", "lower": 0, "upper": 600}]}
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {"name": "lists", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 4.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
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
