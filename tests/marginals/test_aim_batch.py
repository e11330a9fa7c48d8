"""A wide table under the default recipe (issue 24: "both drafts run on the first try on every
table"): 500 tiny columns, 40 rows. AIM's 400 default rounds cannot hold 500 1-way marginals as
rounds (α·d = 450), so it measures them as one batch of MST's 1-way share of its ρ
(``settings.one_way_batch``) and its rounds share the rest. Before: refused at plan time. The
batch's noise is measured from the outputs (noisy minus true counts), not read from the plan."""

from __future__ import annotations

import math

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.settings import ONE_WAY_MOST
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger, zcdp_rho
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import parse_schema
from synthpriv.stage import PipelineState, PlanContext

COLUMNS, ROWS, RHO = 500, 40, 0.5
DOMAIN = Domain.from_sizes({f"c{i}": 2 for i in range(COLUMNS)})


def _stage(options: dict | None = None) -> MarginalsStage:
    return MarginalsStage({"selection": "aim", **(options or {})},
                          PlanContext(DOMAIN, "add_remove", 1e-6), "wide")


def test_the_default_plan_of_500_columns_states_the_one_way_batch() -> None:
    plan = _stage().plan(RHO)
    assert plan.noise["max_rounds"] == 400
    assert plan.noise["one_way_batch_share"] == pytest.approx(ONE_WAY_MOST)
    # d measurements sharing ρ/3: z = √(d / (2ρ/3)), sensitivity 1 under add/remove
    assert plan.noise["sigma_first_rounds"] == pytest.approx(
        math.sqrt(COLUMNS / (2 * RHO * ONE_WAY_MOST)), rel=1e-9)


def test_500_columns_run_with_the_batch_noise_measured_from_the_outputs() -> None:
    """Fewer workload marginals and fit iterations than the default, for time only: the batch
    and the rounds are the default's."""
    stage = _stage({"iterations": 5, "aim_round_iterations": 5, "aim_max_workload": 100})
    plan = stage.plan(RHO)
    schema = parse_schema({"columns": [
        {"name": n, "kind": "categorical", "categories": ["0", "1"]} for n in DOMAIN.attributes]},
        "wide")
    codes = np.random.default_rng(0).integers(0, 2, (ROWS, COLUMNS))
    state = PipelineState(stage.context, TableEncoder(schema), Dataset(codes, DOMAIN))
    ledger = Ledger("add_remove")
    stage.run(state, plan, ledger, RandomSource.seeded(3))
    one_way = state.measurements[:COLUMNS]
    assert [m.clique for m in one_way] == [(a,) for a in DOMAIN.attributes]
    truth = np.stack([np.bincount(codes[:, i], minlength=2) for i in range(COLUMNS)])
    noise = np.stack([m.noisy_counts for m in one_way]) - truth
    sigma = plan.noise["sigma_first_rounds"]  # 38.7; the rounds' own would be 21.1
    # 1,000 cells: the sample sd's s.e. is σ/√2000 ≈ 2.2 %
    assert abs(noise.std() / sigma - 1) < 0.08 and abs(noise.mean()) < 4 * sigma / math.sqrt(1000)
    (aim,) = ledger.filters
    assert sum(zcdp_rho(e) for e in aim.events[:COLUMNS]) == pytest.approx(RHO / 3, rel=1e-9)
    assert len(state.measurements) > COLUMNS and aim.spent == pytest.approx(RHO, rel=1e-9)
