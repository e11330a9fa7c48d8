"""Counting a 10^6-row file stays far below the in-memory footprint (peak RSS, VmHWM, of a fresh
subprocess: unlike ru_maxrss it does not include the test process's size before exec).

Measured on this machine (see the scale notes): ``read_table`` + ``encode`` + the 105 pair
marginals of the same file peak at ~1,535 MiB; the chunked path at ~380 MiB, of which ~150 MiB is
the interpreter with numpy/pandas/pyarrow imported. The bound, 600 MiB, is under 40 % of the
in-memory peak and leaves room for allocator noise; a path that held the table (>= 1.5 GiB) or
its int64 codes plus strings would exceed it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BOUND_MIB = 600
ROWS = 1_000_000

COUNT = """
import json, sys
from itertools import combinations
from pathlib import Path
from synthpriv.chunks import iter_chunks
from synthpriv.counting import SpooledCodes
from synthpriv.encoding import TableEncoder
from synthpriv.schema import load_schema
path = Path(sys.argv[1])
schema = load_schema(path.parent / f"{path.stem}.schema.yaml")
encoder = TableEncoder(schema)
attributes = encoder.domain.attributes
with SpooledCodes(iter_chunks(path, schema, 100_000), encoder) as counts:
    one = counts.marginals([(a,) for a in attributes])
    counts.marginals(list(combinations(attributes, 2)))
    sums = sorted({int(table.sum()) for table in one.values()})
status = Path("/proc/self/status").read_text().splitlines()
peak = next(int(line.split()[1]) for line in status if line.startswith("VmHWM:"))
print(json.dumps({"records": counts.records, "sums": sums, "passes": counts.passes,
                  "max_rss_mib": peak / 1024}))
"""


@pytest.fixture(scope="session")
def million_rows(tmp_path_factory: pytest.TempPathFactory) -> Path:
    spec = importlib.util.spec_from_file_location("scale_benchmark",
                                                  ROOT / "benchmarks" / "scale_benchmark.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate(tmp_path_factory.mktemp("million") / "adult.csv", ROWS)


def test_counting_a_million_rows_stays_under_the_bound(million_rows: Path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("ARROW_DEFAULT_MEMORY_POOL", None)
    done = subprocess.run([sys.executable, "-c", COUNT, str(million_rows)], env=env,
                          capture_output=True, text=True, timeout=300, check=True)
    result = json.loads(done.stdout.splitlines()[-1])
    assert result["records"] == ROWS and result["sums"] == [ROWS] and result["passes"] == 2
    assert result["max_rss_mib"] < BOUND_MIB, result
