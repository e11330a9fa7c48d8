"""Recipe settings from public quantities (issue 13, item 4): AIM's model-size cap follows n̂,
the number of columns and the domain; the plan shows it when n̂ is public."""

from __future__ import annotations

import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.domain import Domain
from synthpriv.marginals.settings import MODEL_CELLS_LIMIT, largest_pair, model_cells, smallest_cap
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.privacy.domain_budget import domain_share
from synthpriv.stage import PlanContext


def test_the_model_cap_is_d_cells_per_record_between_the_largest_pair_and_the_limit() -> None:
    assert model_cells(700, 10, smallest=100) == 7_000
    assert model_cells(700, 10, smallest=20_000) == 20_000  # every pair stays selectable
    assert model_cells(32_561, 14) == 455_854
    assert model_cells(10_000_000, 10) == MODEL_CELLS_LIMIT
    assert model_cells(0, 3) == 3  # a noisy count below 1 counts as 1


def test_the_largest_pair_counts_adaptive_columns_at_their_most_bins() -> None:
    domain = Domain.from_sizes({"age": 1025, "sex": 3, "job": 15})
    assert largest_pair(domain) == 1025 * 15
    assert largest_pair(domain, {"age": 32}) == 32 * 15
    assert largest_pair(Domain.from_sizes({"one": 7})) == 7


def _stage(records: int | None, **options) -> MarginalsStage:
    domain = Domain.from_sizes({f"c{i}": 6 for i in range(10)} | {"amount": 1025})
    context = PlanContext(domain, "add_remove", 1e-6, public_records=records,
                          adaptive=frozenset({"amount"}))
    return MarginalsStage({"selection": "aim", **options}, context, "job.yaml")


def test_a_small_and_a_huge_table_get_different_sensible_model_caps() -> None:
    small = _stage(700).plan(0.05).noise["max_model_cells"]
    huge = _stage(10_000_000).plan(0.05).noise["max_model_cells"]
    assert small == 11 * 700  # d·n̂: above the largest pair, 32 bins × 6 = 192 cells
    assert huge == MODEL_CELLS_LIMIT
    assert _stage(700, max_model_cells=50_000).plan(0.05).noise["max_model_cells"] == 50_000


def test_without_a_public_count_the_model_follows_the_noisy_count_bought_for_the_grid() -> None:
    plan = _stage(None).plan(0.05)
    assert "max_model_cells" not in plan.noise  # known only once the noisy count is measured
    assert plan.events[0].label.startswith("record count")
    fixed = _stage(None, adaptive_domain=False).plan(0.05)
    assert "sigma_count" not in fixed.noise  # nothing to buy a count for: the cap is the limit
    assert _stage(None, adaptive_domain=False)._aim_settings(None).max_model_cells == (
        MODEL_CELLS_LIMIT)


@pytest.mark.parametrize("histograms, columns, share", [(15, 15, 0.25), (4, 4, 0.25),
                                                      (3, 15, 1 / 16), (1, 86, 1 / 259)])
def test_the_domain_share_gives_each_histogram_msts_one_way_noise(
    histograms: int, columns: int, share: float
) -> None:
    s = domain_share(histograms, columns)
    assert s == pytest.approx(share)
    # each of the k histograms gets the ρ of one of MST's 1-way marginals: (1/3)(1 − s)ρ / d
    assert s / histograms == pytest.approx((1 - s) / (3 * columns))


def test_the_cap_always_holds_aims_first_model_of_every_one_way_marginal() -> None:
    domain = Domain.from_sizes({"duration": 1, "iprod": 2})
    assert largest_pair(domain) == 2  # below the 1-way model's 1 + 2 cells
    assert smallest_cap(domain) == 3
    assert smallest_cap(Domain.from_sizes({"a": 5, "b": 2, "c": 9})) == 45  # the largest pair
    assert smallest_cap(Domain.from_sizes({"age": 1025, "sex": 3}), {"age": 32}) == 96


def test_aim_runs_when_the_count_it_follows_is_tiny() -> None:
    """A noisy n̂ of 1 (statsmodels strikes, 62 rows, safe draft: value sweep) capped the model at
    d·n̂ = 2 cells, below the 3 of its first, 1-way model: AIM refused its own first step."""
    table = pd.DataFrame({"duration": ["long"] * 30, "iprod": ["low", "high"] * 15})
    schema = {"columns": [{"name": "duration", "kind": "categorical", "categories": ["long"]},
                          {"name": "iprod", "kind": "categorical", "categories": ["low", "high"]}]}
    release = Synthesizer(schema=schema, epsilon=1.0, recipe="aim", public_records=1,
                          seed=3).fit(table).sample(20)
    assert len(release) == 20 and set(release["duration"]) == {"long"}
