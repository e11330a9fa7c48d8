"""The privacy–utility sweep on a tiny table: CSV and PNG with the expected columns; a failing run
is reported and does not stop the others."""

from __future__ import annotations

import csv

import matplotlib.pyplot as plt
import pandas as pd
import yaml

from synthpriv.cli import main
from synthpriv.sweep import ATTACK_AXIS, COLUMNS, DP_METHOD, REFERENCE_METHOD, tradeoff_plot
from tests.evaluation.tiny import write_tiny_job

FAST = {"quality_report": False, "bootstrap": 0}


def read_rows(path):
    with path.open() as handle:
        reader = csv.DictReader(handle)
        return reader.fieldnames, list(reader)


def test_sweep_writes_the_tradeoff_table_and_plot(tmp_path, capsys):
    config = write_tiny_job(tmp_path, evaluation=FAST)
    out = tmp_path / "sweep"
    assert main(["sweep", str(config), "--epsilons", "0.5,4", "--out", str(out)]) == 0
    header, rows = read_rows(out / "tradeoff.csv")
    assert tuple(header) == COLUMNS
    assert [(r["method"], r["epsilon"]) for r in rows] == [
        (DP_METHOD, "0.5"), (DP_METHOD, "4"), (REFERENCE_METHOD, "")
    ]
    assert all(r["status"] == "ok" for r in rows)
    dp = rows[:2]
    for row in dp:
        assert float(row["ledger_epsilon"]) <= float(row["epsilon"]) * 1.001
        for column in ("tvd_1way", "tvd_2way", "tstr_auc", "attack_auc_worst", "eps_lower_bound"):
            assert row[column] != ""
    # More budget, less noise: the 1-way marginals get closer (σ shrinks ~8x from ε 0.5 to 4).
    assert float(dp[1]["tvd_1way"]) < float(dp[0]["tvd_1way"])
    assert (out / "tradeoff.png").read_bytes()[:4] == b"\x89PNG"
    assert "tradeoff.csv" in capsys.readouterr().out
    figure = tradeoff_plot(pd.read_csv(out / "tradeoff.csv"), "tiny")
    fidelity, _, attacks, _ = figure.axes
    legend = [t.get_text() for t in fidelity.get_legend().get_texts()]
    assert "1-way TVD — synthpriv (DP)" in legend  # words, not field names
    assert "1-way TVD — non-DP reference (sequential CART)" in legend
    # The attack axis starts below the no-advantage line and ends at 1: noise stays flat.
    low, high = attacks.get_ylim()
    assert low <= ATTACK_AXIS[0] < 0.5 and high == ATTACK_AXIS[1]
    half = 1.96 * sum(float(r["attack_auc_se"]) for r in dp) / len(dp)  # 95% around AUC 0.5
    legend = [t.get_text() for t in attacks.get_legend().get_texts()]
    assert half > 0 and f"no advantage: AUC 0.5 ± {half:.3f} (95%)" in legend
    plt.close(figure)


def test_a_failing_run_is_reported_and_the_others_go_on(tmp_path, capsys):
    """Noise fixed by the config costs more than ε = 0.01 allows: that run fails, ε = 5 runs."""
    config = write_tiny_job(tmp_path, evaluation=FAST)
    raw = yaml.safe_load(config.read_text())
    raw["pipeline"]["stages"] = {"marginals": {"sigma": 5.0}}
    config.write_text(yaml.safe_dump(raw))
    out = tmp_path / "sweep"
    code = main(["sweep", str(config), "--epsilons", "0.01,5", "--out", str(out), "--no-reference"])
    assert code == 1
    _, rows = read_rows(out / "tradeoff.csv")
    assert [r["status"] for r in rows] == ["failed", "ok"]
    assert "BudgetError" in rows[0]["error"]
    err = capsys.readouterr().err
    assert "FAILED" in err and "ε = 0.01" in err


def test_sweep_rejects_bad_epsilons(tmp_path, capsys):
    config = write_tiny_job(tmp_path)
    assert main(["sweep", str(config), "--epsilons", "1,-2"]) == 2
    assert "must be positive" in capsys.readouterr().err
