"""Folds, cross-validated lists and sweeps on Dask: the remote executor behind the fold driver's seam.

:class:`DaskExecutor` runs :mod:`.folds` jobs on a ``distributed`` cluster — a running scheduler
(``dask://HOST:PORT``) or a ``LocalCluster`` it starts (``dask-local[:N]``).
:func:`executor_from_setting` turns such a setting (or ``local``/``local:N``) into an executor;
the command line's ``--executor`` and the application's setting both use it. ``distributed`` is
imported only when a Dask executor starts (the optional extra ``nerstudio[dask]``).

What travels (never a pickled corpus):

* to a worker: the job (its task function by name, the fold's index arrays, small settings) and
  the *paths* of its input files (:mod:`.work_files`); the worker reads and parses them itself,
  once per worker process, and checks that it got what the caller holds (a fingerprint of the
  sentences, a file's SHA-256). Before a run every worker is asked which files it sees with the
  caller's content; when one does not (no shared filesystem there), each missing file's bytes are
  scattered once and every worker that needs them fetches them once (``ship="auto"``; ``"path"``
  never sends bytes, ``"bytes"`` always does);
* back: the result as the project's ``.npz`` + JSON files (bytes of a folder written by the
  job's :class:`~.work_files.ResultFiles`), read back on the caller's side; the task's progress
  messages as Dask events (at most four a second per task).

Cancellation sets a cluster-wide :class:`distributed.Event` that every running task polls (at
most five times a second, inside the learners' own cancellation checks) and cancels the futures
not yet started; :meth:`DaskExecutor.run` returns at once without waiting for the running tasks.
A worker that dies while running a task is retried once on another worker (the caller is told);
a second death is reported as one line naming the fold or grid point. The retry count is the
scheduler's ``allowed-failures``: set to 1 for the ``LocalCluster`` made here, and enforced from
the caller for a remote scheduler (a third start of a task is cancelled and reported).
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib.util
import logging
import os
import pickle
import queue
import re
import tempfile
import threading
import time
import traceback
import uuid

from .. import __version__
from ..errors import Cancelled, NerstudioError, SettingsError
from .child_process import ChildProcessFailed, one_line
from .file_hash import sha256_file
from .folds import InlineExecutor, ProcessExecutor, TaskContext
from .work_files import (
    find_inputs,
    load_input,
    load_inputs,
    pack_folder,
    unpack_folder,
)

POLL_INTERVAL = 0.05  # seconds between two looks at the futures and at should_cancel
PROGRESS_INTERVAL = 0.25  # a remote task sends a progress message at most this often
CANCEL_CHECK_INTERVAL = 0.2  # a remote task asks the scheduler whether to stop at most this often
CONNECT_TIMEOUT = 10.0  # seconds to reach a scheduler

SETTINGS_HELP = "local, local:N, dask-local, dask-local:N or dask://HOST:PORT"
EXTRA_MISSING = "the Dask executor needs the dask extra: pip install 'nerstudio[dask]'"


def dask_available() -> bool:
    """Whether the ``dask`` extra (``distributed``) is installed."""
    return importlib.util.find_spec("distributed") is not None


def _distributed():
    try:
        import distributed
    except ImportError as exc:
        raise NerstudioError(f"{EXTRA_MISSING} ({exc})") from None
    return distributed


def executor_from_setting(text: str | None):
    """The executor a setting names (``SETTINGS_HELP``); ``None`` for ``local`` (the caller's
    default: the local process pool, or the caller's thread in the application). Raises
    :class:`SettingsError` for a setting it does not know and :class:`NerstudioError` when a Dask
    setting is given without the extra installed. Nothing connects or starts before the first run."""
    t = (text or "local").strip()
    m = re.fullmatch(r"(local|dask-local)(?::(\d+))?", t)
    if m:
        n = int(m.group(2)) if m.group(2) else None
        if n is not None and n < 1:
            raise SettingsError(f"executor {t!r}: the number of workers must be at least 1")
        if m.group(1) == "local":
            return None if n is None else (InlineExecutor() if n == 1 else ProcessExecutor(n))
        if not dask_available():
            raise NerstudioError(f"executor {t!r}: {EXTRA_MISSING}")
        return DaskExecutor(local_workers=n or (os.cpu_count() or 1))
    m = re.fullmatch(r"(?:dask|tcp)://([^/:\s]+|\[[0-9a-fA-F:]+\]):(\d+)/?", t)
    if m:
        if not dask_available():
            raise NerstudioError(f"executor {t!r}: {EXTRA_MISSING}")
        return DaskExecutor(f"tcp://{m.group(1)}:{m.group(2)}")
    raise SettingsError(f"unknown executor {t!r} (choose from {SETTINGS_HELP})")


class DaskExecutor:
    """Jobs on a Dask cluster (see the module docstring): ``address`` of a running scheduler,
    or ``local_workers`` for a ``LocalCluster`` of that many single-threaded worker processes.
    Connects (or starts the cluster) on the first run; :meth:`close` (or ``with``) ends it."""

    remote = True

    def __init__(
        self, address: str | None = None, local_workers: int | None = None, ship: str = "auto"
    ):
        if (address is None) == (local_workers is None):
            raise SettingsError("give a scheduler address or a number of local workers")
        if ship not in ("auto", "path", "bytes"):
            raise SettingsError("ship must be auto, path or bytes")
        self.address, self.local_workers, self.ship = address, local_workers, ship
        self._client = self._cluster = None
        self._lock = threading.Lock()
        self._cancelled_events: list = []  # set events of cancelled runs, cleared on close

    @property
    def setting(self) -> str:
        return (
            f"dask-local:{self.local_workers}"
            if self.address is None
            else "dask://" + self.address.split("://", 1)[1]
        )

    def __repr__(self) -> str:
        return f"DaskExecutor({self.setting})"

    def client(self):
        """The ``distributed.Client``, connected (or the local cluster started) on first use."""
        with self._lock:
            if self._client is None:
                d = _distributed()
                if self.address is None:
                    import dask.config

                    with dask.config.set({"distributed.scheduler.allowed-failures": 1}):
                        self._cluster = d.LocalCluster(
                            n_workers=self.local_workers,
                            threads_per_worker=1,
                            processes=True,
                            # None: no dashboard (dask's annotation says str only)
                            dashboard_address=None,  # pyright: ignore[reportArgumentType]
                            silence_logs=logging.CRITICAL,
                        )
                    self._client = d.Client(self._cluster)
                else:
                    try:
                        self._client = d.Client(self.address, timeout=CONNECT_TIMEOUT)
                    except (OSError, TimeoutError) as exc:
                        raise NerstudioError(
                            f"cannot reach the Dask scheduler at {self.address}: {one_line(exc)}"
                        ) from None
            return self._client

    def close(self) -> None:
        with self._lock:
            client, cluster, self._client, self._cluster = self._client, self._cluster, None, None
        if client is not None:
            for ev in self._cancelled_events:
                try:
                    ev.clear()
                except Exception:
                    pass
            self._cancelled_events.clear()
            client.close()
        if cluster is not None:
            cluster.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- a run -----------------------------------------------------------------------------------
    def run(self, jobs, data, *, on_result, on_progress, should_cancel, source=None) -> None:
        if source is None:
            raise ValueError("a Dask executor needs the files the work's data comes from (source)")
        if any(j.files is None for j in jobs):
            raise ValueError(
                f"these jobs cannot send their results as files: "
                f"{', '.join(j.name for j in jobs if j.files is None)}"
            )
        d = _distributed()
        client = self.client()
        paths = sorted(
            {p for x in [source] + find_inputs([j.settings for j in jobs]) for p in x.paths()}
        )
        digests = {p: sha256_file(p) for p in paths}
        shipped = self._ship(client, digests)
        run_id = uuid.uuid4().hex[:12]
        topic = f"nerstudio-{run_id}"
        events: queue.Queue = queue.Queue()
        client.subscribe_topic(topic, events.put)
        cancel = d.Event(f"nerstudio-cancel-{run_id}", client=client)
        pending: dict = {}  # future -> job index
        starts: dict[int, list[str]] = {
            i: [] for i in range(len(jobs))
        }  # workers each job started on
        try:
            for i, job in enumerate(jobs):
                key = f"nerstudio-{re.sub(r'[^A-Za-z0-9=.,]+', '_', job.name)}-{run_id}"
                pending[
                    client.submit(
                        _remote_job, job, i, source, shipped, run_id, key=key, pure=False, retries=0
                    )
                ] = i
            while pending:
                if should_cancel is not None and should_cancel():
                    raise Cancelled("cancelled")
                try:
                    self._event(events.get(timeout=POLL_INTERVAL)[1], jobs, starts, on_progress)
                except queue.Empty:
                    pass
                for fut in [f for f in pending if f.status != "pending"]:
                    while not events.empty():  # a job's last messages before its result
                        self._event(events.get_nowait()[1], jobs, starts, on_progress)
                    i = pending.pop(fut)
                    if fut.status == "finished":
                        files, secs = fut.result()
                        on_result(i, _read_result(jobs[i], files), secs)
                    elif fut.status == "error":
                        raise _failure(jobs[i], fut)
                    else:
                        raise ChildProcessFailed(
                            f"{jobs[i].name}: the Dask scheduler dropped it ({fut.status})"
                        )
        finally:
            if (
                pending
            ):  # cancelled or failed: running tasks stop at their next check, the rest never start
                try:
                    cancel.set()
                    self._cancelled_events.append(cancel)
                    client.cancel(list(pending))
                except Exception:
                    pass
            try:
                client.unsubscribe_topic(topic)
            except Exception:
                pass

    @staticmethod
    def _event(msg: dict, jobs, starts: dict, on_progress) -> None:
        i = int(msg["job"])
        if msg["kind"] == "progress":
            on_progress(i, msg["message"])
            return
        starts[i].append(msg["worker"])
        if len(starts[i]) == 2:
            on_progress(i, f"its worker {starts[i][0]} died: retrying on {starts[i][1]}", True)
        elif len(starts[i]) > 2:  # a scheduler that allows more than one retry
            raise ChildProcessFailed(
                f"{jobs[i].name}: its Dask worker died twice ({starts[i][0]}, {starts[i][1]}); "
                "given up"
            )

    def _ship(self, client, digests: dict[str, str]) -> dict:
        """``{path: (sha256, future of its bytes)}`` for the files some worker does not see."""
        if self.ship == "path" or not digests:
            return {}
        need = set(digests)
        if self.ship == "auto":
            need = set()
            for worker, answer in client.run(_worker_sees, digests, on_error="return").items():
                if isinstance(answer, BaseException):
                    raise NerstudioError(
                        f"Dask worker {worker} cannot run nerstudio's work: {one_line(answer)} "
                        "(install nerstudio[dask] on every worker)"
                    )
                version, seen = answer
                if version != __version__:
                    raise NerstudioError(
                        f"Dask worker {worker} runs nerstudio {version}, this is {__version__}: "
                        "install the same version on every worker"
                    )
                need |= set(digests) - set(seen)
        shipped = {}
        for path in sorted(need):
            with open(path, "rb") as f:
                blob = f.read()
            if hashlib.sha256(blob).hexdigest() != digests[path]:
                raise NerstudioError(f"{path}: the file changed while the work was being sent")
            shipped[path] = (digests[path], client.scatter(blob, hash=False))
        return shipped


def _read_result(job, files: dict[str, bytes]):
    with tempfile.TemporaryDirectory(prefix="nerstudio-result-") as folder:
        unpack_folder(files, folder)
        return job.files.load(folder)


def _failure(job, fut) -> BaseException:
    exc = fut.exception()
    killed = _distributed().KilledWorker
    if isinstance(exc, killed):
        n = exc.allowed_failures + 1
        times = "twice" if n == 2 else ("once" if n == 1 else f"{n} times")
        last = getattr(exc.last_worker, "address", exc.last_worker)
        return ChildProcessFailed(
            f"{job.name}: its Dask worker died {times} (the last {last}); given up"
        )
    if isinstance(exc, BaseException):
        tb = fut.traceback()
        if tb is not None:
            exc.add_note(f"in the Dask task of {job.name}:\n{''.join(traceback.format_tb(tb))}")
        return exc
    return ChildProcessFailed(f"{job.name}: failed on Dask ({exc!r})")


# ------------------------------------------------------------------------------------------------
# what runs on a worker (module-level: workers import it by name)


def _worker_sees(digests: dict[str, str]) -> tuple[str, list[str]]:
    """On every worker before a run: nerstudio's version and the paths it reads with the caller's content."""
    seen = []
    for path, digest in digests.items():
        try:
            if sha256_file(path) == digest:
                seen.append(path)
        except OSError:
            pass
    return __version__, seen


def _materialize(shipped: dict) -> dict[str, str]:
    """Shipped files written once per worker machine (by content) under the temporary folder;
    ``{caller's path: local path}``."""
    local = {}
    for path, (digest, blob) in shipped.items():
        folder = os.path.join(tempfile.gettempdir(), "nerstudio-inputs", digest)
        target = os.path.join(folder, os.path.basename(path))
        if not os.path.exists(target):
            os.makedirs(folder, exist_ok=True)
            tmp = f"{target}.{os.getpid()}.{threading.get_ident()}.part"
            with open(tmp, "wb") as f:
                f.write(blob)
            os.replace(tmp, target)
        local[path] = target
    return local


def _remote_job(job, index: int, source, shipped: dict, run_id: str):
    """One job on a worker: load the inputs (cached), run the task with progress and cancellation
    wired to the caller, return the result's files and the seconds it took."""
    from distributed import Event, get_worker

    worker = get_worker()
    topic = f"nerstudio-{run_id}"
    worker.log_event(topic, {"job": index, "kind": "started", "worker": worker.address})
    cancel = Event(f"nerstudio-cancel-{run_id}")
    asked, told, sent = [0.0], [False], [0.0]

    def should_cancel() -> bool:
        now = time.monotonic()
        if not told[0] and now - asked[0] >= CANCEL_CHECK_INTERVAL:
            asked[0] = now
            told[0] = bool(cancel.is_set())
        return told[0]

    def report(message: str) -> None:
        now = time.monotonic()
        if now - sent[0] >= PROGRESS_INTERVAL:
            sent[0] = now
            worker.log_event(topic, {"job": index, "kind": "progress", "message": str(message)})

    t0 = time.perf_counter()
    ctx = TaskContext(should_cancel, report)
    try:
        ctx.check()
        local = _materialize(shipped)

        def resolve(path: str) -> str:
            return local.get(path, path)

        data = load_input(source, resolve)
        job = dataclasses.replace(job, settings=load_inputs(job.settings, resolve))
        result = job.task(data, job, ctx)
        ctx.check()
        with tempfile.TemporaryDirectory(prefix="nerstudio-result-") as folder:
            job.files.save(result, folder)
            files = pack_folder(folder)
    except BaseException as exc:
        try:
            pickle.loads(pickle.dumps(exc))
        except Exception:
            raise ChildProcessFailed(
                f"{job.name}: {one_line(exc)}", traceback.format_exc()
            ) from None
        raise
    return files, time.perf_counter() - t0
