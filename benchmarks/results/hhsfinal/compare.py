"""hhsfinal (1): hhs_breaches, AIM, eps = 1, safe draft — with and without the list line
(``--list hhs_breaches.State=us_state_code``): remeasure11's cells (main 9e5d96b / 2cd322c; 4
no-list and 2 list runs) against this branch's 8 + 8 on main dbe6e06, and 8 + 8 on the branch's
``bounds.guard_noise`` (run-after.sh). Per figure: mean, sd,
min-max per cell, and the Welch 95 % interval of the difference (runs are unseeded: unpaired).
Figures: mean KS, 2-way TVD and each numeric/date column's KS (``distance_by_column``).

    P=/work/main/.venv/bin/python; R=benchmarks/results/hhsfinal
    $P $R/compare.py > $R/compare.md
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from scipy import stats

R = Path(__file__).resolve().parents[1]
CELLS = {
    "r11 no-list (4)": R / "suite-remeasure11/runs.jsonl",
    "r11 list (2)": R / "suite-remeasure11/lists/runs.jsonl",
    "no-list (8)": R / "hhsfinal/nolist/runs.jsonl",
    "list (8)": R / "hhsfinal/lists/runs.jsonl",
    "guard_noise no-list (8)": R / "hhsfinal/after-nolist/runs.jsonl",
    "guard_noise list (8)": R / "hhsfinal/after-lists/runs.jsonl",
}
COLUMNS = ("Individuals.Affected", "Breach.Submission.Date", "State", "Covered.Entity.Type",
           "Type.of.Breach", "Location.of.Breached.Information")
PAIRS = (("r11 list (2)", "list (8)"), ("r11 no-list (4)", "no-list (8)"),
         ("no-list (8)", "list (8)"), ("r11 no-list (4)", "list (8)"),
         ("no-list (8)", "guard_noise no-list (8)"), ("list (8)", "guard_noise list (8)"))


def records(path: Path) -> list[dict]:
    """hhs_breaches' finished AIM safe runs at eps 1."""
    out = []
    for line in path.read_text().splitlines():
        r = json.loads(line) if line.strip() else {}
        if (r.get("kind") == "run" and r.get("status") == "ok" and r.get("table") == "hhs_breaches"
                and r.get("recipe") == "aim" and r.get("schema_mode") == "safe"
                and r.get("epsilon_target") == 1.0):
            out.append(r)
    return out


def figure(r: dict, name: str) -> float:
    return r[name] if name in ("mean_ks", "tvd_2") else r["distance_by_column"][name]


def welch(a: list[float], b: list[float]) -> str:
    """b - a, its Welch 95 % interval, and 'moved' when it excludes 0."""
    diff = statistics.mean(b) - statistics.mean(a)
    va, vb = statistics.variance(a) / len(a), statistics.variance(b) / len(b)
    se = (va + vb) ** 0.5
    df = (va + vb) ** 2 / (va ** 2 / (len(a) - 1) + vb ** 2 / (len(b) - 1))
    half = stats.t.ppf(0.975, df) * se
    moved = " **moved**" if abs(diff) > half else ""
    return f"{diff:+.3f} [{diff - half:+.3f}, {diff + half:+.3f}]{moved}"


def main() -> None:
    cells = {label: records(path) for label, path in CELLS.items()}
    print("| figure | " + " | ".join(cells) + " | " + " | ".join(f"{b} − {a}" for a, b in PAIRS) + " |")
    print("|---" * (1 + len(cells) + len(PAIRS)) + "|")
    for name in ("mean_ks", "tvd_2") + COLUMNS:
        values = {label: [figure(r, name) for r in rs] for label, rs in cells.items()}
        row = [f"{statistics.mean(v):.3f} ± {statistics.stdev(v):.3f} ({min(v):.3f}–{max(v):.3f})"
               for v in values.values()]
        row += [welch(values[a], values[b]) for a, b in PAIRS]
        print(f"| {name} | " + " | ".join(row) + " |")
    print()
    for label, rs in cells.items():
        print(f"{label}: commits {sorted({r['commit'] for r in rs})}; per run mean KS "
              + ", ".join(f"{r['mean_ks']:.3f}" for r in rs)
              + "; Individuals.Affected " + ", ".join(
                  f"{r['distance_by_column']['Individuals.Affected']:.3f}" for r in rs)
              + "; Breach.Submission.Date " + ", ".join(
                  f"{r['distance_by_column']['Breach.Submission.Date']:.3f}" for r in rs))


if __name__ == "__main__":
    main()
