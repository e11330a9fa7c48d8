"""Read a sensitive CSV and check it against its schema, with errors that name column and row.

Nothing computed here is released: the loader only parses and validates. Rows are numbered as
data rows (1 = the first row after the header).
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.errors import DataError
from synthpriv.schema import CategoricalColumn, NumericColumn, Schema, repeated

MAX_SHOWN = 5


def read_table(path: str | Path, schema: Schema) -> pd.DataFrame:
    """The table at ``path`` with numeric columns parsed, categories checked, missing as NaN.

    Raises DataError for a missing/extra/duplicated column, a wrong delimiter, non-UTF-8 bytes, an
    empty file or one with no rows, ragged rows, unparsable or non-finite numbers, categories the
    schema does not list (unless its policy maps them to missing) and missing values where the
    schema says none may occur. A UTF-8 byte-order mark is accepted.
    """
    path = Path(path)
    reader = csv.reader(io.StringIO(_read_text(path)))
    rows = []
    try:
        for row in reader:
            if row:
                rows.append(row)
    except csv.Error as error:
        where = f"data row {len(rows)}" if rows else "the header"
        raise DataError(
            f"{path}: not a readable CSV at {where} (line {reader.line_num}): "
            f"{error}. Check the quoting there; synthpriv reads standard comma-separated files."
        ) from None
    header = [name.strip() for name in rows[0]]
    _check_header(header, schema, path)
    for number, row in enumerate(rows[1:], start=1):
        if len(row) != len(header):
            hint = (
                "an unclosed quote? The quoted field runs on over the following lines"
                if any("\n" in field for field in row)
                else "a stray delimiter or an unquoted comma?"
            )
            raise DataError(
                f"{path}: row {number} has {len(row)} fields, the header has {len(header)}. "
                f"Fix that row ({hint})."
            )
    if len(rows) == 1:
        raise DataError(f"{path}: the file has a header but no rows. A table needs at least one row.")
    raw = pd.DataFrame(rows[1:], columns=header, dtype=str)
    table = pd.DataFrame(index=raw.index)
    for name in header:
        column = schema.column(name)
        values = raw[name].str.strip()
        table[name] = _parse_column(values, column, schema.unknown_categories, path)
    return table


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DataError(f"data file not found: {path}. Check 'data.path' in the config.") from None
    except IsADirectoryError:
        raise DataError(f"data path is a folder, not a CSV file: {path}") from None
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataError(
            f"{path}: not UTF-8 (invalid byte at offset {error.start}). Re-save the file as UTF-8."
        ) from None
    if not text.strip():
        raise DataError(f"{path}: the file is empty. Expected a header row and data rows.")
    return text


def _check_header(header: list[str], schema: Schema, path: Path) -> None:
    duplicated = repeated(header)
    if duplicated:
        raise DataError(f"{path}: the header repeats column(s) {duplicated}; name each column once.")
    expected = schema.names
    missing = [n for n in expected if n not in header]
    extra = [n for n in header if n not in expected]
    if len(header) == 1 and len(expected) > 1:
        delimiter = next((d for d in (";", "\t", "|") if d in header[0]), None)
        if delimiter is not None:
            raise DataError(
                f"{path}: the header is one column '{header[0][:60]}...'; the file seems to use "
                f"{delimiter!r} as delimiter. synthpriv reads comma-separated files: convert it."
            )
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"column(s) not in the schema {extra}")
        raise DataError(
            f"{path}: the header does not match the schema: {'; '.join(parts)}. "
            f"Expected exactly {expected}. Fix the file or the schema."
        )


def _rows(mask: np.ndarray) -> str:
    rows = (np.flatnonzero(mask) + 1).tolist()
    shown = ", ".join(map(str, rows[:MAX_SHOWN]))
    return f"row {shown}" + (f" and {len(rows) - MAX_SHOWN} more" if len(rows) > MAX_SHOWN else "")


def _parse_column(
    values: pd.Series, column: CategoricalColumn | NumericColumn, policy: str, path: Path
) -> pd.Series:
    is_missing = (values == "").to_numpy()
    if is_missing.any() and not column.missing:
        raise DataError(
            f"{path}: column '{column.name}' has missing values at {_rows(is_missing)}, but the "
            f"schema says it has none. Fill them, or set 'missing: true' for '{column.name}'."
        )
    if isinstance(column, CategoricalColumn):
        known = values.isin(column.categories).to_numpy() | is_missing
        if not known.all():
            if policy == "missing":
                return values.where(known & ~is_missing)
            unknown = sorted(set(values[~known]))[:MAX_SHOWN]
            raise DataError(
                f"{path}: column '{column.name}' has value(s) {unknown} not in the schema's "
                f"categories, at {_rows(~known)}. Add them to the schema's categories, fix the "
                "data, or set 'unknown_categories: missing'."
            )
        return values.where(~is_missing)
    numbers = pd.to_numeric(values.where(~is_missing), errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(numbers) & ~is_missing
    if bad.any():
        examples = sorted(set(values[bad]))[:MAX_SHOWN]
        raise DataError(
            f"{path}: column '{column.name}' is {column.kind} but has non-numeric value(s) "
            f"{examples} at {_rows(bad)}. Fix them, or leave the cell empty for a missing value."
        )
    infinite = np.isinf(numbers)
    if infinite.any():
        raise DataError(
            f"{path}: column '{column.name}' has infinite value(s) at {_rows(infinite)}. "
            "Replace them with a finite number or an empty cell."
        )
    fractional = (numbers != np.round(numbers)) & ~is_missing
    if column.kind == "integer" and fractional.any():
        examples = sorted(set(values[fractional]))[:MAX_SHOWN]
        raise DataError(
            f"{path}: column '{column.name}' is integer but has non-integer value(s) {examples} "
            f"at {_rows(fractional)}. Round them, or declare the column 'continuous'."
        )
    return pd.Series(numbers, index=values.index, name=column.name)

