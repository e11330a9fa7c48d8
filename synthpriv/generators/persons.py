"""Person-level DP-SGD's unit of sampling: the rows of each person, after bounding to k.

With ``data.person`` the neighbouring tables differ by all rows of one person, and the data path
keeps at most k = ``rows_per_person`` rows per person before anything is counted. DP-SGD then
samples *persons* (Poisson, rate q over persons: every row of a sampled person joins the batch,
none of an unsampled one) and bounds each person's contribution to the clipped gradient sum by C
(see ``synthpriv.generators.dpsgd``). The grouping is sensitive (it is the data): it is used for
training only and never released or logged.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

PersonClipping = Literal["person", "rows"]


@dataclass(frozen=True)
class PersonRows:
    """``members[p]``: the encoded-row indices of person p, padded with -1 to k columns."""

    members: np.ndarray
    rows_per_person: int

    @classmethod
    def from_codes(cls, person_codes: np.ndarray, rows_per_person: int,
                   records: int) -> PersonRows:
        """Group rows by ``person_codes`` (one integer per encoded row: its person after
        bounding). Refuses a person with more than ``rows_per_person`` rows: the sensitivity
        argument (a person moves the clipped sum by ≤ C) assumes the bounding ran."""
        codes = np.asarray(person_codes)
        if codes.shape != (records,) or not np.issubdtype(codes.dtype, np.integer):
            raise ValueError(
                f"person_codes must be one integer per encoded row, shape ({records},); got "
                f"dtype {codes.dtype}, shape {codes.shape}. Pass the bounded rows' person codes."
            )
        if rows_per_person < 1:
            raise ValueError(f"rows_per_person must be at least 1, got {rows_per_person}")
        order = np.argsort(codes, kind="stable")
        _, first, counts = np.unique(codes[order], return_index=True, return_counts=True)
        if counts.size and counts.max() > rows_per_person:
            raise ValueError(
                f"a person has more than rows_per_person = {rows_per_person} rows: person-level "
                "DP-SGD needs each person bounded to k rows before training (data.person's "
                "bounding step); bound the rows first"
            )
        members = np.full((len(counts), rows_per_person), -1, dtype=np.int64)
        person = np.repeat(np.arange(len(counts)), counts)
        slot = np.arange(len(codes)) - np.repeat(first, counts)
        members[person, slot] = order
        return cls(members, rows_per_person)

    @property
    def persons(self) -> int:
        return self.members.shape[0]

