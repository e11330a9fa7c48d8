"""Numbers as a reader writes them: ``118,000`` and ``0.00123``, not ``1.18e+05`` and ``1.23e-03``.

Used by the report's labels, tables and plot axes, and the sweep's figure. Scientific notation is
kept only for magnitudes a reader would not write out (below 10⁻⁴ or from 10¹⁵ up).
"""

from __future__ import annotations

import math

PLAIN_LOW, PLAIN_HIGH = 1e-4, 1e15


def number(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant digits, written out with thousands separators
    (118000.4 -> "118,000", 0.001234 -> "0.00123", 40.0 -> "40"); NaN/inf as Python prints them."""
    value = float(value)
    if not math.isfinite(value) or value == 0:
        return "0" if value == 0 else str(value)
    rounded = float(f"{value:.{digits}g}")
    if not PLAIN_LOW <= abs(rounded) < PLAIN_HIGH:
        return f"{value:.{digits}g}"
    decimals = max(0, digits - 1 - math.floor(math.log10(abs(rounded))))
    text = f"{rounded:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


SUFFIXES = ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e4, "k"))


def compact(value: float, digits: int = 3) -> str:
    """``number`` shortened for a crowded axis: 10,000 and up as 200k, 1.2M, 3B."""
    for size, suffix in SUFFIXES:
        if abs(value) >= size and abs(value) < PLAIN_HIGH:
            text = number(value / (1e3 if suffix == "k" else size), digits)
            return text + suffix
    return number(value, digits)


def axis_formatter(leading: str | None = None):
    """A matplotlib tick formatter that writes tick values with ``compact`` (no offset, no 1e6);
    with ``leading``, only ticks whose first digit is in it (log axes' minor ticks: "25")."""
    from matplotlib.ticker import FuncFormatter

    def write(value: float, _position: object) -> str:
        if leading is not None and f"{abs(value):.0e}"[0] not in leading:
            return ""
        return compact(value)

    return FuncFormatter(write)
