"""Exact discrete Gaussian sampler: reproducibility, moments, pmf, coins, exact bounds.

Statistical tolerances are 5 standard errors of the statistic under the exact distribution
(a correct sampler fails one with probability ~6e-7, and the seeds are fixed), and chi-square
tests require p > 1e-4; each statistical test also shows that it detects a nearby wrong
distribution, so none is vacuous.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from synthpriv.privacy import discrete_gaussian
from synthpriv.privacy.discrete_gaussian import (
    _acceptance_gamma,
    _DiscreteGaussianSampler,
    _exp_neg_bounds,
    _ExpCoins,
    _laplace_scale,
    _PooledIntegers,
    _sampler,
    _sigma_squared,
    _uniform_below_exp,
    bernoulli_exp,
    bernoulli_exp_batch,
    discrete_gaussian_variance,
    sample_discrete_gaussian,
    sample_discrete_gaussian_reference,
    sample_discrete_laplace,
)
from synthpriv.privacy.randomness import RandomSource

Z = 5.0  # standard errors allowed
P_FLOOR = 1e-4  # smallest acceptable chi-square p-value


# ------------------------------------------------------------------------------ test oracles
def _pmf(log_weight, bound: int) -> tuple[np.ndarray, np.ndarray]:
    """Support -bound..bound and its normalised pmf from an unnormalised log-weight."""
    support = np.arange(-bound, bound + 1)
    weights = np.exp(log_weight(support.astype(float)))
    return support, weights / weights.sum()


def _gaussian_pmf(sigma: float) -> tuple[np.ndarray, np.ndarray]:
    return _pmf(lambda x: -(x * x) / (2 * sigma * sigma), math.ceil(12 * sigma) + 12)


def _laplace_pmf(scale: int) -> tuple[np.ndarray, np.ndarray]:
    return _pmf(lambda x: -np.abs(x) / scale, 60 * scale)


def _chi_square_p(samples: np.ndarray, support: np.ndarray, pmf: np.ndarray) -> float:
    """Chi-square goodness of fit, cells with expected count < 5 pooled into the two tails."""
    assert samples.min() >= support[0] and samples.max() <= support[-1]
    observed = np.bincount(samples - support[0], minlength=support.size).astype(float)
    expected = pmf * samples.size
    core = np.flatnonzero(expected >= 5)
    lo, hi = core[0], core[-1]
    obs = np.concatenate([[observed[:lo].sum()], observed[lo : hi + 1], [observed[hi + 1 :].sum()]])
    exp = np.concatenate([[expected[:lo].sum()], expected[lo : hi + 1], [expected[hi + 1 :].sum()]])
    keep = exp > 0
    return float(stats.chisquare(obs[keep], exp[keep] * obs.sum() / exp[keep].sum()).pvalue)


def _exp_neg_brackets(gamma: Fraction, terms: int = 60) -> tuple[Fraction, Fraction]:
    """Exact rational L <= exp(-γ) <= U, independently of the module: exp(-γ) = exp(-γ/n)^n with
    γ/n <= 1, whose alternating Taylor partial sums bracket it (odd below, even above)."""
    n = max(1, math.ceil(gamma))
    x = gamma / n
    term, partial = Fraction(1), [Fraction(1)]
    for j in range(1, terms + 1):
        term = term * (-x) / j
        partial.append(partial[-1] + term)
    return partial[terms - 1] ** n, partial[terms] ** n  # terms even: last sum is an upper one


# ------------------------------------------------------------------- 1. reproducibility
def test_seeded_sampling_is_reproducible() -> None:
    a = sample_discrete_gaussian(30.0, 1000, RandomSource.seeded(42))
    b = sample_discrete_gaussian(30.0, 1000, RandomSource.seeded(42))
    c = sample_discrete_gaussian(30.0, 1000, RandomSource.seeded(43))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    ref = [sample_discrete_gaussian_reference(3.0, 50, RandomSource.seeded(9)) for _ in range(2)]
    np.testing.assert_array_equal(ref[0], ref[1])


def test_secure_sampling_differs_between_draws() -> None:
    # Two equal vectors of 200 draws at σ = 30 would need probability < 0.02**200.
    source = RandomSource.secure()
    assert not source.is_seeded
    first = sample_discrete_gaussian(30.0, 200, source)
    second = sample_discrete_gaussian(30.0, 200, source)
    assert not np.array_equal(first, second)


def test_exact_sigma_squared_is_what_matters() -> None:
    # Fraction(7, 2), 3.5, np.float32(3.5) and np.float64(3.5) are the same exact σ.
    draws = [
        sample_discrete_gaussian(sigma, 100, RandomSource.seeded(5))
        for sigma in (Fraction(7, 2), 3.5, np.float32(3.5), np.float64(3.5))
    ]
    for other in draws[1:]:
        np.testing.assert_array_equal(draws[0], other)
    assert _sigma_squared(0.1) == Fraction(0.1) ** 2 != Fraction(1, 100)  # no rounding of σ


# ------------------------------------------------------------------------- 2. moments
def _moments_within_tolerance(samples: np.ndarray, sigma: float, true_var: float) -> bool:
    support, pmf = _gaussian_pmf(sigma)
    x2 = support.astype(float) ** 2
    mu4 = float(np.sum(pmf * x2 * x2))
    n = samples.size
    mean_ok = abs(samples.mean()) < Z * math.sqrt(true_var / n)
    var_hat = float(np.mean(samples.astype(float) ** 2))  # the mean is known to be 0
    var_ok = abs(var_hat - true_var) < Z * math.sqrt((mu4 - true_var**2) / n)
    return mean_ok and var_ok


@pytest.mark.parametrize("sigma", [0.5, 3.0, 30.0])
def test_mean_and_variance_match_theory(sigma: float) -> None:
    samples = sample_discrete_gaussian(sigma, 200_000, RandomSource.seeded(int(sigma * 10)))
    true_var = discrete_gaussian_variance(sigma)
    assert _moments_within_tolerance(samples, sigma, true_var)
    if sigma >= 2:
        assert _moments_within_tolerance(samples, sigma, sigma**2)
    # Power: the same check rejects a sampler whose σ is 3% off.
    assert not _moments_within_tolerance(samples, sigma, discrete_gaussian_variance(1.03 * sigma))


def test_reference_sampler_moments_match_theory() -> None:
    samples = sample_discrete_gaussian_reference(3.0, 20_000, RandomSource.seeded(3))
    assert _moments_within_tolerance(samples, 3.0, 9.0)


def test_secure_sampler_moments_match_theory() -> None:
    # The only statistical test on OS randomness (not seeded): at 6 standard errors a correct
    # sampler fails with probability ~4e-9.
    samples = sample_discrete_gaussian(10.0, 100_000, RandomSource.secure())
    assert abs(samples.mean()) < 6 * math.sqrt(100 / samples.size)
    assert abs(np.mean(samples.astype(float) ** 2) - 100) < 6 * math.sqrt(2 * 100**2 / samples.size)


def test_discrete_gaussian_variance_values() -> None:
    # Independent check by direct summation in pure Python.
    for sigma in (0.5, 1.0, 3.0):
        w = {x: math.exp(-x * x / (2 * sigma * sigma)) for x in range(-60, 61)}
        direct = math.fsum(x * x * v for x, v in w.items()) / math.fsum(w.values())
        assert discrete_gaussian_variance(sigma) == pytest.approx(direct, rel=1e-12)
        assert discrete_gaussian_variance(sigma) <= sigma**2 * (1 + 1e-12)
    assert discrete_gaussian_variance(0.5) == pytest.approx(0.2150, abs=1e-4)
    assert discrete_gaussian_variance(30.0) == pytest.approx(900.0, rel=1e-12)


# ----------------------------------------------------------------------------- 3. pmf
def test_pmf_matches_exact_pmf_sigma_3() -> None:
    samples = sample_discrete_gaussian(3.0, 100_000, RandomSource.seeded(2020))
    assert _chi_square_p(samples, *_gaussian_pmf(3.0)) > P_FLOOR
    # Power: σ = 3.15 (a 10% larger variance) is rejected by the same test on the same draws.
    assert _chi_square_p(samples, *_gaussian_pmf(3.15)) < P_FLOOR


@pytest.mark.parametrize("sigma", [0.5, 10.37])
def test_pmf_matches_exact_pmf_other_sigmas(sigma: float) -> None:
    # 10.37 has a long binary expansion: σ² is a Fraction with a 2**-104 denominator.
    samples = sample_discrete_gaussian(sigma, 100_000, RandomSource.seeded(77))
    assert _chi_square_p(samples, *_gaussian_pmf(sigma)) > P_FLOOR


def test_reference_pmf_matches_exact_pmf_sigma_3() -> None:
    samples = sample_discrete_gaussian_reference(3.0, 20_000, RandomSource.seeded(2021))
    assert _chi_square_p(samples, *_gaussian_pmf(3.0)) > P_FLOOR


def test_discrete_laplace_matches_its_pmf() -> None:
    source = RandomSource.seeded(4)
    reference = np.array([sample_discrete_laplace(3, source) for _ in range(20_000)])
    sampler = _sampler(Fraction(4))  # σ² = 4: t = ⌊σ⌋ + 1 = 3
    assert sampler.t == 3
    vectorised = sampler._laplace(60_000, source)
    assert _chi_square_p(reference, *_laplace_pmf(3)) > P_FLOOR
    assert _chi_square_p(vectorised, *_laplace_pmf(3)) > P_FLOOR
    assert _chi_square_p(vectorised, *_laplace_pmf(4)) < P_FLOOR  # power


# ------------------------------------------------------------------ 4. Bernoulli(exp(-γ))
@pytest.mark.parametrize("gamma", [Fraction(3, 2), Fraction(1, 3), Fraction(17, 5)])
def test_bernoulli_exp_rates(gamma: Fraction) -> None:
    p = math.exp(-gamma)
    source = RandomSource.seeded(int(gamma * 100))
    n_ref, n_batch = 20_000, 400_000
    ref_rate = sum(bernoulli_exp(gamma, source) for _ in range(n_ref)) / n_ref
    batch_rate = bernoulli_exp_batch(gamma, n_batch, source).mean()
    assert abs(ref_rate - p) < Z * math.sqrt(p * (1 - p) / n_ref)
    assert abs(batch_rate - p) < Z * math.sqrt(p * (1 - p) / n_batch)


def test_bernoulli_exp_edge_cases() -> None:
    source = RandomSource.seeded(0)
    assert all(bernoulli_exp(0, source) for _ in range(100))
    assert bernoulli_exp_batch(0, 1000, source).all()
    assert not bernoulli_exp_batch(200, 1000, source).any()  # exp(-200) < 1e-86
    with pytest.raises(ValueError):
        bernoulli_exp(Fraction(-1, 2), source)
    with pytest.raises(ValueError):
        bernoulli_exp_batch(-1, 3, source)


def test_pooled_integers_are_exact_uniform() -> None:
    pool = _PooledIntegers(RandomSource.seeded(12), words_per_fetch=64)
    counts = np.bincount([pool.randbelow(7) for _ in range(70_000)], minlength=7)
    assert stats.chisquare(counts).pvalue > P_FLOOR
    # n = 3 * 2**60: a modulo-biased draw would put 0.375 instead of 1/3 below 2**60 (12 SE).
    share = np.mean([pool.randbelow(3 * 2**60) < 2**60 for _ in range(20_000)])
    assert abs(share - 1 / 3) < Z * math.sqrt((1 / 3) * (2 / 3) / 20_000)
    # n above 2**64 concatenates words: the top bit of a 100-bit range is 1 half of the time.
    top = np.mean([pool.randbelow(2**100) >> 99 for _ in range(20_000)])
    assert abs(top - 0.5) < Z * math.sqrt(0.25 / 20_000)
    assert pool.randbelow(1) == 0
    with pytest.raises(ValueError):
        pool.randbelow(0)


# --------------------------------------------------------- exact bounds and lazy comparison
@pytest.mark.parametrize(
    "gamma",
    [Fraction(1, 7), Fraction(1), Fraction(3, 2), Fraction(10, 3), Fraction(45, 1), Fraction(62)]
    + [Fraction(*_acceptance_gamma(y, _sigma_squared(10.37), 11)) for y in (0, 10, 31)],
)
@pytest.mark.parametrize("bits", [63, 127, 191])
def test_exp_bounds_bracket_the_truth_tightly(gamma: Fraction, bits: int) -> None:
    lo, hi = _exp_neg_bounds(gamma.numerator, gamma.denominator, bits)
    lower, upper = _exp_neg_brackets(gamma)
    scale = 2**bits
    assert upper - lower < Fraction(1, 2 ** (bits + 8))  # the oracle is sharp enough to judge
    assert lo <= lower * scale and upper * scale <= hi
    assert hi - lo <= 4


def test_exp_bounds_of_zero_and_huge_gamma() -> None:
    assert _exp_neg_bounds(0, 1, 63) == (2**63, 2**63)
    assert _exp_neg_bounds(64, 1, 63) == (0, 1)  # exp(-64) < 2**-64


def _ambiguous_case(gamma: Fraction) -> tuple[int, float]:
    """A 63-bit prefix whose interval contains exp(-γ), and P(U < exp(-γ) | prefix)."""
    lower, _ = _exp_neg_brackets(gamma)
    prefix = math.floor(lower * 2**63)
    return prefix, float(lower * 2**63 - prefix)


def test_lazy_comparison_resolves_an_undecided_prefix_with_the_right_probability() -> None:
    gamma = Fraction(3, 2)
    prefix, p = _ambiguous_case(gamma)
    lo, hi = _exp_neg_bounds(3, 2, 63)
    assert lo <= prefix < hi  # the 63-bit bounds cannot decide this one
    source, n = RandomSource.seeded(8), 4000
    rate = sum(_uniform_below_exp(prefix, 3, 2, 63, source) for _ in range(n)) / n
    assert abs(rate - p) < Z * math.sqrt(p * (1 - p) / n)


class _StuckPrefixSource(RandomSource):
    """A seeded source whose 64-bit words are all one chosen word (to force the slow path)."""

    def __init__(self, word: int) -> None:
        super().__init__(_seed=99)
        self._word = np.uint64(word)

    def uniform_words(self, n: int) -> np.ndarray:
        return np.full(n, self._word, dtype=np.uint64)


def test_batch_coins_fall_back_to_the_lazy_comparison() -> None:
    gamma = Fraction(3, 2)
    prefix, p = _ambiguous_case(gamma)
    source, n = _StuckPrefixSource(prefix << 1), 4000  # the low bit is dropped
    heads = _ExpCoins(lambda _key: (3, 2)).toss(np.zeros(n, dtype=np.int64), source)
    assert abs(heads.mean() - p) < Z * math.sqrt(p * (1 - p) / n)


# --------------------------------------------------------------------- 5. dtype and shape
@pytest.mark.parametrize("size", [7, (3, 4, 5), (2, 0), 0, (1,)])
def test_samples_are_int64_with_the_requested_shape(size: int | tuple[int, ...]) -> None:
    expected = (size,) if isinstance(size, int) else size
    for sampler in (sample_discrete_gaussian, sample_discrete_gaussian_reference):
        samples = sampler(2.5, size, RandomSource.seeded(1))
        assert samples.dtype == np.int64
        assert samples.shape == expected


@pytest.mark.parametrize("sigma", [0.0, -1.0, float("nan"), float("inf"), 2.0**41, True, "3"])
def test_invalid_sigma_is_rejected(sigma: object) -> None:
    with pytest.raises((ValueError, TypeError)):
        sample_discrete_gaussian(sigma, 3, RandomSource.seeded(0))  # type: ignore[arg-type]


def test_laplace_scale_is_floor_sigma_plus_one_exactly() -> None:
    assert _laplace_scale(_sigma_squared(3.0)) == 4
    assert _laplace_scale(_sigma_squared(math.nextafter(3.0, 0))) == 3
    assert _laplace_scale(_sigma_squared(Fraction(1, 3))) == 1
    assert _laplace_scale(_sigma_squared(100.0)) == 101


def test_sparse_bounds_path_has_the_exact_pmf(monkeypatch: pytest.MonkeyPatch) -> None:
    # Keys >= _DENSE_KEYS get their bounds per batch instead of from the cached tables.
    monkeypatch.setattr(discrete_gaussian, "_DENSE_KEYS", 4)
    sampler = _DiscreteGaussianSampler(Fraction(9))
    samples = sampler.sample(50_000, RandomSource.seeded(31))
    assert _chi_square_p(samples, *_gaussian_pmf(3.0)) > P_FLOOR
    assert sampler._accept._tables[0].size <= 4  # the dense table really stopped at the limit


def test_large_sigma_uses_sparse_bounds_and_stays_int64() -> None:
    # σ = 10**6 puts the Laplace keys beyond the dense tables; the draws stay exact int64.
    samples = sample_discrete_gaussian(1e6, 2000, RandomSource.seeded(6))
    assert samples.dtype == np.int64
    assert abs(samples.mean()) < Z * 1e6 / math.sqrt(samples.size)
    assert abs(samples.std() / 1e6 - 1) < Z / math.sqrt(2 * samples.size)
