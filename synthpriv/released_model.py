"""A fitted model held in memory (loaded from a release, or just fitted by the Python API): draw
rows, conditioned on schema values, and answer marginals with standard errors. Post-processing of
DP outputs only: no budget. Files are written and read in synthpriv.model_store.

Conditioning: a marginals model exactly (evidence in the junction tree, recalibrated by belief
propagation); a generator by rejection, refused below ``MIN_ACCEPTANCE``.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.domain import Domain
from synthpriv.encoding import TableEncoder
from synthpriv.errors import ConfigError
from synthpriv.marginals.compress import Coarsening, is_identity
from synthpriv.marginals.estimation import GraphicalModel, calibrate
from synthpriv.marginals.factor import Factor
from synthpriv.marginals.independent import IndependentModel
from synthpriv.marginals.measurement import Measurement
from synthpriv.sampling import SyntheticRows
from synthpriv.schema import CategoricalColumn, Schema
from synthpriv.stage import PipelineState, PriorGuided, SamplingModel

MIN_ACCEPTANCE = 0.01  # conditioning a generator by rejection: below this rate, refuse


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
    ) -> SyntheticRows:
        """``records`` rows drawn from the model, every one satisfying ``where`` (a marginals
        model is conditioned exactly; a generator by rejection) and the schema's constraints
        (rows breaking one are redrawn, as in the run: synthpriv.constraints), in the release's
        column order: the run's own output type, drawn as it is read (streamed to a release, or
        ``to_frame()``). Post-processing of DP outputs: no budget."""
        if records < 1:
            raise ConfigError(f"--rows must be at least 1, got {records}.")
        fine = self.evidence(where or {})
        coarse = {a: int(self._map(a)[v]) for a, v in fine.items()}
        if coarse and not isinstance(self.model, GraphicalModel | IndependentModel):
            model: SamplingModel = Rejection(self.model, coarse)
        else:
            model = condition(self.model, coarse)
        fixed = {self.encoder.domain.axes([a])[0]: code for a, code in fine.items()}
        return SyntheticRows(model, self.encoder, records, method, rng,
                             coarsening=self.coarsening, fixed=fixed).in_order(self.columns)

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
        model = self._answering(attributes)
        domain = model.domain
        counts = np.asarray(model.project(attributes), dtype=float)
        error = np.sqrt(measured_variance(self.measurements, domain, attributes))
        for axis, attribute in enumerate(attributes):
            counts, error = self._refine_axis(counts, error, axis, attribute)
        labels = [self._labels(a) for a in attributes]
        error = np.where(np.isfinite(error), error, np.nan)
        rows = [(*cell, c, e) for cell, c, e in zip(
            product(*labels), counts.ravel(), error.ravel(), strict=True)]
        return pd.DataFrame(rows, columns=[*attributes, "count", "std_error"])

    def _answering(self, attributes: list[str]) -> GraphicalModel | IndependentModel:
        """The marginals model whose marginal over ``attributes`` the released rows follow: the
        model itself (aim, mst, independent), or a hybrid generator's marginals model where its
        rows follow that one (``GuidedGenerator.follows_prior``). Otherwise a clear error."""
        model = self.model
        if isinstance(model, PriorGuided) and isinstance(model.prior,
                                                         GraphicalModel | IndependentModel):
            if model.follows_prior(attributes):
                return model.prior
            raise ConfigError(
                f"query --marginal {','.join(attributes)}: this release's rows follow its DP "
                "marginals model only on the measured cliques the generator is raked to (and on "
                "the columns it does not complete); these columns are drawn jointly by the "
                "DP-SGD network, whose marginal has no closed form. Query a measured marginal "
                "(e.g. one column), or draw rows with `synthpriv sample` and count them "
                "(post-processing: no further privacy cost)."
            )
        if not isinstance(model, GraphicalModel | IndependentModel):
            raise ConfigError(
                "query: this release's model is a DP-SGD generator without a marginals model "
                "(recipe dpsgd): its marginals have no closed form. Draw rows with `synthpriv "
                "sample` and count them (no further privacy cost), or release with a marginal "
                "or the hybrid recipe (aim, mst, independent, hybrid) to query."
            )
        return model

    def _refine_axis(
        self, counts: np.ndarray, error: np.ndarray, axis: int, attribute: str
    ) -> tuple[np.ndarray, np.ndarray]:
        """Coarse cells of ``attribute`` split into its fine cells ∝ the fitted fine masses."""
        mapping = self._map(attribute)
        if is_identity(mapping):
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


@dataclass(frozen=True)
class Rejection:
    """``model`` given ``evidence`` (attribute → code of the model's domain), drawn by rejection
    (``rejection_sample``): how a generator, which cannot be conditioned exactly, is."""

    model: SamplingModel
    evidence: dict[str, int]

    @property
    def total(self) -> float:
        return self.model.total

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        return rejection_sample(self.model, records, rng, self.evidence)

    sample_rounded = sample  # rows kept by rejection are i.i.d.: there is no rounding to keep


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
