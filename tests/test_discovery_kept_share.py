"""After the run, where DP discovery lost most of a column (issue 24 item 3): the share of an auto
column's non-empty cells its kept values hold, estimated from DP outputs only (the kept values'
noisy counts over the noisy kind histogram's total), and the warning when it is below half."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.domain_stage import LOST_MOST, DomainStage, domain_lines
from synthpriv.kinds import CLASSES
from synthpriv.privacy.randomness import RandomSource
from synthpriv.public_lists import list_values
from synthpriv.runner import run_job

ROWS = 2_000


def _table() -> pd.DataFrame:
    """``town``: one value on 30 % of the rows, the other 70 % over 700 values of 2 rows each
    (each far below any threshold); ``colour``: three values of a third each; ``size``: numbers."""
    rng = np.random.default_rng(3)
    rare = [f"town{i}" for i in range(700) for _ in range(2)]
    town = ["Big"] * (ROWS - len(rare)) + rare
    colour = np.array(["red", "green", "blue"])[np.arange(ROWS) % 3]
    return pd.DataFrame({"town": rng.permutation(town), "colour": colour,
                         "size": rng.integers(0, 100, ROWS)})


def _run(folder: Path, seed: int, table: pd.DataFrame | None = None,
         columns: list[dict] | None = None, epsilon: float = 1.0):
    """``table`` (``_table()`` by default: every column auto) through a run of the independent
    recipe; the job, the result and its domain stage."""
    folder.mkdir(parents=True, exist_ok=True)
    (_table() if table is None else table).to_csv(folder / "train.csv", index=False)
    columns = columns or [{"name": n, "kind": "auto"} for n in ("town", "colour", "size")]
    (folder / "schema.yaml").write_text(yaml.safe_dump({"columns": columns}))
    config = {"name": "kept", "data": {"path": "train.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": epsilon, "delta": 1e-6},
              "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(folder / "job.yaml")
    result = run_job(job, source=RandomSource.seeded(seed), evaluate=False, force=True)
    stage = next(s for s, _ in result.planned[1] if isinstance(s, DomainStage))
    return job, result, stage


def test_the_kept_share_is_a_noisy_estimate_and_warns_where_most_is_lost(tmp_path: Path) -> None:
    """town keeps 'Big' (30 % of its cells) and loses the rest; colour keeps all three values.
    The estimates are near the truth yet differ between seeds (noisy counts, never exact ones),
    and only town is named in the warning."""
    estimates = []
    for seed in (1, 2):
        job, result, stage = _run(tmp_path / str(seed), seed)
        assert result.job.schema.column("town").categories == ["Big"]
        assert sorted(result.job.schema.column("colour").categories) == ["blue", "green", "red"]
        shares = stage.kept_shares
        assert set(shares) == {"town", "colour"}  # size was decided numeric: no discovery
        # the estimate's noise: the present total sums len(CLASSES) kind counts at kind σ
        # (~190 rows here), the kept values 3 counts at σ; 3 of those σ below the truth (1.0)
        noise = result.planned[0].stages[0].noise
        spread = np.sqrt(len(CLASSES) * noise["kind_sigma"] ** 2 + 3 * noise["sigma"] ** 2)
        assert abs(shares["town"] - 0.3) < 0.05 and shares["colour"] > 1 - 3 * spread / ROWS
        estimates.append(shares["town"])
        lines = domain_lines(job.schema, result.job.schema, shares)
        warning = [line for line in lines if "DP discovery kept values" in line]
        assert len(warning) == 1 and "of town" in warning[0] and "colour" not in warning[0]
        assert f"holding about {shares['town']:.0%} of its non-empty cells" in "\n".join(lines)
    assert estimates[0] != estimates[1]
    assert LOST_MOST > 0.3  # town (30 % kept) is below the warning line


def test_no_estimate_no_warning(tmp_path: Path) -> None:
    """Without the estimates (a caller that has none) the lines are as before: no share, no
    discovery warning."""
    job, result, _ = _run(tmp_path, 1)
    lines = domain_lines(job.schema, result.job.schema)
    assert not any("DP discovery kept values" in line or "non-empty cells" in line
                   for line in lines)


def test_run_prints_the_estimates(tmp_path: Path, capsys) -> None:
    """`synthpriv run` prints each auto column's kept share and the warning naming town."""
    from synthpriv.cli import main

    _run(tmp_path, 1)  # writes the table, schema and job
    assert main(["run", str(tmp_path / "job.yaml"), "--force"]) == 0
    shown = capsys.readouterr().out
    assert "of its non-empty cells (DP estimate)" in shown
    assert "DP discovery kept values holding less than 50% of the non-empty cells of town" in shown


@pytest.mark.parametrize("big", [0, 800])
def test_an_adopted_list_holds_every_listed_value_not_only_the_discovered_ones(
        tmp_path: Path, big: int) -> None:
    """40 state codes of 35 rows each (every one below the discovery threshold), and CA with
    ``big`` more rows. big = 0: nothing is discovered and the membership test adopts the list;
    big = 800: CA alone is discovered (about 38 % of the cells) and the list is adopted from it.
    Either way the column keeps all 57 codes, so the share its kept values hold is the listed
    values' noisy sum over the noisy total (about 1), not S's (0 or 0.38), and no warning says
    most was lost — as the run said of hhs_breaches' State: "holding about 0 %" and a WARNING."""
    codes = list_values("us_state_code")[:40]
    cells = [c for c in codes for _ in range(35)] + ["CA"] * big
    table = pd.DataFrame({"State": cells, "size": [i % 100 for i in range(len(cells))]})
    columns = [{"name": "State", "kind": "auto", "lists": ["us_state_code"]},
               {"name": "size", "kind": "integer", "lower": 0, "upper": 99}]
    job, result, stage = _run(tmp_path, 1, table, columns, epsilon=0.5)
    state = result.job.schema.column("State")
    assert state.adopted_list is not None and state.adopted_list.name == "us_state_code"
    assert (state.adopted_list.test is None) == (big > 0)
    share = stage.kept_shares["State"]
    if state.adopted_list.test is not None:  # the test's sum is the held count, exactly
        assert share == pytest.approx(min(1.0, state.adopted_list.test.in_list
                                          / stage.present["State"]))
    # the estimate's sd (57 named counts at σ, the kind total) is 0.1–0.2 of these rows: checked
    # against the warning line, which S's share alone (0 or 0.38) is below
    assert share >= LOST_MOST
    lines = domain_lines(job.schema, result.job.schema, stage.kept_shares)
    assert not any("DP discovery kept values" in line for line in lines)
