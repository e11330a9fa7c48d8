"""The domain step (issue 13, items 2-3): DP bounds and DP categories where the schema gives
none, planned and charged to the one ledger; plan-time refusals that read nothing; the safe
schema draft; category labels that round-trip exactly."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.errors import ConfigError, DataError, SchemaError
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger, ThresholdEvent
from synthpriv.privacy.bounds import Buckets
from synthpriv.privacy.domain_budget import heap_column_weight
from synthpriv.privacy.randomness import RandomSource
from synthpriv.runner import run_job
from synthpriv.schema import CategoricalColumn, parse_schema
from synthpriv.schema_infer import SAFE_HEADER, infer_schema, schema_yaml
from tests.evaluation.tiny import tiny_table

OPEN_SCHEMA = {"columns": [
    {"name": "colour", "kind": "categorical", "missing": True},
    {"name": "shape", "kind": "categorical", "other": "other"},
    {"name": "size", "kind": "integer", "lower": 0},
    {"name": "weight", "kind": "integer"},
]}


def _job(folder: Path, schema: dict = OPEN_SCHEMA, table: pd.DataFrame | None = None,
         **budget) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (tiny_table(400, 1) if table is None else table).to_csv(folder / "train.csv", index=False)
    (folder / "schema.yaml").write_text(yaml.safe_dump(schema))
    config = {
        "name": "open", "data": {"path": "train.csv", "schema": "schema.yaml"},
        "budget": {"epsilon": 1.0, "delta": 1e-5, **budget},
        "pipeline": {"recipe": "independent"}, "evaluation": {"enabled": False},
        "output": {"dir": str(folder / "out")}, "seed": 11,
    }
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def test_the_plan_puts_the_domain_step_first_with_its_share(tmp_path: Path, capsys) -> None:
    plan, stages = plan_job(load_job(_job(tmp_path, domain_share=0.05)))
    assert [s.stage for s in plan.stages] == ["domain", "marginals", "sample"]
    assert [share for _, share in stages] == pytest.approx([0.05, 0.95, 0.0])
    domain = plan.stages[0]
    assert domain.rho == pytest.approx(0.05 / 0.95 * plan.stages[1].rho)
    thresholds = [e for e in domain.events if isinstance(e, ThresholdEvent)]
    assert [e.label for e in thresholds] == ["category threshold: colour",
                                             "category threshold: shape",
                                             "heap threshold: size", "heap threshold: weight"]
    assert sum(e.delta for e in thresholds) <= 0.1 * 1e-5
    assert plan.epsilon <= 1.0
    assert main(["plan", str(tmp_path / "job.yaml")]) == 0
    shown = capsys.readouterr().out
    assert "domain" in shown and "category_threshold" in shown and "delta_thresholds" in shown


@pytest.mark.parametrize("recipe", ["independent", "mst", "aim"])
def test_the_default_share_gives_the_domain_counts_msts_one_way_noise(
    tmp_path: Path, recipe: str
) -> None:
    path = _job(tmp_path)
    config = yaml.safe_load(path.read_text())
    config["pipeline"]["recipe"] = "mst"
    config["data"]["public_records"] = 400  # no noisy count: MST's 1-way round is a third
    path.write_text(yaml.safe_dump(config))
    mst_plan, mst_stages = plan_job(load_job(path))
    # k = d = 4 histograms and 2 heap columns (size, weight) at 1/F² + 1/F_r² each (heaps and
    # the bounds refinement, heap_column_weight):
    # s = w / (1 + w), w = (4 + 2·(1/F² + 1/F_r²))/(3·4)
    weight = (4 + 2 * heap_column_weight()) / 12
    assert mst_stages[0][1] == pytest.approx(weight / (1 + weight))
    domain = mst_plan.stages[0]
    assert domain.noise["sigma"] == pytest.approx(mst_plan.stages[1].noise["sigma_one_way"])
    assert domain.rho == pytest.approx(weight * mst_plan.stages[1].rho)
    config["pipeline"]["recipe"] = recipe  # the same share whatever the recipe
    path.write_text(yaml.safe_dump(config))
    assert plan_job(load_job(path))[1][0][1] == pytest.approx(weight / (1 + weight))


def test_a_public_schema_has_no_domain_step(tmp_path: Path) -> None:
    closed = {"columns": [{"name": "colour", "kind": "categorical",
                           "categories": ["red", "green", "blue"]}]}
    table = tiny_table(50, 1)[["colour"]]
    plan, _ = plan_job(load_job(_job(tmp_path, closed, table)))
    assert [s.stage for s in plan.stages] == ["marginals", "sample"]


@pytest.mark.parametrize("budget, column, key", [
    ({"domain_share": 0}, "size", "budget.domain_share"),
    ({"domain_share": 0}, "colour", "budget.domain_share"),
    ({"domain_delta_share": 0}, "colour", "budget.domain_delta_share"),
])
def test_an_unresolvable_column_is_refused_at_plan_time_and_nothing_is_read(
    tmp_path: Path, monkeypatch, budget: dict, column: str, key: str
) -> None:
    def no_reading(*args, **kwargs):
        raise AssertionError("the table was read")

    for module in ("synthpriv.job.file_header", "synthpriv.domain_stage.iter_chunks",
                   "synthpriv.job.open_counts", "synthpriv.job.read_input"):
        monkeypatch.setattr(module, no_reading)
    job = load_job(_job(tmp_path, **budget))
    with pytest.raises(ConfigError) as error:
        run_job(job)
    assert f"column '{column}'" in str(error.value) and key in str(error.value)
    assert "Nothing was read" in str(error.value)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("column, message", [
    ({"name": "c", "kind": "categorical"}, "set 'other: <label>'"),
    ({"name": "c", "kind": "categorical", "categories": []}, "empty list"),
    ({"name": "x", "kind": "integer", "edges": [0, 1, 2]}, "need both bounds"),
    ({"name": "x", "kind": "integer", "lower": 0, "edges": [0, 1, 2]}, "need both bounds"),
])
def test_schema_refuses_a_domain_it_cannot_resolve(column: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_schema({"columns": [column]}, "schema.yaml")


def _resolve(job_path: Path, table: pd.DataFrame, seed: int, planned=None):
    job = load_job(job_path)
    planned = plan_job(job) if planned is None else planned
    ledger = Ledger(job.config.budget.neighbouring)
    resolved, _ = resolve_domain(job, planned, ledger, RandomSource.seeded(seed), [table])
    return resolved, ledger, planned[0]


def test_resolution_records_the_planned_events_and_fills_the_schema(tmp_path: Path) -> None:
    table = tiny_table(400, 1)
    table.loc[0, "colour"] = "mauve"  # one row: never frequent enough to be released
    resolved, ledger, plan = _resolve(_job(tmp_path, epsilon=10.0), table, seed=3)
    assert ledger.events == plan.stages[0].events  # both tuples: plans are immutable
    colour, shape = resolved.schema.column("colour"), resolved.schema.column("shape")
    assert set(colour.categories) <= set(table["colour"]) and "mauve" not in colour.categories
    assert colour.unknown_categories == "missing"
    assert shape.categories[-1] == "other" and "round" in shape.categories
    size, weight = resolved.schema.column("size"), resolved.schema.column("weight")
    assert size.lower == 0 and size.upper >= table["size"].median()
    assert weight.lower <= table["weight"].median() <= weight.upper
    assert not resolved.schema.unresolved


def test_bounds_depend_on_the_bucket_counts_only(tmp_path: Path) -> None:
    """Moving values within their buckets (9 → 10, both in [8, 15]) changes nothing: the DP
    bounds are post-processing of the noisy bucket histogram."""
    table = tiny_table(400, 1)
    moved = table.copy()
    moved["weight"] = moved["weight"].where(moved["weight"] != 9, 10)
    buckets = Buckets("integer")
    assert (buckets.counts(table["weight"].to_numpy(float))
            == buckets.counts(moved["weight"].to_numpy(float))).all()
    assert not table["weight"].equals(moved["weight"])
    job = _job(tmp_path, epsilon=3.0)
    planned = plan_job(load_job(job))
    first, _, _ = _resolve(job, table, seed=5, planned=planned)
    second, _, _ = _resolve(job, moved, seed=5, planned=planned)
    assert first.schema.column("weight") == second.schema.column("weight")


@pytest.mark.slow
def test_a_run_releases_only_kept_labels_and_states_the_total_delta(tmp_path: Path) -> None:
    table = tiny_table(400, 1)
    table.loc[0, "shape"] = "hexagon"
    result = run_job(load_job(_job(tmp_path, table=table, epsilon=5.0)))
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["guarantee"]["delta_if_noise_secret"] == 1e-5  # the job's δ, thresholds in it
    assert 0 < manifest["ledger"]["delta_thresholds"] <= 1e-6
    kinds = [e["kind"] for e in manifest["ledger"]["events"]]
    assert kinds[:3] == ["discrete_gaussian", "threshold", "threshold"]
    assert manifest["ledger"]["events"][0]["count"] == 4  # one histogram per column
    released = pd.read_csv(tmp_path / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    kept = {c["name"]: c for c in manifest["schema"]["columns"]}
    assert "hexagon" not in set(released["shape"])
    assert set(released["shape"]) <= set(kept["shape"]["categories"])
    assert set(released["colour"]) - {""} <= set(kept["colour"]["categories"])
    weights = released["weight"].astype(int)
    assert kept["weight"]["lower"] <= weights.min() and weights.max() <= kept["weight"]["upper"]
    assert result.job.schema.column("shape").categories == kept["shape"]["categories"]


LABELS = [" 0 <= ... < 200 DM ", "< 0 DM", "no checking account "]


def _spaced_table(rows: int = 300) -> pd.DataFrame:
    rng = np.random.default_rng(4)
    return pd.DataFrame({"checking": rng.choice(LABELS, rows, p=[0.5, 0.3, 0.2]),
                         "months": rng.integers(4, 60, rows)})


def _released_labels(folder: Path) -> set[str]:
    with (folder / "out" / "synthetic.csv").open(newline="", encoding="utf-8") as handle:
        return {row["checking"] for row in csv.DictReader(handle)}


def test_labels_with_spaces_round_trip_through_a_run(tmp_path: Path) -> None:
    """Categories written with leading/trailing spaces are read, released and written exactly."""
    schema = {"columns": [{"name": "checking", "kind": "categorical", "categories": LABELS},
                          {"name": "months", "kind": "integer", "lower": 0, "upper": 72}]}
    _job(tmp_path, schema, _spaced_table(), epsilon=5.0)
    assert main(["run", str(tmp_path / "job.yaml")]) == 0
    assert _released_labels(tmp_path) == set(LABELS)


@pytest.mark.slow
def test_discovered_labels_with_spaces_round_trip(tmp_path: Path) -> None:
    schema = {"columns": [{"name": "checking", "kind": "categorical", "missing": True},
                          {"name": "months", "kind": "integer", "missing": True}]}
    _job(tmp_path, schema, _spaced_table(), epsilon=20.0)
    assert main(["run", str(tmp_path / "job.yaml")]) == 0
    assert _released_labels(tmp_path) - {""} == set(LABELS)


@pytest.mark.slow
def test_stripping_labels_is_an_explicit_option(tmp_path: Path) -> None:
    table = _spaced_table()
    stripped = [label.strip() for label in LABELS]
    schema = {"columns": [{"name": "checking", "kind": "categorical", "categories": stripped},
                          {"name": "months", "kind": "integer", "lower": 0, "upper": 72}]}
    job = load_job(_job(tmp_path, schema, table, epsilon=5.0))
    with pytest.raises(DataError, match="strip_labels: true"):
        run_job(job)
    _job(tmp_path, {**schema, "strip_labels": True}, table, epsilon=5.0)
    assert main(["run", str(tmp_path / "job.yaml"), "--force"]) == 0
    assert _released_labels(tmp_path) == set(stripped)


def test_infer_drafts_labels_as_written(tmp_path: Path) -> None:
    _spaced_table().to_csv(tmp_path / "data.csv", index=False)
    schema, _ = infer_schema(tmp_path / "data.csv")
    assert sorted(schema["columns"][0]["categories"]) == sorted(LABELS)
    parse_schema(yaml.safe_load(schema_yaml(schema)), "draft")  # reads back as written


def test_safe_draft_holds_names_and_auto_kinds_only(tmp_path: Path, capsys) -> None:
    table = tiny_table(100, 1)
    table["ratio"] = table["weight"] / 7
    table.to_csv(tmp_path / "data.csv", index=False)
    schema, _ = infer_schema(tmp_path / "data.csv", safe=True)
    assert schema == {"columns": [
        {"name": name, "kind": "auto"} for name in ("colour", "shape", "size", "weight", "ratio")
    ]}
    assert main(["schema", "infer", "--safe", str(tmp_path / "data.csv")]) == 0
    written = capsys.readouterr().out
    assert written.startswith("# Drafted by 'synthpriv schema infer' from the file's header only")
    assert "drafted_by" not in written and SAFE_HEADER.split()[0] in written
    assert len(parse_schema(yaml.safe_load(written), "draft").unresolved) == 5


@pytest.mark.slow
def test_end_to_end_safe_draft_on_2000_adult_rows(tmp_path: Path, adult_sample_csv: Path,
                                                  capsys) -> None:
    """schema infer --safe → plan → run (mst, ε = 1) through the CLI on 2,000 Adult rows."""
    assert main(["schema", "infer", "--safe", str(adult_sample_csv)]) == 0
    (tmp_path / "schema.yaml").write_text(capsys.readouterr().out)
    config = {"name": "safe", "data": {"path": str(adult_sample_csv), "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "mst"},
              "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    assert main(["plan", str(tmp_path / "job.yaml")]) == 0
    assert main(["run", str(tmp_path / "job.yaml")]) == 0
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert manifest["guarantee"]["delta"] == 1e-6 and manifest["guarantee"]["epsilon"] <= 1.0
    assert 0 < manifest["ledger"]["delta_thresholds"] <= 1e-7
    released = pd.read_csv(tmp_path / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    assert len(released) > 1000
    for column in manifest["schema"]["columns"]:
        values = released[column["name"]]
        values = values[values != ""]
        if column["kind"] == "categorical":
            assert set(values) <= set(column["categories"])
        else:
            numbers = values.astype(float)
            assert column["lower"] <= numbers.min() and numbers.max() <= column["upper"]


def test_replace_one_thresholds_carry_the_two_sided_delta(tmp_path: Path) -> None:
    """Under replace-one a row may drop one value and add another: each column's δ is
    (1 + e^ε)·P(Z ≥ T), at the plan's σ and threshold."""
    from synthpriv.privacy.partition import selection_delta

    plan, _ = plan_job(load_job(_job(tmp_path, neighbouring="replace_one")))
    domain = plan.stages[0]
    threshold = int(domain.noise["category_threshold"])
    expected = selection_delta(domain.noise["sigma"], threshold, "replace_one", 1.0)
    heap = selection_delta(domain.noise["heap_sigma"], int(domain.noise["heap_threshold"]),
                           "replace_one", 1.0)
    deltas = [e.delta for e in domain.events if isinstance(e, ThresholdEvent)]
    assert deltas == pytest.approx([expected, expected, heap, heap])
    assert sum(deltas) <= 0.1 * 1e-5 and plan.epsilon <= 1.0


def test_in_memory_runs_resolve_the_domain_too(tmp_path: Path) -> None:
    """The sweep and the shadow attack run the pipeline on tables in memory: the domain step runs
    there as well, on the ledger they report."""
    from synthpriv.job import SynthesisJob
    from synthpriv.table import read_table

    job = load_job(_job(tmp_path, epsilon=5.0))
    real = read_table(tmp_path / "train.csv", job.schema)
    run = SynthesisJob(job, source=RandomSource.seeded(2)).synthesise(real)
    assert run.ledger.events[0].label.startswith("DP domain")
    assert list(run.synthetic.columns) == list(real.columns) and len(run.synthetic) > 0


@pytest.mark.slow
def test_a_held_back_split_reads_rows_with_the_resolved_schema(tmp_path: Path) -> None:
    path = _job(tmp_path, epsilon=5.0)
    config = yaml.safe_load(path.read_text())
    config["evaluation"] = {"holdout_fraction": 0.25}
    path.write_text(yaml.safe_dump(config))
    result = run_job(load_job(path))
    assert result.held_back is not None and len(result.held_back) > 0
    shapes = set(result.real["shape"]) | set(result.held_back["shape"])
    assert shapes <= set(result.job.schema.column("shape").categories)


@pytest.mark.parametrize("rows", [50, 374])
def test_a_tiny_table_with_the_safe_draft_runs_and_says_what_it_dropped(
    tmp_path: Path, capsys, rows: int
) -> None:
    """Issue 24: `run` refused its own safe draft on tables of 374 and 823 rows ('no bucket above
    the noise'). Now nothing above the noise means the column is released all missing, with a
    warning on the terminal; the run completes and the ledger holds the planned events."""
    table = tiny_table(rows, 3)
    table["amount"] = np.random.default_rng(3).lognormal(6, 1.5, rows).round(2)
    table.to_csv(tmp_path / "data.csv", index=False)
    assert main(["schema", "infer", "--safe", str(tmp_path / "data.csv")]) == 0
    (tmp_path / "schema.yaml").write_text(capsys.readouterr().out)
    config = {"name": "tiny", "data": {"path": "data.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")},
              "seed": 4}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    assert main(["run", str(tmp_path / "job.yaml")]) == 0
    shown = capsys.readouterr().out
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    empty = [c["name"] for c in manifest["schema"]["columns"]
             if c["kind"] == "categorical" and not c["categories"]]
    released = pd.read_csv(tmp_path / "out" / "synthetic.csv", dtype=str, keep_default_na=False)
    assert len(released) > 0 and list(released.columns) == list(table.columns)
    for name in empty:
        assert (released[name] == "").all()
    if rows == 50:  # σ ≈ 50 here: no bucket or value of 50 rows can clear it (a column the
        # noisy kind statistics decide text or id releases none of its values either)
        made_up = [c["name"] for c in manifest["schema"]["columns"] if c["kind"] in ("text", "id")]
        assert sorted(empty + made_up) == sorted(table.columns) and empty
    assert (("WARNING: nothing in " + ", ".join(empty)) in shown if empty
            else "WARNING: nothing in" not in shown)
    assert manifest["ledger"]["events"][0]["label"].startswith("DP domain")


@pytest.mark.parametrize("records, warned", [(None, False), (60, True), (10_000_000, False)])
def test_the_plan_states_what_the_domain_noise_lets_through(
    tmp_path: Path, records: int | None, warned: bool
) -> None:
    """The plan's domain messages carry the planned discovery threshold T and the rows DP bounds
    need (the occupancy threshold at the plan's σ), and warn only when a public row count shows
    values holding 5 % are lost and no column can get bounds (60 rows: T and the rows bounds
    need over four octaves both exceed 3 and 60). Public only:
    the same messages for any table with this config."""
    from synthpriv.plan_warnings import plan_messages
    from synthpriv.privacy.bounds import occupancy_threshold

    path = _job(tmp_path)
    if records is not None:
        config = yaml.safe_load(path.read_text())
        config["data"]["public_records"] = records
        path.write_text(yaml.safe_dump(config))
    job = load_job(path)
    plan, stages = plan_job(job)
    noise = plan.stages[0].noise
    messages = [m for m in plan_messages(job, plan, stages) if "stage 'domain'" in m]
    rule = [m for m in messages if "small-table rule" in m]  # tests/test_small_table_share.py
    assert len(rule) == (records != 10_000_000)  # not public, or a small public row count
    discovery, heaps, bounds = [m for m in messages if m not in rule]
    assert heaps.startswith("note") and f"about {noise['heap_threshold']:,.0f} rows hold" in heaps
    assert f"about {noise['category_threshold']:,.0f} rows or more" in discovery
    bounded = [c for c in job.schema.unresolved if not isinstance(c, CategoricalColumn)]
    assert noise["bounded_columns"] == len(bounded) > 0  # false buckets: a chance per job
    needed = occupancy_threshold(noise["sigma"], Buckets("integer").size, columns=len(bounded))
    assert f"about {needed:,.0f} rows" in bounds and f"over the {len(bounded)} columns" in bounds
    assert discovery.startswith("WARNING") == warned and bounds.startswith("WARNING") == warned
    quiet = [m for m in plan_messages(job, plan, stages, informational=False)
             if "stage 'domain'" in m]
    assert len(quiet) == 2 * warned  # the heap statement is a note: a lost heap stays in its bin
