"""The released model: the fitted DP model written beside synthetic.csv, and read back to draw
more rows (optionally conditioned on schema values) or to answer marginals, at no privacy cost.

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
A generator is conditioned by rejection (refused below ``MIN_ACCEPTANCE``); marginal queries
need a marginals model.
"""

from __future__ import annotations

import io
import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from itertools import product
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from synthpriv.domain import Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError, ReleaseError
from synthpriv.marginals.compress import Coarsening
from synthpriv.marginals.estimation import GraphicalModel, calibrate
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
from synthpriv.schema import CategoricalColumn, Schema, parse_schema
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
    r"probabilities_\d+", r"coarsening_\d+_map", r"coarsening_\d+_mass", r"network_\d+",
    r"target_\d+",
)
MIN_ACCEPTANCE = 0.01  # conditioning a generator by rejection: below this rate, refuse


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


@dataclass
class ReleasedModel:
    """A release's model, read back: draws rows and answers marginals (post-processing only)."""

    folder: Path | None
    manifest: dict
    schema: Schema
    model: SamplingModel  # the marginal recipes' model answers ``query`` and ``where`` too
    measurements: list[Measurement]
    coarsening: Coarsening | None
    columns: list[str]  # the released table's column order

    @classmethod
    def from_state(cls, state: PipelineState, schema: Schema, columns: list[str]) -> ReleasedModel:
        """The model of a run held in memory (the Python API, before anything is written)."""
        return cls(None, {}, schema, state.model, list(state.measurements), state.coarsening,
                   columns)

    @property
    def encoder(self) -> TableEncoder:
        return TableEncoder(self.schema)

    def evidence(self, where: dict[str, str]) -> dict[str, int]:
        """Fine codes of the condition ``where`` (column → value), with errors naming the
        column or value and the choices."""
        codes = {}
        for name, value in where.items():
            if name not in self.schema.names:
                raise ConfigError(f"--where {name}={value}: '{name}' is not a column of the "
                                  f"release's schema. Columns: {self.schema.names}.")
            column = self.schema.column(name)
            if not isinstance(column, CategoricalColumn) or column.derived_from is not None:
                choices = [c.name for c in self.schema.modelled if isinstance(c, CategoricalColumn)]
                raise ConfigError(f"--where {name}={value}: conditioning is on a categorical "
                                  f"column the model draws; '{name}' is not one. Choose one of "
                                  f"{choices}.")
            if value not in column.categories:
                raise ConfigError(f"--where {name}={value}: '{value}' is not a category of "
                                  f"'{name}'. Its categories: {column.categories}.")
            codes[name] = column.categories.index(value)
        return codes

    def sample(
        self, records: int, rng: np.random.Generator, where: dict[str, str] | None = None,
        method: str = "rounded",
    ) -> pd.DataFrame:
        """``records`` rows drawn from the model, every one satisfying ``where`` (conditioned in
        the model, not by rejection). Post-processing of DP outputs: no budget."""
        if records < 1:
            raise ConfigError(f"--rows must be at least 1, got {records}.")
        fine = self.evidence(where or {})
        coarse = {a: int(self._map(a)[v]) for a, v in fine.items()}
        if coarse and not isinstance(self.model, GraphicalModel | IndependentModel):
            codes = rejection_sample(self.model, records, rng, coarse)
        else:
            model = condition(self.model, coarse)
            codes = model.sample_rounded(records, rng) if method == "rounded" else model.sample(
                records, rng)
        if self.coarsening is not None:
            codes = self.coarsening.refine(codes, rng)
        for attribute, code in fine.items():  # the fine value within its (conditioned) cell
            codes[:, self.encoder.domain.axes([attribute])[0]] = code
        return self.encoder.decode(codes, rng)[self.columns]

    def _map(self, attribute: str) -> np.ndarray:
        size = self.encoder.domain[attribute]
        return np.arange(size) if self.coarsening is None else self.coarsening.maps[attribute]

    def query(self, attributes: list[str]) -> pd.DataFrame:
        """The marginal over ``attributes`` from the model: one row per cell (the columns' values
        or bins), the model's ``count`` and its ``std_error`` from the measurements' noise.

        Standard error: each measurement whose clique covers the marginal (on the model's
        domain) gives a direct unbiased estimate, its noisy counts summed over the other
        attributes, of variance (cells summed) × σ²; the inverse-variance combination of them has
        variance 1 / Σ 1/v_m. That is reported. The model's fitted answer is a least-squares
        combination of all measurements, so its noise error is at most about this; model bias
        (dependences not measured) is not included. No measurement covers the marginal: NaN.
        Bins an adaptive domain merged are split in proportion to the fitted fine masses, the
        count and its standard error alike."""
        unknown = [a for a in attributes if a not in self.encoder.domain.attributes]
        if unknown or len(set(attributes)) != len(attributes) or not attributes:
            raise ConfigError(
                f"--marginal {','.join(attributes)}: name distinct modelled columns of the "
                f"release ({', '.join(self.encoder.domain.attributes)}); unknown: {unknown}."
            )
        if not isinstance(self.model, GraphicalModel | IndependentModel):
            raise ConfigError("query: marginals are answered from a marginals model (recipes "
                              "aim, mst, independent); this model is a generator's.")
        domain = self.model.domain
        counts = np.asarray(self.model.project(attributes), dtype=float)
        error = np.sqrt(measured_variance(self.measurements, domain, attributes))
        for axis, attribute in enumerate(attributes):
            counts, error = self._refine_axis(counts, error, axis, attribute)
        labels = [self._labels(a) for a in attributes]
        error = np.where(np.isfinite(error), error, np.nan)
        rows = [(*cell, c, e) for cell, c, e in zip(
            product(*labels), counts.ravel(), error.ravel(), strict=True)]
        return pd.DataFrame(rows, columns=[*attributes, "count", "std_error"])

    def _refine_axis(
        self, counts: np.ndarray, error: np.ndarray, axis: int, attribute: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """Coarse cells of ``attribute`` split into its fine cells ∝ the fitted fine masses."""
        mapping = self._map(attribute)
        if len(mapping) == counts.shape[axis]:
            return counts, error
        mass = self.coarsening.masses[attribute].astype(float)
        group = np.bincount(mapping, weights=mass, minlength=counts.shape[axis])
        sizes = np.bincount(mapping, minlength=counts.shape[axis])
        share = np.where(group[mapping] > 0, mass / np.where(group[mapping] > 0, group[mapping], 1),
                         1.0 / sizes[mapping])
        shape = [1] * counts.ndim
        shape[axis] = len(mapping)
        share = share.reshape(shape)
        with np.errstate(invalid="ignore"):  # no measurement (inf) × an empty fine cell (0)
            return (np.take(counts, mapping, axis=axis) * share,
                    np.take(error, mapping, axis=axis) * share)

    def _labels(self, attribute: str) -> list[str | None]:
        column = self.schema.column(attribute)
        if isinstance(column, CategoricalColumn):
            values: list[str | None] = list(column.categories)
        else:
            edges = column.bin_edges()
            values = [f"[{lo:g}, {hi:g}{']' if i == len(edges) - 2 else ')'}"
                      for i, (lo, hi) in enumerate(zip(edges[:-1], edges[1:], strict=True))]
        return values + [None] * int(column.missing)


def measured_variance(
    measurements: list[Measurement], domain: Domain, attributes: list[str]
) -> np.ndarray:
    """Per-cell noise variance of the inverse-variance combination of the measurements that
    cover ``attributes`` (shaped like that marginal); inf where none does."""
    shape = domain.project(attributes).shape
    precision = np.zeros(shape)
    for measurement in measurements:
        clique = tuple(measurement.clique)
        if not set(attributes) <= set(clique):
            continue
        sigma = np.asarray(measurement.sigma, dtype=float)
        if sigma.ndim == 0:
            summed = domain.size(clique) // domain.size(attributes)
            precision += 1.0 / (summed * float(sigma) ** 2)
        elif tuple(attributes) == clique:  # per-cell σ (a 1-way measurement of merged cells)
            precision += 1.0 / np.square(sigma)
    with np.errstate(divide="ignore"):
        return np.where(precision > 0, 1.0 / np.where(precision > 0, precision, 1.0), np.inf)


def rejection_sample(
    model: SamplingModel, records: int, rng: np.random.Generator, evidence: dict[str, int]
) -> np.ndarray:
    """``records`` i.i.d. rows of ``model`` that satisfy ``evidence`` (attribute → code of the
    model's domain), by rejection: exact in distribution. Refuses, with the rate measured, once
    10,000 draws show fewer than ``MIN_ACCEPTANCE`` of rows accepted."""
    axes = model.domain.axes(evidence)
    codes = np.array(list(evidence.values()))
    kept: list[np.ndarray] = []
    accepted = drawn = 0
    while accepted < records:
        rate = max(accepted / drawn if drawn else 1.0, MIN_ACCEPTANCE)
        batch = int(min(max(1000, 1.2 * (records - accepted) / rate), 1_000_000))
        rows = model.sample(batch, rng)
        match = rows[(rows[:, axes] == codes).all(axis=1)]
        kept.append(match)
        accepted, drawn = accepted + len(match), drawn + batch
        if drawn >= 10_000 and accepted / drawn < MIN_ACCEPTANCE:
            raise ConfigError(
                f"--where {evidence}: the generator draws such rows at a rate of "
                f"{accepted / drawn:.2%} (of {drawn:,} drawn), below {MIN_ACCEPTANCE:.0%}: too "
                "rare to draw by rejection. Condition on a more common value, or use a marginal "
                "recipe (aim, mst), whose model conditions exactly.")
    return np.concatenate(kept)[:records]


def condition(
    model: GraphicalModel | IndependentModel, evidence: dict[str, int]
) -> GraphicalModel | IndependentModel:
    """The model conditioned on ``evidence`` (attribute → code of the model's domain): p(x | e).

    Graphical model: its distribution is Π μ_C / Π μ_S over the junction tree; the log of each
    clique's term, with the indicator of the evidence added to a clique holding it, is
    calibrated again by belief propagation (exact). Raises ConfigError when the model gives the
    evidence no mass."""
    if not evidence:
        return model
    if not isinstance(model, GraphicalModel | IndependentModel):
        raise ConfigError("--where: conditioning needs a marginals model (recipes aim, mst, "
                          "independent); this model is a generator's.")
    if isinstance(model, IndependentModel):
        probabilities = dict(model.probabilities)
        for attribute, code in evidence.items():
            if probabilities[attribute][code] <= 0:
                raise _impossible(attribute)
            probabilities[attribute] = np.eye(model.domain[attribute])[code]
        return IndependentModel(model.domain, probabilities, model.total)
    tree, domain = model.tree, model.domain
    with np.errstate(divide="ignore", invalid="ignore"):
        potentials = []
        for i, marginal in enumerate(model.marginals):
            values = np.log(np.clip(marginal.values, 0.0, None))
            if tree.separator[i]:
                separator = marginal.project(tree.separator[i])
                values = values - np.log(np.clip(separator.expand(marginal.domain).values, 0.0,
                                                 None))
            potentials.append(np.nan_to_num(values, nan=-np.inf, posinf=-np.inf))
        for attribute, code in evidence.items():
            host = tree.host((attribute,))
            axis = model.marginals[host].domain.axes([attribute])[0]
            mask = np.full(domain[attribute], -np.inf)
            mask[code] = 0.0
            shape = [1] * potentials[host].ndim
            shape[axis] = -1
            potentials[host] = potentials[host] + mask.reshape(shape)
        if not np.isfinite(max(float(np.max(p)) for p in potentials)):
            raise _impossible(", ".join(evidence))
        marginals = calibrate(tree, [Factor(m.domain, p) for m, p in
                                     zip(model.marginals, potentials, strict=True)], model.total)
    marginals = [Factor(m.domain, np.nan_to_num(m.values, nan=0.0)) for m in marginals]
    if not all(np.isfinite(m.values).all() and m.values.sum() > 0 for m in marginals):
        raise _impossible(", ".join(evidence))
    return GraphicalModel(domain, tree, tuple(marginals), model.total, {}, 0.0)


def _impossible(what: str) -> ConfigError:
    return ConfigError(f"--where: the model gives the condition on {what} no probability, so no "
                       "row can satisfy it. Choose another value.")


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
        coarsening = Coarsening(fine, domain, maps, masses)
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
    rows = released.sample(records, source.numpy_generator(), where)
    original = released.manifest
    manifest = {
        **{k: v for k, v in original.items() if k != "files"},
        "created_utc": datetime.now(UTC).isoformat(timespec="seconds"),
        "records": {"released": len(rows), "source": "requested (resample)"},
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
