"""The release-folder audit (synthpriv.evaluation.release_audit) and the planted bugs it must catch.

Fast tests: the neighbouring tables sit on their decision boundaries; a few real runs score
every released file, and each view reads what it claims (a planted bug moves it exactly); the
Slow tests: the DP-SGD noise measured from Opacus' update matches the ledger's z·C and not half
of it; the audit certifies more than the ledger's ε against each planted bug, and no more
than it on the real code (90 % confidence; each view's bound at level α/k).
The bugs are planted by the benchmark's context managers (benchmarks/release_audit.py), never in
the library.
"""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import numpy as np
import pytest
import yaml
from scipy import stats

from synthpriv import runner
from synthpriv.config import load_job
from synthpriv.evaluation import release_audit as ra
from synthpriv.marginals import compress

BENCHMARK = Path(__file__).resolve().parents[2] / "benchmarks" / "release_audit.py"


def _benchmark():
    spec = importlib.util.spec_from_file_location("release_audit_benchmark", BENCHMARK)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def bench():
    return _benchmark()


@pytest.fixture(scope="module")
def settings() -> dict[str, ra.ReleaseSetting]:
    return {name: ra.SETTINGS[name]() for name in ("grid", "point_mass", "far_canary",
                                                     "discovered_category")}


def test_the_grid_table_sits_where_one_row_adds_a_grid_cell(settings) -> None:
    s = settings["grid"]
    n = len(s.rows)
    assert compress.grid_cells(n + 1, s.sigma, 1024) == compress.grid_cells(n, s.sigma, 1024) + 1
    small, large = (ra.grid_breaks(s, records) for records in s.grid)
    assert not set(large) <= set(small) and not set(small) <= set(large)


def test_the_point_mass_table_regroups_with_the_canary_on_exact_counts(settings) -> None:
    s = settings["point_mass"]
    values = np.array([row[0] for row in s.rows])
    exact = np.bincount(values, minlength=8).astype(float)
    v = s.canary[0]
    assert exact[v] < compress.SIGNIFICANT * s.sigma <= exact[v] + 1
    with_canary = exact.copy()
    with_canary[v] += 1
    n = exact.sum()
    before = compress.numeric_groups(exact, compress.bin_count(n, s.sigma), s.sigma)
    after = compress.numeric_groups(with_canary, compress.bin_count(n + 1, s.sigma), s.sigma)
    assert before.max() != after.max()


def test_the_tables_are_neighbours(settings) -> None:
    for s in settings.values():
        assert s.table(True) == s.table(False) + ",".join(map(str, s.canary)) + "\n"
        assert "seed" not in s.config(Path("d.csv"), Path("o"))


def _exact_reading(release: ra.Release, s: ra.ReleaseSetting, with_canary: bool) -> float:
    """The mass view's reading when model.npz holds the exact counts (the planted exact_masses):
    the canary cell's exact count plus what the other fine cells of its coarse cell gave up to
    it. ``compress.compose`` (``spread_lone_noise``) pools a lone cell that is not significant
    into its coarse cell's other cells, and when it is that coarse cell's only taker (a coarse
    cell {heap, neighbour}: the noisy grouping makes one about 0.5 % of runs a side), into the
    heap: the neighbour's exact row is released on the heap and the neighbour at 0
    (benchmarks/README.md, "auditflake"). Each coarse cell's total is kept, so this is exact."""
    column = s.names.index(s.column)
    rows = s.rows + ((s.canary,) * s.canary_rows if with_canary else ())
    coarsened = release.coarsening(s.column)
    assert coarsened is not None, "the point-mass column is always coarsened"
    mapping, mass = coarsened  # one fine cell per value 0..values-1 (``point_mass``)
    exact = np.bincount([row[column] for row in rows], minlength=len(mapping)).astype(float)
    v = s.canary[column]
    mates = mapping == mapping[v]
    mates[v] = False
    given = float(np.sum(exact[mates] - mass[mates]))
    assert given >= 0, "the heap (significant) only takes pooled mass, never gives"
    return float(exact[v]) + given


def test_a_few_runs_score_every_released_file(settings, bench, tmp_path) -> None:
    """Two real runs per side of the point-mass table: every file is read (model.npz,
    manifest.json, synthetic.csv), each view gives a finite score, and under the planted
    exact-masses bug the mass view reads the canary cell's exact count (D's heap, D' one more)
    plus, in about 0.5 % of runs a side, a lone neighbour's row pooled into it
    (``_exact_reading``: checked exactly in every run)."""
    s = settings["point_mass"]
    files = {view.split(":")[0] for view in s.views}
    assert files == {"model.npz", "manifest.json", "synthetic.csv"}
    result = ra.run_release_audit(s, runs=2)
    for view in s.views:
        for side in ("in", "out"):
            assert np.all(np.isfinite(result.scores[view][side]))
    assert 0 < result.ledger_epsilon <= s.epsilon + 1e-9
    with bench.exact_masses():
        for _ in range(2):
            scores, *_ = ra.audit_release_runs(s, 1, tmp_path)
            for side, with_canary in (("in", True), ("out", False)):
                release = ra.Release.read(tmp_path / f"{side}-release")
                assert scores["model.npz:mass"][side][0] == pytest.approx(
                    _exact_reading(release, s, with_canary), abs=1e-9)


# Seed 165 (found by a loop over seeds 0-999 on main 9e5d96b; also 217, 702, 750) groups the heap
# with one neighbour as a coarse cell on D; if the noise's draw order changes, the precondition
# below fails: find another with benchmarks/results/auditflake/pooling_loop.py --seeds 0:1000.
POOLING_SEED = 165


def test_a_pooled_neighbour_adds_its_row_to_the_mass_view(settings, bench, tmp_path) -> None:
    """Seeded reproduction of the +1 (the old expectation "reads D's heap" fails here): on D,
    the noisy grouping makes {heap, neighbour} one coarse cell, the neighbour's row (not
    significant) is pooled into the heap, and the mass view reads heap + 1, as
    ``_exact_reading`` says."""
    s = settings["point_mass"]
    (tmp_path / "d.csv").write_text(s.table(False))
    config = {**s.config(tmp_path / "d.csv", tmp_path / "out"), "seed": POOLING_SEED}
    (tmp_path / "d.yaml").write_text(yaml.safe_dump(config))
    with bench.exact_masses():
        runner.run_job(load_job(tmp_path / "d.yaml"), force=True, evaluate=False)
    release = ra.Release.read(tmp_path / "out")
    mapping, mass = release.coarsening(s.column)
    v = s.canary[0]
    assert np.flatnonzero(mapping == mapping[v]).tolist() in ([v - 1, v], [v, v + 1]), (
        f"seed {POOLING_SEED} no longer groups the heap with one neighbour: {mapping.tolist()}")
    heap = sum(1 for row in s.rows if row[0] == v)
    assert ra.view_mass(release, s) == heap + 1 == _exact_reading(release, s, False)


def test_the_schema_view_reads_the_dp_bounds(settings, bench) -> None:
    """Far canary: the resolved upper bound holds the canary only when the bounds are read
    from exact counts (then always on D', never on D)."""
    s = settings["far_canary"]
    with bench.exact_bounds():
        result = ra.run_release_audit(s, runs=2)
    scores = result.scores["manifest.json:schema"]
    assert np.all(scores["in"] > 1000) and np.all(scores["out"] < 1000)


@pytest.mark.slow  # two DP-SGD runs per case, ~5–30 s on a loaded machine (Opacus' import)
@pytest.mark.parametrize("halved", [False, True])
def test_dpsgd_noise_measured_in_the_update_is_the_ledgers(bench, halved, tmp_path) -> None:
    """Noised − clipped sum of every step of one run per side, over every parameter: its
    variance is the ledger's (z·C)² within a χ² interval at level 1e-6 on each side — and not
    with the noise halved."""
    import contextlib

    plant = bench.half_noise() if halved else contextlib.nullcontext()
    with plant:
        _, _, steps, manifest = ra.audit_release_runs(ra.SETTINGS["dpsgd"](), 1, tmp_path)
    z, _, clip = ra.ledger_dpsgd(manifest)
    noise = np.concatenate([step.noised - step.clipped for step in steps])
    sum_squares = float(np.sum(noise.astype(float) ** 2))
    low, high = (math.sqrt(sum_squares / stats.chi2.ppf(p, noise.size)) for p in (1 - 1e-6, 1e-6))
    inside = low <= z * clip <= high
    assert inside != halved, (
        f"measured noise std {ra.measured_noise_std(steps):.3f} (interval [{low:.3f}, "
        f"{high:.3f}]) vs the ledger's z·C = {z * clip:.3f}, halved = {halved}")


# --- slow: certified ε against the planted bugs, and on the real code ----------------------------

RUNS = 60  # runs per side: a perfect distinguisher certifies about ln(30 / ln(20k)) ≈ 1.9


@pytest.mark.slow
@pytest.mark.parametrize("case", ["grid:true_n", "point_mass:exact_bins",
                                  "point_mass:exact_masses", "far_canary:exact_bounds",
                                  "dpsgd:half_noise", "person:unbounded_persons"])
def test_each_planted_bug_certifies_more_than_the_ledger(bench, case) -> None:
    runs = 5 if case.startswith("dpsgd") else RUNS  # the noise certificate pools every step
    result = bench.audit_case(case, runs, epsilon=1.0, alpha=0.05, selection_fraction=0.5)
    assert result.certified > result.ledger_epsilon, result.summary()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["grid", "point_mass", "far_canary", "discovered_category",
                                  "dpsgd", "person"])
def test_the_real_code_certifies_no_more_than_the_ledger(bench, name) -> None:
    """Holds with probability ≥ 90 % for a correct job (each view at level α/k); the real leak
    through these views is far below ε, so a failure means a bug."""
    runs = 10 if name == "dpsgd" else RUNS
    result = bench.audit_case(f"{name}:none", runs, epsilon=1.0, alpha=0.05,
                              selection_fraction=0.5)
    assert result.certified <= result.ledger_epsilon, result.summary()
