"""Long work off the main thread: a :class:`Worker` QObject moved to a QThread per run.

A *job* is a plain Python callable ``job(ctx) -> result`` that calls the core (tagger training,
jackknife N-best, global features, reranker training); :func:`job_of` makes one of a core
function whose first parameter is the context. ``ctx`` (a :class:`JobContext`) gives it
``should_cancel()`` for the core's cancellation checks, ``progress(message, done, total)`` and
``stats(obj)`` for curve points. The worker turns those into Qt signals, throttled so the GUI
sees at most ~20 updates per second: progress keeps only the latest message, curve points are
batched (none is dropped). :class:`TaskRunner` (main thread) runs one job at a time, keeps the
references Qt needs, cancels through a flag the core polls, and ``shutdown()`` cancels, quits
and waits for the thread on close. :class:`JobQueue` runs the computations behind views (the
comparison, the step-through) on a runner of its own, beside a training run, a newer request
replacing an older one. :func:`release_in_background` frees replaced models off the main thread.
"""

from __future__ import annotations

import gc
import os
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QThread, QTimer, Signal, Slot

from ..app.progress import SCALE, Pipeline
from ..errors import Cancelled, NerstudioError

MIN_INTERVAL = 0.05  # seconds between two GUI updates from one worker (≤ 20 per second)

_THREADS: weakref.WeakSet[QThread] = weakref.WeakSet()  # every thread a TaskRunner started


def running_threads(scan: bool = True) -> list[QThread]:
    """QThreads (ours, and with ``scan`` any Python-owned one) that are still running."""
    found = {id(t): t for t in list(_THREADS)}
    if scan:
        for o in gc.get_objects():
            if isinstance(o, QThread):
                found.setdefault(id(o), o)
    out = []
    for t in found.values():
        try:
            if t.isRunning():
                out.append(t)
        except RuntimeError:  # the C++ object is gone
            pass
    return out


class JobContext:
    """What a job sees of its worker: cancellation flag and throttled reporting (a
    :class:`~nerstudio.app.progress.Progress`, and a run's
    :class:`~nerstudio.runs.training.RunContext`)."""

    def __init__(self, worker: Worker):
        self._worker = worker
        self.cancel_event = worker.cancel_event
        self.pipeline = Pipeline()

    def should_cancel(self) -> bool:
        return self.cancel_event.is_set()

    def check(self) -> None:
        if self.cancel_event.is_set():
            raise Cancelled("cancelled")

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None:
        """Report progress; in a planned pipeline the line names the stage among the others
        with the time left, and ``done`` / ``total`` count the whole pipeline."""
        p = self.pipeline
        frac = p.fraction(done, total) if p.planned else None  # None: k < 0
        if frac is not None:
            message = p.describe(message, done, total)
            done, total = int(frac * SCALE), SCALE
        self._worker.push_progress(message, done, total)

    def plan(self, stages: list[str]) -> None:
        """The stages this job will go through (see :class:`~nerstudio.app.progress.Pipeline`)."""
        self.pipeline.plan(stages)

    def stage(self, name: str, message: str = "", done: int = 0, total: int = 0) -> None:
        """Enter stage ``name`` and report it."""
        self.pipeline.stage(name)
        self.progress(message, done, total)

    def stats(self, obj: Any) -> None:
        self._worker.push_stats(obj)

    def result(self, key: str, value: Any) -> None:
        """Hand an intermediate result (e.g. a trained tagger) to the GUI right away."""
        self._worker.partial.emit(key, value)


def job_of(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[[Any], Any]:
    """A job calling ``fn(ctx, *args, **kwargs)`` in the worker: the arguments are taken now, on
    the main thread (snapshots of the document), the call runs with the worker's context (or
    any context with the same methods: a save done at once passes one that reports nothing)."""
    return lambda ctx: fn(ctx, *args, **kwargs)


class Worker(QObject):
    """Runs one job in its thread. Signals carry plain Python objects."""

    progress = Signal(str, int, int)  # message, done, total (latest only, throttled)
    stats = Signal(list)  # a batch of curve points (RerankStats / TrainStats), throttled
    partial = Signal(str, object)  # intermediate result, e.g. ("tagger", MaxEntTagger)
    finished = Signal(object)  # the job's return value
    # message, traceback ('' for a NerstudioError: the message says it all)
    error = Signal(str, str)
    cancelled = Signal(str)
    done = Signal()  # after finished / error / cancelled: the thread may quit

    def __init__(self, job: Callable[[JobContext], Any], name: str = "job"):
        super().__init__()
        self.job = job
        self.name = name
        self.cancel_event = threading.Event()
        self._lock = threading.Lock()
        self._stats: list = []
        self._progress: tuple[str, int, int] | None = None
        self._last = 0.0
        self.started_at = 0.0

    # called from the worker thread (and flush() also from the main thread's timer)
    def push_progress(self, message: str, done: int, total: int) -> None:
        with self._lock:
            self._progress = (message, int(done), int(total))
        self.flush()

    def push_stats(self, obj: Any) -> None:
        with self._lock:
            self._stats.append(obj)
        self.flush()

    def flush(self, force: bool = False) -> None:
        """Emit what is pending unless the previous update is less than MIN_INTERVAL old."""
        now = time.monotonic()
        with self._lock:
            if not force and now - self._last < MIN_INTERVAL:
                return
            if not self._stats and self._progress is None:
                return
            stats, self._stats = self._stats, []
            prog, self._progress = self._progress, None
            self._last = now
        if stats:
            self.stats.emit(stats)
        if prog is not None:
            self.progress.emit(*prog)

    @Slot()
    def run(self) -> None:
        self.started_at = time.monotonic()
        ctx = JobContext(self)
        # A job allocates millions of short-lived objects and makes no reference cycles worth
        # collecting; a full collection in its middle would scan the whole heap with the
        # interpreter lock held (100+ ms of frozen window). Pause the cyclic collector for the
        # job and move what survives it out of the collector's sight afterwards.
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            self._run_job(ctx)
        finally:
            gc.freeze()
            if gc_was_enabled:
                gc.enable()
        self.done.emit()

    def _run_job(self, ctx):
        try:
            result = self.job(ctx)
        except Cancelled as exc:
            self.flush(force=True)
            self.cancelled.emit(str(exc) or "cancelled")
        except NerstudioError as exc:  # the user's input or a failed child process: one clear line
            self.flush(force=True)
            details = getattr(exc, "details", "")
            if details and os.environ.get("NERSTUDIO_DEBUG"):
                print(details, file=sys.stderr)
            self.error.emit(str(exc), "")
        except (
            Exception
        ) as exc:  # a bug: reported to the GUI with its traceback, never raised into Qt
            self.flush(force=True)
            self.error.emit(f"{type(exc).__name__}: {exc}", traceback.format_exc())
        else:
            self.flush(force=True)
            if self.cancel_event.is_set():
                self.cancelled.emit("cancelled")
            else:
                self.finished.emit(result)


class TaskRunner(QObject):
    """One job at a time on its own QThread; re-emits the worker's signals in the main thread.

    ``started(name)``, ``progress(message, done, total)``, ``stats(list)``, ``partial(key, value)``,
    ``finished(name, result)``, ``failed(name, message, traceback)``, ``cancelled(name, message)``
    and finally ``idle()``.
    """

    started = Signal(str)
    progress = Signal(str, int, int)
    stats = Signal(list)
    partial = Signal(str, object)
    finished = Signal(str, object)
    failed = Signal(str, str, str)
    cancelled = Signal(str, str)
    idle = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self._thread: QThread | None = None
        self._worker: Worker | None = None
        self._name = ""
        self._old: list[tuple[QThread, Worker]] = []  # threads that are winding down
        self._timer = QTimer(self)  # trailing flush: a point that came just after an update
        self._timer.setInterval(int(MIN_INTERVAL * 2000))
        self._timer.timeout.connect(self._flush)

    # -- state ------------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self._worker is not None

    @property
    def name(self) -> str:
        return self._name

    def cancel_requested(self) -> bool:
        return self._worker is not None and self._worker.cancel_event.is_set()

    # -- control ----------------------------------------------------------------------------
    def start(self, name: str, job: Callable[[JobContext], Any]) -> bool:
        """Run ``job`` in a new thread; refuses (returns False) while another job runs."""
        if self.busy:
            return False
        self._reap()
        thread = QThread()
        thread.setObjectName(f"nerstudio-{name}")
        _THREADS.add(thread)
        worker = Worker(job, name)
        worker.moveToThread(thread)
        worker.progress.connect(self._on_progress)
        worker.stats.connect(self._on_stats)
        worker.partial.connect(self._on_partial)
        worker.finished.connect(self._on_finished)
        worker.error.connect(self._on_error)
        worker.cancelled.connect(self._on_cancelled)
        worker.done.connect(thread.quit)
        thread.started.connect(worker.run)
        thread.finished.connect(self._on_thread_finished)
        self._thread, self._worker, self._name = thread, worker, name
        self._timer.start()
        thread.start()
        self.started.emit(name)
        return True

    def cancel(self) -> None:
        """Ask the running job to stop; the core notices at its next check (≤ 1 s)."""
        if self._worker is not None:
            self._worker.cancel_event.set()

    def wait(self, timeout_ms: int = 30000) -> bool:
        """Block until the current job's thread ends (tests, shutdown). Delivers its signals."""
        from PySide6.QtCore import QCoreApplication, QDeadlineTimer

        deadline = QDeadlineTimer(timeout_ms)
        while self.busy or any(t.isRunning() for t, _ in self._old):
            if deadline.hasExpired():
                return False
            QCoreApplication.processEvents()
            if self._thread is not None:
                self._thread.wait(20)
            else:
                QThread.msleep(5)
        QCoreApplication.processEvents()
        return True

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        """Cancel, quit and wait: no thread outlives the window."""
        self.cancel()
        ok = True
        threads = [t for t, _ in self._old]
        if self._thread is not None:
            threads.append(self._thread)
        for t in threads:
            t.quit()
            ok = t.wait(timeout_ms) and ok
        self._timer.stop()
        return ok

    # -- main-thread relays -----------------------------------------------------------------
    @Slot()
    def _flush(self) -> None:
        if self._worker is not None:
            self._worker.flush()

    @Slot(str, int, int)
    def _on_progress(self, message: str, done: int, total: int) -> None:
        if self.sender() is self._worker:
            self.progress.emit(message, done, total)

    @Slot(list)
    def _on_stats(self, batch: list) -> None:
        if self.sender() is self._worker:
            self.stats.emit(batch)

    @Slot(str, object)
    def _on_partial(self, key: str, value: object) -> None:
        if self.sender() is self._worker:
            self.partial.emit(key, value)

    @Slot(object)
    def _on_finished(self, result: object) -> None:
        if self.sender() is self._worker:
            name = self._retire()
            self.finished.emit(name, result)
            if not self.busy:  # a handler may have started the next job already
                self.idle.emit()

    @Slot(str, str)
    def _on_error(self, message: str, tb: str) -> None:
        if self.sender() is self._worker:
            name = self._retire()
            self.failed.emit(name, message, tb)
            if not self.busy:  # a handler may have started the next job already
                self.idle.emit()

    @Slot(str)
    def _on_cancelled(self, message: str) -> None:
        if self.sender() is self._worker:
            name = self._retire()
            self.cancelled.emit(name, message)
            if not self.busy:  # a handler may have started the next job already
                self.idle.emit()

    def _retire(self) -> str:
        """The job has ended (its thread is about to quit): accept a new job from now on."""
        if self._thread is not None and self._worker is not None:  # a job is running
            self._old.append((self._thread, self._worker))
        self._thread = self._worker = None
        self._timer.stop()
        name, self._name = self._name, ""
        return name

    @Slot()
    def _on_thread_finished(self) -> None:
        thread = self.sender()
        if isinstance(thread, QThread) and thread is not self._thread:
            thread.wait(1000)  # finished() is emitted just before run() returns
        self._reap()

    def _reap(self) -> None:
        keep = []
        for t, w in self._old:
            if t.isRunning():
                keep.append((t, w))
            else:
                w.deleteLater()
                t.deleteLater()
        self._old = keep


class JobQueue(QObject):
    """Computations behind a view (the comparison, the step-through setup) on a worker thread of
    their own, so they run while a training job occupies the window's :class:`TaskRunner`.

    ``submit(name, job, on_done, on_fail)`` runs ``job`` now or after the running one. A new
    request with the name of the running job cancels it (its result would be stale anyway); one
    with the name of a waiting job replaces it. ``on_done(result)`` / ``on_fail(message)`` are
    called in the main thread; a cancelled job calls neither.
    """

    started = Signal(str)
    idle = Signal()

    def __init__(self, parent=None):
        super().__init__(parent)
        self.runner = TaskRunner(self)
        self._waiting: dict[str, tuple] = {}
        self._current: tuple | None = None
        self.runner.finished.connect(self._on_finished)
        self.runner.failed.connect(self._on_failed)
        self.runner.idle.connect(self._next)

    @property
    def busy(self) -> bool:
        return self.runner.busy or bool(self._waiting)

    def running(self) -> str:
        return self.runner.name

    def submit(
        self,
        name: str,
        job: Callable[[JobContext], Any],
        on_done: Callable[[Any], None],
        on_fail: Callable[[str], None] | None = None,
    ) -> None:
        self._waiting.pop(name, None)
        self._waiting[name] = (name, job, on_done, on_fail)
        if self.runner.busy:
            if self.runner.name == name:
                self.runner.cancel()
            return
        self._next()

    def cancel(self, name: str | None = None) -> None:
        """Forget waiting jobs (of ``name``, or all) and cancel the running one if it matches."""
        for k in [k for k in self._waiting if name is None or k == name]:
            del self._waiting[k]
        if self.runner.busy and (name is None or self.runner.name == name):
            self.runner.cancel()

    def wait(self, timeout_ms: int = 30000) -> bool:
        from PySide6.QtCore import QCoreApplication, QDeadlineTimer

        deadline = QDeadlineTimer(timeout_ms)
        while self.busy:
            if deadline.hasExpired():
                return False
            if not self.runner.wait(max(1, int(deadline.remainingTime()))):
                return False
            QCoreApplication.processEvents()
        return True

    def shutdown(self, timeout_ms: int = 10000) -> bool:
        self._waiting.clear()
        return self.runner.shutdown(timeout_ms)

    @Slot()
    def _next(self) -> None:
        if self.runner.busy or not self._waiting:
            if not self.runner.busy and not self._waiting:
                self.idle.emit()
            return
        name = next(iter(self._waiting))
        self._current = self._waiting.pop(name)
        self.runner.start(name, self._current[1])
        self.started.emit(name)

    @Slot(str, object)
    def _on_finished(self, name: str, result: object) -> None:
        cur, self._current = self._current, None
        if cur is not None and cur[0] == name and name not in self._waiting:
            cur[2](result)

    @Slot(str, str, str)
    def _on_failed(self, name: str, message: str, tb: str) -> None:
        cur, self._current = self._current, None
        if os.environ.get("NERSTUDIO_DEBUG") and tb:
            print(tb, file=sys.stderr)
        if cur is not None and cur[3] is not None and name not in self._waiting:
            cur[3](message)


def release_in_background(objs: list) -> threading.Thread:
    """Drop the references in ``objs`` (a replaced model and its scores) in a short-lived thread.

    Freeing a model's feature index (hundreds of thousands of strings) takes 20+ ms; done in the
    main thread it is a stall of its own. The caller must hold no other reference (pass a list
    and keep none of its items in variables): the last reference then goes in that thread.
    """

    def drop():
        while objs:
            objs.pop()

    t = threading.Thread(target=drop, name="nerstudio-release", daemon=True)
    t.start()
    return t
