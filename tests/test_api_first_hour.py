"""The Python API's first hour (issue 25, item 1): a DataFrame and nothing else; what was decided
and warned is visible; the plan reads well."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer, SynthprivWarning, infer_schema
from synthpriv.errors import ConfigError
from synthpriv.schema import NumericColumn


def _frame(rows: int = 600, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    frame = pd.DataFrame({
        "age": rng.integers(18, 90, rows),
        "city": rng.choice(["Lyon", "Nice", "Metz"], rows, p=[0.5, 0.3, 0.2]),
        "ratio": np.round(rng.uniform(0, 1, rows), 3),
    })
    frame.loc[::7, "ratio"] = np.nan
    return frame


def test_three_lines_from_a_dataframe() -> None:
    frame = _frame()
    synth = Synthesizer(epsilon=1.0, recipe="mst")
    assert synth.schema is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SynthprivWarning)
        fitted = synth.fit(frame)
    assert fitted is synth
    rows = synth.sample(300)
    assert len(rows) == 300 and list(rows.columns) == list(frame.columns)
    kinds = {c.name: c.kind for c in synth.schema.columns}
    assert kinds == {"age": "integer", "city": "categorical", "ratio": "continuous"}
    assert isinstance(synth.schema.column("ratio"), NumericColumn)
    assert set(rows["city"].dropna()) <= {"Lyon", "Nice", "Metz"}


def test_a_dataframe_given_as_the_schema_says_where_it_goes() -> None:
    with pytest.raises(ConfigError, match=r"give the DataFrame to fit.*Synthesizer\(epsilon=1.0\)"):
        Synthesizer(_frame())


def test_the_plan_needs_a_schema_and_reads_well() -> None:
    with pytest.raises(ConfigError, match="no schema yet"):
        Synthesizer(epsilon=1.0).plan()
    schema, _ = infer_schema(_frame(), safe=True)
    plan = Synthesizer(schema, epsilon=1.0, recipe="mst").plan()
    text = repr(plan)
    assert text.startswith("budget: ε = 1, δ = 1e-06 (add_remove)")
    assert "domain" in text and "composed plan: ε = " in text and "StagePlan(" not in text
    assert "<table>" in plan._repr_html_() and "kind_sigma" in plan._repr_html_()


def test_infer_schema_takes_a_dataframe_safe_or_read() -> None:
    frame = _frame()
    safe, _ = infer_schema(frame, safe=True)
    assert safe == {"columns": [{"name": n, "kind": "auto"} for n in frame.columns]}
    read, _ = infer_schema(frame)
    kinds = {c["name"]: c["kind"] for c in read["columns"]}
    assert kinds == {"age": "integer", "city": "categorical", "ratio": "continuous"}
    assert read["drafted_by"] == "synthpriv schema infer"


def test_plan_warnings_arrive_as_python_warnings() -> None:
    """A public count of 60 rows at ε = 0.05: the plan's 'mostly noise' warning, which the command
    line prints, reaches the API's caller as a SynthprivWarning."""
    frame = _frame(60)
    synth = Synthesizer(epsilon=0.05, recipe="mst", public_records=60)
    with pytest.warns(SynthprivWarning) as caught:
        synth.fit(frame)
    assert any("noise" in str(w.message) for w in caught)


def test_a_query_without_errors_says_why() -> None:
    schema = {"columns": [
        {"name": "age", "kind": "integer", "lower": 18, "upper": 90},
        {"name": "city", "kind": "categorical", "categories": ["Lyon", "Nice", "Metz"]},
        {"name": "ratio", "kind": "continuous", "lower": 0, "upper": 1, "missing": True}]}
    synth = Synthesizer(schema, epsilon=1.0, recipe="independent").fit(_frame())
    with pytest.warns(SynthprivWarning, match="no measurement covers"):
        answer = synth.query("age", "city")
    assert answer["std_error"].isna().all() and "no measurement" in answer.attrs["std_error"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", SynthprivWarning)
        assert np.isfinite(synth.query("city")["std_error"]).all()
