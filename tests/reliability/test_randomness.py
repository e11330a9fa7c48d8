"""Where the randomness of a release comes from, and what a release may contain.

* A static scan of synthpriv/: randomness that can touch released values is drawn only in the
  randomness module (and the DP-SGD generators, only through a generator passed in); evaluation,
  whose outputs are not released, is exempt.
* A default run draws its count noise from the OS CSPRNG, as discrete Gaussian events.
* A seeded run says NOT FOR RELEASE, and the seed appears in no release file.
* The manifest is a fixed allow-list of fields.
"""

from __future__ import annotations

import ast
import json
import os
from dataclasses import fields
from pathlib import Path

import pytest
import yaml

from synthpriv.config import load_job
from synthpriv.encoding import TableEncoder
from synthpriv.privacy import accountant, randomness
from synthpriv.runner import VERSIONED_PACKAGES, run_job
from synthpriv.schema import Schema

from .conftest import GOOD_ROWS, job_config

PACKAGE = Path(__file__).resolve().parents[2] / "synthpriv"

# Where each kind of draw is allowed, by path prefix relative to synthpriv/, and why.
RANDOMNESS_HOME = "privacy/randomness.py"  # RandomSource: the one source of released noise
NOT_RELEASED = "evaluation/"  # evaluation reads the real data; its outputs are not released
DP_SGD = "generators/"  # DP-SGD: draws through a torch.Generator built from RandomSource
ALLOWED = {
    "random module": (RANDOMNESS_HOME,),
    "secrets / os.urandom": (RANDOMNESS_HOME,),
    "numpy.random (global state or a new generator)": (RANDOMNESS_HOME, NOT_RELEASED),
    "torch global RNG": (RANDOMNESS_HOME, NOT_RELEASED),
    "new torch.Generator": (RANDOMNESS_HOME, DP_SGD),
    "torch draw without generator=": (NOT_RELEASED,),
    "pandas sample/shuffle": (NOT_RELEASED,),
}
TORCH_DRAWS = {"rand", "randn", "randint", "randperm", "normal", "bernoulli", "multinomial",
               "poisson", "rand_like", "randn_like", "randint_like"}
TORCH_GLOBAL = {"manual_seed", "seed", "initial_seed", "set_rng_state", "get_rng_state", "random"}
NUMPY_TYPES = {"Generator"}  # np.random.Generator as a type annotation is not a draw


def _dotted(node: ast.AST) -> str:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
    return ".".join(reversed(parts))


def randomness_uses(source: str) -> list[tuple[int, str, str]]:
    """(line, kind, code) of every place in ``source`` that draws or seeds randomness."""
    found = []
    tree = ast.parse(source)
    calls = {id(node.func): node for node in ast.walk(tree) if isinstance(node, ast.Call)}
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in ("random", "secrets"):
                    found.append((line, "random module" if alias.name == "random"
                                  else "secrets / os.urandom", f"import {alias.name}"))
                if alias.name == "torch.random":
                    found.append((line, "torch global RNG", "import torch.random"))
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            names = [a.name for a in node.names]
            if module in ("random", "secrets"):
                kind = "random module" if module == "random" else "secrets / os.urandom"
                found.append((line, kind, f"from {module} import {names}"))
            elif module == "numpy.random" and set(names) - NUMPY_TYPES:
                found.append((line, "numpy.random (global state or a new generator)",
                              f"from numpy.random import {names}"))
            elif module == "os" and "urandom" in names:
                found.append((line, "secrets / os.urandom", "from os import urandom"))
        elif isinstance(node, ast.Attribute):
            dotted = _dotted(node)
            head, _, last = dotted.rpartition(".")
            if head in ("np.random", "numpy.random") and (
                last not in NUMPY_TYPES or id(node) in calls
            ):
                found.append((line, "numpy.random (global state or a new generator)", dotted))
            elif dotted == "os.urandom":
                found.append((line, "secrets / os.urandom", dotted))
            elif head in ("torch", "torch.random", "torch.cuda") and last in TORCH_GLOBAL | {
                "manual_seed_all"
            }:
                found.append((line, "torch global RNG", dotted))
            elif dotted == "torch.Generator" and id(node) in calls:
                found.append((line, "new torch.Generator", dotted))
            elif head == "torch" and last in TORCH_DRAWS and id(node) in calls:
                keywords = {k.arg for k in calls[id(node)].keywords}
                if "generator" not in keywords:
                    found.append((line, "torch draw without generator=", dotted))
            elif last in ("normal_", "uniform_", "bernoulli_", "random_", "exponential_") and (
                id(node) in calls and "generator" not in {k.arg for k in calls[id(node)].keywords}
            ):
                found.append((line, "torch draw without generator=", dotted))
            elif last in ("sample", "shuffle") and id(node) in calls and {
                k.arg for k in calls[id(node)].keywords
            } & {"frac", "random_state"}:
                found.append((line, "pandas sample/shuffle", dotted))
    return found


def test_scanner_finds_every_kind_of_draw() -> None:
    """Positive control: the scan below can fail."""
    snippet = "\n".join([
        "import random", "import secrets", "from numpy.random import default_rng",
        "import numpy as np", "import torch", "import os",
        "x = np.random.rand(3)", "np.random.seed(1)", "g = np.random.Generator(np.random.PCG64())",
        "def f(rng: np.random.Generator) -> None: ...",
        "torch.manual_seed(0)", "t = torch.randn(3)", "u = torch.randn(3, generator=g)",
        "t.normal_()", "b = os.urandom(8)", "gen = torch.Generator()", "df.sample(frac=1.0)",
    ])
    kinds = [kind for _, kind, _ in randomness_uses(snippet)]
    assert kinds.count("random module") == 1
    assert kinds.count("secrets / os.urandom") == 2
    assert kinds.count("numpy.random (global state or a new generator)") == 5
    assert kinds.count("torch global RNG") == 1
    assert kinds.count("torch draw without generator=") == 2
    assert kinds.count("new torch.Generator") == 1
    assert kinds.count("pandas sample/shuffle") == 1


def test_only_the_randomness_module_draws_randomness_that_reaches_a_release() -> None:
    offences = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        for line, kind, code in randomness_uses(path.read_text(encoding="utf-8")):
            if not relative.startswith(ALLOWED[kind]):
                offences.append(f"synthpriv/{relative}:{line}: {kind}: {code}")
    assert not offences, (
        "draw randomness that may reach a release only through RandomSource "
        "(synthpriv/privacy/randomness.py):\n" + "\n".join(offences)
    )


@pytest.fixture
def small_job(tmp_path: Path):
    def make(**overrides):
        data = tmp_path / "data.csv"
        data.write_text(GOOD_ROWS)
        config = tmp_path / "job.yaml"
        config.write_text(yaml.safe_dump(job_config(data, tmp_path / "release", **overrides)))
        return load_job(config)

    return make


def test_default_run_draws_count_noise_from_the_os_csprng(small_job, monkeypatch) -> None:
    drawn = []
    real_urandom = os.urandom

    def counting_urandom(n: int) -> bytes:  # the real CSPRNG, with a count of what it gave
        drawn.append(n)
        return real_urandom(n)

    monkeypatch.setattr(randomness.os, "urandom", counting_urandom)
    result = run_job(small_job(pipeline={"recipe": "mst"}))
    assert result.manifest["randomness"] == {
        "mode": "secure", "source": "operating-system CSPRNG (os.urandom)"
    }
    marginal_events = [e for e in result.ledger.events if e.label.startswith("marginal")]
    assert marginal_events and all(
        isinstance(e, accountant.DiscreteGaussianEvent) for e in marginal_events
    )
    # every noisy count (at least one per 1-way cell) draws at least one 64-bit word, and the
    # selection and sampling generators are seeded with 256 fresh bits each
    one_way_cells = sum(TableEncoder(result_schema(result)).domain.shape)
    assert sum(drawn) >= 8 * one_way_cells + 2 * 32


def result_schema(result) -> Schema:
    return Schema.model_validate(result.manifest["schema"])


def test_seeded_run_says_not_for_release_and_writes_no_seed(small_job, tmp_path) -> None:
    seed = 8_675_309_123
    result = run_job(small_job(seed=seed))
    assert result.manifest["randomness"]["mode"] == "seeded"
    assert "NOT FOR RELEASE" in result.manifest["randomness"]["warning"]
    files = sorted(p for p in result.out_dir.rglob("*") if p.is_file())
    assert [p.name for p in files] == ["manifest.json", "model.json", "model.npz", "synthetic.csv"]
    for path in files:  # the model's arrays too: the seed as text or as a 64-bit integer
        content = path.read_bytes()
        assert str(seed).encode() not in content and hex(seed).encode() not in content
        assert seed.to_bytes(8, "little") not in content and seed.to_bytes(8, "big") not in content
    manifest = json.loads((result.out_dir / "manifest.json").read_text())
    assert "seed" not in manifest["config"]


MANIFEST_KEYS = {
    "synthpriv_manifest", "job", "created_utc", "guarantee", "ledger", "plan", "records",
    "randomness", "config", "schema", "versions", "files",
    "plan_warnings",  # plan-time messages: from public quantities only
    "constraints",  # the model's draws that broke each schema constraint (null without any)
}
NESTED_KEYS = {
    "guarantee": {"epsilon", "delta", "neighbouring", "statement", "epsilon_if_noise_secret",
                  "delta_if_noise_secret"},  # a seeded run's guarantee (there is none)
    "ledger": {"neighbouring", "delta", "delta_thresholds", "epsilon", "bound", "epsilon_rdp",
               "epsilon_pld", "bounds_note", "events", "adaptive"},
    "plan": {"target_epsilon", "planned_epsilon", "delta", "neighbouring", "stages"},
    "records": {"released", "source"},
    "files": {"synthetic.csv", "model.json", "model.npz"},  # the marginal recipes' model
}
EVENT_KEYS = {
    cls.__name__: {f.name for f in fields(cls)}
    for cls in (accountant.DiscreteGaussianEvent, accountant.ExponentialEvent)
}


@pytest.mark.parametrize("recipe", ["independent", "mst"])
def test_manifest_is_a_fixed_allow_list(small_job, recipe: str) -> None:
    job = small_job(seed=2, pipeline={"recipe": recipe})
    run_job(job)
    manifest = json.loads((job.output_dir() / "manifest.json").read_text())
    assert set(manifest) == MANIFEST_KEYS
    for key, allowed in NESTED_KEYS.items():
        assert set(manifest[key]) == allowed, key
    assert set(manifest["files"]["synthetic.csv"]) == {"sha256", "rows"}
    assert set(manifest["files"]["model.json"]) == set(manifest["files"]["model.npz"]) == {"sha256"}
    for event in manifest["ledger"]["events"]:
        assert set(event) in EVENT_KEYS.values()
    for stage in manifest["plan"]["stages"]:
        assert set(stage) == {"stage", "share", "rho", "noise", "fixed_noise"}
    # everything else is public: the config (without seed), the schema, package versions
    assert manifest["config"] == job.config.model_dump(mode="json", by_alias=True,
                                                       exclude={"seed"})
    assert manifest["schema"] == job.schema.model_dump(mode="json")
    assert set(manifest["versions"]) == {"python", *VERSIONED_PACKAGES}
    assert manifest["randomness"]["mode"] == "seeded"
    assert manifest["records"]["source"] == "estimated from the noisy marginals (post-processing)"


def test_a_seeded_run_states_no_guarantee_and_a_secure_run_states_one(small_job) -> None:
    """Privacy review, issue 12, item 6: whoever has the seed can subtract the noise, so a seeded
    run's manifest carries no (ε, δ); the ledger's figure is kept as "if the noise were secret"."""
    seeded = run_job(small_job(seed=2)).manifest
    guarantee = seeded["guarantee"]
    assert guarantee["epsilon"] is None and guarantee["delta"] is None
    assert guarantee["statement"].startswith("NO GUARANTEE")
    assert guarantee["epsilon_if_noise_secret"] == seeded["ledger"]["epsilon"] > 0
    secure = run_job(small_job(), force=True).manifest
    assert secure["guarantee"]["epsilon"] == secure["ledger"]["epsilon"] > 0
    assert "epsilon_if_noise_secret" not in secure["guarantee"]
    assert "differential privacy for every individual row" in secure["guarantee"]["statement"]
