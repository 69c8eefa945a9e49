"""One job service for the window: long work and view computations off the main thread.

A controller hands :meth:`JobService.run` a job (a plain ``job(ctx) -> result`` calling the
core, see :mod:`nerstudio.gui.workers`) with its own callbacks — ``on_done(result)``,
``on_partial(key, value)``, ``on_failed(message, traceback)``, ``on_cancelled()`` — instead of
registering completion handlers by name with the window. *Work* jobs (training, lining up an
N-best list, opening a model) run one at a time and a second is refused while one runs;
*view* jobs (:meth:`JobService.view`: the comparison, the step-through setup) run beside them
on a lane of their own, where a newer request with the same name replaces an older one. Every
job's progress, failure and cancellation are also announced as signals, so the status bar and
the training panel can report them without knowing who started the job.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, Signal, Slot

from .workers import JobQueue, TaskRunner


class JobService(QObject):
    started = Signal(str)
    progress = Signal(str, int, int)
    stats = Signal(list)
    finished = Signal(str)  # name (after the job's own on_done)
    failed = Signal(str, str, str)  # name, message, traceback ('' for a clear one-line error)
    cancelled = Signal(str, str)
    idle = Signal()
    viewProgress = Signal(str, str, int, int)  # view job name, message, done, total

    def __init__(self, parent=None):
        super().__init__(parent)
        self._runner = TaskRunner(self)
        self.views = JobQueue(self)  # has wait() too (tests, screenshots)
        self._callbacks: dict[str, Callable | None] = {}
        self._closed = False  # after shutdown(): nothing new starts (the window is going)
        r = self._runner
        r.started.connect(self.started)
        r.progress.connect(self.progress)
        r.stats.connect(self.stats)
        r.partial.connect(self._on_partial)
        r.finished.connect(self._on_finished)
        r.failed.connect(self._on_failed)
        r.cancelled.connect(self._on_cancelled)
        r.idle.connect(self.idle)
        self.views.runner.progress.connect(
            lambda m, d, n: self.viewProgress.emit(self.views.running(), m, d, n)
        )

    # -- work jobs ------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._runner.busy

    @property
    def name(self) -> str:
        return self._runner.name

    def run(
        self,
        name: str,
        job: Callable,
        on_done: Callable[[Any], None] | None = None,
        on_partial: Callable[[str, Any], None] | None = None,
        on_failed: Callable[[str, str], None] | None = None,
        on_cancelled: Callable[[], None] | None = None,
    ) -> bool:
        """Start ``job``; False (nothing started) while another work job runs or once the service
        is shut down (a controller reacting to the close's own cancellations must not start
        a thread that outlives the window)."""
        if self._closed or self._runner.busy:
            return False
        self._callbacks = {
            "done": on_done,
            "partial": on_partial,
            "failed": on_failed,
            "cancelled": on_cancelled,
        }
        return self._runner.start(name, job)

    def start(self, name: str, job: Callable) -> bool:
        """A job without callbacks (reported through the signals only)."""
        return self.run(name, job)

    def cancel(self) -> None:
        self._runner.cancel()

    def wait(self, timeout_ms: int = 30000) -> bool:
        return self._runner.wait(timeout_ms)

    def _take(self, what: str):
        cb = self._callbacks.get(what)
        if what != "partial":
            self._callbacks = {}
        return cb

    @Slot(str, object)
    def _on_partial(self, key: str, value) -> None:
        cb = self._callbacks.get("partial")
        if cb is not None:
            cb(key, value)

    @Slot(str, object)
    def _on_finished(self, name: str, result) -> None:
        cb = self._take("done")
        if cb is not None:
            cb(result)
        self.finished.emit(name)

    @Slot(str, str, str)
    def _on_failed(self, name: str, message: str, tb: str) -> None:
        cb = self._take("failed")
        if cb is not None:
            cb(message, tb)
        self.failed.emit(name, message, tb)

    @Slot(str, str)
    def _on_cancelled(self, name: str, message: str) -> None:
        cb = self._take("cancelled")
        if cb is not None:
            cb()
        self.cancelled.emit(name, message)

    # -- view jobs ------------------------------------------------------------------------
    def view(
        self,
        name: str,
        job: Callable,
        on_done: Callable[[Any], None],
        on_failed: Callable[[str], None] | None = None,
    ) -> None:
        if not self._closed:
            self.views.submit(name, job, on_done, on_failed)

    def cancel_view(self, name: str | None = None) -> None:
        self.views.cancel(name)

    def view_running(self) -> str:
        return self.views.running()

    @property
    def closed(self) -> bool:
        return self._closed

    def shutdown(self) -> None:
        """Cancel and wait for what runs; from now on nothing new starts."""
        self._closed = True
        self._runner.cancel()
        self.views.shutdown()
        self._runner.shutdown()
