"""Person-level privacy (data.person, issue 27): the bounding is random (CSPRNG priorities, never
the first k), every sensitivity is the brute-force one over person-neighbours, the noise measured
from a run's outputs is k times a row's at the multiplier the ledger records, the person column
never reaches the encoder or the release, and whole persons are held back. Planted bugs in
benchmarks/privacy_mutations.py (person-*) must make these fail."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from scipy import stats

from synthpriv.chunks import read_input
from synthpriv.config import load_job
from synthpriv.domain import Domain
from synthpriv.errors import ConfigError
from synthpriv.job import SynthesisJob, held_mask
from synthpriv.marginals.stage import MarginalsStage
from synthpriv.persons import bound_persons
from synthpriv.pipeline import check_person_level
from synthpriv.privacy.accountant import DiscreteGaussianEvent
from synthpriv.privacy.domain_budget import plan_domain_noise
from synthpriv.privacy.partition import discrete_gaussian_tails, selection_delta
from synthpriv.privacy.randomness import RandomSource
from synthpriv.sampling import SampleStage
from synthpriv.stage import PlanContext

RELATIONS = ("add_remove", "replace_one")
CELLS = 2


def _bounded_counts(rows: tuple[tuple[int, int], ...], k: int, seed: int) -> np.ndarray:
    """The 1-way histogram (over CELLS values) and the row count of the table of (person, value)
    ``rows`` after bounding each person to ``k`` rows with a seeded source."""
    table = pd.DataFrame(list(rows), columns=["pid", "x"], dtype=object)
    if table.empty:
        return np.zeros(CELLS + 1)
    bound = bound_persons(table, "pid", k, RandomSource.seeded(seed))
    counts = np.bincount(bound.table["x"].astype(int), minlength=CELLS)
    return np.r_[counts, len(bound.table)]


def brute_force_person_sensitivity(relation: str, k: int) -> tuple[float, float]:
    """(L1, L2) of the histogram over person-neighbours after bounding: the other persons' rows
    come first, so with one seed their priorities are the same words in both tables (the
    coupling of the proof: the other persons keep the same rows), and person P's rows (up to
    k + 1, so bounding must cut) are removed, or replaced by person Q's."""
    others = [()] + [tuple(("o", v) for v in values) for size in (1, 2)
                     for values in itertools.product(range(CELLS), repeat=size)]
    persons = [tuple(values) for size in range(1, k + 2)
               for values in itertools.product(range(CELLS), repeat=size)]
    l1 = l2 = 0.0
    for other in others:
        for p_values in persons:
            with_p = other + tuple(("p", v) for v in p_values)
            base = _bounded_counts(with_p, k, seed=len(with_p))
            if relation == "add_remove":
                neighbours = [_bounded_counts(other, k, seed=len(with_p))]
            else:
                neighbours = [_bounded_counts(other + tuple(("q", v) for v in q_values), k,
                                              seed=len(with_p))
                              for q_values in persons if len(q_values) == len(p_values)]
            for counts in neighbours:
                change = (counts - base)[:CELLS]
                l1 = max(l1, float(np.abs(change).sum()))
                l2 = max(l2, float(np.sqrt((change**2).sum())))
                assert abs(counts[CELLS] - base[CELLS]) <= k  # the noisy total's sensitivity
    return l1, l2


@pytest.mark.parametrize("relation", RELATIONS)
def test_marginal_sensitivity_per_person_is_the_brute_force_one(relation: str) -> None:
    k = 2
    l1, l2 = brute_force_person_sensitivity(relation, k)
    assert l1 == pytest.approx(k * (1 if relation == "add_remove" else 2))  # not a row's
    domain = Domain.from_sizes({"a": 3, "b": 4})
    for selection in ("one_way", "mst", "aim"):
        stage = MarginalsStage({"selection": selection},
                               PlanContext(domain, relation, 1e-6, rows_per_person=k), "test")
        assert stage.sensitivity.l1 == pytest.approx(l1), (selection, stage.sensitivity)
        assert stage.sensitivity.l2 == pytest.approx(l2), (selection, stage.sensitivity)


def test_the_domain_step_noise_scales_with_k_at_the_same_multiplier() -> None:
    row = plan_domain_noise(0.01, ["x"], ["c"], 1e-7, "add_remove", 1.0)
    person = plan_domain_noise(0.01, ["x"], ["c"], 1e-7, "add_remove", 1.0, rows_per_person=4)
    assert person.multiplier == pytest.approx(row.multiplier)  # the ledger's price: the same ρ
    assert person.sigma == pytest.approx(4 * row.sigma)  # σ = z·Δ₂ with Δ₂ = 4 rows
    assert person.threshold > row.threshold


def _tail(sigma: float, at: int) -> float:
    """P(Z ≥ at) for Z ~ N_Z(0, σ²), summed directly (independent of the module's tables)."""
    support = np.arange(-int(80 * sigma) - 2, int(80 * sigma) + 3)
    weights = np.exp(-support.astype(float) ** 2 / (2 * sigma**2))
    return float(weights[support >= at].sum() / weights.sum())


@pytest.mark.parametrize("relation", RELATIONS)
def test_discovery_delta_per_person_counts_up_to_k_new_values(relation: str) -> None:
    sigma, threshold, epsilon, k = 7.0, 40, 1.0, 3
    delta = selection_delta(sigma, threshold, relation, epsilon, rows_per_person=k)
    sides = math.exp(epsilon) if relation == "add_remove" else 1 + math.exp(epsilon)
    # a person brings up to k values the neighbour lacks: each side's chance that a count-0 value
    # of the union passes is at most k·P(Z ≥ T) (partition.py, "Per person")
    assert delta == pytest.approx(sides * k * _tail(sigma, threshold), rel=1e-6)
    assert delta > selection_delta(sigma, threshold, relation, epsilon)  # more than one row's
    assert discrete_gaussian_tails(sigma)[0].size > 0


def _person_table(persons: int, rows_each: int, values: int, rng: np.random.Generator
                  ) -> pd.DataFrame:
    return pd.DataFrame({
        "pid": np.repeat([f"SECRET-{i:05d}" for i in range(persons)], rows_each),
        "c": rng.integers(0, values, persons * rows_each).astype(str),
    })


def test_bounding_keeps_k_rows_per_person_chosen_at_random_not_the_first() -> None:
    rows_each, k, draws = 6, 2, 400
    table = pd.DataFrame({"pid": np.repeat(np.arange(3), rows_each).astype(str),
                          "pos": np.tile(np.arange(rows_each), 3)})
    kept_at = np.zeros(rows_each)
    for seed in range(draws):
        bound = bound_persons(table, "pid", k, RandomSource.seeded(seed))
        assert len(bound.table) == 3 * k and bound.dropped == 3 * (rows_each - k)
        assert np.bincount(bound.codes).max() == k
        assert bound.table["pid"].isna().all()  # the person key is blanked
        kept_at += np.bincount(bound.table["pos"], minlength=rows_each)
    # each position is kept with probability k / rows_each (a "first k" rule keeps 0 and 1 always)
    expected = 3 * draws * k / rows_each
    assert stats.chisquare(kept_at, np.full(rows_each, expected)).pvalue > 1e-4, kept_at


def test_bounding_draws_from_the_random_source() -> None:
    table = pd.DataFrame({"pid": np.repeat(np.arange(50), 5).astype(str),
                          "pos": np.arange(250)})

    def kept(source: RandomSource) -> list[int]:
        return bound_persons(table, "pid", 2, source).table["pos"].tolist()

    assert kept(RandomSource.seeded(3)) == kept(RandomSource.seeded(3))  # the source decides
    assert kept(RandomSource.seeded(3)) != kept(RandomSource.seeded(4))
    assert kept(RandomSource.secure()) != kept(RandomSource.secure())  # the OS CSPRNG's words
    # the kept rows are the smallest priorities: the source's first 250 words, per person
    words = RandomSource.seeded(9).uniform_words(250).reshape(50, 5)
    smallest = np.sort(np.argsort(words, axis=1)[:, :2] + 5 * np.arange(50)[:, None], axis=None)
    assert kept(RandomSource.seeded(9)) == smallest.tolist()


def test_missing_person_keys_are_one_person() -> None:
    table = pd.DataFrame({"pid": [None, None, None, "a", np.nan], "x": range(5)})
    bound = bound_persons(table, "pid", 1, RandomSource.seeded(0))
    assert len(bound.table) == 2  # "a", and one row of the missing key


def _write_job(folder: Path, table: pd.DataFrame, schema: dict, recipe: str = "independent",
               **data: object) -> Path:
    table.to_csv(folder / "t.csv", index=False)
    config = {"name": "persons", "data": {"path": "t.csv", "schema": schema, "person": "pid",
                                          **data},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": recipe},
              "evaluation": {"enabled": False}, "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return folder / "job.yaml"


def _schema(values: int) -> dict:
    return {"columns": [{"name": "pid", "kind": "id"},
                        {"name": "c", "kind": "categorical",
                         "categories": [str(v) for v in range(values)]}]}


def test_measured_noise_is_k_times_a_rows_at_the_recorded_multiplier(tmp_path: Path) -> None:
    values, k = 3000, 3
    table = _person_table(2000, 4, values, np.random.default_rng(1))
    job = load_job(_write_job(tmp_path, table, _schema(values), rows_per_person=k))
    run = SynthesisJob(job, source=RandomSource.seeded(2)).synthesise(
        read_input(job.data_path, job.schema))
    assert run.state.data.records == 2000 * k  # every person had 4 rows: k kept
    (measurement,) = [m for m in run.state.measurements if m.clique == ("c",)]
    events = [e for e in run.ledger.events if isinstance(e, DiscreteGaussianEvent)]
    multiplier = events[-1].noise_multiplier
    noise = measurement.noisy_counts - run.state.data.marginal(("c",))
    expected = multiplier * k  # σ = z·Δ₂, Δ₂ = k rows of one person
    chi2 = stats.chi2(values - 1)
    low, high = chi2.ppf([5e-5, 1 - 5e-5]) / (values - 1)
    ratio = float(np.var(noise, ddof=1)) / expected**2
    assert low < ratio < high, (
        f"measured noise std {np.std(noise, ddof=1):.2f}; the ledger's multiplier {multiplier:.3f} "
        f"× k = {k} gives {expected:.2f}")


def test_the_person_column_never_reaches_the_encoder_or_the_release(tmp_path: Path) -> None:
    table = _person_table(300, 3, 4, np.random.default_rng(3))
    job = load_job(_write_job(tmp_path, table, _schema(4), rows_per_person=2))
    runner = SynthesisJob(job, source=RandomSource.seeded(4))
    bounded, codes = runner.bounded(None)
    assert bounded is not None and bounded["pid"].isna().all()
    assert codes is not None and np.bincount(codes).max() <= 2
    assert "pid" not in runner.planned[1][-1][0].context.domain.attributes
    result = runner.run()
    released = "".join(p.read_text(errors="replace") for p in result.out_dir.rglob("*")
                       if p.is_file())
    assert "SECRET-" not in released
    synthetic = pd.read_csv(result.out_dir / "synthetic.csv")
    assert synthetic["pid"].is_unique  # fresh keys, one per synthetic row
    manifest = json.loads((result.out_dir / "manifest.json").read_text())
    assert manifest["guarantee"]["unit"] == "person"
    assert manifest["guarantee"]["rows_per_person"] == 2
    assert "all rows of one person" in manifest["guarantee"]["statement"]
    assert str(runner.dropped) not in json.dumps(manifest["guarantee"])


def test_whole_persons_are_held_back(tmp_path: Path) -> None:
    job = load_job(_write_job(tmp_path, _person_table(10, 2, 2, np.random.default_rng(0)),
                              _schema(2)))
    codes = np.repeat(np.arange(200), 3)
    job.config.evaluation.holdout_fraction = 0.3
    held = held_mask(job, len(codes), RandomSource.seeded(1), codes).reshape(200, 3)
    assert (held.all(axis=1) | ~held.any(axis=1)).all()  # a person is in or out, whole
    assert 20 < held[:, 0].sum() < 100


class RowLevelStage(SampleStage):
    """A stage whose sensitivity is one row's (not registered: for the refusal only)."""

    person_level = False


def test_a_row_level_stage_is_refused_with_data_person(tmp_path: Path) -> None:
    job = load_job(_write_job(tmp_path, _person_table(10, 2, 2, np.random.default_rng(0)),
                              _schema(2)))
    stage = RowLevelStage({}, PlanContext(Domain.from_sizes({"c": 2}), "add_remove", 1e-6), "t")
    with pytest.raises(ConfigError, match="data.person is set.*'sample'"):
        check_person_level(job, "custom", [stage])


@pytest.mark.slow  # ~30 s on the shared machine: torch, the DP-SGD plan's calibration, training
def test_a_dpsgd_job_with_data_person_trains_on_bounded_persons(tmp_path: Path) -> None:
    """The wiring of the DP-SGD stage (synthpriv/generators, branch persondpsgd): the job hands
    it k and the bounded rows' person codes; it records q over persons."""
    from synthpriv.privacy.accountant import SubsampledGaussianEvent

    job = load_job(_write_job(
        tmp_path, _person_table(200, 4, 3, np.random.default_rng(0)), _schema(3), recipe="dpsgd",
        rows_per_person=2))
    options = {"epochs": 0.2, "sample_rate": 0.1, "hidden": 8, "records_from": "measure"}
    job.config.pipeline.stages["generator"] = options
    runner = SynthesisJob(job, source=RandomSource.seeded(3))
    run = runner.synthesise(read_input(job.data_path, job.schema))
    codes = run.state.person_codes
    assert codes is not None and len(codes) == run.state.data.records == 400
    assert np.bincount(codes).max() == 2
    (training,) = [e for e in run.ledger.events if isinstance(e, SubsampledGaussianEvent)]
    assert training.sample_rate == 0.1 and len(run.synthetic) > 0


def test_a_modelled_person_column_is_refused(tmp_path: Path) -> None:
    schema = {"columns": [{"name": "pid", "kind": "categorical", "categories": ["a"]},
                          {"name": "c", "kind": "categorical", "categories": ["0", "1"]}]}
    with pytest.raises(ConfigError, match="never modelled.*kind: id"):
        load_job(_write_job(tmp_path, _person_table(10, 2, 2, np.random.default_rng(0)),
                            schema))


def test_the_release_size_follows_the_model_not_the_public_row_count(tmp_path: Path) -> None:
    """data.public_records counts the rows before bounding: the stages never take it for the
    bounded table's size (the released rows follow the model's noisy total)."""
    table = _person_table(300, 3, 4, np.random.default_rng(5))
    job = load_job(_write_job(tmp_path, table, _schema(4), rows_per_person=2,
                              public_records=100_000, public_persons=300))
    run = SynthesisJob(job, source=RandomSource.seeded(6)).synthesise(
        read_input(job.data_path, job.schema))
    assert run.state.context.public_records is None
    assert 300 <= len(run.synthetic) <= 1200, len(run.synthetic)  # ≈ 600 bounded rows


def test_the_row_attacks_score_one_row_per_person_without_the_key() -> None:
    from synthpriv.evaluation.evaluate import one_row_per_person

    table = pd.DataFrame({"pid": ["a", "a", "b", None, None], "x": range(5)})
    rows = one_row_per_person(table, "pid")
    assert list(rows.columns) == ["x"] and rows["x"].tolist() == [0, 2, 3, 4]


def test_the_python_api_bounds_persons(tmp_path: Path) -> None:
    from synthpriv import Synthesizer

    table = _person_table(300, 4, 3, np.random.default_rng(8))
    synth = Synthesizer(_schema(3), epsilon=1.0, recipe="independent", person="pid",
                        rows_per_person=2, seed=4)
    synth.fit(table)
    rows = synth.sample(50)
    assert not rows["pid"].astype(str).str.startswith("SECRET-").any()
    folder = synth.release(tmp_path / "api", force=True)
    manifest = json.loads((folder / "manifest.json").read_text())
    assert manifest["guarantee"]["unit"] == "person"
    assert manifest["guarantee"]["rows_per_person"] == 2
    assert 400 < manifest["records"]["released"] < 800  # ≈ 300 persons × 2 rows, not 1,200


def test_plan_and_terminal_state_the_guarantee_per_person(tmp_path: Path, capsys) -> None:
    from synthpriv.cli import main

    table = _person_table(100, 5, 3, np.random.default_rng(9))
    config = _write_job(tmp_path, table, _schema(3), rows_per_person=2, public_records=520,
                        public_persons=100)  # public figures: a bound, not the table's count
    assert main(["plan", str(config)]) == 0
    plan = capsys.readouterr()
    assert "(add_remove, per person (up to 2 rows))" in plan.out
    # the cost, from public figures: 520 rows − 100 persons × 2 = 320 dropped at least (62 %)
    assert "WARNING: data.person 'pid'" in plan.err and "at least 320 rows (62%" in plan.err
    assert main(["run", str(config), "--quiet"]) == 0
    run = capsys.readouterr()
    assert "per person (up to 2 rows)" in run.out
    assert "dropped 300 row(s)" in run.err  # the exact count: the operator's terminal only
    release = "".join(p.read_text(errors="replace") for p in (tmp_path / "out").rglob("*")
                      if p.is_file())
    assert "300 row" not in release and "dropped 300" not in release


@pytest.mark.parametrize(("data", "message"), [
    ({"rows_per_person": 2}, "need data.person"),
    ({"person": "pid", "engine": "dask"}, "'dask' engine keeps rows"),
])
def test_person_keys_are_checked_with_the_fix(tmp_path: Path, data: dict, message: str) -> None:
    from synthpriv.config import validate_job

    config = {"name": "p", "data": {"path": "t.csv", "schema": _schema(2), **data},
              "budget": {"epsilon": 1.0}}
    with pytest.raises(ConfigError, match=message):
        validate_job(config, "test")


def test_the_relation_in_words_per_person() -> None:
    from synthpriv.persons import relation_phrase
    from synthpriv.runner import RELATIONS

    assert relation_phrase(RELATIONS["add_remove"], None, 1) == "adding or removing one row"
    assert relation_phrase(RELATIONS["add_remove"], "pid", 3) == (
        "adding or removing all rows of one person (column 'pid'; up to 3 rows each)")
    assert relation_phrase(RELATIONS["replace_one"], "pid", 2).endswith("by another person's")
