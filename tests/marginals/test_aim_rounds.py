"""AIM's plan refuses a round count that cannot hold its first 1-way measurements (found while
writing the privacy mutation suite: aim_max_rounds below α·d made the zCDP filter refuse the
first measurements mid-run, an internal error after reading the table)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

DOMAIN = Domain.from_sizes({"a": 2, "b": 3, "c": 2, "d": 2})


def _stage(rounds: int, alpha: float = 0.9) -> MarginalsStage:
    return MarginalsStage({"selection": "aim", "aim_max_rounds": rounds,
                           "aim_gaussian_fraction": alpha, "iterations": 5,
                           "aim_round_iterations": 5}, PlanContext(DOMAIN, "add_remove", 1e-6),
                          "test")


def test_too_few_rounds_for_the_one_way_marginals_are_refused_at_plan_time() -> None:
    with pytest.raises(ConfigError, match="at least 4 rounds"):
        _stage(3).plan(0.5)


@pytest.mark.parametrize(("rounds", "alpha"), [(4, 0.9), (1, 0.02)])
def test_the_fewest_rounds_allowed_run_within_the_reserve(rounds: int, alpha: float) -> None:
    stage = _stage(rounds, alpha)
    plan = stage.plan(0.5)
    ledger = Ledger("add_remove")
    schema = parse_schema({"columns": [
        {"name": n, "kind": "categorical", "categories": [str(i) for i in range(s)]}
        for n, s in DOMAIN.to_dict().items()]}, "test")
    state = PipelineState(stage.context, TableEncoder(schema),
                          Dataset(np.random.default_rng(0).integers(0, 2, (200, 4)), DOMAIN))
    stage.run(state, plan, ledger, RandomSource.seeded(1))
    assert len(state.measurements) >= len(DOMAIN)
