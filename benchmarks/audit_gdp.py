"""The tightness audits of MST and AIM (``--stages tight``) in Gaussian-DP terms, from stored scores.

    .venv/bin/python benchmarks/audit_gdp.py --out benchmarks/results/audit-gdp.jsonl \\
        --figure benchmarks/results/audit-gdp.png

For each setting (recipe, ledger ε; δ = 0.1, the audits' 8-row table) this pools the white-box
scores that ``benchmarks/audit.py --scores`` kept (``results/audit-scores/<recipe>-eps<ε>-tight``)
— no new audit runs — and prints, as JSON lines:

* ``mu_lower_bound``: ``gdp_audit.gdp_mu_lower_bound`` at the fixed threshold 0 (the white box is
  a log-likelihood ratio; every run evaluates), distribution-free, confidence 1 − α;
* the ledger's ``ledger_mu`` = √(2ρ) and ``mu_share``; ``discrete_mu``: the exact μ of the same
  test on the ledger's discrete Gaussian measurements (one run's events; AIM's selections aside),
  what a correct white box approaches;
* ε: ``eps_if_gaussian`` (the bound on the μ-GDP curve at δ: valid if the mechanism's curve is
  Gaussian), ``eps_at_ledger_mu`` (the same curve at the ledger's μ: the most such a reading can
  show), the distribution-free ``eps_dp_same_test`` and the Clopper–Pearson audit's ``certified``
  (``empirical_epsilon``, white and black box, 90 %) for comparison with the ledger's ε.

The ledger's ρ comes from one fresh run of the same setting (its manifest); the stored audits'
claimed ε must match that run's (the plan has not changed since), else the script stops.
``--figure`` draws each setting's empirical trade-off curve (FNR against FPR of the pooled white
box) with the μ-GDP curves of the bound and of the ledger's μ.
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
from pathlib import Path

import audit_pool
import numpy as np
from scipy import stats

from synthpriv.evaluation.attack_metrics import roc_curve
from synthpriv.evaluation.audit import TIGHT_STAGES, AuditSetting, audit_runs, ledger_rho, ledger_sigmas
from synthpriv.evaluation.gdp_audit import discrete_gaussian_midpoint_mu, gdp_mu_lower_bound

RESULTS = Path(__file__).resolve().parent / "results"
# (recipe, ledger ε) → the JSON lines its stored audits printed (their claimed ε)
SETTINGS = {
    ("mst", 1.0): "audit-mst-eps1-chunks.jsonl",
    ("mst", 4.0): "audit-mst-eps4-chunks.jsonl",
    ("aim", 1.0): "audit-eps1-chunks.jsonl",
    ("aim", 4.0): "audit-eps4-chunks.jsonl",
}


def fresh_ledger(setting: AuditSetting) -> tuple[float, dict]:
    """The ledger's ε and ledger of one run on each side of ``setting`` (public: the plan)."""
    with tempfile.TemporaryDirectory(prefix="audit-gdp-") as folder:
        _, claimed, ledger = audit_runs(setting, 1, Path(folder))
    return claimed, ledger


def stored_claims(name: str) -> set[float]:
    """The claimed ε (4 decimals) of every stored audit of a setting."""
    lines = (RESULTS / name).read_text().splitlines()
    return {round(json.loads(line)["claimed_epsilon"], 4) for line in lines if line.strip()}


def figures(recipe: str, epsilon: float, delta: float, alpha: float) -> tuple[dict, dict]:
    """One setting's GDP and ε figures, and its pooled scores."""
    setting = AuditSetting(recipe, epsilon, delta, stages=TIGHT_STAGES[recipe])
    claimed, ledger = fresh_ledger(setting)
    claims = stored_claims(SETTINGS[recipe, epsilon])
    if claims != {round(claimed, 4)}:
        raise SystemExit(f"{setting.label}: stored audits claimed ε {sorted(claims)}, a fresh run "
                         f"{claimed:.4f}: the plan changed since; re-run the audits")
    files = sorted((RESULTS / "audit-scores" / f"{recipe}-eps{epsilon:g}-tight").glob("*/*.npz"))
    scores = audit_pool.pooled_scores(files)
    rho = ledger_rho(ledger)
    row = {"setting": setting.label, "stages": "tight", "delta": delta,
           "claimed_epsilon": round(claimed, 4), "ledger_rho": round(rho, 6),
           "audits": len(files), "runs_per_side": int(scores["white_in"].size),
           **audit_pool.gdp_figures(scores, delta, alpha, 0.0, rho),
           "discrete_mu": round(discrete_gaussian_midpoint_mu(ledger_sigmas(ledger)), 4)}
    row["eps_share_if_gaussian"] = round(row["eps_if_gaussian"] / claimed, 4)
    row["clopper_pearson"] = audit_pool.certified(scores, delta, alpha, 0.5)
    return row, scores


def tradeoff(mu: float, fpr: np.ndarray) -> np.ndarray:
    """G_μ(FPR) = Φ(Φ⁻¹(1 − FPR) − μ)."""
    return stats.norm.cdf(stats.norm.isf(fpr) - mu)


def draw(rows: list[dict], scores: list[dict], alpha: float, path: Path) -> None:
    """One panel per setting: the pooled white box's trade-off, G at the bound and the ledger's μ,
    and the threshold-0 test's point with its rates' upper bounds."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    columns = 2
    fig, axes = plt.subplots(math.ceil(len(rows) / columns), columns, figsize=(9, 8.4))
    grid = np.linspace(1e-4, 1 - 1e-4, 400)
    for ax, row, s in zip(np.ravel(axes), rows, scores, strict=True):
        fpr, tpr, _ = roc_curve(s["white_in"], s["white_out"])
        ax.plot(fpr, 1 - tpr, color="black", lw=1, label="white box (pooled runs)")
        ax.plot(grid, tradeoff(row["ledger_mu"], grid), "--", color="tab:red",
                label=f"ledger μ = {row['ledger_mu']:.3f}")
        ax.plot(grid, tradeoff(row["mu_lower_bound"], grid), color="tab:blue",
                label=f"certified μ ≥ {row['mu_lower_bound']:.3f}")
        bound = gdp_mu_lower_bound(s["white_in"], s["white_out"], alpha, 0.0)
        ax.plot(bound["fpr_upper"], bound["fnr_upper"], "o", color="tab:blue", ms=5,
                label=f"threshold 0, upper bounds ({bound['confidence']:.0%})")
        ax.set_title(f"{row['setting']} (ledger ε {row['claimed_epsilon']:g}): certified "
                     f"{row['mu_share']:.1%} of μ\n{row['runs_per_side']:,} runs per side, "
                     f"δ = {row['delta']:g}", fontsize=9)
        ax.set_xlabel("FPR (D's runs called D')")
        ax.set_ylabel("FNR (D' 's runs called D)")
        ax.set_xlim(0, 1)
        ax.set_ylim(0, 1)
        ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--delta", type=float, default=0.1, help="the stored audits' δ")
    parser.add_argument("--alpha", type=float, default=0.05,
                        help="the μ bound holds with confidence 1 - alpha")
    parser.add_argument("--out", type=Path, help="write the JSON lines here")
    parser.add_argument("--figure", type=Path, help="write the trade-off figure here (.png)")
    args = parser.parse_args(argv)
    rows, pooled = [], []
    for recipe, epsilon in SETTINGS:
        row, scores = figures(recipe, epsilon, args.delta, args.alpha)
        print(json.dumps(row), flush=True)
        rows.append(row)
        pooled.append(scores)
    if args.out is not None:
        args.out.write_text("".join(json.dumps(row) + "\n" for row in rows))
    if args.figure is not None:
        draw(rows, pooled, args.alpha, args.figure)
    if any(math.isnan(r["mu_lower_bound"]) for r in rows):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
