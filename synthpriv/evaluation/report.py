"""Write an evaluation as report.json (every figure), report.md and a self-contained report.html.

The Markdown and the HTML are rendered from one list of sections, so they say the same thing;
the HTML embeds its PNG plots (base64), the Markdown links the copies in ``plots/``. The folder is
written beside a temporary name and renamed into place when complete. An existing folder is
replaced only when it holds nothing but an earlier report's files (``check_report_folder``): a
release or a user's file in it is refused, never deleted.
"""

from __future__ import annotations

import base64
import html
import json
import math
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from synthpriv.errors import ReleaseError
from synthpriv.evaluation.plots import report_figures
from synthpriv.evaluation.scored import blank_columns_note
from synthpriv.release import MANIFEST, SYNTHETIC

JSON, MARKDOWN, HTML = "report.json", "report.md", "report.html"
FPRS = ("0.1", "0.01", "0.001")
READING_ATTACKS = (
    "Each attack scores training rows (members) and holdout rows (non-members); AUC 0.5 is "
    "guessing. TPR at a low FPR is what matters for individuals (Carlini et al. 2022). The "
    "empirical ε is a lower bound that holds with 90% confidence (Clopper–Pearson, threshold "
    "chosen on half the scores and tested on the other half): a DP release cannot exceed its "
    "claimed ε, so a bound above it is a bug signal; a small bound proves nothing (the attack may "
    "be weak). On a single release the members' membership is not randomised by us, so the "
    "release bound is indicative; the shadow attack's bound audits independent runs. The "
    "positive controls (identity = the training rows; SDV GaussianCopula / CTGAN, not DP) show "
    "what the same attacks find when there is something to find."
)


@dataclass
class Section:
    """A titled list of blocks, in order: ("p", text), ("table", header, rows), ("details",
    summary, header, rows) — a table folded under a one-line summary — and ("image", file,
    caption). Text may use **bold**, nothing else."""

    title: str
    blocks: list[tuple] = field(default_factory=list)

    def p(self, text: str) -> Section:
        self.blocks.append(("p", text))
        return self

    def table(self, header: list[str], rows: list[list[str]]) -> Section:
        self.blocks.append(("table", header, rows))
        return self

    def details(self, summary: str, header: list[str], rows: list[list[str]]) -> Section:
        self.blocks.append(("details", summary, header, rows))
        return self

    def image(self, file: str, caption: str) -> Section:
        self.blocks.append(("image", file, caption))
        return self


def fmt(value: object, digits: int = 3) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _ci(values: list[float] | None) -> str:
    return "" if not values else f" [{values[0]:.3f}, {values[1]:.3f}]"


def _attack_rows(label: str, attacks: dict) -> list[list[str]]:
    rows = []
    for name, m in attacks.items():
        tpr = {str(k): v for k, v in m["tpr_at_fpr"].items()}
        rows.append([
            label, name, fmt(m["auc"]) + _ci(m.get("auc_ci")),
            *(fmt(tpr.get(f)) for f in FPRS), fmt(m["advantage"]),
            fmt(m["empirical_epsilon"]["eps_lower_bound"]),
        ])
    return rows


ATTACK_HEADER = [
    "table", "attack", "AUC [95% CI]", "TPR@10%", "TPR@1%", "TPR@0.1%", "advantage", "ε lower bound"
]


def _summary_section(report: dict) -> Section:
    claim = report.get("claim")
    section = Section(f"Evaluation of {report['name']}").p(f"**{report['notice']}**")
    data = report["data"]
    section.p(
        f"Real rows: {data['rows_real']}; synthetic rows: {data['rows_synthetic']}; holdout rows: "
        f"{fmt(data['rows_holdout'])} ({data['holdout_source'] or 'none'}). Created "
        f"{report['created_utc']}, in {report['seconds']:.1f} s."
    )
    if claim:
        section.p(
            f"Claimed guarantee ({claim['source']}): ε = {claim['epsilon']:.4g}, δ = "
            f"{claim['delta']:g}, neighbouring = {claim['neighbouring']}."
        )
    verdict = report.get("privacy", {}).get("verdict")
    if verdict:
        message = verdict["message"]
        section.p(f"**{message}**" if verdict["bug_signal"] else message)
    for note in report["notes"]:
        section.p(f"Note: {note}")
    for warning in report.get("domain_warnings", []):  # columns released all missing
        section.p(f"**Domain step: {warning}**")
    if (blank := blank_columns_note(report.get("domain_warnings", []))) is not None:
        section.p(f"Note: {blank}")
    return section


def _utility_section(report: dict) -> Section:
    utility = report["utility"]
    section = Section("Utility").p(
        f"Total variation distance of marginals on {utility['marginals']['bins']} quantile bins of "
        "the real numeric columns (0 = identical, 1 = disjoint)."
    )
    rows = []
    for order in ("1-way", "2-way", "3-way"):
        m = utility["marginals"].get(order)
        if m:
            worst = m["worst"][0]
            rows.append([order, f"{m['evaluated']}/{m['total']}", fmt(m["mean"]), fmt(m["max"]),
                         " × ".join(worst["columns"])])
    section.table(["marginals", "evaluated", "mean TVD", "max TVD", "worst marginal"], rows)
    assoc = utility["association"]
    worst = assoc["worst"][0] if assoc["worst"] else None
    section.p(
        f"Pairwise association difference |real − synthetic|: mean {fmt(assoc['mean'])}, max "
        f"{fmt(assoc['max'])}" + (f" ({' × '.join(worst['columns'])})." if worst else ".")
    )
    efficacy = utility.get("ml_efficacy")
    if efficacy:
        section.p(
            f"Machine-learning efficacy for '{efficacy['target']}' ({efficacy['task']}), tested on "
            f"{efficacy['rows_holdout']} real holdout rows: TRTR = trained on real, TSTR = trained "
            "on synthetic."
        )
        rows = []
        for model, scores in efficacy["models"].items():
            for metric in scores["trtr"]:
                rows.append([model, metric, fmt(scores["trtr"][metric]), fmt(scores["tstr"][metric]),
                             fmt(scores["tstr_minus_trtr"][metric])])
        section.table(["model", "metric", "TRTR", "TSTR", "TSTR − TRTR"], rows)
    quality = utility.get("sdv_quality")
    if quality:
        props = ", ".join(f"{k} {fmt(v)}" for k, v in quality["properties"].items())
        section.p(f"SDMetrics QualityReport score: {fmt(quality['score'])} ({props}).")
    columns = report["column_fidelity"]["columns"]
    section.p("Fidelity of each column (1-way TVD, worst first):")
    section.table(["column", "1-way TVD"], [[c["column"], fmt(c["tvd"])] for c in columns])
    section.image("marginals.png", "Real vs synthetic: least (top) and most faithful columns")
    section.image("associations.png", "Association matrices, side by side")
    return section


def _mass(entry: dict | None) -> str:
    if not entry:
        return "–"
    return f"{entry['value']}: {entry['real']:.1%} → {entry['synthetic']:.1%}"


def _format_issues(check: dict | None) -> str:
    if check is None:
        return "not checked"
    issues = []
    if check["integer_as_float"]:
        issues.append(f"{check['integer_as_float']:.0%} integers as floats")
    if check["more_decimals"]:
        issues.append(f"{check['more_decimals']:.0%} > {check['real_max_decimals']} decimals "
                      f"(up to {check['synthetic_max_decimals']})")
    if check["negative"]:
        issues.append(f"{check['negative']:.1%} negative")
    return "; ".join(issues) or "ok"


VALUES_INTRO = (
    "Value-level fidelity, without bins: the Kolmogorov–Smirnov distance of each numeric column "
    "(the largest gap between the real and synthetic CDFs) and the TVD of each categorical one; "
    "every value holding ≥ {point_mass:.0%} of the real rows (a point mass) with its share in "
    "each table; fake spikes (≥ {spike_synthetic:.0%} of the synthetic rows, < {spike_real:.1%} "
    "of the real); the values that occur once in the real table and reappear in the release; and "
    "how the synthetic CSV writes numbers (integers as 30.0, more decimals than the real cells, "
    "negatives in a column that has none)."
)


def _values_section(values: dict) -> Section:
    summary = values["summary"]
    section = Section("Values").p(VALUES_INTRO.format(**values["thresholds"]))
    worst = summary["worst_point_mass"]
    share = summary["one_off_share"]
    section.p(
        f"Mean KS {fmt(summary['mean_ks'])} (max {fmt(summary['max_ks'])}); mean categorical TVD "
        f"{fmt(summary['mean_categorical_tvd'])}; worst point-mass error among values ≥ "
        f"{values['thresholds']['headline_mass']:.0%} of a numeric column: "
        + (f"{worst['error']:.3f} ({worst['column']} = {worst['value']}: {worst['real']:.1%} real, "
           f"{worst['synthetic']:.1%} synthetic)" if worst["error"] is not None else "none")
        + f"; fake spikes: {summary['fake_spikes']}; real one-off values in the release: "
        f"{summary['one_offs_copied']} of {summary['one_offs_real']}"
        + (f" ({share:.1%})." if share is not None else ".")
    )
    rows = []
    for name, column in values["columns"].items():
        worst_mass = max(column["point_masses"], key=lambda m: m["error"], default=None)
        spikes = ", ".join(f"{s['value']} ({s['synthetic']:.1%})" for s in column["fake_spikes"][:3])
        once = column["one_offs"]
        rows.append([
            name, f"{column['distance_name']} {fmt(column['distance'])}",
            f"{column['missing']['real']:.1%} → {column['missing']['synthetic']:.1%}",
            str(len(column["point_masses"])), _mass(worst_mass), spikes or "–",
            f"{once['copied']} / {once['real']}",
            _format_issues(column.get("format")) if column["kind"] == "numeric" else "",
        ])
    section.table(["column", "distance", "missing real → synthetic", "point masses",
                   "worst point mass (real → synthetic)", "fake spikes", "one-offs copied",
                   "format"], rows)
    section.image("values.png", "Each column's values: ECDFs on a logit scale (tails "
                  "visible) for numeric columns; top categories and the rest grouped")
    return section


def _attacks_section(privacy: dict) -> Section:
    section = Section("Membership-inference attacks").p(READING_ATTACKS)
    release = privacy["release"]
    section.p(
        f"{release['n_targets_per_class']} member and as many non-member targets per table; "
        f"δ = {privacy['delta']:g}."
    )
    rows = _attack_rows("release", release["attacks"])
    for name, result in privacy.get("controls", {}).items():
        if "failed" in result:
            rows.append([f"{name} (control)", f"failed: {result['failed']}"] + [""] * 6)
        else:
            rows += _attack_rows(f"{name} (control)", result["attacks"])
    section.table(ATTACK_HEADER, rows)
    section.image("roc.png", "ROC curves (linear and log-log)")
    return section


def _shadow_section(shadow: dict) -> Section:
    if "skipped" in shadow:
        return Section("Shadow-model attack").p(f"Skipped: {shadow['skipped']}.")
    section = Section("Shadow-model attack").p(
        f"{shadow['shadow_tables']} shadow tables of {shadow['records_per_table']} rows "
        f"({shadow['train_tables']} to train, {shadow['test_tables']} fresh to test), "
        f"neighbouring = {shadow['neighbouring']}; per-target ε bounds at level "
        f"{shadow['alpha_per_target']:.3g} (Bonferroni), {shadow['seconds']:.1f} s."
    )
    rows = []
    for generator, result in shadow["generators"].items():
        for target in result["targets"]:
            bound = target["empirical_epsilon"]
            rows.append([generator, str(target["row"]), target["kind"], fmt(target["vulnerability"]),
                         fmt(target["auc"]) + _ci(target.get("auc_ci")),
                         fmt(bound["eps_lower_bound"]), fmt(bound["max_certifiable"])])
        rows.append([generator, "all (pooled)", "", "", fmt(result["pooled"]["auc"]),
                     fmt(result["worst_case"]["eps_lower_bound"]) + " (worst target)", ""])
    section.p(
        "A perfect attack on this many test tables certifies at most the last column: to audit a "
        "larger ε, run more shadow tables (evaluation.shadow.shadow_tables)."
    )
    section.table(["generator", "target row", "kind", "kNN distance", "AUC", "ε lower bound",
                   "ε certifiable at most"], rows)
    return section


def _marginal_verdict(generator: str, result: dict, test_tables: int, unit: str = "row") -> str:
    """One generator's result in a sentence: the best target's advantage, the mean AUC with its
    interval, and what that means (``unit``: "row", or "person" with data.person)."""
    best = max(result["targets"], key=lambda t: (t["advantage"], t["auc"]))
    where = f"row {best['row']}" if unit == "row" else f"the person of row {best['row']}"
    head = (f"{generator}: best advantage {fmt(best['advantage'], 2)} ({where}, AUC "
            f"{fmt(best['auc'])}{_ci(best.get('auc_ci'))}); mean AUC over the "
            f"{len(result['targets'])} exposed {unit}s {fmt(result['mean_auc'])}"
            f"{_ci(result['mean_auc_ci'])}. ")
    if result["power"]:
        return head + ("The mean's interval lies above 0.5: the attack tells, better than "
                       f"guessing, whether an exposed {unit} was in the training table.")
    return head + (f"The mean's interval includes 0.5: on {test_tables} test tables the attack "
                   "shows no advantage over guessing on average (weak evidence either way; one "
                   f"{unit}'s interval spans most of [0, 1] on so few tables).")


def _marginal_section(attack: dict) -> Section:
    title = "Attack built for marginal recipes"
    if "skipped" in attack:
        return Section(title).p(f"Skipped: {attack['skipped']}.")
    unit = "person" if attack.get("target", "one row") != "one row" else "row"
    per_person = ("" if unit == "row" else ", summed over the person's rows (a person is in or "
                  "out of a shadow table with all its rows)")
    section = Section(title).p(
        f"What it tried: for the {len(next(iter(attack['generators'].values()))['targets'])} "
        f"training {unit}s most alone in their cells, it counts the synthetic rows in each row's "
        f"cell of every 1- to {attack['max_order']}-way marginal ({attack['queries']} counts"
        f"{per_person}), learns "
        f"from {attack['train_tables']} shadow runs how the {unit}'s presence moves those counts, "
        f"and guesses membership on {attack['test_tables']} fresh runs (MAMA-MIA, Golob et al. "
        f"2025; TAPAS query attacks). The attacker knows {attack['knows']}. Advantage = the best "
        "TPR − FPR (0 = guessing, 1 = always right); AUC 0.5 = guessing."
    )
    rows = []
    for generator, result in attack["generators"].items():
        section.p(_marginal_verdict(generator, result, attack["test_tables"], unit))
        for target in result["targets"]:
            tpr = {str(k): v for k, v in target["tpr_at_fpr"].items()}
            bound = target["empirical_epsilon"]
            rows.append([
                generator, str(target["row"]), fmt(target["exposure"], 2),
                "; ".join(q["columns"] for q in target["top_queries"]),
                fmt(target["auc"]) + _ci(target.get("auc_ci")), fmt(tpr.get("0.1")),
                fmt(target["advantage"], 2), fmt(bound["eps_lower_bound"]),
                fmt(bound["max_certifiable"]),
            ])
    section.p(
        f"{attack['shadow_tables']} shadow tables of {attack['records_per_table']} rows, "
        f"neighbouring = {attack['neighbouring']}; ε bounds per {unit} at level "
        f"{attack['alpha_per_target']:.3g} (Bonferroni), {attack['seconds']:.1f} s. A perfect "
        "attack on this many test tables certifies at most the last column (raise "
        "evaluation.marginal_attack.shadow_tables to audit a larger ε)."
    )
    first = "target row" if unit == "row" else "target person's first row"
    section.details(f"Each exposed {unit} ({len(rows)} rows)", [
        "generator", first, "exposure", "most telling marginals", "AUC [95% CI]",
        "TPR@10%", "advantage", "ε lower bound", "ε certifiable at most"], rows)
    return section


ANONYMETER_RISKS = {
    "singling_out": "Singling out (does the release single out one training row with a rare value?)",
    "linkability": "Linkability (does it link a training row's two halves of columns?)",
    "inference": "Inference (does it reveal a training row's {secret} from its other columns?)",
}
_BASELINE = re.compile(r"attack = ([-+0-9.eE]*\d), baseline = ([-+0-9.eE]*\d)")
_QUERIES = re.compile(r"only (\d+) singling out queries out of the requested (\d+)")


def anonymeter_warning(text: str, risks: dict) -> str:
    """anonymeter's warning in plain words (the known ones, naming the risk it is about when
    its rates say which), else quoted as it is."""
    found = _BASELINE.search(text)
    if found:
        attack, baseline = (float(v) for v in found.groups())
        which = [kind.replace("_", " ") for kind in ANONYMETER_RISKS
                 if (risks.get(kind, {}).get("attack_rate") or {}).get("value") == attack]
        subject = f"the {which[0]} attack" if len(which) == 1 else "one of its attacks"
        return (f"anonymeter's own check: {subject} did no better than random guessing "
                f"(success {attack:.1%} against the guess's {baseline:.1%}), so that risk cannot "
                "be told from zero — too few successful attacks for a reliable estimate. On a "
                "private release this is the expected outcome, not a fault.")
    found = _QUERIES.search(text)
    if found:
        return (f"anonymeter found only {found.group(1)} singling-out queries of the "
                f"{found.group(2)} asked: too few attacks for a reliable estimate; the singling-"
                "out risk may be underestimated.")
    if "control attack is 100%" in text:
        return ("anonymeter's attack succeeded on every holdout row too: the release's excess "
                "risk cannot be measured.")
    return f"anonymeter warned: {text}"


def _anonymeter_section(risks: dict) -> Section:
    if not risks.get("available"):
        return Section("Anonymeter").p(f"Not run: {risks.get('reason')}")
    section = Section("Anonymeter").p(
        f"Risks from anonymeter (Giomi et al. 2023): how much better its attacks succeed on "
        f"training rows than on holdout rows, 0 = no better, 1 = always; {risks['n_attacks']} "
        "attacks each, with 95% intervals."
    )
    for kind, words in ANONYMETER_RISKS.items():
        low, high = risks[kind]["ci"] or (None, None)
        interval = f" (95% interval {fmt(low)} to {fmt(high)})" if low is not None else ""
        secret = risks["inference"]["secret"]
        section.p(f"{words.format(secret=secret)}: risk {fmt(risks[kind]['risk'])}{interval}.")
    # anonymeter's own warnings (kept off the console while it runs) are explained here instead.
    for warning in risks.get("warnings", []):
        section.p(anonymeter_warning(warning, risks))
    return section


def _constraints_section(constraints: dict) -> Section:
    section = Section("Public constraints").p(
        "Rows that break each of the schema's constraints, in the real table and in the synthetic "
        "one (the release redraws the rows that break a rule, so it has none unless a rule could "
        "not be met). A rule the real table breaks was enforced all the same: see the notes."
    )
    section.table(["rule", "real rows breaking", "synthetic rows breaking"], [
        [rule["rule"], f"{rule['real_rows_breaking']} ({rule['real_fraction']:.2%})",
         f"{rule['synthetic_rows_breaking']} ({rule['synthetic_fraction']:.2%})"]
        for rule in constraints["rules"]
    ])
    return section


def sections(report: dict) -> list[Section]:
    """The report's sections, in reading order."""
    out = [_summary_section(report), _utility_section(report)]
    if report.get("values"):
        out.append(_values_section(report["values"]))
    if report.get("constraints"):
        out.append(_constraints_section(report["constraints"]))
    privacy = report.get("privacy")
    if privacy:
        out.append(_attacks_section(privacy))
        if "marginal_attack" in privacy:
            out.append(_marginal_section(privacy["marginal_attack"]))
        if "shadow" in privacy:
            out.append(_shadow_section(privacy["shadow"]))
        if "anonymeter" in privacy:
            out.append(_anonymeter_section(privacy["anonymeter"]))
    return out


def to_markdown(parts: list[Section]) -> str:
    lines = []
    for i, section in enumerate(parts):
        lines += [("# " if i == 0 else "## ") + section.title, ""]
        for kind, *content in section.blocks:
            if kind == "p":
                lines += [content[0], ""]
            elif kind == "table":
                lines += _markdown_table(*content)
            elif kind == "details":
                summary, *table = content
                lines += [f"<details><summary>{html.escape(summary)}</summary>", "",
                          *_markdown_table(*table), "</details>", ""]
            else:
                file, caption = content
                lines += [f"![{caption}](plots/{file})", ""]
    return "\n".join(lines)


def _markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    return ["| " + " | ".join(header) + " |", "|" + "---|" * len(header),
            *("| " + " | ".join(row) + " |" for row in rows), ""]


def _html_table(header: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    cells = "".join(
        "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{cells}</tbody></table>"


def _inline(text: str) -> str:
    """Escape, then render **bold** (the only Markdown the sections use)."""
    parts = html.escape(text).split("**")
    return "".join(f"<strong>{p}</strong>" if i % 2 else p for i, p in enumerate(parts))


def to_html(parts: list[Section], figures: dict[str, bytes]) -> str:
    body = []
    for i, section in enumerate(parts):
        tag = "h1" if i == 0 else "h2"
        body.append(f"<{tag}>{html.escape(section.title)}</{tag}>")
        for kind, *content in section.blocks:
            if kind == "p":
                body.append(f"<p>{_inline(content[0])}</p>")
            elif kind == "table":
                body.append(_html_table(*content))
            elif kind == "details":
                summary, *table = content
                body.append(f"<details><summary>{html.escape(summary)}</summary>"
                            f"{_html_table(*table)}</details>")
            elif content[0] in figures:
                file, caption = content
                data = base64.b64encode(figures[file]).decode("ascii")
                body.append(f'<figure><img alt="{html.escape(caption)}" src="data:image/png;base64,'
                            f'{data}"><figcaption>{html.escape(caption)}</figcaption></figure>')
    style = (
        "body{font-family:sans-serif;max-width:1200px;margin:2em auto;padding:0 1em;color:#222}"
        "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
        "td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}th{background:#f3f3f3}"
        "img{max-width:100%}strong{color:#a00}summary{cursor:pointer;color:#345}"
    )
    title = html.escape(parts[0].title)
    return (f"<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>{title}</title>"
            f"<style>{style}</style></head><body>\n" + "\n".join(body) + "\n</body></html>\n")


def json_ready(value: object) -> object:
    """``value`` with NaN/inf as None and numpy scalars as Python numbers (strict JSON)."""
    if isinstance(value, dict):
        return {str(k): json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [json_ready(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


PLOTS = "plots"


def check_report_folder(folder: Path) -> None:
    """Refuse, before any work, a report folder that exists and holds anything a report does not
    write (report.json/.md/.html, plots/*.png): a release (its manifest.json or synthetic.csv),
    which the non-DP report would replace, or a user's file, which would be deleted. A missing or
    empty folder, or an earlier report, is fine (the report replaces it whole)."""
    folder = Path(folder).resolve()
    if not folder.exists():
        return
    if not folder.is_dir():
        raise ReleaseError(f"report folder {folder} exists and is not a folder: nothing was "
                           "touched. Choose another --out.")
    release = sorted({SYNTHETIC, MANIFEST} & {p.name for p in folder.iterdir()})
    if release:
        raise ReleaseError(
            f"report folder {folder} holds a release ({', '.join(release)}); the evaluation "
            "report (NOT differentially private) would replace it: nothing was touched. Choose "
            f"another --out, e.g. {folder.parent / (folder.name + '.evaluation')}.")
    foreign = sorted(str(p.relative_to(folder)) for p in folder.rglob("*") if not _ours(folder, p))
    if foreign:
        raise ReleaseError(
            f"report folder {folder} holds files an evaluation report does not write "
            f"({', '.join(foreign[:3])}{', ...' if len(foreign) > 3 else ''}); replacing the "
            "folder would delete them: nothing was touched. Choose another --out, or move them.")


def _ours(folder: Path, path: Path) -> bool:
    """Whether ``path`` (inside ``folder``) is one of the files or folders a report writes."""
    parts = path.relative_to(folder).parts
    if len(parts) == 1:
        return (parts[0] in (JSON, MARKDOWN, HTML) and path.is_file()) or (
            parts[0] == PLOTS and path.is_dir() and not path.is_symlink())
    return (len(parts) == 2 and parts[0] == PLOTS and parts[1].endswith(".png")
            and path.is_file() and not path.is_symlink())


def write_report(folder: Path, report: dict) -> dict[str, Path]:
    """Write report.json, report.md, report.html and plots/*.png into ``folder`` (replaced
    whole: the files appear together). An existing folder is replaced only when it holds an
    earlier report and nothing else (``check_report_folder``). Returns the paths by name."""
    folder = Path(folder).resolve()
    check_report_folder(folder)
    folder.parent.mkdir(parents=True, exist_ok=True)
    figures = report_figures(report)
    parts = sections(report)
    staging = Path(tempfile.mkdtemp(prefix=f".{folder.name}.tmp-", dir=folder.parent))
    try:
        (staging / PLOTS).mkdir()
        for name, data in figures.items():
            (staging / PLOTS / name).write_bytes(data)
        text = json.dumps(json_ready(report), indent=1, default=str, allow_nan=False)
        (staging / JSON).write_text(text + "\n")
        (staging / MARKDOWN).write_text(to_markdown(parts))
        (staging / HTML).write_text(to_html(parts, figures))
        if folder.exists():
            check_report_folder(folder)  # again just before: nothing else appeared meanwhile
            shutil.rmtree(folder)
        os.rename(staging, folder)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {name: folder / name for name in (JSON, MARKDOWN, HTML)}
