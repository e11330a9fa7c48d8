"""The report's figures, as PNG bytes drawn from the report dict alone (matplotlib, Agg backend).

Like the report, the figures show real-data distributions: NOT differentially private.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from matplotlib.ticker import NullFormatter  # noqa: E402

from synthpriv.evaluation.readable import axis_formatter  # noqa: E402

MAX_BARS = 15
TOP_SHARES = 5  # a wide categorical column's most common categories, always drawn
SKEWED = 20  # largest over smallest share drawn: above it, a log share axis (the tail shows)
REAL, SYNTHETIC = "#4c72b0", "#dd8452"


def png(figure: plt.Figure) -> bytes:
    """The figure as PNG bytes (then closed)."""
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110, bbox_inches="tight")
    plt.close(figure)
    return buffer.getvalue()


def _label(label: object, width: int = 24) -> str:
    text = str(label)
    return text if len(text) <= width else text[: width - 1] + "…"


def paired_bars(ax: plt.Axes, labels: list, real: np.ndarray, synth: np.ndarray) -> None:
    """Real and synthetic shares side by side. When one cell dwarfs the rest (largest share over
    the smallest > ``SKEWED``), the share axis is logarithmic: a 0.9 bar would otherwise flatten
    the tail, where the error is."""
    real, synth = np.asarray(real, float), np.asarray(synth, float)
    x = np.arange(len(labels))
    ax.bar(x - 0.2, real, 0.4, label="real", color=REAL)
    ax.bar(x + 0.2, synth, 0.4, label="synthetic", color=SYNTHETIC)
    ax.set_xticks(x, [_label(label) for label in labels], rotation=60, ha="right", fontsize=7)
    shares = np.concatenate([real, synth])
    positive = shares[shares > 0]
    skewed = positive.size > 0 and positive.max() / positive.min() > SKEWED
    if skewed:
        ax.set_yscale("log")
        few = positive.max() / positive.min() < 100  # within two decades: few major ticks
        ax.yaxis.set_minor_formatter(axis_formatter(leading="25") if few else NullFormatter())
    ax.yaxis.set_major_formatter(axis_formatter())
    ax.set_ylabel("share of rows" + (" (log scale)" if skewed else ""), fontsize=8)


def where_the_error_is(dist: dict) -> tuple[list, np.ndarray, np.ndarray]:
    """A column's cells to draw: a numeric column's bins in order; a categorical column's
    categories by real share, at most ``MAX_BARS`` — the ``TOP_SHARES`` most common, then those
    with the largest |real − synthetic| — the rest grouped as one "other (k)" bar."""
    real, synth = np.asarray(dist["real"], float), np.asarray(dist["synthetic"], float)
    labels = list(dist["labels"])
    if dist.get("numeric"):
        return labels, real, synth
    keep = np.arange(real.size)
    if real.size > MAX_BARS:
        common = np.argsort(-real, kind="stable")[:TOP_SHARES]
        wrong = [i for i in np.argsort(-np.abs(real - synth), kind="stable") if i not in common]
        keep = np.r_[common, wrong[: MAX_BARS - 1 - common.size]].astype(int)
    keep = keep[np.argsort(-real[keep], kind="stable")]
    rest = np.setdiff1d(np.arange(real.size), keep)
    shown = ([labels[i] for i in keep], real[keep], synth[keep])
    if rest.size:
        shown = (shown[0] + [f"other ({rest.size})"], np.append(shown[1], real[rest].sum()),
                 np.append(shown[2], synth[rest].sum()))
    return shown


def marginals_figure(distributions: list[dict]) -> bytes:
    """Real vs synthetic distribution of the least and most faithful columns (grouped bars;
    ``where_the_error_is`` chooses a wide categorical column's bars)."""
    def draw(ax: plt.Axes, dist: dict) -> str:
        paired_bars(ax, *where_the_error_is(dist))
        return f"{dist['column']} — TVD {dist['tvd']:.3f} ({dist['faithful']} faithful)"

    return panel_grid(distributions, draw, panel_height=3.8)


def panel_grid(items: list, draw, panel_height: float, cols: int = 3) -> bytes:
    """One panel per item, ``cols`` a row: ``draw(ax, item)`` draws it and returns its title;
    the unused panels of the last row are blank."""
    rows = max(1, -(-len(items) // cols))
    figure, axes = plt.subplots(rows, cols, figsize=(5 * cols, panel_height * rows), squeeze=False)
    for ax, item in zip(axes.ravel(), items, strict=False):
        ax.set_title(draw(ax, item), fontsize=9)
        ax.legend(fontsize=7)
    for ax in axes.ravel()[len(items):]:
        ax.axis("off")
    figure.tight_layout()
    return png(figure)


def _matrix(values: dict[str, dict[str, float]]) -> tuple[list[str], np.ndarray]:
    names = list(values)
    return names, np.array([[values[a][b] for b in names] for a in names])


def associations_figure(association: dict) -> bytes:
    """Association matrices of the real and synthetic tables and their absolute difference."""
    names, real = _matrix(association["real"])
    _, synth = _matrix(association["synthetic"])
    _, diff = _matrix(association["matrix"])
    figure, axes = plt.subplots(1, 3, figsize=(20, 6.5), layout="constrained")
    panels = (
        ("real", real, "coolwarm", -1, 1),
        ("synthetic", synth, "coolwarm", -1, 1),
        (f"|real − synthetic| (mean {association['mean']:.3f})", diff, "viridis", 0, 1),
    )
    for ax, (title, values, cmap, low, high) in zip(axes, panels, strict=True):
        image = ax.imshow(values, cmap=cmap, vmin=low, vmax=high)
        ax.set_xticks(range(len(names)), names, rotation=90, fontsize=7)
        ax.set_yticks(range(len(names)), names, fontsize=7)
        ax.set_title(title, fontsize=10)
        figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    figure.suptitle("Pairwise association (Pearson r / Cramér's V / correlation ratio)", fontsize=11)
    return png(figure)


def roc_curves(privacy: dict) -> list[tuple[str, dict, str]]:
    """(label, attack metrics, line style) of every ROC curve the report shows."""
    curves = [(f"release: {name}", m, "-") for name, m in privacy["release"]["attacks"].items()]
    for control, result in privacy.get("controls", {}).items():
        attacks = result.get("attacks", {})  # none when the control failed
        curves += [(f"{control} (control): {name}", m, "--") for name, m in attacks.items()]
    for generator, result in privacy.get("shadow", {}).get("generators", {}).items():
        curves.append((f"shadow attack on {generator} (pooled)", result["pooled"], ":"))
    return curves


def roc_figure(privacy: dict) -> bytes:
    """ROC curves of every attack, on linear and log-log axes (the low-FPR regime matters)."""
    figure, axes = plt.subplots(1, 2, figsize=(13, 5.5))
    for label, metrics, style in roc_curves(privacy):
        fpr, tpr = np.asarray(metrics["roc"]["fpr"]), np.asarray(metrics["roc"]["tpr"])
        text = f"{label} (AUC {metrics['auc']:.3f})"
        axes[0].plot(fpr, tpr, style, label=text)
        axes[1].plot(np.maximum(fpr, 1e-4), np.maximum(tpr, 1e-4), style, label=text)
    for ax, scale in zip(axes, ("linear", "log"), strict=True):
        ax.plot([1e-4, 1], [1e-4, 1], color="grey", lw=0.8, label="chance")
        ax.set_xscale(scale)
        ax.set_yscale(scale)
        ax.set_xlabel("false positive rate")
        ax.set_ylabel("true positive rate")
        ax.set_title(f"membership-inference ROC ({scale} axes)")
    axes[0].legend(fontsize=7, loc="lower right")
    return png(figure)


MAX_VALUE_PANELS = 12


def _ecdf_panel(ax: plt.Axes, ecdf: dict) -> None:
    """Both ECDFs from their quantiles on a logit y axis (both tails stretched), with a symlog x
    axis when the values span more than three orders of magnitude."""
    p = np.asarray(ecdf["probabilities"])
    for key, colour in (("real", REAL), ("synthetic", SYNTHETIC)):
        ax.step(ecdf[key], p, where="post", color=colour, label=key)
    ax.set_yscale("logit")
    low, high = ecdf["real_range"]
    span = max(abs(low), abs(high))
    small = min((abs(v) for v in ecdf["real"] if v), default=span)
    if span and small and span / small > 1e3:
        ax.set_xscale("symlog", linthresh=max(small, 1e-12))
        ends = [*ecdf["real_range"], *ecdf["synthetic_range"]]
        ax.set_xlim(min(ends), max(ends))  # symlog would otherwise open a negative half
    ax.xaxis.set_major_formatter(axis_formatter())
    ax.set_ylabel("ECDF (logit scale)", fontsize=8)


def _categories_panel(ax: plt.Axes, categories: dict) -> None:
    """The top categories, the rest grouped as one bar, and missing cells."""
    labels = list(categories["labels"])
    real, synth = list(categories["real"]), list(categories["synthetic"])
    if categories["other_count"]:
        labels.append(f"other ({categories['other_count']})")
        real.append(categories["other_real"])
        synth.append(categories["other_synthetic"])
    if categories["missing"]["real"] or categories["missing"]["synthetic"]:
        labels.append("missing")
        real.append(categories["missing"]["real"])
        synth.append(categories["missing"]["synthetic"])
    paired_bars(ax, labels, np.asarray(real), np.asarray(synth))


def values_figure(values: dict) -> bytes | None:
    """One panel per column, least faithful first (at most ``MAX_VALUE_PANELS``): a numeric
    column's ECDFs, tails included; a categorical column's top categories and the rest grouped.
    None when no column has anything to draw."""
    drawable = [(name, c) for name, c in values["columns"].items()
                if c.get("ecdf") or c.get("categories")]
    drawable.sort(key=lambda item: -(item[1]["distance"] or 0.0))
    drawable = drawable[:MAX_VALUE_PANELS]
    if not drawable:
        return None
    def draw(ax: plt.Axes, item: tuple[str, dict]) -> str:
        name, column = item
        if column.get("ecdf"):
            _ecdf_panel(ax, column["ecdf"])
        else:
            _categories_panel(ax, column["categories"])
        return f"{name[:30]} — {column['distance_name']} {column['distance']:.3f}"

    return panel_grid(drawable, draw, panel_height=3.6)


def report_figures(report: dict) -> dict[str, bytes]:
    """name -> PNG of every figure the report has data for."""
    figures = {
        "marginals.png": marginals_figure(report["column_fidelity"]["distributions"]),
        "associations.png": associations_figure(report["utility"]["association"]),
    }
    values = values_figure(report["values"]) if "values" in report else None
    if values is not None:
        figures["values.png"] = values
    if "privacy" in report:
        figures["roc.png"] = roc_figure(report["privacy"])
    return figures
