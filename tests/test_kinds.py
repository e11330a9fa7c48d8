"""Column kinds decided under DP (issue 23, item 1): the safe draft reads no cell, every column is
``kind: auto``, and the run's domain step decides each kind from a noisy histogram of the cells'
classes (synthpriv.kinds), on the plan and the ledger."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv import domain_stage
from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.errors import SchemaError
from synthpriv.kinds import CLASSES, class_counts, decide
from synthpriv.pipeline import plan_job
from synthpriv.privacy.accountant import DiscreteGaussianEvent, Ledger, ThresholdEvent, zcdp_rho
from synthpriv.privacy.domain_budget import KIND_NOISE_FACTOR, domain_share
from synthpriv.privacy.mechanisms import histogram_l2_sensitivity
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import NumericColumn, parse_schema
from synthpriv.schema_infer import infer_schema, schema_yaml
from synthpriv.table import check_frame


def _table(rows: int = 500, seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(18, 90, rows),
        "city": rng.choice(["Lyon", "Nice", "Metz"], rows),
        "income": rng.integers(0, 2000, rows),
        "ratio": np.round(rng.uniform(0, 1, rows), 3),
    })


def _job(folder: Path, table: pd.DataFrame, name: str = "job", recipe: str = "independent",
         epsilon: float = 1.0, seed: int | None = None) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    table.to_csv(folder / f"{name}.csv", index=False)
    schema, _ = infer_schema(folder / f"{name}.csv", safe=True)
    (folder / f"{name}-schema.yaml").write_text(schema_yaml(schema, safe=True))
    config = {"name": name, "data": {"path": f"{name}.csv", "schema": f"{name}-schema.yaml"},
              "budget": {"epsilon": epsilon, "delta": 1e-6}, "pipeline": {"recipe": recipe},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out" / name)},
              **({"seed": seed} if seed is not None else {})}
    (folder / f"{name}.yaml").write_text(yaml.safe_dump(config))
    return folder / f"{name}.yaml"


def test_the_safe_draft_is_one_file_for_neighbouring_tables(tmp_path: Path) -> None:
    """The review's pair: D and D plus the row ``40,Paris,512.5`` (a fraction in an integer
    column, a new city) draft byte-identical schemas; so does a file whose body is unreadable
    (the draft reads the header only)."""
    table = _table()[["age", "city", "income"]]
    table.to_csv(tmp_path / "d.csv", index=False)
    neighbour = pd.concat([table, pd.DataFrame({"age": [40], "city": ["Paris"],
                                                "income": [512.5]})])
    neighbour.to_csv(tmp_path / "d1.csv", index=False)
    (tmp_path / "broken.csv").write_bytes(b"age,city,income\n1,2\n\"unclosed,,,,\nx\n")
    drafts = {name: schema_yaml(infer_schema(tmp_path / f"{name}.csv", safe=True)[0], safe=True)
              for name in ("d", "d1", "broken")}
    assert drafts["d"] == drafts["d1"] == drafts["broken"]
    schema = parse_schema(yaml.safe_load(drafts["d"]), "draft")
    assert [c.kind for c in schema.columns] == ["auto"] * 3 and schema.auto == schema.names


def test_class_counts_sort_cells_into_text_fraction_and_whole() -> None:
    cells = pd.Series(["1", "2.5", " 3 ", "abc", "", np.nan, "NA", "inf", "1e3", "-0.25", "n/a"])
    counts = dict(zip(CLASSES, class_counts(cells).tolist(), strict=True))
    assert {c: n for c, n in counts.items() if n} == {"token": 2, "1 decimal": 1,
                                                      "2 decimals": 1, "whole": 3}


def assert_class_sensitivity_one(column: pd.Series, candidates: list[str]) -> None:
    """Brute force: every neighbour of ``column`` (a row removed, or one of ``candidates``
    added) moves its class counts by exactly 0 or 1 in L2; replace-one by at most √2."""
    counts = class_counts(column)
    moves = [np.linalg.norm(class_counts(column.drop(index=i)) - counts)
             for i in range(len(column))]
    moves += [np.linalg.norm(class_counts(pd.concat([column, pd.Series([c])],
                                                    ignore_index=True)) - counts)
              for c in candidates]
    assert set(np.round(moves, 12)) <= {0.0, 1.0} and max(moves) == 1.0
    replaced = [np.linalg.norm(class_counts(column.where(column.index != i, c)) - counts)
                for i in range(len(column)) for c in candidates]
    assert max(replaced) == pytest.approx(histogram_l2_sensitivity("replace_one"))


def test_class_histogram_has_l2_sensitivity_one_by_brute_force() -> None:
    """Every neighbour of a small column (a row removed, or one of many cells added) moves its
    class counts by exactly 0 or 1 in L2; replace-one by at most √2."""
    assert_class_sensitivity_one(
        pd.Series(["1", "2.5", "x", "", "NA", "7", "7", "0.1"]),
        ["", "NA", "3", "3.5", "-4", "word", "1e308", "1e999", " 2 "])


def _noisy(text: float = 0, fraction: float = 0, whole: float = 0, **others: float) -> np.ndarray:
    """A noisy class histogram in CLASSES order (``text`` as tokens, ``fraction`` as cells of 1
    decimal; others by class label)."""
    counts = dict.fromkeys(CLASSES, 0.0) | {"token": text, "1 decimal": fraction, "whole": whole}
    for label, count in others.items():
        counts[label.replace("_", " ")] = count
    return np.array([counts[c] for c in CLASSES])


@pytest.mark.parametrize(("noisy", "sigma", "kind"), [
    ((300, 0, 0), 10.0, "categorical"),
    ((150, 0, 149), 10.0, "categorical"),  # ties and majorities of text: categorical
    ((149, 0, 150), 10.0, "integer"),
    ((0, 20, 480), 10.0, "integer"),       # within z·σ of zero (z = 3.63)
    ((0, 40, 460), 10.0, "continuous"),    # 8 % and above z·σ
    ((0, 40, 460), 20.0, "integer"),       # 8 % but within z·σ of zero
    ((0, 400, 9600), 10.0, "continuous"),  # 4 % but above z·σ: real fractions, not rounded
    ((-30, -2, 5), 10.0, "integer"),       # negative noisy counts read as 0
    ((0, 0, 0), 10.0, "categorical"),      # nothing above the noise
])
def test_the_decision_rule(noisy: tuple, sigma: float, kind: str) -> None:
    assert decide(_noisy(*noisy), sigma) == kind


def _kind_calls(monkeypatch, replace: np.ndarray | None = None) -> list[tuple]:
    """Record (exact counts, σ) of every 3-class histogram the domain step noises; with
    ``replace``, the noisy output of those calls is ``replace`` whatever the input."""
    calls: list[tuple] = []
    real = domain_stage.discrete_gaussian_histogram

    def wrapped(counts, sigma, source):
        noisy = real(counts, sigma, source)
        if np.shape(counts) == (len(CLASSES),):
            calls.append((np.array(counts), sigma))
            return noisy if replace is None else replace.copy()
        return noisy

    monkeypatch.setattr(domain_stage, "discrete_gaussian_histogram", wrapped)
    return calls


def test_kinds_are_noised_at_the_planned_scale_and_on_the_ledger(tmp_path: Path,
                                                                 monkeypatch) -> None:
    """The kind histograms are the columns' exact class counts, noised at σ = F·z·Δ₂ where z is
    the domain step's multiplier; the ledger holds that event and the singleton counts' (each
    multiplier F·z, one per auto column) besides the domain histograms' and a threshold per auto
    column."""
    job = load_job(_job(tmp_path, _table()))
    plan, stages = plan_job(job)
    domain = plan.stages[0]
    z = domain.noise["noise_multiplier"]
    assert domain.noise["kind_sigma"] == pytest.approx(KIND_NOISE_FACTOR * z)
    calls = _kind_calls(monkeypatch)
    ledger = Ledger(job.config.budget.neighbouring)
    stages[0][0].resolve(job, domain, ledger, RandomSource.seeded(3))
    table = pd.read_csv(tmp_path / "job.csv", dtype=str, keep_default_na=False)
    assert [c.tolist() for c, _ in calls] == [class_counts(table[n]).tolist()
                                              for n in job.schema.names]
    assert [sigma for _, sigma in calls] == pytest.approx([KIND_NOISE_FACTOR * z] * 4)
    kinds = [(e.noise_multiplier, e.count) for e in ledger.events
             if isinstance(e, DiscreteGaussianEvent) and e.label.startswith("DP kinds")]
    assert kinds == [(pytest.approx(KIND_NOISE_FACTOR * z), 4)] * 2
    # pass (2) runs what the kinds decided, reallocated: the plan's ρ and δ in all
    # (tests/privacy/test_domain_realloc.py checks the reallocation itself)
    assert sum(zcdp_rho(e) for e in ledger.events if isinstance(e, DiscreteGaussianEvent)) \
        == pytest.approx(sum(zcdp_rho(e) for e in domain.events
                             if isinstance(e, DiscreteGaussianEvent)), rel=1e-9)
    assert sum(e.delta for e in ledger.events if isinstance(e, ThresholdEvent)) == \
        pytest.approx(sum(e.delta for e in domain.events if isinstance(e, ThresholdEvent)))


def test_kinds_are_read_from_the_noisy_counts_only(tmp_path: Path, monkeypatch) -> None:
    """Post-processing: whatever the cells hold, the kind follows the noisy histogram. A noisy
    output that says 'whole numbers' makes every column integer, the text column included."""
    job = load_job(_job(tmp_path, _table()))
    plan, stages = plan_job(job)
    _kind_calls(monkeypatch, replace=_noisy(whole=10_000))
    decided = stages[0][0]._decide_kinds(job, plan.stages[0], RandomSource.seeded(1), None)
    assert [c.kind for c in decided.columns] == ["integer"] * 4
    _kind_calls(monkeypatch, replace=_noisy(text=10_000))
    decided = stages[0][0]._decide_kinds(job, plan.stages[0], RandomSource.seeded(1), None)
    assert [c.kind for c in decided.columns] == ["categorical"] * 4


def test_the_domain_share_counts_kind_histograms_at_their_noise() -> None:
    """s = w/(1 + w), w = (k + 2·k_a/F²)/(3d): each auto column's two kind statistics (class
    histogram, singleton count) cost 1/F² of a histogram each."""
    for histograms, columns, kinds in [(4, 4, 4), (6, 10, 2), (3, 3, 0)]:
        weight = (histograms + 2 * kinds / KIND_NOISE_FACTOR**2) / (3 * columns)
        assert domain_share(histograms, columns, kinds) == pytest.approx(weight / (1 + weight))


def test_neighbouring_tables_both_release_with_the_same_kinds(tmp_path: Path) -> None:
    """The review's end-to-end pair through the CLI: with the safe draft, D and D + the row
    ``40,Paris,512.5`` both release (the fraction in a column decided integer is rounded, not
    refused) and both manifests record the kinds decided (clear at ε = 1 with 500 rows).
    Seeded: unseeded, an integer column with no fraction reads as continuous at the kind rule's
    stated rate (at most kinds.KIND_ERROR = 0.1 % a run, tests/test_precision.py)."""
    table = _table()[["age", "city", "income"]]
    neighbour = pd.concat([table, pd.DataFrame({"age": [40], "city": ["Paris"],
                                                "income": [512.5]})])
    kinds = []
    for name, frame in (("d", table), ("d1", neighbour)):
        assert main(["run", str(_job(tmp_path, frame, name=name, recipe="mst", seed=0))]) == 0
        manifest = json.loads((tmp_path / "out" / name / "manifest.json").read_text())
        kinds.append({c["name"]: (c["kind"], c.get("coerce"))
                      for c in manifest["schema"]["columns"]})
        released = pd.read_csv(tmp_path / "out" / name / "synthetic.csv")
        assert (released["income"].dropna() % 1 == 0).all()
    assert kinds[0] == kinds[1] == {"age": ("integer", True), "city": ("categorical", None),
                                    "income": ("integer", True)}


def test_a_continuous_column_is_decided_continuous(tmp_path: Path) -> None:
    job = load_job(_job(tmp_path, _table()))
    plan, stages = plan_job(job)
    decided = stages[0][0]._decide_kinds(job, plan.stages[0], RandomSource.seeded(5), None)
    assert {c.name: c.kind for c in decided.columns} == {
        "age": "integer", "city": "categorical", "income": "integer", "ratio": "continuous"}


def test_coerce_reads_non_numbers_as_missing_and_rounds_integers() -> None:
    schema = parse_schema({"columns": [
        {"name": "n", "kind": "integer", "missing": True, "coerce": True, "lower": 0, "upper": 9},
        {"name": "x", "kind": "continuous", "missing": True, "coerce": True, "lower": 0,
         "upper": 9}]}, "test")
    frame = pd.DataFrame({"n": ["1", "2.6", "abc", "", "inf"], "x": ["1.5", "?", "3", "", "-0"]})
    parsed = check_frame(frame, schema)
    assert parsed["n"].tolist()[:2] == [1.0, 3.0] and parsed["n"].isna().tolist() == [
        False, False, True, True, True]
    assert parsed["x"].tolist()[0] == 1.5 and math.isnan(parsed["x"].tolist()[1])
    with pytest.raises(SchemaError, match="coerce .* needs 'missing: true'"):
        parse_schema({"columns": [{"name": "n", "kind": "integer", "coerce": True}]}, "test")


def test_auto_columns_are_always_missing_and_cannot_feed_formulas() -> None:
    with pytest.raises(SchemaError, match="missing"):
        parse_schema({"columns": [{"name": "a", "kind": "auto", "missing": False}]}, "test")
    with pytest.raises(SchemaError, match="kind auto"):
        parse_schema({"columns": [
            {"name": "a", "kind": "auto"},
            {"name": "b", "kind": "continuous", "lower": 0, "upper": 1,
             "derived_from": {"formula": "a + 1"}}]}, "test")


def test_the_api_fits_a_dataframe_on_an_auto_schema() -> None:
    """In memory (the Python API): the auto columns' text is read as the kinds decided."""
    from synthpriv import Synthesizer

    table = _table(400)
    schema = {"columns": [{"name": name, "kind": "auto"} for name in table.columns]}
    synth = Synthesizer(schema, epsilon=1.0, delta=1e-6, recipe="independent").fit(table)
    resolved = synth._fitted.synthesis.job.schema
    assert isinstance(resolved.column("ratio"), NumericColumn)
    assert resolved.column("ratio").kind == "continuous"
    assert len(synth.synthetic) > 300


def test_the_safe_draft_of_a_parquet_file_reads_its_columns_as_pandas_does(tmp_path: Path) -> None:
    """The header of a Parquet file is its columns, less the index pandas stored beside them."""
    table = _table(50).sample(frac=1.0, random_state=0)  # a shuffled index: pandas stores it
    table.to_parquet(tmp_path / "t.parquet")
    table.to_csv(tmp_path / "t.csv", index=False)
    assert infer_schema(tmp_path / "t.parquet", safe=True) == infer_schema(tmp_path / "t.csv",
                                                                           safe=True)
    assert [c["name"] for c in infer_schema(tmp_path / "t.parquet", safe=True)[0]["columns"]] == \
        list(table.columns)


def test_month_first_dates_with_a_month_name_are_a_date_class_and_drafted_as_dates() -> None:
    """statsmodels elec_equip writes 'Jan-1-1995': no public format read it, so both drafts
    made the column an id (released as 'Whh-1-5777698353560731'; benchmarks/README.md
    "newtables"). It is now one date class (sensitivity still 1) and the data-read draft's date."""
    cells = pd.Series(["Jan-1-1995", "Feb-1-1995", "Dec-1-2011", "", "NA"])
    counts = dict(zip(CLASSES, class_counts(cells).tolist(), strict=True))
    assert {c: n for c, n in counts.items() if n} == {"date %b-%d-%Y": 3}
    # 03/04/2021 reads month first and day first: counted in the first format only
    assert_class_sensitivity_one(cells, ["Mar-15-2001", "15-Mar-2001", "03/04/2021", "x", "", "3"])
    schema, _ = infer_schema(pd.DataFrame({"DATE": cells[:3].tolist() * 4}))
    assert schema["columns"][0]["kind"] == "date"
    assert schema["columns"][0]["format"] == "%b-%d-%Y"
