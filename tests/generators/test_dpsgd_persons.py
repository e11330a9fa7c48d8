"""Person-level DP-SGD (issue 27): neighbouring tables differ by all (≤ k) rows of one person.
Checked against the definition: removing a person moves the summed clipped gradient by ≤ C
(brute force over every person of a small table), a batch holds whole persons drawn by Poisson
sampling over persons from the pipeline's generator, and the stage records q over persons and
measures its record count with sensitivity k. The noise std z·C is measured in
test_dpsgd_noise.py."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np
import pytest
import torch
from scipy import stats
from torch import nn

from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.generators.autoregressive import AutoregressiveModel
from synthpriv.generators.dpsgd import DpSgdSettings, poisson_batch, train_dp_sgd
from synthpriv.generators.persons import PersonRows
from synthpriv.generators.stage import GeneratorStage
from synthpriv.privacy.accountant import Ledger, SubsampledGaussianEvent
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import load_schema
from synthpriv.stage import PipelineState, PlanContext
from synthpriv.table import read_table

from ..conftest import ADULT

K = 3


def _table() -> tuple[np.ndarray, np.ndarray]:
    """Rows of codes over sizes (3, 2, 4) and their persons (≤ K rows each). Persons 0–3 hold
    K identical rows, whose gradients add up: clipping rows one by one at C would let such a
    person move the sum by K·C."""
    rng = np.random.default_rng(0)
    codes, persons = [], []
    for person in range(9):
        if person < 4:
            rows = np.tile([[person % 3, person % 2, person], ], (K, 1))
        else:
            rows = np.column_stack([rng.integers(0, s, person % K + 1) for s in (3, 2, 4)])
        codes += list(rows)
        persons += [person] * len(rows)
    return np.array(codes), np.array(persons)


def _clipped_sum(codes: np.ndarray, persons: np.ndarray, clip: float, clipping: str,
                 model: nn.Module) -> torch.Tensor:
    """The summed clipped gradient of one noiseless step in which every person is sampled
    (q = 1, plain SGD at learning rate 1, divisor 1: the update is minus the sum)."""
    start = torch.cat([p.detach().flatten() for p in model.parameters()])
    settings = DpSgdSettings(sample_rate=1.0, noise_multiplier=0.0, max_grad_norm=clip, steps=1,
                             physical_batch=6, person_clipping=clipping)  # type: ignore[arg-type]
    train_dp_sgd(model, torch.as_tensor(codes), 1.0, settings, np.random.default_rng(0), None,
                 optimizer=torch.optim.SGD(model.parameters(), lr=1.0),
                 persons=PersonRows.from_codes(persons, K, len(codes)))
    return start - torch.cat([p.detach().flatten() for p in model.parameters()])


@pytest.mark.parametrize("clipping", ["person", "rows"])
def test_removing_a_person_moves_the_clipped_sum_by_at_most_c(clipping: str) -> None:
    torch.manual_seed(3)
    model = AutoregressiveModel([3, 2, 4], [2, 0, 1], hidden=4)
    for p in model.parameters():
        nn.init.normal_(p, std=0.5)
    codes, persons = _table()
    clip = 0.05  # below every person's gradient norm: the bound binds
    full = _clipped_sum(codes, persons, clip, clipping, _copy(model))
    moves = []
    for person in np.unique(persons):
        kept = persons != person
        moves.append((full - _clipped_sum(codes[kept], persons[kept], clip, clipping,
                                          _copy(model))).norm().item())
    assert max(moves) <= clip * (1 + 1e-4), (
        f"removing one person (≤ {K} rows) moved the summed clipped gradient by "
        f"{max(moves):.4g} > C = {clip} ({clipping} clipping): the noise z·C does not cover it")
    assert max(moves[:4]) >= 0.99 * clip  # the bound is reached: a looser clipping would show


def _copy(model: nn.Module) -> nn.Module:
    clone = AutoregressiveModel(model.sizes, model.order, hidden=4)
    clone.load_state_dict(model.state_dict())
    return clone


def test_without_clipping_a_person_step_sums_its_rows_gradients() -> None:
    """Persons as Opacus samples (padded (persons, k, columns) blocks, padding masked): with C
    out of reach the update is the plain gradient sum over the rows, padding adding nothing."""
    torch.manual_seed(4)
    model = AutoregressiveModel([3, 2, 4], [2, 0, 1], hidden=4)
    for p in model.parameters():
        nn.init.normal_(p, std=0.5)
    codes, persons = _table()
    huge = 1e6
    unclipped = _clipped_sum(codes, persons, huge, "person", _copy(model))
    row_sum = torch.zeros_like(unclipped)
    for i in range(len(codes)):  # each row alone, unclipped
        row_sum += _clipped_sum(codes[i:i + 1], np.zeros(1, int), huge, "person", _copy(model))
    assert torch.allclose(unclipped, row_sum, atol=1e-5)  # no clipping: plain gradient sum


def test_batches_hold_whole_persons_sampled_at_rate_q_from_the_given_generator() -> None:
    rng = np.random.default_rng(5)
    persons = np.repeat(np.arange(60), rng.integers(1, K + 1, 60))  # 60 persons, 1–3 rows each
    codes = torch.as_tensor(rng.integers(0, 2, (len(persons), 2)))
    q, steps = 0.2, 15
    model = AutoregressiveModel([2, 2], [0, 1], hidden=2)
    settings = DpSgdSettings(q, noise_multiplier=1.0, max_grad_norm=1.0, steps=steps,
                             physical_batch=12)  # several micro-batches of whole persons
    grouping = PersonRows.from_codes(persons, K, len(persons))
    log = train_dp_sgd(model, codes, q * len(persons), settings, np.random.default_rng(6),
                       torch.Generator().manual_seed(7), persons=grouping, keep_batches=True)
    assert log.steps == steps and len(log.batches) == steps
    rows_per_person = np.bincount(persons)
    sampled = []
    for block in log.batches:
        rows = block[block >= 0]
        assert len(rows) == len(set(rows.tolist()))
        in_batch = np.bincount(persons[rows], minlength=60)
        present = in_batch > 0
        assert np.array_equal(in_batch[present], rows_per_person[present]), (
            "a batch holds only some rows of a sampled person: sampling is not by person")
        sampled.append(int(present.sum()))
    # persons per step ~ Binomial(60, q): the total within 5 standard deviations
    total, mean = sum(sampled), 60 * q * steps
    assert abs(total - mean) <= 5 * np.sqrt(60 * q * (1 - q) * steps)
    replay = np.random.default_rng(6)  # the generator handed in (the pipeline's) draws them
    for block in log.batches:
        assert np.array_equal(block, grouping.members[poisson_batch(60, q, replay)])


def test_person_rows_refuse_an_unbounded_person_and_a_wrong_shape() -> None:
    grouping = PersonRows.from_codes(np.array([7, 3, 7, 9]), 2, 4)
    assert grouping.persons == 3
    assert sorted(map(sorted, (r[r >= 0].tolist() for r in grouping.members))) == [
        [0, 2], [1], [3]]
    with pytest.raises(ValueError, match="more than rows_per_person = 2"):
        PersonRows.from_codes(np.array([1, 1, 1, 2]), 2, 4)
    with pytest.raises(ValueError, match="one integer per encoded row"):
        PersonRows.from_codes(np.array([1, 2]), 2, 4)


def _person_state(csv: Path, k: int = K) -> PipelineState:
    schema = load_schema(ADULT / "schema.yaml")
    encoder = TableEncoder(schema)
    context = PlanContext(encoder.domain, "add_remove", 1e-5, rows_per_person=k)
    data = encoder.encode(read_table(csv, schema))
    persons = np.random.default_rng(8).permutation(np.arange(data.records) // k)
    return PipelineState(context, encoder, data, person_codes=persons)


FAST = {"epochs": 0.2, "sample_rate": 0.1, "hidden": 8, "records_from": "measure"}  # 2 steps


def test_the_stage_records_q_over_persons_and_a_count_of_sensitivity_k(
    adult_sample_csv,
) -> None:
    state, ledger = _person_state(adult_sample_csv), Ledger()
    stage = GeneratorStage(FAST, state.context, "test")
    plan = stage.plan(0.05)
    stage.run(state, plan, ledger, RandomSource.seeded(11))
    count, training = ledger.events
    assert isinstance(training, SubsampledGaussianEvent)
    assert training.sample_rate == 0.1 and training.steps == 2  # q is the share of persons
    draws = state.model.sample(50, np.random.default_rng(0))
    assert draws.shape == (50, len(state.data.domain))
    # the count's noise, measured: std = z·k (a person moves the count by ≤ k), z = the event's
    noisy = np.array([stage._records(state, plan, Ledger(), RandomSource.seeded(seed))
                      for seed in range(300)])
    expected = count.noise_multiplier * K
    ratio = float(np.mean((noisy - state.data.records) ** 2)) / expected**2
    low, high = stats.chi2(len(noisy)).ppf([1e-4, 1 - 1e-4]) / len(noisy)
    assert low < ratio < high, (
        f"the noisy record count's variance is {ratio:.3f}× (z·k)²; a person moves it by k")


def test_person_level_refuses_batch_size_and_half_wired_inputs(adult_sample_csv) -> None:
    state = _person_state(adult_sample_csv)
    context = dataclasses.replace(state.context, public_records=2000)
    with pytest.raises(ConfigError, match="set sample_rate"):
        GeneratorStage({**FAST, "batch_size": 100}, context, "test").plan(0.05)
    state.person_codes = None
    stage = GeneratorStage(FAST, state.context, "test")
    with pytest.raises(ConfigError, match="person codes"):
        stage.run(state, stage.plan(0.05), Ledger(), RandomSource.seeded(1))
