"""Look at every development-suite table's DEFAULT release as a user would (issue 24 items 4-5:
"values that look like the input"): the safe draft (``schema infer``, no flag: every column
``kind: auto``), the default recipe (no ``pipeline`` key: AIM), ε = 1, δ = 1e-6, one seed; then
each released column against the real one, as its CSV cells read.

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/value_sweep.py [name-substring ...] \\
        [--max-rows 20000] [--timeout 900] [--skip Fund,Khan_x] [--json results.json]

prints one line per problem found (``PROBLEM <table> <column> <check>: detail``) and a summary
table (rows, columns, seconds, problems per class). A table over ``--max-rows`` rows is run on a
seeded uniform subsample of that many rows (said in its line); ``--skip`` names tables (substrings)
not run (said too). The checks, in ``CHECKS`` order (most noticeable first):

- ``refused``: the run refused its own draft (the refusal text), or crashed, or timed out;
- ``dropped``: a real column absent from the release;
- ``leak``: a real value of a column the run made id or text found in the release
  (``values.copied_values``);
- ``missing``: a column's missing share real vs released off by ≥ ``MISSING_GAP`` (absolute),
  or lost (real ≥ 1 %, released < half of it), or made up (real 0, released ≥ 1 %);
- ``not_number``: a column whose real cells are all numbers released with cells that are not;
- ``negative``: a column whose real values are all ≥ 0 released with negatives
  (``values.format_checks``);
- ``date_format``: a date/time column's released cells in a shape no real cell has (digits
  read as 9: ``2021-03-04`` is ``9999-99-99``);
- ``fake_spike``: a released value holding ≥ ``SPIKE`` of the rows that holds < ``SPIKE_REAL``
  of the real ones (``values``' fake spikes at these thresholds);
- ``lost_spike``: a real value holding ≥ ``SPIKE`` of the rows released at less than half its
  share, or at more than twice it (``values``' point masses);
- ``outside``: ≥ ``OUTSIDE`` of the released values outside [real min, real max] (a fake tail;
  ``values.format_checks``);
- ``integer_float``: a column of integer cells released with ``30.0`` cells
  (``values.format_checks``);
- ``decimals``: released cells with more decimals than any real cell (reported only: branch
  precision builds the DP precision read-out).

Missing cells, as a user reads them: empty or one of ``MISSING``. Shares are of all rows.
NOT differentially private (it reads the real table): a development tool. For choosing defaults
only: none of these tables is held out.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import re
import signal
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

import pandas as pd
import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "benchmarks"))

from synthpriv.config import load_job  # noqa: E402
from synthpriv.evaluation.values import copied_values, value_fidelity  # noqa: E402
from synthpriv.runner import run_job  # noqa: E402
from synthpriv.schema_infer import infer_schema, schema_yaml  # noqa: E402
from synthpriv.table import WHITESPACE, csv_rows, header_delimiter  # noqa: E402

CHECKS = ("refused", "dropped", "leak", "missing", "not_number", "negative", "date_format",
          "fake_spike", "lost_spike", "outside", "integer_float", "decimals")
MISSING = frozenset({"", "NA", "N/A", "NaN", "nan", "null", "NULL", "None"})
MISSING_GAP = 0.05
SPIKE, SPIKE_REAL = 0.05, 0.01
OUTSIDE = 0.01
LEFT_OUT_KINDS = ("id", "text", "ignore")
_DATE = re.compile(r"^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}([ T]\d{1,2}:\d{2}(:\d{2}(\.\d+)?)?)?$")


@dataclass
class Problem:
    table: str
    column: str
    check: str
    detail: str

    def line(self) -> str:
        return f"PROBLEM {self.table} {self.column!r} {self.check}: {self.detail}"


def released(text: str, folder: Path, epsilon: float = 1.0, seed: int = 0) -> tuple[pd.DataFrame, dict]:
    """The default release of the CSV ``text``: safe draft (its delimiter detected from the
    header, as ``schema infer`` does, and written as data.delimiter), default recipe, ε; its
    cells (text) and the run's resolved schema (the manifest's). Raises what the run raises."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "data.csv").write_text(text, encoding="utf-8")
    draft, notes = infer_schema(folder / "data.csv", safe=True)
    (folder / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    config = {"name": "sweep", "data": {"path": "data.csv", "schema": "schema.yaml",
                                        "delimiter": text_delimiter(text)},
              "budget": {"epsilon": epsilon, "delta": 1e-6},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}, "seed": seed}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    run_job(load_job(folder / "job.yaml"))
    cells = read_cells(folder / "out" / "synthetic.csv")
    manifest = json.loads((folder / "out" / "manifest.json").read_text())
    return cells, manifest["schema"]


def text_delimiter(text: str) -> str:
    """The delimiter of the CSV ``text`` by ``schema infer``'s header-only rule."""
    return header_delimiter(next(csv.reader(io.StringIO(text.lstrip("\ufeff"))), [""]))


def read_cells(source: str | Path | io.StringIO, delimiter: str = ",") -> pd.DataFrame:
    """A CSV's cells as text, as a user's spreadsheet shows them (names stripped); a
    whitespace-separated one split as the run splits it (``table.csv_rows``)."""
    if delimiter == WHITESPACE:
        rows = [row for row in csv_rows(source, WHITESPACE) if row]
        return pd.DataFrame(rows[1:], columns=[c.strip() for c in rows[0]], dtype=str)
    frame = pd.read_csv(source, dtype=str, keep_default_na=False, encoding="utf-8-sig",
                        sep=delimiter)
    return frame.rename(columns=lambda c: c.strip())


def _present(cells: pd.Series) -> pd.Series:
    return cells[~cells.str.strip().isin(MISSING)].str.strip()


def real_type(cells: pd.Series) -> str:
    """What a reader calls a column from its cells: ``integer``, ``number``, ``date`` or
    ``text`` (empty: ``text``)."""
    present = _present(cells)
    if present.empty:
        return "text"
    numbers = pd.to_numeric(present, errors="coerce")
    if numbers.notna().all():
        return "integer" if present.str.fullmatch(r"[+-]?\d+").all() else "number"
    return "date" if present.str.match(_DATE).all() else "text"


def _as_values(cells: pd.Series, numeric: bool) -> pd.Series:
    """Cells as the yardstick reads them: numbers (or NaN) or labels, missing as NaN."""
    missing = cells.str.strip().isin(MISSING)
    if numeric:
        return pd.to_numeric(cells.where(~missing).str.strip(), errors="coerce")
    return cells.where(~missing)


def _shape(cell: str) -> str:
    return re.sub(r"\d", "9", cell)


def check_table(table: str, real: pd.DataFrame, release: pd.DataFrame,
                schema: dict) -> list[Problem]:
    """Every check of the module docstring on one release (``schema``: the run's resolved one)."""
    problems: list[Problem] = []
    kinds = {c["name"]: ("ignore" if c.get("ignore") else c["kind"]) for c in schema["columns"]}
    types = {name: real_type(real[name]) for name in real.columns}
    for name in real.columns:
        if name not in release.columns and kinds.get(name) != "ignore":
            problems.append(Problem(table, name, "dropped", f"kind {kinds.get(name)}"))
    shared = [n for n in real.columns if n in release.columns]
    left = {n: kinds[n] for n in shared if kinds.get(n) in LEFT_OUT_KINDS}
    for name in left:
        public = {c.get("placeholder") or "" for c in schema["columns"] if c["name"] == name}
        for column in schema["columns"]:
            if column["name"] == name:
                public |= set(column.get("values") or ())
        copies = copied_values(_as_values(real[name], False), _as_values(release[name], False),
                               public - {""})
        if copies["copied"]:
            problems.append(Problem(table, name, "leak", f"{copies['copied']} of {copies['real']} "
                                    f"distinct real values in the release (kind {left[name]})"))
    scored = [n for n in shared if n not in left]
    numeric = [n for n in scored if types[n] in ("integer", "number")]
    figures = value_fidelity(
        pd.DataFrame({n: _as_values(real[n], n in numeric) for n in scored}),
        pd.DataFrame({n: _as_values(release[n], n in numeric) for n in scored}),
        numeric, real_cells=real[numeric], synthetic_cells=release[numeric],
        spike=(SPIKE, SPIKE_REAL))
    for name in scored:
        problems += _column_problems(table, name, types[name], real[name], release[name],
                                     figures["columns"][name], kinds.get(name))
    return problems


def _column_problems(table: str, name: str, kind: str, real: pd.Series, release: pd.Series,
                     figures: dict, run_kind: str | None) -> list[Problem]:
    out: list[Problem] = []

    def add(check: str, detail: str) -> None:
        out.append(Problem(table, name, check, f"{detail} (real {kind}, run kind {run_kind})"))

    s_missing = figures["missing"]["synthetic"]
    r_blank = real.str.strip().isin(MISSING).mean()
    s_blank = release.str.strip().isin(MISSING).mean()
    if (abs(r_blank - s_blank) >= MISSING_GAP or (r_blank >= 0.01 and s_blank < r_blank / 2)
            or (r_blank == 0 and s_blank >= 0.01)):
        add("missing", f"missing share real {r_blank:.3f}, released {s_blank:.3f}")
    if kind in ("integer", "number") and s_missing > s_blank + 1e-9:
        add("not_number", f"{s_missing - s_blank:.3f} of released cells are not numbers, e.g. "
            f"{sorted(set(_present(release)[pd.to_numeric(_present(release), errors='coerce').isna()]))[:3]}")
    fmt = figures.get("format")
    if fmt:
        if fmt["negative"] > 0:
            add("negative", f"{fmt['negative']:.3f} of released values < 0, real all ≥ 0")
        if fmt["integer_as_float"] > 0:
            add("integer_float", f"{fmt['integer_as_float']:.3f} of released cells like 30.0")
        if fmt["more_decimals"] > 0:
            add("decimals", f"{fmt['more_decimals']:.3f} of released cells with more than "
                f"{fmt['real_max_decimals']} decimals (up to {fmt['synthetic_max_decimals']})")
    if kind == "date":
        shapes = set(map(_shape, _present(real)))
        present = _present(release)
        wrong = present[~present.map(_shape).isin(shapes)]
        if len(wrong):
            add("date_format", f"{len(wrong) / max(len(present), 1):.3f} of released cells in "
                f"a shape no real cell has, e.g. {wrong.iloc[0]!r} (real e.g. "
                f"{_present(real).iloc[0]!r})")
    if fmt and fmt["outside"] >= OUTSIDE:
        low, high = figures["ecdf"]["real_range"]
        shown_low, shown_high = figures["ecdf"]["synthetic_range"]
        add("outside", f"{fmt['outside']:.3f} of released values outside the real range "
            f"[{low:g}, {high:g}] (released [{shown_low:g}, {shown_high:g}])")
    for mass in figures["point_masses"]:  # real values holding ≥ POINT_MASS, by share
        if mass["real"] >= SPIKE and not mass["real"] / 2 <= mass["synthetic"] <= 2 * mass["real"]:
            add("lost_spike", f"value {mass['value']!r} holds {mass['real']:.3f} of real rows, "
                f"{mass['synthetic']:.3f} released")
    for spike in figures["fake_spikes"]:  # thresholds SPIKE, SPIKE_REAL (value_fidelity)
        add("fake_spike", f"value {spike['value']!r} holds {spike['synthetic']:.3f} of released "
            f"rows, {spike['real']:.3f} real")
    return out


class _Timeout(Exception):
    pass


def _alarm(signum: int, frame: object) -> None:
    raise _Timeout


def sweep_table(name: str, text: str, max_rows: int, timeout: int, epsilon: float = 1.0,
                seed: int = 0) -> dict:
    """One table: its release and problems, run time, and how it was sampled."""
    delimiter = text_delimiter(text)
    real = read_cells(io.StringIO(text), delimiter)
    note = "" if delimiter == "," else f"delimiter {delimiter!r}"
    if len(real) > max_rows:
        real = real.sample(n=max_rows, random_state=seed).reset_index(drop=True)
        note = f"{note}, subsampled {max_rows} rows".lstrip(", ")
        buffer = io.StringIO()
        real.to_csv(buffer, index=False, sep=delimiter)
        text = buffer.getvalue()
    start = time.perf_counter()
    problems: list[Problem] = []
    signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(timeout)
    try:
        with tempfile.TemporaryDirectory() as folder:
            cells, schema = released(text, Path(folder), epsilon, seed)
        signal.alarm(0)
        problems = check_table(name, real, cells, schema)
    except _Timeout:
        problems = [Problem(name, "", "refused", f"timed out after {timeout} s")]
    except Exception as error:  # noqa: BLE001 - a sweep reports every refusal or crash
        signal.alarm(0)
        problems = [Problem(name, "", "refused", f"{type(error).__name__}: {str(error)[:400]}")]
    return {"table": name, "rows": len(real), "columns": real.shape[1], "note": note,
            "seconds": round(time.perf_counter() - start, 1),
            "problems": [asdict(p) for p in problems]}


def _per_class(problems: list[dict]) -> Counter:
    """Columns with each class of problem (a column with 3 lost spikes counts once; a refusal
    counts once per table)."""
    return Counter(check for check, _ in {(p["check"], p["column"]) for p in problems})


def summary_table(results: list[dict]) -> str:
    """The results as a Markdown table: per table, rows, columns, seconds, and per class of
    problem the number of columns that have it."""
    head = ["table", "rows", "cols", "s", *CHECKS]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for result in results:
        counts = _per_class(result["problems"])
        rows = f"{result['rows']}" + (" (sub)" if "subsampled" in result["note"] else "")
        lines.append("| " + " | ".join([result["table"], rows, str(result["columns"]),
                                        f"{result['seconds']:.0f}",
                                        *[str(counts.get(c, "")) for c in CHECKS]]) + " |")
    totals = sum((_per_class(r["problems"]) for r in results), Counter())
    lines.append("| **total** | | | " + f"{sum(r['seconds'] for r in results):.0f} | "
                 + " | ".join(str(totals.get(c, 0)) for c in CHECKS) + " |")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    from dev_tables import all_tables

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("patterns", nargs="*")
    parser.add_argument("--max-rows", type=int, default=20000)
    parser.add_argument("--timeout", type=int, default=900)
    parser.add_argument("--skip", default="")
    parser.add_argument("--epsilon", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    skip = [s for s in args.skip.split(",") if s]
    results = []
    for name, text in all_tables():
        if args.patterns and not any(p in name for p in args.patterns):
            continue
        if any(s in name for s in skip):
            print(f"SKIPPED {name} (--skip)", flush=True)
            continue
        result = sweep_table(name, text, args.max_rows, args.timeout, args.epsilon, args.seed)
        for problem in result["problems"]:
            print(Problem(**problem).line(), flush=True)
        print(f"{name}: {result['rows']} rows {result['note']}, {result['columns']} columns, "
              f"{result['seconds']:.1f} s, {len(result['problems'])} problems", flush=True)
        results.append(result)
        if args.json:
            args.json.write_text(json.dumps(results, indent=1))
    print(summary_table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
