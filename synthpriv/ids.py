"""Fresh keys for an ``id`` column: drawn from the column's public ``format``, never from the data.

A format is a template, one character per key character: ``9`` a digit, ``A`` an uppercase
letter, ``a`` a lowercase letter, ``X`` an uppercase letter or a digit; ``\\`` makes the next
character literal; any other character is literal (``ID-99999999999999999999``; in
``C\\ASE-9…`` the A of CASE is escaped). Without a format a key is ``DEFAULT_FORMAT`` (16
characters of ``X``: about 7.9·10²⁴ keys).

Privacy: the released keys are a function of the format, the number of released rows and the
release's random source only; no real key is read, so the id column leaks nothing. The chance
that some released key equals some real key is then at most m·n/N (m released rows, n real
keys, N keys in the format's space); formats with fewer than ``MIN_SPACE`` = 2⁶⁴ keys are
refused, so for a million real and a million released rows that chance is below 6·10⁻⁸. Within
one release keys never repeat: the i-th row gets key (a·i + b) mod N with a random unit a and
random offset b, a bijection of [0, N).
"""

from __future__ import annotations

import math
import string

import numpy as np

CLASSES = {"9": string.digits, "A": string.ascii_uppercase, "a": string.ascii_lowercase,
           "X": string.ascii_uppercase + string.digits}
DEFAULT_FORMAT = "X" * 16
MIN_SPACE = 2**64


def template(format: str) -> list[str]:
    """The format as a list of alphabets (one per key character; a literal is a 1-letter one)."""
    parts, escaped = [], False
    for char in format:
        if escaped or char not in CLASSES and char != "\\":
            parts.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            parts.append(CLASSES[char])
    if escaped:
        raise ValueError(f"the id format '{format}' ends with an escape '\\'")
    return parts


def space(format: str) -> int:
    """How many distinct keys the format can write."""
    return math.prod(len(part) for part in template(format))


def check_format(name: str, format: str) -> None:
    """ValueError with the fix when the format's space is below MIN_SPACE."""
    size = space(format)
    if size < MIN_SPACE:
        raise ValueError(
            f"id column '{name}': format '{format}' writes {size:.3g} keys; released keys are "
            "drawn without reading the real ones, so the space must hold at least 2^64 (1.8e19) "
            "keys for a collision with a real key to be negligible (at most released × real / "
            "space). Add variable characters (e.g. 20 digits: '99999999999999999999')")


class KeyMaker:
    """Draws fresh, never-repeating keys of one format (state: how many were drawn)."""

    def __init__(self, format: str | None, rng: np.random.Generator) -> None:
        self.parts = template(format or DEFAULT_FORMAT)
        self.size = space(format or DEFAULT_FORMAT)
        self.scale = _unit(self.size, rng)
        self.offset = _below(self.size, rng)
        self.drawn = 0

    def draw(self, count: int) -> list[str]:
        """The next ``count`` keys (Python integers in object arrays: the space may exceed 64
        bits; one array operation per key character)."""
        rows = np.arange(self.drawn, self.drawn + count).astype(object)
        index = (rows * self.scale + self.offset) % self.size
        chars = []
        for part in reversed(self.parts):
            digit = index % len(part)
            index = index // len(part)
            chars.append(np.array(list(part), dtype=object)[digit.astype(np.int64)])
        self.drawn += count
        keys = chars[-1] if chars else np.array([""] * count, dtype=object)
        for column in reversed(chars[:-1]):
            keys = keys + column
        return keys.tolist()


def _below(size: int, rng: np.random.Generator) -> int:
    """A uniform integer in [0, size) (size may exceed 64 bits)."""
    words = size.bit_length() // 32 + 2
    value = int.from_bytes(rng.bytes(4 * words), "big")
    return value % size


def _unit(size: int, rng: np.random.Generator) -> int:
    """A random multiplier coprime with ``size`` (so i ↦ a·i + b mod size is a bijection)."""
    while True:
        value = _below(size, rng)
        if value and math.gcd(value, size) == 1:
            return value
