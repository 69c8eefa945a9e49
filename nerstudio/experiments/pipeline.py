"""Orchestration: jackknifed N-best lists (Collins 2002 §2.3) and other multi-stage runs.

The reranker must learn from candidates that look like test-time candidates, so the training
portion is split by document into K folds; each fold is decoded by a tagger trained on the
other K − 1. Development and test lists come from a tagger trained on the whole portion.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from ..corpus.model import Corpus
from ..errors import Cancelled
from ..nbest import NBestList
from ..tagging.maxent import MaxEntTagger


def document_folds(corpus_or_docs, k: int) -> np.ndarray:
    """Fold id per sentence: documents in file order cut into k runs of about equal size."""
    docs = corpus_or_docs.documents if isinstance(corpus_or_docs, Corpus) else corpus_or_docs
    sizes = np.array([len(d.sentences) for d in docs], dtype=np.int64)
    total = int(sizes.sum())
    if k < 2:
        raise ValueError("jackknifing needs at least 2 folds")
    if len(docs) < k:
        # too few documents: fall back to contiguous runs of sentences
        return (np.arange(total) * k // max(total, 1)).astype(np.int64)
    cum = np.cumsum(sizes) - sizes / 2.0  # document midpoints
    doc_fold = np.minimum((cum * k / total).astype(np.int64), k - 1)
    return np.repeat(doc_fold, sizes)


@dataclass
class JackknifeResult:
    nbest: NBestList
    folds: np.ndarray  # fold id of every training sentence
    seconds: float
    model: MaxEntTagger | None = None  # trained on the whole corpus (with ``full=True``)
    decoded: dict | None = None  # name -> NBestList decoded by ``model``


def _fold_job(args, should_cancel=None):
    sentences, train_idx, test_idx, params, n, fold = args
    t0 = time.perf_counter()
    tagger = MaxEntTagger(**params).fit([sentences[i] for i in train_idx], should_cancel=should_cancel)
    nb = tagger.nbest([sentences[i] for i in test_idx], n=n, should_cancel=should_cancel)
    return fold, test_idx, nb, time.perf_counter() - t0


def _full_job(args, should_cancel=None):
    sentences, params, n, decode = args
    t0 = time.perf_counter()
    tagger = MaxEntTagger(**params).fit(sentences, should_cancel=should_cancel)
    out = {name: tagger.nbest(sents, n=n, ids=ids, should_cancel=should_cancel) for name, (sents, ids) in decode.items()}
    return "full", tagger, out, time.perf_counter() - t0


def jackknife(corpus: Corpus, folds: int = 5, n: int = 20, tagger_params: dict | None = None,
              workers: int | None = None, progress: Callable[[str], None] | None = None,
              should_cancel: Callable[[], bool] | None = None, full: bool = False,
              decode: dict | None = None) -> JackknifeResult:
    """N-best lists for every training sentence, each decoded by a model that never saw it.

    With ``full=True`` a model trained on the whole corpus is trained alongside the folds (in
    the same worker pool) and decodes ``decode`` (name -> (sentences, ids)); it is returned in
    ``model`` and the lists in ``decoded``.
    """
    t0 = time.perf_counter()
    params = dict(tagger_params or {})
    params.setdefault("labels", corpus.labels)  # every fold gets the same tag set
    sentences = corpus.sentences
    fold_of = document_folds(corpus, folds)
    jobs = []
    for f in range(folds):
        test_idx = np.nonzero(fold_of == f)[0]
        train_idx = np.nonzero(fold_of != f)[0]
        jobs.append((sentences, train_idx, test_idx, params, n, f))
    workers = workers or min(folds + int(full), os.cpu_count() or 1)
    results = {}
    full_out: list = []
    full_job = (sentences, params, n, dict(decode or {})) if full else None

    def take(res):
        if res[0] == "full":
            full_out.extend(res[1:3])
            if progress:
                progress(f"model on all {len(sentences)} sentences trained and decoded in {res[3]:.1f}s")
            return
        f, idx, nb, secs = res
        results[f] = (idx, nb)
        if progress:
            progress(f"fold {f + 1}/{folds} decoded in {secs:.1f}s ({len(results)}/{folds} done)")

    if workers <= 1:
        for job in ([full_job] if full else []) + jobs:
            if should_cancel and should_cancel():
                raise Cancelled("jackknife cancelled")
            take(_full_job(job, should_cancel) if job is full_job else _fold_job(job, should_cancel))
    else:
        ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else None
        with ProcessPoolExecutor(max_workers=workers, mp_context=ctx) as ex:
            pending = ({ex.submit(_full_job, full_job)} if full else set()) | {ex.submit(_fold_job, job) for job in jobs}
            while pending:
                done, pending = wait(pending, timeout=0.25, return_when=FIRST_COMPLETED)
                if should_cancel and should_cancel():
                    for p in pending:
                        p.cancel()
                    ex.shutdown(wait=False, cancel_futures=True)
                    raise Cancelled("jackknife cancelled")
                for fut in done:
                    take(fut.result())
    merged = merge_nbest([results[f] for f in range(folds)], len(sentences), ids=sentence_ids(corpus))
    merged.meta.update({"jackknife_folds": folds, "fold": fold_of.tolist()})
    return JackknifeResult(merged, fold_of, time.perf_counter() - t0,
                           full_out[0] if full_out else None, full_out[1] if full_out else None)


def merge_nbest(parts: Sequence[tuple[np.ndarray, NBestList]], total: int, ids: Sequence[str] | None = None) -> NBestList:
    """Put per-fold N-best lists back in corpus order."""
    words: list = [None] * total
    cands: list = [None] * total
    lps: list = [None] * total
    gold: list = [None] * total
    tagset = parts[0][1].tagset
    for idx, nb in parts:
        if nb.tagset != tagset:
            raise ValueError("folds produced different tag sets (an entity type missing from a fold?)")
        for k, i in enumerate(idx):
            words[i], cands[i], lps[i] = nb.words[k], nb.candidates[k], nb.logprobs[k]
            gold[i] = nb.gold[k] if nb.gold is not None else []
    meta = dict(parts[0][1].meta)
    return NBestList(list(tagset), words, cands, lps, gold, list(ids) if ids else [], meta)


def sentence_ids(corpus: Corpus) -> list[str]:
    """Stable ids: ``file:line`` of each sentence's first token (or its index)."""
    name = os.path.basename(corpus.path) if corpus.path else "corpus"
    return [f"{name}:{s.line}" if s.line else f"{name}#{k + 1}" for k, s in enumerate(corpus.sentences)]

