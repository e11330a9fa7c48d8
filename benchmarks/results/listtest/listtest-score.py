"""Score the seeded AIM releases of run-state.sh as the suite does (2-/3-way TVD against train)."""
import sys
from pathlib import Path

sys.path.insert(0, "benchmarks")
import suite  # noqa: E402

D = Path("/tmp/listtest-cache-before/suite/hhs_breaches")
schema = suite.holdout_schema(D / "schema-draft.yaml")
target = sys.argv[1]
for side in ("before", "after"):
    for seed in range(1, 9):
        s = suite.score(Path("/tmp/listtest-data/hhs/train.csv"),
                        Path(f"/tmp/listtest-state/{side}/out{seed}/synthetic.csv"),
                        Path("/tmp/listtest-data/hhs/test.csv"), schema, target)
        print(f"{side} seed {seed}: 2-way {s['tvd_2']:.3f} 3-way {s['tvd_3']:.3f}", flush=True)
