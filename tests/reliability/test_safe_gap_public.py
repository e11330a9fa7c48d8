"""benchmarks/safe_gap.py --public: one column of a variant's schema becomes categorical over a
public list read from a file (comments skipped); every other column is left as the variant has it."""

from __future__ import annotations

import runpy
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"
GAP = runpy.run_path(str(BENCHMARKS / "safe_gap.py"))


def test_public_list_replaces_only_its_column(tmp_path) -> None:
    gap = GAP
    listed = tmp_path / "codes.txt"
    listed.write_text("# a public list\nCA\n\nTX \n#NY\nWA\n", encoding="utf-8")
    name, values = gap["read_public"](f"State={listed}")
    assert (name, values) == ("State", ["CA", "TX", "WA"])
    safe = {"columns": [{"name": "State", "kind": "auto"}, {"name": "n", "kind": "auto"}]}
    schema = gap["public_categories"](safe, {name: values})
    assert schema["columns"][0] == {"name": "State", "kind": "categorical",
                                    "categories": ["CA", "TX", "WA"], "missing": True,
                                    "unknown_categories": "missing"}
    assert schema["columns"][1] == {"name": "n", "kind": "auto"}
    assert gap["public_categories"](safe, {}) == safe


def test_us_postal_codes_list_is_the_public_one() -> None:
    """56 codes: the 50 states, DC and five territories, each two capital letters, no repeats."""
    gap = GAP
    _, codes = gap["read_public"](f"State={BENCHMARKS / 'public_lists/us_postal_codes.txt'}")
    assert len(codes) == len(set(codes)) == 56
    assert all(len(c) == 2 and c.isalpha() and c.isupper() for c in codes)
    assert {"CA", "DC", "PR", "WY"} <= set(codes)
