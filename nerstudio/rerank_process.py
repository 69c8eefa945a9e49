"""Reranker training in a child process (no Qt; used by the desktop application).

Feature extraction and training are long stretches of Python and compiled code. Run in a thread
of the GUI process they share its interpreter lock, and every long hold of that lock freezes the
window. Here they run in a fresh interpreter started with the ``spawn`` method (never ``fork``
from a process that runs Qt), and the caller's thread only waits on a pipe.

Everything crosses the process boundary as files in a temporary folder, in the project's own
formats: the N-best lists (:meth:`NBestList.save` / ``load``), the trained model
(:meth:`RerankerModel.save` / ``load``) and the ranking data of the training list with the
model's scores (:func:`save_ranking` / :func:`load_ranking`: ``.npz`` of plain arrays with a JSON
header, read with ``allow_pickle=False``). Control messages — progress, training-curve points,
the outcome — are small JSON documents on a pipe; cancellation is one message the other way.

:func:`train_in_child` runs one training and takes the usual
``callback`` (one :class:`~nerstudio.rerank.base.RerankStats` per curve point), ``progress``
(``(message, done, total)``) and ``should_cancel`` arguments. After ``should_cancel()`` turns true
the child is told to stop; it stops at the core's next check (milliseconds), and is terminated,
then killed, if it has not ended ``grace`` seconds later. An error in the child comes back as a
:class:`ChildProcessFailed` carrying its one-line message (and the child's traceback for logs);
a child that dies (killed, out of memory) is reported the same way, never waited for forever.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import shutil
import signal
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from .errors import Cancelled, NerstudioError
from .nbest import NBestList
from .persist import json_array, jsonable, load_npz

START_METHOD = "spawn"
RANKING_FORMAT = "nerstudio-ranking"
RANKING_VERSION = 1
SEND_INTERVAL = 0.05  # seconds between two progress / curve messages from the child (≤ 20 per second)
POLL_INTERVAL = 0.05  # how often the caller's thread looks at the pipe and at should_cancel
CHILD_NICE = 5  # the child's scheduling priority below the caller's (only matters when cores are busy)

_LIVE: "set[multiprocessing.process.BaseProcess]" = set()  # children started here and not yet reaped
_LIVE_LOCK = threading.Lock()


class ChildProcessFailed(NerstudioError):
    """The child process reported an error or ended without a result. ``str()`` is one line
    for the user; ``details`` holds the child's traceback (for logs), if there is one."""

    def __init__(self, message: str, details: str = ""):
        super().__init__(message)
        self.details = details


@dataclass
class ChildResult:
    model: Any  # nerstudio.rerank.model.RerankerModel
    data: Any  # RankingData of the training list (its nbest is the caller's list)
    scores: np.ndarray  # the model's score of every candidate of ``data``
    choice: np.ndarray  # the model's pick per sentence
    timings: dict = field(default_factory=dict)  # seconds: start-up, work in the child, reading back


def live_children() -> list:
    """Child processes started by this module that are still running."""
    with _LIVE_LOCK:
        return [p for p in _LIVE if p.is_alive()]


# ------------------------------------------------------------------------------------------------
# training that keeps the training data


def fit_with_data(train: NBestList, dev: NBestList | None, algo: str, params: dict | None = None,
                  feature_params: dict | None = None, callback=None, should_cancel=None, progress=None):
    """:func:`nerstudio.rerank.model.train_reranker`, step for step, returning ``(model, data)``
    with the training list's ranking data, so scoring that list needs no second feature pass."""
    from .rerank.features import GlobalFeatures
    from .rerank.model import ALGORITHM_NAMES, RerankerModel, make_learner
    learner = make_learner(algo, **(params or {}))  # bad settings fail now, not after the features
    t0 = time.perf_counter()
    gf = GlobalFeatures(**(feature_params or {}))

    def prog(stage):
        return (lambda d, n: progress(stage, d, n)) if progress is not None else None

    train_data = gf.fit_transform(train, progress=prog("features (train)"), should_cancel=should_cancel)
    dev_data = gf.transform(dev, progress=prog("features (dev)"), should_cancel=should_cancel) \
        if dev is not None else None
    t1 = time.perf_counter()
    if progress is not None:
        progress(f"training {ALGORITHM_NAMES.get(algo, algo)}", 0, 1)
    learner.fit(train_data, dev_data, callback=callback, should_cancel=should_cancel)
    meta = {"features_seconds": t1 - t0, "train_seconds": time.perf_counter() - t1,
            "n_features": gf.n_features, "train_sentences": len(train), "dev_sentences": len(dev) if dev else 0}
    return RerankerModel(gf, learner, meta), train_data


# ------------------------------------------------------------------------------------------------
# ranking data with scores as a file

_OPTIONAL = ("oracle", "correct", "proposed", "n_gold", "quality")


def save_ranking(path, data, scores: np.ndarray, choice: np.ndarray) -> None:
    """Write ranking data (without its N-best list and feature names) and per-candidate scores.

    Uncompressed: this is a hand-over file, read once right away, and compressing a CSR matrix
    of tens of millions of entries would cost seconds.
    """
    X = data.X
    arrays = {"indptr": np.asarray(X.indptr), "indices": np.asarray(X.indices), "L": np.asarray(data.L),
              "offsets": np.asarray(data.offsets), "scores": np.asarray(scores, dtype=np.float64),
              "choice": np.asarray(choice, dtype=np.int64)}
    present = []
    for name in _OPTIONAL:
        v = getattr(data, name)
        if v is not None:
            arrays[name] = np.asarray(v)
            present.append(name)
    header = {"format": RANKING_FORMAT, "version": RANKING_VERSION, "shape": [int(X.shape[0]), int(X.shape[1])],
              "binary": bool(X.nnz == 0 or (X.data.min() == 1 and X.data.max() == 1)), "optional": present}
    if not header["binary"]:
        arrays["values"] = np.asarray(X.data)
    with open(os.fspath(path), "wb") as f:
        np.savez(f, header=json_array(header), **arrays)


def load_ranking(path, nbest: NBestList | None = None, feature_names: list | None = None):
    """Read :func:`save_ranking`'s file: ``(RankingData, scores, choice)``; ``nbest`` and
    ``feature_names`` are attached to the data as they were in the writer's process."""
    import scipy.sparse as sp

    from .errors import FormatError
    from .rerank.data import RankingData
    header, a = load_npz(path, RANKING_FORMAT, RANKING_VERSION, "a ranking-data file")
    try:
        n, m = (int(x) for x in header["shape"])
        indices, indptr = a["indices"], a["indptr"]
        values = np.ones(len(indices), dtype=np.int8) if header["binary"] else a["values"]
        X = sp.csr_matrix((values, indices, indptr), shape=(n, m))
        opt = {k: a[k] for k in header.get("optional", [])}
        data = RankingData(X, a["L"], a["offsets"], nbest=nbest, feature_names=feature_names or [], **opt)
        scores, choice = a["scores"], a["choice"]
        if len(scores) != n or len(choice) != len(data):
            raise ValueError("scores or choices do not match the data")
    except (KeyError, ValueError, TypeError) as exc:
        raise FormatError(path, None, f"corrupt ranking-data file: {exc}") from None
    if nbest is not None and len(nbest) != len(data):
        raise FormatError(path, None, f"{len(data)} sentences, but the N-best list has {len(nbest)}")
    return data, scores, choice


# ------------------------------------------------------------------------------------------------
# the child


class _Outbox:
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

    def curve(self, st) -> None:
        with self.lock:
            self.stats.append(jsonable(st.as_dict()))

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


def _child_main(spec: dict, conn, ctl) -> None:
    """Entry point of the child process (see :func:`_run`)."""
    t_start = time.perf_counter()
    if CHILD_NICE and hasattr(os, "nice"):
        try:
            os.nice(CHILD_NICE)  # when the cores are short, the window goes first
        except OSError:
            pass
    cancel = threading.Event()
    threading.Thread(target=_listen, args=(ctl, cancel), name="cancel-listener", daemon=True).start()
    out = _Outbox(conn)
    out.send({"kind": "started", "pid": os.getpid(), "import_seconds": time.perf_counter() - t_start})
    code = 0
    try:
        timings = _child_work(spec, out, cancel.is_set)
        out.close()
        out.send({"kind": "done", "timings": timings})
    except Cancelled as exc:
        out.close()
        out.send({"kind": "cancelled", "message": str(exc) or "cancelled"})
    except MemoryError:
        out.close()
        out.send({"kind": "error", "message": "out of memory in the training process", "traceback": ""})
        code = 1
    except Exception as exc:  # noqa: BLE001 - every error goes back to the parent as a message
        out.close()
        out.send({"kind": "error", "message": _one_line(exc), "traceback": traceback.format_exc()})
        code = 1
    try:
        conn.close()
    except OSError:
        pass
    # skip the interpreter's teardown: freeing a heap of millions of objects takes seconds, and
    # the parent waits for this process to end
    os._exit(code)


def _one_line(exc: BaseException) -> str:
    if isinstance(exc, NerstudioError):
        return str(exc)
    return f"{type(exc).__name__}: {exc}"


def _child_work(spec: dict, out: _Outbox, should_cancel: Callable[[], bool]) -> dict:
    times: dict[str, float] = {}
    t = time.perf_counter()
    out.progress("reading the N-best lists…")
    train = NBestList.load(spec["train"])
    dev = NBestList.load(spec["dev"]) if spec.get("dev") else None
    times["read"] = time.perf_counter() - t

    def progress(stage, d=0, n=0):
        out.progress(f"{stage}: {int(d):,}/{int(n):,}" if n and n > 1 else str(stage), d, n)

    t = time.perf_counter()
    if spec["task"] != "train":
        raise ValueError(f"unknown task {spec['task']!r}")
    model, data = fit_with_data(train, dev, spec["algo"], spec.get("params") or {},
                                spec.get("feature_params") or {}, callback=out.curve,
                                should_cancel=should_cancel, progress=progress)
    times["train"] = time.perf_counter() - t
    t = time.perf_counter()
    model.save(spec["model_out"])
    if should_cancel():
        raise Cancelled("cancelled")
    progress("scoring the candidates…")
    scores = np.asarray(model.scores(data), dtype=np.float64)
    choice = np.asarray(data.argmax(scores))
    progress("handing the scores over…")
    save_ranking(spec["ranking_out"], data, scores, choice)
    times["score_and_write"] = time.perf_counter() - t
    return times


# ------------------------------------------------------------------------------------------------
# the parent


def _death(proc) -> str:
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


def _stop(proc, grace: float = 0.3) -> None:
    """Terminate, then kill, a child that did not stop by itself."""
    if proc.is_alive():
        proc.terminate()
        proc.join(grace)
    if proc.is_alive():
        proc.kill()
        proc.join(5.0)


def _run(spec: dict, callback=None, should_cancel=None, progress=None, grace: float = 0.5,
         on_start: Callable[[int], None] | None = None) -> dict:
    """Start the child on ``spec``, relay its messages until it ends; returns its timings."""
    from .rerank.base import RerankStats
    mp = multiprocessing.get_context(START_METHOD)
    msg_r, msg_w = mp.Pipe(duplex=False)
    ctl_r, ctl_w = mp.Pipe(duplex=False)
    proc = mp.Process(target=_child_main, args=(spec, msg_w, ctl_r), name="nerstudio-rerank", daemon=True)
    t0 = time.perf_counter()
    try:
        proc.start()
    except OSError as exc:
        for c in (msg_r, msg_w, ctl_r, ctl_w):
            c.close()
        raise ChildProcessFailed(f"cannot start the training process: {exc}") from None
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
                _stop(proc)
                raise Cancelled("cancelled (the training process was stopped)")
            if not msg_r.poll(POLL_INTERVAL):
                if not proc.is_alive() and not msg_r.poll(0):
                    proc.join(1.0)
                    raise ChildProcessFailed(_death(proc))
                continue
            try:
                msg = json.loads(msg_r.recv_bytes().decode("utf-8"))
            except (EOFError, OSError):
                proc.join(2.0)
                raise ChildProcessFailed(_death(proc)) from None
            kind = msg.get("kind")
            if kind == "started":
                timings["start_up"] = time.perf_counter() - t0
            elif kind == "progress":
                if progress is not None:
                    progress(msg["message"], msg["done"], msg["total"])
            elif kind == "stats":
                if callback is not None:
                    for d in msg["items"]:
                        callback(RerankStats(**d))
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
                raise ChildProcessFailed(msg.get("message") or "the training process failed",
                                         msg.get("traceback", ""))
    finally:
        if proc.is_alive():
            _stop(proc, 0.5 if cancel_at is None else 0.1)
        proc.join(1.0)
        for c in (msg_r, ctl_w):
            c.close()
        with _LIVE_LOCK:
            _LIVE.discard(proc)
        if not proc.is_alive():
            proc.close()


def _workdir(workdir):
    if workdir is not None:
        os.makedirs(workdir, exist_ok=True)
        return os.fspath(workdir), False
    return tempfile.mkdtemp(prefix="nerstudio-job-"), True


def train_in_child(train: NBestList, dev: NBestList | None, algo: str, params: dict | None = None,
                   feature_params: dict | None = None, *, callback=None, should_cancel=None, progress=None,
                   grace: float = 0.5, workdir=None, on_start=None, train_file=None,
                   dev_file=None) -> ChildResult:
    """Train a reranker on ``train`` (curve on ``dev``) in a child process and score ``train``
    with it — what :func:`~nerstudio.rerank.model.train_reranker` followed by
    ``model.scores(model.data(train))`` computes in this process. ``on_start(pid)`` is called
    once the child runs (callers use it to show or watch the process). ``train_file`` /
    ``dev_file``: N-best files whose content *is* ``train`` / ``dev`` (the caller read them and
    changed nothing); the child reads them instead of copies written here."""
    folder, own = _workdir(workdir)
    try:
        t = time.perf_counter()
        spec = {"task": "train", "algo": algo, "params": jsonable(dict(params or {})),
                "feature_params": jsonable(dict(feature_params or {})),
                "train": os.fspath(train_file) if train_file else os.path.join(folder, "train.nbest.npz"),
                "dev": None, "model_out": os.path.join(folder, "model.npz"),
                "ranking_out": os.path.join(folder, "ranking.npz")}
        if dev is not None:
            spec["dev"] = os.fspath(dev_file) if dev_file else os.path.join(folder, "dev.nbest.npz")
        if progress is not None and (not train_file or (dev is not None and not dev_file)):
            progress("handing the N-best lists to the training process…", 0, 0)
        if not train_file:
            train.save(spec["train"])
        if dev is not None and not dev_file:
            dev.save(spec["dev"])
        write_s = time.perf_counter() - t
        if should_cancel is not None and should_cancel():
            raise Cancelled("cancelled")
        timings = _run(spec, callback, should_cancel, progress, grace, on_start)
        timings["write_inputs"] = write_s
        return _read_back(spec, train, timings, progress)
    finally:
        if own:
            shutil.rmtree(folder, ignore_errors=True)


def _read_back(spec: dict, nbest: NBestList, timings: dict, progress) -> ChildResult:
    t = time.perf_counter()
    if progress is not None:
        progress("reading the model and its scores…", 0, 0)
    from .rerank.model import RerankerModel
    model = RerankerModel.load(spec["model_out"])
    data, scores, choice = load_ranking(spec["ranking_out"], nbest, model.features.names_)
    timings["read_back"] = time.perf_counter() - t
    return ChildResult(model, data, scores, choice, timings)
