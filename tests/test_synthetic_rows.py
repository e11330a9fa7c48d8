"""Synthetic output is one type: every recipe's stages hand on a ``SyntheticRows``, and each
client reads it through the same two methods (iterate blocks, ``to_frame()``), whatever the
recipe: the release, the job's ``Synthesis``, the Python API and a released model's resample,
the sweep, and the shadow attack's generator. Real stages on the tiny four-column table."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from synthpriv import Synthesizer
from synthpriv.chunks import read_input
from synthpriv.config import Job, load_job
from synthpriv.evaluation.shadow import PipelineGenerator
from synthpriv.job import SynthesisJob
from synthpriv.model_store import load_model
from synthpriv.privacy.randomness import RandomSource
from synthpriv.sampling import SyntheticRows
from synthpriv.sweep import run_sweep
from tests.evaluation.tiny import SCHEMA, write_tiny_job

SMALL_AIM = {"aim_rounds_per_attribute": 1, "aim_round_iterations": 20, "iterations": 50}
SMALL_GENERATOR = {"epochs": 1, "sample_rate": 0.1, "hidden": 8, "candidate_factor": 2}
STAGES = {  # each recipe's stages, made small: the same code paths, fast
    "independent": {},
    "mst": {"marginals": {"iterations": 50}},
    "aim": {"marginals": SMALL_AIM},
    "dpsgd": {"generator": SMALL_GENERATOR},
    "hybrid": {"marginals": SMALL_AIM, "generator": SMALL_GENERATOR},
}
RECIPES = list(STAGES)
SLOW = pytest.mark.slow  # DP-SGD's plan and training, MST's selection: tens of seconds each
ORDER = ["weight", "colour", "size", "shape"]  # not the schema's: the output keeps the input's


def tiny_job(folder: Path, recipe: str, **pipeline) -> Job:
    """The tiny job with ``recipe`` (made small) and a research seed; ``pipeline``: more keys."""
    stages = {**STAGES[recipe], **pipeline.pop("stages", {})}
    return load_job(write_tiny_job(
        folder, evaluation={"quality_report": False, "bootstrap": 0}, seed=3,
        pipeline={"recipe": recipe, "stages": stages, **pipeline},
    ))


def typed(frame: pd.DataFrame) -> pd.DataFrame:
    """A table as its CSV reads back (values as text), to compare in-memory and written rows."""
    return frame.astype(str).replace({"nan": "", "<NA>": "", "None": ""}).reset_index(drop=True)


@pytest.mark.parametrize("recipe", [
    "independent", "aim", pytest.param("mst", marks=SLOW), pytest.param("dpsgd", marks=SLOW),
    pytest.param("hybrid", marks=SLOW),
])
def test_every_recipe_hands_on_synthetic_rows_that_every_client_reads_alike(
    tmp_path: Path, recipe: str
) -> None:
    job = tiny_job(tmp_path, recipe)
    table = read_input(job.data_path, job.schema)[ORDER]

    # The job's in-memory run (the sweep's and the shadow attack's path): the stage's output.
    shadow_generator = PipelineGenerator(job)
    runner = shadow_generator.job  # one SynthesisJob, planned once, for every path below
    run = runner.synthesise(table, RandomSource.seeded(7))
    rows = run.synthetic
    assert type(rows) is SyntheticRows and rows is run.state.synthetic
    assert rows.columns == ORDER and rows.kept is None  # nothing drawn until a client reads
    frame = rows.to_frame()
    assert list(frame.columns) == ORDER and len(frame) == len(rows) > 0
    assert rows.to_frame() is frame and rows.kept is frame  # drawn once, then kept

    # The shadow attack's generator reads the same rows: same job, same seed, same table.
    shadow = shadow_generator(table, 7)
    assert list(shadow.columns) == ORDER and len(shadow) == len(frame)
    pd.testing.assert_frame_equal(shadow, frame)  # the generator's initial weights come from the seed too

    # The release streams the blocks; what the run keeps in memory is what it wrote.
    result = runner.run(tmp_path / "release", evaluate=False)
    written = pd.read_csv(tmp_path / "release" / "synthetic.csv", dtype=str,
                          keep_default_na=False)
    assert list(written.columns) == list(pd.read_csv(job.data_path, nrows=0).columns)
    assert result.records == len(written) == result.manifest["records"]["released"]
    pd.testing.assert_frame_equal(typed(result.synthetic), typed(written))

    # A released model's resample is the same type, in the release's column order.
    resample = load_model(tmp_path / "release").sample(50, np.random.default_rng(0))
    assert type(resample) is SyntheticRows and len(resample) == 50
    assert list(resample.to_frame().columns) == list(written.columns)

    # The Python API: its rows are the fit's SyntheticRows read whole; release writes them.
    synth = Synthesizer(SCHEMA, epsilon=1.0, delta=1e-4, recipe=recipe, seed=5,
                        **STAGES[recipe]).fit(table)
    api_rows = synth._fitted.synthetic
    assert type(api_rows) is SyntheticRows and synth.synthetic is api_rows.to_frame()
    folder = synth.release(tmp_path / "api")
    api_written = pd.read_csv(folder / "synthetic.csv", dtype=str, keep_default_na=False)
    pd.testing.assert_frame_equal(typed(synth.synthetic), typed(api_written))
    sampled = synth.sample(40, seed=1)
    assert list(sampled.columns) == ORDER and len(sampled) == 40


@SLOW
@pytest.mark.parametrize("recipe", RECIPES)
def test_the_sweep_reads_every_recipes_rows(tmp_path: Path, recipe: str) -> None:
    """One sweep run per recipe: evaluated on the rows ``to_frame`` gives (count = records)."""
    job = tiny_job(tmp_path, recipe, records=300)
    (row,) = run_sweep(job, [2.0], 1, tmp_path / "sweep", reference=None,
                       progress=False).rows
    assert row["status"] == "ok", row["error"]
    assert int(row["rows_synthetic"]) == 300


def test_blocks_stream_once_and_a_kept_table_is_released_as_it_is(tmp_path: Path) -> None:
    """``block_rows`` 100 and 450 rows: five blocks, drawn as they are read, none kept; read
    again, they refuse (drawn once). Read whole first, the table is kept and iterating gives it
    as one block: a release after ``to_frame`` writes the rows the client saw."""
    job = tiny_job(tmp_path, "independent", records=450, stages={"sample": {"block_rows": 100}})
    table = read_input(job.data_path, job.schema)
    runner = SynthesisJob(job)
    streamed = runner.synthesise(table, RandomSource.seeded(1)).synthetic
    sizes = [len(block) for block in streamed]
    assert sizes == [100, 100, 100, 100, 50] and streamed.kept is None
    with pytest.raises(RuntimeError, match="drawn once"):
        streamed.to_frame()
    with pytest.raises(RuntimeError, match="drawn once"):
        list(streamed)

    whole = runner.synthesise(table, RandomSource.seeded(1)).synthetic
    frame = whole.to_frame()
    assert len(frame) == 450 and frame.index.equals(pd.RangeIndex(450))
    (block,) = list(whole)
    assert block is frame


def test_a_column_order_must_be_the_tables_columns(tmp_path: Path) -> None:
    job = tiny_job(tmp_path, "independent")
    rows = SynthesisJob(job).synthesise(read_input(job.data_path, job.schema),
                                        RandomSource.seeded(1)).synthetic
    with pytest.raises(ValueError, match="'height'"):
        rows.in_order(["colour", "height"])
    with pytest.raises(ValueError, match="not an order"):
        rows.in_order(["colour", "colour"])
