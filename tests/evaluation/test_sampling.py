"""Tests of row sampling in the evaluation (synthpriv.evaluation.sampling): it starts above the
stated sizes, the report says what was sampled, sizes are as documented, and a fixed seed gives the
same report."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
from scipy import stats

from synthpriv.chunks import read_input
from synthpriv.cli import main
from synthpriv.config import EvaluationConfig
from synthpriv.errors import DataError
from synthpriv.evaluation import evaluate as evaluate_module
from synthpriv.evaluation import sampling
from synthpriv.evaluation.evaluate import default_sizes, evaluate_sources, evaluate_tables
from synthpriv.evaluation.sampling import SampleSizes, TableSamples
from synthpriv.schema import load_schema
from tests.evaluation.tiny import evaluate_other_tool_args, write_tiny_job

SMALL = SampleSizes(marginals=900, association=600, tstr=700, quality_report=300, attacks=400,
                    seed=3)


def table(rows: int, seed: int) -> pd.DataFrame:
    """A mixed table whose label ``y`` depends on ``x`` and ``c`` (so TSTR has signal)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    c = rng.choice(["a", "b", "c"], size=rows)
    y = np.where(x + (c == "a") + rng.normal(scale=0.5, size=rows) > 0.5, "yes", "no")
    return pd.DataFrame({"x": x.round(2), "c": c, "k": rng.integers(0, 5, rows), "y": y})


def settings(seed: int = 3, attacks: bool = True) -> EvaluationConfig:
    """Fast settings: no controls, no anonymeter, no quality report, few targets."""
    return EvaluationConfig(target="y", attacks=attacks, quality_report=False, controls=[],
                            anonymeter=False, attack_targets=50, bootstrap=0, attack_seed=seed)


def evaluate(real: pd.DataFrame, synthetic: pd.DataFrame, holdout: pd.DataFrame,
             sizes: SampleSizes | None = SMALL, seed: int = 3) -> dict:
    return evaluate_tables(real, synthetic, numeric_columns=["x", "k"], settings=settings(seed),
                           holdout=holdout, sizes=sizes, progress=False)


@pytest.fixture(scope="module")
def tables() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    return table(3000, 0), table(2500, 1), table(1000, 2)


def test_sampling_kicks_in_above_the_sizes_and_the_report_says_so(tables):
    real, synthetic, holdout = tables
    report = evaluate(real, synthetic, holdout)
    parts = report["data"]["sampled"]["parts"]
    assert parts["marginals"] == {"real": {"rows": 900, "of": 3000},
                                  "synthetic": {"rows": 900, "of": 2500}}
    assert parts["association"]["real"] == {"rows": 600, "of": 3000}
    # holdout (1000 rows) is above the TSTR and attack sizes too
    assert parts["tstr"]["holdout"] == {"rows": 700, "of": 1000}
    assert parts["attacks"] == {"real": {"rows": 400, "of": 3000},
                                "synthetic": {"rows": 400, "of": 2500},
                                "holdout": {"rows": 400, "of": 1000}}
    assert "quality_report" not in parts  # switched off in the settings: nothing read
    assert report["data"]["sampled"]["sizes"]["attacks"] == 400
    assert report["data"]["rows_real"] == 3000  # the table's own size stays in the report
    efficacy = report["utility"]["ml_efficacy"]
    assert efficacy["rows_train"] == {"real": 700, "synthetic": 700}
    assert efficacy["rows_holdout"] == 700
    assert report["privacy"]["release"]["n_targets_per_class"] == 50
    note = next(n for n in report["notes"] if "samples of rows" in n)
    assert "900 of 3,000 real rows" in note and "seed 3" in note


def test_no_sampling_below_the_sizes(tables):
    real, synthetic, holdout = tables
    big = SampleSizes(seed=3)  # defaults: far above these tables
    report = evaluate(real.head(500), synthetic.head(400), holdout.head(300), sizes=big)
    assert report["data"]["sampled"]["parts"] == {}
    assert not any("samples of rows" in note for note in report["notes"])
    assert report["utility"]["ml_efficacy"]["rows_train"] == {"real": 500, "synthetic": 400}


def figures(report: dict) -> tuple:
    utility = report["utility"]
    return (
        [utility["marginals"][k]["mean"] for k in ("1-way", "2-way", "3-way")],
        utility["association"]["mean"],
        utility["ml_efficacy"]["models"],
        report["privacy"]["release"]["worst_case"],
        report["column_fidelity"]["columns"],
    )


def test_a_fixed_seed_gives_the_same_report_and_another_seed_other_rows(tables):
    real, synthetic, holdout = tables
    first, again = evaluate(real, synthetic, holdout), evaluate(real, synthetic, holdout)
    assert figures(first) == figures(again)
    other = evaluate(real, synthetic, holdout, sizes=SampleSizes(**{**SMALL.__dict__, "seed": 4}))
    assert figures(other)[0] != figures(first)[0]  # other rows, other TVDs


def test_samples_are_nested_distinct_rows_of_the_table():
    frame = pd.DataFrame({"v": np.arange(5000)})
    samples = TableSamples({"real": frame}, SampleSizes(marginals=2000, association=300, tstr=50,
                                                        quality_report=50, attacks=50, seed=9))
    wide, narrow = samples.rows("real", "marginals"), samples.rows("real", "association")
    assert len(wide) == 2000 and wide["v"].is_unique
    assert narrow["v"].tolist() == wide["v"].tolist()[:300]  # the same rows, as far as it goes
    assert set(wide["v"]) <= set(frame["v"])
    assert wide["v"].tolist() != sorted(wide["v"])[:2000]  # not the first rows: a random sample


@pytest.mark.parametrize("largest", [1000, None])
def test_a_table_between_the_smallest_and_the_largest_size_is_cut_where_needed(largest):
    """Adult's 32,520 rows lie between the quality report's 10,000 and the marginals' 50,000:
    the small part reads a sample, the large one every row (a KeyError before)."""
    frame = pd.DataFrame({"v": np.arange(600)})
    sizes = SampleSizes(marginals=largest, association=300, tstr=300, quality_report=50, attacks=50)
    samples = TableSamples({"real": frame}, sizes)
    assert len(samples.rows("real", "marginals")) == 600
    small = samples.rows("real", "quality_report")
    assert len(small) == 50 and small["v"].is_unique
    assert small["v"].tolist() == samples.rows("real", "association")["v"].tolist()[:50]


def test_default_sizes_are_the_documented_ones():
    sizes = default_sizes(EvaluationConfig(attack_seed=7))
    assert sizes == SampleSizes(seed=7)
    assert (sizes.marginals, sizes.tstr, sizes.attacks) == (50_000, 20_000, 5_000)
    doc = sampling.__doc__
    for part in SampleSizes.parts():
        line = re.search(rf"^{part}\s+([\d,]+)\s", doc, flags=re.MULTILINE)
        assert line and int(line.group(1).replace(",", "")) == getattr(sizes, part), part


def test_sampling_can_be_turned_off():
    off = SampleSizes.disabled(seed=1)
    assert off.largest() is None
    frame = pd.DataFrame({"v": np.arange(300_000)})
    assert len(TableSamples({"real": frame}, off).rows("real", "marginals")) == 300_000
    with pytest.raises(ValueError, match="at least 2"):
        SampleSizes(attacks=1)


def test_a_part_sampled_while_another_reads_every_row() -> None:
    """One part reading every row (size None) left no common order, and a sampled part failed
    with KeyError: 'real' (`synthpriv evaluate --no-anonymeter` on Adult)."""
    table = pd.DataFrame({"x": range(50)})
    samples = TableSamples({"real": table}, SampleSizes(None, None, None, 10, None))
    assert len(samples.rows("real", "quality_report")) == 10
    assert len(samples.rows("real", "marginals")) == 50


# --------------------------------------------------------------------------- streamed samples


def reservoir_positions(n: int, size: int, seed: int, chunk: int) -> np.ndarray:
    """The positions ``Reservoir`` keeps of an ``n``-row table fed in ``chunk``-row chunks."""
    reservoir = sampling.Reservoir(size, seed, stream=1)
    table = pa.table({"v": np.arange(n)})
    for start in range(0, n, chunk):
        reservoir.add(table.slice(start, chunk))
    rows, positions = reservoir.sample()
    assert rows.column("v").to_pylist() == positions.tolist()  # rows and positions agree
    return positions


def test_the_reservoir_is_uniform_over_subsets():
    """Uniform without replacement means every one of the C(6, 2) = 15 pairs equally likely.
    3,000 seeded draws (chunks of 2 rows, so rows cross chunks and the cut), then Pearson's
    chi-square against 200 per pair: under uniformity the statistic is chi-square with 14
    degrees of freedom, above 36.1 with probability 0.001."""
    counts: dict[tuple[int, ...], int] = {}
    for seed in range(3000):
        pair = tuple(sorted(reservoir_positions(6, 2, seed, chunk=2).tolist()))
        counts[pair] = counts.get(pair, 0) + 1
    assert len(counts) == 15
    observed = np.array(list(counts.values()))
    assert stats.chisquare(observed).statistic < stats.chi2.ppf(0.999, 14)


def test_the_reservoir_is_uniform_over_the_stream_and_its_prefixes_too():
    """10,000 of 200,000 rows streamed in chunks of 7,000: each twentieth of the stream holds
    hypergeometric(200,000, 10,000, 10,000) rows of the sample (mean 500); chi-square with 19
    degrees of freedom below its 0.999 quantile (43.8), for the sample and for its first 1,000
    rows (the nested sample a smaller part reads; mean 50 per twentieth)."""
    positions = reservoir_positions(200_000, 10_000, seed=5, chunk=7_000)
    assert len(np.unique(positions)) == 10_000
    for kept in (positions, positions[:1000]):
        per_twentieth = np.bincount(kept // 10_000, minlength=20)
        assert stats.chisquare(per_twentieth).statistic < stats.chi2.ppf(0.999, 19)


def test_the_reservoir_keeps_the_same_rows_however_the_table_is_chunked():
    whole = reservoir_positions(5000, 300, seed=2, chunk=5000)
    for chunk in (1, 64, 999):
        assert reservoir_positions(5000, 300, seed=2, chunk=chunk).tolist() == whole.tolist()
    # and the in-memory sampler draws the same keys, so it keeps the same rows
    frame = pd.DataFrame({"v": np.arange(5000)})
    in_memory = sampling.sample_frame(frame, 300, seed=2, stream=1).rows
    assert in_memory["v"].tolist() == whole.tolist()
    assert in_memory.index.tolist() == whole.tolist()


@pytest.fixture(scope="module")
def files(tmp_path_factory, tables) -> dict:
    """The three tables as CSV files, with a schema."""
    folder = tmp_path_factory.mktemp("streamed")
    paths = {}
    for name, frame in zip(("real", "synthetic", "holdout"), tables, strict=True):
        paths[name] = folder / f"{name}.csv"
        frame.to_csv(paths[name], index=False)
    (folder / "schema.yaml").write_text(
        "columns:\n"
        "  - {name: x, kind: continuous, lower: -6, upper: 6}\n"
        "  - {name: c, kind: categorical, categories: [a, b, c]}\n"
        "  - {name: k, kind: integer, lower: 0, upper: 4}\n"
        "  - {name: y, kind: categorical, categories: ['no', 'yes']}\n"
    )
    return {"paths": paths, "schema": load_schema(folder / "schema.yaml")}


def test_a_streamed_file_gives_the_rows_and_the_report_of_the_table_read_whole(files):
    """Chunked reading (7-row chunks, only sampled rows parsed) equals reading the file whole."""
    schema, path = files["schema"], files["paths"]["real"]
    whole = read_input(path, schema)
    streamed = sampling.sample_file(path, schema, 900, seed=3, stream=1, chunk_rows=7)
    in_memory = sampling.sample_frame(whole, 900, seed=3, stream=1)
    assert streamed.total == in_memory.total == 3000
    pd.testing.assert_frame_equal(streamed.rows, in_memory.rows)
    assert isinstance(streamed.rows["c"].dtype, pd.CategoricalDtype)  # not object columns
    from_files = evaluate_sources(files["paths"], schema, numeric_columns=["x", "k"],
                                  settings=settings(), sizes=SMALL, progress=False)
    frames = {name: read_input(p, schema) for name, p in files["paths"].items()}
    from_frames = evaluate(frames["real"], frames["synthetic"], frames["holdout"])
    assert figures(from_files) == figures(from_frames)
    assert from_files["data"]["sampled"] == from_frames["data"]["sampled"]
    assert from_files["data"]["rows_real"] == 3000


def test_a_defect_in_a_sampled_row_names_the_row_as_a_whole_read_would(tmp_path, files):
    lines = files["paths"]["real"].read_text().splitlines()
    lines[5] = lines[5].replace(",a,", ",z,").replace(",b,", ",z,").replace(",c,", ",z,")
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataError) as whole:
        read_input(bad, files["schema"])
    with pytest.raises(DataError) as streamed:
        sampling.sample_file(bad, files["schema"], None, seed=0, stream=1, chunk_rows=100)
    assert str(streamed.value) == str(whole.value) and "row 5" in str(whole.value)


def test_the_holdout_is_kept_only_as_far_as_its_parts_read_it():
    """The holdout serves TSTR and the attacks only: the evaluation keeps (and parses) no more
    of it than the larger of those sizes, while the real table is kept to the marginals' size."""
    sizes = SampleSizes(marginals=900, association=600, tstr=300, quality_report=200, attacks=400)
    assert sizes.largest("holdout") == 400 and sizes.largest("real") == 900
    frame = pd.DataFrame({"v": np.arange(2000)})
    samples = TableSamples({"real": frame, "holdout": frame}, sizes)
    assert len(samples.largest("holdout")) == 400 and len(samples.largest("real")) == 900


def test_a_part_reads_only_the_categories_its_rows_hold():
    """A cut of a larger sample drops the categories none of its rows holds (SDV's copula
    control failed with KeyError on such a category)."""
    frame = pd.DataFrame({"c": ["rare"] + ["common"] * 999})
    sizes = SampleSizes(marginals=None, association=None, tstr=None, quality_report=None,
                        attacks=10)
    samples = TableSamples({"real": frame}, sizes)
    cut = samples.rows("real", "attacks")
    assert isinstance(cut["c"].dtype, pd.CategoricalDtype)
    assert set(cut["c"].cat.categories) == set(cut["c"])


@pytest.mark.slow
def test_the_evaluate_command_streams_samples_and_its_report_says_how_many_rows(
    tmp_path, capsys, monkeypatch
):
    """Through the CLI (``synthpriv evaluate``): with sizes below the tables' rows, every part
    reads its sample of the files, and report.json and the printed note say how many rows."""
    sizes = SampleSizes(marginals=300, association=250, tstr=200, quality_report=150,
                        attacks=120, seed=0)
    monkeypatch.setattr(evaluate_module, "default_sizes", lambda settings: sizes)
    write_tiny_job(tmp_path)
    assert main(evaluate_other_tool_args(tmp_path, "--controls", "", "--no-anonymeter")) == 0
    report = json.loads((tmp_path / "eval" / "report.json").read_text())
    sampled = report["data"]["sampled"]
    assert sampled["sizes"]["attacks"] == 120
    assert sampled["parts"]["marginals"]["real"] == {"rows": 300, "of": 400}
    assert sampled["parts"]["attacks"]["synthetic"] == {"rows": 120, "of": 400}
    assert report["data"]["rows_real"] == 400
    assert report["utility"]["ml_efficacy"]["rows_train"] == {"real": 200, "synthetic": 200}
    assert "300 of 400 real rows" in capsys.readouterr().out
