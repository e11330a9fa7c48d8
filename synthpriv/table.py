"""Read a sensitive CSV and check it against its schema, with errors that name column and row.

Nothing computed here is released: the loader only parses and validates. Rows are numbered as
data rows (1 = the first row after the header).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np
import pandas as pd

from synthpriv.datetimes import parse_times
from synthpriv.encoding import derive
from synthpriv.errors import DataError
from synthpriv.schema import (
    AutoColumn,
    CategoricalColumn,
    DatetimeColumn,
    DerivedFormula,
    IdColumn,
    NumericColumn,
    Schema,
    TextColumn,
    repeated,
)

MAX_SHOWN = 5
MAX_VALUE_CHARS = 40
OTHER_DELIMITERS = ("\t", ";", "|")  # the delimiters a header alone can reveal (schema infer)
WHITESPACE = "whitespace"  # data.delimiter: runs of spaces and tabs separate the fields


class DelimitedPath(type(Path())):  # type: ignore[misc]
    """The path of an input CSV together with the one character that separates its fields
    (``data.delimiter``; ``schema infer --delimiter``). Every reader of the input (``read_table``,
    ``synthpriv.chunks``, the evaluation's samples, the dask workers) reads the delimiter from the
    path it is given, so the one setting reaches them all; a plain ``Path`` (or a path derived
    from this one) is comma-separated. Public: a fact about the file format, not about the rows."""

    delimiter = ","

    def __reduce__(self) -> tuple:  # a dask worker receives the delimiter with the path
        return delimited, (str(self), self.delimiter)


def delimited(path: str | Path, delimiter: str = ",") -> Path:
    """``path`` read with ``delimiter``: a ``DelimitedPath``, or a plain ``Path`` for ','."""
    if delimiter == ",":
        return Path(path)
    marked = DelimitedPath(path)
    marked.delimiter = delimiter
    return marked


def as_path(path: str | Path) -> Path:
    """``path`` as a Path, keeping a ``DelimitedPath``'s delimiter (``Path(path)`` would drop it)."""
    return path if isinstance(path, Path) else Path(path)


def delimiter_of(path: Path) -> str:
    """The character separating the fields of the CSV at ``path`` (',' unless it says)."""
    return getattr(path, "delimiter", ",")


def parse_delimiter(value: str, key: str) -> str:
    """The delimiter ``value`` written for ``key`` (data.delimiter, --delimiter): one character
    other than a quote, a line break or a space, or 'tab' / '\\t' (as a shell or an unquoted
    YAML value passes a tab), or 'whitespace' (runs of spaces and tabs: ``csv_rows``). A
    ValueError naming ``key`` and the fix otherwise."""
    if value in ("tab", "\\t"):
        return "\t"
    if value == WHITESPACE:
        return value
    if len(value) != 1 or value in "\"\r\n ":
        raise ValueError(
            f"{key} must be one character that separates the fields, such as ',' (the default), "
            f"';', '|' or a tab (write 'tab' or \"\\t\"), or 'whitespace' (runs of spaces and "
            f"tabs); found {value!r}. Fix {key}.")
    return value


def delimiter_name(delimiter: str) -> str:
    """``delimiter`` as a job config writes it, double-quoted ("\\t" for a tab: YAML reads the
    escape only inside double quotes); 'whitespace' bare."""
    if delimiter == WHITESPACE:
        return WHITESPACE
    return '"\\t"' if delimiter == "\t" else f'"{delimiter}"'


def csv_rows(lines: Iterable[str], delimiter: str) -> Any:
    """A ``csv.reader`` of ``lines`` (it counts ``line_num``) split by ``delimiter``. For
    WHITESPACE: one record per line, each run of spaces and tabs one separator, spaces and tabs
    at a line's ends ignored (statsmodels' ``sep=r"\\s+"`` files), double quotes as in CSV (a
    quoted field may hold spaces; a tab inside one reads as a space). A line of spaces only is
    an empty row, skipped as a blank line is."""
    if delimiter != WHITESPACE:
        return csv.reader(lines, delimiter=delimiter)
    return csv.reader((_spaced(line) for line in lines), delimiter=" ", skipinitialspace=True)


def _spaced(line: str) -> str:
    body = line.rstrip("\r\n")
    return body.replace("\t", " ").strip(" ") + line[len(body):]


def _examples(values: pd.Series) -> list[str]:
    """Up to MAX_SHOWN distinct offending values, each cut to MAX_VALUE_CHARS for the message."""
    return [v if len(v) <= MAX_VALUE_CHARS else v[:MAX_VALUE_CHARS] + f"…({len(v)} chars)"
            for v in sorted(set(values))[:MAX_SHOWN]]


def read_table(path: str | Path, schema: Schema) -> pd.DataFrame:
    """The table at ``path`` with numeric columns parsed, categories checked, missing as NaN.

    Raises DataError for a missing/extra/duplicated column, a wrong delimiter, non-UTF-8 bytes, an
    empty file or one with no rows, ragged rows, unparsable or non-finite numbers, categories the
    schema does not list (unless its policy maps them to missing) and missing values where the
    schema says none may occur. A UTF-8 byte-order mark is accepted.
    """
    path = as_path(path)
    rows = _raw_rows(path)
    header = header_names(rows[0])
    _check_header(header, schema, path)
    _check_rows(rows, path)
    return parse_chunk(pd.DataFrame(rows[1:], columns=header, dtype=str), schema, path, first_row=1,
                       seen_ids={})


def file_rows(path: str | Path) -> list[list[str]]:
    """Every non-empty row of the file at ``path`` as text cells, the header first, read with
    its delimiter (``csv_rows``). Raises DataError for unreadable quoting, non-UTF-8 bytes, an
    empty file or one with no rows, and a row with another number of fields than the header
    (naming the row). Nothing here is released."""
    path = as_path(path)
    rows = _raw_rows(path)
    _check_rows(rows, path)
    return rows


def _raw_rows(path: Path) -> list[list[str]]:
    reader = csv_rows(io.StringIO(_read_text(path)), delimiter_of(path))
    rows = []
    try:
        for row in reader:
            if row:
                rows.append(row)
    except csv.Error as error:
        where = f"data row {len(rows)}" if rows else "the header"
        raise DataError(
            f"{path}: not a readable CSV at {where} (line {reader.line_num}): "
            f"{error}. Check the quoting there, and the delimiter (data.delimiter: "
            f"{delimiter_name(delimiter_of(path))} now)."
        ) from None
    return rows


def _check_rows(rows: list[list[str]], path: Path) -> None:
    for number, row in enumerate(rows[1:], start=1):
        if len(row) != len(rows[0]):
            raise ragged_row_error(path, number, row, len(rows[0]))
    if len(rows) == 1:
        raise no_rows_error(path)


def check_frame(frame: pd.DataFrame, schema: Schema, what: str = "the DataFrame") -> pd.DataFrame:
    """A table given in memory (the Python API), checked and typed by ``read_table``'s rules, as
    if it had been written to CSV: cells as text (missing as empty, whole floats without a
    decimal point), then the same header check and per-column rules and messages."""
    if len(frame) == 0:
        raise DataError(f"{what} has no rows. A table needs at least one row.")
    header = header_names([str(name) for name in frame.columns])
    _check_header(header, schema, Path(what))
    raw = pd.DataFrame({name: _as_text(frame[column]) for name, column in
                        zip(header, frame.columns, strict=True)})
    raw.index = pd.RangeIndex(len(raw))
    return parse_chunk(raw, schema, Path(what), first_row=1, seen_ids={})


def _as_text(values: pd.Series) -> pd.Series:
    """Cells as a CSV would hold them: missing as '', 39.0 as '39', 0.5 as '0.5'."""
    def text(value: object) -> str:
        if value is None or (isinstance(value, float) and np.isnan(value)) or value is pd.NA:
            return ""
        if isinstance(value, float | np.floating):
            return np.format_float_positional(float(value), trim="-")
        if isinstance(value, pd.Timestamp):  # ISO 8601, as a date/datetime column reads it
            return value.isoformat()
        return str(value)

    return pd.Series([text(v) for v in values.to_numpy(dtype=object)], dtype=object)


def frame_cells(frame: pd.DataFrame) -> pd.DataFrame:
    """A DataFrame as ``pd.read_csv(header=None, dtype=str)`` reads the CSV it would write: the
    header as the first row, then every cell as text (``_as_text``)."""
    names = [str(name) for name in frame.columns]
    cells = pd.DataFrame({i: _as_text(frame.iloc[:, i]) for i in range(frame.shape[1])})
    return pd.concat([pd.DataFrame([names]), cells], ignore_index=True)


def header_names(row: list[str]) -> list[str]:
    """The column names of a CSV header row: each cell with surrounding whitespace removed, and
    nothing else. The one reading rule for ``read_table``, the chunked readers and ``schema
    infer``, so a drafted schema names the columns as a run reads them. An empty header cell (an
    unnamed column, such as the row index pandas' ``to_csv`` writes first) is the name ``''``:
    not pandas' ``Unnamed: 0``."""
    return [name.strip() for name in row]


def parse_chunk(raw: pd.DataFrame, schema: Schema, path: Path, first_row: int,
                seen_ids: dict[str, dict[str, int]] | None = None) -> pd.DataFrame:
    """Parse and check string cells ``raw`` (columns named as in the schema, rows numbered from
    ``first_row``): the one per-column rule set shared by ``read_table`` and the chunked readers
    (synthpriv.chunks), so errors name the same rows whichever reads the file.

    Ignored columns, and columns the schema does not name (``extra_columns: ignore``), are
    dropped unread. The cells of id and text columns are checked (an id must not repeat: within
    this chunk, and against ``seen_ids``, {column: {key: row}}, which is updated) and then
    dropped too: they come back all missing, so no id or text value reaches the model. The one
    exception, a person column (``IdColumn.person``, set by data.person), comes back as read: the
    job bounds each person's rows with it and blanks it at once (synthpriv.persons)."""
    released = set(schema.names)
    read = {c.name: c for c in schema.columns if c.name in released}
    parsed: dict[str, pd.Series] = {}
    for name in raw.columns:
        if name not in read:
            continue
        column = read[name]
        values = raw[name]
        if isinstance(column, IdColumn) and column.person:  # kept for the bounding only
            parsed[name] = values.str.strip().replace("", np.nan).astype(object)
            continue
        if isinstance(column, IdColumn | TextColumn):
            if isinstance(column, IdColumn) and column.refuse_repeats:
                check_unique(values, column, path, first_row, seen_ids)
            parsed[name] = pd.Series(np.nan, index=raw.index, dtype=object)
            continue
        if schema.strip_labels or isinstance(column, NumericColumn):
            values = values.str.strip()
        parsed[name] = _parse_column(values, column, schema, path, first_row)
    table = pd.DataFrame(parsed, index=raw.index)  # one frame at once: no fragmented inserts
    for column in schema.columns:
        if column.derived_from is not None:
            _check_derived(table, column, path, first_row)
    return table


def check_unique(values: pd.Series, column: IdColumn, path: Path, first: int,
                 seen: dict[str, dict[str, int]] | None) -> None:
    """Refuse a repeated key of id ``column`` (naming both rows), or a missing one where the
    schema allows none. A refusal that depends on single rows (see the README's list)."""
    is_missing = (values.str.strip() == "").to_numpy()
    if is_missing.any() and not column.missing:
        raise DataError(
            f"{path}: id column '{column.name}' has missing keys at {_rows(is_missing, first)}, "
            f"but the schema says it has none. Fill them, or set 'missing: true'.")
    keys = seen.setdefault(column.name, {}) if seen is not None else {}
    present = values[~is_missing]
    rows = pd.Series(np.flatnonzero(~is_missing) + first, index=present.index)
    repeat = present.duplicated().to_numpy() | present.isin(keys.keys()).to_numpy()
    if repeat.any():
        at = int(np.argmax(repeat))
        key, row = present.iloc[at], int(rows.iloc[at])
        earlier = keys.get(key, int(rows[present == key].iloc[0]))
        shown = key if len(key) <= MAX_VALUE_CHARS else key[:MAX_VALUE_CHARS] + "…"
        raise DataError(
            f"{path}: column '{column.name}' is declared id (a unique key), but the key "
            f"'{shown}' repeats at rows {earlier} and {row}. Fix the data, or declare the "
            "column 'kind: categorical' (or 'text', or 'ignore: true') if keys may repeat.")
    if seen is not None:
        keys.update(zip(present.tolist(), rows.tolist(), strict=True))


def coerce_numbers(values: pd.Series, column: NumericColumn) -> pd.Series:
    """``values`` (text, or missing) as ``column``'s numbers: a cell that is not a finite number
    is missing; an integer column's fractions are rounded to the nearest whole number."""
    text = values.astype(object).where(values.notna(), "").astype(str).str.strip()
    numbers = pd.to_numeric(text, errors="coerce").to_numpy(dtype=float)
    numbers[~np.isfinite(numbers)] = np.nan
    if column.kind == "integer":
        numbers = np.round(numbers)
    return pd.Series(numbers, index=values.index, name=column.name)


def _check_derived(
    table: pd.DataFrame, column: CategoricalColumn | NumericColumn, path: Path, first: int
) -> None:
    """Refuse rows where a derived column disagrees with its source through the public mapping
    or formula (to within the column's precision, else a relative 10⁻⁶: the file may write fewer
    digits than a float holds): the synthesiser would silently replace those values."""
    rule = column.derived_from
    expected, actual = derive(column, table), table[column.name]
    both_missing = (expected.isna() & actual.isna()).to_numpy()
    if isinstance(rule, DerivedFormula):
        precision = getattr(column, "precision", None)
        slack = 0.5 * 10.0**-precision if precision is not None else 0.0
        close = np.isclose(expected.to_numpy(dtype=float, na_value=np.nan),
                           actual.to_numpy(dtype=float, na_value=np.nan), rtol=1e-6,
                           atol=slack + 1e-9)
        differ = ~both_missing & ~close
        what = f"derived_from formula '{rule.formula}', but disagrees with it"
    else:
        differ = ~both_missing & (expected != actual).fillna(True).to_numpy(dtype=bool)
        what = f"derived_from '{rule.column}', but disagrees with the schema's mapping"
    if differ.any():
        raise DataError(
            f"{path}: column '{column.name}' is declared {what} at {_rows(differ, first)}. Fix "
            f"the data or the {'formula' if isinstance(rule, DerivedFormula) else 'mapping'}, "
            f"or remove derived_from from '{column.name}' to model it as a column of its own."
        )


# The messages below are raised by read_table and by the chunked readers alike (one wording).


def ragged_row_error(path: Path, number: int, row: list[str], expected: int) -> DataError:
    """Row ``number`` has the wrong number of fields; a field spanning lines hints at a quote."""
    hint = (
        "an unclosed quote? The quoted field runs on over the following lines"
        if any("\n" in field for field in row)
        else "a stray delimiter or an unquoted comma?"
    )
    spaced = ("" if delimiter_of(path) != WHITESPACE else
              " The file is read with runs of spaces and tabs as the separator (data.delimiter: "
              "whitespace): quote a value holding a space; if the file is comma-separated (one "
              "column whose name holds a space), set data.delimiter: \",\" (schema infer "
              "--delimiter \",\").")
    return DataError(
        f"{path}: row {number} has {len(row)} fields, the header has {expected}. "
        f"Fix that row ({hint}).{spaced}"
    )


def no_rows_error(path: Path) -> DataError:
    return DataError(f"{path}: the file has a header but no rows. A table needs at least one row.")


def not_utf8_error(path: Path, offset: int) -> DataError:
    return DataError(f"{path}: not UTF-8 (invalid byte at offset {offset}). Re-save the file as UTF-8.")


def empty_file_error(path: Path) -> DataError:
    return DataError(f"{path}: the file is empty. Expected a header row and data rows.")


def open_binary(path: Path) -> BinaryIO:
    """``path`` opened for reading bytes, or a DataError naming the config key to fix."""
    try:
        return path.open("rb")
    except FileNotFoundError:
        raise DataError(
            f"data file not found: {written_and_resolved(path)}. Check the path: in a job config "
            "(data.path, data.holdout) it is relative to the config's folder, on the command line "
            "to the current folder."
        ) from None
    except IsADirectoryError:
        raise DataError(
            f"data path is a folder, not a CSV file: {written_and_resolved(path)}"
        ) from None


def written_and_resolved(path: Path) -> str:
    """``path`` as given, and as resolved when that differs (a relative path)."""
    return str(path) if path.is_absolute() else f"'{path}' (resolved: {path.resolve()})"


def _read_text(path: Path) -> str:
    with open_binary(path) as handle:
        data = handle.read()
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise not_utf8_error(path, error.start) from None
    if not text.strip():
        raise empty_file_error(path)
    return text


def duplicate_header_message(path: Path, duplicated: list[str]) -> str:
    """The header names some columns more than once (an empty name: several unnamed columns)."""
    unnamed = (" Several columns have no name (''): name each in the header, or drop the columns "
               "that are a row index." if "" in duplicated else "")
    return f"{path}: the header repeats column(s) {duplicated}; name each column once.{unnamed}"


def header_delimiters(header: list[str]) -> list[str]:
    """The other delimiters (tab, ';', '|') held by a header read as one column: what separates
    the fields of a file read with the wrong delimiter. Reads the header only (public)."""
    return [d for d in OTHER_DELIMITERS if d in header[0]] if len(header) == 1 else []


def header_delimiter(header: list[str]) -> str:
    """The delimiter a header read with ',' (``header``) shows: ',' unless it is one column
    holding exactly one of tab, ';' and '|' (then that one), or none of them but two or more
    words apart by spaces, or tabs mixed with spaces or in runs (then WHITESPACE: a space-
    separated file; a one-column CSV whose name holds a space is read so too, and is refused
    at its first row with the fix). Reads the header only (public)."""
    found = header_delimiters(header)
    if found == ["\t"] and _mixed(header[0]):
        return WHITESPACE
    if len(found) == 1:
        return found[0]
    if not found and len(header) == 1 and len(header[0].split()) > 1:
        return WHITESPACE
    return ","


def _mixed(line: str) -> bool:
    """Whether a header line's tabs come in runs or next to spaces (a name with a space at an
    end, or an empty name between two tabs): spaces and tabs mixed as one separator, not a
    tab-separated header (whose first name may be empty: pandas' unnamed index)."""
    names = line.split("\t")
    return any(n != n.strip(" ") for n in names) or any(n == "" for n in names[1:-1])


def refuse_other_delimiter(header: list[str], path: Path) -> None:
    """Refuse a header that is one column holding a tab, ';' or '|': a file separated by another
    delimiter than the one it is read with, read as one column. The header is public (the safe
    draft reads it), so this refusal reads nothing private."""
    found = header_delimiters(header)
    if found and header_delimiter(header) != WHITESPACE:  # tabs mixed with spaces: not a TSV
        shown = " or ".join(repr(d) for d in found)
        raise DataError(
            f"{path}: the header is one column '{header[0][:60]}...' when read with "
            f"{delimiter_of(path)!r} as delimiter; the file seems to use {shown}. Set "
            f"data.delimiter: {delimiter_name(found[0])} in the job config (and draft the schema "
            f"with 'synthpriv schema infer --delimiter {delimiter_name(found[0])}')."
        )


def refuse_spaced_header(header: list[str], path: Path) -> None:
    """Refuse a header read as one column of words apart by spaces, by a run whose schema
    names several columns: a whitespace-separated file read without data.delimiter: whitespace
    (``header_delimiter``). The header is public."""
    if delimiter_of(path) != WHITESPACE and header_delimiter(header) == WHITESPACE:
        raise DataError(
            f"{path}: the header is one column '{header[0][:60]}' when read with "
            f"{delimiter_of(path)!r} as delimiter, and the schema names several columns: the "
            "file seems to separate its fields with spaces. Set data.delimiter: whitespace in "
            "the job config (runs of spaces and tabs as one separator; 'synthpriv schema infer' "
            "detects it from the header)."
        )


def _check_header(header: list[str], schema: Schema, path: Path) -> None:
    duplicated = repeated(header)
    if duplicated:
        raise DataError(duplicate_header_message(path, duplicated))
    expected = schema.names  # ignored columns may be absent; extra ones may be ignored
    missing = [n for n in expected if n not in header]
    extra = [] if schema.extra_columns == "ignore" else [
        n for n in header if n not in schema.declared_names]
    if len(expected) > 1:
        refuse_other_delimiter(header, path)
        refuse_spaced_header(header, path)
    if missing or extra:
        parts = []
        if missing:
            parts.append(f"missing column(s) {missing}")
        if extra:
            parts.append(f"column(s) not in the schema {extra}")
        unnamed = ""
        if "" in extra and any(name.startswith("Unnamed: ") for name in missing):
            unnamed = (" An empty header cell is read as the name '' (not pandas' 'Unnamed: 0'): "
                       "write name: '' in the schema, or name the column in the file.")
        raise DataError(
            f"{path}: the header does not match the schema: {'; '.join(parts)}. "
            f"Expected exactly {expected}. Fix the file or the schema (a column to leave out: "
            f"'ignore: true'; every column the schema does not name: 'extra_columns: ignore')."
            f"{unnamed}"
        )


def _rows(mask: np.ndarray, first: int = 1) -> str:
    rows = (np.flatnonzero(mask) + first).tolist()
    shown = ", ".join(map(str, rows[:MAX_SHOWN]))
    return f"row {shown}" + (f" and {len(rows) - MAX_SHOWN} more" if len(rows) > MAX_SHOWN else "")


def _numeric_hint(unknown: pd.Series, column: CategoricalColumn) -> str:
    """A hint when every unknown value of categorical ``column`` is a number: the column may be
    numeric (a count or a measure declared categorical), or its categories may be written in
    another form than the data's ('1' against '1.0': categories compare as text)."""
    if pd.to_numeric(unknown, errors="coerce").isna().any():
        return ""
    return (
        f" These values are all numbers: if '{column.name}' is numeric, declare it 'kind: integer' "
        "or 'kind: continuous' with public 'lower' and 'upper'; if it is a code, list each "
        "category exactly as the data writes it (categories compare as text: '1' is not '1.0')."
    )


def _spaces_hint(unknown: pd.Series, column: CategoricalColumn) -> str:
    """A hint when the unknown values are categories up to leading/trailing spaces."""
    if not unknown.str.strip().isin(column.categories).all():
        return ""
    return (" These values are categories up to leading/trailing spaces: labels are compared as "
            "written. Write them in the schema as the data does (quoted, e.g. ' State-gov'), or "
            "set 'strip_labels: true' in the schema to read every label stripped.")


def _parse_times(values: pd.Series, column: DatetimeColumn, is_missing: np.ndarray, path: Path,
                 first: int) -> pd.Series:
    """A date/datetime column's cells as days/seconds since the epoch (synthpriv.datetimes);
    a cell that does not parse refuses the table (naming column and rows) unless it coerces."""
    numbers = parse_times(values, column.kind, column.format, column.timezone)
    if column.coerce:
        return pd.Series(numbers, index=values.index, name=column.name)
    if is_missing.any() and not column.missing:
        raise DataError(
            f"{path}: column '{column.name}' has missing values at {_rows(is_missing, first)}, but the "
            f"schema says it has none. Fill them, or set 'missing: true' for '{column.name}'.")
    bad = np.isnan(numbers) & ~is_missing
    if bad.any():
        written = f"format '{column.format}'" if column.format else "ISO 8601 (e.g. 2021-03-04" + (
            "T10:00:00+01:00)" if column.kind == "datetime" else ")")
        raise DataError(
            f"{path}: column '{column.name}' is {column.kind} but has value(s) "
            f"{_examples(values[bad])} that do not read as {written}, at {_rows(bad, first)}. Fix "
            "them, declare the column's 'format' (a strftime pattern such as '%d/%m/%Y'), or "
            "leave the cell empty for a missing value.")
    return pd.Series(numbers, index=values.index, name=column.name)


def _parse_column(
    values: pd.Series, column: CategoricalColumn | NumericColumn | AutoColumn, schema: Schema,
    path: Path, first: int = 1,
) -> pd.Series:
    """A column's cells parsed. A category is kept as written (spaces included) unless the schema
    strips labels; a cell of spaces only is missing. A value outside the categories is read as
    the column's ``other`` label, else as missing or an error (the column's policy, else the
    schema's). A column with no categories listed, or of kind auto, keeps every value as text:
    the domain step chooses. A numeric column that coerces reads every cell that is not a finite
    number as missing and rounds fractions in an integer column (no single cell refuses it)."""
    is_missing = (values.str.strip() == "").to_numpy()
    if isinstance(column, AutoColumn):
        return values.where(~is_missing)
    if isinstance(column, DatetimeColumn):
        return _parse_times(values, column, is_missing, path, first)
    if isinstance(column, NumericColumn) and column.coerce:
        return coerce_numbers(values, column)
    if is_missing.any() and not column.missing:
        raise DataError(
            f"{path}: column '{column.name}' has missing values at {_rows(is_missing, first)}, but the "
            f"schema says it has none. Fill them, or set 'missing: true' for '{column.name}'."
        )
    if isinstance(column, CategoricalColumn):
        if column.discovered:
            return values.where(~is_missing)
        known = values.isin(column.categories).to_numpy() | is_missing
        if not known.all():
            if column.other is not None:
                return values.where(known, column.other).where(~is_missing)
            if (column.unknown_categories or schema.unknown_categories) == "missing":
                return values.where(known & ~is_missing)
            unknown = _examples(values[~known])
            raise DataError(
                f"{path}: column '{column.name}' has value(s) {unknown} not in the schema's "
                f"categories, at {_rows(~known, first)}. Add them to the schema's categories, fix the "
                f"data, or set 'unknown_categories: missing'.{_numeric_hint(values[~known], column)}"
                f"{_spaces_hint(values[~known], column)}"
            )
        return values.where(~is_missing)
    numbers = pd.to_numeric(values.where(~is_missing), errors="coerce").to_numpy(dtype=float)
    bad = np.isnan(numbers) & ~is_missing
    if bad.any():
        examples = _examples(values[bad])
        raise DataError(
            f"{path}: column '{column.name}' is {column.kind} but has non-numeric value(s) "
            f"{examples} at {_rows(bad, first)}. Fix them, or leave the cell empty for a missing value."
        )
    infinite = np.isinf(numbers)
    if infinite.any():
        raise DataError(
            f"{path}: column '{column.name}' has infinite value(s) at {_rows(infinite, first)}. "
            "Replace them with a finite number or an empty cell."
        )
    fractional = (numbers != np.round(numbers)) & ~is_missing
    if column.kind == "integer" and fractional.any():
        examples = _examples(values[fractional])
        raise DataError(
            f"{path}: column '{column.name}' is integer but has non-integer value(s) {examples} "
            f"at {_rows(fractional, first)}. Round them, or declare the column 'continuous'."
        )
    return pd.Series(numbers, index=values.index, name=column.name)

