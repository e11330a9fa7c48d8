"""Private selection of which marginals to measure: MST (McKenna, Miklau & Sheldon 2021) and the
AIM score (McKenna et al. 2022).

Both select with the exponential mechanism over quality scores of L1 form
``||M_r(D) - M_r(model)||_1``: the model is post-processing of earlier noisy measurements, so under
add/remove one row each score changes by at most 1 (times the candidate's weight).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from itertools import combinations

import numpy as np

from synthpriv.domain import CountSource
from synthpriv.privacy.mechanisms import exponential_mechanism

Clique = tuple[str, ...]


def l1_error(true_counts: np.ndarray, model_counts: np.ndarray) -> float:
    """||M(D) - M(model)||_1 in counts: the selection score. Only M(D) depends on the data, so
    under add/remove one row the score changes by at most 1 (2 under replace-one)."""
    return float(np.abs(true_counts - model_counts).sum())


def mst_select(
    data: CountSource,
    model_marginal: Callable[[Clique], np.ndarray],
    epsilon: float,
    sensitivity: float,
    rng: np.random.Generator,
) -> list[Clique]:
    """A maximum spanning tree over attribute pairs, each edge chosen by the exponential mechanism.

    Kruskal's algorithm with noisy choices: each of the (d - 1) rounds picks, among pairs joining
    two components, one with probability ∝ exp(ε·score/(2Δ)), score = the pair's L1 error under the
    current (1-way) model. Costs d - 1 exponential mechanisms at ``epsilon`` each.
    """
    attributes = data.domain.attributes
    pairs = list(combinations(attributes, 2))
    truth = data.marginals(pairs)  # one pass over the data for every pair
    scores = {pair: l1_error(truth[pair], model_marginal(pair)) for pair in pairs}
    import networkx as nx  # here: a plan imports this module but runs no selection (issue 26)

    components = nx.utils.UnionFind(attributes)
    chosen: list[Clique] = []
    for _ in range(len(attributes) - 1):
        open_pairs = [p for p in pairs if components[p[0]] != components[p[1]]]
        pick = exponential_mechanism(
            np.array([scores[p] for p in open_pairs]), epsilon, sensitivity, rng
        )
        chosen.append(open_pairs[pick])
        components.union(*open_pairs[pick])
    return chosen


def workload(attributes: Sequence[str], degree: int) -> list[Clique]:
    """All marginals of exactly ``degree`` attributes (AIM's default workload)."""
    return list(combinations(attributes, min(degree, len(attributes))))


def downward_closure(cliques: Sequence[Clique]) -> list[Clique]:
    """Every non-empty subset of every clique, each once, in a stable order."""
    closure = {sub for c in cliques for k in range(1, len(c) + 1) for sub in combinations(c, k)}
    return sorted(closure, key=lambda c: (len(c), c))


def workload_weights(candidates: Sequence[Clique], queries: Sequence[Clique]) -> dict[Clique, float]:
    """AIM's weight of a candidate: sum over workload queries of |candidate ∩ query|, computed
    as the sum over the candidate's attributes of the number of queries holding each (the same
    integer: a query's attributes are distinct), in time linear in the workload, not
    candidates × queries (7 s of a 500-column run)."""
    holding = Counter(a for q in queries for a in set(q))
    return {c: float(sum(holding[a] for a in set(c))) for c in candidates}
