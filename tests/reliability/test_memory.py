"""Memory stays bounded by max_model_cells: AIM never counts a marginal larger than the model may
ever be, and keeps a candidate list even when the limit is tight; MST and one-way refuse an
oversized marginal before any data is read (the CLI tests show the messages)."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.errors import ConfigError, SynthprivError
from synthpriv.marginals.aim import AimSettings, Sensitivity, run_aim
from synthpriv.marginals.estimation import ModelTooLargeError, model_cells
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.stage import PlanContext

WIDE = 100_000  # two such attributes make a 10^10-cell pair: 80 GB of counts if ever computed


def wide_data(rows: int = 200) -> Dataset:
    rng = np.random.default_rng(0)
    domain = Domain(("a", "b", "wide1", "wide2"), (3, 4, WIDE, WIDE))
    codes = np.stack([rng.integers(0, s, rows) for s in domain.shape], axis=1)
    return Dataset(codes, domain)


def test_aim_never_counts_a_marginal_above_the_cell_limit(monkeypatch) -> None:
    data = wide_data()
    limit = 500_000
    counted = []
    real_marginal = Dataset.marginal

    def recording_marginal(self, attributes):
        counted.append(self.domain.size(attributes))
        return real_marginal(self, attributes)

    monkeypatch.setattr(Dataset, "marginal", recording_marginal)
    settings = AimSettings(workload_degree=2, rounds_per_attribute=1, max_model_cells=limit,
                           round_iterations=5, final_iterations=5)
    measurements, model = run_aim(data, settings, Sensitivity(1.0, 1.0),
                                  RandomSource.seeded(0), Ledger().open_filter(1.0, "AIM"))
    assert max(counted) <= limit
    assert model_cells(data.domain, [m.clique for m in measurements]) <= limit


def test_aim_with_a_tight_limit_still_has_candidates() -> None:
    """Cliques already in the model are always allowed (AIM's free cliques). With 48 rounds the
    first rounds' size limit (40 cells × budget spent so far) is below even the 15-cell 1-way
    model, so without them no candidate is left and the selection fails."""
    rng = np.random.default_rng(1)
    domain = Domain(("a", "b", "c"), (5, 5, 5))
    data = Dataset(np.stack([rng.integers(0, 5, 300) for _ in range(3)], axis=1), domain)
    settings = AimSettings(workload_degree=2, rounds_per_attribute=16, max_model_cells=40,
                           round_iterations=5, final_iterations=5)
    ledger = Ledger()
    measurements, _ = run_aim(data, settings, Sensitivity(1.0, 1.0),
                              RandomSource.seeded(1), ledger.open_filter(0.5, "AIM"))
    assert all(len(m.clique) == 1 for m in measurements[:4])
    assert model_cells(domain, [m.clique for m in measurements]) <= 40
    assert sum(e.count for e in ledger.events if e.kind == "exponential") == len(measurements) - 3


def test_one_way_model_above_the_limit_is_a_clear_error() -> None:
    data = wide_data()
    settings = AimSettings(workload_degree=2, rounds_per_attribute=1, max_model_cells=1000)
    with pytest.raises(ModelTooLargeError, match="above the limit max_cells=1,000") as caught:
        run_aim(data, settings, Sensitivity(1.0, 1.0), RandomSource.seeded(0),
                Ledger().open_filter(1.0, "AIM"))
    assert isinstance(caught.value, SynthprivError)


@pytest.mark.parametrize(("selection", "marginal"), [("one_way", "wide1"), ("mst", "wide1×wide2")])
def test_mst_and_one_way_refuse_an_oversized_marginal_at_plan_time(selection, marginal) -> None:
    context = PlanContext(domain=wide_data().domain, neighbouring="add_remove", delta=1e-6)
    with pytest.raises(ConfigError, match=f"counts the marginal {marginal} with"):
        MarginalsStage({"selection": selection, "max_model_cells": 50_000}, context, "job.yaml")
