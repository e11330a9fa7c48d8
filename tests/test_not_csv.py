"""A file that is not comma-separated, under the default (safe) draft: refused with the cause and
the fix, at ``schema infer`` when told ',' while the public header shows another delimiter,
else by the run when its DP kind decision leaves nothing to model (statsmodels anes96,
modechoice, E6_jmulti in the
value sweep: the run crashed with the schema's "declare a column" though the user declared
``auto``)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.errors import DataError
from synthpriv.runner import run_job
from synthpriv.schema_infer import infer_schema, schema_yaml


def _safe_run(tmp_path: Path, text: str, delimiter: str | None = None) -> None:
    (tmp_path / "data.csv").write_text(text)
    draft, notes = infer_schema(tmp_path / "data.csv", safe=True, delimiter=delimiter)
    (tmp_path / "schema.yaml").write_text(schema_yaml(draft, safe=True, notes=notes))
    config = {"name": "t", "data": {"path": "data.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0}, "evaluation": {"enabled": False},
              "output": {"dir": str(tmp_path / "out")}, "seed": 0}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    run_job(load_job(tmp_path / "job.yaml"))


@pytest.mark.parametrize("delimiter", ["\t", ";"])
def test_the_safe_draft_told_comma_refuses_a_header_of_one_column_with_another_delimiter(
        tmp_path: Path, delimiter: str) -> None:
    """Without --delimiter the draft detects it (tests/test_delimiters.py); told ',' it refuses,
    naming the delimiter found and data.delimiter."""
    rows = "\n".join(delimiter.join(str(v) for v in (i, i % 7, i % 3)) for i in range(300))
    (tmp_path / "data.csv").write_text(delimiter.join(["a", "b", "c"]) + "\n" + rows + "\n")
    with pytest.raises(DataError, match=f"seems to use {re.escape(repr(delimiter))}. Set "
                                        "data.delimiter"):
        infer_schema(tmp_path / "data.csv", safe=True, delimiter=",")


def test_a_run_whose_dp_kinds_leave_nothing_to_model_says_why(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    rows = [f"{a:.6f} {b:.3f}" for a, b in zip(rng.normal(size=2000), rng.normal(size=2000),
                                                strict=True)]
    with pytest.raises(DataError, match="nothing to synthesise.*separate fields with spaces"):
        _safe_run(tmp_path, "-0.00313 0.083\n" + "\n".join(rows) + "\n", delimiter=",")
    draft, notes = infer_schema(tmp_path / "data.csv", safe=True, delimiter=",")
    assert any("separates fields with spaces" in note for note in notes)
    # without --delimiter the draft reads it as whitespace-separated (tests/test_whitespace.py)
