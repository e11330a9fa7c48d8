"""End-to-end audit of the whole release folder (synthpriv.evaluation.release_audit): the real job
on neighbouring tables at decision boundaries, every released file scored, against planted
privacy bugs.

    .venv/bin/python benchmarks/release_audit.py --runs 60 --out benchmarks/results/release_audit.jsonl
    .venv/bin/python benchmarks/release_audit.py --cases grid:none,grid:true_n --runs 200

A case is ``setting:mutation``. The mutations are planted here by monkeypatching (never in the
library) and each is audited on the setting whose boundary it crosses:

* ``true_n``: the exact row count, not the noisy one, sizes the adaptive grid (``_records``);
* ``exact_bins``: the adaptive bins chosen from the exact 1-way counts (the noisy masses kept);
* ``exact_masses``: the exact fine counts saved as decoding masses in model.npz;
* ``exact_bounds``: DP bounds read from the exact bucket counts (no noise, so no occupancy
  allowance for it);
* ``half_noise``: DP-SGD run at half the noise multiplier the ledger records;
* ``unbounded_persons``: data.person without the bounding (a person keeps all its rows, the
  sensitivity still k).

Each line of the output (and of ``--out``, JSON lines): ledger ε, certified ε (the largest
view; each view's bound at level α/k), the bound of every view, runs per side, seconds.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import sys
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from synthpriv import domain_stage
from synthpriv.evaluation.release_audit import SETTINGS, run_release_audit
from synthpriv.marginals import stage as marginals_stage
from synthpriv.marginals.measurement import Measurement

sys.path.insert(0, str(Path(__file__).resolve().parent))  # audit.py: the audit scripts' loop
from audit import audit_arguments, progress, run_settings  # noqa: E402


@contextlib.contextmanager
def patched(owner: object, name: str, value: object) -> Iterator[None]:
    original = getattr(owner, name)
    setattr(owner, name, value)
    try:
        yield
    finally:
        setattr(owner, name, original)


@contextlib.contextmanager
def true_n() -> Iterator[None]:
    """The grid is sized by the exact n (the noisy count is still drawn and recorded)."""
    original = marginals_stage.MarginalsStage._records

    def records(self, state, plan, ledger, source):
        noisy = original(self, state, plan, ledger, source)
        return None if noisy is None else float(state.data.records)

    with patched(marginals_stage.MarginalsStage, "_records", records):
        yield


@contextlib.contextmanager
def _seen_data() -> Iterator[dict]:
    """Keeps the count source ``_adapt`` chooses the domain from (to read exact counts)."""
    seen: dict = {}
    original = marginals_stage.MarginalsStage._adapt

    def adapt(self, state, data, one_way, fine, grid, *rest, **options):
        seen["data"] = data
        return original(self, state, data, one_way, fine, grid, *rest, **options)

    with patched(marginals_stage.MarginalsStage, "_adapt", adapt):
        yield seen


def _exact(seen: dict, one_way) -> list[Measurement]:
    data = seen["data"]
    return [Measurement(m.clique, np.asarray(data.marginal(m.clique), float), m.sigma)
            for m in one_way]


@contextlib.contextmanager
def exact_bins() -> Iterator[None]:
    """The coarse cells chosen from exact 1-way counts and the exact total; masses still the
    noisy fit."""
    original = marginals_stage.choose_coarsening
    with _seen_data() as seen:
        def choose(schema, fine, one_way, records, **kwargs):
            noisy = original(schema, fine, one_way, records, **kwargs)
            exact = _exact(seen, one_way)
            # the adaptive columns' grid counts combined with the fine level: exact as well
            combined = kwargs.pop("combined", None) or {}
            kwargs["combined"] = {m.clique[0]: m for m in exact if m.clique[0] in combined}
            chosen = original(schema, fine, exact, float(exact[0].noisy_counts.sum()), **kwargs)
            return dataclasses.replace(noisy, coarse=chosen.coarse, maps=chosen.maps)

        with patched(marginals_stage, "choose_coarsening", choose):
            yield


@contextlib.contextmanager
def exact_masses() -> Iterator[None]:
    """The adaptive columns' decoding masses are their exact counts (saved in model.npz)."""
    original = marginals_stage.choose_coarsening
    with _seen_data() as seen:
        def choose(schema, fine, one_way, records, **kwargs):
            chosen = original(schema, fine, one_way, records, **kwargs)
            exact = {m.clique[0]: m.noisy_counts for m in _exact(seen, one_way)}
            masses = {a: (exact[a] if a in chosen.fitted else m) for a, m in chosen.masses.items()}
            return dataclasses.replace(chosen, masses=masses)  # all else as chosen (noise too)

        with patched(marginals_stage, "choose_coarsening", choose):
            yield


@contextlib.contextmanager
def exact_bounds() -> Iterator[None]:
    """DP bounds read from the exact bucket counts: the noisy histogram is drawn (and its
    event recorded) but the bounds come from the exact one, with no noise to allow for."""
    histogram, bounds = domain_stage.discrete_gaussian_histogram, domain_stage.read_bounds
    exact: list = []

    def noisy_histogram(counts, sigma, source):
        exact.append(np.asarray(counts))
        return histogram(counts, sigma, source)

    def from_exact(noisy, sigma, grid, columns=1, present=None):
        return bounds(exact.pop().astype(float), 1e-12, grid, columns, present)

    with (patched(domain_stage, "discrete_gaussian_histogram", noisy_histogram),
          patched(domain_stage, "read_bounds", from_exact)):
        yield


@contextlib.contextmanager
def half_noise() -> Iterator[None]:
    """DP-SGD trains at half the noise multiplier the plan chose (the ledger records it whole)."""
    from synthpriv.generators import dpsgd  # imports torch and Opacus: only when planted

    original = dpsgd.make_private

    def make_private(model, optimizer, noise_multiplier, *args, **kwargs):
        return original(model, optimizer, noise_multiplier / 2, *args, **kwargs)

    with patched(dpsgd, "make_private", make_private):
        yield


@contextlib.contextmanager
def unbounded_persons() -> Iterator[None]:
    """data.person: each person keeps all its rows (the sensitivity still assumes k)."""
    from synthpriv import job as job_module

    original = job_module.bound_persons

    def bound_persons(table, column, rows_per_person, source):
        return original(table, column, 10**9, source)

    with patched(job_module, "bound_persons", bound_persons):
        yield


MUTATIONS = {"none": contextlib.nullcontext, "true_n": true_n, "exact_bins": exact_bins,
             "exact_masses": exact_masses, "exact_bounds": exact_bounds,
             "half_noise": half_noise, "unbounded_persons": unbounded_persons}
# Each mutation on the setting whose boundary it crosses, and each setting unmutated.
CASES = ("grid:none", "grid:true_n", "point_mass:none", "point_mass:exact_bins",
         "point_mass:exact_masses", "far_canary:none", "far_canary:exact_bounds",
         "discovered_category:none", "dpsgd:none", "dpsgd:half_noise", "person:none",
         "person:unbounded_persons")


def audit_case(case: str, runs: int, epsilon: float, alpha: float, selection_fraction: float,
               progress=None):
    """Audit one ``setting:mutation`` case; the mutation is planted for the runs only."""
    name, mutation = case.split(":")
    setting = SETTINGS[name](epsilon)
    with MUTATIONS[mutation]():
        return run_release_audit(setting, runs, alpha, progress=progress,
                                 selection_fraction=selection_fraction, mutation=mutation)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated setting:mutation")
    parser.add_argument("--epsilon", type=float, default=1.0)
    audit_arguments(parser, runs=60)
    args = parser.parse_args(argv)

    def audit(case: str) -> dict:
        return audit_case(case, args.runs, args.epsilon, args.alpha, args.selection_fraction,
                          progress=progress).summary()

    return run_settings((functools.partial(audit, case) for case in args.cases.split(",")), args)


if __name__ == "__main__":
    raise SystemExit(main())
