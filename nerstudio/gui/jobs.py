"""The jobs the window runs in its worker thread: each a closure over a snapshot of its inputs.

A training run is the run service's (:func:`nerstudio.runs.training.run_training`), given the
worker's :class:`~nerstudio.gui.workers.JobContext`; the other jobs call the core the same way —
passing the worker's ``should_cancel`` to each step and reporting progress through the context.
No Qt here.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any

from ..app.attachments import NBestIndex, index_nbest, score_nbest
from ..corpus.model import Corpus
from ..errors import Msg, SettingsError
from ..nbest import NBestList
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


def make_training_job(
    settings,
    run_id: int,
    corpus: Corpus | None,
    nbest: NBestList | None,
    dev_nbest: NBestList | None,
    tagger,
    in_child: bool = True,
    files: tuple[str | None, str | None] = (None, None),
    revision: int = 0,
    executor=None,
):
    """A job running ``settings`` on the given inputs (see
    :func:`~nerstudio.runs.training.run_training`)."""

    def job(ctx) -> RunResult:
        return run_training(
            ctx,
            settings,
            run_id,
            corpus,
            nbest,
            dev_nbest,
            tagger,
            in_child,
            files,
            revision,
            executor,
        )

    return job


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
            ctx.progress("computing global features and reranker scores…")
            scored = score_nbest(model, target, ctx.should_cancel)
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


@dataclass
class KTRunResult:
    settings: Any  # RunSettings with start == "kt"
    run_id: int
    model: Any = None  # PerceptronTagger or JointTagger
    nbest_index: NBestIndex | None = None  # the corpus's candidates under the new model
    kt: Any = None  # app.attachments.KTCandidates
    seconds: float = 0.0
    timings: dict = field(default_factory=dict)
    path: str | None = None  # the model file, when opened rather than trained


def _corpus_file(ctx, corpus: Corpus, corpus_file: str | None, folder: str) -> str:
    """A file holding ``corpus`` as the window has it: its own file when unchanged, else a copy."""
    if corpus_file:
        return corpus_file
    from ..corpus.formats import write_corpus

    ctx.progress("handing the corpus to the training process…")
    from ..corpus.foreign import writable

    if writable(corpus.format):
        path = os.path.join(folder, "corpus" + os.path.splitext(corpus.path or "x.conll")[1])
        write_corpus(corpus, path)
    else:  # read-only formats (plain text, WebAnno TSV): JSONL keeps everything
        path = os.path.join(folder, "corpus.jsonl")
        write_corpus(corpus, path, "jsonl")
    return path


def _kt_install(ctx, corpus: Corpus, out, res: KTRunResult, revision: int = 0) -> KTRunResult:
    from ..app.attachments import KTCandidates

    ctx.check()
    ctx.progress("lining up the candidates with the corpus…")
    res.model = out.model
    res.kt = KTCandidates.build(out.model, out.doc_nbest, out.origin)
    res.nbest_index = index_nbest(corpus, out.nbest, ctx.should_cancel, revision)
    res.timings = out.timings
    return res


def make_kt_training_job(
    settings,
    run_id: int,
    corpus: Corpus | None,
    corpus_file: str | None = None,
    in_child: bool = True,
    revision: int = 0,
):
    """Train a K&T sequence tagger (``settings.kt_algo`` with ``settings.kt_params``) on the open
    corpus, dev F per epoch on the dev corpus ``settings.dev_path``, and compute the corpus's
    candidates under it (:mod:`nerstudio.experiments.tagger_process`; in a child process unless
    ``in_child`` is false). ``corpus_file``: a file holding exactly ``corpus`` (else a copy is
    written for the child)."""

    def job(ctx) -> KTRunResult:
        import shutil
        import tempfile

        from ..experiments import tagger_process as tp

        t0 = time.perf_counter()
        if corpus is None or not len(corpus):
            raise SettingsError(Msg.OPEN_TRAINING_FIRST.format())
        dev_path = (
            settings.dev_path
            if settings.dev_path and not settings.dev_path.lower().endswith(".npz")
            else None
        )
        res = KTRunResult(settings, run_id)
        if in_child:
            folder = tempfile.mkdtemp(prefix="nerstudio-kt-")
            try:
                cf = _corpus_file(ctx, corpus, corpus_file, folder)
                out = tp.train_tagger_in_child(
                    settings.kt_algo,
                    settings.kt_model_params(),
                    cf,
                    dev_path,
                    settings.task,
                    callback=ctx.stats,
                    should_cancel=ctx.should_cancel,
                    progress=ctx.progress,
                    on_start=lambda pid: ctx.result("child", pid),
                    workdir=os.path.join(folder, "work"),
                )
            finally:
                shutil.rmtree(folder, ignore_errors=True)
        else:
            from ..corpus.formats import read_corpus

            dev = read_corpus(dev_path) if dev_path else None
            model = tp.train_tagger(
                settings.kt_algo,
                settings.kt_model_params(),
                corpus,
                dev,
                settings.task,
                callback=ctx.stats,
                should_cancel=ctx.should_cancel,
                progress=ctx.progress,
            )
            ctx.progress("candidates of the corpus…")
            doc, sent, origin = tp.display_lists(
                model, corpus, settings.kt_params.get("n_test"), ctx.progress, ctx.should_cancel
            )
            out = tp.TaggerResult(model, doc, sent, origin)
        _kt_install(ctx, corpus, out, res, revision)
        res.seconds = time.perf_counter() - t0
        return res

    return job


def make_kt_open_job(
    path: str,
    corpus: Corpus,
    corpus_file: str | None = None,
    n: int | None = None,
    revision: int = 0,
):
    """Open a saved sequence tagger and compute the open corpus's candidates under it (child);
    ``n``: candidates per document (default: the model's n', 20 for a perceptron tagger)."""

    def job(ctx) -> KTRunResult:
        import shutil
        import tempfile

        from ..experiments import tagger_process as tp

        t0 = time.perf_counter()
        ctx.progress(f"reading {os.path.basename(path)} and decoding the corpus…")
        folder = tempfile.mkdtemp(prefix="nerstudio-kt-")
        try:
            cf = _corpus_file(ctx, corpus, corpus_file, folder)
            out = tp.candidates_in_child(
                path,
                cf,
                n,
                should_cancel=ctx.should_cancel,
                progress=ctx.progress,
                on_start=lambda pid: ctx.result("child", pid),
                workdir=os.path.join(folder, "work"),
            )
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        res = KTRunResult(None, -1, path=path)
        _kt_install(ctx, corpus, out, res, revision)
        res.seconds = time.perf_counter() - t0
        return res

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
