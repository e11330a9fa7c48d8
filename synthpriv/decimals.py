"""How many decimals a number's text writes: '1.50' has 2, '2e-3' has 3, and a float artefact
('3.200000047683716', a float32 written out in full) counts those of its short form (1).

One rule for both drafts: the data-read draft's ``precision`` (synthpriv.draft_columns, the most
decimals of a column's cells) and the DP kind step's decimals classes (synthpriv.kinds, each
cell's own decimals, counted under noise).
"""

from __future__ import annotations

import math
from decimal import Decimal, InvalidOperation

import numpy as np
import pandas as pd

MAX_PRECISION = 15


def cell_decimals(cell: str) -> int | None:
    """The decimals written in one cell's text (no cap), or None when it is no decimal number.
    A cell of 15 or more significant digits that is a float artefact (the shortest text of the
    same float32, or of 15 significant digits, reads back as it) counts the decimals of that
    short form. A function of the cell alone: counting cells by it keeps a histogram's
    sensitivity (each cell is in one class whatever the other cells hold)."""
    try:
        exact = Decimal(cell)
    except InvalidOperation:
        return None
    exponent = _short(cell, exact).as_tuple().exponent
    return max(-exponent, 0) if isinstance(exponent, int) else None


def decimals(cells: pd.Series) -> int:
    """The most decimals written in ``cells`` (numbers as text, ``cell_decimals``), at most
    MAX_PRECISION."""
    most = 0
    for cell in pd.Series(cells).unique():
        places = cell_decimals(cell)
        if places is not None:
            most = max(most, places)
    return min(most, MAX_PRECISION)


def _short(cell: str, exact: Decimal) -> Decimal:
    """``exact`` written as its float artefact's short form, if it is one."""
    if len(exact.as_tuple().digits) < 15 or not exact.is_finite():
        return exact
    value = float(cell)
    single = np.float32(value)
    if float(single) == value:
        return Decimal(str(single))
    short = f"{value:.15g}"
    if math.isclose(float(short), value, rel_tol=1e-14, abs_tol=0.0):
        return Decimal(short).normalize() if "." in short else Decimal(short)
    return exact
