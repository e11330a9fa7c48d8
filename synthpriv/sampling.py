"""The sample stage: draw rows from the fitted model and decode them. Post-processing only.

Its output, ``SyntheticRows``, is the one synthetic type of every recipe (and of a released
model's resample): clients iterate its blocks (the streaming release) or call ``to_frame()``."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import Field

from synthpriv.constraints import Enforcer
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.marginals.compress import Coarsening
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState, SamplingModel, Stage, StageOptions, StagePlan, register

BLOCK_CELLS = 4_000_000  # cells drawn and decoded at a time by default (~270,000 rows of 15)


class SampleOptions(StageOptions):
    method: Literal["rounded", "iid"] = "rounded"
    block_rows: int | None = Field(
        default=None, ge=1,
        description="rows drawn, decoded and written at a time; none: 4 million cells' worth",
    )


class SyntheticRows:
    """The synthetic output of every recipe (independent, mst, aim, dpsgd, hybrid: the sample
    stage draws it from whichever model the stages fitted) and of a released model's resample:
    the table as blocks of decoded rows, drawn from the model only as a client reads them.

    Clients read it one way or the other, never by its type:

    * ``for block in rows``: blocks of at most ``block_rows`` rows (by default ``BLOCK_CELLS``
      cells' worth), in order: the streaming release writer, whose memory holds one block
      whatever the table's size;
    * ``rows.to_frame()``: the whole table as one DataFrame, drawn once and kept (the sweep, the
      shadow attack, the Python API), so a release written after it holds the same rows.

    ``len(rows)`` and ``rows.columns`` (set with ``in_order``) are known before anything is
    drawn; ``kept`` is the whole table when it is in memory (one block, or ``to_frame``).

    Blocks are drawn in order and once. With ``rounded`` each block is a controlled rounding of
    the model at the block's size: a table of one block (every table up to ``block_rows`` rows)
    is the one-shot rounding; in a larger one the blocks' rounding errors (each under one row
    per cell) add up, which is small beside the noise. ``fixed`` (domain axis → fine code) sets
    those columns after refinement (a resample conditioned on values). Rows that break the
    schema's public constraints are redrawn i.i.d. from the model
    (``synthpriv.constraints.Enforcer``; ``enforcement`` counts draws and rejections, for the
    manifest). Post-processing of the model only: costs no budget.
    """

    def __init__(
        self, model: SamplingModel, encoder: TableEncoder, records: int, method: str,
        rng: np.random.Generator, block_rows: int | None = None,
        coarsening: Coarsening | None = None, fixed: Mapping[int, int] | None = None,
    ) -> None:
        self.model, self.encoder, self.records, self.method = model, encoder, records, method
        self.coarsening, self.fixed = coarsening, dict(fixed or {})
        self.rng = rng
        self.block_rows = block_rows or max(1, BLOCK_CELLS // len(encoder.domain))
        self.columns: list[str] = list(encoder.schema.names)
        self._kept: pd.DataFrame | None = None
        self._drawn = False
        self.enforcer = Enforcer(encoder.schema.constraints, self._draw_iid)

    @property
    def enforcement(self) -> dict | None:
        """What enforcing the constraints took (None without constraints); complete once every
        block was drawn."""
        return self.enforcer.figures if self.enforcer.rules else None

    @property
    def kept(self) -> pd.DataFrame | None:
        """The whole table if it is held in memory (drawn as one block, or by ``to_frame``)."""
        return self._kept

    def in_order(self, columns: list[str]) -> SyntheticRows:
        """These rows with their columns in ``columns``' order (the input's: the release keeps
        it); ``columns``: columns of the schema, each once."""
        if len(set(columns)) != len(columns) or not set(columns) <= set(self.columns):
            raise ValueError(f"column order {columns} is not an order of the synthetic table's "
                             f"columns {self.columns}")
        self.columns = list(columns)
        if self._kept is not None:
            self._kept = self._kept[self.columns]
        return self

    def _decode(self, codes: np.ndarray) -> pd.DataFrame:
        if self.coarsening is not None:  # the adaptive domain: a fine cell within each cell
            codes = self.coarsening.refine(codes, self.rng)
        for axis, code in self.fixed.items():  # a conditioned column: its fine value
            codes[:, axis] = code
        atoms = None if self.coarsening is None else self.coarsening.atoms
        return self.encoder.decode(codes, self.rng, atoms)

    def _draw_iid(self, size: int) -> pd.DataFrame:
        return self._decode(self.model.sample(size, self.rng))

    def _blocks(self) -> Iterator[pd.DataFrame]:
        if self._drawn:
            raise RuntimeError("synthetic rows are drawn once and these were streamed already; "
                               "read the written synthetic.csv, or call to_frame() first")
        self._drawn = True
        draw = self.model.sample_rounded if self.method == "rounded" else self.model.sample
        for start in range(0, self.records, self.block_rows):
            size = min(self.block_rows, self.records - start)
            block = self.enforcer.apply(self._decode(draw(size, self.rng)))[self.columns]
            yield block  # the one copy: the drawn block is not held while the client reads

    def __len__(self) -> int:
        return self.records

    def __iter__(self) -> Iterator[pd.DataFrame]:
        """The blocks, drawn as they are read; the kept table as one block once in memory."""
        if self._kept is not None:
            yield self._kept
            return
        for block in self._blocks():
            if len(block) == self.records:
                self._kept = block
            yield block

    def to_frame(self) -> pd.DataFrame:
        """The whole table as one DataFrame (drawn on first call, then kept)."""
        if self._kept is None:
            blocks = list(self._blocks())
            self._kept = blocks[0] if len(blocks) == 1 else pd.concat(blocks, ignore_index=True)
        return self._kept


@register
class SampleStage(Stage):
    """Rows: the requested number, else the public count, else the model's DP estimate.

    ``method: rounded`` (default) allocates rows to values by controlled rounding of the model's
    expected counts; ``iid`` draws rows independently from the model.
    """

    name = "sample"
    Options = SampleOptions
    spends_budget = False
    person_level = True  # reads no data: post-processing of the model
    requires = frozenset({"model"})
    provides = frozenset({"synthetic"})

    def plan(self, rho: float) -> StagePlan:
        return StagePlan(self.name, 0.0, 0.0, [], {})

    def run(
        self, state: PipelineState, plan: StagePlan, ledger: Ledger, source: RandomSource
    ) -> None:
        if state.model is None:
            raise ConfigError("the sample stage needs a model: put a modelling stage before it")
        if state.requested_records is not None:
            records, state.records_source = state.requested_records, "requested in the config"
        elif state.context.public_records is not None:
            records, state.records_source = state.context.public_records, "public count"
        else:
            records = max(1, round(state.model.total))
            state.records_source = "estimated from the noisy marginals (post-processing)"
        state.synthetic = SyntheticRows(state.model, state.encoder, records, self.options.method,
                                        source.numpy_generator(), self.options.block_rows,
                                        state.coarsening)
