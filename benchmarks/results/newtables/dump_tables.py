"""Write development tables to CSV files as a user would have them (branch newtables).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/results/newtables/dump_tables.py \\
        statecrime,scotvote,committee,elec_equip,data,heart /tmp/newtables-data
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from dev_tables import all_tables  # noqa: E402

want, out = sys.argv[1].split(","), Path(sys.argv[2])
out.mkdir(parents=True, exist_ok=True)
for name, text in all_tables():
    short = name.split("/")[-1]
    if short in want:
        (out / f"{short}.csv").write_text(text)
        print(name, len(text))
