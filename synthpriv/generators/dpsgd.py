"""DP-SGD (Abadi et al. 2016) with Opacus: Poisson sampling, per-sample clipping, Gaussian noise.

One step: every real row joins the batch independently with probability ``sample_rate`` (Poisson
sampling, so the batch size is Binomial(N, q) and never fixed by N), each row's gradient is
clipped to L2 norm ``max_grad_norm`` (C), the clipped gradients are summed, Gaussian noise of std
``noise_multiplier · C`` is added to the sum, and the result is divided by the *expected* batch
size q·N̂, where N̂ is public or a DP estimate (the realised size is never used, so nothing reveals
N). Sensitivity: under add/remove one row changes the clipped sum by at most C, so each step is
the Poisson-subsampled Gaussian mechanism with noise multiplier z; under replace-one the
accountant charges the replace-one relation. The caller records
``SubsampledGaussianEvent(q, z, steps_taken)`` in the Ledger.

Large logical batches run as micro-batches of at most ``physical_batch`` rows: each is clipped
and accumulated, and noise is added once per logical batch (Opacus' skip-step protocol, as its
BatchMemoryManager does).

Person level (``persons`` given: ``data.person`` with k = ``rows_per_person``): neighbouring
tables differ by all (≤ k) rows of one person. Each step samples *persons* by Poisson sampling at
rate q (every row of a sampled person joins the batch, none of an unsampled one), and each
person's contribution to the clipped sum has norm ≤ C, so adding or removing a person moves the
sum by ≤ C and the step is the Poisson-subsampled Gaussian mechanism with q over persons and
multiplier z: the same ``SubsampledGaussianEvent(q, z, steps_taken)``, noise std z·C. Two ways to
bound a person's contribution (``DpSgdSettings.person_clipping``):

* ``"person"`` (default): one Opacus sample per person. The rows go in as a (persons, k, columns)
  block (padding rows' losses masked to 0), the per-sample loss is the sum of a person's row
  losses, and ghost clipping computes the exact norm of that sum (for a linear layer,
  ‖Σ_t g_t a_tᵀ‖² = Σ_{s,t} (g_s·g_t)(a_s·a_t), Opacus' sequence case) and clips it to C.
* ``"rows"``: each row clipped to C/k, so any ≤ k rows of a person sum to norm ≤ C; the noise
  multiplier given to Opacus is z·k so that its std (z·k)·(C/k) is still z·C. Looser: a person
  with fewer than k rows, or with one row of large gradient, contributes less than the C the
  person bound allows (measured in benchmarks/README.md, "Person-level DP-SGD").

The expected-batch divisor stays q·N̂ with N̂ the (public or DP) row count: each row joins with
probability q, its person's. The number of persons is read only by the sampling loop (one coin
per person); q and the step count are public config, as at row level.

Randomness: batches are drawn with the pipeline's numpy generator; the noise with a
``torch.Generator`` seeded from the pipeline's source, and Opacus ``secure_mode`` (each Gaussian
is a sum of 4 draws, against floating-point attacks, Holohan & Braghin 2021). torch's generators
are not cryptographic (torchcsprng does not install beside torch 2.13): see ``noise_generator``.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch
from opacus.grad_sample import GradSampleModuleFastGradientClipping
from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping
from torch import nn

from synthpriv.generators.persons import PersonClipping, PersonRows
from synthpriv.privacy.randomness import RandomSource
from synthpriv.progress import inner


@dataclass(frozen=True)
class DpSgdSettings:
    """Public training settings: nothing here is read from the sensitive table."""

    sample_rate: float
    noise_multiplier: float
    max_grad_norm: float
    steps: int
    learning_rate: float = 1e-2
    physical_batch: int = 4096
    secure_mode: bool = True
    person_clipping: PersonClipping = "person"  # person level only (see the module docstring)


@dataclass
class TrainingLog:
    """What training did. ``batch_sizes`` (rows) and ``batches`` (person level: each step's
    sampled persons' rows, padded with -1) are sensitive (they reveal N): tests only, never
    released or logged."""

    steps: int = 0
    batch_sizes: list[int] = field(default_factory=list)
    batches: list[np.ndarray] = field(default_factory=list)


def noise_generator(source: RandomSource, device: torch.device) -> torch.Generator:
    """The generator for DP-SGD's Gaussian noise: the source's reproducible one when seeded,
    otherwise a fresh generator seeded with 63 bits of the OS CSPRNG (unpredictable, but torch's
    Mersenne Twister / Philox is not a cryptographic generator: the documented caveat)."""
    seeded = source.torch_generator() if device.type == "cpu" else None
    if seeded is not None:
        return seeded
    generator = torch.Generator(device=device)
    if source.is_seeded:
        generator.manual_seed(int(source.getrandbits(63)))
    else:
        generator.manual_seed(int(RandomSource.secure().getrandbits(63)))
    return generator


def poisson_batch(records: int, sample_rate: float, rng: np.random.Generator) -> np.ndarray:
    """Indices of a Poisson sample: each of ``records`` rows independently with prob. q."""
    return np.flatnonzero(rng.random(records) < sample_rate)


def make_private(
    model: nn.Module, optimizer: torch.optim.Optimizer, noise_multiplier: float,
    max_grad_norm: float, expected_batch: float, generator: torch.Generator | None = None,
    secure_mode: bool = True,
) -> tuple[GradSampleModuleFastGradientClipping, DPOptimizerFastGradientClipping]:
    """Opacus' ghost clipping (Li et al. 2022): exact per-sample gradient norms without
    materialising per-sample gradients (for a linear layer on one row, ‖g aᵀ‖ = ‖g‖·‖a‖), then a
    second backward pass of Σ min(1, C/‖∇ℓ_i‖)·ℓ_i gives the clipped sum; noise
    N(0, (z·C)²) is added to it and it is divided by ``expected_batch``."""
    if expected_batch <= 0:
        raise ValueError(f"expected_batch must be positive, got {expected_batch}")
    wrapped = GradSampleModuleFastGradientClipping(
        model, loss_reduction="mean", max_grad_norm=max_grad_norm, use_ghost_clipping=True
    )
    private = DPOptimizerFastGradientClipping(
        optimizer,
        noise_multiplier=noise_multiplier,
        max_grad_norm=max_grad_norm,
        expected_batch_size=expected_batch,  # type: ignore[arg-type]  (a float divisor is fine)
        loss_reduction="mean",
        generator=generator,
        secure_mode=secure_mode and noise_multiplier > 0,
    )
    return wrapped, private


def train_dp_sgd(
    model: nn.Module,
    codes: torch.Tensor,
    expected_batch: float,
    settings: DpSgdSettings,
    rng: np.random.Generator,
    generator: torch.Generator | None,
    optimizer: torch.optim.Optimizer | None = None,
    persons: PersonRows | None = None,
    keep_batches: bool = False,
) -> TrainingLog:
    """Train ``model`` (whose ``forward`` returns one loss per row) on the rows ``codes`` with
    DP-SGD for ``settings.steps`` steps; returns the steps the optimiser took (for the Ledger).

    ``expected_batch`` must be q·N̂ with N̂ public or DP: it divides the noisy clipped sum.
    ``optimizer`` (over ``model``'s parameters) defaults to Adam at ``settings.learning_rate``.
    ``persons`` (person level): sample persons, not rows, at rate q and bound each person's
    contribution by C; the recorded event is unchanged (q over persons, z, steps).
    ``keep_batches`` (tests): keep each person-level batch in the log (memory: every step's rows).
    """
    if optimizer is None:
        optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    clip, multiplier = settings.max_grad_norm, settings.noise_multiplier
    per_row = persons is not None and settings.person_clipping == "rows"
    if per_row:
        k = persons.rows_per_person
        clip = settings.max_grad_norm / k  # a person's ≤ k rows, each ≤ C/k, sum to ≤ C
        multiplier = settings.noise_multiplier * k  # Opacus' std: (z·k)·(C/k) = z·C
    wrapped, private = make_private(model, optimizer, multiplier, clip, expected_batch,
                                    generator, settings.secure_mode)
    log = TrainingLog()

    def count_step(_: DPOptimizer) -> None:  # called once per noisy (non-skipped) step
        log.steps += 1

    private.attach_step_hook(count_step)
    try:
        for _ in range(settings.steps):
            if persons is None:
                batch = poisson_batch(codes.shape[0], settings.sample_rate, rng)
                log.batch_sizes.append(len(batch))
                dp_step(wrapped, private, codes, batch, settings.physical_batch)
            else:
                block = persons.members[poisson_batch(persons.persons, settings.sample_rate, rng)]
                if keep_batches:
                    log.batches.append(block)
                log.batch_sizes.append(int((block >= 0).sum()))
                if per_row:
                    dp_step(wrapped, private, codes, block[block >= 0], settings.physical_batch)
                else:
                    person_step(wrapped, private, codes, block, settings.physical_batch)
            inner("DP-SGD step", len(log.batch_sizes), settings.steps)
    finally:
        wrapped.to_standard_module()
    return log


def dp_step(
    wrapped: GradSampleModuleFastGradientClipping, optimizer: DPOptimizerFastGradientClipping,
    codes: torch.Tensor, batch: np.ndarray, physical_batch: int,
) -> None:
    """One DP-SGD step on the logical batch ``batch`` (row indices, possibly empty), run as
    micro-batches: clip and accumulate each, add noise and update once at the end."""

    def losses(chunk: np.ndarray) -> torch.Tensor:
        return wrapped(codes[torch.as_tensor(chunk, dtype=torch.long)])

    _logical_step(wrapped, optimizer, batch, physical_batch, losses)


def person_step(
    wrapped: GradSampleModuleFastGradientClipping, optimizer: DPOptimizerFastGradientClipping,
    codes: torch.Tensor, block: np.ndarray, physical_batch: int,
) -> None:
    """One person-level DP-SGD step on ``block`` (sampled persons' rows, padded with -1): each
    person is one Opacus sample whose loss is the sum of its rows' losses, so ghost clipping
    clips the norm of the person's summed gradient to C (sensitivity C per person). Micro-
    batches of whole persons (⌊physical_batch / k⌋ each); noise once per logical batch."""

    def losses(chunk: np.ndarray) -> torch.Tensor:
        index = torch.as_tensor(chunk, dtype=torch.long, device=codes.device)
        rows = wrapped(codes[index.clamp(min=0)])  # (persons, k); padding rows masked to 0
        return (rows * (index >= 0).to(rows.dtype)).sum(dim=1)

    _logical_step(wrapped, optimizer, block, max(1, physical_batch // max(block.shape[1], 1)),
                  losses)


def _logical_step(
    wrapped: GradSampleModuleFastGradientClipping, optimizer: DPOptimizerFastGradientClipping,
    batch: np.ndarray, per_chunk: int, losses: Callable[[np.ndarray], torch.Tensor],
) -> None:
    """Ghost clipping's two backward passes on each micro-batch of ``per_chunk`` Opacus samples
    (``losses``: one loss per sample), the clipped sums accumulated; noise and the update once
    at the end (Opacus' skip-step protocol)."""
    chunks = [batch[i:i + per_chunk] for i in range(0, len(batch), per_chunk)] or [batch]
    for position, chunk in enumerate(chunks):
        with warnings.catch_warnings():  # inputs are data, not parameters: expected, harmless
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            DPTensorFastGradientClipping(wrapped, optimizer, losses(chunk), "mean").backward()
        if position < len(chunks) - 1:
            optimizer.signal_skip_step(do_skip=True)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)


def train_plain(
    model: nn.Module, codes: torch.Tensor, batch_size: int, steps: int, learning_rate: float,
    rng: np.random.Generator,
) -> None:
    """The same model trained without DP (mean loss, shuffled fixed-size batches): the
    throughput benchmark's baseline. Never used on a release path."""
    optimizer = torch.optim.Adam(model.parameters(), lr=learning_rate)
    records = codes.shape[0]
    for _ in range(steps):
        batch = torch.as_tensor(rng.choice(records, size=min(batch_size, records), replace=False))
        loss = model(codes[batch]).mean()
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        optimizer.step()
