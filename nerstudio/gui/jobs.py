"""The jobs the window runs in its worker thread: each a closure over a snapshot of its inputs.

Every job only calls the core — the tagger (``MaxEntTagger.fit`` / ``.nbest``), the jackknife
fold driver of :mod:`nerstudio.experiments.pipeline`, the global features and rerankers, the document's
:func:`~nerstudio.app.attachments.index_nbest` and :func:`~nerstudio.app.attachments.score_nbest` —
passing the worker's ``should_cancel`` to each, and reports progress through the
:class:`~nerstudio.gui.workers.JobContext`. The reranker stage of a training run (global
features, training, scoring the training list) goes to a child process
(:func:`nerstudio.experiments.rerank_process.train_in_child`): the thread then only relays its messages, so
the window keeps its interpreter lock. No Qt here.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..app.attachments import NBestIndex, Scored, index_nbest, score_nbest, with_documents
from ..corpus.model import Corpus
from ..errors import Msg, SettingsError
from ..nbest import NBestList


@dataclass
class RunResult:
    settings: Any  # RunSettings
    run_id: int
    tagger: Any = None
    nbest_index: NBestIndex | None = None  # new training-corpus N-best (full pipeline)
    dev_nbest: NBestList | None = None
    model: Any = None
    scored: Scored | None = None  # the model applied to the displayed N-best list
    baseline: float | None = None
    seconds: float = 0.0
    notes: list[str] = field(default_factory=list)  # said with the run's "Done in …" message
    timings: dict = field(default_factory=dict)  # the child process's stages (seconds)


def dev_baseline(dev: NBestList | None) -> float | None:
    """Dev F of the tagger's top candidates (what reranking starts from)."""
    if dev is None or dev.gold is None:
        return None
    from ..evaluation import evaluate_spans

    return evaluate_spans(dev.gold, dev.top()).overall.f1


def _progress_adapter(report, what: str = ""):
    """The core reports progress as (done, total), a message, or stats objects; ``report`` is
    ``ctx.progress`` or alike."""

    def prog(*args):
        if len(args) == 3 and isinstance(args[0], str):  # (stage, done, total)
            stage, d, n = args
            report(f"{stage}: {int(d):,}/{int(n):,}" if n and n > 1 else stage, int(d), int(n))
        elif len(args) == 2 and all(isinstance(a, (int, np.integer)) for a in args):
            report(f"{what}: {args[0]:,}/{args[1]:,}", int(args[0]), int(args[1]))
        elif len(args) == 1 and isinstance(args[0], str):
            report(args[0], 0, 0)
        else:
            report(f"{what}: " + " ".join(str(a) for a in args), 0, 0)

    return prog


STAGE_TAGGER = "training the tagger"
STAGE_JACKKNIFE = "jackknifing N-best lists"
STAGE_INDEX = "lining up the N-best list"
STAGE_DEV = "the development set"
STAGE_FEATURES = "global features"
STAGE_RERANKER = "training the reranker"
STAGE_SCORE = "scoring the candidates"


def training_stages(settings) -> list[str]:
    """The stages a reranker run goes through with ``settings``."""
    out = [STAGE_TAGGER, STAGE_JACKKNIFE, STAGE_INDEX] if settings.start == "tagger" else []
    if settings.dev_path:
        out.append(STAGE_DEV)
    return out + [STAGE_FEATURES, STAGE_RERANKER, STAGE_SCORE]


def _reranker_stage(message: str, pipeline) -> str:
    """The stage a message of the reranker's process belongs to (its features, training and
    scoring steps; anything else continues the current stage)."""
    m = message.lower()
    if m.startswith("features"):
        return STAGE_FEATURES
    if m.startswith("training"):
        return STAGE_RERANKER
    if m.startswith(("scoring", "handing the scores", "reading the model")):
        return STAGE_SCORE
    return pipeline.stages[pipeline.k] if pipeline.k >= 0 else STAGE_FEATURES


def jackknife_nbest(
    ctx, corpus: Corpus, folds: int, n: int, tagger_params: dict, executor=None
) -> NBestList:
    """Jackknifed N-best lists of ``corpus``: the core's fold driver
    (:func:`nerstudio.experiments.pipeline.jackknife`), by default in this worker thread one fold
    after the other (the window keeps the second core), with its progress and cancellation; with
    ``executor`` (the "Folds run on" setting, e.g. a Dask cluster) the folds go there and read the
    corpus from its file."""
    from ..experiments.pipeline import jackknife

    def progress(ev):
        ctx.progress(f"jackknife: {ev.message}", ev.done, ev.total)

    if executor is None:
        return jackknife(
            corpus,
            folds,
            n,
            tagger_params,
            workers=1,
            progress=progress,
            should_cancel=ctx.should_cancel,
        ).nbest
    return jackknife(
        corpus,
        folds,
        n,
        tagger_params,
        progress=progress,
        should_cancel=ctx.should_cancel,
        executor=executor,
    ).nbest


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
    """A job running ``settings`` (a RunSettings snapshot) on the given inputs. With
    ``in_child`` the reranker stage (global features, training, scoring the training list) runs
    in a child process (:mod:`nerstudio.experiments.rerank_process`); the tagger stages stay in the thread.
    ``files``: N-best files holding exactly ``nbest`` / ``dev_nbest``, which the child may read
    instead of being handed copies. ``executor``: where the jackknife's folds run (None: here)."""

    def job(ctx) -> RunResult:
        t0 = time.perf_counter()
        res = RunResult(settings, run_id)
        train_nb, dev_nb, tg = nbest, dev_nbest, tagger
        train_file, dev_file = files
        ctx.plan(training_stages(settings))
        limit = settings.params.get("rounds") or settings.params.get("epochs") or 0

        def child_progress(message: str, done: int = 0, total: int = 0) -> None:
            ctx.stage(_reranker_stage(message, ctx.pipeline), message, done, total)

        def stats(st) -> None:
            ctx.stats(st)
            step = getattr(st, "step", None)
            if (
                limit
                and step is not None
                and ctx.pipeline.k >= 0
                and ctx.pipeline.stages[ctx.pipeline.k] == STAGE_RERANKER
            ):
                ctx.progress(
                    f"{getattr(st, 'unit', None) or 'step'} {int(step):,} of {int(limit):,}",
                    int(step),
                    int(limit),
                )

        if settings.start == "tagger":
            from ..tagging.maxent import MaxEntTagger

            if corpus is None or not len(corpus):
                raise SettingsError(Msg.OPEN_TRAINING_FIRST.format())
            tparams = {
                "task": settings.task,
                "alphabet": settings.alphabet,
                "features": settings.tagger_features,
                "max_iter": settings.tagger_iter,
                "cutoff": settings.tagger_cutoff,
                "labels": corpus.labels,
            }

            def cb(st):
                ctx.progress(
                    f"tagger iteration {st.iteration}/{settings.tagger_iter}"
                    + (f", objective {st.objective:.1f}" if st.objective == st.objective else ""),
                    st.iteration,
                    settings.tagger_iter,
                )

            ctx.stage(STAGE_TAGGER, "on the whole corpus…", 0, settings.tagger_iter)
            tg = MaxEntTagger(**tparams).fit(
                corpus.sentences, callback=cb, should_cancel=ctx.should_cancel
            )
            res.tagger = tg
            ctx.result("tagger", tg)
            ctx.stage(STAGE_JACKKNIFE, f"{settings.folds} folds…", 0, settings.folds)
            train_nb = jackknife_nbest(ctx, corpus, settings.folds, settings.n, tparams, executor)
            train_nb.meta["documents"] = corpus.sentence_document()  # for document context
            ctx.check()
            ctx.stage(STAGE_INDEX)
            res.nbest_index = index_nbest(corpus, train_nb, ctx.should_cancel, revision)
            ctx.result("nbest", res.nbest_index)
            dev_nb = dev_file = train_file = (
                None  # a new tagger: the old dev list no longer matches
            )
        # the development set
        dev_path = settings.dev_path
        if dev_path:
            if dev_path.lower().endswith(".npz"):
                ctx.stage(STAGE_DEV, f"reading dev N-best {os.path.basename(dev_path)}…")
                dev_nb = NBestList.load(dev_path)
                dev_file = dev_path
            else:
                from ..corpus.formats import read_corpus

                ctx.stage(STAGE_DEV, f"reading dev corpus {os.path.basename(dev_path)}…")
                dev_corpus = read_corpus(dev_path)
                if tg is None:
                    raise SettingsError(
                        "a dev corpus must be decoded by a tagger: load or train one, or give a "
                        "dev N-best file"
                    )
                dev_nb = tg.nbest(
                    dev_corpus.sentences,
                    n=settings.n,
                    progress=_progress_adapter(ctx.progress, "decoding dev"),
                    should_cancel=ctx.should_cancel,
                )
                dev_nb.meta["documents"] = dev_corpus.sentence_document()
                dev_file = None
        if dev_nb is not None:
            res.dev_nbest = dev_nb
            ctx.result("dev_nbest", dev_nb)
            res.baseline = dev_baseline(dev_nb)
            ctx.result("baseline", res.baseline)
        if train_nb is None:
            raise SettingsError(
                "no training N-best list: open one (File ▸ Open N-best…) or run the full pipeline"
            )
        ctx.check()
        note = ""
        if settings.feature_params.get("context"):
            # the lists go to the child as copies that carry each sentence's document
            train_file = dev_file = None
            train_nb, none = with_documents(train_nb)
            dev_none = False
            if dev_nb is not None:
                dev_nb, dev_none = with_documents(dev_nb)
            missing = [name for name, m in (("training", none), ("dev", dev_none)) if m]
            if missing:
                note = (
                    f"the {' and '.join(missing)} list names no documents: each of its sentences "
                    "is a document of its own for the context features"
                )
                res.notes.append(note)
        ctx.stage(STAGE_FEATURES, note)
        if in_child:
            # features and training in a child process: its interpreter lock is not the window's
            from ..experiments.rerank_process import train_in_child

            out = train_in_child(
                train_nb,
                dev_nb,
                settings.algo,
                dict(settings.params),
                dict(settings.feature_params),
                callback=stats,
                should_cancel=ctx.should_cancel,
                progress=child_progress,
                on_start=lambda pid: ctx.result("child", pid),
                train_file=train_file,
                dev_file=dev_file,
            )
            res.model = out.model
            res.scored = Scored(out.model, out.data, out.scores, out.choice)
            res.timings = out.timings
        else:
            from ..rerank.model import train_reranker

            res.model = train_reranker(
                train_nb,
                dev_nb,
                settings.algo,
                dict(settings.params),
                dict(settings.feature_params),
                callback=stats,
                should_cancel=ctx.should_cancel,
                progress=_progress_adapter(child_progress),
            )
            ctx.check()
            ctx.stage(STAGE_SCORE, "with the new model…")
            res.scored = score_nbest(res.model, train_nb, ctx.should_cancel)
        ctx.check()
        if res.model is not None and hasattr(
            res.model, "meta"
        ):  # saved with the model: see trained_on_list
            res.model.meta["train_words"] = words_fingerprint(train_nb)
        res.seconds = time.perf_counter() - t0
        return res

    return job


def words_fingerprint(nb: NBestList) -> str:
    """A digest of the sentences (their words, in order) of an N-best list."""
    h = hashlib.blake2b(digest_size=16)
    for ws in nb.words:
        h.update("\x1f".join(ws).encode("utf-8", "surrogatepass"))
        h.update(b"\x1e")
    return h.hexdigest()


def trained_on_list(model, nb: NBestList) -> str | None:
    """Whether ``model`` was trained on the sentences of ``nb``: "same" (its record of its
    training list's words matches), "count" (it records only how many sentences it learnt
    from, as many as ``nb`` has: most likely the same), or None."""
    meta = getattr(model, "meta", None) or {}
    if meta.get("train_words"):
        return "same" if meta["train_words"] == words_fingerprint(nb) else None
    n = meta.get("train_sentences")
    return "count" if n and int(n) == len(nb) else None


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
