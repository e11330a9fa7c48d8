"""Value-level fidelity of a synthetic table: what binned TVD hides (issue 24).

Per column, compared with the real table:

- ``distance``: the Kolmogorov–Smirnov distance of a numeric column (the largest gap between the
  two empirical CDFs over the non-missing values, exact: no bins), the total variation distance
  of a categorical one (over its values, missing included);
- ``point_masses``: every value holding at least ``POINT_MASS`` (1 %) of the real rows (0, 100,
  -1, a heaped 40 hours), its share in each table and the absolute error;
- ``fake_spikes``: values holding at least ``SPIKE_SYNTHETIC`` (1 %) of the synthetic rows but
  less than ``SPIKE_REAL`` (0.1 %) of the real ones (a spike at a clipping bound, a bin's edge);
- ``one_offs``: how many of the values that occur exactly once in the real table appear in the
  release (a copied rare value is the first thing a reader of the release can link to a person);
- ``format``: a numeric column's cells as written in the CSVs: integers written as ``30.0`` where
  the real cells are integers, cells with more decimals than any real cell, negative values in a
  column whose real values are never negative, values outside the real column's range.
  Reported, not fixed;
- ``left_out``: the columns the evaluation does not score (id, text, ignored:
  ``synthpriv.evaluation.scored``) get only the copy check: how many distinct real values
  (a text column's public placeholder and values excepted) the release holds. A fresh key equals
  a real one with chance ≤ released × real / 2^64 (synthpriv.ids), so any copy is a leak.

Shares are of all rows (missing cells included), so a point mass that the release loses to
missing cells counts as lost. ``summary`` gives the suite's headline figures; ``ecdf`` /
``categories`` hold what the report's plots draw (quantiles at ``PROBABILITIES``, which reach
into both tails; the top ``TOP_CATEGORIES`` categories and the rest grouped).

NOT differentially private: every figure reads the real table, and the point masses, spikes and
quantiles name real values. For the data holder's own assessment, never for release.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Sequence
from typing import Any

import numpy as np
import pandas as pd

from synthpriv.table import delimiter_of, file_rows

POINT_MASS = 0.01
HEADLINE_MASS = 0.05  # the suite's "worst point-mass error" looks at values this large
SPIKE_SYNTHETIC, SPIKE_REAL = 0.01, 0.001
TOP_CATEGORIES = 10
PROBABILITIES = (0.001, 0.002, 0.005, 0.01, 0.02, 0.05, *np.round(np.arange(0.1, 0.91, 0.05), 2),
                 0.95, 0.98, 0.99, 0.995, 0.998, 0.999)
_INTEGER = re.compile(r"^[+-]?\d+$")
_NUMBER = re.compile(r"^[+-]?(\d*)\.?(\d*)(?:[eE]([+-]?\d+))?$")


def ks_distance(real: np.ndarray, synthetic: np.ndarray) -> float | None:
    """sup_x |F_real(x) − F_synthetic(x)| of two samples (exact, over every value of either);
    None when either is empty."""
    if not real.size or not synthetic.size:
        return None
    real, synthetic = np.sort(real), np.sort(synthetic)
    grid = np.union1d(real, synthetic)
    gap = (np.searchsorted(real, grid, side="right") / real.size
           - np.searchsorted(synthetic, grid, side="right") / synthetic.size)
    return float(np.abs(gap).max())


def _numeric(values: pd.Series) -> np.ndarray:
    """A column as floats (datetimes as nanoseconds), missing cells as NaN."""
    if pd.api.types.is_datetime64_any_dtype(values):
        out = values.astype("int64").astype(float).to_numpy()
        out[values.isna().to_numpy()] = np.nan
        return out
    return pd.to_numeric(values.astype("object"), errors="coerce").to_numpy(dtype=float)


def _labels(values: pd.Series) -> pd.Series:
    """A column's non-missing cells as text labels (categories, text, booleans)."""
    present = values[values.notna()]
    return present.astype(str)


def _shares(counts: pd.Series, rows: int) -> pd.Series:
    return counts / rows if rows else counts.astype(float)


def _key(value: object) -> object:
    """A value as the report shows it: a float that is an integer as an int."""
    if isinstance(value, float | np.floating) and float(value).is_integer():
        return int(value)
    return value.item() if hasattr(value, "item") else value


def _mass_figures(real_counts: pd.Series, synth_counts: pd.Series, n_real: int, n_synth: int,
                  spike: tuple[float, float] = (SPIKE_SYNTHETIC, SPIKE_REAL),
                  ) -> tuple[list[dict], list[dict]]:
    """Point masses of the real column and fake spikes of the synthetic one (shares of rows;
    ``spike``: the synthetic share at or above which a value is a spike, and the real share
    below which it is fake)."""
    real_share, synth_share = _shares(real_counts, n_real), _shares(synth_counts, n_synth)
    spike_synthetic, spike_real = spike
    masses = []
    for value, share in real_share[real_share >= POINT_MASS].sort_values(ascending=False).items():
        synthetic = float(synth_share.get(value, 0.0))
        masses.append({"value": _key(value), "real": float(share), "synthetic": synthetic,
                       "error": abs(synthetic - float(share))})
    spikes = []
    for value, share in synth_share[synth_share >= spike_synthetic].sort_values(
            ascending=False).items():
        real = float(real_share.get(value, 0.0))
        if real < spike_real:
            spikes.append({"value": _key(value), "real": real, "synthetic": float(share)})
    return masses, spikes


def _one_offs(real_counts: pd.Series, synth_counts: pd.Series) -> dict:
    """Values that occur exactly once in the real column, and how many of them the release
    holds (any number of times)."""
    singles = real_counts.index[real_counts.to_numpy() == 1]
    copied = int(pd.Index(singles).isin(synth_counts.index).sum())
    return {"real": len(singles), "copied": copied,
            "share": copied / len(singles) if len(singles) else None}


def copied_values(real: pd.Series, synthetic: pd.Series, public: Collection[str] = ()) -> dict:
    """A left-out column (id, text): its real one-offs copied (``_one_offs``), and how many of
    its distinct real values, ``public`` ones excepted, the release holds (any number of times)."""
    real_counts, synth_counts = _labels(real).value_counts(), _labels(synthetic).value_counts()
    real_counts = real_counts[~real_counts.index.isin(list(public))]
    return {"one_offs": _one_offs(real_counts, synth_counts), "real": len(real_counts),
            "copied": int(real_counts.index.isin(synth_counts.index).sum())}


def _decimals(cell: str) -> int | None:
    """Digits after the decimal point a number cell is written with (exponent counted: 1.5e-3
    has 4); None for a cell that is not a number."""
    match = _NUMBER.match(cell)
    if not match or not (match.group(1) or match.group(2)):
        return None
    exponent = int(match.group(3) or 0)
    return max(0, len(match.group(2)) - exponent)


def format_checks(real_cells: pd.Series, synthetic_cells: pd.Series, real: np.ndarray,
                  synthetic: np.ndarray) -> dict:
    """How a numeric column's synthetic cells are written, against the real cells: the share of
    non-empty synthetic cells that write an integer with a decimal point (``30.0``) when every
    real cell is an integer, that have more decimals than the most any real cell has, the
    share of synthetic values below 0 when no real value is, and the share of synthetic values
    outside [real min, real max] (``outside``: a fake tail, or values a bound clipped beyond)."""
    real_text = real_cells.astype(str).str.strip()
    synth_text = synthetic_cells.astype(str).str.strip()
    real_text, synth_text = real_text[real_text != ""], synth_text[synth_text != ""]
    real_decimals = [d for d in map(_decimals, real_text) if d is not None]
    synth_decimals = np.array([d if d is not None else -1 for d in map(_decimals, synth_text)])
    most = max(real_decimals, default=0)
    integers = bool(len(real_text)) and bool(real_text.str.match(_INTEGER).all())
    as_float = 0
    if integers and len(synth_text):
        written = ~synth_text.str.match(_INTEGER).to_numpy()
        values = pd.to_numeric(synth_text, errors="coerce").to_numpy(dtype=float)
        as_float = int((written & np.isfinite(values) & (np.mod(values, 1) == 0)).sum())
    n = len(synth_text)
    present_real, present_synth = real[~np.isnan(real)], synthetic[~np.isnan(synthetic)]
    non_negative = bool(present_real.size) and bool(present_real.min() >= 0)
    negative = int((present_synth < 0).sum()) if non_negative else 0
    outside = 0
    if present_real.size:
        outside = int(((present_synth < present_real.min())
                       | (present_synth > present_real.max())).sum())
    return {
        "real_integers": integers,
        "integer_as_float": as_float / n if n else 0.0,
        "real_max_decimals": most,
        "synthetic_max_decimals": int(synth_decimals.max()) if n else 0,
        "more_decimals": float((synth_decimals > most).mean()) if n else 0.0,
        "real_non_negative": non_negative,
        "negative": negative / present_synth.size if present_synth.size else 0.0,
        "outside": outside / present_synth.size if present_synth.size else 0.0,
    }


def _numeric_column(real: pd.Series, synthetic: pd.Series, spike: tuple[float, float]) -> dict:
    r, s = _numeric(real), _numeric(synthetic)
    r_present, s_present = r[~np.isnan(r)], s[~np.isnan(s)]
    real_counts = pd.Series(r_present).value_counts()
    synth_counts = pd.Series(s_present).value_counts()
    masses, spikes = _mass_figures(real_counts, synth_counts, r.size, s.size, spike)
    ecdf = None
    if r_present.size and s_present.size:
        ecdf = {"probabilities": list(PROBABILITIES),
                "real": np.quantile(r_present, PROBABILITIES).tolist(),
                "synthetic": np.quantile(s_present, PROBABILITIES).tolist(),
                "real_range": [float(r_present.min()), float(r_present.max())],
                "synthetic_range": [float(s_present.min()), float(s_present.max())]}
    return {
        "kind": "numeric", "distance_name": "KS", "distance": ks_distance(r_present, s_present),
        "missing": {"real": float(np.isnan(r).mean()) if r.size else 0.0,
                    "synthetic": float(np.isnan(s).mean()) if s.size else 0.0},
        "point_masses": masses, "fake_spikes": spikes,
        "one_offs": _one_offs(real_counts, synth_counts), "ecdf": ecdf,
        "values": (r, s),
    }


def _categorical_column(real: pd.Series, synthetic: pd.Series, spike: tuple[float, float]) -> dict:
    real_counts, synth_counts = _labels(real).value_counts(), _labels(synthetic).value_counts()
    n_real, n_synth = len(real), len(synthetic)
    real_share, synth_share = _shares(real_counts, n_real), _shares(synth_counts, n_synth)
    missing = {"real": float(real.isna().mean()) if n_real else 0.0,
               "synthetic": float(synthetic.isna().mean()) if n_synth else 0.0}
    gap = real_share.sub(synth_share, fill_value=0.0).abs().sum()
    tvd = 0.5 * (float(gap) + abs(missing["real"] - missing["synthetic"]))
    masses, spikes = _mass_figures(real_counts, synth_counts, n_real, n_synth, spike)
    top = real_share.sort_values(ascending=False)
    shown, rest = list(top.index[:TOP_CATEGORIES]), top.index[TOP_CATEGORIES:]
    others = synth_share.index.difference(pd.Index(shown))
    categories = {
        "labels": [str(v) for v in shown],
        "real": [float(top[v]) for v in shown],
        "synthetic": [float(synth_share.get(v, 0.0)) for v in shown],
        "other_count": int(len(rest.union(others))),
        "other_real": float(real_share[rest].sum()),
        "other_synthetic": float(synth_share[others].sum()),
        "missing": missing,
    }
    return {
        "kind": "categorical", "distance_name": "TVD", "distance": tvd, "missing": missing,
        "point_masses": masses, "fake_spikes": spikes,
        "one_offs": _one_offs(real_counts, synth_counts), "categories": categories,
    }


def value_fidelity(
    real: pd.DataFrame,
    synthetic: pd.DataFrame,
    numeric_columns: Sequence[str],
    *,
    real_cells: pd.DataFrame | None = None,
    synthetic_cells: pd.DataFrame | None = None,
    left_out: dict[str, str] | None = None,
    public: dict[str, set[str]] | None = None,
    spike: tuple[float, float] = (SPIKE_SYNTHETIC, SPIKE_REAL),
) -> dict[str, Any]:
    """Every figure of the module docstring for each column of ``real`` (parsed tables), and
    the ``summary``. ``real_cells`` / ``synthetic_cells``: the same tables' cells as written in
    their CSVs (text; rows need not match the parsed ones), for the format checks, which are
    skipped (``format`` None) without them. ``left_out`` (column: reason, ``scored.left_out``):
    not scored, only checked for copied real values (``public``: a column's public values).
    ``spike``: the fake spikes' thresholds (synthetic share at or above, real share below)."""
    numeric = set(numeric_columns)
    left_out, public = left_out or {}, public or {}
    columns: dict[str, dict] = {}
    unscored: dict[str, dict] = {}
    for name in real.columns:
        if name not in synthetic.columns:
            continue
        if name in left_out:
            unscored[name] = {"reason": left_out[name],
                              **copied_values(real[name], synthetic[name], public.get(name, set()))}
            continue
        if name in numeric:
            column = _numeric_column(real[name], synthetic[name], spike)
            r, s = column.pop("values")
            column["format"] = None
            if (real_cells is not None and synthetic_cells is not None
                    and name in real_cells.columns and name in synthetic_cells.columns):
                column["format"] = format_checks(real_cells[name], synthetic_cells[name], r, s)
        else:
            column = _categorical_column(real[name], synthetic[name], spike)
        columns[name] = column
    summary = summarise(columns)
    summary["left_out_copied"] = {n: c["copied"] for n, c in unscored.items() if c["copied"]}
    return {"columns": columns, "left_out": unscored, "summary": summary,
            "thresholds": {"point_mass": POINT_MASS, "headline_mass": HEADLINE_MASS,
                           "spike_synthetic": spike[0], "spike_real": spike[1]}}


def summarise(columns: dict[str, dict]) -> dict[str, Any]:
    """The headline figures: mean KS over numeric columns, mean TVD over categorical ones, the
    worst point-mass error among values holding ≥ ``HEADLINE_MASS`` of a numeric column (and
    where; a category's error is part of its column's TVD), the
    fake spikes, the share of real one-off values copied, and how many numeric columns fail
    each format check."""
    ks = [c["distance"] for c in columns.values() if c["kind"] == "numeric" and c["distance"] is not None]
    tvd = [c["distance"] for c in columns.values() if c["kind"] == "categorical"]
    worst: dict[str, Any] = {"error": None, "column": None, "value": None}
    for name, column in columns.items():
        for mass in column["point_masses"] if column["kind"] == "numeric" else ():
            if mass["real"] >= HEADLINE_MASS and (worst["error"] is None or mass["error"] > worst["error"]):
                worst = {"error": mass["error"], "column": name, "value": mass["value"],
                         "real": mass["real"], "synthetic": mass["synthetic"]}
    singles = sum(c["one_offs"]["real"] for c in columns.values())
    copied = sum(c["one_offs"]["copied"] for c in columns.values())
    formats = [c["format"] for c in columns.values() if c.get("format")]
    return {
        "mean_ks": float(np.mean(ks)) if ks else None,
        "max_ks": float(np.max(ks)) if ks else None,
        "mean_categorical_tvd": float(np.mean(tvd)) if tvd else None,
        "worst_point_mass": worst,
        "fake_spikes": sum(len(c["fake_spikes"]) for c in columns.values()),
        "columns_with_fake_spikes": [n for n, c in columns.items() if c["fake_spikes"]],
        "one_offs_real": singles, "one_offs_copied": copied,
        "one_off_share": copied / singles if singles else None,
        "format_checked_columns": len(formats),
        "integer_as_float_columns": sum(f["integer_as_float"] > 0 for f in formats),
        "more_decimals_columns": sum(f["more_decimals"] > 0 for f in formats),
        "negative_columns": sum(f["negative"] > 0 for f in formats),
    }


def csv_cells(source: object, rows: int | None) -> pd.DataFrame | None:
    """The first ``rows`` rows of a CSV file's cells as text (for the format checks); None for
    a table in memory or a Parquet file, whose cells are typed, not written."""
    if isinstance(source, pd.DataFrame) or source is None:
        return None
    path = str(source)
    if not path.lower().endswith((".csv", ".csv.gz", ".txt")):
        return None
    if delimiter_of(source) == ",":
        frame = pd.read_csv(path, dtype=str, keep_default_na=False, nrows=rows,
                            encoding="utf-8-sig")
    else:  # data.delimiter (a DelimitedPath): the run's reader
        cells = file_rows(source)
        frame = pd.DataFrame(cells[1:] if rows is None else cells[1:rows + 1], columns=cells[0])
    return frame.rename(columns=lambda c: c.strip())
