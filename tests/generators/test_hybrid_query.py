"""`query` on the hybrid recipe's model (issue 14, item 3): answered by its DP marginals model
where the released rows follow that model, refused with the reason elsewhere; the dpsgd model is
refused with the reason too. No training: the network's weights play no part in the answer."""

from __future__ import annotations

import numpy as np
import pytest

from synthpriv.domain import Dataset, Domain
from synthpriv.errors import ConfigError
from synthpriv.generators.autoregressive import AutoregressiveModel
from synthpriv.generators.guidance import Target
from synthpriv.generators.model import GuidedGenerator
from synthpriv.marginals.estimation import estimate
from synthpriv.marginals.measurement import measure_marginal
from synthpriv.privacy.accountant import Ledger
from synthpriv.privacy.randomness import RandomSource
from synthpriv.released_model import ReleasedModel
from synthpriv.schema import parse_schema

COLUMNS = ("a", "b", "c")
MEASURED = [("a",), ("b",), ("c",), ("a", "b")]


def released(given: int, guided: bool = True, prior: bool = True) -> ReleasedModel:
    rng = np.random.default_rng(3)
    a = rng.integers(0, 3, 500)
    rows = np.stack([a, (a + (rng.random(500) < 0.2)) % 3, rng.integers(0, 3, 500)], axis=1)
    domain = Domain(COLUMNS, (3, 3, 3))
    data, source, ledger = Dataset(rows, domain), RandomSource.seeded(1), Ledger()
    measurements = [measure_marginal(data, c, 2.0, 1.0, source, ledger) for c in MEASURED]
    model = estimate(domain, measurements, iterations=50, max_cells=10_000)
    order = [2, 0, 1]  # with given = 1, the network completes a and b given c
    network = AutoregressiveModel(domain.shape, order, hidden=4, given=given)
    targets = tuple(Target(c, np.asarray(model.project(c))) for c in MEASURED) if guided else ()
    generator = GuidedGenerator(network, domain, targets, model.total,
                                prior=model if prior else None)
    schema = parse_schema({"columns": [{"name": c, "kind": "integer", "lower": 0, "upper": 2}
                                       for c in COLUMNS]}, "t")
    return ReleasedModel(None, {}, schema, generator, measurements, None, list(COLUMNS))


def test_a_raked_marginal_is_the_marginals_models_with_its_standard_errors() -> None:
    release = released(given=0)
    prior = release.model.prior
    for marginal in (["a"], ["b", "a"]):
        table = release.query(marginal)
        np.testing.assert_allclose(table["count"], np.ravel(prior.project(marginal)))
        assert (table["std_error"] > 0).all()


def test_columns_a_conditional_generator_does_not_complete_are_the_priors_draws() -> None:
    release = released(given=1, guided=False)  # no targets: only c is the prior's own draw
    np.testing.assert_allclose(release.query(["c"])["count"],
                               release.model.prior.project(["c"]))
    with pytest.raises(ConfigError, match="drawn jointly by the DP-SGD network"):
        release.query(["a"])


def test_a_marginal_the_network_decides_is_refused_with_the_reason() -> None:
    with pytest.raises(ConfigError, match=r"--marginal a,c: .*no closed form.*synthpriv sample"):
        released(given=0).query(["a", "c"])  # not inside a measured (raked) clique
    with pytest.raises(ConfigError, match="without a marginals model \\(recipe dpsgd\\)"):
        released(given=0, guided=False, prior=False).query(["a"])
