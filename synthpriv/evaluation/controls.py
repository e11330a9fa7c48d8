"""Positive controls: generators with NO privacy guarantee, attacked like the release.

They show what the attacks can find when there is something to find: the identity "generator"
(the training rows themselves) is the ceiling, SDV's GaussianCopula (fast) and CTGAN (slow, opt-in)
are ordinary non-DP generators. Their outputs read the real table directly and are never released.

``cart_generator`` is the sweep's non-DP reference (synthpop's sequential CART, Reiter 2005;
Nowok et al. 2016): strong and fast, a yardstick for the DP curve, not a privacy claim. It copies
real values (each drawn from the training rows in a tree leaf), so it is also a positive control.
To add a control: a function (train, numeric_columns, seed) -> table, named in
``control_generators`` and in the config's ``Control`` names.
"""

from __future__ import annotations

import logging
import warnings
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

from synthpriv.evaluation.attacks import identity_generator
from synthpriv.evaluation.utility import sdv_metadata

CTGAN_EPOCHS = 30
CART_MIN_LEAF = 5  # synthpop's default minbucket; not tuned on any table here


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


def _predictor(values: pd.Series) -> np.ndarray:
    """A column as one float feature for a tree: numbers (dates as their integer time) with
    missing cells below every value; categories as their codes, missing as -1."""
    if pd.api.types.is_datetime64_any_dtype(values):
        numbers = pd.Series(values.to_numpy("datetime64[ns]").astype("int64"), dtype=float)
        numbers[values.isna().to_numpy()] = np.nan
    elif pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
        numbers = pd.to_numeric(values, errors="coerce").astype(float).reset_index(drop=True)
    else:
        return pd.factorize(values.astype(object), sort=True)[0].astype(float)
    low = np.nanmin(numbers.to_numpy()) if numbers.notna().any() else 0.0
    return numbers.fillna(low - 1.0).to_numpy()


def cart_generator(train: pd.DataFrame, numeric_columns: Sequence[str], seed: int = 0) -> pd.DataFrame:
    """Sequential CART (synthpop's default method): the first column drawn from its training
    values, each next column from the training rows in the leaf that its tree (fitted on the
    columns before it) gives the synthetic row. As many rows as ``train``.

    NOT differentially private: every value is copied from a training row. A strong non-private
    reference for utility (and a positive control for attacks)."""
    from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

    rng = np.random.default_rng(seed)
    train = train.reset_index(drop=True)
    n, columns = len(train), list(train.columns)
    numeric = set(numeric_columns)
    features = np.column_stack([_predictor(train[c]) for c in columns])
    donors = np.empty((n, len(columns)), dtype=np.int64)  # the training row each cell copies
    donors[:, 0] = rng.integers(0, n, n)
    for j in range(1, len(columns)):
        model = (DecisionTreeRegressor if columns[j] in numeric else DecisionTreeClassifier)(
            min_samples_leaf=CART_MIN_LEAF, random_state=seed)
        model.fit(features[:, :j], features[:, j])
        synthetic_x = np.column_stack([features[donors[:, k], k] for k in range(j)])
        leaves_train, leaves_synth = model.apply(features[:, :j]), model.apply(synthetic_x)
        order = np.argsort(leaves_train, kind="stable")
        ordered = leaves_train[order]
        start = np.searchsorted(ordered, leaves_synth, side="left")
        count = np.searchsorted(ordered, leaves_synth, side="right") - start
        donors[:, j] = order[start + (rng.random(n) * count).astype(np.int64)]
    return pd.DataFrame({c: train[c].to_numpy()[donors[:, j]] for j, c in enumerate(columns)})


def control_generators() -> dict[str, Callable[[pd.DataFrame, Sequence[str], int], pd.DataFrame]]:
    """Name -> generator(train, numeric_columns, seed) of every positive control."""
    return {
        "identity": lambda train, numeric, seed: identity_generator(train),
        "gaussian_copula": lambda train, numeric, seed: sdv_generator(
            "gaussian_copula", train, numeric, seed
        ),
        "ctgan": lambda train, numeric, seed: sdv_generator("ctgan", train, numeric, seed),
        "cart": cart_generator,
    }
