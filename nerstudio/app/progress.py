"""Progress of a whole pipeline, in words: "stage 2 of 4: jackknife — fold 3/5 · about 1 min left".

A job that runs several stages (tagger, jackknife, global features, reranker, scoring) declares
them with :meth:`Pipeline.plan` and moves on with :meth:`Pipeline.stage`; each progress report
of the current stage (``done`` of ``total``) becomes one line naming the stage and its place
among the others, with an estimate of the time left: the current stage's remaining time
projected from its elapsed time and fraction done, plus the stages still to come at the mean
duration of the stages seen so far (this one's projected total included). Until that can be
estimated (no fraction yet, or too little of it done) it says "estimating…".

:class:`Progress` is what a job of the document model or a training run reports to and asks
(the window's worker, :class:`~nerstudio.gui.workers.JobContext`, gives one, which owns a
:class:`Pipeline`); :class:`Reporter` is the one for callers without a window (the command
line, scripts). The clock is injectable.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

MIN_FRACTION = 0.02  # of the current stage, before its end is projected
MIN_SECONDS = 1.0  # of the current stage, likewise
SCALE = 1000  # the pipeline's progress bar counts in thousandths


class Progress(Protocol):
    """What a long job reports to and asks: cancellation, its stages, progress within them."""

    def should_cancel(self) -> bool: ...

    def check(self) -> None:
        """Raise :class:`~nerstudio.errors.Cancelled` once a cancel was asked for."""

    def plan(self, stages: list[str]) -> None: ...

    def stage(self, name: str, message: str = "", done: int = 0, total: int = 0) -> None: ...

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None: ...


def format_duration(seconds: float) -> str:
    """``"5 s"``, ``"3 min 07 s"``, ``"12 min"``, ``"1 h 05 min"``."""
    s = round(seconds)
    if s < 60:
        return f"{max(s, 1)} s"
    m, s = divmod(s, 60)
    if m < 60:
        return f"{m} min {s:02d} s" if m < 10 else f"{m} min"
    h, m = divmod(m, 60)
    return f"{h} h {m:02d} min"


class Pipeline:
    """See the module docstring."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self.stages: list[str] = []
        self.k = -1  # index of the current stage
        self._started = 0.0  # when the current stage started
        self.durations: list[float] = []  # of the stages done

    @property
    def planned(self) -> bool:
        return bool(self.stages)

    def plan(self, stages: list[str]) -> None:
        self.stages = list(stages)
        self.k = -1
        self.durations = []

    def stage(self, name: str) -> None:
        """Enter the stage ``name`` (a planned one; an unplanned one is inserted after the
        current). Re-entering the current stage does nothing; later stages skipped count as done
        in no time."""
        if 0 <= self.k < len(self.stages) and self.stages[self.k] == name:
            return
        now = self.clock()
        if self.k >= 0:
            self.durations.append(now - self._started)
        if name in self.stages[self.k + 1 :]:
            j = self.stages.index(name, self.k + 1)
            self.durations += [0.0] * (j - self.k - 1)
            self.k = j
        else:
            self.k += 1
            self.stages.insert(self.k, name)
        self._started = now

    def fraction(self, done: int, total: int) -> float | None:
        """Of the whole pipeline, counting stages equally."""
        if self.k < 0:
            return None
        f = min(max(done / total, 0.0), 1.0) if total > 0 else 0.0
        return (self.k + f) / len(self.stages)

    def eta(self, done: int, total: int) -> float | None:
        """Seconds left, or None while it cannot be estimated."""
        if self.k < 0:
            return None
        elapsed = self.clock() - self._started
        f = done / total if total > 0 else 0.0
        if f >= MIN_FRACTION and elapsed >= MIN_SECONDS:
            this_total = elapsed / min(f, 1.0)
        elif self.durations and total <= 0:
            # no fraction: like the others
            this_total = max(sum(self.durations) / len(self.durations), elapsed)
        else:
            return None
        left_here = max(this_total - elapsed, 0.0)
        mean = (sum(self.durations) + this_total) / (len(self.durations) + 1)
        return left_here + mean * (len(self.stages) - self.k - 1)

    def describe(self, message: str, done: int, total: int) -> str:
        """``stage k of n: <stage> — <message> · about <t> left`` (or ``estimating…``)."""
        if self.k < 0:
            return message
        name = self.stages[self.k]
        head = f"stage {self.k + 1} of {len(self.stages)}: {name}"
        if message and message.rstrip("…").strip() != name:
            head += f" — {message}"
        eta = self.eta(done, total)
        return head + (" · estimating…" if eta is None else f" · about {format_duration(eta)} left")


class Reporter:
    """A :class:`Progress` for a caller without a window (the command line, a script, a test):
    a :class:`Pipeline` of its own, each report described in one line
    (:meth:`Pipeline.describe`) and handed to ``say(line, done, total)``, and cancellation asked
    by ``should_cancel()``."""

    def __init__(
        self,
        say: Callable[[str, int, int], None] | None = None,
        should_cancel: Callable[[], bool] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.pipeline = Pipeline(clock)
        self._say = say
        self._cancel = should_cancel

    def should_cancel(self) -> bool:
        return self._cancel is not None and bool(self._cancel())

    def check(self) -> None:
        if self.should_cancel():
            from ..errors import Cancelled

            raise Cancelled("cancelled")

    def plan(self, stages: list[str]) -> None:
        self.pipeline.plan(stages)

    def stage(self, name: str, message: str = "", done: int = 0, total: int = 0) -> None:
        self.pipeline.stage(name)
        self.progress(message, done, total)

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None:
        if self._say is not None:
            self._say(self.pipeline.describe(message, done, total), done, total)
