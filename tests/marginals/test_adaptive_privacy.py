"""The adaptive domain reads the table only through mechanisms (privacy review, issue 23): the
record count that sizes the measured grid and the bins is the noisy one, the bins and the
decoding masses are functions of the noisy 1-way measurements. Checked from behaviour:

* a source that reports another row count than its counts hold (rows appended after the
  measurements) gives the same adaptive domain: n reaches it only through the noisy count;
* with a public n the measured grid is public, and the decoding masses are uniform over the fine
  cells of each grid cell (the measurement knows nothing finer), and they change with the noise.

The mutations these catch are in benchmarks/privacy_mutations.py ((a)–(c) of item 6)."""

from __future__ import annotations

import numpy as np

from synthpriv.domain import Dataset
from synthpriv.encoding import TableEncoder
from synthpriv.marginals.compress import measured_grid
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PipelineState, PlanContext
from tests.marginals.test_compress import SCHEMA, codes_of

ADAPTIVE = frozenset({"age", "spend"})
ENCODER = TableEncoder(SCHEMA)


class Grown:
    """The table's counts, with a row count ``factor`` times larger: what a stage would see if
    rows were appended after it measured. A stage that reads n outside its noisy count sees it."""

    def __init__(self, data: Dataset, factor: int) -> None:
        self.data, self.factor, self.domain = data, factor, data.domain

    @property
    def records(self) -> int:
        return self.data.records * self.factor

    @property
    def codes(self) -> np.ndarray:
        return self.data.codes

    def marginal(self, attributes):
        return self.data.marginal(attributes)

    def marginals(self, cliques):
        return self.data.marginals(cliques)


def _run(data, selection: str, seed: int, public: int | None = None, rho: float = 0.05):
    context = PlanContext(ENCODER.domain, "add_remove", 1e-6, public, ADAPTIVE)
    stage = MarginalsStage({"selection": selection, "iterations": 10, "aim_max_rounds": 6,
                            "aim_round_iterations": 5}, context, "test")
    plan = stage.plan(rho)
    state = PipelineState(context, ENCODER, data)
    stage.run(state, plan, Ledger(), RandomSource.seeded(seed))
    return state.coarsening, plan


def test_the_adaptive_domain_learns_n_only_from_the_noisy_count() -> None:
    data = Dataset(codes_of(2000, seed=1), ENCODER.domain)
    for selection in ("mst", "aim"):
        plain, _ = _run(data, selection, seed=3)
        grown, _ = _run(Grown(data, 40), selection, seed=3)
        assert plain.changed and plain.coarse == grown.coarse, (
            f"{selection}: the adaptive domain changed when only the reported row count did "
            f"({plain.coarse} → {grown.coarse}): n reached it outside the noisy count")
        for attribute in ENCODER.domain.attributes:
            assert np.array_equal(plain.maps[attribute], grown.maps[attribute])
            assert np.array_equal(plain.masses[attribute], grown.masses[attribute])


def test_decoding_masses_are_noisy_within_each_measured_grid_cell() -> None:
    """Decoding masses are read from the noisy measurements: two noise seeds give other masses,
    and none is the exact fine count (the fine level keeps a significant cell's noisy count and
    shares the rest of its grid cell equally: tests/marginals/test_point_masses.py)."""
    records = 3000
    data = Dataset(codes_of(records, seed=1), ENCODER.domain)
    first, plan = _run(data, "mst", seed=3, public=records)
    second, _ = _run(data, "mst", seed=4, public=records)
    grid = measured_grid(SCHEMA, ENCODER.domain, records, plan.noise["sigma_one_way"])
    assert len(np.unique(grid.maps["spend"])) < ENCODER.domain["spend"] / 2  # a coarser grid
    for attribute in sorted(ADAPTIVE):  # age: measured on its fine cells (a grid of 1 each)
        cells = grid.maps[attribute]
        exact = data.marginal((attribute,))
        for masses in (first.masses[attribute], second.masses[attribute]):
            assert not np.allclose(masses / masses.sum(), exact / exact.sum()), (
                f"{attribute}: the decoding masses are the exact fine counts")
        assert len(np.unique(cells)) > 0
        assert not np.allclose(first.masses[attribute], second.masses[attribute]), (
            f"{attribute}: the decoding masses are the same under two noise seeds: they are not "
            "read from the noisy measurements")
    for attribute in ("city",):  # a merged categorical's masses are noisy counts too
        assert not np.allclose(first.masses[attribute], second.masses[attribute])
