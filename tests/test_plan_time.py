"""A newcomer's first hour (issue 16), second part: no hold-back without evaluation, plan-time
warnings (noise, draft schema, skipped TSTR), output precision, lazy stage imports. The
command-line items go through ``synthpriv.cli.main``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.errors import SchemaError
from synthpriv.job import holds_back
from synthpriv.pipeline import STAGE_MODULES, plan_job
from synthpriv.plan_warnings import UNKNOWN_ROWS_LIMIT, NoiseEstimate, noise_estimates
from synthpriv.schema import parse_schema
from synthpriv.schema_infer import DRAFTED_BY, decimals, infer_schema, schema_yaml
from synthpriv.stage import STAGES
from tests.evaluation.tiny import write_tiny_job

ROOT = Path(__file__).resolve().parents[1]
TSTR_NOTE = "(TSTR) will be skipped"


def _edit(path: Path, **sections: dict | None) -> Path:
    """The config at ``path`` with ``sections`` merged in (None deletes a key)."""
    config = yaml.safe_load(path.read_text())
    for section, values in sections.items():
        node = config.setdefault(section, {})
        for key, value in (values or {}).items():
            if value is None:
                node.pop(key, None)
            else:
                node[key] = value
    path.write_text(yaml.safe_dump(config))
    return path


# --------------------------------------------------------------------------- 1. --no-evaluation


def test_no_evaluation_holds_nothing_back(tmp_path: Path, capsys, monkeypatch) -> None:
    """holdout_fraction splits rows off for evaluation only: with --no-evaluation every one of the
    400 rows is fitted (before: about 300)."""
    config = _edit(write_tiny_job(tmp_path), data={"holdout": None},
                   evaluation={"holdout_fraction": 0.25})
    job = load_job(config)
    assert holds_back(job) and not holds_back(job, evaluate=False)
    fitted: list[int] = []
    import synthpriv.job

    original = synthpriv.job.SynthesisJob.run_stages
    monkeypatch.setattr(synthpriv.job.SynthesisJob, "run_stages",
                        lambda self, job, planned, data, *rest: (
                            fitted.append(data.records),
                            original(self, job, planned, data, *rest))[1])
    assert main(["run", str(config), "--no-evaluation"]) == 0
    assert fitted == [400]
    assert "evaluation (" not in capsys.readouterr().out  # no evaluation ran


# --------------------------------------------------------------------------- 2. TSTR at plan time


@pytest.mark.parametrize(("data", "evaluation", "said"), [
    ({"holdout": None}, {}, True),
    ({}, {}, False),  # a holdout file: TSTR runs
    ({"holdout": None}, {"holdout_fraction": 0.2}, False),  # rows held back: TSTR runs
    ({"holdout": None}, {"target": None}, False),  # no target: no TSTR to skip
])
def test_plan_says_once_that_tstr_will_be_skipped(
    tmp_path: Path, capsys, data: dict, evaluation: dict, said: bool
) -> None:
    config = _edit(write_tiny_job(tmp_path), data=data, evaluation=evaluation)
    assert main(["plan", str(config)]) == 0
    captured = capsys.readouterr()
    assert captured.err.count(TSTR_NOTE) == int(said)
    if said:
        assert "data.holdout" in captured.err and "evaluation.holdout_fraction" in captured.err


def test_run_says_it_once_before_the_data_is_read(tmp_path: Path, capsys) -> None:
    config = _edit(write_tiny_job(tmp_path), data={"holdout": None},
                   evaluation={"attacks": False, "quality_report": False, "controls": [],
                               "anonymeter": False})
    assert main(["run", str(config)]) == 0
    captured = capsys.readouterr()
    assert (captured.out + captured.err).count("TSTR") == 1
    assert TSTR_NOTE in captured.err
    assert "note: stage" not in captured.err  # a noise estimate that warns of nothing: plan only
    assert main(["run", str(config), "--no-evaluation", "--force"]) == 0  # no evaluation: silent
    assert "TSTR" not in capsys.readouterr().err


# --------------------------------------------------------------------------- 3. precision


def test_schema_infer_drafts_precision_from_the_cells(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_text("temp,count,ratio\n1.50,1,2e-3\n2.125,2,0.5\n3,3,1\n")
    draft, notes = infer_schema(path)
    columns = {c["name"]: c for c in draft["columns"]}
    assert columns["temp"]["precision"] == 3  # '2.125': the most decimals seen
    assert columns["ratio"]["precision"] == 3  # '2e-3'
    assert "precision" not in columns["count"]  # integers are whole
    assert any(note.startswith("precision") and "read from the data" in note for note in notes)
    parse_schema(draft, "draft")
    assert decimals(pd.Series(["1", "1.0", "7.25"])) == 2


@pytest.mark.parametrize(("column", "message"), [
    ({"kind": "integer", "lower": 0, "upper": 9, "precision": 1}, "continuous columns"),
    ({"kind": "continuous", "lower": 1.51, "upper": 1.54, "precision": 1}, "no value with 1"),
    ({"kind": "continuous", "lower": 0, "upper": 1, "precision": 0}, "kind: integer"),
])
def test_a_precision_that_cannot_hold_is_refused(column: dict, message: str) -> None:
    with pytest.raises(SchemaError, match=message):
        parse_schema({"columns": [{"name": "x", **column}]}, "t")


def _written_decimals(path: Path, column: str) -> int:
    cells = pd.read_csv(path, dtype=str, keep_default_na=False)[column]
    return max(len(cell.partition(".")[2]) for cell in cells if cell)


@pytest.mark.parametrize("precision", [None, 1, 2])
def test_a_release_has_at_most_the_schema_precision(
    tmp_path: Path, capsys, precision: int | None
) -> None:
    """Continuous values are drawn within their bin and rounded to the precision or, without
    one, to a digit finer than the bin width (8 bins of 5.6: 1 decimal), within the bounds
    (post-processing)."""
    rng = np.random.default_rng(3)
    data = tmp_path / "data.csv"
    pd.DataFrame({"temp": rng.normal(15, 5, 500).clip(-5.05, 40).round(1),
                  "kind": rng.choice(["a", "b"], 500)}).to_csv(data, index=False)
    temp = {"name": "temp", "kind": "continuous", "lower": -5.05, "upper": 40.0, "bins": 8}
    if precision is not None:
        temp["precision"] = precision
    config = tmp_path / "job.yaml"
    config.write_text(yaml.safe_dump({
        "name": "temps", "data": {"path": str(data), "schema": {"columns": [
            temp, {"name": "kind", "kind": "categorical", "categories": ["a", "b"]}]}},
        "budget": {"epsilon": 1.0, "delta": 1e-5}, "pipeline": {"recipe": "independent"},
        "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")},
    }))
    assert main(["run", str(config)]) == 0
    released = tmp_path / "out" / "synthetic.csv"
    written = _written_decimals(released, "temp")
    values = pd.read_csv(released)["temp"]
    if precision is None:
        assert written == 1  # bins 5.6 wide: one decimal, never 16 digits
        assert values.between(-5.0, 40).all()  # -5.0: the lowest 1-decimal value in bounds
    else:
        assert written <= precision
        lowest = -5.0 if precision == 1 else -5.05  # at 1 decimal, -5.0 is the lowest in bounds
        assert values.between(lowest, 40).all()


# --------------------------------------------------------------------------- 4. noise warnings


WAGE_LIKE = {"columns": [
    {"name": "year", "kind": "integer", "lower": 2003, "upper": 2009},
    {"name": "age", "kind": "integer", "lower": 18, "upper": 80},
    {"name": "maritl", "kind": "categorical", "categories": list("abcde")},
    {"name": "race", "kind": "categorical", "categories": list("abcd")},
    {"name": "education", "kind": "categorical", "categories": list("abcde")},
    {"name": "region", "kind": "categorical", "categories": list("abcdefghi")},
    {"name": "jobclass", "kind": "categorical", "categories": list("ab")},
    {"name": "health", "kind": "categorical", "categories": list("ab")},
    {"name": "health_ins", "kind": "categorical", "categories": list("ab")},
    {"name": "logwage", "kind": "continuous", "lower": 3, "upper": 5.8},
    {"name": "wage", "kind": "continuous", "lower": 20, "upper": 320},
]}


def _plan_job(tmp_path: Path, schema: dict, epsilon: float, public_records: int | None = None,
              recipe: str = "aim") -> Path:
    data: dict = {"path": "absent.csv", "schema": schema}  # plan reads no data
    if public_records is not None:
        data["public_records"] = public_records
    config = tmp_path / "plan.yaml"
    config.write_text(yaml.safe_dump({
        "name": "p", "data": data, "budget": {"epsilon": epsilon, "delta": 1e-5},
        "pipeline": {"recipe": recipe}, "evaluation": {"enabled": False},
    }))
    return config


def _plan_err(capsys, *args: str) -> str:
    assert main(["plan", *args]) == 0
    return capsys.readouterr().err


def _warnings(capsys, *args: str) -> list[str]:
    assert main(["plan", *args]) == 0
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("WARNING")]


@pytest.mark.parametrize("recipe", ["aim", "mst", "independent"])
def test_a_20_row_table_is_warned_about(tmp_path: Path, capsys, recipe: str) -> None:
    """20 rows: even the run's 2 bins an adaptive column expect 10 rows a 1-way cell (σ ≈ 12 for
    the independent recipe) and 5 a 2-way cell (σ ≈ 70)."""
    config = _plan_job(tmp_path, WAGE_LIKE, 1.0, public_records=20, recipe=recipe)
    (warning,) = _warnings(capsys, str(config))
    assert "mostly noise" in warning and "public row count 20" in warning
    assert "budget.epsilon" in warning and "fewer columns" in warning and "coarser" in warning


def test_epsilon_001_on_a_wage_like_table_is_warned_about(tmp_path: Path, capsys) -> None:
    """~3,000 rows, 11 columns: with the count public, and without it (n̂ unknown: the plan
    warns only when even the fewest cells a run may give its adaptive columns need more than
    UNKNOWN_ROWS_LIMIT rows; else it gives both figures in a note and the run checks again)."""
    (known,) = _warnings(capsys, str(_plan_job(tmp_path, WAGE_LIKE, 0.01, public_records=3000)))
    assert "public row count 3,000" in known
    err = _plan_err(capsys, str(_plan_job(tmp_path, WAGE_LIKE, 0.01)))
    assert "WARNING" not in err
    assert re.search(r"note: stage 'marginals': .* fewer than [\d,]+ rows would be mostly noise, "
                     r"and one of fewer than [\d,]+ may be", err)
    (unknown,) = _warnings(capsys, str(_plan_job(tmp_path, WAGE_LIKE, 0.001)))
    assert "not public" in unknown and "fewer than" in unknown
    assert _warnings(capsys, str(_plan_job(tmp_path, WAGE_LIKE, 1.0, public_records=3000))) == []


def test_an_all_auto_draft_is_not_warned_about_at_epsilon_1(tmp_path: Path, capsys) -> None:
    """`schema infer`'s default draft (every column auto) of Adult's 15 columns, n̂ unknown: the
    run sizes each column to the noise, so the plan gives a range in a note, not a warning (it
    warned on every such draft at ε = 1: Y ≈ 110,000 rows with each column at max_bins, where
    the release's 2-way TVD is 0.03); at ε = 0.01 even the fewest cells are noise."""
    header = (ROOT / "data" / "adult" / "adult_train.csv").open().readline().strip().split(",")
    schema = {"columns": [{"name": name, "kind": "auto"} for name in header]}
    err = _plan_err(capsys, str(_plan_job(tmp_path, schema, 1.0)))
    assert "WARNING: stage 'marginals'" not in err
    note = next(line for line in err.splitlines() if line.startswith("note: stage 'marginals'"))
    fewest, most = (int(figure.replace(",", "")) for figure in
                    re.findall(r"fewer than ([\d,]+)", note))
    assert fewest < 5_000 < 50_000 < most  # 909 and 109,944 at σ = 101 (9 and 1,089 cells)
    (warning,) = _warnings(capsys, str(_plan_job(tmp_path, schema, 0.01)))
    assert "mostly noise" in warning and "more than most tables have" in warning


def test_the_run_checks_the_noise_at_the_sizes_it_chose(tmp_path: Path) -> None:
    """After the domain step: categories as resolved, an adaptive numeric column at
    ``compress.bin_count(n̂, σ)`` bins; a warning only where the plan did not already give one."""
    from synthpriv.marginals.compress import bin_count
    from synthpriv.plan_warnings import column_cells, sized_noise_warning

    job = load_job(_plan_job(tmp_path, WAGE_LIKE, 1.0))
    plan, stages = plan_job(job)
    sigma = plan.stages[0].noise["sigma_first_rounds"]
    bins = bin_count(150, sigma)
    assert 2 <= bins < 32
    assert column_cells(job.schema, 32, records=150, sigma=sigma) == [
        bins, bins, 5, 4, 5, 9, 2, 2, 2, bins, bins]
    (warning,) = sized_noise_warning(job, plan, stages, 150.0, [])
    assert warning.startswith("WARNING: stage 'marginals': as the run sized the columns")
    assert "DP row count n̂ 150" in warning and "mostly noise" in warning
    assert sized_noise_warning(job, plan, stages, 150.0, [f"{warning[:30]} earlier"]) == []
    assert sized_noise_warning(job, plan, stages, 30_000.0, []) == []


def test_the_default_job_is_not_warned_about(capsys) -> None:
    assert _warnings(capsys, str(ROOT / "configs" / "adult.yaml")) == []
    assert _warnings(capsys, str(ROOT / "configs" / "adult.yaml"), "--epsilon", "0.001") != []


def test_the_estimate_follows_its_formula(tmp_path: Path) -> None:
    """σ from the plan; C = m² with m the median column's cells (with the public n̂, adaptive
    numeric columns at the run's ``bin_count(n̂, σ)`` bins, here 7; + 1 for missing); Y = σ·C;
    expected = n̂ / C."""
    job = load_job(_plan_job(tmp_path, WAGE_LIKE, 1.0, public_records=3000))
    plan, stages = plan_job(job)
    (estimate,) = noise_estimates(job, plan, stages)
    assert estimate.sigma == pytest.approx(plan.stages[0].noise["sigma_first_rounds"])
    assert estimate.column_cells == estimate.fewest == 5  # 7, 7, 5, 4, 5, 9, 2, 2, 2, 7, 7
    assert estimate.cells == 25 and estimate.expected == 120
    assert estimate.rows_needed == pytest.approx(25 * estimate.sigma)
    noisy = NoiseEstimate("marginals", 10.0, 2, 10.0, None)
    assert noisy.rows_needed == 1000 and not noisy.useless
    assert NoiseEstimate("marginals", UNKNOWN_ROWS_LIMIT, 2, 2.0, None).useless
    assert NoiseEstimate("marginals", 10.0, 2, 10.0, 999).useless  # 9.99 expected < σ = 10


def test_run_warns_before_the_data_is_read(tmp_path: Path, capsys) -> None:
    config = _plan_job(tmp_path, WAGE_LIKE, 0.01, public_records=3000)
    (tmp_path / "absent.csv").write_text("year\nnot a number\n")
    assert main(["run", str(config)]) == 2
    err = capsys.readouterr().err
    assert err.index("WARNING: stage 'marginals'") < err.index("error:")


# --------------------------------------------------------------------------- 5. draft schemas


def test_a_draft_schema_is_flagged_at_plan_and_run_and_in_the_manifest(
    tmp_path: Path, capsys
) -> None:
    config = write_tiny_job(tmp_path)
    draft, _ = infer_schema(tmp_path / "train.csv")
    assert draft["drafted_by"] == DRAFTED_BY
    (tmp_path / "schema.yaml").write_text(schema_yaml(draft))
    _edit(config, evaluation={"enabled": False})
    assert main(["plan", str(config)]) == 0
    assert "draft written by 'synthpriv schema infer'" in capsys.readouterr().err
    assert main(["run", str(config)]) == 0
    err = capsys.readouterr().err
    assert "may not be public" in err and "delete the schema's 'drafted_by' line" in err
    manifest = json.loads((tmp_path / "out" / "tiny" / "manifest.json").read_text())
    assert manifest["schema"]["drafted_by"] == DRAFTED_BY
    reviewed = [line for line in (tmp_path / "schema.yaml").read_text().splitlines()
                if not line.startswith("drafted_by:")]
    (tmp_path / "schema.yaml").write_text("\n".join(reviewed) + "\n")
    assert main(["plan", str(config)]) == 0
    assert "draft" not in capsys.readouterr().err


# --------------------------------------------------------------------------- 6. lazy stages


def test_planning_an_aim_job_imports_no_generator_stage() -> None:
    code = ("import sys\nfrom synthpriv.cli import main\n"
            "assert main(['plan', 'configs/adult.yaml']) == 0\n"
            "print(sorted(m for m in ('torch', 'opacus', 'synthpriv.generators.stage') "
            "if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    assert child.stdout.strip().splitlines()[-1] == "[]"


def test_every_declared_stage_module_registers_its_stage() -> None:
    assert STAGES.names == sorted(STAGE_MODULES)
    assert "generator" in STAGES and "nonsense" not in STAGES
    for name in ("marginals", "sample"):  # the generator's module is the slow one (torch)
        assert STAGES[name].name == name
    with pytest.raises(KeyError):
        STAGES["nonsense"]
    assert re.fullmatch(r"[a-z.]+", STAGE_MODULES["generator"])


# ------------------------------------------------------------------ stage contracts at plan time


@pytest.mark.parametrize("recipe", ["dpsgd", "hybrid"])
def test_a_recipe_that_trains_on_rows_is_refused_with_the_dask_engine_before_reading(
    tmp_path: Path, capsys, recipe: str
) -> None:
    """The generator stage needs the rows, which the dask engine never returns: the plan says
    so, naming the stage and the fix, and nothing is read (the data file does not even exist)."""
    config = _edit(write_tiny_job(tmp_path), data={"engine": "dask"}, pipeline={"recipe": recipe})
    (tmp_path / "train.csv").unlink()
    assert main(["plan", str(config)]) == 2
    err = capsys.readouterr().err
    assert "['generator']" in err and "data.engine: local" in err
    for marginal in ("aim", "mst", "independent"):  # counts are all these need: planned fine
        _edit(config, pipeline={"recipe": marginal})
        plan_job(load_job(config))


def test_a_run_of_a_small_all_auto_table_warns_after_sizing(tmp_path: Path, capsys) -> None:
    """200 rows, five auto columns, ε = 1: the plan cannot tell (n̂ unknown, so a note), the run
    can: its DP n̂ and the sizes its domain step chose give a 2-way cell about 20-30 rows
    against σ ≈ 90. The warning goes to stderr, not to the manifest (its plan_warnings are
    public-only: neighbours' metadata must not differ)."""
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 200), "city": rng.choice(["L", "N"], 200),
                          "income": np.round(rng.lognormal(10, 1, 200), 2),
                          "kids": rng.integers(0, 4, 200), "sex": rng.choice(["F", "M"], 200)})
    frame.to_csv(tmp_path / "small.csv", index=False)
    schema = {"columns": [{"name": name, "kind": "auto"} for name in frame.columns]}
    config = tmp_path / "small.yaml"
    config.write_text(yaml.safe_dump({"name": "small", "data": {"path": "small.csv",
                                      "schema": schema}, "budget": {"epsilon": 1.0}}))
    assert main(["run", str(config), "--no-evaluation", "--out", str(tmp_path / "out")]) == 0
    err = capsys.readouterr().err
    (warning,) = [line for line in err.splitlines() if line.startswith("WARNING: stage 'marginals'")]
    assert "as the run sized the columns" in warning and "mostly noise" in warning
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert not any("as the run sized" in line for line in manifest["plan_warnings"])


def test_the_run_time_check_reads_the_dp_row_count_not_the_table() -> None:
    """The sized warning states the model's DP row count n̂ (post-processing), never the
    table's true 200 rows: seeded, the two differ."""
    from synthpriv.api import Synthesizer, SynthprivWarning
    from synthpriv.job import model_records

    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"age": rng.integers(18, 80, 200), "city": rng.choice(["L", "N"], 200),
                          "income": np.round(rng.lognormal(10, 1, 200), 2),
                          "kids": rng.integers(0, 4, 200), "sex": rng.choice(["F", "M"], 200)})
    schema = {"columns": [{"name": name, "kind": "auto"} for name in frame.columns]}
    with pytest.warns(SynthprivWarning) as caught:
        synth = Synthesizer(schema, epsilon=1.0, seed=5).fit(frame)
    (warning,) = [str(w.message) for w in caught if "as the run sized" in str(w.message)]
    noisy = round(model_records(synth._fitted.synthesis.state))
    assert noisy != len(frame), "this seed's DP n̂ equals the true n: pick another seed"
    assert f"DP row count n̂ {noisy:,} " in warning
