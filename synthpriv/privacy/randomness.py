"""Where every random bit that touches a released value comes from.

A DP guarantee is a statement about the noise distribution; it holds only if the noise is drawn
from that distribution by a source the adversary cannot predict. Hence:

* ``RandomSource.secure()`` (the default) reads the operating system's CSPRNG
  (``os.urandom`` / ``secrets``) for every draw. It keeps no buffer and no state in the process,
  so a forked worker cannot replay its parent's noise.
* ``RandomSource.seeded(seed)`` is reproducible, for research runs and tests only. Its noise is
  predictable by anyone who knows the seed, so nothing drawn from it may be released; it says so
  through ``is_seeded``, which release code should check.

Integers are drawn exactly: ``randbelow`` and ``uniform_words`` use rejection sampling on raw
bits and never go through floating point.
"""

from __future__ import annotations

import os
import random
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import torch

_WORD_BITS = 64
_SEED_BITS = 256


class RandomSource:
    """Where all noise that touches released values comes from.

    Default: secure (``secrets.SystemRandom`` / ``os.urandom``). ``RandomSource.seeded(seed)``
    gives a reproducible, NOT-FOR-RELEASE source (flag ``is_seeded``).

    Build instances with :meth:`secure` or :meth:`seeded`; the constructor is private.
    """

    is_seeded: bool

    def __init__(self, *, _seed: int | None = None) -> None:
        self.is_seeded = _seed is not None
        self._bits: np.random.Generator | None = None
        self._children: np.random.SeedSequence | None = None
        self._scalar: random.Random | None = None
        if _seed is not None:
            root = np.random.SeedSequence(_seed)
            bits_seq, scalar_seq, self._children = root.spawn(3)
            # Mersenne Twister for scalar draws (fast, exact integer methods); NOT cryptographic.
            scalar_seed = scalar_seq.generate_state(8, dtype=np.uint32).tobytes()
            self._scalar = random.Random(int.from_bytes(scalar_seed, "little"))
            # Philox: counter-based, statistically strong; NOT cryptographic (hence the flag).
            self._bits = np.random.Generator(np.random.Philox(bits_seq))

    @classmethod
    def secure(cls) -> RandomSource:
        """A source backed by the OS CSPRNG; the only kind whose draws may be released."""
        return cls()

    @classmethod
    def seeded(cls, seed: int) -> RandomSource:
        """A reproducible source: the same seed gives the same draws, call for call.

        NOT FOR RELEASE: anyone who knows the seed knows the noise, which voids the DP guarantee.
        """
        if not isinstance(seed, int | np.integer) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        return cls(_seed=int(seed))

    def __repr__(self) -> str:
        return "RandomSource.seeded(...)" if self.is_seeded else "RandomSource.secure()"

    # ----------------------------------------------------------------------------- raw bits
    def uniform_words(self, n: int) -> np.ndarray:
        """``n`` independent uniform 64-bit words (``uint64``), i.e. 64n uniform bits.

        Secure mode reads ``8n`` fresh bytes from ``os.urandom`` on every call (no buffering).
        """
        if n < 0:
            raise ValueError("n must be non-negative")
        if self._bits is None:
            return np.frombuffer(os.urandom(8 * n), dtype=np.uint64).copy()
        return self._bits.bit_generator.random_raw(n).astype(np.uint64, copy=False)

    def getrandbits(self, k: int) -> int:
        """A uniform integer in ``[0, 2**k)``, exactly."""
        if k < 0:
            raise ValueError("k must be non-negative")
        if k == 0:
            return 0
        if self._scalar is None:
            return secrets.randbits(k)
        return self._scalar.getrandbits(k)

    def randbelow(self, n: int) -> int:
        """A uniform integer in ``[0, n)``, exact: rejection sampling on ``n.bit_length()`` random
        bits (``secrets.randbelow`` / ``Random.randrange``), so no modulo bias and no floats."""
        if n <= 0:
            raise ValueError(f"randbelow needs n >= 1, got {n}")
        if self._scalar is None:
            return secrets.randbelow(n)
        return self._scalar.randrange(n)

    def integers_below(self, n: int, size: int) -> np.ndarray:
        """``size`` i.i.d. uniform integers in ``[0, n)`` (``int64``), exact, for 1 <= n <= 2**62.

        A word ``w`` is kept iff ``w < 2**64 - (2**64 mod n)``, a multiple of ``n``, so ``w mod n``
        is exactly uniform; rejected words (probability < n / 2**64) are redrawn.
        """
        if not 1 <= n <= 2**62:
            raise ValueError(f"integers_below needs 1 <= n <= 2**62, got {n}")
        limit = np.uint64(2**_WORD_BITS - (2**_WORD_BITS % n) - 1)  # keep w <= limit
        modulus = np.uint64(n)
        out = np.empty(size, dtype=np.int64)
        todo = np.arange(size)
        while todo.size:
            words = self.uniform_words(todo.size)
            ok = words <= limit
            out[todo[ok]] = (words[ok] % modulus).astype(np.int64)
            todo = todo[~ok]
        return out

    # ----------------------------------------------------------------- derived generators
    def _derived_seed_words(self) -> np.random.SeedSequence:
        """Entropy for a derived generator: 256 fresh OS bits (secure) or the next spawned child
        of the seed (seeded: reproducible, independent of the noise stream)."""
        if self._children is None:
            return np.random.SeedSequence(int.from_bytes(os.urandom(_SEED_BITS // 8), "big"))
        (child,) = self._children.spawn(1)
        return child

    def numpy_generator(self) -> np.random.Generator:
        """A numpy Generator for non-count noise and post-processing (e.g. sampling rows).

        Secure mode: a fresh PCG64 seeded from 256 bits of ``os.urandom``; the seed is never
        stored or exposed. PCG64 itself is not a CSPRNG: use this generator for floating-point
        noise and post-processing only; exact count noise goes through :meth:`uniform_words`.
        Seeded mode: each call returns the next of a reproducible sequence of generators.
        """
        return np.random.Generator(np.random.PCG64(self._derived_seed_words()))

    @contextmanager
    def torch_initialisation(self) -> Iterator[None]:
        """torch's global RNG for public randomness, such as a network's initial weights (they
        read no data), forked so that nothing outside the block sees it: seeded from this source
        in seeded mode (a research run repeats exactly), torch's own fresh state otherwise."""
        import torch

        with torch.random.fork_rng(devices=[]):
            if self.is_seeded:
                seed = int(self._derived_seed_words().generate_state(1, dtype=np.uint64)[0]) >> 1
                torch.manual_seed(seed)
            yield

    def torch_generator(self) -> torch.Generator | None:
        """A ``torch.Generator`` for DP-SGD noise, or ``None`` in secure mode.

        Seeded mode: a CPU generator seeded reproducibly from this source. Secure mode: ``None``,
        meaning "let the training code choose": torch's own generators (Mersenne Twister / Philox)
        are not cryptographic. The secure option is Opacus ``secure_mode=True``, which needs
        ``torchcsprng``; its last release (0.2.1) ships wheels for CPython <= 3.9 pinned to
        torch 1.8.1 and no sdist, so it is not installable with this project's Python/torch.
        """
        if not self.is_seeded:
            return None
        import torch

        seed = int(self._derived_seed_words().generate_state(1, dtype=np.uint64)[0]) >> 1
        generator = torch.Generator()
        generator.manual_seed(seed)
        return generator
