"""Wall time, peak memory and heavy imports of the commands that read no data (issue 26).

Each command runs ``--repeats`` times in a fresh interpreter under ``/usr/bin/time``; the table
gives the median wall time and peak RSS with the spread (min–max), and which heavy modules the
command left in ``sys.modules`` (one more run in-process, so the list is exact, not timed).

    PYTHONPATH=. .venv/bin/python benchmarks/cli_latency.py --repeats 5

Run it from the project root (the commands name configs/ and data/ relative to it).
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

COMMANDS = {
    "help": ["--help"],
    "plan adult (AIM)": ["plan", "configs/adult.yaml"],
    "plan adult-mst": ["plan", "configs/adult-mst.yaml"],
    "plan adult-mst ε=1e4": ["plan", "configs/adult-mst.yaml", "--epsilon", "1e4"],
    "schema infer (safe)": ["schema", "infer", "data/adult/adult_train.csv"],
}
HEAVY = ("torch", "sdv", "opacus", "pandas", "scipy", "scipy.signal", "dp_accounting",
         "networkx", "sklearn")
PROBE = """
import sys
from synthpriv import cli
sys.argv = ["synthpriv"] + sys.argv[1:]
try:
    cli.main()
except SystemExit:
    pass
heavy = [m for m in {heavy!r} if m in sys.modules]
print("HEAVY=" + ",".join(heavy), file=sys.stderr)
"""


def timed(argv: list[str], timeout: float) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds (user + sys), peak RSS MB) of one fresh ``python -m
    synthpriv.cli argv``; (inf, inf, nan) when it has not finished within ``timeout`` seconds.
    CPU time is the figure to compare across machine loads (the wall time waits for cores)."""
    with tempfile.NamedTemporaryFile("r", suffix=".time") as out:
        try:
            subprocess.run(["/usr/bin/time", "-f", "%e %U %S %M", "-o", out.name, sys.executable,
                            "-m", "synthpriv.cli", *argv], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL, check=False, timeout=timeout)
        except subprocess.TimeoutExpired:
            return math.inf, math.inf, math.nan
        wall, user, system, rss_kb = Path(out.name).read_text().split()[-4:]
    return float(wall), float(user) + float(system), float(rss_kb) / 1024


def heavy_modules(argv: list[str], timeout: float) -> str:
    """The heavy modules the command imports (run in a fresh interpreter, not timed)."""
    try:
        done = subprocess.run([sys.executable, "-c", PROBE.format(heavy=HEAVY), *argv],
                              capture_output=True, text=True, check=False, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "? (timed out)"
    lines = [x for x in done.stderr.splitlines() if x.startswith("HEAVY=")]
    return lines[-1].removeprefix("HEAVY=") or "none" if lines else "?"


def spread(values: list[float], digits: int) -> str:
    if any(math.isinf(v) for v in values):
        return "> timeout"
    return (f"{statistics.median(values):.{digits}f} "
            f"({min(values):.{digits}f}–{max(values):.{digits}f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--only", action="append", help="a command's name in COMMANDS")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per run")
    args = parser.parse_args()
    print(f"load average at start: {os.getloadavg()[0]:.1f} (1 min)")
    print("| command | wall s, median (min–max) | CPU s | peak RSS MB | heavy modules loaded |")
    print("|---|---|---|---|---|")
    for name, argv in COMMANDS.items():
        if args.only and name not in args.only:
            continue
        runs = []
        for _ in range(args.repeats):
            runs.append(timed(argv, args.timeout))
            if math.isinf(runs[-1][0]):
                break  # one run past the timeout says enough
        print(f"| `synthpriv {' '.join(argv)}` | {spread([r[0] for r in runs], 2)} | "
              f"{spread([r[1] for r in runs], 2)} | {spread([r[2] for r in runs], 0)} | "
              f"{heavy_modules(argv, args.timeout)} |",
              flush=True)


if __name__ == "__main__":
    main()
