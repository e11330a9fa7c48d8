"""Bad input through the command line: one clear message (what was expected, what was found, how
to fix it), exit code 2, no traceback, and no release folder. Inputs that are fine (a UTF-8 BOM,
one row, values beyond the public bounds) release normally."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from synthpriv.cli import main

from .conftest import GOOD_ROWS, SCHEMA, job_config

HEADER = "age,city,income\n"

BAD_CSV = [
    ("missing column", "age,city\n30,Paris\n",
     ["missing column(s) ['income']", "Expected exactly ['age', 'city', 'income']"]),
    ("extra column", "age,city,income,zip\n30,Paris,1,75001\n",
     ["column(s) not in the schema ['zip']", "Fix the file or the schema"]),
    ("duplicated header", "age,city,income,city\n30,Paris,1,Paris\n",
     ["repeats column(s) ['city']", "name each column once"]),
    ("wrong delimiter", "age;city;income\n30;Paris;1\n",
     ["the file seems to use ';'", 'Set data.delimiter: ";" in the job config']),
    ("non-UTF-8 bytes", (HEADER + "30,Par\xe9s,1\n").encode("latin-1"),
     ["not UTF-8 (invalid byte at offset 22)", "Re-save the file as UTF-8"]),
    ("quoted newline in a value the schema lacks", HEADER + '30,"Pa\nris",1\n41,Lyon,2\n',
     ["column 'city'", "'Pa\\nris'", "at row 1.", "Add them to the schema"]),
    ("unclosed quote", HEADER + '30,"Paris,1\n40,Lyon,2\n',
     ["row 1 has 2 fields, the header has 3", "an unclosed quote?"]),
    ("a 200,000-character field (shown cut short)", HEADER + "30," + "x" * 200_000 + ",1\n",
     ["column 'city' has value(s) ['xxxx", "…(200000 chars)", "at row 1"]),
    ("ragged row", HEADER + "30,Paris,1\n40,Lyon\n",
     ["row 2 has 2 fields, the header has 3", "unquoted comma"]),
    ("empty file", "", ["the file is empty", "Expected a header row"]),
    ("blank lines only", "\n\n  \n", ["the file is empty"]),
    ("header only", HEADER, ["has a header but no rows"]),
    ("a column entirely missing", HEADER + "30,,1\n40,,2\n",
     ["column 'city' has missing values at row 1, 2", "set 'missing: true' for 'city'"]),
    ("NaN in a numeric column", HEADER + "30,Paris,NaN\n",
     ["column 'income' is continuous but has non-numeric value(s) ['NaN'] at row 1",
      "leave the cell empty for a missing value"]),
    ("inf in a numeric column", HEADER + "30,Paris,1\n40,Lyon,-inf\n",
     ["column 'income' has infinite value(s) at row 2", "finite number or an empty cell"]),
    ("a string in a numeric column", HEADER + "thirty,Paris,1\n",
     ["column 'age' is integer but has non-numeric value(s) ['thirty'] at row 1"]),
    ("a fraction in an integer column", HEADER + "30.5,Paris,1\n",
     ["column 'age' is integer but has non-integer value(s) ['30.5'] at row 1",
      "declare the column 'continuous'"]),
    ("a category not in the schema", HEADER + "30,Paris,1\n30,Berlin,1\n",
     ["column 'city' has value(s) ['Berlin'] not in the schema's categories, at row 2",
      "unknown_categories: missing"]),
    ("100,000 distinct strings", HEADER + "".join(f"30,city{i},1\n" for i in range(100_000)),
     ["column 'city' has value(s) ['city0', 'city1', 'city10', 'city100', 'city1000']",
      "at row 1, 2, 3, 4, 5 and 99995 more"]),
]


def assert_clean_failure(code: int, error: str, expected: list[str], release: Path) -> None:
    assert code == 2
    assert error.startswith("error: ") and "Traceback" not in error
    for part in expected:
        assert part in error, f"{part!r} not in {error!r}"
    assert not release.exists()


@pytest.mark.parametrize(("csv", "expected"), [c[1:] for c in BAD_CSV],
                         ids=[c[0] for c in BAD_CSV])
def test_bad_csv_gives_one_clear_message(cli_run, tmp_path: Path, csv, expected) -> None:
    code, error = cli_run(csv)
    assert_clean_failure(code, error, expected, tmp_path / "release")
    assert error.count("error:") == 1


BAD_CONFIG = [
    ("delimiter of two characters", {"data": {"delimiter": ";;"}},
     ["'data.delimiter'", "must be one character", "found ';;'", "Fix data.delimiter"]),
    ("misspelled key", {"budget": {"epsilom": 1.0, "delta": 1e-6}},
     ["unknown key 'budget.epsilom'. Did you mean 'epsilon'?"]),
    ("misspelled section", {"pipline": {"recipe": "independent"}},
     ["unknown key 'pipline'. Did you mean 'pipeline'?"]),
    ("wrong type", {"budget": {"epsilon": "lots"}},
     ["'budget.epsilon': Input should be a valid number", "found 'lots'"]),
    ("epsilon = 0", {"budget": {"epsilon": 0}},
     ["'budget.epsilon': Input should be greater than 0 (found 0)"]),
    ("negative delta", {"budget": {"delta": -1e-6}},
     ["'budget.delta': Input should be greater than 0 (found -1e-06)"]),
    ("budget too small for the plan",
     {"pipeline": {"recipe": "independent", "stages": {"marginals": {"sigma": 0.5}}}},
     ["the stages with fixed noise alone spend ε =", "more than the budget ε = 1",
      "Raise budget.epsilon"]),
    ("a recipe that does not exist", {"pipeline": {"recipe": "nope"}},
     ["pipeline.recipe 'nope' not found", "Available recipes: ['aim', ", "'independent', 'mst'"]),
    ("a stage option of the wrong type",
     {"pipeline": {"recipe": "independent", "stages": {"marginals": {"sigma": "x"}}}},
     ["stage 'marginals'", "'sigma': Input should be a valid number"]),
    ("a negative seed", {"seed": -1}, ["'seed'", "non-negative integer"]),
    ("a malformed schema",
     {"data": {"schema": {"columns": [{"name": "age", "kind": "integr", "lower": 0, "upper": 1}]}}},
     ["data.schema: invalid Schema", "'integr'", "expected one of categorical, integer, continuous",
      "Did you mean 'integer'"]),
    ("a marginal over max_model_cells (mst counts every pair)",
     {"pipeline": {"recipe": "mst", "stages": {"marginals": {"max_model_cells": 30}}}},
     ["the mst selection counts the marginal age×income with 90 cells, above "
      "max_model_cells = 30", "raise pipeline.stages.marginals.max_model_cells"]),
    ("a model over max_model_cells (ModelTooLargeError from the estimator)",
     {"pipeline": {"recipe": "aim", "stages": {"marginals": {"max_model_cells": 20,
                                                            "adaptive_domain": False}}}},
     ["the graphical model would have 22 cells", "above the limit max_cells=20",
      "max_model_cells (pipeline.stages.marginals)"]),
]


@pytest.mark.parametrize(("overrides", "expected"), [c[1:] for c in BAD_CONFIG],
                         ids=[c[0] for c in BAD_CONFIG])
def test_bad_config_gives_one_clear_message(cli_run, tmp_path, overrides, expected) -> None:
    code, error = cli_run(**overrides)
    assert_clean_failure(code, error, expected, tmp_path / "release")


def test_delta_of_at_least_one_over_n_is_refused(cli_run, tmp_path) -> None:
    """Against the public count when given (at plan time), else against the run's DP estimate
    n̂ (never the exact n: synthpriv.job.check_delta)."""
    rows = HEADER + "30,Paris,1\n" * 200
    code, error = cli_run(rows, budget={"delta": 0.01}, data={"public_records": 200})
    assert_clean_failure(code, error, ["budget.delta = 0.01 is not below 1/n = 0.005 for the "
                                       "public row count", "Choose δ ≪ 1/n"], tmp_path / "release")
    code, error = cli_run(rows, budget={"delta": 0.01})
    assert_clean_failure(code, error, ["budget.delta = 0.01 is not below 1/n̂",
                                       "Choose δ ≪ 1/n"], tmp_path / "release")


def test_config_that_is_not_yaml_or_not_a_mapping(cli_run, tmp_path) -> None:
    code, error = cli_run(config="budget: [epsilon: 1\n")
    assert_clean_failure(code, error, ["not valid YAML"], tmp_path / "release")
    code, error = cli_run(config="- just\n- a list\n")
    assert_clean_failure(code, error, ["a job config is a YAML mapping, found list"],
                         tmp_path / "release")


def test_command_line_budget_overrides_are_validated(cli_run, tmp_path) -> None:
    code, error = cli_run(args=("--epsilon", "0"))
    assert_clean_failure(code, error, ["'budget.epsilon': Input should be greater than 0"],
                         tmp_path / "release")
    code, error = cli_run(args=("--delta", "1.5"))
    assert_clean_failure(code, error, ["'budget.delta': Input should be less than 1"],
                         tmp_path / "release")


def test_existing_output_folder_is_kept_and_refused(cli_run, tmp_path) -> None:
    release = tmp_path / "release"
    release.mkdir()
    (release / "keep.txt").write_text("earlier work")
    code, error = cli_run()
    assert code == 2 and "Traceback" not in error
    assert f"a release already exists at {release}. Pass --force" in error
    assert [p.name for p in release.iterdir()] == ["keep.txt"]


def unwritable_folder(tmp_path: Path) -> Path:
    """A folder this process cannot create files in: by permission for an ordinary user; for
    root (which ignores permission bits) a kernel file system that refuses new folders."""
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir(mode=0o500)
        return locked
    if not Path("/sys").is_dir():
        pytest.skip("running as root without /sys: no folder root cannot write")
    return Path("/sys")


def test_unwritable_output_folder_is_refused_before_reading_data(cli_run, tmp_path) -> None:
    parent = unwritable_folder(tmp_path)
    target = parent / "synthpriv-release"
    # the data file is empty: the output check must come first, before any data is read
    code, error = cli_run("", output={"dir": str(target)})
    assert_clean_failure(code, error, [str(parent), "Choose another --out"], target)
    assert "cannot write" in error


@pytest.mark.parametrize(
    ("name", "csv"),
    [
        ("UTF-8 byte-order mark", "\ufeff" + GOOD_ROWS),
        ("one row", HEADER + "30,Paris,1\n"),
        ("values beyond the public bounds (clipped)", HEADER + "300,Paris,-5\n-4,Lyon,1e9\n"),
        ("quoted newline inside a listed category", HEADER + '30,"Pa\nris",1\n'),
    ],
)
def test_acceptable_input_releases(cli_run, tmp_path, name: str, csv: str) -> None:
    schema = json.loads(json.dumps(SCHEMA))
    schema["columns"][1]["categories"].append("Pa\nris")
    code, error = cli_run(csv, data={"schema": schema}, seed=3)
    assert code == 0, error
    synthetic = pd.read_csv(tmp_path / "release" / "synthetic.csv")
    assert list(synthetic.columns) == ["age", "city", "income"]
    assert synthetic["age"].between(0, 100).all()
    assert synthetic["income"].dropna().between(0, 1000).all()


@pytest.mark.slow
def test_a_wide_categorical_column_listed_in_the_schema_runs(cli_run, tmp_path) -> None:
    """100,000 distinct strings that the schema does list: a 100,000-cell 1-way marginal is
    well within max_model_cells and releases; the mst selection's pairs would not be, and are
    refused before the data is read."""
    schema = {"columns": [
        {"name": "age", "kind": "integer", "lower": 0, "upper": 100, "bins": 10},
        {"name": "city", "kind": "categorical",
         "categories": [f"city{i}" for i in range(100_000)]},
        {"name": "town", "kind": "categorical",
         "categories": [f"town{i}" for i in range(100_000)]},
    ]}
    csv = "age,city,town\n" + "".join(f"30,city{i},town{i}\n" for i in range(100_000))
    data, release = tmp_path / "data.csv", tmp_path / "release"
    mst = job_config(data, release, data={"schema": schema}, seed=1, pipeline={"recipe": "mst"})
    code, error = cli_run(csv, config=json.dumps(mst))  # JSON is YAML, and fast to write
    assert_clean_failure(code, error, ["the marginal city×town with 10,000,000,000 cells"],
                         release)
    independent = job_config(data, release, data={"schema": schema}, seed=1)
    code, error = cli_run(csv, config=json.dumps(independent))
    assert code == 0, error
    released = pd.read_csv(tmp_path / "release" / "synthetic.csv")
    assert released["city"].str.startswith("city").all()


def test_main_never_leaks_a_traceback_for_a_missing_config(capsys, tmp_path) -> None:
    assert main(["run", str(tmp_path / "nope.yaml")]) == 2
    error = capsys.readouterr().err
    assert error == f"error: config file not found: {tmp_path / 'nope.yaml'}\n"

