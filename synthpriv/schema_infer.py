"""Draft a schema from a CSV. The full draft reads the data, so its domains are NOT private: a
person must review them and replace bounds and category lists with public knowledge before a
release. The safe draft (``safe=True``, ``synthpriv schema infer``, the default) reads the header only:
every column is ``kind: auto`` (``missing: true``), with no bounds, categories, bins or
precisions. The DP domain step of a run decides each kind and buys each domain under DP
(synthpriv.kinds, synthpriv.domain_stage), so the draft is the same file for any two tables with
the same header and can be kept as it is."""

from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pandas as pd
import yaml

from synthpriv.chunks import is_parquet, table_header
from synthpriv.draft_columns import decimals, draft_column, plain
from synthpriv.errors import DataError
from synthpriv.list_adoption import MIN_DISCOVERED
from synthpriv.public_lists import LISTS, list_holding, suggested_lists, value_set
from synthpriv.schema import repeated
from synthpriv.table import (
    WHITESPACE,
    delimited,
    delimiter_name,
    delimiter_of,
    duplicate_header_message,
    file_rows,
    frame_cells,
    header_delimiter,
    header_names,
    refuse_other_delimiter,
    written_and_resolved,
)

WARNING = (
    "WARNING: this schema was drafted FROM THE DATA. Its bounds, category lists, point masses "
    "(values holding 1 % of a column's cells or more) and precisions (the most decimals seen "
    "in a column's cells) are NOT private (a maximum is one person's "
    "value). Review every domain and replace it with public knowledge before you release "
    "anything made with it, then delete the 'drafted_by' line: until then, runs and the manifest "
    "flag the schema as a draft."
)
SAFE_HEADER = (
    "Drafted by 'synthpriv schema infer' from the file's header only: no cell was read, so "
    "this draft is safe to keep. Every column is 'kind: auto': a run decides under DP whether it "
    "is categorical, integer, continuous, a date or datetime, free text or an id (noisy counts "
    "of the cells that read as text, fractions, whole numbers or dates, and of the text values "
    "that occur once), then finds its bounds, categories and point masses under DP "
    "(budget.domain_share; budget.domain_delta_share for the discovery thresholds); cells that "
    "do not fit the kind decided are read as missing. Text is released empty and ids as fresh "
    "keys. The run prints and the manifest records the kinds and domains it chose. Where a "
    "kind or domain is public knowledge, write it here (kind: integer with lower/upper, kind: "
    "categorical with categories; ignore: true for a column to leave out): that saves budget."
)
DRAFTED_BY = "synthpriv schema infer"
__all__ = ["DRAFTED_BY", "SAFE_HEADER", "WARNING", "decimals", "infer_schema", "schema_yaml"]
MAX_SOURCE_CATEGORIES = 100  # a derived column's source: a code list, not an identifier


def infer_schema(source: str | Path | pd.DataFrame, safe: bool = False,
                 delimiter: str | None = None) -> tuple[dict, list[str]]:
    """A schema mapping drafted from the CSV at ``source`` (or a DataFrame, read as if written
    to CSV: ``table.check_frame``'s rule), and notes for the reviewer.

    Column names follow ``table.header_names``, the rule a run reads the file with: an unnamed
    column (an empty header cell) is drafted as ``name: ''``, not as pandas' ``Unnamed: 0``.
    Category labels are kept as the cells write them (spaces included), as a run reads them.
    ``safe``: the header only, every column ``kind: auto`` (see the module docstring).
    ``delimiter``: what separates a CSV's fields; None: ',' unless the header alone says
    otherwise (``file_delimiter``). A note gives the job config's data.delimiter line.
    """
    if isinstance(source, pd.DataFrame):
        path, delimiter_notes = Path("the DataFrame"), []
        if safe:
            return _safe_columns(header_names([str(c) for c in source.columns]), path)
        raw = frame_cells(source)
    else:
        path, delimiter_notes = file_delimiter(Path(source), delimiter)
        if safe:
            schema, notes = _safe_columns(table_header(path), path)
            return schema, delimiter_notes + notes
        if delimiter_of(path) == WHITESPACE:  # the run's reader: pandas has no such rule
            raw = pd.DataFrame(file_rows(path), dtype=str)
        else:
            raw = _read_csv(path)
    names = header_names(raw.iloc[0].tolist())
    duplicated = repeated(names)
    if duplicated:
        raise DataError(duplicate_header_message(path, duplicated))
    table = raw.iloc[1:].reset_index(drop=True).set_axis(names, axis="columns")
    stripped = table.apply(lambda column: column.str.strip())  # numbers and missing cells
    columns, notes = [], delimiter_notes + _header_notes(names)
    for name in table.columns:
        entry, note = draft_column(name, table[name], stripped[name])
        columns.append(entry)
        if note is not None:
            notes.append(note)
    refuse_unmodelled(path, columns)
    _draft_derived(table.where(stripped != "", ""), columns, notes)
    notes.extend(note for entry in columns if (note := _seen_list_note(entry)) is not None)
    if any("precision" in entry for entry in columns):
        notes.append(
            "precision (continuous columns): the most decimals seen in the column's cells, read "
            "from the data like the bounds; the release is rounded to it. Keep it if the "
            "column's published format has that many decimals."
        )
    schema = {"drafted_by": DRAFTED_BY, "unknown_categories": "error", "columns": columns}
    return schema, notes


def _read_csv(path: Path) -> pd.DataFrame:
    try:
        return pd.read_csv(path, header=None, dtype=str, keep_default_na=False,
                           encoding="utf-8-sig", sep=delimiter_of(path))
    except FileNotFoundError:
        raise DataError(f"data file not found: {written_and_resolved(path)}") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as error:
        raise DataError(f"{path}: cannot read it as a UTF-8 CSV: {error}") from None


def file_delimiter(path: Path, delimiter: str | None) -> tuple[Path, list[str]]:
    """``path`` marked with the delimiter to read it with (``table.delimited``), and the note
    that tells the user the job config's line. ``delimiter`` None: detected from the HEADER
    line only (public, so the safe draft stays private): a header with no comma (one column
    read with ',') holding exactly one of tab, ';' and '|' is read with it, one holding none of
    them but words apart by spaces with runs of spaces and tabs (``table.header_delimiter``);
    else ','. Parquet files have no delimiter."""
    if is_parquet(path):
        return path, []
    how = "given by --delimiter"
    if delimiter is None:  # several found: refused by the header check, naming --delimiter
        delimiter, how = header_delimiter(table_header(path)), "detected from the header"
    if delimiter == ",":
        return path, []
    return delimited(path, delimiter), [
        f"the file's fields are separated by {_separator(delimiter)} ({how}): this draft "
        "names its columns so. Put the line  delimiter: "
        f"{delimiter_name(delimiter)}  under 'data:' in the job config, so the run reads the "
        "file with it (the release is written comma-separated)."
        + ("" if delimiter != WHITESPACE or how != "detected from the header" else
           " If the file is comma-separated (one column whose name holds spaces), draft it "
           "again with --delimiter \",\".")]


def _separator(delimiter: str) -> str:
    return "runs of spaces and tabs" if delimiter == WHITESPACE else delimiter_name(delimiter)


def refuse_unmodelled(path: Path, columns: list[dict]) -> None:
    """A table none of whose columns can be modelled (all ids or text) has no draft a run could
    synthesise: refuse it here, with the likely cause (a file that is not comma-separated).
    Also the run's refusal when its DP kind decision leaves nothing to model (domain_stage):
    ``columns`` are schema entries; ignored and derived ones are not modelled."""
    if any(entry.get("kind") not in ("id", "text") and not entry.get("ignore")
           and entry.get("derived_from") is None for entry in columns):
        return
    one = columns[0]["name"] if len(columns) == 1 else ""
    hint = (f" Its header is the one column '{one[:60]}': the file seems to separate fields with "
            "spaces or another delimiter: set data.delimiter in the job config (and draft with "
            "'synthpriv schema infer --delimiter'), or convert the file."
            if len(columns) == 1 and any(c in one for c in " ;\t|") else
            " Add a column to model, or declare public categories for one of them.")
    raise DataError(f"{path}: every column reads as an id or as free text, so there is nothing "
                    f"to synthesise.{hint}")


def _header_notes(names: list[str]) -> list[str]:
    """Notes for the reviewer on the header ``names`` (public: the schema names them)."""
    return [
        f"column {position} has no name in the header: drafted as name: '' (a run reads it so "
        "too). An unnamed first column is usually a row index written by pandas' to_csv: unless "
        "it is data, remove it from the file and from this schema."
        for position, name in enumerate(names, start=1) if name == ""
    ]


def _safe_columns(names: list[str], path: Path) -> tuple[dict, list[str]]:
    """Every column of the header ``names`` (of ``path``) as ``kind: auto`` (missing: true), and
    notes. Only the header is read: whether a column holds text, fractions or empty cells can
    turn on one row, so kinds and the missing flag are left to the run's DP domain step."""
    duplicated = repeated(names)
    if duplicated:
        raise DataError(duplicate_header_message(path, duplicated))
    refuse_other_delimiter(names, path)
    notes = _header_notes(names) + [
        note for name in names if (note := _named_list_note(name)) is not None]
    if len(names) == 1 and len(names[0].split()) > 1:
        notes.append(f"the header is the one column '{names[0][:60]}': if the file separates "
                     "fields with spaces, draft it with --delimiter whitespace (a run reads it "
                     "as one column).")
    if names and all(_is_number(name) for name in names):
        notes.append("every name in the header is a number: if the file has no header row, add "
                     "one (its first row is read as the column names, not as data).")
    return {"columns": [_safe_entry(name) for name in names]}, notes


def _safe_entry(name: str) -> dict:
    """Column ``name`` as ``kind: auto``, with ``lists:`` the public lists its name suggests
    (public: the header): the run adopts one only when every category DP discovery keeps is in
    it (synthpriv.list_adoption), so a column written otherwise keeps its discovered values."""
    lists = suggested_lists(name)
    return {"name": name, "kind": "auto", **({"lists": list(lists)} if lists else {})}


def _is_number(name: str) -> bool:
    try:
        float(name)
    except ValueError:
        return False
    return True


def _list_entry(name: str, listed: str) -> str:
    """The one-line schema entry of column ``name`` (quoted unless plain) over public list
    ``listed``."""
    written = name if re.fullmatch(r"[A-Za-z][A-Za-z0-9_.\- ]*", name) else json.dumps(name)
    return (f"{{name: {written}, kind: categorical, categories: {{list: {listed}}}, missing: "
            "true, unknown_categories: missing}")


def _named_list_note(name: str) -> str | None:
    """The safe draft's suggestion of a public list for column ``name``, from its name only
    (public: the schema names it), for the person to confirm; None if the name suggests none.
    Never written into the entry: whether the cells are written as the list writes them is data."""
    lists = suggested_lists(name)
    if not lists:
        return None
    first, others = lists[0], ", ".join(lists[1:])
    return (f"column '{name}': its name suggests a public code list, {first} "
            f"({LISTS[first].description}){f'; or {others}' if others else ''}: the draft "
            f"writes lists: [{', '.join(lists)}]. No cell was read: the run discovers its "
            "categories under DP and, if every one it keeps (at least "
            f"{MIN_DISCOVERED}) is in one of these lists, takes the first such list whole as "
            "its categories (post-processing: no budget); else it keeps the discovered ones. "
            f"If its cells are written so, declaring it as {_list_entry(name, first)} makes "
            "that certain (public categories, every value kept however rare; a value outside "
            "the list is read as missing).")


def _seen_list_note(entry: dict) -> str | None:
    """The data-read draft's suggestion for a categorical ``entry``: the public list that holds
    every category seen (read from the data, like the categories: the draft's warning covers
    it); a list its name suggests first, else the smallest list once MIN_LIST_VALUES values are
    seen. None if no list holds them all."""
    if entry["kind"] != "categorical" or not isinstance(entry.get("categories"), list) or \
            not entry["categories"]:
        return None  # categories: {list: …} is a public list already
    seen = set(entry["categories"])
    listed = list_holding(seen, entry["name"])
    if listed is None:
        return None
    return (f"column '{entry['name']}': every category seen ({len(seen)}) is in the public list "
            f"{listed} ({LISTS[listed].description}, {len(value_set(listed))} values). Its "
            f"categories read from the data are not private; the list is public: declare it as "
            f"{_list_entry(entry['name'], listed)}.")


def _draft_derived(table: pd.DataFrame, columns: list[dict], notes: list[str]) -> None:
    """Mark each column whose value is a function of an earlier categorical column (of at most
    MAX_SOURCE_CATEGORIES categories, itself not derived) as ``derived_from`` it, with the mapping
    seen in the data (``table``: stripped cells), and tell the reviewer to keep it only if the
    mapping is public."""
    sources: list[dict] = []
    for entry in columns:
        if entry["kind"] not in ("categorical", "integer", "continuous") or entry.get(
                "coerce") or entry.get("unknown_categories"):
            continue  # only columns read as written can be a function of a source
        values = table[entry["name"]]
        for source in sources:
            mapping = _function_of(table[source["name"]], values)
            if mapping is not None:
                entry["derived_from"] = {"column": source["name"], "values": {
                    k: plain(float(v)) if entry["kind"] != "categorical" else v
                    for k, v in mapping.items()}}
                notes.append(
                    f"column '{entry['name']}' is a function of '{source['name']}' in this data: "
                    "drafted as derived_from it (not modelled, filled in from it). Keep that only "
                    "if the mapping is public knowledge, such as a documented code; else delete it."
                )
                break
        else:
            if (entry["kind"] == "categorical" and "unknown_categories" not in entry
                    and len(entry["categories"]) <= MAX_SOURCE_CATEGORIES):
                sources.append(entry)  # every value listed: none read as missing


def _function_of(source: pd.Series, values: pd.Series) -> dict[str, str] | None:
    """{source category: value} if ``values`` (not constant) is a function of ``source`` (missing
    exactly where the source is), else None."""
    present = source != ""
    if not (present == (values != "")).all() or values[present].nunique() < 2:
        return None
    pairs = pd.DataFrame({"source": source[present], "value": values[present]}).drop_duplicates()
    if pairs["source"].duplicated().any():
        return None
    return dict(zip(pairs["source"], pairs["value"], strict=True))


def schema_yaml(schema: dict, safe: bool = False, notes: list[str] | None = None) -> str:
    """The draft as YAML, its warning (and the reviewer's ``notes``: what was decided and why)
    as comments on top."""
    header = "".join(f"# {line}\n" for line in textwrap.wrap(SAFE_HEADER if safe else WARNING, 98))
    for note in notes or []:
        header += "".join(f"# {line}\n" for line in textwrap.wrap(f"note: {note}", 98,
                                                                    subsequent_indent="  "))
    return header + yaml.safe_dump(schema, sort_keys=False, width=100, allow_unicode=True)
