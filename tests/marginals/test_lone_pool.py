"""A pooled lone cell's mass never lands on other pooled lone cells (``spread_lone_noise``):
College's `Personal` (seed 2, AIM, safe draft) released 4.3 % 0s and 4.3 % 1s (real minimum
250) because a round cell's noise was shared by the empty lone cells 0 and 1, the only other
takers in a coarse cell whose other cells were a fitted tail."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.marginals.compress import spread_lone_noise


def _case() -> tuple[np.ndarray, ...]:
    # fine cells: {0}, {1} (lone, empty), eight fitted tail cells, {500} (lone round cell, 70
    # rows of noise, not significant), a fitted cell, then the missing code
    mass = np.array([0.0, 0.0] + [0.2] * 8 + [70.0, 10.0, 5.0])
    to_grid = np.array([0, 1] + [2] * 8 + [3, 2, 4])
    groups = np.array([0] * 12 + [1])  # one coarse cell, and the missing code's
    significant = np.zeros(13, dtype=bool)
    fitted = np.array([False, False] + [True] * 8 + [False, True, False])
    rounds = np.zeros(13, dtype=bool)
    rounds[10] = True
    return mass, significant, to_grid, groups, fitted, rounds


PRIORS = np.array([True, True] + [False] * 11)  # the a-priori pile cells 0 and 1


@pytest.mark.parametrize("keep_out", [False, True])
def test_a_pool_goes_to_the_cells_holding_mass_not_to_other_lone_cells(keep_out) -> None:
    mass, significant, to_grid, groups, fitted, rounds = _case()
    out = spread_lone_noise(mass, significant, to_grid, groups, missing=1,
                            keep_out=rounds if keep_out else None, fitted=fitted, priors=PRIORS)
    assert out[:2] == pytest.approx([0.0, 0.0])  # no fake 0s and 1s
    assert out[:12].sum() == pytest.approx(mass[:12].sum())  # the coarse cell's total kept
    if keep_out:  # the round cell's noise goes to the cells holding mass, in proportion
        held = np.append(mass[2:10], mass[11])
        assert out[10] == 0.0
        assert np.append(out[2:10], out[11]) == pytest.approx(held + 70.0 * held / held.sum())
    else:  # a lone cell not kept out keeps its own mass, as before
        assert out[10] == 70.0
    assert out[12] == mass[12]  # the missing code untouched


def test_a_pile_cell_holding_noise_gives_it_to_the_cells_holding_mass() -> None:
    """College's `Books` (seed 0): the lone cell 0 held 13 rows of its grid count's noise and,
    the only taker of its coarse cell (the rest a fitted tail), kept them: 2.7 % of released
    `Books` at 0 (real minimum 96)."""
    mass, significant, to_grid, groups, fitted, rounds = _case()
    mass[0], mass[10] = 13.0, 0.0
    out = spread_lone_noise(mass, significant, to_grid, groups, missing=1, keep_out=rounds,
                            fitted=fitted, priors=PRIORS)
    assert out[0] == 0.0 and out[:12].sum() == pytest.approx(mass[:12].sum())


def test_with_no_cell_holding_mass_the_pool_stays_on_the_non_significant_cells() -> None:
    mass, significant, to_grid, groups, fitted, _ = _case()
    mass[2:10] = 0.0
    out = spread_lone_noise(mass, significant, to_grid, groups, missing=1, fitted=fitted,
                            priors=PRIORS)
    assert out[:12].sum() == pytest.approx(80.0)  # nothing lost
