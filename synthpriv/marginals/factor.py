"""Factors: tables over a sub-domain, with the algebra that message passing needs.

A ``Factor`` holds one number per cell of a (sub-)domain: counts, probabilities or log-potentials.
Binary operations broadcast over the union of the two domains, so ``f + g`` of factors over
``(a, b)`` and ``(b, c)`` is a factor over ``(a, b, c)``. Summing out or ``logsumexp``-ing out
attributes keeps the remaining attributes in their order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from math import prod

import numpy as np

from synthpriv.domain import Domain


class Factor:
    """A table ``values`` shaped ``domain.shape``: one number per cell of ``domain``."""

    __slots__ = ("domain", "values")

    def __init__(self, domain: Domain, values: np.ndarray | float) -> None:
        values = np.asarray(values, dtype=np.float64)
        if values.shape != domain.shape:
            raise ValueError(f"values shaped {values.shape} do not fit domain {domain.shape}")
        self.domain = domain
        self.values = values

    @classmethod
    def zeros(cls, domain: Domain) -> Factor:
        return cls(domain, np.zeros(domain.shape))

    @property
    def attributes(self) -> tuple[str, ...]:
        return self.domain.attributes

    def __repr__(self) -> str:
        return f"Factor({self.domain.to_dict()})"

    # -- shape ------------------------------------------------------------------------------

    def transpose(self, attributes: Sequence[str]) -> Factor:
        """The same table with its axes in the order ``attributes`` (a permutation of ours)."""
        attributes = tuple(attributes)
        if attributes == self.attributes:
            return self
        domain, axes = _transposition(self.domain, attributes)
        return Factor(domain, self.values.transpose(axes))

    def expand(self, domain: Domain) -> Factor:
        """This factor over the larger ``domain``, constant along the attributes it lacks.

        The values are a read-only broadcast view: no memory is allocated.
        """
        return Factor(domain, np.broadcast_to(self._aligned(domain), domain.shape))

    def _aligned(self, domain: Domain) -> np.ndarray:
        """Our values as a view that broadcasts against a table over ``domain`` (a superset)."""
        if domain is self.domain or domain == self.domain:
            return self.values
        axes, shape = _alignment(self.domain, domain)
        values = self.values if axes is None else self.values.transpose(axes)
        return values.reshape(shape)

    # -- reductions -------------------------------------------------------------------------

    def _reduce(self, attributes: Iterable[str], reduce: Callable[..., np.ndarray]) -> Factor:
        attributes = tuple(attributes)
        if not attributes:
            return self
        kept, axes = _reduction(self.domain, attributes)
        return Factor(kept, reduce(self.values, axes))

    def sum(self, attributes: Iterable[str] | None = None) -> Factor:
        """Sum out ``attributes`` (all of them if None)."""
        attributes = self.attributes if attributes is None else attributes
        return self._reduce(attributes, sum_axes)

    def max(self, attributes: Iterable[str] | None = None) -> Factor:
        """Maximise out ``attributes`` (all of them if None)."""
        attributes = self.attributes if attributes is None else attributes
        return self._reduce(attributes, lambda v, axes: v.max(axis=axes))

    def logsumexp(self, attributes: Iterable[str] | None = None) -> Factor:
        """``log(sum(exp(values)))`` over ``attributes`` (all if None), exact to rounding:
        each output cell is shifted by its own maximum before exponentiating."""
        attributes = self.attributes if attributes is None else attributes
        return self._reduce(attributes, logsumexp)

    def project(self, attributes: Sequence[str]) -> Factor:
        """Sum out every attribute not in ``attributes``; axes in the order given."""
        kept = set(attributes)
        return self.sum([a for a in self.attributes if a not in kept]).transpose(attributes)

    # -- pointwise --------------------------------------------------------------------------

    def _binary(self, other: Factor | float, op: Callable[..., np.ndarray]) -> Factor:
        if not isinstance(other, Factor):
            return Factor(self.domain, op(self.values, other))
        domain = _union(self.domain, other.domain)
        return Factor(domain, op(self._aligned(domain), other._aligned(domain)))

    def __add__(self, other: Factor | float) -> Factor:
        return self._binary(other, np.add)

    def __sub__(self, other: Factor | float) -> Factor:
        return self._binary(other, np.subtract)

    def __mul__(self, other: Factor | float) -> Factor:
        return self._binary(other, np.multiply)

    def __truediv__(self, other: Factor | float) -> Factor:
        """Division with ``x / 0 = 0`` (conditionals on impossible events are never used)."""
        return self._binary(other, _divide)

    __radd__ = __add__
    __rmul__ = __mul__

    def __neg__(self) -> Factor:
        return Factor(self.domain, -self.values)

    def exp(self) -> Factor:
        return Factor(self.domain, np.exp(self.values))

    def log(self) -> Factor:
        """Natural log; zero cells become ``-inf``."""
        with np.errstate(divide="ignore"):
            return Factor(self.domain, np.log(self.values))

    def dot(self, other: Factor) -> float:
        """``sum(self * other)`` over the union of the two domains."""
        return float(np.sum(self._binary(other, np.multiply).values))


# -- cached index bookkeeping (domains are hashable; message passing repeats the same shapes) --


@lru_cache(maxsize=65536)
def _transposition(domain: Domain, attributes: tuple[str, ...]) -> tuple[Domain, tuple[int, ...]]:
    if sorted(attributes) != sorted(domain.attributes):
        raise ValueError(f"{attributes} is not a permutation of {domain.attributes}")
    return domain.project(attributes), domain.axes(attributes)


@lru_cache(maxsize=65536)
def _alignment(sub: Domain, domain: Domain) -> tuple[tuple[int, ...] | None, tuple[int, ...]]:
    """Transposition putting ``sub``'s axes in ``domain``'s order (None if already), and the
    broadcast shape: ``sub``'s sizes on its attributes, 1 elsewhere."""
    missing = set(sub.attributes) - set(domain.attributes)
    if missing:
        raise ValueError(f"cannot align {sub.attributes} with {domain.attributes}")
    order = tuple(a for a in domain.attributes if a in sub)
    axes = None if order == sub.attributes else sub.axes(order)
    shape = tuple(n if a in sub else 1 for a, n in zip(domain.attributes, domain.shape, strict=True))
    return axes, shape


@lru_cache(maxsize=65536)
def _reduction(domain: Domain, attributes: tuple[str, ...]) -> tuple[Domain, tuple[int, ...]]:
    unknown = set(attributes) - set(domain.attributes)
    if unknown:
        raise ValueError(f"{sorted(unknown)} not in factor over {domain.attributes}")
    kept = tuple(a for a in domain.attributes if a not in attributes)
    return domain.project(kept), tuple(sorted(domain.axes(set(attributes))))


@lru_cache(maxsize=65536)
def _union(first: Domain, second: Domain) -> Domain:
    extra = tuple(a for a in second.attributes if a not in first)
    if not extra:
        return first
    return Domain(first.attributes + extra, first.shape + second.project(extra).shape)


def _divide(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(b == 0, 0.0, a / b)


def sum_axes(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``values.sum(axis=axes)`` (equal to rounding), the fastest way we measured on the
    estimator's tables, whose last axes are often small: a trailing block of summed axes first
    (``_sum_trailing``: 2-4x the reductions below on such tables), then runs of summed axes
    followed by at least ``SLAB`` cells as contiguous slabs (``_sum_slabs``), then ``einsum``
    for what is left (numpy's strided reductions over inner axes are several times slower).
    No BLAS: a threaded matrix-vector product costs several times the
    CPU on a shared machine."""
    if not axes:
        return values
    axes = tuple(sorted(axes))
    trailing = 0
    while trailing < len(axes) and axes[-1 - trailing] == values.ndim - 1 - trailing:
        trailing += 1
    if trailing and trailing < values.ndim and values.flags.c_contiguous:
        values = _sum_trailing(values, trailing)
        axes = axes[:-trailing]
        if not axes:
            return values
    if values.ndim > 52 or (axes == tuple(range(len(axes)))
                            and prod(values.shape[len(axes):]) >= SLAB):
        return values.sum(axis=axes)
    if values.flags.c_contiguous:
        values, axes = _sum_slabs(values, axes)
        if not axes:
            return values
    kept = [i for i in range(values.ndim) if i not in axes]
    return np.einsum(values, list(range(values.ndim)), kept)


SLAB = 8  # fewest contiguous cells after a summed run for ``_sum_slabs`` to add it as slabs


def _sum_slabs(values: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, tuple[int, ...]]:
    """Sum the runs of adjacent summed ``axes`` (sorted) of a C-ordered table, first to last,
    while the cells after a run (``inner``) are at least ``SLAB``: the table is then
    ``(outer, m, inner)`` and the run's sum adds ``m`` contiguous slabs (5-10x numpy's or
    einsum's strided reductions when the kept inner axes are small, as on the estimator's
    trees). Returns the partial sum and the axes (renumbered) still to sum."""
    runs: list[list[int]] = []
    for axis in axes:
        if runs and runs[-1][-1] == axis - 1:
            runs[-1].append(axis)
        else:
            runs.append([axis])
    removed = 0
    for k, run in enumerate(runs):
        first = run[0] - removed
        shape = values.shape
        inner = prod(shape[first + len(run):])
        if inner < SLAB:
            rest = tuple(a - removed for r in runs[k:] for a in r)
            return values, rest
        slabs = values.reshape(prod(shape[:first]), prod(shape[first:first + len(run)]), inner)
        if slabs.shape[1] <= 16:
            out = slabs[:, 0, :].copy()
            for j in range(1, slabs.shape[1]):
                out += slabs[:, j, :]
        else:
            out = np.add.reduce(slabs, axis=1)
        values = out.reshape(shape[:first] + shape[first + len(run):])
        removed += len(run)
    return values, ()


def _sum_trailing(values: np.ndarray, count: int) -> np.ndarray:
    """A C-ordered table summed over its last ``count`` axes: as rows of a matrix, added
    column by column when a row has 2-3 cells (numpy's row reductions are slowest there),
    else by ``einsum``."""
    shape = values.shape[:-count]
    rows = values.reshape(-1, prod(values.shape[-count:]))
    if rows.shape[1] <= 3:
        out = rows[:, 0].copy()
        for j in range(1, rows.shape[1]):
            out += rows[:, j]
    else:
        out = np.einsum("ij->i", rows)
    return out.reshape(shape)


def logsumexp(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``log(sum(exp(values), axes))`` without overflow, accurate to rounding in every cell.

    Shifts by the global maximum; if some output cell's sum falls below 1e-250 (where
    underflowed terms could matter), recomputes with a shift per output cell.
    """
    if not axes:
        return values
    fast = exp_sum(values, axes)
    if fast is not None:
        _, shift, sums = fast
        return np.log(sums) + shift
    cell_shift = values.max(axis=axes, keepdims=True)
    cell_shift[~np.isfinite(cell_shift)] = 0.0
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(values - cell_shift).sum(axis=axes, keepdims=True)) + cell_shift
    return out.squeeze(axis=axes)


def exp_sum(values: np.ndarray, axes: tuple[int, ...]) -> tuple[np.ndarray, float, np.ndarray] | None:
    """``(exp(values - m), m, that table summed over axes)`` with ``m`` the global maximum, or
    None where one shift does not do: no finite maximum, or some sum below 1e-250 (underflowed
    terms could matter there; ``logsumexp`` then shifts each output cell by its own maximum)."""
    shift = float(values.max())
    if not np.isfinite(shift):
        return None
    table = np.subtract(values, shift)
    np.exp(table, out=table)
    sums = sum_axes(table, axes)
    return (table, shift, sums) if sums.min() > 1e-250 else None


def product(factors: Sequence[Factor]) -> Factor:
    """Pointwise product of ``factors`` over the union of their domains."""
    result = factors[0]
    for factor in factors[1:]:
        result = result * factor
    return result


def variable_elimination(factors: Sequence[Factor], keep: Sequence[str]) -> Factor:
    """``sum`` over all attributes not in ``keep`` of the product of ``factors``, axes in the
    order of ``keep``. Eliminates one attribute at a time, greedily choosing the one whose
    intermediate product has the fewest cells, so memory stays at that largest product."""
    factors = list(factors)
    kept = set(keep)
    hidden = {a for f in factors for a in f.attributes} - kept
    while hidden:
        attribute = min(sorted(hidden), key=lambda a: _product_cells(factors, a))
        touching = [f for f in factors if attribute in f.domain]
        factors = [f for f in factors if attribute not in f.domain]
        factors.append(product(touching).sum([attribute]))
        hidden.discard(attribute)
    result = product(factors)
    missing = kept - set(result.attributes)
    if missing:
        raise ValueError(f"{sorted(missing)} not in any factor")
    return result.transpose(keep)


def contract(factors: Sequence[Factor], keep: Sequence[str]) -> Factor:
    """``variable_elimination(factors, keep)`` (the same sum of products, equal to it up to
    floating-point rounding), pairwise: each table first sums out the attributes no other table
    or ``keep`` needs, then the pair whose result is smallest is multiplied and summed over what
    they alone share in one batched matrix product (BLAS), never materialising their product.
    For marginals across junction-tree cliques whose separators are large this is many times
    faster than eliminating one attribute at a time. The order of the pairs depends only on the
    tables' attributes and sizes: it is planned once per shape (``_contraction``), as AIM
    contracts the same subtrees' shapes for hundreds of candidates every round."""
    keep = tuple(keep)
    plan = _contraction(tuple((f.attributes, f.domain.shape) for f in factors), keep)
    values = [sum_axes(f.values, axes) for f, axes in zip(factors, plan.first, strict=True)]
    for i, j, left, right, shape, axes in plan.pairs:
        first, second = values[i], values[j]
        rest = [v for k, v in enumerate(values) if k not in (i, j)]
        product = np.matmul(_arranged(first, left), _arranged(second, right)).reshape(shape)
        values = rest + [sum_axes(product, axes)]
    return Factor(plan.domain, values[0]).transpose(keep)


_Table = tuple[tuple[str, ...], dict[str, int]]
_Arrangement = tuple[tuple[int, ...], tuple[int, ...]]  # a transposition, then a shape


@dataclass(frozen=True)
class _Contraction:
    """``first[k]``: the axes table k sums first; ``pairs``: each multiplication in order (the
    two tables' places, their arrangements as batched matrices, the product's shape, the axes
    summed after it); ``domain``: the last table's."""

    first: tuple[tuple[int, ...], ...]
    pairs: tuple[tuple[int, int, _Arrangement, _Arrangement, tuple[int, ...], tuple[int, ...]], ...]
    domain: Domain


@lru_cache(maxsize=4096)
def _contraction(
    shapes: tuple[tuple[tuple[str, ...], tuple[int, ...]], ...], keep: tuple[str, ...]
) -> _Contraction:
    tables = [(attributes, dict(zip(attributes, shape, strict=True))) for attributes, shape in shapes]
    missing = set(keep) - {a for attributes, _ in tables for a in attributes}
    if missing:
        raise ValueError(f"{sorted(missing)} not in any factor")
    summed_first = [_sum_unneeded(table, tables, keep) for table in tables]
    tables = [table for table, _ in summed_first]
    pairs = []
    while len(tables) > 1:
        i, j = min(
            ((i, j) for j in range(len(tables)) for i in range(j)),
            key=lambda ij: _pair_cells(tables, ij[0], ij[1], keep),
        )
        rest = [t for k, t in enumerate(tables) if k not in (i, j)]
        pair, left, right = _multiply_pair(tables[i], tables[j], rest, keep)
        summed, axes = _sum_unneeded(pair, rest, keep)
        pairs.append((i, j, left, right, tuple(pair[1][a] for a in pair[0]), axes))
        tables = rest + [summed]
    attributes, sizes = tables[0]
    return _Contraction(tuple(axes for _, axes in summed_first), tuple(pairs),
                        Domain(attributes, tuple(sizes[a] for a in attributes)))


def _needed(table: _Table, others: Sequence[_Table], keep: tuple[str, ...]) -> set[str]:
    """The attributes of ``table`` that ``keep`` or another table mentions."""
    used = set(keep).union(*(t[0] for t in others if t is not table))
    return {a for a in table[0] if a in used}


def _sum_unneeded(
    table: _Table, others: Sequence[_Table], keep: tuple[str, ...]
) -> tuple[_Table, tuple[int, ...]]:
    """The table left once the attributes nothing else needs are summed, and their axes."""
    attributes, sizes = table
    needed = _needed(table, others, keep)
    axes = tuple(k for k, a in enumerate(attributes) if a not in needed)
    return (tuple(a for a in attributes if a in needed), sizes), axes


def _pair_cells(tables: Sequence[_Table], i: int, j: int, keep: tuple[str, ...]) -> int:
    """Cells of the result of multiplying tables i and j and summing what only they need."""
    used = set(keep).union(*(t[0] for k, t in enumerate(tables) if k not in (i, j)))
    sizes = {**tables[i][1], **tables[j][1]}
    union = set(tables[i][0]) | set(tables[j][0])
    return prod(sizes[a] for a in union if a in used)


def _multiply_pair(
    first: _Table, second: _Table, rest: Sequence[_Table], keep: tuple[str, ...]
) -> tuple[_Table, _Arrangement, _Arrangement]:
    """``sum`` over the attributes only these two tables share (and nothing else needs) of
    their product, as one batched matrix product: (batch, first's own, summed) @ (batch, summed,
    second's own), batch = shared attributes that stay. Returns the product's table and how
    each table is arranged as its batched matrix."""
    used = set(keep).union(*(t[0] for t in rest))
    a_names, b_names = first[0], second[0]
    sizes = {**first[1], **second[1]}
    shared = [a for a in a_names if a in b_names]
    batch = [a for a in shared if a in used]
    summed = [a for a in shared if a not in used]
    a_own = [a for a in a_names if a not in b_names]
    b_own = [a for a in b_names if a not in a_names]

    def arrangement(names: tuple[str, ...], order: list[list[str]]) -> _Arrangement:
        flat = [a for group in order for a in group]
        return (tuple(names.index(a) for a in flat),
                tuple(prod(sizes[a] for a in group) for group in order))

    names = tuple(batch + a_own + b_own)
    return ((names, sizes), arrangement(a_names, [batch, a_own, summed]),
            arrangement(b_names, [batch, summed, b_own]))


def _arranged(values: np.ndarray, arrangement: _Arrangement) -> np.ndarray:
    order, shape = arrangement
    return values.transpose(order).reshape(shape)


def _product_cells(factors: Sequence[Factor], attribute: str) -> int:
    """Cells of the product of the factors that mention ``attribute``."""
    sizes = {
        a: n
        for f in factors
        if attribute in f.domain
        for a, n in zip(f.attributes, f.domain.shape, strict=True)
    }
    return int(np.prod(list(sizes.values()), dtype=np.int64))
