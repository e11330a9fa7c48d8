"""Public constraints: rules every synthetic row obeys, enforced when sampling, at no budget.

A schema's ``constraints:`` list (models in ``synthpriv.schema``) holds three kinds of rule:

* ``check: Accept <= Apps`` — a comparison chain of formulas over numeric columns
  (``Top10 <= Top25 <= 100``, ``Enroll <= Accept + 10``; the language: ``synthpriv.formulas``);
* ``forbidden: {relationship: Wife, sex: Male}`` — a combination of categorical values no row has;
* ``allowed: {columns: [a, b], values: [[x, y], ...]}`` — the only combinations a row may have.

A rule speaks of the values a row has: a row with a missing value in a rule's columns obeys it.

Privacy: the rules are public (the schema is), and enforcing them reads only the fitted model's
draws: rows that break a rule are redrawn from the model (rejection sampling, so the rows follow
the model conditioned on the rules). Post-processing of the DP model: no budget, no data read.
Rules are checked against the schema when it is loaded (before any data is read): unknown
columns, wrong kinds, values outside the domain, a rule no row within the bounds can satisfy.
The evaluation (which reads the real table, and is not released) counts, per rule, the real and
the synthetic rows that break it: a rule the real data breaks is reported, never assumed true.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pandas as pd

from synthpriv.errors import SynthprivError
from synthpriv.formulas import FormulaError
from synthpriv.schema import (
    AllowedRule,
    CategoricalColumn,
    CheckRule,
    Constraint,
    ForbiddenRule,
    Schema,
)

MAX_ROUNDS = 100  # redraw rounds per block before the model is declared unable to obey the rules
MIN_ACCEPTANCE = 1e-3  # floor of the acceptance rate used to size a round's draw
MAX_DRAW_FACTOR = 50  # a round draws at most this many candidates per offending row (plus 1,000)


class ConstraintError(SynthprivError):
    """The fitted model almost never draws rows that obey the schema's constraints."""


def describe(rule: Constraint) -> str:
    """The rule as one line, for messages and reports."""
    if isinstance(rule, CheckRule):
        return rule.check
    if isinstance(rule, ForbiddenRule):
        parts = [f"{name} = {values[0]}" if len(values) == 1 else f"{name} in {values}"
                 for name, values in rule.forbidden.items()]
        return "forbidden: " + ", ".join(parts)
    combos = "; ".join("(" + ", ".join(values) + ")" for values in rule.allowed.values[:4])
    more = f"; … {len(rule.allowed.values)} in all" if len(rule.allowed.values) > 4 else ""
    return f"allowed ({', '.join(rule.allowed.columns)}): {combos}{more}"


def check_rules(schema: Schema) -> None:
    """Check every constraint against the schema; ValueError names the rule and the fix."""
    for number, rule in enumerate(schema.constraints, start=1):
        where = f"constraints[{number}] '{describe(rule)}'"
        if isinstance(rule, CheckRule):
            _check_inequality(schema, rule, where)
        elif isinstance(rule, ForbiddenRule):
            _check_forbidden(schema, rule, where)
        else:
            _check_allowed(schema, rule, where)


def _check_inequality(schema: Schema, rule: CheckRule, where: str) -> None:
    check = rule.parsed
    if not check.columns:
        raise ValueError(f"{where}: compares numbers only; name a column")
    bounds = schema.numeric_bounds(check.columns, where)
    try:
        never = check.impossible(bounds)
    except FormulaError as error:
        raise ValueError(f"{where}: {error}") from None
    if never is not None:
        raise ValueError(f"{where}: no row within the schema's bounds can satisfy it ({never}). "
                         "Fix the rule (its direction?) or the columns' bounds")


def _categorical(schema: Schema, name: str, where: str) -> CategoricalColumn:
    try:
        column = schema.column(name)
    except KeyError:
        raise ValueError(f"{where}: '{name}' is not a column of this schema {schema.names}") from None
    if column.kind == "auto":
        raise ValueError(f"{where}: '{name}' has kind auto (decided under DP at run time); "
                         "declare it categorical with its public categories to use it in a rule")
    if not isinstance(column, CategoricalColumn):
        raise ValueError(f"{where}: '{name}' is numeric; combinations are of categorical values "
                         "(for numbers write a check, such as 'a <= b')")
    if column.discovered:
        raise ValueError(f"{where}: '{name}' has no public categories (the domain step discovers "
                         "them under DP); list its categories in the schema to use it in a rule")
    return column


def _unknown_values(column: CategoricalColumn, values: list[str], where: str) -> None:
    unknown = [v for v in values if v not in column.categories]
    if unknown:
        raise ValueError(f"{where}: {unknown} are not categories of '{column.name}'; write each "
                         f"as the schema lists it ({column.categories[:8]}…)")


def _check_forbidden(schema: Schema, rule: ForbiddenRule, where: str) -> None:
    columns = [_categorical(schema, name, where) for name in rule.forbidden]
    for column in columns:
        _unknown_values(column, rule.forbidden[column.name], where)
    if all(not c.missing and set(c.categories) <= set(rule.forbidden[c.name]) for c in columns):
        raise ValueError(f"{where}: forbids every combination of {list(rule.forbidden)}, so no "
                         "row can satisfy it; list only the values a row may not combine")


def _check_allowed(schema: Schema, rule: AllowedRule, where: str) -> None:
    names = rule.allowed.columns
    if len(set(names)) != len(names):
        raise ValueError(f"{where}: columns repeat; name each once")
    columns = [_categorical(schema, name, where) for name in names]
    for combination in rule.allowed.values:
        if len(combination) != len(names):
            raise ValueError(f"{where}: the combination {combination} has {len(combination)} "
                             f"values for {len(names)} columns {names}; give one per column")
    for j, column in enumerate(columns):
        _unknown_values(column, [combination[j] for combination in rule.allowed.values], where)


def holds(rule: Constraint, table: pd.DataFrame) -> np.ndarray:
    """True on each row of ``table`` that obeys ``rule`` (a missing value in its columns obeys)."""
    if isinstance(rule, CheckRule):
        return rule.parsed.holds(table)
    if isinstance(rule, ForbiddenRule):
        matches = np.ones(len(table), dtype=bool)
        for name, values in rule.forbidden.items():
            matches &= table[name].isin(values).to_numpy()
        return ~matches
    columns = rule.allowed.columns
    allowed = pd.MultiIndex.from_tuples([tuple(v) for v in rule.allowed.values])
    rows = pd.MultiIndex.from_frame(table[columns].astype(object))
    missing = table[columns].isna().any(axis=1).to_numpy()
    return rows.isin(allowed) | missing


def breaking(rules: list[Constraint], table: pd.DataFrame) -> np.ndarray:
    """Per row and rule, True where the row breaks the rule (rows × rules)."""
    broken = np.zeros((len(table), len(rules)), dtype=bool)
    for j, rule in enumerate(rules):
        broken[:, j] = ~holds(rule, table)
    return broken


class Enforcer:
    """Rejection sampling of a block of rows against ``rules``: each offending row is replaced
    by a fresh draw from the model (``draw(n)``: n decoded i.i.d. rows) that obeys every rule.

    A round draws about 1.25× the offending rows / the acceptance rate seen so far (at most
    MAX_DRAW_FACTOR per row, plus 1,000); after MAX_ROUNDS rounds with rows still offending, a
    ConstraintError says which rule the model breaks and how often. ``figures`` (for the
    manifest: computed from the model's draws only) counts draws and rejections per rule.
    Post-processing: no budget.
    """

    def __init__(self, rules: list[Constraint], draw: Callable[[int], pd.DataFrame]) -> None:
        self.rules, self.draw = rules, draw
        self.drawn = self.accepted = 0
        self.rejected = np.zeros(len(rules), dtype=np.int64)
        self.figures: dict = {
            "method": "rejection: rows breaking a rule are redrawn from the model (post-processing)",
            "rows_drawn": 0, "acceptance_rate": None,
            "rules": [{"rule": describe(rule), "draws_breaking": 0} for rule in rules],
        }

    def _count(self, table: pd.DataFrame) -> np.ndarray:
        """Whether each row obeys every rule; tallies draws and rejections in ``figures`` (one
        dict, updated in place: the manifest that holds it is written after the rows)."""
        broken = breaking(self.rules, table)
        ok = ~broken.any(axis=1)
        self.drawn += len(table)
        self.accepted += int(ok.sum())
        self.rejected += broken.sum(axis=0)
        self.figures["rows_drawn"] = self.drawn
        self.figures["acceptance_rate"] = self.accepted / self.drawn if self.drawn else None
        for entry, count in zip(self.figures["rules"], self.rejected, strict=True):
            entry["draws_breaking"] = int(count)
        return ok

    def apply(self, block: pd.DataFrame) -> pd.DataFrame:
        """``block`` with every row that breaks a rule replaced by a draw that obeys them all."""
        if not self.rules or block.empty:
            return block
        ok = self._count(block)
        block = block.reset_index(drop=True)
        for _ in range(MAX_ROUNDS):
            bad = np.flatnonzero(~ok)
            if len(bad) == 0:
                return block
            rate = max(self.accepted / self.drawn, MIN_ACCEPTANCE)
            size = min(math.ceil(1.25 * len(bad) / rate) + 16, MAX_DRAW_FACTOR * len(bad) + 1000)
            candidates = self.draw(size).reset_index(drop=True)
            good = np.flatnonzero(self._count(candidates))[: len(bad)]
            chosen = bad[: len(good)]
            for name in block.columns:  # column by column: each keeps its dtype
                block.loc[chosen, name] = candidates[name].to_numpy()[good]
            ok[chosen] = True
        return self._fail(block, ok)

    def _fail(self, block: pd.DataFrame, ok: np.ndarray) -> pd.DataFrame:
        if ok.all():
            return block
        worst = int(np.argmax(self.rejected))
        rate = self.accepted / self.drawn
        raise ConstraintError(
            f"the schema's constraints: after {self.drawn:,} rows drawn from the fitted model, "
            f"only {rate:.3%} obey every rule, and {int((~ok).sum()):,} rows still break one "
            f"(most often '{describe(self.rules[worst])}': {self.rejected[worst]:,} draws). The "
            "model puts almost no mass where the rules hold. Check that the rule is true of the "
            "data (the evaluation of a run without it counts the real rows that break it), "
            "raise budget.epsilon, or model fewer columns so the model is less noisy."
        )


def constraint_report(rules: list[Constraint], real: pd.DataFrame, synthetic: pd.DataFrame) -> dict:
    """Per rule, the real and synthetic rows that break it (the evaluation report: NOT DP), and
    a note for each rule the real data breaks: it was enforced all the same."""
    return count_report(rules, breaking(rules, real).sum(axis=0), len(real),
                        breaking(rules, synthetic).sum(axis=0), len(synthetic))


def count_report(
    rules: list[Constraint], real_broken: np.ndarray, real_rows: int,
    synthetic_broken: np.ndarray, synthetic_rows: int,
) -> dict:
    """``constraint_report`` from counts: per rule, the rows of each table that break it
    (``breaking(...).sum(axis=0)``, summable over chunks) out of the table's rows."""
    entries, notes = [], []
    for j, rule in enumerate(rules):
        real_count, synthetic_count = int(real_broken[j]), int(synthetic_broken[j])
        entries.append({
            "rule": describe(rule),
            "real_rows_breaking": real_count,
            "real_fraction": real_count / max(real_rows, 1),
            "synthetic_rows_breaking": synthetic_count,
            "synthetic_fraction": synthetic_count / max(synthetic_rows, 1),
        })
        if real_count:
            notes.append(
                f"constraint '{describe(rule)}': {real_count:,} real rows "
                f"({real_count / real_rows:.2%}) break it, but the release enforces it as if it "
                "were true of every row. If the rule is not a fact about the data, remove it."
            )
    return {"rules": entries, "notes": notes}

