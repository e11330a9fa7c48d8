"""Estimation: fit one graphical model to noisy marginals (after private-pgm, McKenna et al.).

Given measurements ``y_m`` of marginals over cliques ``c_m`` with Gaussian noise ``sigma_m``, find
the distribution ``p`` over the domain, scaled to ``total`` records, that minimises

    L(p) = 1/2 * sum_m || M_{c_m}(total * p) - y_m ||^2 / sigma_m^2

over distributions that factor over the junction tree of the measured cliques. On a junction
tree the set of such clique marginals is exactly the set of locally consistent ones, so this is
a convex problem in the marginals; it is solved by entropic mirror descent on the log-potentials
``theta`` (``p ∝ exp(sum_C theta_C)``), with sum-product belief propagation giving the clique
marginals after every step and an Armijo backtracking line search choosing the step.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from synthpriv.domain import Domain
from synthpriv.errors import SynthprivError
from synthpriv.marginals.clique_sums import MergePlan, merge_plan
from synthpriv.marginals.factor import (
    Factor,
    contract,
    exp_sum,
    logsumexp,
    sum_axes,
)
from synthpriv.marginals.junction_tree import Clique, JunctionTree, model_cells
from synthpriv.marginals.measurement import Measurement, estimate_total
from synthpriv.marginals.rounding import sample_rounded

__all__ = ["GraphicalModel", "ModelTooLargeError", "estimate", "model_cells"]

WINDOW = 20  # early stop: accepted steps over which the loss must still fall by the tolerance
GROW = 1.5  # the step grows by this factor a step before its backtracking test
FLOOR = 0.1  # warm starts: cells floored at this many noise standard deviations


class ModelTooLargeError(SynthprivError, ValueError):
    """The junction tree of the requested marginals has more cells than allowed (a clear error
    the command line prints, instead of running out of memory)."""

    def __init__(self, cells: int, max_cells: int) -> None:
        super().__init__(
            f"the graphical model would have {cells:,} cells over its junction-tree cliques, "
            f"above the limit max_cells={max_cells:,}. Raise the marginals stage option "
            "max_model_cells (pipeline.stages.marginals), choose fewer or smaller marginals, or "
            "use coarser bins for the large attributes."
        )
        self.cells = cells
        self.max_cells = max_cells


@dataclass(frozen=True)
class GraphicalModel:
    """A distribution over ``domain`` that factors over a junction tree, scaled to ``total``.

    ``marginals[i]`` holds the estimated counts of clique ``tree.cliques[i]`` (each sums to
    ``total`` and neighbouring cliques agree on their separators). ``potentials`` are the
    log-linear parameters per measured clique (``log p = sum of them + const``); a later
    ``estimate`` can start from them and from the optimiser's last ``step_size``.
    """

    domain: Domain
    tree: JunctionTree
    marginals: tuple[Factor, ...]
    total: float
    potentials: dict[Clique, Factor]
    step_size: float = 0.0

    @property
    def cliques(self) -> list[Clique]:
        """Maximal cliques of the junction tree, attributes in domain order."""
        return list(self.tree.cliques)

    def project(self, attributes: Sequence[str]) -> np.ndarray:
        """Estimated counts of the marginal over ``attributes`` (sums to ``total``), shaped
        ``domain.project(attributes).shape`` in the order given.

        Inside one clique this sums that clique's marginal. Otherwise it prunes the tree to the
        smallest subtree that covers ``attributes`` and sums out the rest of its factorisation
        ``mu_top * prod_i mu_i / mu_{separator_i}``, which is exact (``contract``: variable
        elimination planned once per shape; the conditionals are computed once per model).
        """
        attributes = tuple(attributes)
        target = self.domain.project(attributes)  # validates names and uniqueness
        if not attributes:
            return np.array(self.total)
        host = self.tree.host(attributes)
        if host is not None:
            return np.array(self.marginals[host].project(attributes).values)
        subtree = self._covering_subtree(set(attributes))
        top = min(subtree, key=self._links[2].__getitem__)
        factors = [self.marginals[top]] + [self._conditionals[i] for i in subtree if i != top]
        result = contract(factors, attributes)
        assert result.domain.shape == target.shape
        return np.array(result.values)

    @cached_property
    def _conditionals(self) -> list[Factor]:
        """``mu_i / mu_{separator_i}`` of every clique (0 where the separator's mass is 0)."""
        return [
            marginal / marginal.project(separator)
            for marginal, separator in zip(self.marginals, self.tree.separator, strict=True)
        ]

    @cached_property
    def _links(self) -> tuple[list[set[int]], dict[tuple[int, int], frozenset[str]], dict[int, int]]:
        """The tree's neighbours of each clique, the attributes of clique i outside neighbour j
        (``(i, j)``), and each clique's place in ``tree.order``: built once per model, not per
        projection (AIM projects thousands of candidates per round on a 150-column tree)."""
        tree = self.tree
        neighbours = [set(tree.children[i]) for i in range(len(tree.cliques))]
        for i, p in enumerate(tree.parent):
            if p >= 0:
                neighbours[i].add(p)
        outside = {(i, j): frozenset(tree.cliques[i]) - frozenset(tree.cliques[j])
                   for i, near in enumerate(neighbours) for j in near}
        return neighbours, outside, {c: k for k, c in enumerate(tree.order)}

    def _covering_subtree(self, wanted: set[str]) -> list[int]:
        """Cliques of the smallest subtree containing every attribute in ``wanted``: repeatedly
        drop leaf cliques whose attributes outside the shared separator are not wanted."""
        links, outside, _ = self._links
        neighbours = {i: set(near) for i, near in enumerate(links)}
        pruned = True
        while pruned and len(neighbours) > 1:
            pruned = False
            for i in list(neighbours):
                near = neighbours[i]
                if len(near) > 1:
                    continue
                own = outside[i, next(iter(near))] if near else frozenset(self.tree.cliques[i])
                if not own & wanted:
                    for j in neighbours.pop(i):
                        neighbours[j].discard(i)
                    pruned = True
                    if len(neighbours) == 1:
                        break
        return sorted(neighbours)

    def sample(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` i.i.d. rows drawn from the model, integer codes shaped
        ``(records, len(domain))`` with columns in domain order.

        Ancestral sampling along the junction tree: the root clique from its marginal, then
        each clique's new attributes from their conditional given its separator (inverse CDF).
        """
        codes = np.zeros((records, len(self.domain)), dtype=np.int64)
        for i in self.tree.order:
            separator = self.tree.separator[i]
            new = tuple(a for a in self.tree.cliques[i] if a not in separator)
            if not new:
                continue
            sep_shape = self.domain.project(separator).shape
            new_shape = self.domain.project(new).shape
            joint = self.marginals[i].transpose(separator + new).values
            joint = np.clip(joint.reshape(int(np.prod(sep_shape)), -1), 0.0, None)
            mass = joint.sum(axis=1, keepdims=True)
            conditional = np.where(mass > 0, joint / np.where(mass > 0, mass, 1.0), 1.0 / joint.shape[1])
            cdf = np.cumsum(conditional, axis=1)
            cdf[:, -1] = 1.0
            if separator:
                given = codes[:, self.domain.axes(separator)]
                row = np.ravel_multi_index(given.T, sep_shape)
            else:
                row = np.zeros(records, dtype=np.int64)
            # rows of `cdf` laid end to end, row s shifted by s: one sorted array to search
            shifted = (cdf + np.arange(cdf.shape[0])[:, None]).ravel()
            position = np.searchsorted(shifted, row + rng.random(records), side="right")
            cell = np.minimum(position - row * cdf.shape[1], cdf.shape[1] - 1)
            codes[:, self.domain.axes(new)] = np.stack(np.unravel_index(cell, new_shape), axis=1)
        return codes


    def sample_rounded(self, records: int, rng: np.random.Generator) -> np.ndarray:
        """``records`` rows whose marginals along the junction tree follow the model's, with
        controlled rounding in place of independent draws (see ``rounding.sample_rounded``)."""
        return sample_rounded(self, records, rng)


def estimate(
    domain: Domain,
    measurements: Sequence[Measurement],
    *,
    total: float | None = None,
    iterations: int = 500,
    max_cells: int = 20_000_000,
    warm_start: GraphicalModel | None = None,
    tolerance: float = 1e-3,
    resolution: float = 0.0,
    method: str = "auto",
) -> GraphicalModel:
    """Fit the graphical model minimising ``sum_m ||M_{c_m}(p) - y_m||^2 / sigma_m^2`` over
    distributions ``p`` that factor over the junction tree of the measured cliques, scaled to
    ``total`` records.

    ``total=None`` estimates it as the inverse-variance weighted mean of the measurements' sums
    (a sum over ``c`` cells has variance ``c * sigma^2``). Attributes that no measurement covers
    are uniform. Raises ``ModelTooLargeError`` before allocating any table if the junction tree
    has more than ``max_cells`` cells. ``warm_start`` starts from a previous model's potentials
    (those whose clique still fits in the new tree) and step size; otherwise the start is
    uniform. ``method="auto"`` runs accelerated mirror descent on the potentials
    (``_mirror_descent``, ``"mirror"``) from a cold start and, from a warm start (AIM's rounds),
    the method of similar triangles (``_similar_triangles``, ``"triangles"``: one calibration a
    step instead of ~2.6, the same loss after as many steps; slower than mirror descent from a
    uniform start, where it was measured behind, benchmarks/README.md "eps10"). Runs at most
    ``iterations`` steps, stopping early once the loss is
    certified within ``tolerance * (measured cells)`` of its minimum (the loss is in units of
    noise variance: pure noise contributes about 1/2 per measured cell). ``resolution`` (records,
    0 = off) coarsens that scale where a measurement's σ is below it (``_Objective.stall_cells``):
    at a huge ε (σ ≪ one record) the stop then asks for a fit within a fraction of a record² per
    cell, not of σ², which the loss-in-σ²-units stop would chase for ever.
    """
    cliques = [_check(domain, m) for m in measurements]
    tree = JunctionTree.build(domain, cliques)
    if tree.cells() > max_cells:
        raise ModelTooLargeError(tree.cells(), max_cells)
    if total is None:
        total = estimate_total(measurements)
    if warm_start is not None and warm_start.domain != domain:
        raise ValueError("warm_start was fitted on a different domain")

    objective = _Objective.build(domain, measurements)
    potentials = {c: Factor.zeros(domain.project(c)) for c in objective.cliques}
    if warm_start is not None:
        for clique, potential in warm_start.potentials.items():
            if tree.host(clique) is not None:
                potentials[clique] = potential + potentials.get(clique, 0.0)
        # A newly measured clique starts at one IPF step: log(target / warm model's marginal),
        # both floored at FLOOR noise standard deviations so empty or negative cells stay finite.
        scale = float(total) / warm_start.total
        for clique, target, w in zip(
            objective.cliques, objective.targets, objective.weights, strict=True
        ):
            if clique in warm_start.potentials:
                continue
            floor = FLOOR / np.sqrt(w)
            mu = warm_start.project(clique) * scale
            ratio = np.maximum(target.values, floor) / np.maximum(mu, floor)
            potentials[clique] = Factor(target.domain, np.log(ratio))
    hosts = {c: tree.host(c) for c in potentials}
    problem = _Problem(tree, objective, float(total), hosts)  # type: ignore[arg-type]
    step = None if warm_start is None else warm_start.step_size
    if method not in ("auto", "mirror", "triangles"):
        raise ValueError(f"method must be 'auto', 'mirror' or 'triangles', got {method!r}")
    if method == "triangles" or (method == "auto" and warm_start is not None):
        marginals, potentials, step = _similar_triangles(
            problem, potentials, iterations, tolerance, step, resolution)
        return GraphicalModel(domain, tree, tuple(marginals), float(total), potentials, step)
    fit, step = _mirror_descent(problem, potentials, iterations, tolerance, step, resolution)
    return GraphicalModel(domain, tree, tuple(fit.marginals), float(total), fit.potentials, step)


def _check(domain: Domain, measurement: Measurement) -> Clique:
    clique = tuple(measurement.clique)
    shape = domain.project(clique).shape
    if np.shape(measurement.noisy_counts) != shape:
        raise ValueError(
            f"measurement over {clique} is shaped {np.shape(measurement.noisy_counts)}, "
            f"expected {shape}"
        )
    sigma = np.asarray(measurement.sigma, dtype=float)
    if not np.all(sigma > 0):
        raise ValueError(f"measurement over {clique} needs sigma > 0, got {measurement.sigma}")
    if sigma.ndim and (len(clique) != 1 or sigma.shape != shape):
        raise ValueError(f"per-cell sigma is supported for 1-way measurements only ({clique})")
    return clique


# -- belief propagation ---------------------------------------------------------------------


def calibrate(tree: JunctionTree, potentials: Sequence[Factor], total: float) -> list[Factor]:
    """Clique marginals (counts summing to ``total``) of ``p ∝ exp(sum_i potentials[i])``.

    Sum-product on the junction tree in log space. Upward pass: each clique sends its parent
    ``logsumexp`` of its belief over the attributes outside their separator (exact, see
    ``logsumexp``). The root's belief then gives ``log Z``. Downward pass: each clique's belief
    is complete once its parent's message arrives, so ``exp(belief - log Z) * total`` is its
    marginal; the message to a child is the marginal summed onto their separator with the
    child's own message divided out (Hugin form). Neighbouring marginals agree on their
    separator up to rounding; cells with probability below ~1e-300 come out as exactly 0.
    """
    belief = [np.array(p.values, dtype=np.float64, order="C") for p in potentials]  # owned copies
    marginals = _calibrate_in_place(tree, belief, total)
    return [Factor(p.domain, b) for p, b in zip(potentials, marginals, strict=True)]


def _calibrate_in_place(
    tree: JunctionTree, belief: list[np.ndarray], total: float, owned: bool = True
) -> list[np.ndarray]:
    """``calibrate`` on C-ordered float64 log-potentials: the list's entries become the clique
    marginals. With ``owned`` the arrays may be overwritten; otherwise none is written to (a
    clique's first update makes a new array in the same pass, instead of a copy of every table
    beforehand). The upward pass keeps each clique's ``exp(belief - shift)``; its marginal is
    then that table times ``exp(shift + log(total / Z) + downward message)``, a table over the
    separator: one exponential per cell instead of two (equal to rounding)."""
    upward: list[np.ndarray] = [np.empty(0)] * len(belief)
    kept: list[tuple[np.ndarray, float] | None] = [None] * len(belief)
    mine = [owned] * len(belief)  # whether belief[i] may be written to
    for i in reversed(tree.order):
        edge = tree.edges[i]
        if edge is not None:
            fast = exp_sum(belief[i], edge.child_axes)
            if fast is None:
                upward[i] = logsumexp(belief[i], edge.child_axes)
            else:
                table, shift, sums = fast
                upward[i] = np.log(sums) + shift
                kept[i] = (table, shift)
            message = upward[i].reshape(edge.parent_shape)
            if mine[edge.parent]:
                belief[edge.parent] += message
            else:
                belief[edge.parent] = belief[edge.parent] + message
                mine[edge.parent] = True
    root = tree.order[0]
    shift = float(belief[root].max())
    belief[root] = np.subtract(belief[root], shift, out=belief[root] if mine[root] else None)
    np.exp(belief[root], out=belief[root])
    normaliser = float(belief[root].sum())
    belief[root] *= total / normaliser
    log_scale = np.log(total) - np.log(normaliser) - shift  # log(total / Z)
    downward: list[np.ndarray] = [np.empty(0)] * len(belief)
    with np.errstate(divide="ignore"):
        for i in tree.order:
            edge = tree.edges[i]
            if edge is not None:  # belief is complete: turn it into the marginal
                message = downward[i].reshape(edge.child_shape)
                if kept[i] is None:
                    if mine[i]:
                        belief[i] += message
                    else:
                        belief[i] = belief[i] + message
                    belief[i] += log_scale
                    np.exp(belief[i], out=belief[i])
                else:
                    table, own_shift = kept[i]  # type: ignore[misc]
                    belief[i] = np.multiply(table, np.exp(message + (own_shift + log_scale)), out=table)
            for child in tree.children[i]:
                separator = sum_axes(belief[i], tree.edges[child].parent_axes)  # type: ignore[union-attr]
                downward[child] = np.log(separator) - log_scale - upward[child]
    return belief


# -- objective and mirror descent -----------------------------------------------------------


@dataclass(frozen=True)
class _Objective:
    """``1/2 sum_c w_c ||mu_c - target_c||^2`` over the distinct measured cliques ``c``.

    Repeated measurements of one clique merge exactly: their inverse-variance weighted mean is
    the target and ``w_c = sum 1/sigma^2`` (the loss changes only by a constant). A 1-way
    measurement may have one sigma per cell (a coarsened one: synthpriv.marginals.compress); its
    ``w_c`` is then an array over the clique's cells.
    """

    cliques: tuple[Clique, ...]
    targets: tuple[Factor, ...]
    weights: tuple[float | np.ndarray, ...]

    @classmethod
    def build(cls, domain: Domain, measurements: Sequence[Measurement]) -> _Objective:
        order = {a: i for i, a in enumerate(domain.attributes)}
        sums: dict[Clique, np.ndarray] = {}
        weights: dict[Clique, float | np.ndarray] = {}
        for m in measurements:
            clique = tuple(sorted(m.clique, key=order.__getitem__))
            noisy = Factor(domain.project(m.clique), m.noisy_counts).transpose(clique)
            w = 1.0 / np.square(m.sigma)  # per cell only for 1-way cliques (``_check``)
            sums[clique] = noisy.values * w + sums.get(clique, 0.0)
            weights[clique] = w + weights.get(clique, 0.0)
        cliques = tuple(sums)
        targets = tuple(Factor(domain.project(c), sums[c] / weights[c]) for c in cliques)
        return cls(cliques, targets, tuple(weights[c] for c in cliques))

    def cells(self) -> int:
        return sum(t.values.size for t in self.targets)

    @cached_property
    def layout(self) -> _Flat:
        return _Flat.of(self)

    @cached_property
    def flat_targets(self) -> np.ndarray:
        return self.layout.join([t.values for t in self.targets])

    @cached_property
    def flat_weights(self) -> np.ndarray:
        """Each cell's weight ``1/sigma^2`` (a clique's scalar repeated over its cells)."""
        return self.layout.join([np.broadcast_to(w, t.values.shape)
                                 for t, w in zip(self.targets, self.weights, strict=True)])

    def stall_cells(self, resolution: float) -> float:
        """The measured cells, each counted as ``max(1, w·resolution²)``: the early stop's scale
        in noise-variance units, coarsened to ``resolution`` records where a cell's noise σ is
        below it (an error of ``resolution`` counts ``w·resolution²`` there). ``w`` is a clique's
        combined weight (k measurements at σ weigh k/σ²), so this equals ``cells()`` when every
        combined σ/√k ≥ ``resolution`` (0 disables it); post-processing: it reads the public σ."""
        if resolution <= 0:
            return float(self.cells())
        scale = resolution * resolution
        return float(sum(np.sum(np.maximum(1.0, np.broadcast_to(w, t.values.shape) * scale))
                         for t, w in zip(self.targets, self.weights, strict=True)))


@dataclass
class _Point:
    """Measured-clique potentials and what the objective says about them: the tree's clique
    marginals, the loss, and its gradient with respect to each measured marginal. ``theta`` are
    the potentials summed onto the tree cliques (what calibration takes); ``tree_gradient`` the
    gradients summed likewise, made once when a step is taken from this point."""

    potentials: dict[Clique, Factor]
    marginals: list[Factor]
    loss: float
    flat_gradient: np.ndarray  # the measured cliques' tables end to end (``_Flat``)
    flat_projections: np.ndarray
    theta: list[np.ndarray]
    layout: _Flat
    tree_gradient: list[np.ndarray] | None = None

    @cached_property
    def gradients(self) -> list[Factor]:
        """The loss's gradient with respect to each measured marginal (views of the flat one)."""
        return list(self.layout.split(self.flat_gradient).values())

    @cached_property
    def projections(self) -> list[Factor]:
        """The model's marginal on each measured clique (views of the flat ones)."""
        return list(self.layout.split(self.flat_projections).values())


@dataclass(frozen=True)
class _Problem:
    """The objective as a function of potentials on cliques that each fit in a tree clique."""

    tree: JunctionTree
    objective: _Objective
    total: float
    hosts: dict[Clique, int]  # tree clique holding each potential's clique

    def evaluate(
        self, potentials: dict[Clique, Factor], theta: list[np.ndarray] | None = None
    ) -> _Point:
        """The point at ``potentials``; ``theta``, if given, is their sum onto the tree cliques
        (``tree_potentials``), already known from a linear update (``step``, ``_extrapolate``)."""
        if theta is None:
            theta = self.tree_potentials(potentials)
        beliefs = _calibrate_in_place(self.tree, list(theta), self.total, owned=False)
        marginals = [Factor(d, b) for d, b in zip(self._clique_domains, beliefs, strict=True)]
        objective = self.objective
        found = self._plan.project(beliefs, objective.cliques)
        projections = objective.layout.join([found[c] for c in objective.cliques])
        residual = projections - objective.flat_targets
        gradient = objective.flat_weights * residual
        loss = 0.5 * float(np.vdot(residual, gradient))
        return _Point(potentials, marginals, loss, gradient, projections, theta, objective.layout)

    def tree_potentials(
        self, potentials: dict[Clique, Factor], out: list[np.ndarray] | None = None
    ) -> list[np.ndarray]:
        """Log-potential of each tree clique (new C-ordered arrays over the cliques' domains, or
        written into ``out``): the sum of the potentials it hosts (0 if none), added pairwise on
        their unions' small tables and broadcast onto the tree clique once (``MergePlan``: equal
        to the plain sum to rounding)."""
        if out is None:
            out = [np.empty(d.shape) for d in self._clique_domains]
        tables = {c: p.values for c, p in potentials.items()}
        return self._plan.sum_onto_tree(tables, out)

    @cached_property
    def _clique_domains(self) -> tuple[Domain, ...]:
        return tuple(self.tree.domain.project(c) for c in self.tree.cliques)

    @cached_property
    def _plan(self) -> MergePlan:
        """How the potentials are summed onto the tree and its marginals projected back."""
        return merge_plan(self.tree, tuple(self.hosts))

    def safe_step(self) -> float:
        """A step that provably passes the Armijo test (see ``_mirror_descent``)."""
        return 1.0 / (2.0 * self.total * sum(float(np.max(w)) for w in self.objective.weights))

    def step(self, point: _Point, step: float) -> tuple[dict[Clique, Factor], list[np.ndarray]]:
        """Mirror step: each measured clique's potential minus ``step`` times its gradient, and
        the same step on the tree cliques' potentials (the sum onto them is linear, so the
        gradients are summed onto the tree once per point, not the potentials once per trial)."""
        potentials = dict(point.potentials)
        for clique, gradient in zip(self.objective.cliques, point.gradients, strict=True):
            old = potentials[clique]
            potentials[clique] = Factor(old.domain, old.values - step * gradient.values)
        if point.tree_gradient is None:
            point.tree_gradient = self.tree_potentials(
                dict(zip(self.objective.cliques, point.gradients, strict=True)))
        theta = []
        for t, g in zip(point.theta, point.tree_gradient, strict=True):
            moved = np.multiply(g, -step)
            moved += t
            theta.append(moved)
        return potentials, theta


def _extrapolate(
    point: _Point, previous: _Point, beta: float
) -> tuple[dict[Clique, Factor], list[np.ndarray]]:
    """Potentials ``x + beta * (x - previous)``, on the measured cliques and on the tree's."""
    potentials = {
        c: Factor(p.domain, p.values + beta * (p.values - previous.potentials[c].values))
        for c, p in point.potentials.items()
    }
    theta = []
    for t, u in zip(point.theta, previous.theta, strict=True):
        moved = np.subtract(t, u)
        moved *= beta
        moved += t
        theta.append(moved)
    return potentials, theta


def _predicted_decrease(start: _Point, end: _Point) -> float:
    """``<grad(start), mu(start) - mu(end)>``: the decrease a linear model of the loss predicts."""
    return float(np.vdot(start.flat_gradient, start.flat_projections - end.flat_projections))


def _mirror_descent(
    problem: _Problem,
    potentials: dict[Clique, Factor],
    iterations: int,
    tolerance: float,
    step: float | None = None,
    resolution: float = 0.0,
) -> tuple[_Point, float]:
    """Accelerated entropic mirror descent with Armijo backtracking and adaptive restart.

    Each step is ``theta <- eta - step * grad(eta)`` in log-potential space, where ``eta``
    extrapolates the last two iterates (Nesterov weights ``(k - 1) / (k + 2)``); whenever the
    loss would rise the momentum restarts, so accepted losses never increase. The loss is
    ``total^2 * sum_c w_c``-smooth in ``p`` w.r.t. the L1 norm, so by Pinsker's inequality any
    step up to ``safe_step`` decreases it by at least half the linear prediction: backtracking
    stops there at the latest. Stops early once ``WINDOW`` accepted steps together lowered the
    loss by less than ``tolerance * (measured cells)``. Returns the last iterate and step.
    """
    x = problem.evaluate(potentials)
    if not problem.objective.cliques:
        return x, 0.0
    floor = problem.safe_step()
    step = max(step or floor, floor)
    stall = tolerance * problem.objective.stall_cells(resolution)
    losses = [x.loss]
    previous, eta, momentum = x, x, 0
    for _ in range(iterations):
        step *= 1.5
        while True:
            trial = problem.evaluate(*problem.step(eta, step))
            if eta.loss - trial.loss >= 0.5 * _predicted_decrease(eta, trial) or step <= floor:
                break
            step *= 0.5
        if trial.loss > x.loss and eta is not x:
            eta, momentum = x, 0
            continue
        previous, x = x, trial
        losses.append(x.loss)
        if len(losses) > WINDOW and losses[-WINDOW - 1] - x.loss <= stall:
            break
        momentum += 1
        beta = (momentum - 1) / (momentum + 2)
        eta = x if beta == 0 else problem.evaluate(*_extrapolate(x, previous, beta))
    return x, step



def _similar_triangles(
    problem: _Problem, potentials: dict[Clique, Factor], iterations: int, tolerance: float,
    step: float | None, resolution: float,
) -> tuple[list[Factor], dict[Clique, Factor], float]:
    """Nesterov's accelerated mirror descent by similar triangles (Nesterov 2015, the method of
    mbi's ``UniversalAcceleratedMethod``), with the entropic mirror map of the junction tree.

    Three points: ``z`` = the distribution of the potentials ``u``, ``x`` = a running mixture of
    the ``z``'s (marginals only: consistent, as the tree's marginal polytope is convex) and
    ``y = (1 - t) x + t z``. Each step moves ``u`` by ``-(step / t)`` times the gradient at ``y``
    and takes ``x <- (1 - t) x + t z``: one calibration per step, because the loss is quadratic
    in the marginals, so ``y``'s projections, loss and gradient are mixtures of known ones
    (post-processing: no data is read). The step is accepted when the loss's quadratic term over
    ``x' - y`` is at most ``||x' - y||^2 / (2 step total)`` with ``||.||`` the largest L1 norm over
    the measured marginals (a lower bound of the joint's L1 norm, so by Pinsker's inequality the
    test passes at ``safe_step``), otherwise the step halves; ``t`` follows Nesterov's rule for a
    varying step. Stops like ``_mirror_descent`` (``WINDOW``, ``tolerance``, ``stall_cells``).
    Returns ``x``'s tree marginals, ``u`` (the warm start of the next fit) and the step."""
    objective = problem.objective
    z = problem.evaluate(potentials)
    if not objective.cliques:
        return z.marginals, z.potentials, 0.0
    floor = problem.safe_step()
    step = max(step or floor, floor)
    stall = tolerance * objective.stall_cells(resolution)
    # the measured cliques' tables laid end to end: one array operation a step, not one a clique
    flat, target, weight = objective.layout, objective.flat_targets, objective.flat_weights
    u = flat.join([z.potentials[c].values for c in objective.cliques])
    z_gradient, z_projections = z.flat_gradient, z.flat_projections
    x_projections = z_projections
    x_marginals = [m.values.copy() for m in z.marginals]
    x_gradient = z_gradient.copy()
    losses = [z.loss]
    previous_t, previous_step = -1.0, step
    first_theta = z.theta  # the caller's start: never written to
    spare = [np.empty_like(table) for table in z.theta]
    for _ in range(iterations):
        trial_step = step * GROW
        while True:
            t = 1.0 if previous_t < 0 else 2.0 / (
                1.0 + np.sqrt(1.0 + 4.0 * previous_step / (previous_t ** 2 * trial_step)))
            k = trial_step / t  # u -= k * gradient at y, a mixture of x's and z's gradients
            moved_u = u - k * ((1 - t) * x_gradient + t * z_gradient)
            moved = {**z.potentials, **flat.split(moved_u)}
            # summed onto the tree in place: no fresh tree-sized arrays (page faults) a trial
            trial = problem.evaluate(moved, problem.tree_potentials(moved, out=spare))
            trial_projections = trial.flat_projections
            change = trial_projections - z_projections
            quadratic = 0.5 * t * t * float(np.sum(weight * change * change))
            norm = t * float(np.add.reduceat(np.abs(change), flat.starts).max())
            if quadratic <= norm * norm / (2.0 * trial_step * problem.total) or trial_step <= floor:
                break
            trial_step *= 0.5
        spare = z.theta if z.theta is not first_theta else [np.empty_like(table) for table in z.theta]
        z, u, z_projections = trial, moved_u, trial_projections
        z_gradient = z.flat_gradient
        x_projections = (1 - t) * x_projections + t * z_projections
        x_loss = 0.5 * float(np.sum(weight * np.square(x_projections - target)))
        previous_step, step = trial_step, trial_step
        _mix([*x_marginals, x_gradient], [*(m.values for m in z.marginals), z_gradient], t)
        previous_t = t
        losses.append(x_loss)
        if len(losses) > WINDOW and losses[-WINDOW - 1] - losses[-1] <= stall:
            break
    domains = [m.domain for m in z.marginals]
    return [Factor(d, m) for d, m in zip(domains, x_marginals, strict=True)], z.potentials, step


@dataclass(frozen=True)
class _Flat:
    """The measured cliques' tables laid end to end in one flat array (``starts``: where each
    begins), so the similar triangles' per-step arithmetic is one array operation, not one per
    clique (Adult at ε = 10: ~60 cliques of a few hundred cells)."""

    cliques: tuple[Clique, ...]
    domains: tuple[Domain, ...]
    starts: np.ndarray

    @classmethod
    def of(cls, objective: _Objective) -> _Flat:
        sizes = [t.values.size for t in objective.targets]
        starts = np.cumsum([0, *sizes[:-1]])
        return cls(objective.cliques, tuple(t.domain for t in objective.targets), starts)

    def join(self, tables: Sequence[np.ndarray]) -> np.ndarray:
        """The tables (in the cliques' order) raveled end to end into a new array."""
        if not tables:
            return np.zeros(0)
        return np.concatenate([np.ravel(t) for t in tables])

    def split(self, values: np.ndarray) -> dict[Clique, Factor]:
        """Each clique's table of ``values``, a view shaped by its domain."""
        ends = [*self.starts[1:], values.size]
        return {c: Factor(d, values[a:b].reshape(d.shape)) for c, d, a, b
                in zip(self.cliques, self.domains, self.starts, ends, strict=True)}


def _mix(mixed: list[np.ndarray], new: list[np.ndarray], t: float) -> None:
    """``mixed <- (1 - t) mixed + t new``, each array in place (no tree-sized temporaries)."""
    for a, b in zip(mixed, new, strict=True):
        if t < 1:
            a *= (1 - t) / t
            a += b
            a *= t
        else:
            a[...] = b
