"""One driver for K-fold work split by document: the jackknife and the K&T cross-validated lists.

A training corpus is cut into K folds by document (:func:`document_folds`, :func:`split`); one
*task* runs per fold — train on the other K − 1 folds, produce something for the held-out one —
and :func:`run_folds` hands the results back in fold order, whatever order the folds finished
in, for the caller to merge (N-best lists back into corpus order,
:func:`.pipeline.merge_nbest`). Extra jobs (the jackknife's model on the whole corpus) can run
alongside the folds, in the same workers.

Where the tasks run is an executor's business:

:class:`InlineExecutor`
    one after the other in the caller's thread. A task's own progress (the tagger's iterations)
    reaches the caller, and so does cancellation inside a task: the application's jobs run
    here, on their worker thread.
:class:`ProcessExecutor`
    local child processes, at most ``workers`` at a time (forked where the system can, so the
    corpus is shared, not copied). A task's progress comes back over a pipe; on cancellation the
    running folds are killed and the driver returns at once instead of waiting for them; a
    child that dies is reported with its signal.

The seam for executors elsewhere (:class:`~.dask_executor.DaskExecutor`, chosen with
:func:`~.dask_executor.executor_from_setting`): a job is a module-level function
``task(data, job, ctx)`` named by its module, a :class:`Fold` (index arrays) and a small dict of
settings. A *remote* executor (``executor.remote`` true) does not send ``data``: the caller
passes ``source``, a :class:`~.work_files.SharedInput` naming the files the data comes from,
which each worker loads once, and puts inputs into the settings as ``SharedInput`` too (they
reach the task loaded); every job then has ``files``, how its result comes back as the
project's ``.npz`` + JSON files. Nothing in a task may depend on running in the caller's
process. :func:`run_jobs` runs any list of jobs this way (the sweep's grid points), and on the
local executors the follow-ups a finished job's result calls for (the K&T suite's folds once
its margin perceptron is chosen).
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.connection
import os
import signal
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..corpus.model import Corpus
from ..errors import Cancelled, SettingsError
from .child_process import ChildProcessFailed, death_message, one_line, stop_process
from .work_files import ResultFiles, SharedInput

POLL_INTERVAL = 0.05  # seconds between two looks at should_cancel while folds run
PROGRESS_INTERVAL = 0.1  # a child sends at most this often (the latest message wins)


# ------------------------------------------------------------------------------------------------
# folds


def document_folds(corpus_or_docs, k: int) -> np.ndarray:
    """Fold id per sentence: documents in file order cut into k runs of about equal size."""
    docs = corpus_or_docs.documents if isinstance(corpus_or_docs, Corpus) else corpus_or_docs
    sizes = np.array([len(d.sentences) for d in docs], dtype=np.int64)
    total = int(sizes.sum())
    if k < 2:
        raise SettingsError("jackknifing needs at least 2 folds")
    if len(docs) < k:
        # too few documents: fall back to contiguous runs of sentences
        return (np.arange(total) * k // max(total, 1)).astype(np.int64)
    cum = np.cumsum(sizes) - sizes / 2.0  # document midpoints
    doc_fold = np.minimum((cum * k / total).astype(np.int64), k - 1)
    return np.repeat(doc_fold, sizes)


@dataclass(frozen=True)
class Fold:
    """Fold ``index`` of ``count``: indices (into the sentences or the documents) to train on and
    to hold out, each in corpus order."""

    index: int
    count: int
    train: np.ndarray
    test: np.ndarray

    @property
    def name(self) -> str:
        return f"fold {self.index + 1}/{self.count}"


def split(corpus: Corpus, k: int, unit: str = "sentence") -> tuple[np.ndarray, list[Fold]]:
    """``(fold_of, folds)``: the fold of every sentence (:func:`document_folds`) and the K folds
    over sentences (``unit="sentence"``) or documents (``"document"``: a document's fold is that
    of its first sentence; documents are never cut)."""
    fold_of = document_folds(corpus, k)
    if unit == "sentence":
        per_unit = fold_of
    elif unit == "document":
        first = np.cumsum([0] + [len(d.sentences) for d in corpus.documents])[:-1]
        per_unit = fold_of[first] if len(corpus.documents) else np.zeros(0, np.int64)
    else:
        raise SettingsError(f"folds over 'sentence' or 'document', not {unit!r}")
    return fold_of, [
        Fold(f, k, np.nonzero(per_unit != f)[0], np.nonzero(per_unit == f)[0]) for f in range(k)
    ]


# ------------------------------------------------------------------------------------------------
# jobs and their context


Task = Callable[[Any, "Job", "TaskContext"], Any]


@dataclass(frozen=True)
class Job:
    """One unit of work: ``task(data, job, ctx)``. ``task`` must be a module-level function (a
    child process imports it by name); ``settings`` holds what the task needs besides the shared
    data. ``done`` is the verb of the message said when it finishes ("decoded", "listed");
    ``files``: how the result travels as files (needed by remote executors)."""

    name: str
    task: Task
    fold: Fold | None = None
    settings: dict = field(default_factory=dict)
    done: str = "done"
    files: ResultFiles | None = None

    def required_fold(self) -> Fold:
        """The fold of a fold's job (an extra job has none: asking is a bug)."""
        if self.fold is None:
            raise RuntimeError(f"job {self.name!r} has no fold")
        return self.fold


class TaskContext:
    """What a running task sees: ``should_cancel()`` / ``check()`` and ``progress(message)``."""

    def __init__(
        self,
        should_cancel: Callable[[], bool] | None = None,
        report: Callable[[str], None] | None = None,
    ):
        self._should_cancel = should_cancel
        self._report = report

    def should_cancel(self) -> bool:
        return bool(self._should_cancel is not None and self._should_cancel())

    def check(self) -> None:
        if self.should_cancel():
            raise Cancelled("cancelled")

    def progress(self, message: str) -> None:
        if self._report is not None:
            self._report(message)


@dataclass(frozen=True)
class FoldProgress:
    """A progress event of :func:`run_folds`: ``final`` when job ``job`` has just finished (then
    ``done`` counts it), else a message from inside the running job; ``notice`` marks one the user
    should see even where only finished jobs are shown (a job restarted after its worker died)."""

    message: str
    done: int
    total: int
    job: str
    final: bool
    notice: bool = False


@dataclass
class JobResults:
    """``results[i]``: job i's result; ``seconds[name]``: each job's wall time; ``total_seconds``:
    the whole run's."""

    results: list
    seconds: dict
    total_seconds: float


@dataclass
class FoldResults:
    """``results[f]``: fold f's result; ``extra[name]``: each extra job's; ``seconds[name]``: each
    job's wall time; ``total_seconds``: the whole run's."""

    results: list
    extra: dict
    seconds: dict
    total_seconds: float


# ------------------------------------------------------------------------------------------------
# executors


class Executor(Protocol):
    remote: bool  # the jobs get their data from ``source`` and send their results as files

    def run(
        self,
        jobs: Sequence[Job],
        data: Any,
        *,
        on_result: Callable[[int, Any, float], None],
        on_progress: Callable[..., None],
        should_cancel: Callable[[], bool] | None,
        source: SharedInput | None = None,
    ) -> None:
        """Run every job; ``on_result(i, result, seconds)`` as each finishes, ``on_progress(i,
        message)`` from inside job i (``on_progress(i, message, True)``: a notice, see
        :class:`FoldProgress`). Raises :class:`Cancelled` promptly once ``should_cancel()``
        turns true, or the first job's error. A local executor passes ``data`` and ignores
        ``source``; a remote one loads ``source`` on its workers instead. A local executor also
        runs the jobs that ``on_result`` appends to ``jobs`` (follow-ups, see :func:`run_jobs`),
        before the jobs still waiting."""


def is_remote(executor) -> bool:
    """Whether ``executor`` needs ``source`` and :class:`~.work_files.SharedInput` settings."""
    return bool(getattr(executor, "remote", False))


class InlineExecutor:
    """The jobs one after the other in the caller's thread (see the module docstring)."""

    remote = False

    def run(self, jobs, data, *, on_result, on_progress, should_cancel, source=None) -> None:
        waiting = list(range(len(jobs)))
        while waiting:
            i = waiting.pop(0)
            job = jobs[i]

            def progress(message: str, i: int = i) -> None:
                on_progress(i, message)

            ctx = TaskContext(should_cancel, progress)
            ctx.check()
            t0 = time.perf_counter()
            result = job.task(data, job, ctx)
            ctx.check()  # a task that stopped early on cancellation returns a partial result
            known = len(jobs)
            on_result(i, result, time.perf_counter() - t0)
            waiting[:0] = range(known, len(jobs))  # follow-ups first


def _child(job: Job, data, conn) -> None:
    """A worker process: run one job, send ``("progress", message)`` messages, then exactly one
    ``("done", result)`` or ``("error", exception, traceback)``."""
    # a forked child: the command line's SIGTERM handler is the parent's, not its own
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    last = [0.0]

    def report(message: str) -> None:
        now = time.monotonic()
        if now - last[0] >= PROGRESS_INTERVAL:
            last[0] = now
            conn.send(("progress", message))

    code = 0
    try:
        result = job.task(data, job, TaskContext(None, report))
        conn.send(("done", result))
    except BaseException as exc:
        code = 1
        tb = traceback.format_exc()
        try:
            conn.send(("error", exc, tb))
        except Exception:
            conn.send(("error", ChildProcessFailed(f"{job.name}: {one_line(exc)}", tb), tb))
    finally:
        conn.close()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)  # skip the interpreter's teardown of a large heap


class ProcessExecutor:
    """The jobs in local child processes, at most ``workers`` at a time (see the module
    docstring). ``start_method``: ``"fork"`` where available (the default), else ``"spawn"``."""

    remote = False

    def __init__(self, workers: int, start_method: str | None = None):
        self.workers = max(1, int(workers))
        if start_method is None:
            start_method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
        self.context = multiprocessing.get_context(start_method)

    def run(self, jobs, data, *, on_result, on_progress, should_cancel, source=None) -> None:
        waiting = list(range(len(jobs)))
        running: dict = {}  # receiving end -> (job index, process, start time)
        try:
            while waiting or running:
                if should_cancel is not None and should_cancel():
                    raise Cancelled("cancelled")
                while waiting and len(running) < self.workers:
                    i = waiting.pop(0)
                    recv, send = self.context.Pipe(duplex=False)
                    proc = self.context.Process(
                        target=_child,
                        args=(jobs[i], data, send),
                        daemon=True,
                        name=f"nerstudio-{jobs[i].name.replace(' ', '-')}",
                    )
                    try:
                        proc.start()
                    except OSError as exc:
                        recv.close()
                        send.close()
                        raise ChildProcessFailed(
                            f"cannot start a process for {jobs[i].name}: {exc}"
                        ) from None
                    send.close()  # the child holds the only writer: its death is an end of file here
                    running[recv] = (i, proc, time.perf_counter())
                for recv in multiprocessing.connection.wait(list(running), timeout=POLL_INTERVAL):
                    i, proc, t0 = running[recv]
                    try:
                        msg = recv.recv()
                    except (EOFError, OSError):
                        proc.join(1.0)
                        raise ChildProcessFailed(f"{jobs[i].name}: {death_message(proc)}") from None
                    if msg[0] == "progress":
                        on_progress(i, msg[1])
                        continue
                    del running[recv]
                    recv.close()
                    proc.join()
                    if msg[0] == "error":
                        exc = msg[1]
                        exc.add_note(f"in the process of {jobs[i].name}:\n{msg[2]}")
                        raise exc
                    known = len(jobs)
                    on_result(i, msg[1], time.perf_counter() - t0)
                    waiting[:0] = range(known, len(jobs))  # follow-ups first
        finally:
            for recv, (_, proc, _) in running.items():  # cancelled or failed: abandon the rest
                stop_process(proc, 0.1)
                recv.close()


def forks(executor) -> bool:
    """Whether ``executor`` runs its jobs in child processes forked from this one (which then
    start with everything this process has loaded)."""
    return isinstance(executor, ProcessExecutor) and executor.context.get_start_method() == "fork"


def local_executor(workers: int | None, n_jobs: int) -> Executor:
    """In-process for one worker, else a process per job up to ``workers`` (default: the cores)."""
    workers = workers or min(n_jobs, os.cpu_count() or 1)
    return InlineExecutor() if workers <= 1 else ProcessExecutor(workers)


# ------------------------------------------------------------------------------------------------
# the driver


def run_jobs(
    jobs: Sequence[Job],
    data,
    *,
    executor: Executor | None = None,
    workers: int | None = None,
    progress: Callable[[FoldProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    source: SharedInput | None = None,
    then: Callable[[Job, Any, float], Sequence[Job]] | None = None,
) -> JobResults:
    """Run ``job.task(data, job, ctx)`` for every job on ``executor`` (default:
    :func:`local_executor` for ``workers``); results in job order. ``progress`` gets a
    :class:`FoldProgress` for every message from inside a job and for every job that finishes.
    Raises :class:`Cancelled` once ``should_cancel()`` turns true (without waiting for running
    jobs in child processes or on other machines). A remote executor needs ``source``.

    ``then(job, result, seconds)``, called in the caller's process as each job finishes, may return
    *follow-up* jobs: work that could not be described before that result (the cross-validated
    lists of a model chosen on dev). They run as soon as a worker is free, before the jobs still
    waiting, and their results follow the given jobs' in the order they were added. Local
    executors only (a remote executor's workers are given their jobs at the start)."""
    t_start = time.perf_counter()
    jobs = list(jobs)
    names = [j.name for j in jobs]
    if len(set(names)) != len(names):
        raise ValueError(f"job names must differ: {names}")
    executor = executor if executor is not None else local_executor(workers, len(jobs))
    if then is not None and is_remote(executor):
        raise ValueError("follow-up jobs need a local executor")
    outcome: dict[int, Any] = {}
    seconds: dict[str, float] = {}

    def on_result(i: int, result, secs: float) -> None:
        outcome[i] = result
        seconds[jobs[i].name] = secs
        if progress is not None:
            progress(
                FoldProgress(
                    f"{jobs[i].name} {jobs[i].done} in {secs:.1f}s ({len(outcome)}/{len(jobs)} done)",
                    len(outcome),
                    len(jobs),
                    jobs[i].name,
                    True,
                )
            )
        if then is not None:
            more = list(then(jobs[i], result, secs))
            taken = {j.name for j in jobs}
            for job in more:
                if job.name in taken:
                    raise ValueError(f"job names must differ: {job.name!r} twice")
                taken.add(job.name)
            jobs.extend(more)  # the executor runs them next

    def on_progress(i: int, message: str, notice: bool = False) -> None:
        if progress is not None:
            progress(
                FoldProgress(
                    f"{jobs[i].name}: {message}",
                    len(outcome),
                    len(jobs),
                    jobs[i].name,
                    False,
                    notice,
                )
            )

    if is_remote(executor):
        executor.run(
            jobs,
            data,
            on_result=on_result,
            on_progress=on_progress,
            should_cancel=should_cancel,
            source=source,
        )
    else:
        executor.run(
            jobs, data, on_result=on_result, on_progress=on_progress, should_cancel=should_cancel
        )
    missing = [jobs[i].name for i in range(len(jobs)) if i not in outcome]
    if missing:
        raise RuntimeError(f"the executor returned without results for {', '.join(missing)}")
    return JobResults(
        [outcome[i] for i in range(len(jobs))], seconds, time.perf_counter() - t_start
    )


def run_folds(
    task: Task,
    data,
    folds: Sequence[Fold],
    settings: dict | None = None,
    *,
    extra: Sequence[Job] = (),
    done: str = "done",
    executor: Executor | None = None,
    workers: int | None = None,
    progress: Callable[[FoldProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    source: SharedInput | None = None,
    files: ResultFiles | None = None,
) -> FoldResults:
    """Run ``task(data, job, ctx)`` once per fold (``job.fold``, ``job.settings = settings``,
    ``job.files = files``) and the ``extra`` jobs (first: they are usually the longest), with
    :func:`run_jobs`."""
    fold_jobs = [Job(f.name, task, f, dict(settings or {}), done, files) for f in folds]
    run = run_jobs(
        list(extra) + fold_jobs,
        data,
        executor=executor,
        workers=workers,
        progress=progress,
        should_cancel=should_cancel,
        source=source,
    )
    n_extra = len(extra)
    return FoldResults(
        run.results[n_extra:],
        {j.name: r for j, r in zip(extra, run.results)},
        run.seconds,
        run.total_seconds,
    )
