"""A reranker training run as one stage machine: tagger → jackknife → N-best index → dev set →
global features → reranker → scoring (the stages a run plans, then enters one by one).

:func:`run_training` runs a :class:`~nerstudio.runs.spec.RunSettings` on the window's inputs
(its corpus, the N-best lists and the tagger it holds) and reports to a :class:`RunContext`:
the stages, progress, each result as soon as it exists, the training curve; it checks
``ctx.should_cancel`` between stages and passes it to every step of the core. The reranker
stage is every run's (:func:`nerstudio.rerank.fitting.fit_rerankers`, here with one learner),
followed by scoring the training list; it runs in a child process
(:func:`nerstudio.runtime.rerank_process.train_in_child`) unless told otherwise, so a
window that runs it keeps its interpreter lock. No Qt here: the window's worker
(:func:`nerstudio.gui.workers.job_of`) is one caller.
"""

from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..app.attachments import NBestIndex, Scored, index_nbest, scored_data, with_documents
from ..app.progress import Progress
from ..corpus.model import Corpus
from ..errors import Msg, SettingsError
from ..nbest import NBestList
from .stages import (
    STAGE_DEV,
    STAGE_FEATURES,
    STAGE_INDEX,
    STAGE_JACKKNIFE,
    STAGE_RERANKER,
    STAGE_SCORE,
    STAGE_TAGGER,
    tagger_and_lists,
)


class RunContext(Progress, Protocol):
    """What a run reports to and asks (the window's worker gives its JobContext): a job's
    :class:`~nerstudio.app.progress.Progress`, its pipeline, its results and its curve."""

    pipeline: Any  # the planned stages (``stages``) and the current one's index (``k``)

    def result(self, key: str, value: Any) -> None: ...

    def stats(self, st: Any) -> None: ...


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


def run_training(
    ctx: RunContext,
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
) -> RunResult:
    """Run ``settings`` (a RunSettings snapshot) on the given inputs. With ``in_child`` the
    reranker stage (global features, training, scoring the training list) runs in a child
    process (:mod:`nerstudio.runtime.rerank_process`); the tagger stages stay in this thread.
    ``files``: N-best files holding exactly ``nbest`` / ``dev_nbest``, which the child may read
    instead of being handed copies. ``executor``: where the jackknife's folds run (None: here)."""
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

    if settings.start == "tagger" and (corpus is None or not len(corpus)):
        raise SettingsError(Msg.OPEN_TRAINING_FIRST.format())
    dev_path = settings.dev_path
    dev_corpus = None
    if dev_path and not dev_path.lower().endswith(".npz"):
        from ..corpus.formats import read_corpus

        ctx.stage(
            STAGE_TAGGER if settings.start == "tagger" else STAGE_DEV,
            f"reading dev corpus {os.path.basename(dev_path)}…",
        )
        dev_corpus = read_corpus(dev_path)
    if settings.start == "tagger":
        assert corpus is not None  # checked above
        # the experiment's tagger stage: the tagger's epochs chosen on the dev corpus if any,
        # the folds one after the other in this thread unless the "Folds run on" setting says
        lists = tagger_and_lists(
            ctx,
            corpus,
            settings.tagger_params(corpus.labels),
            settings.folds,
            settings.n,
            decode={"dev": dev_corpus} if dev_corpus is not None else None,
            select_on="dev" if dev_corpus is not None else None,
            workers=1,
            executor=executor,
        )
        tg = res.tagger = lists.model
        ctx.result("tagger", tg)
        train_nb = lists.nbest
        ctx.check()
        ctx.stage(STAGE_INDEX)
        res.nbest_index = index_nbest(corpus, train_nb, ctx.should_cancel, revision)
        ctx.result("nbest", res.nbest_index)
        dev_nb = dev_file = train_file = None  # a new tagger: the old dev list no longer matches
        if dev_corpus is not None:
            ctx.stage(STAGE_DEV, "decoded by the new tagger")
            dev_nb = (lists.decoded or {})["dev"]
            dev_corpus = None
    # the development set (decoded above when the run trained its tagger)
    if dev_path and dev_path.lower().endswith(".npz"):
        ctx.stage(STAGE_DEV, f"reading dev N-best {os.path.basename(dev_path)}…")
        dev_nb = NBestList.load(dev_path)
        dev_file = dev_path
    elif dev_corpus is not None:
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
        from ..runtime.pipeline import describe_list  # the tagger's module: not at start-up

        describe_list(dev_nb, dev_corpus)  # its documents, as the fold driver's lists carry
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
        from ..runtime.rerank_process import train_in_child

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
    else:  # the same stage in this thread
        from ..rerank.model import fit_reranker

        res.model, data = fit_reranker(
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
        res.scored = scored_data(res.model, data)
    ctx.check()
    if res.model is not None and hasattr(
        res.model, "meta"
    ):  # saved with the model: see trained_on_list
        res.model.meta["train_words"] = words_fingerprint(train_nb)
    res.seconds = time.perf_counter() - t0
    return res


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
