"""An autoregressive model over encoded columns: p(x) = Π_k p(x_{π(k)} | x_{π(<k)}).

Each column in the order π has a small head: the one-hot codes of the columns before it go
through one hidden layer (ReLU) and, beside it, a direct linear path, to the logits of the
column's codes. The likelihood is exact, so training is plain maximum likelihood (stable under
DP-SGD's noise, unlike a GAN), and sampling is ancestral. Only ``nn.Linear`` layers: Opacus
computes their per-sample gradients exactly with its hooks.
"""

from __future__ import annotations

from collections.abc import Sequence

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

    def __init__(self, sizes: Sequence[int], order: Sequence[int], hidden: int = 64) -> None:
        super().__init__()
        if sorted(order) != list(range(len(sizes))):
            raise ValueError(f"order {list(order)} is not a permutation of the {len(sizes)} columns")
        self.sizes = [int(s) for s in sizes]
        self.order = [int(j) for j in order]
        ordered = [self.sizes[j] for j in self.order]
        self.offsets = np.concatenate([[0], np.cumsum(ordered)]).astype(int).tolist()
        self.heads = nn.ModuleList(
            ColumnHead(self.offsets[k], hidden, ordered[k]) for k in range(len(ordered))
        )

    def one_hot(self, codes: torch.Tensor) -> torch.Tensor:
        """Rows of codes (domain column order, any integer dtype: the stage keeps them compact)
        as concatenated one-hot vectors in model order."""
        codes = codes.long()
        parts = [
            nn.functional.one_hot(codes[:, j], self.sizes[j]).to(torch.float32) for j in self.order
        ]
        return torch.cat(parts, dim=1)

    def _context(self, x: torch.Tensor, k: int) -> torch.Tensor:
        if k == 0:
            return torch.ones((x.shape[0], 1), dtype=x.dtype, device=x.device)
        return x[:, : self.offsets[k]]

    def forward(self, codes: torch.Tensor) -> torch.Tensor:
        """Negative log-likelihood of each row (shape ``(rows,)``)."""
        codes = codes.long()
        x = self.one_hot(codes)
        nll = torch.zeros(codes.shape[0], dtype=torch.float32, device=codes.device)
        for k, (head, j) in enumerate(zip(self.heads, self.order, strict=True)):
            logits = head(self._context(x, k))
            nll = nll + nn.functional.cross_entropy(logits, codes[:, j], reduction="none")
        return nll

    @torch.no_grad()
    def sample(self, records: int, rng: np.random.Generator, batch: int = 65_536) -> np.ndarray:
        """``records`` rows of codes (domain column order) by ancestral sampling; the draws use
        ``rng`` (inverse CDF), so they follow the pipeline's random source."""
        device = next(self.parameters()).device
        out = np.zeros((records, len(self.sizes)), dtype=np.int64)
        for start in range(0, records, batch):
            rows = min(batch, records - start)
            x = torch.zeros((rows, self.offsets[-1]), dtype=torch.float32, device=device)
            for k, (head, j) in enumerate(zip(self.heads, self.order, strict=True)):
                probs = torch.softmax(head(self._context(x, k)).double(), dim=1).cpu().numpy()
                cdf = np.cumsum(probs, axis=1)
                cdf[:, -1] = 1.0
                drawn = (rng.random(rows)[:, None] > cdf).sum(axis=1)
                drawn = np.minimum(drawn, self.sizes[j] - 1)
                out[start:start + rows, j] = drawn
                columns = torch.as_tensor(self.offsets[k] + drawn, device=device)
                x[torch.arange(rows, device=device), columns] = 1.0
        return out
