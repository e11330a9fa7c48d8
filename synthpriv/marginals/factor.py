"""Factors: tables over a sub-domain, with the algebra that message passing needs.

A ``Factor`` holds one number per cell of a (sub-)domain: counts, probabilities or log-potentials.
Binary operations broadcast over the union of the two domains, so ``f + g`` of factors over
``(a, b)`` and ``(b, c)`` is a factor over ``(a, b, c)``. Summing out or ``logsumexp``-ing out
attributes keeps the remaining attributes in their order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from functools import lru_cache

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
    """``values.sum(axis=axes)``, via ``einsum`` when the summed axes are not a leading block
    (numpy's strided reductions over inner axes are several times slower)."""
    if not axes:
        return values
    if axes == tuple(range(len(axes))) or values.ndim > 52:
        return values.sum(axis=axes)
    kept = [i for i in range(values.ndim) if i not in axes]
    return np.einsum(values, list(range(values.ndim)), kept)


def logsumexp(values: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
    """``log(sum(exp(values), axes))`` without overflow, accurate to rounding in every cell.

    Shifts by the global maximum; if some output cell's sum falls below 1e-250 (where
    underflowed terms could matter), recomputes with a shift per output cell.
    """
    if not axes:
        return values
    shift = float(values.max())
    if np.isfinite(shift):
        sums = sum_axes(np.exp(values - shift), axes)
        if sums.min() > 1e-250:
            return np.log(sums) + shift
    cell_shift = values.max(axis=axes, keepdims=True)
    cell_shift[~np.isfinite(cell_shift)] = 0.0
    with np.errstate(divide="ignore"):
        out = np.log(np.exp(values - cell_shift).sum(axis=axes, keepdims=True)) + cell_shift
    return out.squeeze(axis=axes)


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


def _product_cells(factors: Sequence[Factor], attribute: str) -> int:
    """Cells of the product of the factors that mention ``attribute``."""
    sizes = {
        a: n
        for f in factors
        if attribute in f.domain
        for a, n in zip(f.attributes, f.domain.shape, strict=True)
    }
    return int(np.prod(list(sizes.values()), dtype=np.int64))
