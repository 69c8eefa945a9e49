"""Kazama & Torisawa sequence taggers trained in a child process (no Qt; used by the application).

The structured perceptron (:class:`~nerstudio.tagging.perceptron.PerceptronTagger`: ``perceptron``,
``averaged``, ``margin``) and the joint trainers (:class:`~nerstudio.tagging.joint.JointTagger`:
``candidate`` = Alg. 4.1, ``proposed`` = Alg. 4.2) run long Python loops that hold the
interpreter lock; like the reranker stage (:mod:`.rerank_process`) they run in a spawned child
process (:mod:`.child_process`: pipe protocol, cancel → grace → terminate/kill, death detection).

The child reads the corpora from files, trains, saves the model (``.npz`` + JSON) and the lists
the window shows — per-sentence candidates of the training corpus, split from document lists
(:meth:`JointTagger.sentence_nbest`, or :meth:`PerceptronTagger.nbest` with ``documents=True`` +
:func:`~nerstudio.tagging.joint.split_document_lists`), and the origin of every sentence candidate
(an ``.npz`` of plain arrays). Curve points come back as dicts with ``step`` = epoch (BPM passes
are reported as progress only). The same work runs in this process with :func:`train_tagger` /
:func:`display_lists` (tests compare both).
"""

from __future__ import annotations

import itertools
import os
import shutil
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np

from ..errors import Cancelled, FormatError, Msg, SettingsError
from ..learners import TAGGERS, sequence_taggers
from ..nbest import NBestList
from ..persist import jsonable
from .child_process import ChildProcessFailed, Outbox, live_children, run_in_child, work_folder  # noqa: F401

#: the sequence taggers: the registry's K&T rows (:mod:`nerstudio.learners`), local (the
#: structured perceptrons) and joint (local + non-local features)
KINDS = sequence_taggers()
JOINT_KINDS = tuple(k for k in KINDS if TAGGERS[k].target.endswith(":JointTagger"))
LOCAL_KINDS = tuple(k for k in KINDS if k not in JOINT_KINDS)
KIND_TIPS = {k: TAGGERS[k].tip for k in KINDS}
ORIGIN_FORMAT = "nerstudio-candidate-origin"


#: the local model's settings the panel offers (for a joint tagger they go to its ``local``)
LOCAL_SETTINGS = ("cutoff", "edge_templates", "alphabet", "features", "gazetteer")


def default_params(kind: str) -> dict:
    """The settings the training panel offers for ``kind``, with the constructors' defaults
    (its registry row's): C, epochs, bpm for every kind; n (training n-best) and n_test (n',
    also the size of the shown lists) for the joint ones; n_test alone (size of the shown
    lists) for local ones; the local model's ``cutoff``, ``edge_templates``, ``features`` and
    ``gazetteer`` for all (for a joint tagger they go to its ``local`` settings)."""
    if kind not in KINDS:
        raise SettingsError(Msg.UNKNOWN.format(what="sequence tagger", name=kind, choices=KINDS))
    return dict(TAGGERS[kind].defaults)


def make_model(kind: str, params: dict, task: str = "typed"):
    """An untrained model of ``kind`` with the panel's ``params`` (see :func:`default_params`)."""
    if kind not in KINDS:
        raise SettingsError(Msg.UNKNOWN.format(what="sequence tagger", name=kind, choices=KINDS))
    row = TAGGERS[kind]
    p = dict(params)
    shown = int(p.pop("n_test", 20))
    if kind in JOINT_KINDS:
        local = dict(p.pop("local", {}) or {})
        for k in LOCAL_SETTINGS:
            if k in p:
                local[k] = p.pop(k)
        local.setdefault("task", task)
        return row.cls()(**row.fixed, n_test=shown, local=local, **p)
    p.pop("n", None)
    return row.cls()(task=task, **row.fixed, **p)


def shown_n(model) -> int:
    return int(getattr(model, "n_test", 0) or 20)


def load_model(path):
    """A saved perceptron or joint tagger (whichever ``path`` holds); a file that is neither
    raises one :class:`FormatError` line naming the file."""
    from ..tagging import load_tagger

    return load_tagger(
        path, ("joint", "perceptron"), what="a sequence tagger model (K&T joint or perceptron .npz)"
    )


def is_joint(model) -> bool:
    return hasattr(model, "nonlocal_terms")


def model_kind(model) -> str:
    return str(getattr(model, "algorithm", None) or getattr(model, "variant", "?"))


CHUNK_TOKENS = 20_000  # tokens per batch of documents decoded between two progress reports


def document_chunks(corpus, tokens: int = CHUNK_TOKENS) -> list:
    """``corpus`` as consecutive sub-corpora of whole documents of about ``tokens`` tokens each
    (a document is never split; ids are kept: an unnamed document gets the name it has in the
    whole corpus)."""
    from ..corpus.model import Corpus, Document

    chunks, cur, size = [], [], 0
    for k, d in enumerate(corpus.documents):
        cur.append(Document(list(d.sentences), d.docstart, d.id or str(k + 1)))
        size += sum(len(s.words) for s in d.sentences)
        if size >= tokens:
            chunks.append(cur)
            cur, size = [], 0
    if cur or not chunks:
        chunks.append(cur)
    return [Corpus(c, path=corpus.path, format=corpus.format, scheme=corpus.scheme) for c in chunks]


def _concat(lists: list[NBestList]) -> NBestList:
    """Document lists of consecutive chunks as one list (meta of the first, offsets joined)."""
    joined = NBestList.concatenate(lists)
    if len(lists) > 1:
        joined.meta["sentence_offsets"] = [o for nb in lists for o in nb.meta["sentence_offsets"]]
    return joined


def display_lists(
    model,
    corpus,
    n: int | None = None,
    progress=None,
    should_cancel=None,
    chunk_tokens: int = CHUNK_TOKENS,
) -> tuple[NBestList, NBestList, list[list[int]]]:
    """``(document lists, per-sentence lists, origin)`` of ``corpus`` under ``model``: what the
    N-best and feature panels show. Sentence ids are :func:`.pipeline.sentence_ids`.

    Documents are decoded independently, so the corpus is decoded in batches of whole documents
    (:func:`document_chunks`; the same lists as one call, tested): ``progress(message, tokens
    done, tokens)`` after each batch, and ``should_cancel()`` is polled between batches
    (:class:`Cancelled`)."""
    from ..tagging.joint import split_document_lists
    from .pipeline import sentence_ids

    n = shown_n(model) if n is None else int(n)
    chunks = document_chunks(corpus, chunk_tokens)
    total = sum(c.n_tokens for c in chunks)
    parts, done = [], 0
    for c in chunks:
        if should_cancel is not None and should_cancel():
            raise Cancelled("cancelled")
        parts.append(model.nbest(c, n) if is_joint(model) else model.nbest(c, n, documents=True))
        done += c.n_tokens
        if progress is not None:
            progress(f"candidates of the corpus (n = {n}): {done:,}/{total:,} tokens", done, total)
    doc = _concat(parts)
    ids = sentence_ids(corpus)
    sent, origin = split_document_lists(doc, doc.meta["sentence_offsets"])
    if len(ids) == len(sent):
        sent.ids = ids
    sent.meta["model"] = f"{'joint' if is_joint(model) else 'perceptron'}-{model_kind(model)}"
    return doc, sent, origin


def epoch_point(st) -> dict | None:
    """A curve point (``step`` = epoch) from EpochStats / JointStats; None for a BPM pass."""
    d = asdict(st) if not isinstance(st, dict) else dict(st)
    if d.get("phase") == "bpm" or d.get("cancelled"):
        return None
    step = d.get("step", d.get("epoch"))
    mistakes = d.get("mistakes")
    if mistakes is None and "updates_total" in d:
        mistakes = d["updates_total"] + d["updates_local"]
    return jsonable(
        {
            "step": step,
            "unit": "epoch",
            "dev_precision": d.get("dev_precision"),
            "dev_recall": d.get("dev_recall"),
            "dev_f1": d.get("dev_f1"),
            "best": d.get("best", False),
            "seconds": d.get("seconds"),
            "mistakes": mistakes,
        }
    )


def train_tagger(
    kind: str,
    params: dict,
    corpus,
    dev=None,
    task: str = "typed",
    callback=None,
    should_cancel=None,
    progress=None,
):
    """Train ``kind`` on ``corpus`` (dev F per epoch on ``dev``) in this process. ``callback``
    gets :func:`epoch_point` dicts. Returns the model; raises Cancelled when cancelled."""
    model = make_model(kind, params, task)
    epochs = int(params.get("epochs", 0) or 0)

    def cb(st):
        if getattr(st, "phase", "") == "bpm":
            if progress is not None:
                progress(f"BPM pass {st.epoch}/{params.get('bpm', 0)}", 0, 0)
            return
        pt = epoch_point(st)
        if progress is not None:
            f = f", dev F {pt['dev_f1']:.2f}" if pt and pt.get("dev_f1") is not None else ""
            progress(
                f"{kind}: epoch {getattr(st, 'epoch', getattr(st, 'step', '?'))}/{epochs}{f}",
                int(getattr(st, "epoch", getattr(st, "step", 0))),
                epochs,
            )
        if pt is not None and callback is not None:
            callback(pt)

    if progress is not None:
        progress(f"{kind}: features and first epoch…", 0, epochs)
    model.fit(corpus, dev, callback=cb, should_cancel=should_cancel)
    if should_cancel is not None and should_cancel():
        raise Cancelled("cancelled")
    return model


# ------------------------------------------------------------------------------------------------
# origin of the sentence candidates as a file


def save_origin(path, origin: list[list[int]]) -> None:
    sizes = np.array([len(o) for o in origin], dtype=np.int64)
    flat = np.array([j for o in origin for j in o], dtype=np.int64)
    with open(os.fspath(path), "wb") as f:
        np.savez(f, format=np.array(ORIGIN_FORMAT), sizes=sizes, flat=flat)


def load_origin(path) -> list[list[int]]:
    try:
        with np.load(os.fspath(path), allow_pickle=False) as z:
            if str(z["format"]) != ORIGIN_FORMAT:
                raise ValueError("not a candidate-origin file")
            sizes, flat = z["sizes"], z["flat"]
    except (OSError, KeyError, ValueError) as exc:
        raise FormatError(os.fspath(path), None, f"cannot read candidate origins: {exc}") from None
    if sizes.sum() != len(flat):
        raise FormatError(os.fspath(path), None, "candidate origins: sizes do not add up")
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    return [flat[a:b].tolist() for a, b in itertools.pairwise(bounds)]


# ------------------------------------------------------------------------------------------------
# the child


def _child_work(spec: dict, out: Outbox, should_cancel: Callable[[], bool]) -> dict:
    from ..corpus.formats import read_corpus

    times: dict[str, float] = {}
    t = time.perf_counter()
    out.progress("reading the corpus…")
    corpus = read_corpus(spec["corpus"])
    dev = read_corpus(spec["dev"]) if spec.get("dev") else None
    times["read"] = time.perf_counter() - t
    t = time.perf_counter()
    if spec["task"] == "train":
        model = train_tagger(
            spec["kind"],
            spec["params"],
            corpus,
            dev,
            spec.get("tagger_task", "typed"),
            callback=out.curve,
            should_cancel=should_cancel,
            progress=out.progress,
        )
        times["train"] = time.perf_counter() - t
        model.save(spec["model_out"])
    elif spec["task"] == "show":
        model = load_model(spec["model_in"])
    else:
        raise ValueError(f"unknown task {spec['task']!r}")
    if should_cancel():
        raise Cancelled("cancelled")
    t = time.perf_counter()
    out.progress(f"candidates of the corpus (n = {spec.get('n_show') or shown_n(model)})…")
    doc, sent, origin = display_lists(
        model, corpus, spec.get("n_show"), out.progress, should_cancel
    )
    doc.save(spec["doc_out"])
    sent.save(spec["sent_out"])
    save_origin(spec["origin_out"], origin)
    times["candidates"] = time.perf_counter() - t
    return times


# ------------------------------------------------------------------------------------------------
# the parent


@dataclass
class TaggerResult:
    model: Any  # PerceptronTagger or JointTagger
    doc_nbest: NBestList  # document-level candidates of the corpus
    nbest: NBestList  # per-sentence candidates (corpus order)
    origin: list  # per sentence candidate: its document candidate
    timings: dict = field(default_factory=dict)


def _go(
    spec: dict, folder: str, own: bool, callback, should_cancel, progress, grace, on_start
) -> TaggerResult:
    try:
        spec.update(
            {
                "model_out": os.path.join(folder, "tagger.npz"),
                "doc_out": os.path.join(folder, "doc.nbest.npz"),
                "sent_out": os.path.join(folder, "sent.nbest.npz"),
                "origin_out": os.path.join(folder, "origin.npz"),
            }
        )
        if should_cancel is not None and should_cancel():
            raise Cancelled("cancelled")
        timings = run_in_child(
            _child_work,
            spec,
            name="nerstudio-tagger",
            on_stats=callback,
            should_cancel=should_cancel,
            progress=progress,
            grace=grace,
            on_start=on_start,
        )
        t = time.perf_counter()
        if progress is not None:
            progress("reading the model and its candidates…", 0, 0)
        model = load_model(spec.get("model_in") or spec["model_out"])
        res = TaggerResult(
            model,
            NBestList.load(spec["doc_out"]),
            NBestList.load(spec["sent_out"]),
            load_origin(spec["origin_out"]),
            timings,
        )
        timings["read_back"] = time.perf_counter() - t
        return res
    finally:
        if own:
            shutil.rmtree(folder, ignore_errors=True)


def train_tagger_in_child(
    kind: str,
    params: dict,
    corpus_file,
    dev_file=None,
    task: str = "typed",
    *,
    callback=None,
    should_cancel=None,
    progress=None,
    grace: float = 0.5,
    workdir=None,
    on_start=None,
) -> TaggerResult:
    """Train ``kind`` (see :data:`KINDS`) on the corpus in ``corpus_file`` in a child process
    (dev F per epoch on ``dev_file``), and compute the candidates of that corpus under the new
    model. ``callback`` gets :func:`epoch_point` dicts, ``progress`` ``(message, done, total)``;
    after ``should_cancel()`` turns true the child stops within ``grace`` seconds (else killed)."""
    make_model(kind, params, task)  # bad settings fail here, before a process starts
    folder, own = work_folder(workdir)
    spec = {
        "task": "train",
        "kind": kind,
        "params": jsonable(dict(params)),
        "tagger_task": task,
        "corpus": os.fspath(corpus_file),
        "dev": os.fspath(dev_file) if dev_file else None,
        "n_show": int(params.get("n_test") or 20),
    }
    return _go(spec, folder, own, callback, should_cancel, progress, grace, on_start)


def candidates_in_child(
    model_file,
    corpus_file,
    n: int | None = None,
    *,
    should_cancel=None,
    progress=None,
    grace: float = 0.5,
    workdir=None,
    on_start=None,
) -> TaggerResult:
    """Open a saved tagger and compute the candidates of ``corpus_file`` under it, in a child."""
    folder, own = work_folder(workdir)
    spec = {
        "task": "show",
        "model_in": os.fspath(model_file),
        "corpus": os.fspath(corpus_file),
        "n_show": n,
    }
    return _go(spec, folder, own, None, should_cancel, progress, grace, on_start)
