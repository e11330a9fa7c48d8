"""An autoregressive model over encoded columns: p(x) = Π_k p(x_{π(k)} | x_{π(<k)}).

Each column in the order π has a small head: the one-hot codes of the columns before it go
through one hidden layer (ReLU) and, beside it, a direct linear path, to the logits of the
column's codes. The likelihood is exact, so training is plain maximum likelihood (stable under
DP-SGD's noise, unlike a GAN), and sampling is ancestral. Only ``nn.Linear`` layers: Opacus
computes their per-sample gradients exactly with its hooks.

With ``given`` > 0 the first ``given`` columns of the order are context only: the model is the
conditional p(x_{π(≥given)} | x_{π(<given)}) (no heads for the context), trained on those
columns' likelihood alone and used to ``complete`` rows whose context comes from elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np
import torch
from torch import nn


class ColumnHead(nn.Module):
    """Logits of one column's codes given the one-hot codes of the columns before it."""

    def __init__(self, inputs: int, hidden: int, outputs: int) -> None:
        super().__init__()
        width = max(inputs, 1)  # the first column sees a constant 1: its logits are a bias
        self.hidden = nn.Linear(width, hidden)
        self.out = nn.Linear(hidden, outputs)
        self.direct = nn.Linear(width, outputs, bias=False)
        nn.init.zeros_(self.out.weight)
        nn.init.zeros_(self.direct.weight)

    def forward(self, context: torch.Tensor) -> torch.Tensor:
        return self.out(torch.relu(self.hidden(context))) + self.direct(context)


class AutoregressiveModel(nn.Module):
    """Columns (indices into the domain) modelled in ``order``; ``sizes`` are the domain's."""

    def __init__(
        self, sizes: Sequence[int], order: Sequence[int], hidden: int = 64, given: int = 0
    ) -> None:
        super().__init__()
        if sorted(order) != list(range(len(sizes))):
            raise ValueError(f"order {list(order)} is not a permutation of the {len(sizes)} columns")
        if not 0 <= given < len(sizes):
            raise ValueError(f"given = {given}: at least one of the {len(sizes)} columns must be "
                             "modelled")
        self.sizes = [int(s) for s in sizes]
        self.order = [int(j) for j in order]
        self.given = given
        ordered = [self.sizes[j] for j in self.order]
        self.offsets = np.concatenate([[0], np.cumsum(ordered)]).astype(int).tolist()
        self.heads = nn.ModuleList(
            ColumnHead(self.offsets[k], hidden, ordered[k]) for k in range(given, len(ordered))
        )

    def _modelled(self) -> list[tuple[int, ColumnHead, int]]:
        """(position in the order, head, domain column) of every modelled column."""
        positions = range(self.given, len(self.order))
        return [(k, head, self.order[k]) for k, head in zip(positions, self.heads, strict=True)]

    def one_hot(self, codes: torch.Tensor) -> torch.Tensor:
        """Rows of codes (domain column order in the last axis, any integer dtype: the stage
        keeps them compact) as concatenated one-hot vectors in model order."""
        codes = codes.long()
        parts = [
            nn.functional.one_hot(codes[..., j], self.sizes[j]).to(torch.float32)
            for j in self.order
        ]
        return torch.cat(parts, dim=-1)

    def _context(self, x: torch.Tensor, k: int) -> torch.Tensor:
        if k == 0:
            return torch.ones((*x.shape[:-1], 1), dtype=x.dtype, device=x.device)
        return x[..., : self.offsets[k]]

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Negative log-likelihood of each row: codes of shape ``(rows, columns)`` give shape
        ``(rows,)``; leading axes are kept, e.g. ``(persons, k, columns)`` gives ``(persons,
        k)`` (DP-SGD's person mode: Opacus then sees one sample per person)."""
        codes = codes.long()
        x = self.one_hot(codes)
        shape = codes.shape[:-1]
        nll = torch.zeros(shape, dtype=torch.float32, device=codes.device)
        for k, head, j in self._modelled():
            logits = head(self._context(x, k))
            nll = nll + nn.functional.cross_entropy(
                logits.reshape(-1, logits.shape[-1]), codes[..., j].reshape(-1), reduction="none"
            ).reshape(shape)
        return nll

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` rows of codes (domain column order) by ancestral sampling; the draws use
        ``rng`` (inverse CDF), so they follow the pipeline's random source."""
        if self.given:
            raise ValueError("a conditional model (given > 0) completes rows; it cannot sample")
        return self.complete(np.zeros((records, len(self.sizes)), dtype=np.int64), rng)

    def _head_probabilities(self, x: torch.Tensor, position: int) -> np.ndarray:
        head = self.heads[position - self.given]
        logits = head(self._context(x, position)).double()
        return torch.softmax(logits, dim=1).cpu().numpy()

    @torch.no_grad()
    def probabilities(self, codes: np.ndarray, position: int, batch: int = 65_536) -> np.ndarray:
        """p(x_j | the columns before j in the order) for each row of ``codes`` (domain column
        order), where j = ``order[position]`` is a modelled column; shape (rows, sizes[j])."""
        if not self.given <= position < len(self.order):
            raise ValueError(f"position {position} is not a modelled column's")
        device = next(self.parameters()).device
        parts = [np.zeros((0, self.sizes[self.order[position]]))]
        for start in range(0, len(codes), batch):
            x = self.one_hot(torch.as_tensor(codes[start:start + batch], device=device))
            parts.append(self._head_probabilities(x, position))
        return np.concatenate(parts)

    @torch.no_grad()
    def complete(
        self, codes: np.ndarray, rng: np.random.Generator, adjust: Adjust | None = None,
        batch: int = 65_536,
    ) -> np.ndarray:
        """A copy of ``codes`` (domain column order) with every modelled column redrawn, in
        order, given the columns before it; the context columns are kept as they are. Rows go
        in batches of ``batch``; ``adjust(j, probabilities, rows)`` may change column j's
        probabilities for a batch's rows before the draw (the guidance's raking)."""
        device = next(self.parameters()).device
        out = np.array(codes, dtype=np.int64, copy=True)
        for start in range(0, len(out), batch):
            block = out[start:start + batch]  # a view: draws land in ``out``
            rows = torch.arange(len(block), device=device)
            x = self.one_hot(torch.as_tensor(block, device=device))
            for k, _, j in self._modelled():
                probabilities = self._head_probabilities(x, k)
                if adjust is not None:
                    probabilities = adjust(j, probabilities, block)
                block[:, j] = draw_categorical(probabilities, rng)
                x[:, self.offsets[k]:self.offsets[k + 1]] = 0.0
                x[rows, torch.as_tensor(self.offsets[k] + block[:, j], device=device)] = 1.0
        return out


Adjust = Callable[[int, np.ndarray, np.ndarray], np.ndarray]


def draw_categorical(probabilities: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """One code per row, drawn from that row's probabilities by inverse CDF with ``rng``."""
    cdf = np.cumsum(probabilities, axis=1)
    cdf[:, -1] = 1.0
    drawn = (rng.random(len(cdf))[:, None] > cdf).sum(axis=1)
    return np.minimum(drawn, probabilities.shape[1] - 1)
