"""The generator stage: where N and q come from (public or DP, never len(data)), what it records
in the Ledger, the column order from the marginals model, and bad options."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.generators.stage import GeneratorStage, column_order
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.plan import composed_epsilon
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, SubsampledGaussianEvent
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import load_schema
from synthpriv.stage import PipelineState, PlanContext
from synthpriv.table import read_table

from ..conftest import ADULT

FAST = {"epochs": 0.2, "sample_rate": 0.1, "hidden": 8}  # 2 steps


def _state(csv: Path, public_records: int | None = None) -> PipelineState:
    schema = load_schema(ADULT / "schema.yaml")
    encoder = TableEncoder(schema)
    context = PlanContext(encoder.domain, "add_remove", 1e-5, public_records)
    return PipelineState(context, encoder, encoder.encode(read_table(csv, schema)))


def _run(stage_cls, options: dict, state: PipelineState, ledger: Ledger, rho: float = 0.05):
    stage = stage_cls(options, state.context, "test")
    plan = stage.plan(rho)
    stage.run(state, plan, ledger, RandomSource.seeded(11))
    return plan


def test_the_sample_rate_and_divisor_come_from_the_public_count(adult_sample_csv) -> None:
    state, ledger = _state(adult_sample_csv, public_records=10_000), Ledger()
    plan = _run(GeneratorStage, {**FAST, "batch_size": 500, "records_from": "measure"}, state,
                ledger)
    (event,) = ledger.events  # a public count: nothing measured
    assert isinstance(event, SubsampledGaussianEvent)
    assert event.sample_rate == pytest.approx(500 / 10_000)  # not 500 / 2000 rows
    assert event.steps == plan.events[0].steps == 4
    assert state.model.total == 10_000
    assert state.model.expected_batch == pytest.approx(500)


def test_without_a_public_count_n_is_the_marginals_models_dp_estimate(adult_sample_csv) -> None:
    state, ledger = _state(adult_sample_csv), Ledger()
    _run(MarginalsStage, {"selection": "one_way"}, state, ledger)
    marginal_total = state.model.total
    marginal_events = len(ledger.events)
    _run(GeneratorStage, {**FAST, "prior_fraction": 0.5}, state, ledger)
    (event,) = ledger.events[marginal_events:]
    assert isinstance(event, SubsampledGaussianEvent) and event.sample_rate == 0.1
    assert state.model.total == marginal_total != state.data.records
    assert state.model.expected_batch == pytest.approx(0.1 * marginal_total)
    assert state.model.prior is not None and len(state.model.targets) == len(state.data.domain)
    draws = state.model.sample_rounded(400, np.random.default_rng(0))
    assert draws.shape == (400, len(state.data.domain))


def test_alone_it_measures_a_noisy_count_and_records_it(adult_sample_csv) -> None:
    state, ledger = _state(adult_sample_csv), Ledger()
    plan = _run(GeneratorStage, {**FAST, "records_from": "measure"}, state, ledger)
    count, training = ledger.events
    assert isinstance(count, DiscreteGaussianEvent) and count.label == "record count"
    assert count.noise_multiplier == pytest.approx(plan.noise["sigma_count"])
    assert isinstance(training, SubsampledGaussianEvent) and training.steps == 2
    assert ledger.epsilon(1e-5) == pytest.approx(composed_epsilon(plan.events, 1e-5, "add_remove"))
    assert abs(state.model.total - 2000) < 6 * plan.noise["sigma_count"]
    draws = state.model.sample_rounded(300, np.random.default_rng(0))
    assert draws.shape == (300, len(state.data.domain))
    assert np.all(draws < np.array(state.data.domain.shape))


def test_the_plan_is_monotone_in_rho(adult_sample_csv) -> None:
    stage = GeneratorStage({}, _state(adult_sample_csv).context, "test")
    low, high = stage.plan(0.01), stage.plan(0.1)
    assert low.noise["noise_multiplier"] > high.noise["noise_multiplier"]
    assert low.events[-1].steps == high.events[-1].steps == 400  # ⌈20 epochs / 0.05⌉


def test_the_column_order_follows_the_marginals_junction_tree(adult_sample_csv) -> None:
    state, ledger = _state(adult_sample_csv), Ledger()
    _run(MarginalsStage, {"selection": "mst", "iterations": 20}, state, ledger)
    domain, tree = state.data.domain, state.model.tree
    order = [domain.attributes[j] for j in column_order(domain, state.model)]
    assert sorted(order) == sorted(domain.attributes)
    for i, clique in enumerate(tree.cliques):
        separator = tree.separator[i]
        for new in (a for a in clique if a not in separator):
            assert all(order.index(s) < order.index(new) for s in separator)
    assert column_order(domain, None) == list(range(len(domain)))


def test_bad_setups_fail_with_a_clear_error(adult_sample_csv) -> None:
    state = _state(adult_sample_csv)
    with pytest.raises(ConfigError, match="public record count"):
        GeneratorStage({"batch_size": 100}, state.context, "test").plan(0.1)
    with pytest.raises(ConfigError, match="marginals stage"):
        _run(GeneratorStage, FAST, state, Ledger())
    with pytest.raises(ConfigError, match="unknown key 'epoch'"):
        GeneratorStage({"epoch": 3}, state.context, "test")


def test_rows_beyond_the_memory_limit_are_refused(adult_sample_csv) -> None:
    """N̂ = 2,000 rows × 14 modelled columns are held as one byte per cell: 0.027 MiB, above a
    0.01 MiB limit."""
    state = _state(adult_sample_csv, public_records=2000)
    with pytest.raises(ConfigError, match=r"about 0.0267 MiB .* above max_memory_mb = 0.01"):
        _run(GeneratorStage, {**FAST, "max_memory_mb": 0.01}, state, Ledger())
    _run(GeneratorStage, {**FAST, "max_memory_mb": 0.05}, state, Ledger())  # fits: trains


def test_memory_refusal_reads_the_public_or_dp_count_not_the_rows(adult_sample_csv) -> None:
    """Whether the stage refuses must not depend on the realised row count (privacy review,
    issue 12, item 4): with N̂ = 100,000 public rows the estimate is 1.34 MiB and the stage
    refuses, although the 2,000 rows held would fit in 0.05 MiB."""
    state = _state(adult_sample_csv, public_records=100_000)
    with pytest.raises(ConfigError, match=r"about 1.34 MiB .* = 100000 rows"):
        _run(GeneratorStage, {**FAST, "max_memory_mb": 0.05}, state, Ledger())


def test_a_conditional_generator_completes_the_marginals_models_rows(adult_sample_csv) -> None:
    state, ledger = _state(adult_sample_csv), Ledger()
    _run(MarginalsStage, {"selection": "one_way"}, state, ledger)
    marginal_events = len(ledger.events)
    _run(GeneratorStage, {**FAST, "complete": ["income"]}, state, ledger)
    (event,) = ledger.events[marginal_events:]
    assert isinstance(event, SubsampledGaussianEvent)
    network, domain = state.model.network, state.data.domain
    assert network.given == len(domain) - 1
    assert [domain.attributes[j] for j in network.order[network.given:]] == ["income"]
    assert state.model.prior is not None
    draws = state.model.sample_rounded(500, np.random.default_rng(0))
    assert draws.shape == (500, len(domain)) and np.all(draws < np.array(domain.shape))


@pytest.mark.parametrize(("complete", "message"), [
    (["salary"], r"complete names \['salary'\], not modelled columns of the schema"),
    (["education-num"], r"\['education-num'\], not modelled .* derived_from"),
    (None, "complete lists every column"),
])
def test_a_bad_complete_list_is_refused_when_planning(adult_sample_csv, complete, message) -> None:
    """At plan time, before any stage reads the data (the plan of the whole job comes first)."""
    state = _state(adult_sample_csv)
    complete = complete or list(state.data.domain.attributes)
    stage = GeneratorStage({**FAST, "complete": complete}, state.context, "test")
    with pytest.raises(ConfigError, match=message):
        stage.plan(0.05)


def test_a_conditional_generator_needs_a_marginals_stage(adult_sample_csv) -> None:
    state = _state(adult_sample_csv, public_records=2000)
    with pytest.raises(ConfigError, match="complete needs a marginals stage"):
        _run(GeneratorStage, {**FAST, "complete": ["income"]}, state, Ledger())
