"""Branch tails (issue 24 item 4): a released numeric column's histogram by decade (bins of
``--width``) next to the input's, for one seeded release, as a user would look at it. Options as
benchmarks/missnoise.py (``--csv``, ``--schema``, ``--recipe``, ``--epsilon``, ``--delta``,
``--seeds``: the first seed only); ``--column`` picks the column. Run it with PYTHONPATH pointing
at the code to measure."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from missnoise import arguments

from synthpriv import Synthesizer


def main() -> None:
    parser = arguments()
    parser.add_argument("--column", default="age")
    parser.add_argument("--width", type=float, default=10.0)
    args = parser.parse_args()
    real = pd.read_csv(args.csv, skipinitialspace=True)
    seed = int(args.seeds.split(",")[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        synthetic = Synthesizer(args.schema, epsilon=args.epsilon, delta=args.delta,
                                recipe=args.recipe, seed=seed).fit(real).synthetic
    values = real[args.column].dropna().to_numpy(dtype=float)
    released = pd.to_numeric(synthetic[args.column], errors="coerce").dropna().to_numpy(
        dtype=float)
    low = np.floor(min(values.min(), released.min()) / args.width) * args.width
    high = (np.floor(max(values.max(), released.max()) / args.width) + 1) * args.width
    edges = np.arange(low, high + args.width / 2, args.width)
    table = pd.DataFrame({
        "from": edges[:-1], "input": np.histogram(values, edges)[0],
        "released": np.histogram(released, edges)[0]})
    print(f"'{args.column}', seed {seed}: input [{values.min():g}, {values.max():g}], "
          f"released [{released.min():g}, {released.max():g}]")
    print(table.to_string(index=False))


if __name__ == "__main__":
    main()
