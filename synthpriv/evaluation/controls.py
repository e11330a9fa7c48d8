"""Positive controls: generators with NO privacy guarantee, attacked like the release.

They show what the attacks can find when there is something to find: the identity "generator"
(the training rows themselves) is the ceiling, SDV's GaussianCopula (fast) and CTGAN (slow, opt-in)
are ordinary non-DP generators. Their outputs read the real table directly and are never released.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence

import pandas as pd

from synthpriv.evaluation.attacks import identity_generator
from synthpriv.evaluation.utility import sdv_metadata

CTGAN_EPOCHS = 30


def _sdv_synthesizer(kind: str, columns: Sequence[str], numeric_columns: Sequence[str], seed: int):
    """An SDV single-table synthesizer over SDMetrics-style metadata (numerical/categorical)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from sdv.metadata import Metadata
        from sdv.single_table import CTGANSynthesizer, GaussianCopulaSynthesizer

    metadata = Metadata.load_from_dict(
        {"tables": {"table": sdv_metadata(list(columns), numeric_columns)}}
    )
    if kind == "gaussian_copula":
        # Beta marginals (SDV's default) for numeric columns. A categorical column reaches the
        # copula as SDV's UniformEncoder made it, each category a uniform spread over an interval
        # as wide as its frequency: the uniform distribution is that column's exact marginal, and
        # needs no Nelder-Mead fit. On the 5,000-row attack sample of the 10^6-row Adult-shaped
        # table (benchmarks/README.md, "Evaluation at scale"): 2.0 s CPU against 3.6 s with beta
        # everywhere, mean 1-way / 2-way TVD to its training rows 0.26 / 0.43 against 0.36 / 0.57.
        # ('norm' or 'truncnorm' everywhere is faster still but less faithful: 0.28-0.30 1-way.)
        numeric = set(numeric_columns)
        categorical = [c for c in columns if c not in numeric]
        return GaussianCopulaSynthesizer(
            metadata, numerical_distributions=dict.fromkeys(categorical, "uniform"))
    import torch

    torch.manual_seed(seed)
    return CTGANSynthesizer(metadata, epochs=CTGAN_EPOCHS)


def sdv_generator(
    kind: str, train: pd.DataFrame, numeric_columns: Sequence[str], seed: int = 0
) -> pd.DataFrame:
    """Fit SDV's ``kind`` ("gaussian_copula" or "ctgan") on ``train`` and sample as many rows.

    NOT differentially private: a reference point for utility and a positive control for attacks.
    """
    synthesizer = _sdv_synthesizer(kind, list(train.columns), numeric_columns, seed)
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            synthesizer.fit({"table": train.reset_index(drop=True)})
            sample = synthesizer.sample(len(train))
    finally:
        logging.disable(logging.NOTSET)
    sample = sample["table"] if isinstance(sample, dict) else sample
    return sample[list(train.columns)].reset_index(drop=True)


def control_generators() -> dict[str, Callable[[pd.DataFrame, Sequence[str], int], pd.DataFrame]]:
    """Name -> generator(train, numeric_columns, seed) of every positive control."""
    return {
        "identity": lambda train, numeric, seed: identity_generator(train),
        "gaussian_copula": lambda train, numeric, seed: sdv_generator(
            "gaussian_copula", train, numeric, seed
        ),
        "ctgan": lambda train, numeric, seed: sdv_generator("ctgan", train, numeric, seed),
    }
