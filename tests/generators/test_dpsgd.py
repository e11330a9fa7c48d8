"""DP-SGD against its definition: parity with SGD without noise or clipping, per-sample clipping,
Poisson batch sizes, and one optimiser step per recorded step."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import torch
from scipy import stats
from torch import nn

from synthpriv.generators.autoregressive import AutoregressiveModel
from synthpriv.generators.dpsgd import (
    DpSgdSettings,
    dp_step,
    make_private,
    poisson_batch,
    train_dp_sgd,
)


class Regression(nn.Module):
    """Per-row squared error of a linear model: rows are (x1, x2, x3, y)."""

    def __init__(self) -> None:
        super().__init__()
        self.linear = nn.Linear(3, 1)

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        return 0.5 * (self.linear(rows[:, :3]).squeeze(1) - rows[:, 3]) ** 2


def _flat(model: nn.Module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def _one_dp_sgd_step(model: nn.Module, rows: torch.Tensor, batch: np.ndarray, clip: float,
                     expected: float, physical: int) -> torch.Tensor:
    """Parameters after one noiseless DP-SGD step (plain SGD, lr 1) on ``batch``."""
    wrapped, optimizer = make_private(model, torch.optim.SGD(model.parameters(), lr=1.0),
                                      noise_multiplier=0.0, max_grad_norm=clip,
                                      expected_batch=expected)
    dp_step(wrapped, optimizer, rows, batch, physical)
    wrapped.to_standard_module()
    return _flat(model)


def test_without_noise_or_clipping_the_update_equals_plain_sgd() -> None:
    torch.manual_seed(0)
    model = AutoregressiveModel([5, 3, 4, 2], [2, 0, 3, 1], hidden=8)
    for p in model.parameters():  # leave the zero initialisation: every layer gets a gradient
        nn.init.normal_(p, std=0.3)
    codes = torch.as_tensor(np.random.default_rng(1).integers(0, 2, (60, 4)))
    batch = np.array([3, 7, 8, 20, 21, 22, 40, 59, 2])
    plain = copy.deepcopy(model)
    start = _flat(model)
    after_dp = _one_dp_sgd_step(model, codes, batch, clip=1e9, expected=12.5, physical=4)

    optimizer = torch.optim.SGD(plain.parameters(), lr=1.0)
    (plain(codes[torch.as_tensor(batch)]).sum() / 12.5).backward()
    optimizer.step()
    assert torch.allclose(after_dp, _flat(plain), atol=1e-6)
    assert (after_dp - start).abs().max() > 1e-3  # the step moved the parameters


def test_every_per_sample_gradient_is_clipped_to_the_norm_bound() -> None:
    torch.manual_seed(0)
    rows = torch.tensor([[1.0, 0.5, -0.2, 1.0], [0.1, 0.3, 0.2, -1.0], [0.0, 1.0, 0.0, 0.5],
                         [1e3, -1e3, 1e3, 5e3]])  # the last row's gradient is huge
    model = Regression()
    start = _flat(model)
    raw = []
    for i in range(len(rows)):
        probe = copy.deepcopy(model)
        probe(rows[i:i + 1]).sum().backward()
        raw.append(torch.cat([p.grad.flatten() for p in probe.parameters()]).norm().item())
    assert raw[-1] > 1e6
    clip = 1.0
    per_sample = []
    for i in range(len(rows)):
        after = _one_dp_sgd_step(copy.deepcopy(model), rows, np.array([i]), clip, 1.0, 1)
        per_sample.append(start - after)  # lr 1, expected batch 1: the clipped gradient
    norms = [g.norm().item() for g in per_sample]
    assert all(n <= clip * (1 + 1e-5) for n in norms)
    assert norms[-1] == pytest.approx(clip, rel=1e-4)
    for n, r in zip(norms[:-1], raw[:-1], strict=True):
        assert n == pytest.approx(min(r, clip), rel=1e-4)
    # a batch's update is the sum of the individually clipped gradients, even across micro-batches
    together = start - _one_dp_sgd_step(copy.deepcopy(model), rows, np.arange(4), clip, 1.0, 3)
    assert torch.allclose(together, sum(per_sample), atol=1e-5)


def test_poisson_batch_sizes_are_binomial() -> None:
    records, q, draws = 400, 0.1, 2000
    rng = np.random.default_rng(3)
    sizes = np.array([len(poisson_batch(records, q, rng)) for _ in range(draws)])
    # chi-square goodness of fit to Binomial(N, q), cells pooled to expected counts >= 5
    edges = np.array([0, 29, 32, 34, 36, 38, 40, 42, 44, 46, 48, 51, records + 1])
    expected = np.diff(stats.binom(records, q).cdf(edges - 1)) * draws
    observed = np.histogram(sizes, bins=edges)[0]
    assert expected.min() >= 5
    assert stats.chisquare(observed, expected * draws / expected.sum()).pvalue > 1e-3


def test_training_takes_poisson_batches_and_one_optimiser_step_per_recorded_step() -> None:
    records, q, steps = 400, 0.1, 12
    model = AutoregressiveModel([3, 2], [0, 1], hidden=4)
    codes = torch.as_tensor(np.random.default_rng(2).integers(0, 2, (records, 2)))
    adam = torch.optim.Adam(model.parameters(), lr=1e-3)
    settings = DpSgdSettings(q, noise_multiplier=1.0, max_grad_norm=1.0, steps=steps,
                             physical_batch=16)  # several micro-batches per step
    log = train_dp_sgd(model, codes, q * records, settings, np.random.default_rng(3),
                       torch.Generator().manual_seed(4), optimizer=adam)
    assert log.steps == steps
    assert all(adam.state[p]["step"].item() == steps for p in model.parameters())
    replay = np.random.default_rng(3)
    assert log.batch_sizes == [len(poisson_batch(records, q, replay)) for _ in range(steps)]
    assert len(set(log.batch_sizes)) > 1 and max(log.batch_sizes) > 16


def test_an_empty_poisson_batch_still_takes_a_noisy_step() -> None:
    model = AutoregressiveModel([3, 2], [0, 1], hidden=4)
    before = _flat(model)
    codes = torch.zeros((5, 2), dtype=torch.long)
    settings = DpSgdSettings(1e-9, noise_multiplier=1.0, max_grad_norm=1.0, steps=2)
    log = train_dp_sgd(model, codes, 1.0, settings, np.random.default_rng(0),
                       torch.Generator().manual_seed(0))
    assert log.batch_sizes == [0, 0] and log.steps == 2
    assert torch.isfinite(_flat(model)).all() and not torch.equal(_flat(model), before)


def test_the_autoregressive_likelihood_is_normalised() -> None:
    torch.manual_seed(0)
    model = AutoregressiveModel([3, 2, 4], [1, 2, 0], hidden=5)
    for p in model.parameters():
        nn.init.normal_(p, std=0.5)
    grid = torch.as_tensor(np.indices((3, 2, 4)).reshape(3, -1).T)
    with torch.no_grad():
        total = torch.exp(-model(grid)).sum().item()
    assert total == pytest.approx(1.0, abs=1e-5)
    draws = model.sample(20_000, np.random.default_rng(5))
    assert draws.min() >= 0 and all(draws[:, j].max() < s for j, s in enumerate([3, 2, 4]))
    with torch.no_grad():
        probabilities = torch.exp(-model(grid)).numpy()
    flat = np.ravel_multi_index(draws.T, (3, 2, 4))
    observed = np.bincount(flat, minlength=24) / len(flat)
    # each cell's frequency within 5 binomial standard deviations of its probability
    assert np.all(np.abs(observed - probabilities)
                  <= 5 * np.sqrt(probabilities * (1 - probabilities) / len(flat)) + 1e-9)


def test_a_conditional_model_models_only_its_columns_and_keeps_the_context() -> None:
    torch.manual_seed(1)
    model = AutoregressiveModel([3, 2, 4], [0, 2, 1], hidden=5, given=2)
    assert len(model.heads) == 1  # only column 1 (last in the order) has a head
    for p in model.parameters():
        nn.init.normal_(p, std=0.5)
    grid = torch.as_tensor(np.indices((3, 2, 4)).reshape(3, -1).T)
    with torch.no_grad():  # exp(-nll) is p(x1 | x0, x2): it sums to 1 over x1 in every context
        conditional = torch.exp(-model(grid)).numpy().reshape(3, 2, 4)
    np.testing.assert_allclose(conditional.sum(axis=1), 1.0, atol=1e-5)
    context = np.tile([[2, 0, 3]], (20_000, 1))
    completed = model.complete(context, np.random.default_rng(2))
    assert np.array_equal(completed[:, [0, 2]], context[:, [0, 2]])
    share = completed[:, 1].mean()  # frequency of x1 = 1 within 5 binomial standard deviations
    p = conditional[2, 1, 3]
    assert abs(share - p) <= 5 * np.sqrt(p * (1 - p) / len(completed))
    with pytest.raises(ValueError, match="completes rows"):
        model.sample(5, np.random.default_rng(0))
    with pytest.raises(ValueError, match="must be modelled"):
        AutoregressiveModel([3, 2], [0, 1], given=2)


def test_a_conditional_model_learns_an_interaction_no_pairwise_marginal_shows() -> None:
    """y = x0 XOR x1: every pair of columns is independent, so a model of 2-way marginals draws
    y at random (half wrong); the network, trained with DP-SGD's code path (noise 0), learns it."""
    rng = np.random.default_rng(6)
    x = rng.integers(0, 2, (4000, 2))
    codes = torch.as_tensor(np.column_stack([x, x[:, 0] ^ x[:, 1]]))
    torch.manual_seed(6)
    model = AutoregressiveModel([2, 2, 2], [0, 1, 2], hidden=16, given=2)
    settings = DpSgdSettings(0.1, noise_multiplier=0.0, max_grad_norm=100.0, steps=150,
                             learning_rate=0.05)
    train_dp_sgd(model, codes, 400, settings, np.random.default_rng(7), None)
    completed = model.complete(np.column_stack([x, np.zeros(len(x), int)]), rng)
    assert (completed[:, 2] == x[:, 0] ^ x[:, 1]).mean() > 0.95
