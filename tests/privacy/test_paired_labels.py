"""Category discovery with named paired labels (synthpriv.privacy.candidates): the public labels of
a two-valued column (Yes/No, True/False, M/F, …) get a draw in the discovery histogram whether the
column holds them or not; a label is kept beside its partner (which passed the threshold T) when
its own noisy count reaches PARTNER_BAR·σ. Checked against the definition: keep rates from the
noise (binomial tolerances, 4 sd), the bars carried, no label without its partner, and through the
domain step a small table's yes/no column keeps both halves."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
from scipy import stats

from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.candidates import PAIRED_LABELS, PARTNER_BAR, category_selection
from synthpriv.privacy.randomness import RandomSource
from tests.privacy.test_heap_discovery import _job

SIGMA, THRESHOLD, DRAWS = 20.0, 200, 2000


def _rate(counts: dict[str, int], label: str) -> float:
    return float(np.mean([label in category_selection(counts, SIGMA, THRESHOLD,
                                                      RandomSource.seeded(seed))[0]
                          for seed in range(DRAWS)]))


def _within(observed: float, expected: float) -> bool:
    return abs(observed - expected) <= 4 * np.sqrt(expected * (1 - expected) / DRAWS) + 1e-9


def test_a_partner_below_the_threshold_is_kept_at_the_rate_its_noise_gives() -> None:
    """'No' holds 40 rows (far below T = 200, 2σ above 0): kept when 40 + noise ≥ 2.5σ = 50,
    probability Φ((40 − 50)/σ) ≈ 0.31; a partner kept by exact counts (never) or without noise
    fails this."""
    expected = float(stats.norm.sf((PARTNER_BAR * SIGMA - 40) / SIGMA))
    assert _within(_rate({"Yes": 1000, "No": 40}, "No"), expected)


def test_an_absent_partner_shows_at_most_at_the_noise_rate() -> None:
    """'No' absent (count 0) beside a kept 'Yes': shown at rate Φ(−2.5) ≈ 0.6 %, not more."""
    assert _within(_rate({"Yes": 1000}, "No"), float(stats.norm.sf(PARTNER_BAR)))


def test_no_label_without_its_partner_kept() -> None:
    """A column of city names: no paired label ever appears (each would pass 2.5σ in 0.6 % of
    draws, 26 labels: about 15 % of the draws had one if the partner rule were skipped)."""
    labels = {label for pair in PAIRED_LABELS for label in pair}
    for seed in range(400):
        kept, _ = category_selection({"Paris": 1000, "Lyon": 900}, SIGMA, THRESHOLD,
                                     RandomSource.seeded(seed))
        assert not labels & set(kept), seed


def test_each_kept_value_carries_the_bar_it_was_selected_at() -> None:
    for seed in range(50):
        kept, bars = category_selection({"Yes": 1000, "No": 120, "x": 500}, SIGMA, THRESHOLD,
                                        RandomSource.seeded(seed))
        assert bars["Yes"] == bars["x"] == THRESHOLD
        if "No" in kept:
            assert kept["No"] >= PARTNER_BAR * SIGMA
            assert bars["No"] == (THRESHOLD if kept["No"] >= THRESHOLD else PARTNER_BAR * SIGMA)


def _yes_no(rows: int, no: int) -> pd.DataFrame:
    return pd.DataFrame({"g": np.where(np.arange(rows) < no, "No", "Yes"), "x": np.arange(rows) % 7})


def test_the_domain_step_keeps_both_halves_of_a_small_yes_no_column(tmp_path: Path) -> None:
    """A yes/no column whose 'No' holds T − σ/2 rows (below the discovery threshold T, ≥ 2σ above
    the partner's bar): the resolved schema lists both labels in ≥ 9 of 12 seeds (each with
    probability ≥ Φ(2) ≈ 0.98), and the No count it carries is a noisy one. Without the partner
    rule 'No' passes T with probability Φ(−0.5) ≈ 0.31: ≥ 9 of 12 then has probability ≈ 0.002."""
    schema = {"columns": [{"name": "g", "kind": "categorical", "missing": True},
                          {"name": "x", "kind": "integer", "lower": 0, "upper": 6}]}
    _, plan, _ = _job(tmp_path / "plan", _yes_no(400, 100), schema)  # the plan: public figures
    sigma, threshold = plan.noise["sigma"], plan.noise["category_threshold"]
    no = int(threshold - 0.5 * sigma)
    assert no >= (PARTNER_BAR + 2) * sigma, (no, sigma, threshold)
    table = _yes_no(400, no)
    job, plan, stage = _job(tmp_path / "job", table, schema)
    found, counts = 0, []
    for seed in range(12):
        resolved = stage.resolve(job, plan, Ledger(job.config.budget.neighbouring),
                                 RandomSource.seeded(seed), chunks=[table])
        column = resolved.schema.column("g")
        if "No" in column.categories:
            found += 1
            counts.append(column.kept_counts[column.categories.index("No")].count)
    assert found >= 9, (found, no, sigma, threshold)
    assert len(set(counts)) > 1  # noisy, not the exact count each time
