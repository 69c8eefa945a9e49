"""Jackknifed N-best lists (Collins 2002 §2.3) and the helpers that put lists back together.

The reranker must learn from candidates that look like test-time candidates, so the training
portion is split by document into K folds; each fold is decoded by a tagger trained on the
other K − 1 (the folds run on :func:`.folds.run_folds`, locally or on a remote executor, see
:mod:`.dask_executor`). Development and test lists come from a tagger trained on the whole portion.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.model import Corpus
from ..errors import DataError
from ..nbest import NBestList
from ..tagging.maxent import MaxEntTagger
from .folds import (
    Executor,
    FoldProgress,
    Job,
    TaskContext,
    document_folds,
    forks,
    is_remote,
    local_executor,
    run_folds,
    split,
)
from .work_files import CorpusFile, ResultFiles

__all__ = [
    "JackknifeResult",
    "describe_list",
    "document_folds",
    "full_model_job",
    "jackknife",
    "merge_nbest",
    "sentence_ids",
]


@dataclass
class JackknifeResult:
    nbest: NBestList
    folds: np.ndarray  # fold id of every training sentence
    seconds: float
    model: MaxEntTagger | None = None  # trained on the whole corpus (with ``full=True``)
    decoded: dict | None = None  # name -> NBestList decoded by ``model``
    job_seconds: dict | None = (
        None  # wall seconds of each fold ("fold 1/5") and of the whole-corpus model
    )


def _train(sentences, params: dict, ctx: TaskContext, dev=None) -> MaxEntTagger:
    tagger = MaxEntTagger(**params)
    unit = "epoch" if tagger.optimizer == "adagrad" else "iteration"

    def iteration(st):
        ctx.progress(st.message or f"tagger {unit} {st.iteration}")

    return tagger.fit(sentences, dev, callback=iteration, should_cancel=ctx.should_cancel)


def fold_nbest(sentences, job: Job, ctx: TaskContext) -> NBestList:
    """A fold's task: train on ``job.fold.train``, list the N best of ``job.fold.test``."""
    s, fold = job.settings, job.required_fold()
    tagger = _train([sentences[i] for i in fold.train], s["params"], ctx)
    ctx.check()
    return tagger.nbest(
        [sentences[i] for i in fold.test], n=s["n"], should_cancel=ctx.should_cancel
    )


#: about this many tokens of the training corpus train the tagger of :func:`preload`
PRELOAD_TOKENS = 400


def preload(sentences, params: dict) -> None:
    """Load in this process what training and decoding a tagger with ``params`` load on first
    use (numba, the optimiser's compiled kernels, the gazetteers and word clusters of the
    feature set), by training one on the first few sentences (:data:`PRELOAD_TOKENS` tokens)
    and decoding one: the worker processes forked afterwards find it all loaded, instead of
    each spending a second or two loading it again."""
    few, tokens = [], 0
    for s in sentences:
        if len(s.words):
            few.append(s)
            tokens += len(s.words)
            if tokens >= PRELOAD_TOKENS:
                break
    if few:
        MaxEntTagger(**params).fit(few).nbest(few[:1], n=2)


def _save_nbest(nb: NBestList, folder: str) -> None:
    nb.save(os.path.join(folder, "nbest.npz"))


def _load_nbest(folder: str) -> NBestList:
    return NBestList.load(os.path.join(folder, "nbest.npz"))


def full_model(sentences, job: Job, ctx: TaskContext) -> tuple[MaxEntTagger, dict]:
    """The extra job: train on every sentence, decode ``settings["decode"]`` (name ->
    (sentences, ids) or a :class:`Corpus`); the one named ``settings["select_on"]``, if any, is
    the tagger's development data (the online optimiser's epochs are chosen on it)."""
    s = job.settings

    def sentences_of(what):
        return what.sentences if isinstance(what, Corpus) else what[0]

    select = s.get("select_on")
    dev = None if select is None else sentences_of(s["decode"][select])
    tagger = _train(sentences, s["params"], ctx, dev)
    out = {}
    for name, what in s["decode"].items():
        ctx.check()
        sents, ids = (what.sentences, sentence_ids(what)) if isinstance(what, Corpus) else what
        out[name] = tagger.nbest(sents, n=s["n"], ids=ids, should_cancel=ctx.should_cancel)
    return tagger, out


def _save_full(result, folder: str) -> None:
    tagger, decoded = result
    tagger.save(os.path.join(folder, "tagger.npz"))
    names = list(decoded)
    for k, name in enumerate(names):
        decoded[name].save(os.path.join(folder, f"decoded-{k}.npz"))
    with open(os.path.join(folder, "decoded.json"), "w", encoding="utf-8") as f:
        json.dump(names, f)


def _load_full(folder: str):
    with open(os.path.join(folder, "decoded.json"), encoding="utf-8") as f:
        names = json.load(f)
    return (
        MaxEntTagger.load(os.path.join(folder, "tagger.npz")),
        {
            name: NBestList.load(os.path.join(folder, f"decoded-{k}.npz"))
            for k, name in enumerate(names)
        },
    )


NBEST_FILES = ResultFiles(_save_nbest, _load_nbest)
FULL_MODEL_FILES = ResultFiles(_save_full, _load_full)


def full_model_job(n_sentences: int) -> str:
    """The name of the job that trains the tagger on all ``n_sentences`` (``full=True``): what
    its progress events carry in ``job``."""
    return f"model on all {n_sentences} sentences"


def jackknife(
    corpus: Corpus,
    folds: int = 5,
    n: int = 20,
    tagger_params: dict | None = None,
    workers: int | None = None,
    progress: Callable[[FoldProgress], None] | None = None,
    should_cancel: Callable[[], bool] | None = None,
    full: bool = False,
    decode: dict | None = None,
    select_on: str | None = None,
    executor: Executor | None = None,
) -> JackknifeResult:
    """N-best lists for every training sentence, each decoded by a model that never saw it.

    With ``full=True`` a model trained on the whole corpus is trained alongside the folds (by
    the same workers) and decodes ``decode`` (name -> a :class:`Corpus`, or (sentences, ids));
    it is returned in ``model`` and the lists in ``decoded``; ``select_on`` names the ``decode``
    corpus that is its development data (the online optimiser chooses its epochs on it; the
    folds' taggers, which have none, hold out part of their training sentences instead).
    ``workers``/``executor``,
    ``progress`` and ``should_cancel`` go to :func:`~nerstudio.runtime.folds.run_folds`. A
    remote executor reads ``corpus`` and the ``decode`` corpora from their files (which must hold
    what the caller holds: an error says so otherwise). Every list made from a :class:`Corpus`
    carries its sentences' documents and its file in ``meta`` (``documents``, ``source``).
    """
    params = dict(tagger_params or {})
    params.setdefault("labels", corpus.labels)  # every fold gets the same tag set
    sentences = corpus.sentences
    fold_of, parts = split(corpus, folds)
    decode = dict(decode or {})
    corpora = {name: what for name, what in decode.items() if isinstance(what, Corpus)}
    source = None
    if is_remote(executor):
        source = CorpusFile.of(corpus, "sentences")
        for name, what in decode.items():
            if not isinstance(what, Corpus):
                raise ValueError(
                    f"decode[{name!r}]: a remote executor reads corpora from their files; pass the Corpus"
                )
            decode[name] = CorpusFile.of(what, "corpus")
    extra = (
        [
            Job(
                full_model_job(len(sentences)),
                full_model,
                None,
                {"params": params, "n": n, "decode": decode, "select_on": select_on},
                "trained and decoded",
                FULL_MODEL_FILES,
            )
        ]
        if full
        else []
    )
    executor = executor if executor is not None else local_executor(workers, folds + len(extra))
    if forks(executor):
        preload(sentences, params)
    run = run_folds(
        fold_nbest,
        sentences,
        parts,
        {"params": params, "n": n},
        extra=extra,
        done="decoded",
        executor=executor,
        workers=workers,
        progress=progress,
        should_cancel=should_cancel,
        source=source,
        files=NBEST_FILES,
    )
    merged = merge_nbest(
        [(f.test, nb) for f, nb in zip(parts, run.results)],
        len(sentences),
        ids=sentence_ids(corpus),
    )
    merged.meta.update({"jackknife_folds": folds, "fold": fold_of.tolist()})
    describe_list(merged, corpus)
    model, decoded = run.extra[extra[0].name] if full else (None, None)
    for name, what in corpora.items():
        assert decoded is not None  # full=True: the model decoded every corpus
        describe_list(decoded[name], what)
    return JackknifeResult(merged, fold_of, run.total_seconds, model, decoded, run.seconds)


def describe_list(nb: NBestList, corpus: Corpus) -> None:
    """What a list made from ``corpus`` carries about it whoever made it: its sentences'
    documents (the rerankers' document-context features need them) and the corpus file."""
    nb.meta["documents"] = corpus.sentence_document()
    if corpus.path:
        nb.meta["source"] = os.path.abspath(corpus.path)


def merge_nbest(
    parts: Sequence[tuple[np.ndarray, NBestList]], total: int, ids: Sequence[str] | None = None
) -> NBestList:
    """Put per-fold N-best lists back in corpus order."""
    words: list = [None] * total
    cands: list = [None] * total
    lps: list = [None] * total
    gold: list = [None] * total
    tagset = parts[0][1].tagset
    for idx, nb in parts:
        if nb.tagset != tagset:
            raise DataError(
                "folds produced different tag sets (an entity type missing from a fold?)"
            )
        for k, i in enumerate(idx):
            words[i], cands[i], lps[i] = nb.words[k], nb.candidates[k], nb.logprobs[k]
            gold[i] = nb.gold[k] if nb.gold is not None else []
    meta = dict(parts[0][1].meta)
    return NBestList(list(tagset), words, cands, lps, gold, list(ids) if ids else [], meta)


def sentence_ids(corpus: Corpus) -> list[str]:
    """Stable ids: ``file:line`` of each sentence's first token (or its index)."""
    name = os.path.basename(corpus.path) if corpus.path else "corpus"
    return [
        f"{name}:{s.line}" if s.line else f"{name}#{k + 1}" for k, s in enumerate(corpus.sentences)
    ]
