"""Throughput of DP-SGD training (rows/s) against the same model trained without DP, on Adult.

The model is the generator stage's autoregressive network over Adult's encoded columns. DP-SGD:
Opacus per-sample gradients (hooks), clipping, noise, Poisson batches of expected size q·N in
micro-batches of ``--physical`` rows. Plain: the same network, Adam, fixed batches of the same
expected size. Timings depend on the machine's load (a shared 2-core machine here).

    .venv/bin/python benchmarks/dpsgd_throughput.py --steps 20 --hidden 64
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
import torch
from opacus import GradSampleModule
from opacus.optimizers import DPOptimizer

from synthpriv.config import load_job
from synthpriv.encoding import TableEncoder
from synthpriv.generators.autoregressive import AutoregressiveModel
from synthpriv.generators.dpsgd import DpSgdSettings, poisson_batch, train_dp_sgd, train_plain
from synthpriv.table import read_table


def _hooks_rows_per_s(model, codes: torch.Tensor, batch: int, settings: DpSgdSettings) -> float:
    """The same DP-SGD steps with Opacus' standard hooks, which materialise every per-sample
    gradient (the alternative to ghost clipping)."""
    wrapped = GradSampleModule(model, loss_reduction="sum")
    optimizer = DPOptimizer(torch.optim.Adam(model.parameters(), lr=settings.learning_rate),
                            noise_multiplier=settings.noise_multiplier,
                            max_grad_norm=settings.max_grad_norm, expected_batch_size=batch,
                            loss_reduction="mean", generator=torch.Generator().manual_seed(0))
    rng, rows = np.random.default_rng(0), 0
    started = time.perf_counter()
    for _ in range(settings.steps):
        indices = poisson_batch(len(codes), settings.sample_rate, rng)
        rows += len(indices)
        chunks = [indices[i:i + settings.physical_batch]
                  for i in range(0, len(indices), settings.physical_batch)]
        for position, chunk in enumerate(chunks):
            wrapped(codes[torch.as_tensor(chunk)]).sum().backward()
            if position < len(chunks) - 1:
                optimizer.signal_skip_step(do_skip=True)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    return rows / (time.perf_counter() - started)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", default="configs/adult-hybrid.yaml")
    parser.add_argument("--sample-rate", type=float, default=0.05)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--hidden", type=int, default=64)
    parser.add_argument("--physical", type=int, default=4096)
    parser.add_argument("--threads", type=int, default=torch.get_num_threads())
    parser.add_argument("--hooks", action="store_true",
                        help="also time Opacus' per-sample-gradient hooks (GradSampleModule)")
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    job = load_job(args.config)
    data = TableEncoder(job.schema).encode(read_table(job.data_path, job.schema))
    codes = torch.as_tensor(data.codes)
    records = data.records  # benchmark only: the release path never uses the true N
    order = list(range(len(data.domain)))
    batch = round(args.sample_rate * records)
    results = {"command": " ".join(__import__("sys").argv), "records": records,
               "expected_batch": batch, "threads": args.threads}

    model = AutoregressiveModel(data.domain.shape, order, args.hidden)
    results["parameters"] = sum(p.numel() for p in model.parameters())
    settings = DpSgdSettings(args.sample_rate, 1.0, 1.0, args.steps, physical_batch=args.physical)
    started = time.perf_counter()
    log = train_dp_sgd(model, codes, batch, settings, np.random.default_rng(0),
                       torch.Generator().manual_seed(0))
    seconds = time.perf_counter() - started
    results["dp_sgd_rows_per_s"] = sum(log.batch_sizes) / seconds

    if args.hooks:
        model = AutoregressiveModel(data.domain.shape, order, args.hidden)
        results["hooks_dp_sgd_rows_per_s"] = _hooks_rows_per_s(model, codes, batch, settings)

    model = AutoregressiveModel(data.domain.shape, order, args.hidden)
    started = time.perf_counter()
    train_plain(model, codes, batch, args.steps, 1e-2, np.random.default_rng(0))
    results["plain_rows_per_s"] = batch * args.steps / (time.perf_counter() - started)
    results["slowdown"] = results["plain_rows_per_s"] / results["dp_sgd_rows_per_s"]
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
