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
The process machinery (spawn, pipes, cancel/terminate/kill, death detection, the registry of
live children) is :mod:`.child_process`, shared with :mod:`.tagger_process`;
``ChildProcessFailed`` and ``live_children`` are re-exported here.
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..errors import Cancelled
from ..nbest import NBestList
from ..persist import json_array, jsonable, load_npz
from .child_process import ChildProcessFailed, Outbox, live_children, run_in_child, work_folder  # noqa: F401

RANKING_FORMAT = "nerstudio-ranking"
RANKING_VERSION = 1


@dataclass
class ChildResult:
    model: Any  # nerstudio.rerank.model.RerankerModel
    data: Any  # RankingData of the training list (its nbest is the caller's list)
    scores: np.ndarray  # the model's score of every candidate of ``data``
    choice: np.ndarray  # the model's pick per sentence
    # seconds: start-up, work in the child, reading back
    timings: dict = field(default_factory=dict)


# ------------------------------------------------------------------------------------------------
# ranking data with scores as a file

_OPTIONAL = ("oracle", "correct", "proposed", "n_gold", "quality")


def save_ranking(path, data, scores: np.ndarray, choice: np.ndarray) -> None:
    """Write ranking data (without its N-best list and feature names) and per-candidate scores.

    Uncompressed: this is a hand-over file, read once right away, and compressing a CSR matrix
    of tens of millions of entries would cost seconds.
    """
    X = data.X
    arrays = {
        "indptr": np.asarray(X.indptr),
        "indices": np.asarray(X.indices),
        "L": np.asarray(data.L),
        "offsets": np.asarray(data.offsets),
        "scores": np.asarray(scores, dtype=np.float64),
        "choice": np.asarray(choice, dtype=np.int64),
    }
    present = []
    for name in _OPTIONAL:
        v = getattr(data, name)
        if v is not None:
            arrays[name] = np.asarray(v)
            present.append(name)
    header = {
        "format": RANKING_FORMAT,
        "version": RANKING_VERSION,
        "shape": [int(X.shape[0]), int(X.shape[1])],
        "binary": bool(X.nnz == 0 or (X.data.min() == 1 and X.data.max() == 1)),
        "optional": present,
    }
    if not header["binary"]:
        arrays["values"] = np.asarray(X.data)
    with open(os.fspath(path), "wb") as f:
        np.savez(f, header=json_array(header), **arrays)


def load_ranking(path, nbest: NBestList | None = None, feature_names: list | None = None):
    """Read :func:`save_ranking`'s file: ``(RankingData, scores, choice)``; ``nbest`` and
    ``feature_names`` are attached to the data as they were in the writer's process."""
    import scipy.sparse as sp

    from ..errors import FormatError
    from ..rerank.data import RankingData

    header, a = load_npz(path, RANKING_FORMAT, RANKING_VERSION, "a ranking-data file")
    try:
        n, m = (int(x) for x in header["shape"])
        indices, indptr = a["indices"], a["indptr"]
        values = np.ones(len(indices), dtype=np.int8) if header["binary"] else a["values"]
        X = sp.csr_matrix((values, indices, indptr), shape=(n, m))
        opt = {k: a[k] for k in header.get("optional", [])}
        data = RankingData(
            X, a["L"], a["offsets"], nbest=nbest, feature_names=feature_names or [], **opt
        )
        scores, choice = a["scores"], a["choice"]
        if len(scores) != n or len(choice) != len(data):
            raise ValueError("scores or choices do not match the data")
    except (KeyError, ValueError, TypeError) as exc:
        raise FormatError(path, None, f"corrupt ranking-data file: {exc}") from None
    if nbest is not None and len(nbest) != len(data):
        raise FormatError(
            path, None, f"{len(data)} sentences, but the N-best list has {len(nbest)}"
        )
    return data, scores, choice


# ------------------------------------------------------------------------------------------------
# the child


def _child_work(spec: dict, out: Outbox, should_cancel: Callable[[], bool]) -> dict:
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
    from ..rerank.model import fit_reranker

    model, data = fit_reranker(
        train,
        dev,
        spec["algo"],
        spec.get("params") or {},
        spec.get("feature_params") or {},
        callback=out.curve,
        should_cancel=should_cancel,
        progress=progress,
    )
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


def _run(
    spec: dict,
    callback=None,
    should_cancel=None,
    progress=None,
    grace: float = 0.5,
    on_start: Callable[[int], None] | None = None,
) -> dict:
    """Start the child on ``spec``, relay its messages until it ends; returns its timings."""
    from ..rerank.base import RerankStats

    on_stats = (lambda d: callback(RerankStats(**d))) if callback is not None else None
    return run_in_child(
        _child_work,
        spec,
        name="nerstudio-rerank",
        on_stats=on_stats,
        should_cancel=should_cancel,
        progress=progress,
        grace=grace,
        on_start=on_start,
    )


def train_in_child(
    train: NBestList,
    dev: NBestList | None,
    algo: str,
    params: dict | None = None,
    feature_params: dict | None = None,
    *,
    callback=None,
    should_cancel=None,
    progress=None,
    grace: float = 0.5,
    workdir=None,
    on_start=None,
    train_file=None,
    dev_file=None,
) -> ChildResult:
    """Train a reranker on ``train`` (curve on ``dev``) in a child process and score ``train``
    with it — what :func:`~nerstudio.rerank.model.train_reranker` followed by
    ``model.scores(model.data(train))`` computes in this process. ``on_start(pid)`` is called
    once the child runs (callers use it to show or watch the process). ``train_file`` /
    ``dev_file``: N-best files whose content *is* ``train`` / ``dev`` (the caller read them and
    changed nothing); the child reads them instead of copies written here."""
    folder, own = work_folder(workdir)
    try:
        t = time.perf_counter()
        spec = {
            "task": "train",
            "algo": algo,
            "params": jsonable(dict(params or {})),
            "feature_params": jsonable(dict(feature_params or {})),
            "train": os.fspath(train_file)
            if train_file
            else os.path.join(folder, "train.nbest.npz"),
            "dev": None,
            "model_out": os.path.join(folder, "model.npz"),
            "ranking_out": os.path.join(folder, "ranking.npz"),
        }
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
    from ..rerank.model import RerankerModel

    model = RerankerModel.load(spec["model_out"])
    data, scores, choice = load_ranking(spec["ranking_out"], nbest, model.features.names_)
    timings["read_back"] = time.perf_counter() - t
    return ChildResult(model, data, scores, choice, timings)
