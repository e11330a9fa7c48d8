"""Budget arithmetic: every conversion between zCDP ρ, noise scales and ε in one place.

Stages and adaptive algorithms plan with these functions and write no ρ ↔ σ ↔ ε formula of their
own (tests/privacy/test_conversions.py checks the source tree for inline ones). Composing events
into one (ε, δ) is the Ledger's job (``accountant``), calibrating a whole plan to a target is
``calibration``'s; here are the closed forms each event's cost follows from.

Units. A *noise multiplier* z is the noise std over the query's L2 sensitivity Δ: σ = z·Δ. A
Gaussian (continuous or discrete) release with multiplier z costs 1/(2z²) zCDP whatever Δ is
(Bun & Steinke 2016, Prop. 1.6; discrete: Canonne, Kamath & Steinke 2020, Thm. 4); k releases
sharing ρ equally therefore take z = √(k/(2ρ)) each. An exponential-mechanism selection that is
ε-DP is ε-bounded-range, hence ε²/8-zCDP (Cesar & Rogers 2021, Lemma 3.2). A ρ-zCDP
composition of Gaussian releases is μ-GDP with μ = √(2ρ) (Dong, Roth & Su 2022), whose
(ε, δ) curve ``gdp_delta`` / ``gdp_epsilon`` give (the audits compare certified μ with it).
"""

from __future__ import annotations

import math


def gaussian_rho(noise_multiplier: float, count: int = 1) -> float:
    """zCDP ρ of ``count`` Gaussian (or discrete Gaussian) releases at noise multiplier z:
    count / (2z²) (Bun & Steinke 2016, Prop. 1.6; CKS 2020, Thm. 4)."""
    return count / (2.0 * noise_multiplier**2)


def gaussian_noise_multiplier(rho: float, count: int = 1) -> float:
    """The noise multiplier z at which ``count`` Gaussian releases together cost zCDP ``rho``:
    z = √(count / (2ρ)) (the inverse of ``gaussian_rho``)."""
    return math.sqrt(count / (2.0 * rho))


def gaussian_sigma(rho: float, sensitivity: float, count: int = 1) -> float:
    """Noise std σ of each of ``count`` Gaussian releases of L2 sensitivity Δ that together cost
    zCDP ``rho``: σ = Δ·√(count / (2ρ)), i.e. Δ/√(2ρ) for one release."""
    return sensitivity * gaussian_noise_multiplier(rho, count)


def exponential_rho(epsilon: float, count: int = 1) -> float:
    """zCDP ρ of ``count`` ε-DP exponential-mechanism selections: count·ε²/8 (bounded range,
    Cesar & Rogers 2021, Lemma 3.2)."""
    return count * epsilon**2 / 8.0


def exponential_epsilon(rho: float, count: int = 1) -> float:
    """ε of each of ``count`` exponential-mechanism selections that together cost zCDP ``rho``:
    ε = √(8ρ / count) (the inverse of ``exponential_rho``)."""
    return math.sqrt(8.0 * rho / count)


def dpsgd_noise_multiplier_guess(sample_rate: float, steps: int, rho: float) -> float:
    """A first noise multiplier for DP-SGD (``steps`` Gaussian steps on Poisson samples at rate
    q) to cost about zCDP ``rho``: z = q·√(2·steps/ρ), from the small-q approximation of the
    subsampled Gaussian's Rényi divergence, ≈ 2q²α/z² per step at order α (Mironov, Talwar &
    Zhang 2019, §3.3). Only a scale that grows monotonically as ρ shrinks: the plan's cost is
    the accountant's (dp-accounting's ``PoissonSampledDpEvent``), and ``calibration`` sets the
    final scale on it."""
    return sample_rate * math.sqrt(2.0 * steps / rho)


def composed_gaussian_multiplier(releases: list[tuple[float, int]]) -> float | None:
    """The one Gaussian that ``count`` releases at each multiplier z compose into, exactly:
    multiplier 1/√(Σ count/z²) (Gaussian differential privacy, Dong, Roth & Su 2019, Cor. 3.3).
    None for no releases."""
    precision = sum(count / z**2 for z, count in releases)
    return 1.0 / math.sqrt(precision) if precision > 0 else None


def gaussian_mu(rho: float) -> float:
    """μ = √(2ρ): the GDP parameter of a Gaussian mechanism (or a composition of them) whose zCDP
    is ρ — the shift, in noise units, that a ρ-zCDP ledger's Gaussian measurements allow."""
    if not rho >= 0:
        raise ValueError(f"rho must be >= 0, got {rho}")
    return math.sqrt(2 * rho)


def gdp_delta(mu: float, epsilon: float) -> float:
    """δ(ε) of the μ-GDP curve: Φ(−ε/μ + μ/2) − e^ε·Φ(−ε/μ − μ/2) (Dong, Roth & Su 2022, Cor. 2.13)."""
    from scipy import stats  # imported here: planning needs none of this

    if mu <= 0:
        return 0.0
    a, b = -epsilon / mu + mu / 2, -epsilon / mu - mu / 2
    return float(stats.norm.cdf(a) - math.exp(epsilon + stats.norm.logcdf(b)))


def gdp_epsilon(mu: float, delta: float) -> float:
    """The least ε ≥ 0 with ``gdp_delta(mu, ε)`` ≤ δ: the μ-GDP curve's ε at δ (0 when even ε = 0
    needs no more than δ). A valid ε lower bound from a μ lower bound only for mechanisms whose
    curve is Gaussian."""
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")
    if mu < 0 or not math.isfinite(mu):
        raise ValueError(f"mu must be finite and >= 0, got {mu}")
    if gdp_delta(mu, 0.0) <= delta:
        return 0.0
    from scipy import optimize

    upper = 1.0
    while gdp_delta(mu, upper) > delta:
        upper *= 2
    return float(optimize.brentq(lambda e: gdp_delta(mu, e) - delta, 0.0, upper, xtol=1e-10))
