"""A small, safe expression language over a table's numeric columns, for public formulas
(``derived_from: {formula: log(wage)}``) and public constraints (``check: Accept <= Apps``).

Parsed with ``ast`` and evaluated by walking the tree: never ``eval``. Allowed: numbers, column
names, ``+ - * /``, unary ``-``, and the functions ``log exp sqrt abs round min max``; a check is
a comparison chain (``Top10 <= Top25 <= 100``) with ``< <= > >=``. A column whose name is not a
Python identifier is written between backquotes (```capital-gain` * 2``).

``bounds`` gives, by interval arithmetic over the columns' public bounds, an interval holding
every value a formula can take, so a formula can be checked at plan time (a ``log`` of a column
that can be 0, a rule no row can satisfy) without reading the data. Evaluation is vectorised:
a missing value (NaN) in an operand gives NaN.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

import numpy as np

FUNCTIONS: dict[str, tuple[Callable, int | None]] = {  # name: (vectorised function, arity)
    "log": (np.log, 1), "exp": (np.exp, 1), "sqrt": (np.sqrt, 1), "abs": (np.abs, 1),
    "round": (np.round, 1), "min": (np.minimum.reduce, None), "max": (np.maximum.reduce, None),
}
OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/"}
COMPARISONS = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater,
               ast.GtE: np.greater_equal}
_QUOTED = re.compile(r"`([^`]+)`")
Interval = tuple[float, float]


class FormulaError(ValueError):
    """A formula the language does not allow, or one that cannot hold over the bounds."""


@dataclass(frozen=True)
class Formula:
    """A parsed arithmetic expression (``parse_formula``)."""

    text: str
    tree: ast.expr
    names: dict[str, str]  # placeholder identifier → column name (backquoted names)

    @property
    def columns(self) -> list[str]:
        """The column names the formula reads, in order of first use."""
        found = [self.names.get(n.id, n.id) for n in ast.walk(self.tree) if isinstance(n, ast.Name)
                 and n.id not in FUNCTIONS]
        return list(dict.fromkeys(found))

    def evaluate(self, table: Mapping[str, object]) -> np.ndarray:
        """The formula's value on every row of ``table`` (columns by name) as floats; NaN where
        an operand is missing or a function is undefined (log of a negative number)."""
        with np.errstate(all="ignore"):
            return np.asarray(_evaluate(self.tree, self.names, table), dtype=float)

    def bounds(self, columns: Mapping[str, Interval]) -> Interval:
        """An interval holding the formula's value for every row whose columns lie within
        ``columns`` (public bounds). Raises FormulaError where a function or a division is
        undefined somewhere in it."""
        return _bounds(self.tree, self.names, columns, self.text)

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Check:
    """A comparison chain ``a <= b <= c`` (``parse_check``): each adjacent pair must hold."""

    text: str
    terms: tuple[Formula, ...]
    operators: tuple[type, ...]

    @property
    def columns(self) -> list[str]:
        return list(dict.fromkeys(c for term in self.terms for c in term.columns))

    def holds(self, table: Mapping[str, object]) -> np.ndarray:
        """True on every row where each comparison holds, or where a value it reads is missing
        (a rule speaks of the values a row has)."""
        values = [term.evaluate(table) for term in self.terms]
        ok = np.ones(np.broadcast(*values).shape, dtype=bool)
        for left, op, right in zip(values, self.operators, values[1:], strict=False):
            ok &= COMPARISONS[op](left, right) | np.isnan(left) | np.isnan(right)
        return ok

    def impossible(self, columns: Mapping[str, Interval]) -> str | None:
        """The first comparison no row within the bounds can satisfy, written out, or None."""
        spans = [term.bounds(columns) for term in self.terms]
        for i, op in enumerate(self.operators):
            (low, high), (other_low, other_high) = spans[i], spans[i + 1]
            never = {ast.Lt: low >= other_high, ast.LtE: low > other_high,
                     ast.Gt: high <= other_low, ast.GtE: high < other_low}[op]
            if never:
                return (f"'{self.terms[i]}' lies in [{low:g}, {high:g}] and '{self.terms[i + 1]}' "
                        f"in [{other_low:g}, {other_high:g}] over the schema's bounds")
        return None

    def __str__(self) -> str:
        return self.text


def _prepare(text: str) -> tuple[str, dict[str, str]]:
    """``text`` with each backquoted column name replaced by an identifier, and the map back."""
    names: dict[str, str] = {}

    def placeholder(match: re.Match) -> str:
        key = f"_column_{len(names)}"
        names[key] = match.group(1)
        return key

    return _QUOTED.sub(placeholder, text), names


def _parse(text: str) -> tuple[ast.expr, dict[str, str]]:
    if not isinstance(text, str) or not text.strip():
        raise FormulaError("an empty formula: write an expression such as 'log(wage)'")
    source, names = _prepare(text.strip())
    try:
        tree = ast.parse(source, mode="eval").body
    except SyntaxError:
        raise FormulaError(
            f"'{text}' is not a formula: write numbers, column names (a name with spaces or "
            "dashes between backquotes, `capital-gain`), + - * /, and log exp sqrt abs round "
            "min max"
        ) from None
    return tree, names


def parse_formula(text: str) -> Formula:
    """Parse an arithmetic formula; FormulaError names what is not allowed."""
    tree, names = _parse(text)
    _check_node(tree, text)
    return Formula(text.strip(), tree, names)


def parse_check(text: str) -> Check:
    """Parse a comparison chain of formulas (``Accept <= Apps``, ``0 <= Top10 <= Top25``)."""
    tree, names = _parse(text)
    if not isinstance(tree, ast.Compare):
        raise FormulaError(f"'{text}' compares nothing: write a comparison such as 'Accept <= Apps'")
    operators = tuple(type(op) for op in tree.ops)
    if any(op not in COMPARISONS for op in operators):
        raise FormulaError(f"'{text}': compare with < <= > >= only (a public equality between "
                           "columns is a derived_from formula)")
    terms = []
    for node in [tree.left, *tree.comparators]:
        _check_node(node, text)
        terms.append(Formula(ast.unparse(node), node, names))
    return Check(text.strip(), tuple(terms), operators)


def _check_node(node: ast.AST, text: str) -> None:
    """Refuse every syntax outside the language (attribute access, subscripts, keywords...)."""
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise FormulaError(f"'{text}': {node.value!r} is not a number")
    elif isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise FormulaError(f"'{text}': '{node.id}' is a function: call it, {node.id}(x)")
    elif isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        _check_node(node.left, text)
        _check_node(node.right, text)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd):
        _check_node(node.operand, text)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in FUNCTIONS:
        arity = FUNCTIONS[node.func.id][1]
        if node.keywords or (arity is not None and len(node.args) != arity) or not node.args:
            wanted = "one argument" if arity == 1 else "one argument or more"
            raise FormulaError(f"'{text}': {node.func.id}() takes {wanted}, no keywords")
        for argument in node.args:
            _check_node(argument, text)
    else:
        shown = ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__
        hint = (f" (a column named '{shown}'? Write it between backquotes: `{shown}`)"
                if isinstance(node, ast.Attribute) else "")
        raise FormulaError(
            f"'{text}': '{shown}' is not allowed{hint}; a formula uses numbers, column names, "
            f"+ - * /, and the functions {', '.join(FUNCTIONS)}"
        )


def _evaluate(node: ast.expr, names: dict[str, str], table: Mapping[str, object]) -> object:
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return np.asarray(table[names.get(node.id, node.id)], dtype=float)
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, names, table)
        return -value if isinstance(node.op, ast.USub) else value
    if isinstance(node, ast.BinOp):
        left, right = _evaluate(node.left, names, table), _evaluate(node.right, names, table)
        if isinstance(node.op, ast.Add):
            return left + right
        if isinstance(node.op, ast.Sub):
            return left - right
        if isinstance(node.op, ast.Mult):
            return left * right
        return np.divide(left, right)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    function, arity = FUNCTIONS[node.func.id]
    arguments = [_evaluate(a, names, table) for a in node.args]
    if arity == 1:
        return function(arguments[0])
    return function(np.broadcast_arrays(*arguments)) if len(arguments) > 1 else arguments[0]


def _bounds(
    node: ast.expr, names: dict[str, str], columns: Mapping[str, Interval], text: str
) -> Interval:
    if isinstance(node, ast.Constant):
        return float(node.value), float(node.value)
    if isinstance(node, ast.Name):
        return columns[names.get(node.id, node.id)]
    if isinstance(node, ast.UnaryOp):
        low, high = _bounds(node.operand, names, columns, text)
        return (-high, -low) if isinstance(node.op, ast.USub) else (low, high)
    if isinstance(node, ast.BinOp):
        (a, b), (c, d) = (_bounds(node.left, names, columns, text),
                          _bounds(node.right, names, columns, text))
        if isinstance(node.op, ast.Add):
            return a + c, b + d
        if isinstance(node.op, ast.Sub):
            return a - d, b - c
        if isinstance(node.op, ast.Div):
            if c <= 0 <= d:
                raise FormulaError(
                    f"'{text}': the divisor '{ast.unparse(node.right)}' can be 0 within the "
                    f"schema's bounds [{c:g}, {d:g}]; narrow the bounds or change the formula"
                )
            c, d = 1.0 / d, 1.0 / c
        products = [a * c, a * d, b * c, b * d]
        return min(products), max(products)
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    name = node.func.id
    spans = [_bounds(a, names, columns, text) for a in node.args]
    if name in ("min", "max"):
        pick = min if name == "min" else max
        return pick(s[0] for s in spans), pick(s[1] for s in spans)
    low, high = spans[0]
    if name == "abs":
        return (0.0 if low <= 0 <= high else min(abs(low), abs(high))), max(abs(low), abs(high))
    if (name == "log" and low <= 0) or (name == "sqrt" and low < 0):
        argument = ast.unparse(node.args[0])
        raise FormulaError(
            f"'{text}': {name}({argument}) is undefined where '{argument}' is "
            f"{'≤ 0' if name == 'log' else '< 0'}, and the schema's bounds allow [{low:g}, "
            f"{high:g}]; raise the lower bound, or shift the argument (log({argument} + 1))"
        )
    function = {"log": math.log, "exp": _exp, "sqrt": math.sqrt, "round": round}[name]
    return float(function(low)), float(function(high))


def _exp(value: float) -> float:
    return math.exp(value) if value < 709 else math.inf
