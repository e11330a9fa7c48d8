"""A progress display for a job's steps on stderr (tqdm): which step runs, how many are done, how
long each took, and the share of the plan's privacy budget (zCDP ρ) the finished steps were given.

It watches the job object through its ``Hooks`` (synthpriv.job): it reads public figures only
(the plan, step names, times) and writes nothing but the terminal. Steps inside a stage (AIM's
rounds, DP-SGD's epochs) are not shown one by one: a stage is one step.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synthpriv.job import Hooks
    from synthpriv.plan import Plan


def expected_steps(plan: Plan) -> list[str]:
    """The job's steps in order as ``SynthesisJob`` names them (``hold-back`` only when it runs,
    so it is not counted ahead)."""
    stages = [f"stage:{stage.stage}" for stage in plan.stages if stage.stage != "domain"]
    domain = ["domain"] if any(stage.stage == "domain" for stage in plan.stages) else []
    return [*domain, "read", *stages, "release"]


class StepProgress:
    """A bar over ``plan``'s steps (``hooks()`` to give a job); silent when not ``enabled``."""

    def __init__(self, plan: Plan, enabled: bool = True) -> None:
        self.enabled = enabled
        self.steps = expected_steps(plan)
        self.rho = {f"stage:{s.stage}" if s.stage != "domain" else "domain": s.rho
                    for s in plan.stages}
        self.whole = sum(self.rho.values()) or 1.0  # the plan's ρ, for a display share
        self.given = 0.0
        self.bar = None
        self.started: dict[str, float] = {}

    def hooks(self) -> Hooks:
        from synthpriv.job import Hooks

        return Hooks(started=self._started, finished=self._finished)

    def _open(self) -> None:
        if self.bar is None and self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=len(self.steps), file=sys.stderr, unit="step", leave=False,
                            bar_format="{desc} {bar:20} {n_fmt}/{total_fmt} steps, {elapsed}")

    def _started(self, step: str) -> None:
        self.started[step] = time.perf_counter()
        self._open()
        if self.bar is not None:
            self.bar.set_description_str(f"{step}… (budget given out: "
                                         f"{self.share():.0%} of ρ)")

    def _finished(self, step: str, seconds: float) -> None:
        if step in self.rho:
            self.given += self.rho[step]
        if self.bar is not None and step in self.steps:
            self.bar.update(1)
            self.bar.write(f"  {step}: {seconds:.1f} s", file=sys.stderr)
        if self.bar is not None and self.bar.n >= len(self.steps):
            self.close()

    def share(self) -> float:
        """The share of the plan's ρ the finished steps were given (a display figure)."""
        return self.given / self.whole

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def wanted(progress: bool | None, quiet: bool) -> bool:
    """Whether to show progress: never with ``quiet``; else as asked (``progress``), else only
    when stderr is a terminal."""
    if quiet:
        return False
    if progress is not None:
        return progress
    return sys.stderr.isatty()
