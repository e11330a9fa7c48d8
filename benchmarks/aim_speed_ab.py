"""Before/after CPU seconds of AIM on one job: two code trees, run side by side.

Runs ``benchmarks/aim_speed.py`` (seeded, NOT FOR RELEASE) from two source trees at once for
each ε and repeat (both processes share the machine's load alike), then prints the mean and
spread of each tree's CPU seconds (user + system of the whole CLI run) and whether the two
released the same bytes. A tree is a checkout or ``git archive`` of a commit.

    git archive main | tar -x -C /tmp/before
    .venv/bin/python benchmarks/aim_speed_ab.py /tmp/before . configs/adult.yaml \
        --epsilons 1,3,10 --repeats 3 --output benchmarks/results/aim-speed-ab.json
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path


def launch(tree: Path, config: Path, epsilon: float, seed: int, out: Path) -> subprocess.Popen:
    environment = {**os.environ, "PYTHONPATH": str(tree.resolve())}
    command = [sys.executable, str(tree / "benchmarks" / "aim_speed.py"), str(config.resolve()),
               "--epsilon", str(epsilon), "--seed", str(seed), "--out", str(out)]
    return subprocess.Popen(command, env=environment, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)


def last_json(process: subprocess.Popen) -> dict:
    output, _ = process.communicate()
    if process.returncode != 0:
        raise SystemExit(f"aim_speed.py failed (exit {process.returncode})")
    return json.loads(output.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("config", type=Path)
    parser.add_argument("--epsilons", default="1,3")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--output", type=Path)
    args = parser.parse_args()
    rows = []
    folder = Path(tempfile.mkdtemp())
    for repeat in range(args.repeats):
        for epsilon in [float(e) for e in args.epsilons.split(",")]:
            runs = {name: launch(tree, args.config, epsilon, args.seed,
                                 folder / f"{name}-{epsilon:g}-{repeat}" / "release")
                    for name, tree in (("before", args.before), ("after", args.after))}
            result = {name: last_json(process) for name, process in runs.items()}
            rows.append({"epsilon": epsilon, "repeat": repeat, **result})
            print(json.dumps({"epsilon": epsilon, "repeat": repeat,
                              **{n: r["cpu_seconds"] for n, r in result.items()}}), flush=True)
    print("| ε | before CPU s | after CPU s | after / before | same release bytes |")
    print("|---|---|---|---|---|")
    for epsilon in sorted({row["epsilon"] for row in rows}):
        mine = [row for row in rows if row["epsilon"] == epsilon]
        cells = []
        for name in ("before", "after"):
            values = [row[name]["cpu_seconds"] for row in mine]
            spread = statistics.stdev(values) if len(values) > 1 else 0.0
            cells.append((statistics.fmean(values), spread))
        same = all(row["before"]["synthetic_md5"] == row["after"]["synthetic_md5"] for row in mine)
        print(f"| {epsilon:g} | {cells[0][0]:.1f} ± {cells[0][1]:.1f} | "
              f"{cells[1][0]:.1f} ± {cells[1][1]:.1f} | {cells[1][0] / cells[0][0]:.2f} | "
              f"{'yes' if same else 'no'} |")
    if args.output:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(json.dumps({"command": " ".join(sys.argv), "runs": rows},
                                          indent=2) + "\n")


if __name__ == "__main__":
    main()
