"""The released model's files: the fitted DP model written beside synthetic.csv (``model_files``),
read back (``load_model``: a ``synthpriv.released_model.ReleasedModel``, which draws rows and
answers marginals at no privacy cost), and a resample written as a new release
(``write_resample``).

What the model files hold is an allow-list (``MODEL_KEYS``, ``ARRAY_PATTERNS``), all of it DP
output or public structure: the noisy measurements (clique, noisy counts, noise σ), the model
fitted from them alone (clique marginals of the junction tree, or the independent model's 1-way
probabilities, and its total: a DP estimate or the public count), and the adaptive domain (fine →
coarse maps and fitted fine masses, chosen from noisy counts). Never the seed, never an exact
count or anything else computed from the raw table outside a mechanism. Formats: JSON and a
``.npz`` of numeric arrays, read with ``allow_pickle=False``.

Models saved: the marginal recipes' (independent, mst, aim) and the generator's (dpsgd, hybrid):
its network's DP-SGD weights as arrays (rebuilt into the same architecture, no pickle), its
guidance targets (marginals of the DP model) and, for hybrid, the marginals model it completes.
"""

from __future__ import annotations

import io
import json
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthpriv.domain import Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ReleaseError
from synthpriv.marginals.compress import Coarsening
from synthpriv.marginals.estimation import GraphicalModel
from synthpriv.marginals.factor import Factor
from synthpriv.marginals.independent import IndependentModel
from synthpriv.marginals.junction_tree import JunctionTree
from synthpriv.marginals.measurement import Measurement
from synthpriv.privacy.randomness import RandomSource
from synthpriv.release import (
    MANIFEST,
    SYNTHETIC,
    check_target,
    release_lock,
    sha256_of,
    write_release,
)
from synthpriv.released_model import ReleasedModel
from synthpriv.schema import Schema, parse_schema
from synthpriv.stage import PipelineState, SamplingModel

if TYPE_CHECKING:
    from synthpriv.generators.model import GuidedGenerator

MODEL_JSON = "model.json"
MODEL_ARRAYS = "model.npz"
MODEL_FORMAT = 1
MODEL_KEYS = frozenset({
    "synthpriv_model", "kind", "domain", "fine_domain", "total", "cliques", "measurements",
    "coarsened", "generator",
})
GENERATOR_KEYS = frozenset({
    "sizes", "order", "given", "hidden", "parameters", "targets", "candidate_factor",
    "raking_iterations", "expected_batch", "prior_fraction", "prior",
})
ARRAY_PATTERNS = (
    r"marginal_\d+", r"measurement_\d+_counts", r"measurement_\d+_sigma",
    r"probabilities_\d+", r"coarsening_\d+_map", r"coarsening_\d+_mass", r"coarsening_\d+_atom",
    r"network_\d+",
    r"target_\d+",
)


def model_files(state: PipelineState, schema: Schema) -> dict[str, bytes]:
    """The model files of a run (name → bytes). Everything written is listed in
    ``MODEL_KEYS``/``ARRAY_PATTERNS`` (see the module doc)."""
    model = state.model
    generator = _is_generator(model)
    if not (generator or isinstance(model, GraphicalModel | IndependentModel)):
        return {}
    arrays: dict[str, np.ndarray] = {}
    document: dict = {
        "synthpriv_model": MODEL_FORMAT, "domain": model.domain.to_dict(),
        "fine_domain": TableEncoder(schema).domain.to_dict(), "total": float(model.total),
        "measurements": [], "coarsened": [], "cliques": [],
    }
    if generator:
        document["kind"] = "generator"
        document["generator"] = _generator_parts(model, arrays)
        if model.prior is not None:
            document["generator"]["prior"] = _marginal_parts(model.prior, document, arrays)
    else:
        document["kind"] = _marginal_parts(model, document, arrays)
    for i, measurement in enumerate(state.measurements):
        document["measurements"].append(list(measurement.clique))
        arrays[f"measurement_{i}_counts"] = np.asarray(measurement.noisy_counts, dtype=float)
        arrays[f"measurement_{i}_sigma"] = np.asarray(measurement.sigma, dtype=float)
    coarsening = state.coarsening
    if coarsening is not None:
        for i, attribute in enumerate(coarsening.fine.attributes):
            document["coarsened"].append(attribute)
            arrays[f"coarsening_{i}_map"] = np.asarray(coarsening.maps[attribute], dtype=np.int64)
            arrays[f"coarsening_{i}_mass"] = np.asarray(coarsening.masses[attribute], dtype=float)
            if attribute in coarsening.atoms:  # point masses decoded at one value (DP output)
                arrays[f"coarsening_{i}_atom"] = np.asarray(coarsening.atoms[attribute], dtype=bool)
    buffer = io.BytesIO()
    np.savez(buffer, **arrays)
    return {MODEL_JSON: (json.dumps(document, indent=1) + "\n").encode(),
            MODEL_ARRAYS: buffer.getvalue()}


def _is_generator(model: object) -> bool:
    """Whether ``model`` is the generator stage's (checked by name: torch stays unimported)."""
    return type(model).__name__ == "GuidedGenerator"


def _marginal_parts(
    model: GraphicalModel | IndependentModel, document: dict, arrays: dict[str, np.ndarray]
) -> str:
    """A marginals model's cliques into ``document`` and numbers into ``arrays``; its kind."""
    if isinstance(model, GraphicalModel):
        document["cliques"] = [list(c) for c in model.tree.cliques]
        for i, marginal in enumerate(model.marginals):
            arrays[f"marginal_{i}"] = np.asarray(marginal.values, dtype=float)
        return "graphical"
    document["cliques"] = [[a] for a in model.domain.attributes]
    for i, attribute in enumerate(model.domain.attributes):
        arrays[f"probabilities_{i}"] = np.asarray(model.probabilities[attribute], dtype=float)
    return "independent"


def _generator_parts(model: GuidedGenerator, arrays: dict[str, np.ndarray]) -> dict:
    """The generator's settings (public config or DP estimates) and its DP-SGD weights."""
    network = model.network
    weights = network.state_dict()
    for i, tensor in enumerate(weights.values()):
        arrays[f"network_{i}"] = tensor.detach().cpu().numpy()
    for i, target in enumerate(model.targets):
        arrays[f"target_{i}"] = np.asarray(target.probabilities, dtype=float)
    return {
        "sizes": network.sizes, "order": network.order, "given": network.given,
        "hidden": int(network.heads[0].hidden.out_features), "parameters": list(weights),
        "targets": [list(t.clique) for t in model.targets],
        "candidate_factor": model.candidate_factor, "raking_iterations": model.raking_iterations,
        "expected_batch": float(model.expected_batch), "prior_fraction": model.prior_fraction,
        "prior": None,
    }


def load_model(folder: str | Path) -> ReleasedModel:
    """The model of the release at ``folder``, its files checked against the manifest's hashes."""
    folder = Path(folder)
    manifest_path = folder / MANIFEST
    if not manifest_path.is_file():
        raise ReleaseError(f"{folder} is not a synthpriv release: it has no {MANIFEST}.")
    manifest = json.loads(manifest_path.read_text())
    files = manifest.get("files", {})
    if MODEL_JSON not in files:
        raise ReleaseError(
            f"{folder}: this release holds no model (recipe "
            f"'{manifest.get('config', {}).get('pipeline', {}).get('recipe')}'): it was written "
            "by a synthpriv that did not save models, or by a recipe whose model is not saved. "
            "Run the job again to get a release with its model.")
    for name in (MODEL_JSON, MODEL_ARRAYS):
        if sha256_of(folder / name) != files[name]["sha256"]:
            raise ReleaseError(f"{folder / name}: its sha256 does not match the manifest's: the "
                               "file was changed after the release. Use an intact release.")
    document = json.loads((folder / MODEL_JSON).read_text())
    with np.load(folder / MODEL_ARRAYS, allow_pickle=False) as stored:
        arrays = {name: stored[name] for name in stored.files}
    schema = parse_schema(manifest["schema"], f"{folder / MANIFEST}: schema")
    domain = Domain.from_sizes(document["domain"])
    fine = Domain.from_sizes(document["fine_domain"])
    measurements = [
        Measurement(tuple(clique), arrays[f"measurement_{i}_counts"],
                    _scalar(arrays[f"measurement_{i}_sigma"]))
        for i, clique in enumerate(document["measurements"])
    ]
    coarsening = None
    if document["coarsened"]:
        maps = {a: arrays[f"coarsening_{i}_map"] for i, a in enumerate(document["coarsened"])}
        masses = {a: arrays[f"coarsening_{i}_mass"] for i, a in enumerate(document["coarsened"])}
        atoms = {a: arrays[f"coarsening_{i}_atom"].astype(bool)
                 for i, a in enumerate(document["coarsened"]) if f"coarsening_{i}_atom" in arrays}
        coarsening = Coarsening(fine, domain, maps, masses, atoms=atoms)
    if document["kind"] == "generator":
        model: SamplingModel = _generator(domain, document, arrays)
    else:
        model = _marginal_model(document["kind"], domain, document, arrays)
    columns = pd.read_csv(folder / SYNTHETIC, nrows=0).columns.tolist()
    return ReleasedModel(folder, manifest, schema, model, measurements, coarsening, columns)


def _scalar(sigma: np.ndarray) -> float | np.ndarray:
    return float(sigma) if sigma.ndim == 0 else sigma


def _marginal_model(
    kind: str, domain: Domain, document: dict, arrays: dict[str, np.ndarray]
) -> GraphicalModel | IndependentModel:
    if kind == "independent":
        return IndependentModel(
            domain, {a: arrays[f"probabilities_{i}"] for i, a in enumerate(domain.attributes)},
            float(document["total"]))
    return _graphical(domain, document, arrays)


def _generator(domain: Domain, document: dict, arrays: dict[str, np.ndarray]) -> GuidedGenerator:
    """The generator rebuilt: its network from the saved weights (numbers only, no pickle), its
    guidance targets and, for the hybrid recipe, its marginals model."""
    import torch

    from synthpriv.generators.autoregressive import AutoregressiveModel
    from synthpriv.generators.guidance import Target
    from synthpriv.generators.model import GuidedGenerator

    saved = document["generator"]
    network = AutoregressiveModel(saved["sizes"], saved["order"], saved["hidden"], saved["given"])
    network.load_state_dict({name: torch.from_numpy(arrays[f"network_{i}"])
                             for i, name in enumerate(saved["parameters"])})
    network.eval()
    targets = tuple(Target(tuple(c), arrays[f"target_{i}"])
                    for i, c in enumerate(saved["targets"]))
    prior = None if saved["prior"] is None else _marginal_model(saved["prior"], domain, document,
                                                                 arrays)
    return GuidedGenerator(network, domain, targets, float(document["total"]),
                           saved["candidate_factor"], saved["raking_iterations"],
                           saved["expected_batch"], prior, saved["prior_fraction"])


def _graphical(domain: Domain, document: dict, arrays: dict[str, np.ndarray]) -> GraphicalModel:
    """The junction tree rebuilt from its cliques, each with its saved marginal."""
    saved = {frozenset(c): (tuple(c), arrays[f"marginal_{i}"])
             for i, c in enumerate(document["cliques"])}
    tree = JunctionTree.build(domain, [tuple(c) for c in document["cliques"]])
    marginals = []
    for clique in tree.cliques:
        if frozenset(clique) not in saved:
            raise ReleaseError(f"model.json: the junction tree has clique {clique}, which the "
                               "saved model does not: the file is damaged.")
        order, values = saved[frozenset(clique)]
        marginals.append(Factor(domain.project(order), values).transpose(clique))
    return GraphicalModel(domain, tree, tuple(marginals), float(document["total"]), {}, 0.0)


def write_resample(
    folder: str | Path, out: Path, records: int, where: dict[str, str] | None = None, *,
    force: bool = False, source: RandomSource | None = None,
) -> tuple[Path, dict]:
    """A new atomic release at ``out``: ``records`` rows drawn from the model of the release at
    ``folder`` (conditioned on ``where``), its model files, and a manifest carrying the same
    guarantee, ledger and plan, marked as a resample of the original. Post-processing of the
    original's DP outputs: no further privacy cost. Bad conditions fail before anything is
    written. Returns the folder and its manifest."""
    from synthpriv.runner import package_versions

    released = load_model(folder)
    where = dict(where or {})
    released.evidence(where)  # a bad condition: a clear error, nothing written
    out = Path(out).resolve()
    check_target(out, force)
    source = RandomSource.secure() if source is None else source
    rows = released.sample(records, source.numpy_generator(), where)  # drawn as it is written
    original = released.manifest
    manifest = {
        **{k: v for k, v in original.items() if k != "files"},
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "records": {"released": len(rows), "source": "requested (resample)"},
        # this draw's own tally (filled in as the rows are written), not the original's
        "constraints": rows.enforcement,
        "versions": package_versions(),
        "resample": {
            "of": {"folder": str(Path(folder).resolve()), "job": original.get("job"),
                   "created_utc": original.get("created_utc"),
                   "manifest_sha256": sha256_of(Path(folder) / MANIFEST)},
            "where": where,
            "statement": "rows drawn from the released model: post-processing of the original "
                         "release's DP outputs, at no further privacy cost; the guarantee and "
                         "ledger are the original's",
            "randomness": "operating-system CSPRNG (os.urandom); affects only which rows are "
                          "drawn, not the DP noise",
        },
    }
    extra = {name: (Path(folder) / name).read_bytes() for name in (MODEL_JSON, MODEL_ARRAYS)}
    with release_lock(out):
        write_release(out, rows, manifest, force, extra=extra)
    return out, manifest


def check_model_names(document: dict, array_names: list[str]) -> list[str]:
    """What in a model file is outside the allow-list (empty when all is allowed)."""
    outside = [f"model.json key '{k}'" for k in document if k not in MODEL_KEYS]
    outside += [f"model.json key 'generator.{k}'" for k in document.get("generator") or {}
                if k not in GENERATOR_KEYS]
    outside += [f"model.npz array '{n}'" for n in array_names
                if not any(re.fullmatch(p, n) for p in ARRAY_PATTERNS)]
    return outside
