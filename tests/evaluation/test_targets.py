"""Tests of the TSTR task per target (issue 16): a two-valued integer target is a classification
scored by AUC, a multi-class target by a named macro one-vs-rest AUC with its chance level, a
continuous target by R²/MAE; the report and the terminal line say which."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from sklearn.metrics import roc_auc_score

from synthpriv.evaluation.job import summary_lines
from synthpriv.evaluation.utility import (
    _classification_scores,
    efficacy_summary,
    evaluate_utility,
    target_task,
)


def frame(rows: int, seed: int, kind: str) -> pd.DataFrame:
    """Features x (numeric), c (categorical) and a target y of ``kind`` that depends on x."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=rows)
    c = rng.choice(["a", "b"], size=rows)
    noisy = x + rng.normal(scale=0.3, size=rows)
    if kind == "binary_int":  # 0/1 integers, 1 the rarer
        y = (noisy > 0.7).astype(np.int64)
    elif kind == "five_classes":
        y = np.array(["v", "w", "x", "y", "z"])[np.digitize(noisy, [-1.0, -0.3, 0.3, 1.0])]
    else:  # continuous
        y = 3.0 * x + (c == "a") + rng.normal(scale=0.5, size=rows)
    return pd.DataFrame({"x": x, "c": c, "y": y})


def utility(kind: str, numeric: list[str]) -> dict:
    real, synthetic, holdout = (frame(n, s, kind) for n, s in ((1500, 0), (1500, 1), (800, 2)))
    return evaluate_utility(real, synthetic, numeric_columns=numeric, target="y", holdout=holdout,
                            quality_report=False)["ml_efficacy"]


def test_target_task_rules():
    assert target_task(pd.Series([0, 1, 1, 0]), numeric=True) == ("classification", ["0", "1"])
    assert target_task(pd.Series([0.0, 1.0, np.nan]), numeric=True) == ("classification",
                                                                       ["0", "1"])
    assert target_task(pd.Series([0, 1, 2]), numeric=True) == ("regression", [])
    assert target_task(pd.Series(["a", "b", "c"]), numeric=False)[0] == "classification"


def test_binary_integer_target_is_classification_with_auc():
    efficacy = utility("binary_int", numeric=["x", "y"])  # y declared numeric (integer 0/1)
    assert efficacy["task"] == "classification" and efficacy["n_classes"] == 2
    assert efficacy["positive_class"] == "1" and efficacy["headline"] == "auc"
    assert "binary" in efficacy["metric"]
    for model in efficacy["models"].values():
        assert set(model["tstr"]) == {"auc", "accuracy"}
        assert model["tstr"]["auc"] > 0.9  # y is a threshold of x plus small noise
    line = efficacy_summary(efficacy)
    assert line.startswith("TSTR AUC 0.9") and "binary 'y', '1' vs the rest" in line


def test_multiclass_target_names_macro_auc_and_chance():
    efficacy = utility("five_classes", numeric=["x"])
    assert efficacy["task"] == "classification" and efficacy["n_classes"] == 5
    assert efficacy["positive_class"] is None
    assert "macro one-vs-rest ROC AUC over 5 classes" in efficacy["metric"]
    assert efficacy["baseline"]["auc"] == 0.5
    assert 0.2 < efficacy["baseline"]["accuracy"] < 0.5  # the largest of five classes
    for model in efficacy["models"].values():
        assert model["tstr"]["auc"] > 0.8  # ordered classes of x: well separated
        assert model["tstr"]["accuracy"] > efficacy["baseline"]["accuracy"]
    line = efficacy_summary(efficacy)
    assert "TSTR macro one-vs-rest AUC" in line and "5-class 'y'" in line
    assert "majority class" in line


def test_multiclass_auc_below_chance_is_called_so():
    efficacy = {
        "task": "classification", "target": "shape", "n_classes": 5, "positive_class": None,
        "baseline": {"auc": 0.5, "accuracy": 0.31},
        "models": {"gradient_boosting": {"tstr": {"auc": 0.452, "accuracy": 0.2},
                                         "trtr": {"auc": 0.61, "accuracy": 0.4}}},
    }
    line = efficacy_summary(efficacy)
    assert "macro one-vs-rest AUC 0.452" in line and "below chance" in line
    assert "TSTR AUC 0.452" not in line


def test_macro_auc_matches_sklearn_ovr_macro():
    rng = np.random.default_rng(0)
    labels = np.array(["p", "q", "r"])
    y = pd.Series(labels[rng.integers(0, 3, 300)])
    probabilities = rng.dirichlet(np.ones(3), size=300)

    class Fixed:  # a fitted model stand-in with fixed probabilities
        classes_ = labels

        def predict(self, x: pd.DataFrame) -> np.ndarray:
            return labels[probabilities.argmax(axis=1)]

        def predict_proba(self, x: pd.DataFrame) -> np.ndarray:
            return probabilities

    scores = _classification_scores(Fixed(), None, pd.DataFrame(index=y.index), y, None)
    expected = roc_auc_score(y, probabilities, multi_class="ovr", average="macro", labels=labels)
    assert scores["auc"] == pytest.approx(expected)


def test_continuous_target_is_regression_with_r2_and_mae():
    efficacy = utility("continuous", numeric=["x", "y"])
    assert efficacy["task"] == "regression" and efficacy["headline"] == "r2"
    assert efficacy["n_classes"] is None and "R²" in efficacy["metric"]
    for model in efficacy["models"].values():
        assert set(model["tstr"]) == {"r2", "mae"}
        assert model["tstr"]["r2"] > 0.9
        assert model["tstr"]["mae"] < efficacy["baseline"]["mae"] / 2
    assert efficacy_summary(efficacy).startswith("TSTR R² 0.9")


def test_terminal_summary_prints_a_line_for_every_task():
    for kind, numeric in (("binary_int", ["x", "y"]), ("continuous", ["x", "y"])):
        efficacy = utility(kind, numeric)
        report = {"utility": {"marginals": {"1-way": {"mean": 0.1}}, "association": {"mean": 0.1},
                              "ml_efficacy": efficacy}, "notes": []}
        assert any(line.startswith("utility: TSTR") for line in summary_lines(report))
