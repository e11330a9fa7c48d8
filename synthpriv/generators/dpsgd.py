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

Randomness: batches are drawn with the pipeline's numpy generator; the noise with a
``torch.Generator`` seeded from the pipeline's source, and Opacus ``secure_mode`` (each Gaussian
is a sum of 4 draws, against floating-point attacks, Holohan & Braghin 2021). torch's generators
are not cryptographic (torchcsprng does not install beside torch 2.13): see ``noise_generator``.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
from opacus.grad_sample import GradSampleModuleFastGradientClipping
from opacus.optimizers import DPOptimizer, DPOptimizerFastGradientClipping
from opacus.utils.fast_gradient_clipping_utils import DPTensorFastGradientClipping
from torch import nn

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


@dataclass
class TrainingLog:
    """What training did. ``batch_sizes`` are sensitive (they reveal N): tests only, never
    released or logged."""

    steps: int = 0
    batch_sizes: list[int] = field(default_factory=list)


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
) -> TrainingLog:
    """Train ``model`` (whose ``forward`` returns one loss per row) on the rows ``codes`` with
    DP-SGD for ``settings.steps`` steps; returns the steps the optimiser took (for the Ledger).

    ``expected_batch`` must be q·N̂ with N̂ public or DP: it divides the noisy clipped sum.
    ``optimizer`` (over ``model``'s parameters) defaults to Adam at ``settings.learning_rate``.
    """
    if optimizer is None:
        optimizer = torch.optim.Adam(model.parameters(), lr=settings.learning_rate)
    wrapped, private = make_private(model, optimizer, settings.noise_multiplier,
                                    settings.max_grad_norm, expected_batch, generator,
                                    settings.secure_mode)
    log = TrainingLog()

    def count_step(_: DPOptimizer) -> None:  # called once per noisy (non-skipped) step
        log.steps += 1

    private.attach_step_hook(count_step)
    try:
        for _ in range(settings.steps):
            batch = poisson_batch(codes.shape[0], settings.sample_rate, rng)
            log.batch_sizes.append(len(batch))
            dp_step(wrapped, private, codes, batch, settings.physical_batch)
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
    chunks = [batch[i:i + physical_batch] for i in range(0, len(batch), physical_batch)] or [batch]
    for position, chunk in enumerate(chunks):
        rows = wrapped(codes[torch.as_tensor(chunk, dtype=torch.long)])
        with warnings.catch_warnings():  # inputs are data, not parameters: expected, harmless
            warnings.filterwarnings("ignore", message="Full backward hook is firing")
            DPTensorFastGradientClipping(wrapped, optimizer, rows, "mean").backward()
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
