"""The finite domain of an encoded table, and the encoded table itself.

Vocabulary after private-pgm: a ``Domain`` maps each attribute to its number of codes; a
``Dataset`` holds integer codes over a domain and answers marginal (contingency-table) queries.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np


@dataclass(frozen=True)
class Domain:
    """Ordered attributes and the number of codes each can take."""

    attributes: tuple[str, ...]
    shape: tuple[int, ...]

    def __post_init__(self) -> None:
        if len(self.attributes) != len(self.shape):
            raise ValueError("Domain needs one size per attribute")
        if len(set(self.attributes)) != len(self.attributes):
            raise ValueError(f"Domain attributes must be unique: {self.attributes}")
        if any(int(s) < 1 for s in self.shape):
            raise ValueError(f"every attribute needs at least one code: {self.shape}")

    @classmethod
    def from_sizes(cls, sizes: dict[str, int]) -> Domain:
        return cls(tuple(sizes), tuple(int(s) for s in sizes.values()))

    def __len__(self) -> int:
        return len(self.attributes)

    def __contains__(self, attribute: object) -> bool:
        return attribute in self.attributes

    def __getitem__(self, attribute: str) -> int:
        return self.shape[self.attributes.index(attribute)]

    def axes(self, attributes: Iterable[str]) -> tuple[int, ...]:
        """Positions of ``attributes`` in this domain."""
        return tuple(self.attributes.index(a) for a in attributes)

    def project(self, attributes: Iterable[str]) -> Domain:
        """The sub-domain over ``attributes``, in the order given."""
        attributes = tuple(attributes)
        return Domain(attributes, tuple(self[a] for a in attributes))

    def size(self, attributes: Iterable[str] | None = None) -> int:
        """Number of cells of the marginal over ``attributes`` (all attributes if None)."""
        shape = self.shape if attributes is None else self.project(attributes).shape
        return int(np.prod(shape, dtype=np.int64))

    def to_dict(self) -> dict[str, int]:
        return dict(zip(self.attributes, self.shape, strict=True))


@dataclass(frozen=True)
class Dataset:
    """Integer codes ``codes[i, j]`` in ``range(domain.shape[j])`` for row i, attribute j."""

    codes: np.ndarray
    domain: Domain

    def __post_init__(self) -> None:
        if self.codes.ndim != 2 or self.codes.shape[1] != len(self.domain):
            raise ValueError(
                f"codes must be (rows, {len(self.domain)}), got {self.codes.shape}"
            )

    @property
    def records(self) -> int:
        return int(self.codes.shape[0])

    def marginal(self, attributes: Sequence[str]) -> np.ndarray:
        """Exact counts of the marginal over ``attributes``, shaped ``domain.project(attributes).shape``.

        Sensitivity: under add/remove-one-row adjacency exactly one cell changes by 1, so the
        L1 and L2 sensitivity of this query are both 1.
        """
        return clique_counts(self.codes, self.domain, attributes).astype(np.float64)

    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[tuple[str, ...], np.ndarray]:
        """``marginal`` of each clique, keyed by the clique as a tuple (each has sensitivity 1)."""
        return {tuple(c): self.marginal(c) for c in cliques}


class CountSource(Protocol):
    """What the marginals stage reads from the sensitive table: exact counts, nothing else.

    ``Dataset`` (codes in memory) and the chunked and distributed sources in synthpriv.counting
    and synthpriv.engines all answer the same queries with the same exact counts.
    """

    domain: Domain

    @property
    def records(self) -> int: ...

    def marginal(self, attributes: Sequence[str]) -> np.ndarray: ...

    def marginals(self, cliques: Iterable[Sequence[str]]) -> dict[tuple[str, ...], np.ndarray]: ...


def clique_counts(codes: np.ndarray, domain: Domain, attributes: Sequence[str]) -> np.ndarray:
    """Exact int64 counts of the rows of ``codes`` (any integer dtype, columns in domain order)
    in each cell of the marginal over ``attributes``, shaped like its sub-domain."""
    sub = domain.project(attributes)
    flat = np.zeros(codes.shape[0], dtype=np.int64)
    for axis, size in zip(domain.axes(attributes), sub.shape, strict=True):
        flat *= size
        flat += codes[:, axis]
    counts = np.bincount(flat, minlength=sub.size())
    return counts.reshape(sub.shape)
