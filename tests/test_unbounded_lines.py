"""A numeric column whose DP bounds find nothing is released all missing (a categorical column
with no category in the resolved schema, ``domain_stage.dp_bounds``); the run's domain lines name
the kind the kinds pass decided and say the bounds found nothing, not "categorical (decided under
DP)" (benchmarks/README.md "smallkinds")."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv import domain_stage
from synthpriv.config import load_job
from synthpriv.domain_stage import domain_lines
from synthpriv.kinds import CLASSES
from synthpriv.pipeline import plan_job, resolve_domain
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.schema import CategoricalColumn
from tests.test_kinds import _job


def test_a_numeric_column_with_no_dp_bounds_is_named_with_its_kind(tmp_path: Path,
                                                                  monkeypatch) -> None:
    """60 rows at ε = 0.05 (domain σ in the hundreds): no bucket clears the noise. The kinds
    pass is forced to read numbers (its noisy class histogram replaced: post-processing sees
    only that); the stage records each column's decided kind in ``unbounded`` and the lines
    say "integer (decided under DP), no DP bounds", and warn."""
    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.integers(0, 10**6, 60), "b": rng.integers(0, 10**6, 60)})
    job = load_job(_job(tmp_path, table, epsilon=0.05, seed=0))
    forced = np.zeros(len(CLASSES))
    forced[CLASSES.index("whole")] = 10**6  # every column reads integer
    real = domain_stage.discrete_gaussian_histogram

    def histogram(counts, sigma, source):
        out = real(counts, sigma, source)
        return forced.copy() if np.shape(counts) == (len(CLASSES),) else out

    monkeypatch.setattr(domain_stage, "discrete_gaussian_histogram", histogram)
    planned = plan_job(job)
    resolved, _ = resolve_domain(job, planned, Ledger(job.config.budget.neighbouring),
                                 RandomSource.seeded(0))
    step = planned[1][0][0]
    assert step.unbounded == {"a": "integer", "b": "integer"}
    assert all(isinstance(resolved.schema.column(n), CategoricalColumn) for n in "ab")
    lines = domain_lines(job.schema, resolved.schema, step.kept_shares, step.thresholds,
                         step.unbounded)
    text = "\n".join(lines)
    assert "  a: integer (decided under DP), no DP bounds" in text
    assert "categorical (decided under DP)" not in text
    assert any(line.startswith("WARNING: nothing in a, b") for line in lines)
    # without the stage's record (the Python API's warning), still warned as all missing
    assert any(line.startswith("WARNING: nothing in a, b")
               for line in domain_lines(job.schema, resolved.schema))


def test_the_report_names_a_column_released_all_missing(tmp_path: Path, monkeypatch) -> None:
    """The domain step's warning reaches report.html (``evaluation.job.domain_warnings``, shown
    in the summary section), read from the declared and the released schema only."""
    from synthpriv.evaluation.job import domain_warnings
    from synthpriv.evaluation.report import _summary_section, to_markdown

    rng = np.random.default_rng(0)
    table = pd.DataFrame({"a": rng.integers(0, 10**6, 60), "b": rng.integers(0, 10**6, 60)})
    job = load_job(_job(tmp_path, table, epsilon=0.05, seed=0))
    planned = plan_job(job)
    resolved, _ = resolve_domain(job, planned, Ledger(job.config.budget.neighbouring),
                                 RandomSource.seeded(0))
    warnings = domain_warnings(job.schema, resolved.schema)
    assert len(warnings) == 1 and warnings[0].startswith("nothing in a, b was above")
    report = {"name": "t", "notice": "n", "data": {"rows_real": 60, "rows_synthetic": 60,
              "rows_holdout": None, "holdout_source": None}, "created_utc": "now",
              "seconds": 0.0, "notes": [], "domain_warnings": warnings}
    markdown = to_markdown([_summary_section(report)])
    assert "**Domain step: nothing in a, b was above" in markdown
