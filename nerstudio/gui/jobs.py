"""The jobs the window runs in its worker thread: each a closure over a snapshot of its inputs.

A training run is the run service's (:func:`nerstudio.runs.training.run_training`), given the
worker's :class:`~nerstudio.gui.workers.JobContext`; the other jobs call the core the same way —
passing the worker's ``should_cancel`` to each step and reporting progress through the context.
No Qt here.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..app.attachments import index_nbest, score_nbest
from ..corpus.model import Corpus
from ..nbest import NBestList
from ..runs.kazama import KTRunResult, open_kt_model, run_kt_training
from ..runs.training import (  # noqa: F401 - the window's names for the run service's
    STAGE_DEV,
    STAGE_FEATURES,
    STAGE_INDEX,
    STAGE_JACKKNIFE,
    STAGE_RERANKER,
    STAGE_SCORE,
    STAGE_TAGGER,
    RunResult,
    dev_baseline,
    run_training,
    trained_on_list,
    training_stages,
    words_fingerprint,
)


def make_training_job(*args, **kwargs) -> Callable[[Any], RunResult]:
    """A job running :func:`~nerstudio.runs.training.run_training` with these arguments (all but
    its context, which the job service gives the job)."""
    return lambda ctx: run_training(ctx, *args, **kwargs)


def make_prepare_job(
    corpus: Corpus,
    nbest: NBestList | None,
    model,
    score_target: NBestList | None = None,
    revision: int = 0,
):
    """Line up a new N-best list with the corpus (if ``nbest``; its gold becomes the corpus's,
    counted at document ``revision``) and score the list on display (``nbest`` or else
    ``score_target``) with the reranker (if ``model``).
    Returns ``(NBestIndex or None, Scored or None)``."""

    def job(ctx):
        ix = scored = None
        if nbest is not None:
            ctx.progress("lining up the N-best list with the corpus…")
            ix = index_nbest(corpus, nbest, ctx.should_cancel, revision)
        target = nbest if nbest is not None else score_target
        if model is not None and target is not None:
            what = "computing global features and reranker scores…"
            ctx.progress(what)
            scored = score_nbest(
                model,
                target,
                ctx.should_cancel,
                lambda done, total: ctx.progress(what, done, total),
            )
        return ix, scored

    return job


STAGE_LOAD_MODEL = "reading the model"
STAGE_PREDICT = "predicting the entities"


@dataclass
class PredictedSpans:
    """What a pre-annotation job found: ``spans[i]`` is the prediction for corpus sentence
    ``sentences[i]``; ``model`` says what predicted (a tagger, and its reranker)."""

    sentences: list[int]
    spans: list
    model: str
    folder: str


def make_preannotate_job(
    folder: str,
    ks: list[int],
    sentences: list,
    system: str | None = None,
    documents: list[int] | None = None,
):
    """Read the model folder ``folder`` and predict the entities of the corpus sentences ``ks``
    with :func:`nerstudio.app.preannotate.predict_corpus`. ``sentences`` are copies of every
    corpus sentence (taken on the main thread; a reranker with document context reads them all)
    and ``documents`` the document of each. A folder or model that cannot be used is a
    :class:`~nerstudio.errors.NerstudioError` (one clear line)."""
    from ..app.preannotate import load_model, predict_corpus
    from ..errors import NerstudioError

    docs = list(documents) if documents is not None else [0] * len(sentences)

    def job(ctx) -> PredictedSpans:
        ctx.plan([STAGE_LOAD_MODEL, STAGE_PREDICT])
        ctx.stage(STAGE_LOAD_MODEL, os.path.basename(os.path.normpath(folder)))
        try:
            model = load_model(folder, system)
            ctx.stage(STAGE_PREDICT, "", 0, len(ks))
            spans = predict_corpus(
                model,
                sentences,
                docs,
                ks,
                progress=lambda d, n: ctx.progress(f"{d:,}/{n:,} sentences", d, n),
                should_cancel=ctx.should_cancel,
            )
        except NerstudioError:
            raise
        except OSError as exc:  # the folder the user chose cannot be used: say why in one line
            raise NerstudioError(f"{exc.filename or folder}: {exc.strerror or exc}") from None
        return PredictedSpans(list(ks), spans, model.describe(), folder)

    return job


def make_kt_training_job(
    settings,
    run_id: int,
    corpus: Corpus | None,
    corpus_file: str | None = None,
    in_child: bool = True,
    revision: int = 0,
):
    """A job training a K&T sequence tagger (see :func:`~nerstudio.runs.kazama.run_kt_training`)."""

    def job(ctx) -> KTRunResult:
        return run_kt_training(ctx, settings, run_id, corpus, corpus_file, in_child, revision)

    return job


def make_kt_open_job(
    path: str,
    corpus: Corpus,
    corpus_file: str | None = None,
    n: int | None = None,
    revision: int = 0,
):
    """A job opening a saved sequence tagger (see :func:`~nerstudio.runs.kazama.open_kt_model`)."""

    def job(ctx) -> KTRunResult:
        return open_kt_model(ctx, path, corpus, corpus_file, n, revision)

    return job


@dataclass
class CorpusRead:
    """What reading a corpus file gave: the corpus and its per-type sentence masks, or the
    error (``decoding``: the bytes are not in the encoding it was read with — it may be read
    again in another one)."""

    path: str
    encoding: str | None = None
    corpus: Corpus | None = None
    type_masks: dict | None = None
    error: str = ""
    decoding: bool = False
    disk: object = None  # the file's fingerprint taken before reading (app.ownership)


def _decoding_failure(exc: BaseException) -> bool:
    """Whether ``exc`` (a reader's FormatError) was caused by bytes the encoding cannot decode."""
    seen = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, UnicodeDecodeError):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def make_read_corpus_job(path: str, encoding: str | None = None):
    """Read a corpus file and index it by entity type (the document's type masks), reporting
    the bytes read and honouring cancellation. A file that cannot be read is a result too
    (:class:`CorpusRead` with ``error``), so the window can offer another encoding."""

    def job(ctx) -> CorpusRead:
        from ..app.document import type_masks_of
        from ..app.ownership import fingerprint
        from ..corpus.formats import read_corpus
        from ..errors import Cancelled, NerstudioError

        name = os.path.basename(path)
        try:
            size = max(os.path.getsize(path), 1)
        except OSError:
            size = 1
        ctx.plan([f"reading {name}", "indexing"])
        ctx.stage(f"reading {name}", "", 0, 1000)
        disk = fingerprint(path)  # before reading: a change made meanwhile shows at the next check

        def watch(pos: int) -> None:
            ctx.check()
            ctx.progress(f"{pos / 1e6:,.1f} of {size / 1e6:,.1f} MB", int(pos * 1000 / size), 1000)

        try:
            corpus = read_corpus(path, encoding=encoding, watch=watch)
        except Cancelled:
            raise
        except (NerstudioError, OSError) as exc:
            return CorpusRead(path, encoding, error=str(exc), decoding=_decoding_failure(exc))
        ctx.check()
        ctx.stage("indexing", f"{len(corpus):,} sentences…")
        masks = type_masks_of(corpus)
        ctx.check()
        return CorpusRead(path, encoding, corpus, masks, disk=disk)

    return job


STAGE_SUSPECTS = "finding suspect annotations"


def make_suspects_job(
    corpus: Corpus,
    n: int,
    folds: int,
    more: tuple[str, ...] = (),
    model: str | None = None,
):
    """Rank the sentences of ``corpus`` (a copy taken on the main thread: later edits do not
    reach it) by the evidence that their gold is wrong, with
    :func:`nerstudio.label_errors.find_suspects`: ``n`` suspects, judged by ``folds`` folds
    (and the corpora in the files ``more``, read here) or by the model folder ``model``.
    Returns the suspects, most suspect first; a file that cannot be used is a
    :class:`~nerstudio.errors.NerstudioError` (one clear line)."""

    def job(ctx) -> list:
        from ..corpus.formats import read_corpus
        from ..errors import NerstudioError

        # the ranking is the core's (merged from its branch: the ignore is then unused)
        from ..label_errors import find_suspects  # type: ignore[attr-defined, unused-ignore]

        extra = []
        for path in more:
            ctx.progress(f"reading {os.path.basename(path)}")
            try:
                extra.append(read_corpus(path))
            except OSError as exc:
                raise NerstudioError(f"{path}: {exc.strerror or exc}") from None
            ctx.check()
        return find_suspects(
            corpus,
            more=tuple(extra),
            folds=folds,
            model=model,
            n=n,
            progress=lambda done, total, text: ctx.progress(text, done, total),
            cancel=ctx.should_cancel,
        )

    return job
