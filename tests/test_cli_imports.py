"""The commands that read no data import no heavy module they do not use (issue 26): each runs
in a fresh interpreter and ``sys.modules`` is read after it (not a timing test)."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NEVER = ("torch", "sdv", "opacus", "scipy.signal")  # no command here trains or reads PLD
ZCDP_PLAN = NEVER + ("dp_accounting", "scipy", "networkx")  # a plan of zCDP events: closed form
CASES = [
    (["plan", "configs/adult.yaml"], ZCDP_PLAN),
    (["plan", "configs/adult-mst.yaml"], ZCDP_PLAN),
    (["plan", "configs/adult-mst.yaml", "--epsilon", "1e4"], ZCDP_PLAN),
    (["schema", "infer", "data/adult/adult_train.csv"], NEVER + ("dp_accounting", "scipy")),
]


def loaded_after(argv: list[str], modules: tuple[str, ...]) -> list[str]:
    """Which of ``modules`` are in sys.modules after ``synthpriv argv`` ran (it must succeed)."""
    code = ("import sys\nfrom synthpriv.cli import main\n"
            f"assert main({argv!r}) == 0\n"
            f"print(sorted(m for m in {modules!r} if m in sys.modules))")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    child = subprocess.run([sys.executable, "-c", code], env=env, cwd=ROOT, capture_output=True,
                           text=True, timeout=300)
    assert child.returncode == 0, child.stderr
    return ast.literal_eval(child.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize(("argv", "unused"), CASES, ids=[" ".join(a) for a, _ in CASES])
def test_the_command_imports_no_module_it_does_not_use(argv: list[str], unused: tuple) -> None:
    assert loaded_after(argv, unused) == []


def test_a_dp_sgd_plan_imports_its_accountant_but_no_torch() -> None:
    """DP-SGD's subsampled Gaussian is priced by the PLD accountant (so the probe does see a
    module that is loaded); training's torch and Opacus wait for the run."""
    heavy = ("torch", "sdv", "opacus", "dp_accounting")
    assert loaded_after(["plan", "configs/adult-hybrid.yaml"], heavy) == ["dp_accounting"]
