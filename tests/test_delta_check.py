"""δ against n without the exact n (issue 23, item 2): whether a release exists is decided on a
public row count (at plan time, before any data is read) or on the run's DP estimate of it, never
on the exact count, so a table and its neighbour around 1/δ are not told apart by a refusal."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import Job, load_job
from synthpriv.errors import BudgetError
from synthpriv.job import DELTA_WITHOUT_COUNT, SynthesisJob, check_delta, model_records
from synthpriv.privacy.randomness import RandomSource
from synthpriv.table import check_frame
from tests.evaluation.tiny import tiny_table, write_tiny_job

N = 500
DELTA = 0.999 / N  # 0.001998: below 1/500, not below 1/501 (the review's pair)


def _job(folder: Path, *, epsilon: float = 1.0, delta: float = DELTA, **data) -> Job:
    config = yaml.safe_load(write_tiny_job(folder, rows=N).read_text())
    config["budget"].update(epsilon=epsilon, delta=delta)
    config["data"].update(data)
    config["evaluation"] = {"enabled": False}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    return load_job(folder / "job.yaml")


def _neighbours(job: Job) -> dict[int, pd.DataFrame]:
    """A table of N rows and the same table plus one row (add/remove neighbours)."""
    bigger = check_frame(tiny_table(N + 1, 7), job.schema)
    return {N: bigger.iloc[:N].reset_index(drop=True), N + 1: bigger}


def _released(job: Job, table: pd.DataFrame, seed: int | None = None) -> bool:
    source = None if seed is None else RandomSource.seeded(seed)
    try:
        SynthesisJob(job, source=source, table=table).fit(evaluate=False)
    except BudgetError:
        return False
    return True


def test_with_a_public_count_neighbours_get_one_answer_before_the_data_is_read(
    tmp_path: Path, capsys
) -> None:
    """data.public_records = 500: δ = 0.001998 releases both the 500- and the 501-row table; δ =
    0.002 refuses both, at plan time: ``synthpriv plan`` (which reads no data) exits 2, and a fit
    whose data file is missing fails on δ, not on the file."""
    job = _job(tmp_path / "a", public_records=N)
    assert [_released(job, table) for table in _neighbours(job).values()] == [True, True]
    refused = _job(tmp_path / "b", delta=1.0 / N, public_records=N)
    assert [_released(refused, table) for table in _neighbours(refused).values()] == [False, False]
    assert main(["plan", str(tmp_path / "b" / "job.yaml")]) == 2
    error = capsys.readouterr().err
    assert "data.public_records = 500" in error and "before any data was read" in error
    (tmp_path / "b" / "train.csv").unlink()
    with pytest.raises(BudgetError, match="is not below 1/n = 0.002"):
        SynthesisJob(load_job(tmp_path / "b" / "job.yaml")).fit(evaluate=False)


def test_without_a_public_count_the_decision_is_the_dp_count_s(tmp_path: Path) -> None:
    """No public count: for each seed and each of the two neighbours, the run refuses exactly when
    δ ≥ 1/n̂, n̂ the model's noisy total that the same seeded run (same noise: allow_large_delta
    changes no calibration) records as its DP output. On the exact n the 500-row table would
    always release and the 501-row one always refuse; here both outcomes occur for each."""
    job = _job(tmp_path / "a", epsilon=0.3)
    allowed = _job(tmp_path / "b", epsilon=0.3)
    allowed.config.budget.allow_large_delta = True
    outcomes: dict[int, set[bool]] = {N: set(), N + 1: set()}
    for rows, table in _neighbours(job).items():
        for seed in range(8):
            fitted = SynthesisJob(allowed, source=RandomSource.seeded(seed), table=table).fit(
                evaluate=False)
            estimate = model_records(fitted.synthesis.state)
            assert estimate == fitted.synthesis.state.model.total
            released = _released(job, table, seed)
            assert released == (1.0 / max(1.0, estimate) > DELTA), (rows, seed, estimate)
            outcomes[rows].add(released)
    assert outcomes == {N: {True, False}, N + 1: {True, False}}


def test_the_refusal_on_the_dp_count_says_so_and_releases_nothing(tmp_path: Path, capsys) -> None:
    job_path = write_tiny_job(tmp_path, rows=N)
    config = yaml.safe_load(job_path.read_text())
    config["budget"]["delta"] = 0.01  # far above 1/n̂ for any plausible n̂ near 500
    config["evaluation"] = {"enabled": False}
    job_path.write_text(yaml.safe_dump(config))
    assert main(["run", str(job_path)]) == 2
    error = capsys.readouterr().err
    assert "is not below 1/n̂" in error and "DP estimate of the row count" in error
    assert error.count("\n") == 1 and not (tmp_path / "out" / "tiny").exists()


def test_with_no_count_at_all_the_public_rule_decides(tmp_path: Path) -> None:
    """Neither a public count nor a DP one (a model without a total): δ ≤ 10⁻⁶ passes, above
    it is refused with the rule in the message; allow_large_delta lifts it."""
    check_delta(_job(tmp_path / "a", delta=DELTA_WITHOUT_COUNT), None)
    job = _job(tmp_path / "b", delta=2 * DELTA_WITHOUT_COUNT)
    with pytest.raises(BudgetError, match=r"public rule δ ≤ 1e-06 \(below 1/n for any table"):
        check_delta(job, None)
    job.config.budget.allow_large_delta = True
    check_delta(job, None)


def test_the_plan_says_when_delta_waits_for_the_dp_count(tmp_path: Path, capsys) -> None:
    """No public count and δ above 10⁻⁶: ``synthpriv plan`` says the check comes after the stages
    and how to move it before the run; with the public count the plan itself decides."""
    _job(tmp_path / "a")
    assert main(["plan", str(tmp_path / "a" / "job.yaml")]) == 0
    error = capsys.readouterr().err
    assert "budget.delta = 0.001998 is checked after the stages against 1/n̂" in error
    assert "a table of about 501 rows or more is refused then" in error
    _job(tmp_path / "b", public_records=N)
    assert main(["plan", str(tmp_path / "b" / "job.yaml")]) == 0
    assert "checked after the stages" not in capsys.readouterr().err


def test_the_sweep_decides_as_a_release_would(tmp_path: Path, capsys) -> None:
    """δ = 0.01 on 500 rows: with the public count the sweep refuses at once on it (exit 2);
    without it each run is refused on its own DP n̂, recorded as a failed run."""
    _job(tmp_path / "a", delta=0.01, public_records=N)
    args = ["--epsilons", "1,2", "--no-reference"]
    assert main(["sweep", str(tmp_path / "a" / "job.yaml"), *args, "--out",
                 str(tmp_path / "a" / "sweep")]) == 2
    assert "data.public_records = 500" in capsys.readouterr().err
    _job(tmp_path / "b", delta=0.01)
    out = tmp_path / "b" / "sweep"
    assert main(["sweep", str(tmp_path / "b" / "job.yaml"), *args, "--out", str(out)]) == 1
    rows = pd.read_csv(out / "tradeoff.csv")
    assert list(rows["status"]) == ["failed", "failed"]
    assert rows["error"].str.contains("is not below 1/n̂").all()
