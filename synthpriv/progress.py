"""A progress display for a job's steps on stderr (tqdm): which step runs, how many are done, how
long each took, and the share of the plan's privacy budget (zCDP ρ) the finished steps were given.

It watches the job object through its ``Hooks`` (synthpriv.job): it reads public figures only
(the plan, step names, times) and writes nothing but the terminal. Inside a stage, a long loop
reports through ``inner`` (AIM's rounds, DP-SGD's steps, with the share of the stage's budget spent
so far), shown beside the step on the bar; ``Parts`` shows the evaluation's parts one by one.
To show a new loop: call ``inner`` in it with public or DP figures only (the display is
post-processing, but it must not print what no mechanism produced).
"""

from __future__ import annotations

import contextlib
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from synthpriv.job import Hooks
    from synthpriv.plan import Plan


_INNER: ContextVar[Callable[[str], None] | None] = ContextVar("synthpriv_inner", default=None)
REFRESH_SECONDS = 0.25  # the bar is redrawn at most this often from inside a loop


def inner(what: str, done: int, total: int | None = None, spent: float | None = None) -> None:
    """Report progress inside a step ("AIM round", 12): shown beside the step's name on the
    job's bar when one is open, else nothing. ``spent``: the share of the stage's privacy budget
    spent so far (its zCDP filter's ρ; for DP-SGD its steps, each costing alike). Pass public or
    DP figures only."""
    show = _INNER.get()
    if show is None:
        return
    text = f"{what} {done}" + (f"/{total}" if total else "")
    if spent is not None:
        text += f", {spent:.0%} of its budget spent"
    show(text)


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
        self.drawn = 0.0

    def hooks(self) -> Hooks:
        from synthpriv.job import Hooks

        return Hooks(started=self._started, finished=self._finished)

    def _open(self) -> None:
        if self.bar is None and self.enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=len(self.steps), file=sys.stderr, unit="step", leave=False,
                            bar_format="{desc} {bar:20} {n_fmt}/{total_fmt} steps, {elapsed}"
                                       "{postfix}")
            _INNER.set(self._inner)

    def _inner(self, text: str) -> None:
        if self.bar is not None and time.perf_counter() - self.drawn >= REFRESH_SECONDS:
            self.bar.set_postfix_str(text, refresh=True)
            self.drawn = time.perf_counter()

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
            self.bar.set_postfix_str("", refresh=False)
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
        if _INNER.get() == self._inner:
            _INNER.set(None)


class Parts:
    """The evaluation's parts one by one on stderr ("attacks on the release… 3/6"), each with
    its time; silent when not ``enabled``. It shows names and times only."""

    def __init__(self, names: Sequence[str], enabled: bool = True) -> None:
        self.bar = None
        if enabled:
            from tqdm import tqdm

            self.bar = tqdm(total=len(names), file=sys.stderr, unit="part", leave=False,
                            bar_format="evaluation: {desc} {bar:20} {n_fmt}/{total_fmt}, {elapsed}")

    @contextlib.contextmanager
    def part(self, name: str) -> Iterator[None]:
        start = time.perf_counter()
        if self.bar is not None:
            self.bar.set_description_str(f"{name}…")
        try:
            yield
        finally:
            if self.bar is not None:
                self.bar.update(1)
                self.bar.write(f"  evaluation: {name}: {time.perf_counter() - start:.1f} s",
                               file=sys.stderr)

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
