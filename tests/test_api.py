"""The Python API: the README's example runs as written; the API's release is the CLI's release;
bad input to it is a clear error."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.errors import ConfigError, DataError

from .conftest import ADULT, ROOT


def readme_python_examples() -> list[str]:
    """The README's Python API code blocks: the three lines, then the example with a schema."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Python API", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"```python\n(.*?)```", section, re.S)


def test_the_readme_three_lines_run(tmp_path: Path, monkeypatch) -> None:
    """A DataFrame and nothing else: the schema is drafted from the column names (kind auto)
    and decided under DP (MST here for speed; the slow test runs the lines as written)."""
    os.symlink(ROOT / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    three_lines = readme_python_examples()[0]
    assert len([line for line in three_lines.splitlines() if line.strip()]) == 4  # + the import
    namespace: dict = {}
    exec(compile(three_lines.replace("Synthesizer(epsilon=1.0)",
                                     "Synthesizer(epsilon=1.0, recipe='mst')"),
                 "README.md (three lines)", "exec"), namespace)
    synthetic, df = namespace["synthetic"], namespace["df"]
    assert len(synthetic) == 1000 and list(synthetic.columns) == list(df.columns)
    assert "Synthesizer(epsilon=1.0).fit(df).sample(1000)" in three_lines


@pytest.mark.slow
def test_the_readme_example_runs_and_runs_again(tmp_path: Path, monkeypatch) -> None:
    """Run the README's code block as written, twice (the release is replaced, not refused),
    from a folder holding the repository's data/."""
    os.symlink(ROOT / "data", tmp_path / "data")
    monkeypatch.chdir(tmp_path)
    three_lines, example = readme_python_examples()
    scope: dict = {}
    exec(compile(three_lines, "README.md (three lines)", "exec"), scope)  # the default recipe
    assert len(scope["synthetic"]) == 1000
    namespace: dict = {}
    for _ in range(2):
        exec(compile(example, "README.md (Python API)", "exec"), namespace)
    folder = namespace["folder"]
    manifest = json.loads((folder / "manifest.json").read_text())
    assert set(manifest["files"]) == {"synthetic.csv", "model.json", "model.npz"}
    assert manifest["guarantee"]["epsilon"] <= 1.0
    assert set(namespace["result"].tvd) == {1, 2, 3}
    assert len(namespace["again"].sample(10)) == 10


def test_the_import_is_lazy_and_names_resolve() -> None:
    import synthpriv

    assert {"Synthesizer", "load_schema", "Schema", "SynthprivError"} <= set(dir(synthpriv))
    with pytest.raises(AttributeError, match="no attribute 'Synthesiser'"):
        synthpriv.Synthesiser  # noqa: B018


def test_a_bad_frame_names_the_column_and_nothing_is_fitted(adult_train: pd.DataFrame) -> None:
    synth = Synthesizer(schema=ADULT / "schema.yaml", recipe="independent", delta=1e-5)
    with pytest.raises(DataError, match=r"missing column\(s\) \['income'\]"):
        synth.fit(adult_train.drop(columns="income").head(50))
    with pytest.raises(ConfigError, match="not fitted"):
        synth.sample(5)


def test_a_plan_refusal_comes_before_the_data(tmp_path: Path) -> None:
    """A recipe that does not exist fails at plan time: the path given is never opened."""
    synth = Synthesizer(schema=ADULT / "schema.yaml", recipe="nonexistent")
    with pytest.raises(ConfigError, match="recipe 'nonexistent' not found"):
        synth.fit(pd.DataFrame({"age": ["1"]}))


def test_schema_as_mapping_and_fit_from_a_path(tmp_path: Path, adult_sample_csv: Path) -> None:
    """A schema given as a mapping; data as a path; the release is the CLI's (model, manifest)."""
    import yaml

    schema = yaml.safe_load((ADULT / "schema.yaml").read_text())
    synth = Synthesizer(schema, epsilon=1.0, delta=1e-5, recipe="independent", seed=4)
    synth.fit(adult_sample_csv)
    assert synth.epsilon <= 1.0
    folder = synth.release(tmp_path / "release")
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["guarantee"]["epsilon"] is None  # seeded: NO GUARANTEE, as the CLI says
    assert manifest["records"]["released"] == len(synth.synthetic)
    loaded = Synthesizer.load(folder)
    assert loaded.query("sex")["count"].sum() == pytest.approx(synth.query("sex")["count"].sum())


OPEN_SCHEMA = {"columns": [  # no bounds, no categories: the fit's DP domain step chooses them
    {"name": "colour", "kind": "categorical", "other": "other"},
    {"name": "shape", "kind": "categorical", "other": "other"},
    {"name": "size", "kind": "integer"},
    {"name": "weight", "kind": "integer"},
]}


@pytest.mark.parametrize("recipe", ["independent", "mst"])
def test_after_a_fit_on_a_schema_without_domains_the_model_has_the_dp_domain(
    tmp_path: Path, recipe: str
) -> None:
    """sample, query, release and load work after the DP domain step resolved the schema; the
    model's schema is the resolved one (categories and bounds chosen by the step)."""
    from tests.evaluation.tiny import tiny_table

    synth = Synthesizer(OPEN_SCHEMA, epsilon=2.0, delta=1e-5, recipe=recipe, seed=3)
    synth.fit(tiny_table(600, 1))
    colour = synth.schema.column("colour")
    assert colour.categories and set(colour.categories) <= {"red", "green", "blue", "other"}
    assert synth.schema.column("size").upper is not None
    rows = synth.sample(50, seed=1)
    assert len(rows) == 50 and set(rows["colour"]) <= set(colour.categories)
    marginal = synth.query("colour")
    assert set(marginal["colour"]) == set(colour.categories)
    assert marginal["count"].sum() == pytest.approx(len(synth.synthetic), rel=0.5)
    folder = synth.release(tmp_path / "release")
    loaded = Synthesizer.load(folder)
    assert loaded.schema.column("colour").categories == colour.categories
    assert len(loaded.sample(20, seed=2)) == 20
    assert loaded.query("colour")["count"].sum() == pytest.approx(marginal["count"].sum())
