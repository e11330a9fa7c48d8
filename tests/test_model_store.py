"""The released model: its files hold only DP outputs and public structure (an allow-list, and
the fitted model recomputed from the stored noisy measurements alone); it loads back to the same
model; conditioning is exact; `synthpriv sample` and `synthpriv query` through the real CLI."""

from __future__ import annotations

import io
import json
import shutil
from itertools import combinations
from math import pi, sqrt
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.domain import Dataset, Domain
from synthpriv.errors import ConfigError
from synthpriv.job import SynthesisJob
from synthpriv.marginals.estimation import estimate
from synthpriv.marginals.measurement import Measurement
from synthpriv.model_store import MODEL_ARRAYS, MODEL_JSON, check_model_names, load_model
from synthpriv.release import sha256_of
from synthpriv.released_model import condition, measured_variance

from .conftest import ADULT

CATEGORICAL = ["workclass", "marital-status", "relationship", "race", "sex", "income"]


@pytest.fixture(scope="module")
def mst_release(tmp_path_factory, adult_train: pd.DataFrame):
    """A small MST release (2,000 Adult rows, ε = 1), seeded for a repeatable test; shared by the
    module's tests (none changes it but the one that copies it)."""
    folder = tmp_path_factory.mktemp("mst")
    adult_train.sample(2000, random_state=7).to_csv(folder / "data.csv", index=False)
    config = folder / "job.yaml"
    config.write_text(yaml.safe_dump({
        "name": "small", "data": {"path": "data.csv", "schema": str(ADULT / "schema.yaml")},
        "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": "mst"},
        "evaluation": {"enabled": False}, "seed": 11,
    }))
    return SynthesisJob(load_job(config)).run(folder / "release")


def test_model_files_hold_only_allowed_dp_outputs(mst_release) -> None:
    folder, state = mst_release.out_dir, mst_release.state
    manifest = json.loads((folder / "manifest.json").read_text())
    for name in (MODEL_JSON, MODEL_ARRAYS):
        assert manifest["files"][name]["sha256"] == sha256_of(folder / name)
    document = json.loads((folder / MODEL_JSON).read_text())
    with np.load(folder / MODEL_ARRAYS, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    assert check_model_names(document, list(arrays)) == []
    assert all(a.dtype.kind in "fi" for a in arrays.values())  # numbers only: no objects
    # The measurements are the noisy ones the stage made (a mechanism's output) ...
    assert len(document["measurements"]) == len(state.measurements)
    for i, measurement in enumerate(state.measurements):
        np.testing.assert_array_equal(arrays[f"measurement_{i}_counts"], measurement.noisy_counts)
    # ... and the fitted model is a function of them alone: refitting from the file's
    # measurements (no data) gives the file's marginals.
    released = load_model(folder)
    refit = estimate(released.model.domain, released.measurements,
                     iterations=1000, max_cells=2_000_000)
    for clique, marginal in zip(released.model.tree.cliques, released.model.marginals, strict=True):
        np.testing.assert_allclose(refit.project(clique), marginal.values, rtol=1e-6, atol=1e-6)


def test_a_changed_model_file_is_refused(mst_release, tmp_path: Path) -> None:
    from synthpriv.errors import ReleaseError

    copy = tmp_path / "copy"
    shutil.copytree(mst_release.out_dir, copy)
    path = copy / MODEL_JSON
    path.write_text(path.read_text().replace('"total"', '"total" ', 1))
    with pytest.raises(ReleaseError, match="sha256 does not match"):
        load_model(copy)


def test_the_loaded_model_is_the_fitted_model(mst_release) -> None:
    model, loaded = mst_release.state.model, load_model(mst_release.out_dir).model
    for attributes in (("sex",), ("sex", "income"), ("race", "relationship", "income")):
        np.testing.assert_allclose(loaded.project(attributes), model.project(attributes),
                                   rtol=1e-9, atol=1e-9)


def test_conditioning_matches_the_joint_restricted_to_the_evidence() -> None:
    """p(x | a = 1) from the recalibrated junction tree equals the model's full joint with a ≠ 1
    zeroed and renormalised (brute force over all 60 cells)."""
    rng = np.random.default_rng(3)
    domain = Domain(("a", "b", "c", "d"), (3, 4, 5, 1))
    codes = np.stack([rng.integers(0, s, 400) for s in domain.shape], axis=1)
    codes[:, 1] = (codes[:, 0] + rng.integers(0, 2, 400)) % 4  # dependence a–b
    data = Dataset(codes, domain)
    cliques = [("a", "b"), ("b", "c"), ("c", "d")]
    measurements = [Measurement(c, data.marginal(c) + rng.normal(0, 2, domain.size(c)).reshape(
        domain.project(c).shape), 2.0) for c in cliques]
    model = estimate(domain, measurements, iterations=300)
    joint = model.project(domain.attributes)
    expected = np.where(np.arange(3)[:, None, None, None] == 1, joint, 0.0)
    expected *= model.total / expected.sum()
    conditioned = condition(model, {"a": 1})
    np.testing.assert_allclose(conditioned.project(domain.attributes), expected, rtol=1e-6,
                               atol=1e-8)
    rows = conditioned.sample(200, rng)
    assert (rows[:, 0] == 1).all()


def test_standard_error_combines_the_covering_measurements() -> None:
    """A 1-way marginal covered by its own measurement (σ₁ per cell) and by a 2-way one (σ₂ per
    cell, 4 cells summed into each): variance 1 / (1/σ₁² + 1/(4σ₂²)); uncovered: inf."""
    domain = Domain(("a", "b", "c"), (3, 4, 2))
    measurements = [Measurement(("a",), np.zeros(3), 2.0),
                    Measurement(("a", "b"), np.zeros((3, 4)), 3.0)]
    variance = measured_variance(measurements, domain, ["a"])
    np.testing.assert_allclose(variance, 1.0 / (1 / 4.0 + 1 / (4 * 9.0)))
    np.testing.assert_allclose(measured_variance(measurements, domain, ["b"]), 9.0 * 3)
    assert np.isinf(measured_variance(measurements, domain, ["a", "c"])).all()


def expected_tvd_bound(cells: int, n1: int, n2: int) -> float:
    """E[TVD] between the empirical marginals of two independent i.i.d. samples of sizes n1, n2
    from one distribution over ``cells`` cells: each cell's difference has standard deviation
    sqrt(p(1 − p)(1/n1 + 1/n2)), and E|N(0, s²)| = s·sqrt(2/π); summing, with Σ sqrt(p) ≤
    sqrt(cells) (Cauchy–Schwarz), E[TVD] ≤ ½·sqrt(2/π)·sqrt(cells·(1/n1 + 1/n2)). Controlled
    rounding (both tables are drawn so) only lowers the spread."""
    return 0.5 * sqrt(2 / pi) * sqrt(cells * (1 / n1 + 1 / n2))


def mean_tvd(first: pd.DataFrame, second: pd.DataFrame, order: int) -> tuple[float, float]:
    """Mean TVD over the ``order``-way marginals of CATEGORICAL, and the mean bound above."""
    tvds, bounds = [], []
    for columns in combinations(CATEGORICAL, order):
        p = first.fillna("·").groupby(list(columns)).size() / len(first)
        q = second.fillna("·").groupby(list(columns)).size() / len(second)
        p, q = p.align(q, fill_value=0.0)
        tvds.append(0.5 * float(np.abs(p - q).sum()))
        bounds.append(expected_tvd_bound(len(p), len(first), len(second)))
    return float(np.mean(tvds)), float(np.mean(bounds))


@pytest.mark.slow
def test_sample_matches_the_release_within_sampling_noise(mst_release, tmp_path, capsys) -> None:
    """`synthpriv sample` draws from the same model as the release, so the 1/2/3-way TVD between
    the two tables is sampling noise only: below twice its expected bound (``expected_tvd_bound``;
    a mean over 6, 15, 20 marginals, so the factor 2 is wide). By the triangle inequality the
    resample's TVD to the real table is then the release's to within that too."""
    out = tmp_path / "more"
    assert main(["sample", str(mst_release.out_dir), "--rows", "20000", "--out", str(out)]) == 0
    assert "no further privacy cost" in capsys.readouterr().out
    original = pd.read_csv(mst_release.out_dir / "synthetic.csv", dtype=str, keep_default_na=False)
    more = pd.read_csv(out / "synthetic.csv", dtype=str, keep_default_na=False)
    assert len(more) == 20000
    for order in (1, 2, 3):
        tvd, bound = mean_tvd(original, more, order)
        print(f"{order}-way: mean TVD {tvd:.4f}, bound {bound:.4f}")
        assert tvd < 2 * bound, (order, tvd, bound)
    manifest = json.loads((out / "manifest.json").read_text())
    first = json.loads((mst_release.out_dir / "manifest.json").read_text())
    assert manifest["ledger"] == first["ledger"] and manifest["guarantee"] == first["guarantee"]
    assert manifest["resample"]["of"]["manifest_sha256"] == sha256_of(
        mst_release.out_dir / "manifest.json")
    assert set(manifest["files"]) == {"synthetic.csv", MODEL_JSON, MODEL_ARRAYS}


def test_where_rows_all_satisfy_the_condition(mst_release, tmp_path) -> None:
    out = tmp_path / "women"
    assert main(["sample", str(mst_release.out_dir), "--rows", "3000", "--out", str(out),
                 "--where", "sex=Female", "--where", "income=>50K"]) == 0
    rows = pd.read_csv(out / "synthetic.csv", dtype=str, keep_default_na=False)
    assert len(rows) == 3000
    assert (rows["sex"] == "Female").all() and (rows["income"] == ">50K").all()
    assert json.loads((out / "manifest.json").read_text())["resample"]["where"] == {
        "sex": "Female", "income": ">50K"}


@pytest.mark.parametrize(("condition", "message"), [
    ("sexx=Female", "'sexx' is not a column of the release's schema"),
    ("sex=female", "'female' is not a category of 'sex'. Its categories: ['Female', 'Male']"),
    ("age=30", "'age' is not one"),
    ("sex", "write COLUMN=VALUE"),
])
def test_a_bad_condition_is_a_clear_error_and_writes_nothing(
    mst_release, tmp_path, capsys, condition: str, message: str
) -> None:
    out = tmp_path / "bad"
    assert main(["sample", str(mst_release.out_dir), "--rows", "10", "--out", str(out),
                 "--where", condition]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".bad")]


def test_query_prints_the_marginal_with_standard_errors(mst_release, capsys) -> None:
    assert main(["query", str(mst_release.out_dir), "--marginal", "sex,income"]) == 0
    table = pd.read_csv(io.StringIO(capsys.readouterr().out), keep_default_na=False)
    assert list(table.columns) == ["sex", "income", "count", "std_error"]
    assert len(table) == 4
    model = mst_release.state.model
    assert table["count"].sum() == pytest.approx(model.total)
    one_way = load_model(mst_release.out_dir).query(["sex"])
    sigma = mst_release.plan.stages[0].noise["sigma_one_way"]
    assert (one_way["std_error"] <= sigma * (1 + 1e-9)).all()  # at least its own measurement


def test_a_release_without_a_model_says_so(tmp_path, capsys) -> None:
    from synthpriv.errors import ReleaseError

    (tmp_path / "r").mkdir()
    (tmp_path / "r" / "manifest.json").write_text(json.dumps({"files": {}, "config": {
        "pipeline": {"recipe": "dpsgd"}}}))
    with pytest.raises(ReleaseError, match="holds no model \\(recipe 'dpsgd'\\): it was written"):
        load_model(tmp_path / "r")


SMALL_GENERATOR = {"epochs": 1, "sample_rate": 0.02, "hidden": 8, "candidate_factor": 2}


@pytest.mark.slow
@pytest.mark.parametrize("recipe", ["dpsgd", "hybrid"])
def test_the_generator_is_saved_as_weights_and_loads_to_the_same_sampler(
    write_job, tmp_path: Path, recipe: str
) -> None:
    """The generator's DP-SGD weights (and, for hybrid, its marginals model) are saved as numbers
    within the allow-list; loaded, the same random draws give the same rows; --where conditions
    by rejection."""
    stages = {"generator": SMALL_GENERATOR}
    if recipe == "hybrid":
        stages["marginals"] = {"aim_rounds_per_attribute": 1, "aim_round_iterations": 20,
                               "iterations": 50}
    config = write_job({"pipeline": {"recipe": recipe, "stages": stages}, "seed": 5})
    result = SynthesisJob(load_job(config)).run(tmp_path / recipe)
    folder = result.out_dir
    document = json.loads((folder / MODEL_JSON).read_text())
    with np.load(folder / MODEL_ARRAYS, allow_pickle=False) as stored:
        names = list(stored.files)
    assert document["kind"] == "generator" and check_model_names(document, names) == []
    assert (document["generator"]["prior"] is not None) == (recipe == "hybrid")
    loaded = load_model(folder).model
    first = result.state.model.sample(300, np.random.default_rng(9))
    np.testing.assert_array_equal(loaded.sample(300, np.random.default_rng(9)), first)
    out = tmp_path / f"{recipe}-women"
    assert main(["sample", str(folder), "--rows", "200", "--out", str(out),
                 "--where", "sex=Female"]) == 0
    rows = pd.read_csv(out / "synthetic.csv", dtype=str, keep_default_na=False)
    assert len(rows) == 200 and (rows["sex"] == "Female").all()
    released = load_model(folder)
    if recipe == "hybrid":  # a measured 1-way marginal: the rows are raked to the prior's
        answer = released.query(["sex"])
        assert answer["count"].sum() == pytest.approx(released.model.prior.total)
        assert (answer["std_error"] > 0).all()
    else:
        with pytest.raises(ConfigError, match="no closed form"):
            released.query(["sex"])


def test_a_resample_obeys_the_schema_constraints(tmp_path: Path) -> None:
    """Rows drawn by `synthpriv sample` (conditioned too) go through the run's constraint
    enforcement: every rule and formula holds on every row."""
    from synthpriv.constraints import breaking
    from synthpriv.schema import parse_schema
    from synthpriv.table import read_table
    from tests.test_constraints import _constraint_job

    loaded = parse_schema(_constraint_job(tmp_path), "s")
    assert main(["run", str(tmp_path / "job.yaml"), "--no-evaluation"]) == 0
    out = tmp_path / "more"
    assert main(["sample", str(tmp_path / "out" / "tiny"), "--rows", "1000", "--out", str(out),
                 "--where", "colour=blue"]) == 0
    synthetic = read_table(out / "synthetic.csv", loaded)  # checks both formulas on every row
    assert len(synthetic) == 1000 and (synthetic["colour"] == "blue").all()
    assert not breaking(loaded.constraints, synthetic).any()
    # the manifest tallies this draw's enforcement, not the original run's
    tally = json.loads((out / "manifest.json").read_text())["constraints"]
    original = json.loads((tmp_path / "out" / "tiny" / "manifest.json").read_text())["constraints"]
    assert tally != original and tally["rows_drawn"] >= 1000
    assert tally["acceptance_rate"] * tally["rows_drawn"] >= 1000  # every released row accepted
    assert [r["rule"] for r in tally["rules"]] == [r["rule"] for r in original["rules"]]
