"""What a model that never saw a sentence says about it: its N best taggings and its reading of
gold (:mod:`.readings`), by the jackknife or by a given model.

Each sentence must be judged by a model that did not train on it, or the model has learnt the
very errors it should point at. :func:`jackknife_views` cuts the corpus into K folds by document
(:func:`nerstudio.runtime.folds.split`) and runs one job per fold on the fold driver
(:func:`~nerstudio.runtime.folds.run_folds`: in this thread, in local processes or on a Dask
cluster, with progress and cancellation): train the max-ent tagger on the other folds plus every
extra training corpus, then decode the held-out fold (:func:`decode`). :func:`model_views` decodes
the whole corpus with a given model instead (one trained elsewhere, which never saw it).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ..corpus.model import Corpus, Sentence
from ..errors import DataError, SettingsError
from ..nbest import NBestList, entity_types
from ..runtime.folds import FoldProgress, Job, TaskContext, is_remote, run_folds, split
from ..runtime.pipeline import NBEST_FILES, merge_nbest, sentence_ids
from ..runtime.work_files import CorpusFile
from .evidence import SentenceView

Progress = Callable[[int, int, str], None] | None
ShouldCancel = Callable[[], bool] | None


def default_tagger_params() -> dict:
    """The max-ent tagger's settings of ``nerstudio experiment`` (its configuration's defaults,
    chosen on CoNLL-2003 dev): the folds' tagger is the one the rest of nerstudio trains."""
    from ..experiments.collins import ExperimentConfig

    cfg = ExperimentConfig()
    return {
        "task": "typed",
        "features": cfg.tagger_features,
        "l2": cfg.tagger_l2,
        "cutoff": cfg.tagger_cutoff,
        "max_iter": cfg.tagger_max_iter,
        "alphabet": cfg.tagger_alphabet,
    }


def check_tagger(tagger: Any, where: str = "the model") -> None:
    """Suspects need probabilities of whole taggings and entity types: a typed max-ent tagger."""
    if not hasattr(tagger, "static_scores"):
        raise SettingsError(
            f"{where}: suspects need a max-ent tagger model (its probabilities), "
            f"not {type(tagger).__name__}"
        )
    if not tagger.typed:
        raise SettingsError(
            f"{where}: the tagger finds boundaries only; suspects need entity types"
        )


def decode(
    tagger: Any,
    sentences: Sequence[Sentence],
    n: int,
    should_cancel: ShouldCancel = None,
    progress: Callable[[int, int, str], None] | None = None,
) -> NBestList:
    """The tagger's ``n`` best taggings of ``sentences``, with each sentence's reading of its
    gold (:mod:`.readings`) in ``meta["readings"]``. ``progress(done, total, text)`` counts the
    sentences decoded, then those read (``total`` is twice the sentences)."""
    from .readings import read_sentences

    total = 2 * len(sentences)

    def decoded(done: int, _: int) -> None:
        if progress is not None:
            progress(done, total, f"decoded {done:,}/{len(sentences):,} sentences")

    def read(done: int, of: int) -> None:
        if progress is not None:
            progress(total - of + done, total, f"read gold in {done:,}/{of:,} sentences")

    nb = tagger.nbest(sentences, n=n, should_cancel=should_cancel, progress=decoded)
    cands = [nb.candidate_spans(k) for k in range(len(nb))]
    nb.meta["readings"] = read_sentences(tagger, sentences, cands, should_cancel, read)
    return nb


def fold_task(sentences: Sequence[Sentence], job: Job, ctx: TaskContext) -> NBestList:
    """A fold's job: train on the other folds and the extra corpora, decode the held-out fold."""
    from ..tagging.maxent import MaxEntTagger

    s, fold = job.settings, job.required_fold()
    train = [sentences[i] for i in fold.train] + [x for more in s["more"] for x in more]

    def iteration(st) -> None:
        ctx.progress(f"tagger iteration {st.iteration}")

    tagger = MaxEntTagger(**s["params"]).fit(
        train, callback=iteration, should_cancel=ctx.should_cancel
    )
    ctx.check()
    return decode(tagger, [sentences[i] for i in fold.test], s["n"], ctx.should_cancel)


def views_of(
    corpus: Corpus, nb: NBestList, readings: Sequence[dict | None], known: set
) -> list[SentenceView]:
    """One :class:`SentenceView` per sentence of ``corpus`` from its list ``nb`` and readings."""
    out = []
    for k, s in enumerate(corpus.sentences):
        unknown = tuple(sorted({sp.label for sp in s.spans} - known))
        out.append(
            SentenceView(
                s.words,
                list(s.spans),
                nb.candidate_spans(k),
                np.asarray(nb.logprobs[k], dtype=np.float64),
                readings[k],
                unknown,
            )
        )
    return out


def model_views(
    corpus: Corpus, tagger: Any, n: int = 20, progress: Progress = None, cancel: ShouldCancel = None
) -> list[SentenceView]:
    """Every sentence of ``corpus`` as ``tagger`` sees it (a model that never trained on it)."""
    check_tagger(tagger)
    nb = decode(tagger, corpus.sentences, n, cancel, progress)
    return views_of(corpus, nb, nb.meta["readings"], set(entity_types(tagger.list_tagset_)))


def jackknife_views(
    corpus: Corpus,
    more: Sequence[Corpus] = (),
    folds: int = 5,
    n: int = 20,
    tagger_params: dict | None = None,
    executor: Any = None,
    workers: int | None = None,
    progress: Progress = None,
    cancel: ShouldCancel = None,
) -> list[SentenceView]:
    """Every sentence of ``corpus`` as seen by a tagger trained on the other folds and ``more``
    (see the module docstring)."""
    params = dict(default_tagger_params())
    params.update(tagger_params or {})
    if params.get("task", "typed") != "typed":
        raise SettingsError("suspects need a tagger of entity types (task typed)")
    labels = sorted({sp.label for c in (corpus, *more) for s in c.sentences for sp in s.spans})
    if not labels:
        name = os.path.basename(corpus.path) if corpus.path else "the corpus"
        raise DataError(f"{name} and the extra training corpora have no entity to learn from")
    params["labels"] = labels  # every fold gets the same tag set
    _, parts = split(corpus, folds)
    source = None
    if is_remote(executor):
        source = CorpusFile.of(corpus, "sentences")
        extra: list = [CorpusFile.of(m, "sentences") for m in more]
    else:
        extra = [m.sentences for m in more]

    def report(p: FoldProgress) -> None:
        if progress is not None:
            progress(p.done, p.total, p.message)

    run = run_folds(
        fold_task,
        corpus.sentences,
        parts,
        {"params": params, "n": n, "more": extra},
        done="decoded",
        executor=executor,
        workers=workers,
        progress=report,
        should_cancel=cancel,
        source=source,
        files=NBEST_FILES,
    )
    total = len(corpus.sentences)
    readings: list[dict | None] = [None] * total
    for f, nb in zip(parts, run.results):
        for i, v in zip(f.test.tolist(), nb.meta["readings"]):
            readings[i] = v
    merged = merge_nbest(
        [(f.test, nb) for f, nb in zip(parts, run.results)], total, sentence_ids(corpus)
    )
    return views_of(corpus, merged, readings, set(labels))
