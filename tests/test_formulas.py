"""The public formula language (synthpriv.formulas): what it parses, refuses, computes and bounds."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from synthpriv.formulas import FormulaError, parse_check, parse_formula

TABLE = pd.DataFrame({"a": [1.0, 4.0, np.nan], "b": [2.0, 3.0, 5.0], "capital-gain": [0.0, 9.0, 1.0]})


def test_a_formula_computes_what_numpy_computes_and_propagates_missing() -> None:
    formula = parse_formula("log(a) + sqrt(b) * 2 - abs(-a) / b + max(a, b, 3) + round(`capital-gain` / 2)")
    assert formula.columns == ["a", "b", "capital-gain"]
    a, b, gain = TABLE["a"].to_numpy(), TABLE["b"].to_numpy(), TABLE["capital-gain"].to_numpy()
    expected = (np.log(a) + np.sqrt(b) * 2 - np.abs(a) / b + np.maximum(np.maximum(a, b), 3)
                + np.round(gain / 2))
    np.testing.assert_allclose(formula.evaluate(TABLE)[:2], expected[:2])
    assert np.isnan(formula.evaluate(TABLE)[2])  # a missing operand gives a missing value


@pytest.mark.parametrize(("text", "message"), [
    ("__import__('os').system('true')", "is not allowed"),
    ("Grad.Rate * 2", "a column named 'Grad.Rate'.*between backquotes: `Grad.Rate`"),
    ("a[0]", "is not allowed"),
    ("a ** 2", "is not allowed"),
    ("'text'", "is not a number"),
    ("True + a", "is not a number"),
    ("log(a, 2)", "takes one argument"),
    ("min()", "takes one argument or more"),
    ("log", "is a function"),
    ("a +", "is not a formula"),
    ("lambda: 1", "is not allowed"),
    ("", "empty formula"),
])
def test_anything_outside_the_language_is_refused_by_name(text: str, message: str) -> None:
    with pytest.raises(FormulaError, match=message):
        parse_formula(text)


def test_bounds_hold_every_value_over_the_columns_bounds() -> None:
    """Interval arithmetic: the bound contains the formula's value at many points in the box."""
    bounds = {"a": (1.0, 4.0), "b": (-2.0, 3.0)}
    rng = np.random.default_rng(0)
    points = pd.DataFrame({"a": rng.uniform(1, 4, 10_000), "b": rng.uniform(-2, 3, 10_000)})
    for text in ("a - b", "a * b", "b / a", "log(a) + exp(b)", "sqrt(a) - abs(b)", "min(a, b)",
                 "max(a, -b) * 2", "-(a + b) / (a + 3)", "round(a * b)"):
        low, high = parse_formula(text).bounds(bounds)
        values = parse_formula(text).evaluate(points)
        assert low <= values.min() + 1e-12 and values.max() <= high + 1e-12, text
    assert parse_formula("a * b").bounds(bounds) == (-8.0, 12.0)


@pytest.mark.parametrize(("text", "message"), [
    ("log(b)", r"log\(b\) is undefined where 'b' is ≤ 0"),
    ("sqrt(b)", r"sqrt\(b\) is undefined"),
    ("a / b", "the divisor 'b' can be 0"),
])
def test_a_formula_undefined_somewhere_in_the_bounds_is_refused(text: str, message: str) -> None:
    with pytest.raises(FormulaError, match=message):
        parse_formula(text).bounds({"a": (1.0, 4.0), "b": (-2.0, 3.0)})


def test_a_check_is_a_comparison_chain_and_a_missing_value_obeys() -> None:
    check = parse_check("a <= b < 6")
    assert check.columns == ["a", "b"]
    assert check.holds(TABLE).tolist() == [True, False, True]  # 4 > 3; row 3 has a missing 'a'
    assert parse_check("b >= a + 1").holds(TABLE).tolist() == [True, False, True]
    with pytest.raises(FormulaError, match="compares nothing"):
        parse_check("a + b")
    with pytest.raises(FormulaError, match="compare with < <= > >= only"):
        parse_check("a == b")


def test_a_check_no_row_can_satisfy_is_found_from_the_bounds() -> None:
    bounds = {"a": (0.0, 10.0), "b": (20.0, 30.0)}
    assert parse_check("a <= b").impossible(bounds) is None
    assert "over the schema's bounds" in parse_check("b <= a").impossible(bounds)
    assert parse_check("a < 10").impossible(bounds) is None
    assert parse_check("a > 10").impossible(bounds) is not None
    assert parse_check("a >= 10").impossible(bounds) is None
    assert math.isinf(parse_formula("exp(a * 100)").bounds(bounds)[1])
