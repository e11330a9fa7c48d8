"""The privacy mutation suite (benchmarks/privacy_mutations.py) stays armed: every mutation's old
text is in the source exactly once, so a refactor that moves the code fails here, in seconds,
instead of silently disabling the mutation (update its old/new text, then re-run the suite)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _suite():
    spec = importlib.util.spec_from_file_location(
        "privacy_mutations", ROOT / "benchmarks" / "privacy_mutations.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


SUITE = _suite()


@pytest.mark.parametrize("mutation", SUITE.MUTATIONS, ids=lambda m: m.name)
def test_every_mutation_applies_once_and_names_existing_tests(mutation) -> None:
    text = (ROOT / mutation.path).read_text()
    assert text.count(mutation.old) == 1, (
        f"mutation {mutation.name}: its old text is in {mutation.path} {text.count(mutation.old)} "
        f"times, expected once: update it in benchmarks/privacy_mutations.py")
    assert mutation.new != mutation.old
    assert all((ROOT / t).exists() for t in mutation.tests)


def test_a_missing_text_is_reported_not_applied(tmp_path: Path) -> None:
    mutation = SUITE.MUTATIONS[0]
    (tmp_path / mutation.path).parent.mkdir(parents=True)
    (tmp_path / mutation.path).write_text("refactored away\n")
    with pytest.raises(ValueError, match="mutation text not found"):
        SUITE.apply(mutation, tmp_path)
    assert (tmp_path / mutation.path).read_text() == "refactored away\n"
    assert len({m.name for m in SUITE.MUTATIONS}) == len(SUITE.MUTATIONS) >= 16
