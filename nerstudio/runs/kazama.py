"""A Kazama & Torisawa run: a sequence tagger trained on the open corpus (or a saved one opened)
and the corpus's candidates under it, lined up with the corpus.

The training goes to a child process (:mod:`nerstudio.runtime.tagger_process`) unless told
otherwise; :func:`run_kt_training` and :func:`open_kt_model` report to a
:class:`~nerstudio.runs.training.RunContext` like the reranker run. No Qt here: the window's
worker (:func:`nerstudio.gui.workers.job_of`) is one caller.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any

from ..app.attachments import NBestIndex, index_nbest
from ..corpus.model import Corpus
from ..errors import Msg, SettingsError
from .training import RunContext


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


def run_kt_training(
    ctx: RunContext,
    settings,
    run_id: int,
    corpus: Corpus | None,
    corpus_file: str | None = None,
    in_child: bool = True,
    revision: int = 0,
) -> KTRunResult:
    """Train a K&T sequence tagger (``settings.kt_algo`` with ``settings.kt_params``) on the open
    corpus, dev F per epoch on the dev corpus ``settings.dev_path``, and compute the corpus's
    candidates under it (:mod:`nerstudio.runtime.tagger_process`; in a child process unless
    ``in_child`` is false). ``corpus_file``: a file holding exactly ``corpus`` (else a copy is
    written for the child)."""
    from ..runtime import tagger_process as tp

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


def open_kt_model(
    ctx: RunContext,
    path: str,
    corpus: Corpus,
    corpus_file: str | None = None,
    n: int | None = None,
    revision: int = 0,
) -> KTRunResult:
    """Open a saved sequence tagger and compute the open corpus's candidates under it (child);
    ``n``: candidates per document (default: the model's n', 20 for a perceptron tagger)."""

    from ..runtime import tagger_process as tp

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
