"""The release test's table over seeds (issue 24, branch missingfold): the table of
``tests/marginals/test_missing_fold.py::test_a_release_returns_dropped_categories_blank_not_as
_the_majority`` (2,000 rows, 8 auto columns, AIM, ε = 1; ``group`` 8 % over 40 values discovery
drops), with ``compress.keeps_missing`` wrapped to record, per seed, the fold decision on
``group``'s missing code and its inputs (the 1-way count, ``missing_estimate`` and its σ,
``kept_rows``). One JSON line per seed; the released blank share and 'a' share.

    PYTHONPATH=<tree> python benchmarks/missingfold_seeds.py 0:300 out.jsonl
    python benchmarks/missingfold_seeds.py --summary out1.jsonl out2.jsonl
"""

from __future__ import annotations

import json
import sys
import time
import warnings

import numpy as np
from scipy.stats import fisher_exact

from tests.marginals.test_missing_fold import dropped_table


def run(seeds: range, out: str) -> None:
    """Fit and release each seed; append one JSON line per seed to ``out``."""
    import synthpriv.marginals.compress as compress
    from synthpriv import Synthesizer

    data, _ = dropped_table()
    schema = {"columns": [{"name": n, "kind": "auto"} for n in data.columns]}
    trace: list[dict] = []
    original = compress.keeps_missing

    def keeps(column, measurement, one_way=()):  # noqa: ANN001, ANN202 (a recording wrapper)
        kept = original(column, measurement, one_way)
        if column.name == "group":
            noisy = np.asarray(measurement.noisy_counts, dtype=float)
            entry = {"keeps": bool(kept), "missing_count": float(noisy[-1]),
                     "missing_sigma": float(np.broadcast_to(measurement.sigma, noisy.shape)[-1])}
            if column.kept_rows is not None:
                estimate, sigma = compress.missing_estimate(column, measurement, one_way)
                entry |= {"estimate": estimate, "estimate_sigma": sigma,
                          "kept_rows": column.kept_rows.model_dump()}
            trace.append(entry)
        return kept

    compress.keeps_missing = keeps
    with open(out, "a") as handle:
        for seed in seeds:
            trace.clear()
            start = time.process_time()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                synth = Synthesizer(schema, epsilon=1.0, recipe="aim", seed=seed).fit(data)
            released = synth.synthetic
            handle.write(json.dumps({
                "seed": seed, "cpu": time.process_time() - start,
                "blank": float(released["group"].isna().mean()),
                "a": float((released["group"] == "a").mean()),
                "other_blank": bool(released.drop(columns="group").isna().any().any()),
                "trace": list(trace)}) + "\n")
            handle.flush()


def summary(paths: list[str]) -> None:
    """Per file: runs, runs with no blank in ``group`` (< 4 %: the test's bar is half the
    dropped share), the estimate's mean/sd and σ; Fisher's exact test of each file against the
    first."""
    rows = []
    for path in paths:
        with open(path) as handle:
            records = [json.loads(line) for line in handle]
        fails = sum(r["blank"] < 0.04 for r in records)
        traces = [_first(r["trace"]) for r in records]
        estimates = np.array([t.get("estimate", t.get("est")) for t in traces])
        sigma = traces[0].get("estimate_sigma", traces[0].get("est_sigma"))
        rows.append((path, len(records), fails))
        blank, top = np.mean([r["blank"] for r in records]), np.mean([r["a"] for r in records])
        line = (f"{path}: {fails} of {len(records)} runs with no blank; estimate mean "
                f"{estimates.mean():.1f} sd {estimates.std(ddof=1):.1f} (σ {sigma:.1f}, 3σ "
                f"{3 * sigma:.0f}); blank share mean {blank:.3f}; 'a' mean {top:.3f}; other "
                f"columns blank in {sum(r['other_blank'] for r in records)}; CPU "
                f"{np.mean([r['cpu'] for r in records]):.2f} s/run")
        if len(rows) > 1:
            _, first_n, first_fails = rows[0]
            p = fisher_exact([[fails, len(records) - fails],
                              [first_fails, first_n - first_fails]])[1]
            line += f"; Fisher p vs {rows[0][0]}: {p:.3g}"
        print(line)


def _first(trace: list | dict) -> dict:
    """The first recorded fold decision (this script's list; the session's /tmp copy wrote
    ``{"keeps": [...]}`` with ``est``/``est_sigma``: the figures in benchmarks/README.md)."""
    return trace[0] if isinstance(trace, list) else trace["keeps"][0]


if __name__ == "__main__":
    if sys.argv[1] == "--summary":
        summary(sys.argv[2:])
    else:
        start, stop = map(int, sys.argv[1].split(":"))
        run(range(start, stop), sys.argv[2])
