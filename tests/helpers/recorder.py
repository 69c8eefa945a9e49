"""A run's context without a window: it keeps what the run reports (stages entered, results,
curve, messages) and can ask the run to stop at a given stage."""

from __future__ import annotations

from nerstudio.errors import Cancelled


class _Pipeline:
    def __init__(self) -> None:
        self.stages: list[str] = []
        self.k = -1


class Recorder:
    """A RunContext that keeps what the run reports; ``cancel_at``: the stage at which the
    caller asks it to stop."""

    def __init__(self, cancel_at: str | None = None) -> None:
        self.pipeline = _Pipeline()
        self.entered: list[str] = []
        self.results: dict = {}
        self.curve: list = []
        self.messages: list[str] = []
        #: every report: (the stage it came in, its message, done, total)
        self.reports: list[tuple[str, str, int, int]] = []
        self.cancel_at = cancel_at

    def should_cancel(self) -> bool:
        return self.cancel_at is not None and self.cancel_at in self.entered

    def check(self) -> None:
        if self.should_cancel():
            raise Cancelled("cancelled")

    def plan(self, stages: list[str]) -> None:
        self.pipeline.stages = list(stages)

    def stage(self, name: str, message: str = "", done: int = 0, total: int = 0) -> None:
        if not self.entered or self.entered[-1] != name:
            self.entered.append(name)
        self.pipeline.k = self.pipeline.stages.index(name)
        self.messages.append(message)
        self.reports.append((name, message, done, total))

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None:
        self.messages.append(message)
        stage = self.entered[-1] if self.entered else ""
        self.reports.append((stage, message, done, total))

    def result(self, key: str, value) -> None:
        self.results[key] = value

    def stats(self, st) -> None:
        self.curve.append(st)
