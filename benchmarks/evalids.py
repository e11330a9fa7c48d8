"""What id and text columns did to the evaluation's figures before they were left out.

Adult's training split (real) against its test split (a stand-in release from the same
distribution), both with an id column of fresh random keys and a text column (distinct real
paragraphs, the release's a placeholder), scored twice: with the schema (id and text left out,
synthpriv.evaluation.scored) and without it (every column scored: the rule before). Attacks off;
TSTR on 'income' against a holdout of the test split's other half. NOT a held-out table for any
default: nothing here is tuned.

    PYTHONPATH=. python benchmarks/evalids.py [rows of each split, default 3000]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pandas as pd

from synthpriv.config import EvaluationConfig
from synthpriv.evaluation.evaluate import evaluate_sources
from synthpriv.ids import KeyMaker
from synthpriv.schema import Schema, load_schema

ADULT = Path(__file__).resolve().parents[1] / "data" / "adult"


def keyed(table: pd.DataFrame, seed: int, real: bool) -> pd.DataFrame:
    keys = KeyMaker(None, np.random.default_rng(seed)).draw(len(table))
    texts = [f"paragraph {seed}-{i}" for i in range(len(table))] if real else ["redacted"] * len(table)
    return table.assign(key=keys, note=texts)


def main() -> None:
    base = load_schema(ADULT / "schema.yaml")
    raw = base.model_dump(mode="json", exclude_none=True)
    raw["columns"] += [{"name": "key", "kind": "id"}, {"name": "note", "kind": "text",
                                                       "placeholder": "redacted"}]
    schema = Schema.model_validate(raw)
    rows = int(sys.argv[1]) if len(sys.argv) > 1 else 3000  # the rule before: a Cramér's V
    # table of keys × keys grows as rows², so the whole of Adult is not scored that way
    train = pd.read_csv(ADULT / "adult_train.csv").sample(rows, random_state=0)
    test = pd.read_csv(ADULT / "adult_test.csv").sample(rows, random_state=1)
    half = len(test) // 2
    tables = {"real": keyed(train, 0, True), "synthetic": keyed(test.iloc[:half], 1, False),
              "holdout": keyed(test.iloc[half:], 2, True)}
    settings = EvaluationConfig(target="income", attacks=False, quality_report=False)
    print("| rule | 1-way TVD | 2-way TVD | 3-way TVD | association | TSTR (GBM) | one-off share |")
    print("|---|---|---|---|---|---|---|")
    for rule, given in (("every column (before)", None), ("modelled only (now)", schema)):
        report = evaluate_sources(tables, given, numeric_columns=base.numeric_names,
                                  settings=settings, progress=False)
        utility, m = report["utility"], report["utility"]["marginals"]
        tstr = utility["ml_efficacy"]["models"]
        gbm = {name: round(model["tstr"]["auc"], 4) for name, model in tstr.items()}
        print(f"| {rule} | {m['1-way']['mean']:.4f} | {m['2-way']['mean']:.4f} | "
              f"{m['3-way']['mean']:.4f} | {utility['association']['mean']:.4f} | {gbm} | "
              f"{report['values']['summary']['one_off_share']} |")


if __name__ == "__main__":
    main()
