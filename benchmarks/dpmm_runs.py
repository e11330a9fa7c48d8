"""One markdown row per dpmm run scored by ``benchmarks/suite.py --score-dpmm``: its 1/2/3-way TVD
as dpmm wrote it and with the integer columns rounded, its wall and CPU seconds (CPU seconds from
``dpmm_baseline.py``'s records since the dpmmruns branch: on a shared machine wall time follows
the load, CPU time much less).

    .venv/bin/python benchmarks/dpmm_runs.py benchmarks/results/suite-dpmmruns/runs.jsonl
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def tvd(record: dict) -> str:
    """'1-way / 2-way / 3-way' of a finished run, '–' otherwise."""
    if record.get("status") != "ok":
        return "–"
    return " / ".join(f"{record[k]:.3f}" for k in ("tvd_1", "tvd_2", "tvd_3"))


def seconds(record: dict, key: str) -> str:
    return "–" if record.get(key) is None else f"{record[key]:.0f}"


def run_rows(records: list[dict]) -> list[str]:
    """The scorer appends each run twice in a row, as written then ``rounded``: one row per pair,
    numbered per (table, model) in the order they ran."""
    runs = [r for r in records if r.get("kind") == "run" and r["recipe"].startswith("dpmm-")]
    counted: dict[tuple[str, str], int] = {}
    rows = []
    for written, rounded in zip(runs[::2], runs[1::2], strict=True):
        if rounded["recipe"] != f"{written['recipe']} rounded":
            raise ValueError(f"expected {written['recipe']!r} then its rounded copy, found "
                             f"{rounded['recipe']!r}: is this runs.jsonl from suite.py --score-dpmm?")
        model = written["recipe"].removeprefix("dpmm-")
        counted[written["table"], model] = counted.get((written["table"], model), 0) + 1
        rows.append(f"| {written['table']} | {model} | {counted[written['table'], model]} | "
                    f"{written['status']} | {tvd(written)} | {tvd(rounded)} | "
                    f"{seconds(written, 'wall')} | {seconds(written, 'cpu_seconds')} |")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("runs", type=Path)
    args = parser.parse_args()
    records = [json.loads(line) for line in args.runs.read_text().splitlines() if line.strip()]
    print("| table | model | run | status | TVD 1 / 2 / 3 as written | TVD 1 / 2 / 3 rounded | "
          "wall s | CPU s |")
    print("|---|---|---|---|---|---|---|---|")
    for row in run_rows(records):
        print(row)


if __name__ == "__main__":
    main()
