"""Evaluation at scale: time and peak memory of the evaluation step of ``synthpriv run`` on a
10^6-row (or 10^7-row) Adult-shaped job, beside the synthesis time of the same job.

    nice -n 10 .venv/bin/python benchmarks/evaluation_scale.py --rows 1e6 --modes sampled
    nice -n 10 .venv/bin/python benchmarks/evaluation_scale.py --rows 1e7 --modes sampled
    # the marginal TVDs against the sample size (the marginals size of SampleSizes):
    .venv/bin/python benchmarks/evaluation_scale.py --rows 1e6 --marginal-sizes 20000,50000,100000

Per size: the training table is Adult's training rows drawn with replacement (seeded, numeric columns
jittered within their public bounds: ``scale_benchmark.generate``), the holdout is Adult's test rows
drawn with replacement (a quarter as many rows, another seed). An MST job (configs/adult-mst.yaml
pointed at those files, δ = 1e-8) makes the release with ``synthpriv run --no-evaluation``, timed
as "synthesis" (process start to end; peak RSS from /usr/bin/time). Then each mode runs in a fresh
process that calls ``evaluate_job`` (the evaluation step of ``synthpriv run``) on the landed
release with the config's default evaluation settings (target income, attacks, identity and
Gaussian-copula controls, anonymeter, SDMetrics quality report, the marginal attack): it streams
the input, the holdout and synthetic.csv. "sampled" uses the default ``SampleSizes``; "full"
makes every part read every row (the behaviour before sampling; hours at 10^6 rows). Peak RSS
is the evaluation process's VmHWM: imports, the streamed tables and the evaluation, all of it.
"in-run" is ``synthpriv run`` itself, in one fresh process (what ``command_run`` does: the job
object's ``run``, then ``evaluate_job`` on its result, which reuses the run's plan): its own
release, the synthesis timed from process start to the landed release and the evaluation from
there to the written report, in wall and CPU seconds, so both parts share the load and the
imports they have in common are paid once, as a user's run pays them; the peak RSS is VmHWM
after each part. One JSON line per run goes to ``<out>/results.jsonl``; a table is printed at
the end.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import yaml

STARTED = time.perf_counter()  # this process's start, near enough (the in-run mode's clock)
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from scale_benchmark import generate, high_water_mark  # noqa: E402

ADULT = ROOT / "data" / "adult"
HOLDOUT_SHARE = 4  # holdout rows = rows // HOLDOUT_SHARE


def holdout_csv(path: Path, rows: int, seed: int = 1) -> Path:
    """Adult's test rows drawn with replacement (seeded): real-shaped non-members."""
    base = pd.read_csv(ADULT / "adult_test.csv", dtype=str, keep_default_na=False)
    rng = np.random.default_rng(seed)
    base.iloc[rng.integers(0, len(base), rows)].to_csv(path, index=False)
    return path


def prepare(rows: int, out: Path, resynthesise: bool = True, release: bool = True) -> dict:
    """Data, holdout and the MST release for ``rows`` rows: the data reused when already there,
    the release made and timed again unless ``resynthesise`` is off and one exists (process
    start to end of ``synthpriv run --no-evaluation``; peak RSS by /usr/bin/time); no release
    at all when ``release`` is off (the in-run mode makes its own)."""
    folder = out / f"rows-{rows}"
    folder.mkdir(parents=True, exist_ok=True)
    data = folder / "train.csv"
    if not data.exists():
        generate(data, rows)
    holdout = folder / "holdout.csv"
    if not holdout.exists():
        holdout_csv(holdout, rows // HOLDOUT_SHARE)
    config = yaml.safe_load((ROOT / "configs" / "adult-mst.yaml").read_text())
    config["name"] = f"evaluation-scale-{rows}"
    config["data"].update(path=str(data), schema=str(folder / "train.schema.yaml"),
                          holdout=str(holdout))
    config["budget"]["delta"] = 1e-8
    config["evaluation"]["enabled"] = False
    config_path = folder / "job.yaml"
    config_path.write_text(yaml.safe_dump(config, sort_keys=False))
    if not release:
        return {"config": config_path, "release": folder / "release"}
    release = folder / "release"
    timing = folder / "synthesis.json"
    if resynthesise or not (release / "synthetic.csv").exists() or not timing.exists():
        peak = folder / "synthesis.time"
        start = time.perf_counter()
        subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", str(peak), sys.executable, "-m",
                        "synthpriv.cli", "run", str(config_path), "--out", str(release),
                        "--force", "--no-evaluation"], check=True,
                       env={**os.environ, "PYTHONPATH": str(ROOT)})
        user, system, kib = peak.read_text().split()[-3:]
        timing.write_text(json.dumps({"seconds": time.perf_counter() - start,
                                      "cpu_seconds": float(user) + float(system),
                                      "peak_rss_mib": int(kib) / 1024}))
    timed = json.loads(timing.read_text())
    return {"config": config_path, "release": release, "synthesis_seconds": timed["seconds"],
            "synthesis_cpu_seconds": timed.get("cpu_seconds"),
            "synthesis_peak_rss_mib": timed.get("peak_rss_mib")}


def child(config: Path, release: Path, mode: str) -> dict:
    """Run and measure the evaluation step of ``synthpriv run`` (``evaluate_job``) on the landed
    release, in this fresh process: it streams the input, the holdout and synthetic.csv."""
    from synthpriv.config import load_job
    from synthpriv.evaluation import evaluate as evaluate_module
    from synthpriv.evaluation.job import evaluate_job
    from synthpriv.evaluation.sampling import SampleSizes
    from synthpriv.job import RunResult

    job = load_job(config)
    if mode == "full":  # every part reads every row: the behaviour before sampling
        evaluate_module.default_sizes = lambda settings: SampleSizes.disabled(settings.attack_seed)
    manifest = json.loads((release / "manifest.json").read_text())
    result = RunResult(release, None, None, manifest, job, manifest["records"]["released"])
    start = time.perf_counter()
    report = evaluate_job(job, result, progress=False).report
    seconds = time.perf_counter() - start
    privacy = report.get("privacy", {})
    parts = {"utility": report["utility"]["seconds"],
             "attacks_release": privacy.get("release", {}).get("seconds"),
             "anonymeter": privacy.get("anonymeter", {}).get("seconds"),
             "marginal_attack": privacy.get("marginal_attack", {}).get("seconds")}
    for name, control in privacy.get("controls", {}).items():
        parts[f"control_{name}"] = control.get("seconds", 0) + control.get("generator_seconds", 0)
    parts["read_and_sample"] = report["data"].get("read_seconds")
    gb = report["utility"]["ml_efficacy"]["models"]["gradient_boosting"]
    return {
        "rows": report["data"]["rows_real"], "rows_synthetic": report["data"]["rows_synthetic"],
        "rows_holdout": report["data"]["rows_holdout"], "mode": mode,
        "evaluation_seconds": seconds, "cpu_seconds": cpu_seconds(),
        "peak_rss_mib": high_water_mark() / 2**20, "parts": parts,
        "tvd": {k: report["utility"]["marginals"][k]["mean"] for k in ("1-way", "2-way", "3-way")},
        "tstr_auc": gb["tstr"]["auc"], "trtr_auc": gb["trtr"]["auc"],
        "worst_attack_auc": privacy.get("release", {}).get("worst_case", {}).get("auc"),
        "eps_lower_bound": privacy.get("verdict", {}).get("eps_lower_bound"),
        "sampled": report["data"].get("sampled"),
    }


def in_run(config: Path, release: Path) -> dict:
    """``synthpriv run`` on the job (with its evaluation) in this fresh process, each part timed:
    the synthesis from process start (imports included) to the landed release, the evaluation
    from there to the written report."""
    from synthpriv.config import load_job
    from synthpriv.evaluation.job import evaluate_job
    from synthpriv.job import SynthesisJob

    job = load_job(config)
    job.config.evaluation.enabled = True
    result = SynthesisJob(job).run(release, force=True, evaluate=True)
    synthesis_wall, synthesis_cpu = time.perf_counter() - STARTED, cpu_seconds()
    synthesis_peak = high_water_mark() / 2**20
    report = evaluate_job(job, result, progress=False).report
    wall, cpu = time.perf_counter() - STARTED - synthesis_wall, cpu_seconds() - synthesis_cpu
    gb = report["utility"]["ml_efficacy"]["models"]["gradient_boosting"]
    return {
        "rows": report["data"]["rows_real"], "mode": "in-run", "evaluation_seconds": wall,
        "cpu_seconds": cpu, "synthesis_seconds": synthesis_wall,
        "synthesis_cpu_seconds": synthesis_cpu, "synthesis_peak_rss_mib": synthesis_peak,
        "peak_rss_mib": high_water_mark() / 2**20,
        "tvd": {k: report["utility"]["marginals"][k]["mean"] for k in ("1-way", "2-way", "3-way")},
        "tstr_auc": gb["tstr"]["auc"], "trtr_auc": gb["trtr"]["auc"],
        "worst_attack_auc": report["privacy"]["release"]["worst_case"]["auc"],
    }


def cpu_seconds() -> float:
    """User + system CPU seconds of this process and its finished children."""
    usage, children = (resource.getrusage(resource.RUSAGE_SELF),
                       resource.getrusage(resource.RUSAGE_CHILDREN))
    return usage.ru_utime + usage.ru_stime + children.ru_utime + children.ru_stime


def marginal_sizes(config: Path, release: Path, sizes: list[int]) -> dict:
    """Mean 1-, 2- and 3-way TVD of the release against the real table on the first m rows of
    each table's seeded sample (the rows the evaluation's ``marginals`` part reads at that
    size) for each m in ``sizes`` and on every row; and the sampling floor at m (two disjoint
    m-row samples of the real table). Every row is parsed and held: minutes and GBs at 10^6."""
    from synthpriv.config import load_job
    from synthpriv.evaluation.sampling import STREAMS, sample_file
    from synthpriv.evaluation.utility import Discretizer, marginal_tvd

    job = load_job(config)
    numeric = list(job.schema.numeric_names)
    real = sample_file(job.data_path, job.schema, None, 0, STREAMS["real"]).rows
    synthetic = sample_file(release / "synthetic.csv", job.schema, None, 0,
                            STREAMS["synthetic"]).rows

    def tvds(a: pd.DataFrame, b: pd.DataFrame) -> list[float]:
        discretizer = Discretizer.fit(a, numeric)
        codes_a, codes_b = discretizer.transform(a), discretizer.transform(b)
        return [marginal_tvd(codes_a, codes_b, k, sizes=discretizer.sizes,
                             max_marginals=500 if k == 3 else None)["mean"] for k in (1, 2, 3)]

    result = {}
    for m in [*sizes, len(real)]:
        floor = tvds(real.iloc[:m], real.iloc[m:2 * m]) if 2 * m <= len(real) else None
        result[m] = {"tvd": tvds(real.iloc[:m], synthetic.iloc[:m]), "floor": floor}
        print(m, json.dumps(result[m]), flush=True)
    return result


def table(rows: list[dict]) -> str:
    """The runs as a Markdown table."""
    lines = ["| rows | mode | synthesis s (CPU s) | evaluation s (CPU s) | eval / synthesis, wall "
             "(CPU) | peak RSS MiB: synthesis, evaluation | TVD 2-way | TSTR AUC | worst attack AUC |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        synthesis, evaluation = r["synthesis_seconds"], r["evaluation_seconds"]
        cpu, eval_cpu = r.get("synthesis_cpu_seconds") or float("nan"), r["cpu_seconds"]
        lines.append(
            f"| {r['rows']:,} | {r['mode']} | {synthesis:.0f} ({cpu:.0f}) | {evaluation:.0f} "
            f"({eval_cpu:.0f}) | {evaluation / synthesis:.2f} ({eval_cpu / cpu:.2f}) | "
            f"{r.get('synthesis_peak_rss_mib') or float('nan'):,.0f}, {r['peak_rss_mib']:,.0f} | "
            f"{r['tvd']['2-way']:.4f} | "
            f"{r['tstr_auc']:.4f} | {r['worst_attack_auc']:.3f} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", default="1e6", help="comma-separated sizes, e.g. 1e6,1e7")
    parser.add_argument("--modes", default="sampled,full",
                        help="comma-separated: sampled, full, in-run")
    parser.add_argument("--repeats", type=int, default=1, help="runs of each mode")
    parser.add_argument("--out", type=Path, default=Path("/tmp/evaluation-scale"))
    parser.add_argument("--reuse-release", action="store_true",
                        help="keep a release (and its timing) made by an earlier run")
    parser.add_argument("--marginal-sizes", help="comma-separated sample sizes: print the "
                        "marginal TVDs at each against every row (the release must exist)")
    parser.add_argument("--child", nargs=3, metavar=("CONFIG", "RELEASE", "MODE"),
                        help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        config, release, mode = Path(args.child[0]), Path(args.child[1]), args.child[2]
        print(json.dumps(in_run(config, release) if mode == "in-run" else
                         child(config, release, mode)))
        return
    args.out.mkdir(parents=True, exist_ok=True)
    if args.marginal_sizes:
        for rows in (int(float(r)) for r in args.rows.split(",")):
            folder = args.out / f"rows-{rows}"
            marginal_sizes(folder / "job.yaml", folder / "release",
                           [int(float(m)) for m in args.marginal_sizes.split(",")])
        return
    results = []
    for rows in (int(float(r)) for r in args.rows.split(",")):
        modes = args.modes.split(",")
        separate = [mode for mode in modes if mode != "in-run"]
        prepared = prepare(rows, args.out, resynthesise=not args.reuse_release,
                           release=bool(separate))
        for mode in [mode for mode in modes for _ in range(args.repeats)]:
            release = prepared["release"]
            if mode == "in-run":
                release = release.with_name("release-in-run")
            done = subprocess.run(
                [sys.executable, __file__, "--child", str(prepared["config"]), str(release), mode],
                check=True, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)})
            result = json.loads(done.stdout.strip().splitlines()[-1])
            if mode != "in-run":
                result.update(synthesis_seconds=prepared["synthesis_seconds"],
                              synthesis_cpu_seconds=prepared["synthesis_cpu_seconds"],
                              synthesis_peak_rss_mib=prepared["synthesis_peak_rss_mib"])
            results.append(result)
            with (args.out / "results.jsonl").open("a") as handle:
                handle.write(json.dumps(result) + "\n")
            print(json.dumps(result), flush=True)
    print(table(results))


if __name__ == "__main__":
    main()
