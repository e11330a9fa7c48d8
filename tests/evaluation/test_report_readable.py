"""The report reads like prose: numbers written out, plots that show where the error is, the
marginal attack and anonymeter summarised in sentences (issue 25, item 6)."""

from __future__ import annotations

import re
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest

from synthpriv.evaluation.controls import cart_generator
from synthpriv.evaluation.evaluate import column_fidelity
from synthpriv.evaluation.marginal_attack import marginal_attack
from synthpriv.evaluation.plots import SKEWED, paired_bars, where_the_error_is
from synthpriv.evaluation.readable import number
from synthpriv.evaluation.report import (
    Section,
    _anonymeter_section,
    _marginal_section,
    anonymeter_warning,
    to_html,
    to_markdown,
)
from synthpriv.evaluation.shadow import IdentityGenerator
from tests.evaluation.tiny import NUMERIC, tiny_table

SCIENTIFIC = re.compile(r"\de[+-]?\d")


def test_numbers_are_written_out_and_keep_three_significant_digits():
    rng = np.random.default_rng(25)
    for value in np.concatenate([10 ** rng.uniform(-3.9, 14.9, 300), -(10 ** rng.uniform(0, 8, 50))]):
        text = number(value)
        assert not SCIENTIFIC.search(text), (value, text)
        assert float(text.replace(",", "")) == pytest.approx(value, rel=5e-3)
    assert SCIENTIFIC.search(number(3e-7))  # a magnitude nobody writes out keeps its exponent


def test_bin_labels_of_large_numbers_have_no_exponent():
    """Adult's fnlwgt (10⁴–10⁶) was labelled '[1.18e+05, 1.35e+05)'."""
    rng = np.random.default_rng(6)
    real = pd.DataFrame({"fnlwgt": rng.lognormal(12, 0.5, 2000).round(),
                         "tiny": rng.uniform(0, 0.002, 2000)})
    synthetic = real.sample(frac=1.0, replace=True, random_state=1)
    fidelity = column_fidelity(real, synthetic, ["fnlwgt", "tiny"])
    labels = [label for d in fidelity["distributions"] for label in d["labels"]]
    assert len(labels) > 20 and all(d["numeric"] for d in fidelity["distributions"])
    assert not [label for label in labels if SCIENTIFIC.search(label)]
    assert any("," in label for label in labels)  # thousands written as 118,000


def _dominated(rng: np.random.Generator, tail: int = 30) -> dict:
    """One category holding 90% of the rows; the synthetic table lacks the four rarest ones."""
    real = np.r_[0.9, rng.dirichlet(np.ones(tail)) * 0.1]
    synthetic = real.copy()
    wrong = np.argsort(real)[:4]
    synthetic[wrong] = 0.0
    synthetic /= synthetic.sum()
    labels = ["big", *(f"c{i}" for i in range(tail))]
    return {"labels": labels, "real": real.tolist(), "synthetic": synthetic.tolist(),
            "numeric": False, "wrong": [labels[i] for i in wrong]}


def test_a_dominant_category_does_not_hide_the_tail_where_the_error_is():
    dist = _dominated(np.random.default_rng(3))
    labels, real, synthetic = where_the_error_is(dist)
    assert set(dist["wrong"]) <= set(labels)  # the wrong categories are drawn, not grouped away
    assert labels[-1].startswith("other (") and real.sum() == pytest.approx(1.0)
    figure, ax = plt.subplots()
    paired_bars(ax, labels, real, synthetic)
    assert ax.get_yscale() == "log" and max(real) / min(real) > SKEWED  # the tail is visible
    ax.clear()
    paired_bars(ax, ["a", "b"], np.array([0.6, 0.4]), np.array([0.5, 0.5]))
    assert ax.get_yscale() == "linear"  # balanced shares keep the plain axis
    plt.close(figure)


def test_the_marginal_attack_is_summarised_and_its_rows_folded():
    pool = tiny_table(300, 1)
    attack = marginal_attack(pool, {"identity": IdentityGenerator()}, numeric_columns=NUMERIC,
                             neighbouring="add_remove", delta=1e-5, shadow_tables=8, records=60,
                             targets=3, bootstrap=50, progress=False)
    section = _marginal_section(attack)
    result = attack["generators"]["identity"]
    best = max(t["advantage"] for t in result["targets"])
    summary = [text for kind, *rest in section.blocks if kind == "p" for text in rest
               if text.startswith("identity: best advantage")]
    assert len(summary) == 1 and f"best advantage {best:.2f}" in summary[0]
    low, high = result["mean_auc_ci"]
    assert f"[{low:.3f}, {high:.3f}]" in summary[0]
    meaning = "lies above 0.5" if result["power"] else "shows no advantage over guessing"
    assert meaning in summary[0]  # one sentence of what it means, as the interval says
    assert [b[0] for b in section.blocks].count("table") == 0  # no 20-row table in the open
    markdown, page = to_markdown([Section("x"), section]), to_html([Section("x"), section], {})
    for text in (markdown, page):
        assert "<details><summary>Each exposed row (3 rows)</summary>" in text


def _anonymeter_baseline_warning() -> tuple[str, float, float]:
    """The warning anonymeter itself gives when its attack does no better than its baseline,
    with its attack and baseline rates."""
    from anonymeter.stats.confidence import EvaluationResults

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = EvaluationResults(n_attacks=200, n_success=4, n_baseline=5, n_control=3,
                                    confidence_level=0.95)
    (warning,) = caught
    return str(warning.message), results.attack_rate.value, results.baseline_rate.value


def test_anonymeters_warning_is_explained_in_plain_words():
    raw, attack, baseline = _anonymeter_baseline_warning()
    assert "cannot be trusted" in raw
    rate = {"value": attack}
    risks = {"available": True, "n_attacks": 200, "warnings": [raw],
             "singling_out": {"risk": 0.0, "ci": [0.0, 0.02], "attack_rate": {"value": 0.5}},
             "linkability": {"risk": 0.01, "ci": [0.0, 0.03], "attack_rate": {"value": 0.6}},
             "inference": {"risk": 0.0, "ci": [0.0, 0.04], "attack_rate": rate, "secret": "income"}}
    text = anonymeter_warning(raw, risks)
    assert "cannot be trusted" not in text and "too few successful attacks" in text
    assert "the inference attack" in text and f"{attack:.1%}" in text and f"{baseline:.1%}" in text
    markdown = to_markdown([Section("x"), _anonymeter_section(risks)])
    assert "reveal a training row's income" in markdown and "95% interval 0.000 to 0.040" in markdown
    assert "anonymeter warned" not in markdown  # the raw float is not printed as is


def test_cart_reference_keeps_relationships_and_copies_real_values():
    """Sequential CART (the sweep's non-DP reference) keeps the size–weight correlation and
    the colour–size dependence that independent columns would lose."""
    real = tiny_table(2000, 4)
    fake = cart_generator(real, NUMERIC, seed=2)
    assert list(fake.columns) == list(real.columns) and len(fake) == len(real)
    for column in real.columns:
        assert set(fake[column]) <= set(real[column])  # non-private: every value is copied
    assert fake["size"].corr(fake["weight"]) == pytest.approx(real["size"].corr(real["weight"]), abs=0.05)
    blue = real.groupby(real["colour"] == "blue")["size"].mean().diff().iloc[-1]
    blue_fake = fake.groupby(fake["colour"] == "blue")["size"].mean().diff().iloc[-1]
    assert blue_fake == pytest.approx(blue, abs=0.5)  # 4 in the table; 0 if colour were ignored
