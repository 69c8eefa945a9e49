"""Long work in a spawned child process, watched from a thread of the caller (no Qt).

Shared by :mod:`.rerank_process` (reranker training) and :mod:`.tagger_process` (K&T sequence
taggers). Work that holds the interpreter lock for long stretches freezes a window
whose event loop shares that lock; here it runs in a fresh interpreter started with the
``spawn`` method (never ``fork`` from a process that runs Qt), and the caller's thread only
waits on a pipe.

Protocol: the child sends small JSON documents on a message pipe — ``started``, ``progress``
(only the latest one is kept between two sends), ``stats`` (batched curve points, none dropped),
then exactly one of ``done`` (with its timings), ``cancelled`` or ``error`` (a one-line message
and the traceback). The parent records a child's error, with the traceback it sent, in the log
file (:mod:`nerstudio.logs`), and a child that died without a word with how it ended. The parent sends one ``cancel`` message the other way; a closed
control pipe (the parent died) cancels too. After ``should_cancel()`` turns true the child is
told to stop; if it has not ended ``grace`` seconds later it is terminated, then killed. A child
that dies without a result (killed, out of memory) is reported as :class:`ChildProcessFailed`
with one line naming the signal or exit status, never waited for forever.

Large data crosses as files (the project's ``.npz`` + JSON formats) in a work folder
(:func:`work_folder`); only their names go in the child's ``spec``.

Usage: a module-level ``work(spec, outbox, should_cancel) -> timings dict`` function (it must
be importable by name in the child) and :func:`run_in_child` in the parent::

    timings = run_in_child(work, spec, name="nerstudio-x", on_stats=..., progress=...,
                           should_cancel=..., grace=0.5, on_start=...)
"""

from __future__ import annotations

import json
import multiprocessing
import multiprocessing.process
import os
import signal
import tempfile
import threading
import time
import traceback
from collections.abc import Callable

from .. import logs
from ..errors import Cancelled, NerstudioError
from ..persist import jsonable

START_METHOD = "spawn"
SEND_INTERVAL = (
    0.05  # seconds between two progress / curve messages from the child (≤ 20 per second)
)
POLL_INTERVAL = 0.05  # how often the caller's thread looks at the pipe and at should_cancel
CHILD_NICE = (
    5  # the child's scheduling priority below the caller's (only matters when cores are busy)
)

_LIVE: set[multiprocessing.process.BaseProcess] = set()  # children started here and not yet reaped
_LIVE_LOCK = threading.Lock()

Work = Callable[[dict, "Outbox", Callable[[], bool]], dict]


class ChildProcessFailed(NerstudioError):
    """The child process reported an error or ended without a result. ``str()`` is one line
    for the user; ``details`` holds the child's traceback, if there is one. Both are recorded
    in the log file when the error is raised by :func:`run_in_child`."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


def _failed(name: str, pid, message: str, details: str = "") -> ChildProcessFailed:
    """A :class:`ChildProcessFailed`, recorded in the log with the child's traceback."""
    logs.log_error(f"child process {name} (pid {pid}) failed: {message}", details, name="child")
    return ChildProcessFailed(message, details)


def live_children() -> list:
    """Child processes started by :func:`run_in_child` that are still running."""
    with _LIVE_LOCK:
        return [p for p in _LIVE if p.is_alive()]


def one_line(exc: BaseException) -> str:
    """The message the user sees for ``exc``: a project error's own text, else type and text."""
    if isinstance(exc, NerstudioError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def work_folder(workdir=None) -> tuple[str, bool]:
    """``(folder, owned)``: ``workdir`` (created if needed, not owned), or a new temporary
    folder the caller owns and removes."""
    if workdir is not None:
        os.makedirs(workdir, exist_ok=True)
        return os.fspath(workdir), False
    return tempfile.mkdtemp(prefix="nerstudio-job-"), True


# ------------------------------------------------------------------------------------------------
# the child


class Outbox:
    """The child's side of the message pipe: progress keeps only the latest message, curve points
    are batched (none dropped); a thread sends what is pending every SEND_INTERVAL."""

    def __init__(self, conn):
        self.conn = conn
        self.lock = threading.Lock()
        self.stats: list[dict] = []
        self.prog: tuple | None = None
        self.stop = threading.Event()
        self.broken = False
        self.thread = threading.Thread(target=self._loop, name="outbox", daemon=True)
        self.thread.start()

    def progress(self, message: str, done: int = 0, total: int = 0) -> None:
        with self.lock:
            self.prog = (str(message), int(done), int(total))

    def curve(self, point) -> None:
        """Queue one curve point: a dict, or an object with ``as_dict()``."""
        d = point if isinstance(point, dict) else point.as_dict()
        with self.lock:
            self.stats.append(jsonable(d))

    def send(self, msg: dict) -> None:
        with self.lock:
            self._send(msg)

    def _send(self, msg: dict) -> None:
        if self.broken:
            return
        try:
            self.conn.send_bytes(json.dumps(msg).encode("utf-8"))
        except (OSError, ValueError):
            self.broken = True  # the parent is gone: nobody to tell

    def flush(self) -> None:
        with self.lock:
            if self.stats:
                self._send({"kind": "stats", "items": self.stats})
                self.stats = []
            if self.prog is not None:
                m, d, t = self.prog
                self._send({"kind": "progress", "message": m, "done": d, "total": t})
                self.prog = None

    def _loop(self) -> None:
        while not self.stop.wait(SEND_INTERVAL):
            self.flush()

    def close(self) -> None:
        self.stop.set()
        self.thread.join()
        self.flush()


def _listen(ctl, cancel: threading.Event) -> None:
    """Wait for 'cancel' from the parent; a closed pipe (the parent died) cancels too."""
    try:
        while True:
            if ctl.recv_bytes() == b"cancel":
                break
    except (EOFError, OSError):
        pass
    cancel.set()


def _child_main(work: Work, spec: dict, conn, ctl) -> None:
    """Entry point of the child process: run ``work`` and report its outcome."""
    # a forked child: the command line's SIGTERM handler is the parent's, not its own
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    t_start = time.perf_counter()
    if CHILD_NICE and hasattr(os, "nice"):
        try:
            os.nice(CHILD_NICE)  # when the cores are short, the window goes first
        except OSError:
            pass
    cancel = threading.Event()
    threading.Thread(
        target=_listen, args=(ctl, cancel), name="cancel-listener", daemon=True
    ).start()
    out = Outbox(conn)
    out.send(
        {"kind": "started", "pid": os.getpid(), "import_seconds": time.perf_counter() - t_start}
    )
    code = 0
    try:
        timings = work(spec, out, cancel.is_set)
        out.close()
        out.send({"kind": "done", "timings": timings})
    except Cancelled as exc:
        out.close()
        out.send({"kind": "cancelled", "message": str(exc) or "cancelled"})
    except MemoryError:
        out.close()
        out.send(
            {"kind": "error", "message": "out of memory in the training process", "traceback": ""}
        )
        code = 1
    except Exception as exc:
        out.close()
        out.send({"kind": "error", "message": one_line(exc), "traceback": traceback.format_exc()})
        code = 1
    try:
        conn.close()
    except OSError:
        pass
    # skip the interpreter's teardown: freeing a heap of millions of objects takes seconds, and
    # the parent waits for this process to end
    os._exit(code)


# ------------------------------------------------------------------------------------------------
# the parent


def death_message(proc) -> str:
    """One line on a child that ended without a result (signal or exit status)."""
    code = proc.exitcode
    if code is None:
        return "the training process stopped answering"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        hint = " (out of memory, or stopped from outside)" if -code == signal.SIGKILL else ""
        return f"the training process was killed by {name}{hint} before it finished"
    return f"the training process ended (exit status {code}) without a result"


def stop_process(proc, grace: float = 0.3) -> None:
    """Terminate, then kill, a child that did not stop by itself."""
    if proc.is_alive():
        proc.terminate()
        proc.join(grace)
    if proc.is_alive():
        proc.kill()
        proc.join(5.0)


def run_in_child(
    work: Work,
    spec: dict,
    *,
    name: str = "nerstudio-child",
    on_stats: Callable[[dict], None] | None = None,
    should_cancel=None,
    progress=None,
    grace: float = 0.5,
    on_start: Callable[[int], None] | None = None,
) -> dict:
    """Start a child running ``work(spec, outbox, should_cancel)`` and relay its messages until
    it ends: ``progress(message, done, total)``, ``on_stats(dict)`` per curve point,
    ``on_start(pid)`` once it runs. Returns its timings (plus ``spawn``, ``start_up``,
    ``child_total``); raises :class:`Cancelled` or :class:`ChildProcessFailed`."""
    mp = multiprocessing.get_context(START_METHOD)
    msg_r, msg_w = mp.Pipe(duplex=False)
    ctl_r, ctl_w = mp.Pipe(duplex=False)
    proc = mp.Process(target=_child_main, args=(work, spec, msg_w, ctl_r), name=name, daemon=True)
    t0 = time.perf_counter()
    try:
        proc.start()
    except OSError as exc:
        for c in (msg_r, msg_w, ctl_r, ctl_w):
            c.close()
        raise _failed(name, None, f"cannot start the training process: {exc}") from None
    with _LIVE_LOCK:
        _LIVE.add(proc)
    msg_w.close()  # the child holds the only writer now: its death is an end of file here
    ctl_r.close()
    timings: dict = {"spawn": time.perf_counter() - t0}
    cancel_at = None
    try:
        if on_start is not None:
            on_start(proc.pid)
        while True:
            if cancel_at is None and should_cancel is not None and should_cancel():
                cancel_at = time.monotonic()
                try:
                    ctl_w.send_bytes(b"cancel")
                except OSError:
                    pass
            if cancel_at is not None and time.monotonic() - cancel_at > grace:
                stop_process(proc)
                raise Cancelled("cancelled (the training process was stopped)")
            if not msg_r.poll(POLL_INTERVAL):
                if not proc.is_alive() and not msg_r.poll(0):
                    proc.join(1.0)
                    raise _failed(name, proc.pid, death_message(proc))
                continue
            try:
                msg = json.loads(msg_r.recv_bytes().decode("utf-8"))
            except (EOFError, OSError):
                proc.join(2.0)
                raise _failed(name, proc.pid, death_message(proc)) from None
            kind = msg.get("kind")
            if kind == "started":
                timings["start_up"] = time.perf_counter() - t0
            elif kind == "progress":
                if progress is not None:
                    progress(msg["message"], msg["done"], msg["total"])
            elif kind == "stats":
                if on_stats is not None:
                    for d in msg["items"]:
                        on_stats(d)
            elif kind == "done":
                timings.update(msg.get("timings", {}))
                timings["child_total"] = time.perf_counter() - t0
                proc.join(5.0)
                return timings
            elif kind == "cancelled":
                proc.join(2.0)
                raise Cancelled(msg.get("message") or "cancelled")
            elif kind == "error":
                proc.join(2.0)
                raise _failed(
                    name,
                    proc.pid,
                    msg.get("message") or "the training process failed",
                    msg.get("traceback", ""),
                )
    finally:
        if proc.is_alive():
            stop_process(proc, 0.5 if cancel_at is None else 0.1)
        proc.join(1.0)
        for c in (msg_r, ctl_w):
            c.close()
        with _LIVE_LOCK:
            _LIVE.discard(proc)
        if not proc.is_alive():
            proc.close()
