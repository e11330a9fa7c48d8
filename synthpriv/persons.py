"""Person-level privacy (``data.person``): bound each person's rows, then everything counts persons.

With ``data.person: <column>`` the guarantee is per person: neighbouring tables differ by all the
rows of one person (added or removed; under replace-one, replaced by another person's). Two
steps make every stage's sensitivity honest for that relation:

1. *Bounding* (``bound_persons``), in the job's data path before anything is counted (the domain
   step, the hold-back and the stages all read its output): each person keeps at most
   k = ``data.rows_per_person`` rows, chosen uniformly at random by a keyed priority — one 64-bit
   word per row from the job's random source (the OS CSPRNG unless a research seed is set) —
   keeping the k smallest per person. Never the first k: which rows a person keeps then depends
   on nothing but the CSPRNG, and no row order leaks through it. Rows whose person key is missing
   count as one person (the missing key), so they too contribute at most k rows. Memory: the
   table is read whole (an in-memory job; the dask engine is refused), plus one word and one
   int64 code per row.
2. *Sensitivity*: every mechanism's sensitivity is multiplied by the contribution bound k
   (``synthpriv.privacy.mechanisms``: a histogram's L2 sensitivity is k, since a person's k rows
   may fall in one cell; L1 likewise; discovery thresholds in ``synthpriv.privacy.partition``).
   The noise σ = z·Δ then grows by k while each event's multiplier z (what the Ledger prices) is
   the plan's, so the ledger's ε is the guarantee per person.

The person column is never modelled: its keys are read only here, then blanked, so neither the
encoder nor the release sees one; the release writes fresh keys (``synthpriv.ids``), one per
synthetic row — the number of rows per synthetic person is not modelled.

The count of rows dropped depends on the data: it goes to the operator's terminal only
(``BoundedTable.dropped``), never to the manifest, the report or the release.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from synthpriv.errors import ConfigError
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import AutoColumn, IdColumn, Schema


@dataclass(frozen=True)
class BoundedTable:
    """A table with at most k rows per person, its person column blanked; ``codes`` holds each
    kept row's person (an int64 code, each appearing ≤ k times; for DP-SGD's person sampling);
    ``dropped`` the rows bounding removed (data-dependent: the terminal only)."""

    table: pd.DataFrame
    codes: np.ndarray
    dropped: int


def bound_persons(
    table: pd.DataFrame, column: str, rows_per_person: int, source: RandomSource
) -> BoundedTable:
    """Keep at most ``rows_per_person`` rows of each person (``column``'s key; missing keys are
    one person), chosen at random by CSPRNG priorities, in the table's row order; blank
    ``column``. See the module docstring for why this bounds every stage's sensitivity."""
    if rows_per_person < 1:
        raise ValueError(f"rows_per_person must be ≥ 1, got {rows_per_person}")
    codes, _ = pd.factorize(table[column], use_na_sentinel=False)
    codes = codes.astype(np.int64)
    priority = source.uniform_words(len(table))
    order = np.lexsort((priority, codes))  # by person, then by random priority
    sorted_codes = codes[order]
    starts = np.r_[0, np.flatnonzero(np.diff(sorted_codes)) + 1]
    rank = np.arange(len(order)) - np.repeat(starts, np.diff(np.r_[starts, len(order)]))
    keep = np.zeros(len(table), dtype=bool)
    keep[order[rank < rows_per_person]] = True
    kept = table.loc[keep].reset_index(drop=True)
    kept[column] = pd.Series(np.nan, index=kept.index, dtype=object)
    return BoundedTable(kept, codes[keep], int((~keep).sum()))


def person_schema(schema: Schema, column: str, source: str) -> Schema:
    """``schema`` with the person ``column`` made an id column whose keys may repeat and are
    read for the bounding only (``IdColumn.person``). Its declared kind must be ``id`` (its
    ``format`` serves the fresh keys) or ``auto`` (the safe draft's): a person key is never
    modelled, so any other kind is refused with the fix."""
    if column not in schema.declared_names:
        raise ConfigError(
            f"{source}: data.person '{column}' is not a column of the schema {schema.names}. "
            "Name the column that identifies a person, and declare it in the schema "
            "(kind: id).")
    declared = schema.column(column)
    if isinstance(declared, IdColumn):
        person = declared.model_copy(update={"person": True, "missing": True})
    elif isinstance(declared, AutoColumn):
        person = IdColumn(name=column, kind="id", missing=True, person=True)
    else:
        raise ConfigError(
            f"{source}: data.person '{column}' is declared kind '{declared.kind}' in the schema, "
            "but a person column is never modelled or released. Declare it 'kind: id' (the "
            "release gets fresh keys, one per synthetic row).")
    columns = [person if c.name == column else c for c in schema.columns]
    return schema.model_copy(update={"columns": columns})


def hold_back_persons(codes: np.ndarray, held_persons: np.ndarray) -> np.ndarray:
    """Rows held back: those whose person's coin (``held_persons``, one bool per person code)
    came up, so a person is wholly a member or wholly held back."""
    return held_persons[codes] if len(codes) else np.zeros(0, dtype=bool)


def relation_phrase(row_phrase: str, person: str | None, rows_per_person: int) -> str:
    """What neighbouring tables differ by, in words (the manifest's statement): the relation's
    phrase per row (``runner.RELATIONS``), made per person with data.person."""
    if person is None:
        return row_phrase
    rows = f"all rows of one person (column '{person}'; up to {rows_per_person} rows each)"
    phrase = row_phrase.replace("one row", rows)
    return phrase + " by another person's" if phrase.startswith("replacing") else phrase


def relation_label(neighbouring: str, person: str | None, rows_per_person: int) -> str:
    """The short label: ``add_remove``, or ``add_remove, per person (up to k rows)``."""
    if person is None:
        return neighbouring
    return f"{neighbouring}, per person (up to {rows_per_person} rows)"
