"""RandomSource: reproducible when seeded, fresh when secure, exact uniform integers."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from synthpriv.privacy.randomness import RandomSource

# Chi-square p-values below this fail a uniformity test. With fixed seeds the outcome is
# deterministic; the threshold only says how unlikely a correct sampler's draw would have to be.
P_FLOOR = 1e-4


def _draws(source: RandomSource) -> tuple:
    return (
        [source.randbelow(1000) for _ in range(20)],
        source.getrandbits(200),
        source.uniform_words(5).tolist(),
        source.integers_below(10**12, 5).tolist(),
        source.numpy_generator().integers(0, 2**62, size=5).tolist(),
    )


def test_seeded_source_reproduces_its_draws() -> None:
    assert _draws(RandomSource.seeded(2024)) == _draws(RandomSource.seeded(2024))


def test_different_seeds_give_different_draws() -> None:
    assert _draws(RandomSource.seeded(1)) != _draws(RandomSource.seeded(2))


def test_secure_draws_differ_between_sources_and_calls() -> None:
    # 256 random bits repeating by chance has probability 2**-256.
    a, b = RandomSource.secure(), RandomSource.secure()
    assert a.uniform_words(4).tolist() != b.uniform_words(4).tolist()
    assert a.uniform_words(4).tolist() != a.uniform_words(4).tolist()
    assert a.getrandbits(256) != a.getrandbits(256)
    gen_draws = [a.numpy_generator().integers(0, 2**62, size=4).tolist() for _ in range(2)]
    assert gen_draws[0] != gen_draws[1]


def test_is_seeded_flags_the_not_for_release_source() -> None:
    assert RandomSource.seeded(0).is_seeded is True
    assert RandomSource.secure().is_seeded is False
    assert "seeded" in repr(RandomSource.seeded(0))


def test_successive_numpy_generators_from_one_seed_are_distinct_but_reproducible() -> None:
    first, second = RandomSource.seeded(7), RandomSource.seeded(7)
    a1, a2 = first.numpy_generator().random(3), first.numpy_generator().random(3)
    b1, b2 = second.numpy_generator().random(3), second.numpy_generator().random(3)
    assert not np.array_equal(a1, a2)
    np.testing.assert_array_equal(a1, b1)
    np.testing.assert_array_equal(a2, b2)


@pytest.mark.parametrize("seed", [-1, True, 1.5])
def test_seeded_rejects_non_integer_or_negative_seeds(seed: object) -> None:
    with pytest.raises(ValueError):
        RandomSource.seeded(seed)  # type: ignore[arg-type]


def test_torch_generator_is_seeded_or_none() -> None:
    torch = pytest.importorskip("torch")
    assert RandomSource.secure().torch_generator() is None
    a = RandomSource.seeded(3).torch_generator()
    b = RandomSource.seeded(3).torch_generator()
    assert isinstance(a, torch.Generator)
    assert torch.equal(torch.randn(5, generator=a), torch.randn(5, generator=b))


@pytest.mark.parametrize("n", [1, 2, 3, 7, 1000, 2**61 + 1])
def test_randbelow_and_integers_below_stay_in_range(n: int) -> None:
    for source in (RandomSource.seeded(5), RandomSource.secure()):
        assert all(0 <= source.randbelow(n) < n for _ in range(200))
        values = source.integers_below(n, 500)
        assert values.dtype == np.int64
        assert values.min() >= 0 and values.max() < n
    assert RandomSource.seeded(0).integers_below(n, 0).shape == (0,)


@pytest.mark.parametrize("method", ["randbelow", "integers_below"])
def test_uniform_integers_are_uniform(method: str) -> None:
    # 70,000 draws: the chi-square test notices a ~2% deviation in any of the 7 cells.
    source, n, draws = RandomSource.seeded(11), 7, 70_000
    if method == "randbelow":
        values = np.array([source.randbelow(n) for _ in range(draws)])
    else:
        values = source.integers_below(n, draws)
    counts = np.bincount(values, minlength=n)
    assert stats.chisquare(counts).pvalue > P_FLOOR


@pytest.mark.parametrize("method", ["randbelow", "integers_below"])
def test_large_ranges_have_no_modulo_bias(method: str) -> None:
    # n = 3 * 2**60: 2**64 = 5n + 2**60, so "word mod n" would put the values below 2**60 at
    # probability 6/16 = 0.375 instead of 1/3. 20,000 draws give a standard error of 0.0033:
    # the bias would be 12 standard errors, the tolerance is 5.
    source, n, draws = RandomSource.seeded(17), 3 * 2**60, 20_000
    if method == "randbelow":
        values = [source.randbelow(n) for _ in range(draws)]
    else:
        values = source.integers_below(n, draws).tolist()
    share = sum(v < 2**60 for v in values) / draws
    assert abs(share - 1 / 3) < 5 * np.sqrt((1 / 3) * (2 / 3) / draws)


def test_uniform_words_have_balanced_bits() -> None:
    # Each of the 64 bit positions is 1 with probability 1/2: with 20,000 words the count is
    # within 5 standard errors (5 * sqrt(20000 / 4) ~ 354) of 10,000.
    words = RandomSource.seeded(13).uniform_words(20_000)
    ones = [int(((words >> np.uint64(bit)) & np.uint64(1)).sum()) for bit in range(64)]
    assert max(abs(c - 10_000) for c in ones) < 5 * np.sqrt(20_000 / 4)


def test_invalid_arguments_raise() -> None:
    source = RandomSource.seeded(0)
    with pytest.raises(ValueError):
        source.randbelow(0)
    with pytest.raises(ValueError):
        source.integers_below(0, 3)
    with pytest.raises(ValueError):
        source.getrandbits(-1)
    assert source.getrandbits(0) == 0
    assert source.randbelow(1) == 0
