"""Membership-inference attacks: the distance, positive/negative controls on Adult, anonymeter."""

from __future__ import annotations

import math
import sys
import time

import numpy as np
import pandas as pd
import pytest

from synthpriv.evaluation.attacks import (
    MEMBERSHIP_ATTACKS,
    AttackInputs,
    MixedTypeDistance,
    ThreatModel,
    anonymeter_risks,
    closest_distance_attack,
    density_ratio_attack,
    identity_generator,
    run_membership_attacks,
)
from tests.evaluation.conftest import NUMERIC

DELTA = 1e-5



@pytest.fixture(scope="module")
def adult_split(adult):
    """Disjoint samples: members (the 'training table'), other training rows (a disjoint
    'synthetic' table from the same population), and non-members from the test split."""
    train, test = adult
    perm = np.random.default_rng(1).permutation(len(train))
    n = 2000
    return {
        "members": train.iloc[perm[:n]],
        "other": train.iloc[perm[n : 2 * n]],
        "non_members": test.sample(2 * n, random_state=2),
    }


def random_table(rng: np.random.Generator, n: int, n_num: int, n_cat: int, k: int, missing: float):
    """Mixed table with rounded numerics (ties), few categories and missing cells everywhere."""
    cols = {}
    for j in range(n_num):
        x = rng.normal(size=n).round(1)
        x[rng.random(n) < missing] = np.nan
        cols[f"x{j}"] = x
    for j in range(n_cat):
        v = rng.integers(0, k, n).astype(str).astype(object)
        v[rng.random(n) < missing] = None
        cols[f"c{j}"] = v
    return pd.DataFrame(cols)


# --------------------------------------------------------------------------- threat model


def test_threat_model_orders_knowledge_and_attacks_declare_needs():
    weakest = ThreatModel()
    strongest = ThreatModel("exact_minus_target", "rerun")
    assert strongest.permits(weakest) and not weakest.permits(strongest)
    assert not ThreatModel("exact_minus_target", "synthetic_only").permits(
        ThreatModel("auxiliary", "rerun")
    )
    with pytest.raises(ValueError):
        ThreatModel("everything", "rerun")  # type: ignore[arg-type]
    for attack in (closest_distance_attack, density_ratio_attack):
        assert attack.required_threat_model == weakest


def test_the_registry_runs_every_attack_the_threat_model_permits(monkeypatch):
    """An attack listed in MEMBERSHIP_ATTACKS is run and reported with no other change; one that
    needs more than the threat model grants is skipped. The oracle attack scores members 1."""
    assert set(MEMBERSHIP_ATTACKS) == {"closest_distance", "density_ratio"}
    rng = np.random.default_rng(3)
    table = random_table(rng, 300, 2, 2, 3, 0.0)
    members, non_members = table.iloc[:100], table.iloc[100:]

    def oracle(inputs: AttackInputs) -> np.ndarray:
        n = len(inputs.targets) // 2
        return np.r_[np.ones(n), np.zeros(len(inputs.targets) - n)]

    def rerun_only(inputs: AttackInputs) -> np.ndarray:
        raise AssertionError("needs the rerun threat model: must not run")

    oracle.required_threat_model = ThreatModel()
    rerun_only.required_threat_model = ThreatModel("auxiliary", "rerun")
    monkeypatch.setitem(MEMBERSHIP_ATTACKS, "oracle", oracle)
    monkeypatch.setitem(MEMBERSHIP_ATTACKS, "rerun_only", rerun_only)
    result = run_membership_attacks(members, non_members, members, None,
                                    numeric_columns=["x0", "x1"], delta=DELTA, seed=0,
                                    bootstrap=10)
    assert result["attacks"]["oracle"]["auc"] == 1.0
    assert "rerun_only" not in result["attacks"]
    assert set(result["attacks"]) == {"closest_distance", "density_ratio", "oracle"}


# --------------------------------------------------------------------------- distance


def test_gower_distance_matches_its_definition():
    ref = pd.DataFrame({"a": [0.0, 5.0, np.nan, 10.0], "b": ["x", "y", "x", None]})
    dist = MixedTypeDistance.fit(ref, ["a"])
    d = dist.pairwise(ref, ref)
    assert d[0, 1] == pytest.approx((0.5 + 1) / 2)  # |0 − 5|/10 and x ≠ y
    assert d[0, 2] == pytest.approx((1 + 0) / 2)  # present vs missing = 1
    assert d[0, 3] == pytest.approx((1 + 1) / 2)
    assert np.allclose(np.diag(d), 0)  # missing equals missing
    other = pd.DataFrame({"a": [20.0, 10.0], "b": ["z", "w"]})  # out of range, unseen values
    d2 = dist.pairwise(other, ref)
    assert d2[0, 3] == pytest.approx((0 + 1) / 2)  # 20 clips to 10; unseen ≠ missing
    assert d2[0, 0] == pytest.approx((1 + 1) / 2)
    assert dist.pairwise(other, other)[0, 1] == 0.0  # unseen values share one slot


@pytest.mark.parametrize(
    ("n_num", "n_cat", "k", "memory_mb"),
    [
        (3, 5, 3, 64),
        (3, 5, 3, 0.01),
        (0, 4, 2, 64),
        (4, 0, 0, 64),
        (2, 1, 4, 0.01),
        (2, 3, 2, 0.002),
    ],
)
def test_nearest_is_exact_on_every_search_path(n_num, n_cat, k, memory_mb):
    # tiny memory forces skipped blocks and one-row dense chunks
    rng = np.random.default_rng(n_num * 10 + n_cat)
    queries, candidates = (
        random_table(rng, 300, n_num, n_cat, k, 0.1),
        random_table(rng, 900, n_num, n_cat, k, 0.1),
    )
    dist = MixedTypeDistance.fit(candidates.iloc[:200], [c for c in queries if c[0] == "x"])
    full = dist.pairwise(queries, candidates)
    nearest, index = dist.nearest(queries, candidates, memory_mb=memory_mb)
    np.testing.assert_allclose(nearest, full.min(axis=1), atol=1e-12)
    np.testing.assert_allclose(full[np.arange(len(queries)), index], nearest, atol=1e-12)


def test_nearest_does_not_trust_blocks_it_had_to_skip():
    # The true nearest (one mismatch, same x) sits in a block too big for the memory budget;
    # a worse candidate (one mismatch, x off by 0.9) sits in a small block.
    big = pd.DataFrame({"c0": "b", "c1": "a", "c2": "a", "x": np.r_[0.0, np.ones(199)]})
    worse = pd.DataFrame({"c0": ["a"], "c1": ["b"], "c2": ["a"], "x": [0.9]})
    candidates = pd.concat([big, worse], ignore_index=True)
    query = pd.DataFrame({"c0": ["a"], "c1": ["a"], "c2": ["a"], "x": [0.0]})
    dist = MixedTypeDistance.fit(candidates, ["x"])
    nearest, index = dist.nearest(query, candidates, memory_mb=0.005)  # ≤ 81 pairs per batch
    assert nearest[0] == pytest.approx(1 / 4) and index[0] == 0


@pytest.mark.slow
def test_nearest_on_full_adult_is_fast(adult):
    train, test = adult
    dist = MixedTypeDistance.fit(train, NUMERIC)
    start = time.perf_counter()
    same, _ = dist.nearest(train, train)  # 32k × 32k
    seconds = time.perf_counter() - start
    assert np.all(same == 0)
    assert seconds < 20
    sample = test.sample(300, random_state=0)
    nearest, _ = dist.nearest(sample, train)
    np.testing.assert_allclose(nearest, dist.pairwise(sample, train).min(axis=1), atol=1e-12)


# --------------------------------------------------------------------------- attacks


def test_identity_generator_releases_a_copy():
    train = pd.DataFrame({"a": [1, 2]}, index=[5, 7])
    out = identity_generator(train)
    assert out is not train and out["a"].tolist() == [1, 2] and out.index.tolist() == [0, 1]


def test_attacks_detect_the_identity_generator_without_adult():
    rng = np.random.default_rng(7)
    table = random_table(rng, 1200, 3, 4, 5, 0.05)
    members, non_members = table.iloc[:400], table.iloc[400:]
    result = run_membership_attacks(
        members,
        non_members,
        identity_generator(members),
        None,
        numeric_columns=["x0", "x1", "x2"],
        delta=DELTA,
        seed=0,
        bootstrap=20,
    )
    assert result["n_targets_per_class"] == 400
    assert result["attacks"]["closest_distance"]["auc"] > 0.95
    assert result["attacks"]["density_ratio"]["auc"] > 0.8


def _assert_near_half(metrics: dict) -> None:
    lo, hi = metrics["auc_ci"]
    assert lo < 0.5 < hi
    n1, n0 = metrics["n_members"], metrics["n_non_members"]
    assert abs(metrics["auc"] - 0.5) < 3 * math.sqrt((n1 + n0 + 1) / (12 * n1 * n0))


def test_adult_positive_control_identity_generator(adult_split):
    s = adult_split
    result = run_membership_attacks(
        s["members"],
        s["non_members"],
        identity_generator(s["members"]),
        None,
        numeric_columns=NUMERIC,
        delta=DELTA,
        seed=0,
        bootstrap=100,
    )
    attacks = result["attacks"]
    assert attacks["closest_distance"]["auc"] > 0.95
    assert attacks["density_ratio"]["auc"] > 0.85
    assert attacks["closest_distance"]["tpr_at_fpr"][0.01] > 0.9
    assert result["worst_case"]["auc"] == max(a["auc"] for a in attacks.values())
    assert result["worst_case"]["eps_lower_bound"] > 2.0


def test_adult_negative_control_disjoint_sample(adult_split):
    s = adult_split
    result = run_membership_attacks(
        s["members"],
        s["non_members"],
        s["other"],
        None,
        numeric_columns=NUMERIC,
        delta=DELTA,
        seed=0,
        bootstrap=100,
    )
    for metrics in result["attacks"].values():
        _assert_near_half(metrics)
    assert result["worst_case"]["eps_lower_bound"] < 0.2


# --------------------------------------------------------------------------- anonymeter


def test_anonymeter_missing_is_reported_not_raised(monkeypatch):
    monkeypatch.setitem(sys.modules, "anonymeter.evaluators", None)  # import now fails
    table = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    out = anonymeter_risks(table, table, table, n_attacks=2, seed=0)
    assert out["available"] is False and "anonymeter" in out["reason"]


@pytest.mark.slow
def test_anonymeter_risks_higher_for_identity_than_for_disjoint(adult):
    pytest.importorskip("anonymeter")
    train, test = adult
    perm = np.random.default_rng(3).permutation(len(train))
    real = train.iloc[perm[:1000]].reset_index(drop=True)
    other = train.iloc[perm[1000:2000]].reset_index(drop=True)
    control = test.sample(1200, random_state=4).reset_index(drop=True)
    identity = anonymeter_risks(real, identity_generator(real), control, n_attacks=200, seed=0)
    disjoint = anonymeter_risks(real, other, control, n_attacks=200, seed=0)
    for result in (identity, disjoint):
        assert result["available"]
        for kind in ("singling_out", "linkability", "inference"):
            lo, hi = result[kind]["ci"]
            assert 0 <= lo <= result[kind]["risk"] <= hi <= 1
    for kind in ("singling_out", "linkability"):
        assert identity[kind]["ci"][0] > disjoint[kind]["ci"][1]
    assert identity["inference"]["secret"] == "income"


@pytest.mark.parametrize("n_cat", [0, 3, 8])
def test_kernel_grid_sums_grouped_by_matches_equal_the_direct_sums(n_cat: int) -> None:
    """The bandwidth selection's grid sums each bandwidth's exponentials once, grouped by the
    number of matching categorical columns: the same log kernel sums as one kernel at a time
    (the direct path, which shifts every row by its exact maximum), down to rounding, including
    bandwidths so small that most terms underflow."""
    from synthpriv.evaluation import attacks

    rng = np.random.default_rng(7)
    table = random_table(rng, 400, n_num=3, n_cat=n_cat, k=4, missing=0.05)
    numeric = [c for c in table.columns if c.startswith("x")]
    distance = MixedTypeDistance.fit(table, numeric)
    values = table[numeric].to_numpy(float)
    features = attacks._kernel_features(table, distance, np.nanmean(values, axis=0),
                                        np.nanstd(values, axis=0))
    queries = attacks._KernelFeatures(*(a[:150] for a in features))
    data = attacks._KernelFeatures(*(a[150:] for a in features))
    slots = np.array([len(c) + 2 for c in distance.categories], dtype=float)
    grid = [attacks.MixedKernel(w, h) for w in attacks.MATCH_LOG_ODDS_GRID
            for h in (0.005, *attacks.BANDWIDTH_GRID)]
    assert attacks._groups_are_exact(grid, n_cat)
    grouped = attacks._log_kernel_sums(queries, data, grid, slots, memory_mb=0.5)  # 2 chunks
    direct = np.stack([attacks._log_kernel_sums(queries, data, [k], slots)[0] for k in grid])
    np.testing.assert_allclose(grouped, direct, rtol=1e-10, atol=1e-9)
    assert not attacks._groups_are_exact(grid, 100)  # 8 × 100 matches: the direct path
