"""Branch zerofrac: how often ``fraction_flip.rounded_fractions`` passes on OJ's four discount
columns (their exact counts: whole cells, cells in each decimals class, cells rounded into the
one-value buckets {0}, {1}) and on two integer guards, at OJ's safe-draft σ (kind σ 88.1, bounds
σ 44.0, 18 auto columns), against the kinds pass's decimals test alone; 20,000 Gaussian draws.

    /work/main/.venv/bin/python benchmarks/results/zerofrac/flip_rates.py
"""

from __future__ import annotations

from statistics import NormalDist

import numpy as np

KIND_SIGMA, BOUNDS_SIGMA, DRAWS = 88.1, 44.0, 20000
Z = NormalDist().inv_cdf(1 - 1e-3 / (18 * 7))  # kinds.fraction_noise(18)
COLUMNS = {  # whole cells, cells in the one-value buckets, decimals classes 1..6 and more
    "DiscCH": (838, 1070, [113, 119, 0, 0, 0, 0, 0]),
    "DiscMM": (746, 1070, [239, 85, 0, 0, 0, 0, 0]),
    "PctDiscMM": (746, 1070, [0, 0, 0, 0, 7, 317, 0]),
    "PctDiscCH": (838, 1070, [0, 0, 0, 0, 0, 232, 0]),
    "flag (0/1, 1070)": (1070, 1070, [0] * 7),
    "capital-gain-like": (30000, 27000, [0] * 7),
}


def main() -> None:
    rng = np.random.default_rng(0)
    sigma = np.sqrt(3 * BOUNDS_SIGMA**2 + 2 * KIND_SIGMA**2)
    print(f"z {Z:.3f}")
    for name, (whole, rounded, classes) in COLUMNS.items():
        noisy_whole = whole + rng.normal(0, KIND_SIGMA, DRAWS)
        noisy_rounded = rounded + rng.normal(0, BOUNDS_SIGMA * np.sqrt(3), DRAWS)
        noisy_classes = np.array(classes)[None, :] + rng.normal(0, KIND_SIGMA, (DRAWS, 7))
        flip = (((noisy_rounded - noisy_whole)[:, None] + noisy_classes) / sigma).max(1) > Z
        alone = noisy_classes.max(1) > Z * KIND_SIGMA
        print(f"{name:18s} flip test {flip.mean():.3f}  decimals test alone {alone.mean():.3f}  "
              f"either {(flip | alone).mean():.3f}")


if __name__ == "__main__":
    main()
