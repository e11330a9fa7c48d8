"""What the plan says DP category discovery (issue 24 item 3) and DP heap discovery (item 4) keep:
the smallest count of a value that survives, the most values a column keeps and the shares, from
public quantities only, and that those statements hold for the mechanism that runs
(select_partitions at the plan's σ, T; at σ_h, T_h for heaps)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml

from synthpriv.cli import main
from synthpriv.config import load_job
from synthpriv.pipeline import plan_job
from synthpriv.plan_warnings import SURE_SIGMAS, discovery_message, heap_message, plan_messages
from synthpriv.privacy.partition import select_partitions
from synthpriv.privacy.randomness import RandomSource
from tests.evaluation.tiny import tiny_table

SCHEMA = {"columns": [
    {"name": "colour", "kind": "categorical", "missing": True},
    {"name": "shape", "kind": "categorical", "other": "other"},
    {"name": "size", "kind": "integer", "lower": 0, "upper": 100},
    {"name": "weight", "kind": "auto"},
]}


def _planned(folder: Path, records: int | None = None,
             marker: str = "DP category discovery") -> tuple[list[str], dict]:
    """The plan's domain messages holding ``marker`` and the domain step's planned noise."""
    folder.mkdir(parents=True, exist_ok=True)
    tiny_table(400, 1).to_csv(folder / "train.csv", index=False)
    (folder / "schema.yaml").write_text(yaml.safe_dump(SCHEMA))
    data = {"path": "train.csv", "schema": "schema.yaml"}
    if records is not None:
        data["public_records"] = records
    config = {"name": "discovery", "data": data, "budget": {"epsilon": 1.0, "delta": 1e-5},
              "pipeline": {"recipe": "independent"}, "evaluation": {"enabled": False},
              "output": {"dir": str(folder / "out")}}
    (folder / "job.yaml").write_text(yaml.safe_dump(config))
    job = load_job(folder / "job.yaml")
    plan, stages = plan_job(job)
    messages = [m for m in plan_messages(job, plan, stages) if marker in m]
    return messages, plan.stages[0].noise


def _figure(text: str, after: str) -> int:
    """The number (with thousands commas) right after ``after`` in ``text``."""
    found = re.search(re.escape(after) + r"\s*([\d,]+)", text)
    assert found, f"{after!r} not in {text!r}"
    return int(found.group(1).replace(",", ""))


def test_the_stated_counts_hold_for_the_mechanism_that_runs(tmp_path: Path) -> None:
    """The plan's T and T + 2σ are what select_partitions does at the plan's σ: a value of T rows
    is kept about half the time, one of T + 2σ nearly always; and a column of twice the stated
    most values, equally common over the public n̂ rows, loses nearly all its rows."""
    records = 5_000
    (message,), noise = _planned(tmp_path, records)
    sigma, threshold = noise["sigma"], int(noise["category_threshold"])
    assert _figure(message, "kept half the time at") == threshold
    sure = _figure(message, "nearly always at")
    assert sure == round(threshold + SURE_SIGMAS * sigma)
    most = _figure(message, "a column keeps at most")
    assert most == records // threshold
    assert "colour, shape, weight" in message  # the discovered and the auto columns, by name
    source = RandomSource.seeded(5)
    draws = 400
    at_threshold = np.mean([bool(select_partitions({"v": threshold}, sigma, threshold, source))
                            for _ in range(draws)])
    at_sure = np.mean([bool(select_partitions({"v": sure}, sigma, threshold, source))
                       for _ in range(draws)])
    assert 0.4 < at_threshold < 0.6
    assert at_sure > 0.95
    values = 2 * most  # each value holds n̂ / (2·most) ≈ T/2 rows
    counts = {f"v{i}": records // values for i in range(values)}
    kept = [len(select_partitions(counts, sigma, threshold, source)) / values for _ in range(20)]
    assert np.mean(kept) < 0.05


@pytest.mark.parametrize("below", [True, False])
def test_it_warns_exactly_when_a_value_holding_5_percent_is_lost(tmp_path: Path,
                                                                 below: bool) -> None:
    """WARNING when T is above 5 % of the public row count (just under 20·T rows), a note just
    above it; the shares stated are T / n̂ and (T + 2σ) / n̂."""
    _, noise = _planned(tmp_path / "probe")  # T does not depend on n̂
    threshold, sigma = noise["category_threshold"], noise["sigma"]
    records = int(20 * threshold) + (-1 if below else 1)
    (message,), _ = _planned(tmp_path / "job", records)
    assert message.startswith("WARNING") == below
    assert f"needs {threshold / records:.1%} of the rows" in message
    assert f"({(threshold + 2 * sigma) / records:.1%} to be kept nearly always)" in message


def test_without_a_public_count_it_states_the_table_sizes(tmp_path: Path) -> None:
    """No public n̂: a note (never a warning: nothing says how large the table is) with the rows
    at which a value holding 5 % and 1 % is kept nearly always, (T + 2σ) / share."""
    (message,), noise = _planned(tmp_path)
    sure = noise["category_threshold"] + 2 * noise["sigma"]
    assert message.startswith("note")
    assert _figure(message, "kept nearly always from") == round(sure / 0.05)
    assert _figure(message, "1 % from") == round(sure / 0.01)
    assert discovery_message(100.0, 10.0, None, ["a"])[1] != discovery_message(
        100.0, 20.0, None, ["a"])[1]  # the sizes follow σ


def _kept_share(count: int, sigma: float, threshold: int, draws: int = 400) -> float:
    """The share of seeded draws in which select_partitions keeps a value of ``count`` rows."""
    source = RandomSource.seeded(11)
    return float(np.mean([bool(select_partitions({"v": count}, sigma, threshold, source))
                          for _ in range(draws)]))


@pytest.mark.parametrize("records", [None, 5_000])
def test_the_heap_counts_stated_hold_for_the_mechanism_that_runs(tmp_path: Path,
                                                                 records: int | None) -> None:
    """Heap discovery's statement: T_h and T_h + 2σ_h at the plan's heap_sigma and
    heap_threshold (not the category σ, T), a heap of T_h rows kept about half the time, one of
    T_h + 2σ_h nearly always; with a public n̂ the shares, without it the table sizes; the
    measured column by name (the auto one: size has public bounds); a note."""
    (message,), noise = _planned(tmp_path, records, marker="DP heap discovery")
    sigma, threshold = noise["heap_sigma"], int(noise["heap_threshold"])
    assert sigma != noise["sigma"]  # the heap histograms' own σ_h = F·σ
    assert message.startswith("note") and "(weight)" in message  # size has public bounds
    assert _figure(message, "is kept as a point mass when about") == threshold
    assert _figure(message, "kept half the time at") == threshold
    sure = threshold + SURE_SIGMAS * sigma
    assert _figure(message, "nearly always at") == round(sure)
    if records is None:
        assert _figure(message, "kept nearly always from") == round(sure / 0.05)
    else:
        assert f"needs {threshold / records:.1%} of the rows" in message
        assert f"({sure / records:.1%} to be kept nearly always)" in message
    sure = round(sure)
    assert 0.4 < _kept_share(threshold, sigma, threshold) < 0.6
    assert _kept_share(sure, sigma, threshold) > 0.95
    assert heap_message(100.0, 10.0, None, ["a"]) != heap_message(100.0, 20.0, None, ["a"])


def test_the_plan_of_a_safe_draft_says_what_heap_discovery_keeps(tmp_path: Path,
                                                                 capsys) -> None:
    """``schema infer`` (safe: every column auto) then ``synthpriv plan``: the heap statement is
    printed, its figures the plan's heap_threshold."""
    tiny_table(200, 1).to_csv(tmp_path / "data.csv", index=False)
    assert main(["schema", "infer", str(tmp_path / "data.csv")]) == 0
    (tmp_path / "schema.yaml").write_text(capsys.readouterr().out)
    config = {"name": "safe", "data": {"path": "data.csv", "schema": "schema.yaml"},
              "budget": {"epsilon": 1.0, "delta": 1e-6}, "pipeline": {"recipe": "independent"},
              "evaluation": {"enabled": False}, "output": {"dir": str(tmp_path / "out")}}
    (tmp_path / "job.yaml").write_text(yaml.safe_dump(config))
    assert main(["plan", str(tmp_path / "job.yaml")]) == 0
    said = capsys.readouterr().err  # plan-time messages go to stderr, the plan to stdout
    plan, _ = plan_job(load_job(tmp_path / "job.yaml"))
    threshold = int(plan.stages[0].noise["heap_threshold"])
    line = next(line for line in said.splitlines() if "DP heap discovery" in line)
    assert "(colour, shape, size, weight)" in line
    assert _figure(line, "is kept as a point mass when about") == threshold
