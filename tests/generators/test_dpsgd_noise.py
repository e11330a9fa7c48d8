"""DP-SGD adds the noise the ledger records: the generator stage records
SubsampledGaussianEvent(q, z, steps) with z = ``settings.noise_multiplier``, which assumes noise
N(0, (z·C)²) on every coordinate of each step's clipped gradient sum. Measured here from the
parameters' moves (privacy review, issue 23: a mutation training at z/2 passed every other test).
At person level (issue 27) the same std z·C, where C now bounds a person's contribution: with
rows clipped to C/k the multiplier handed to Opacus must be z·k."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from scipy import stats
from torch import nn

from synthpriv.generators.dpsgd import DpSgdSettings, train_dp_sgd
from synthpriv.generators.persons import PersonRows


class ZeroLoss(nn.Module):
    """A loss whose gradient is exactly zero: the clipped sum is 0, so a step of plain SGD with
    learning rate 1 moves each parameter by −noise / expected batch, the noise alone."""

    def __init__(self, parameters: int) -> None:
        super().__init__()
        self.linear = nn.Linear(1, parameters, bias=False)

    def forward(self, rows: torch.Tensor) -> torch.Tensor:
        return 0.0 * self.linear(rows).sum(-1)  # one loss per row, whatever the leading axes


@pytest.mark.parametrize(("multiplier", "clip", "person_clipping"), [
    (0.8, 1.5, None), (2.0, 0.25, None),  # row level
    (0.8, 1.5, "person"), (2.0, 0.25, "rows"),  # person level, k = 3
])
def test_the_noise_on_the_clipped_sum_has_std_multiplier_times_clip(
    multiplier: float, clip: float, person_clipping: str | None,
) -> None:
    parameters, steps, expected_batch = 4000, 2, 5.0
    model = ZeroLoss(parameters)
    start = model.linear.weight.detach().clone()
    settings = DpSgdSettings(sample_rate=0.25, noise_multiplier=multiplier, max_grad_norm=clip,
                             steps=steps, physical_batch=3,
                             person_clipping=person_clipping or "person")
    persons = None if person_clipping is None else PersonRows.from_codes(
        np.arange(20) % 7, rows_per_person=3, records=20)
    log = train_dp_sgd(model, torch.ones((20, 1)), expected_batch, settings,
                       np.random.default_rng(1), torch.Generator().manual_seed(2),
                       optimizer=torch.optim.SGD(model.parameters(), lr=1.0), persons=persons)
    assert log.steps == steps
    noise = ((start - model.linear.weight.detach()) * expected_batch).flatten().numpy()
    recorded = settings.noise_multiplier * settings.max_grad_norm * np.sqrt(steps)
    chi2 = stats.chi2(parameters)
    low, high = chi2.ppf([5e-5, 1 - 5e-5]) / parameters
    ratio = float(np.mean(noise**2)) / recorded**2  # the mean is 0: the noise is centred
    assert low < ratio < high, (
        f"the noise added to the clipped sums has variance {ratio:.3f}× (z·C)² with z = "
        f"{multiplier}, C = {clip} as recorded; expected within [{low:.3f}, {high:.3f}]")
