"""Which columns the evaluation scores: the one rule, read by utility, values, attacks and report.

A release does not model id, text or ignored columns (``Schema.modelled``): an id column holds
fresh keys drawn from its public format (synthpriv.ids), a text column the public placeholder or
values. Scoring them would count a disagreement the release makes by design (a TVD of 1.0 per id
column in every marginal that holds it), hand TSTR and the attacks a feature that is noise or a
row key, and make every figure worse for no reason. So the evaluation scores every other column
(derived columns included: the release fills them in and a reader sees them) and names the ones
left out, with why. The value yardstick still checks the left-out columns for real values copied
into the release (``values.copied_values``): a real key or paragraph there is a leak.
"""

from __future__ import annotations

from collections.abc import Sequence

from synthpriv.schema import IdColumn, IgnoredColumn, Schema, TextColumn

FRESH_KEYS = "id: fresh keys by design"
PERSON_KEYS = "id (data.person): fresh keys by design; read only to group the attacks per person"
PLACEHOLDER = "text: a placeholder or public values by design"
IGNORED = "ignored: never read (ignore: true)"


def left_out(columns: Sequence[str], schema: Schema | None, person: str | None = None) -> dict[str, str]:
    """The columns of ``columns`` the evaluation does not score, each with its reason: the id,
    text and ignored columns of ``schema`` and the person column (data.person). Without a schema
    (tables in memory) only the person column is known to be a key."""
    kinds: dict[str, str] = {}
    for column in schema.columns if schema is not None else ():
        if isinstance(column, IdColumn):
            kinds[column.name] = PERSON_KEYS if column.person else FRESH_KEYS
        elif isinstance(column, TextColumn):
            kinds[column.name] = PLACEHOLDER
        elif isinstance(column, IgnoredColumn):
            kinds[column.name] = IGNORED
    if person is not None:
        kinds[person] = PERSON_KEYS
    return {name: kinds[name] for name in columns if name in kinds}


def public_values(schema: Schema | None, name: str) -> set[str]:
    """The values a release may write in a left-out column without reading the data: a text
    column's placeholder and public values (none for an id: its keys are random)."""
    column = schema.column(name) if schema is not None and name in schema.declared_names else None
    if not isinstance(column, TextColumn):
        return set()
    return set(column.values or ()) | ({column.placeholder} if column.placeholder else set())


def left_out_note(reasons: dict[str, str]) -> str:
    """The report's one line on the columns left out (``reasons``: ``left_out``)."""
    named = "; ".join(f"'{name}' ({why})" for name, why in reasons.items())
    return (f"not scored (utility, values, attacks): {named}. The release does not model them; "
            "real values of them found in the release are still counted (values: copied).")


def blank_columns_note(domain_warnings: list[str]) -> str | None:
    """The note on columns the domain step released all missing (``domain_warnings``: the
    report's, ``evaluation.job.domain_warnings``), or None when there are none. Such a column's
    resolved domain is empty, and the evaluation reads the real table through the resolved
    schema, so its real cells read as missing too: it scores TVD 0 and looks perfect where the
    release lost it whole (statsmodels committee, 20 rows: 1-way TVD 0.000 for a release of
    blank columns; benchmarks/README.md "newtables")."""
    if not any("released all missing" in warning for warning in domain_warnings):
        return None
    return ("the columns released all missing (the domain step's WARNING) are read as missing on "
            "the real side too (their domain is empty), so they score TVD 0: the utility figures "
            "do not show that they were lost")
