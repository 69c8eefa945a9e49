"""Suspect annotations: the sentences of a corpus whose gold is most likely wrong, with a fix.

Gold corpora hold errors (over a thousand wrong labels have been found in CoNLL-2003's). A
tagger that never trained on a sentence still knows what such sentences usually look like: where
it finds another annotation far more probable than gold, gold deserves a second look.
:func:`find_suspects` ranks every sentence of a corpus by that evidence — each sentence judged by
a model that did not see it (:mod:`.views`: K folds over the corpus, extra training corpora
added to every fold, or a model trained elsewhere) — and says for each where gold and the
model's suggestion differ and how strongly (:mod:`.evidence`). :func:`apply_suggestion` gives a
sentence's entities with the suggestion taken; :func:`write_tsv` / :func:`read_tsv` keep the
ranking as a file (:mod:`.tsv`). No Qt: ``nerstudio suspects``, ``nerstudio.suspects()`` and
the application's review queue all use this package.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from typing import Any

from ..corpus.model import Corpus
from .evidence import MEASURES, Suspect, apply_suggestion, judge
from .tsv import read_tsv, write_tsv

# the folds and the taggers (.views) are imported when suspects are looked for: a window that only
# shows a ranking read from a file does not load them

__all__ = [
    "MEASURES",
    "Suspect",
    "apply_suggestion",
    "find_suspects",
    "load_tagger_model",
    "rank",
    "read_tsv",
    "write_tsv",
]


def load_tagger_model(path: Any) -> Any:
    """The tagger of a model folder (``tagger.npz``, as ``nerstudio experiment`` writes it; a
    reranker beside it is not used) or of a tagger file; it must be a typed max-ent tagger."""
    from ..runtime.predictor import load_model_folder
    from .views import check_tagger

    tagger, _ = load_model_folder(path)
    check_tagger(tagger, os.fspath(path))
    return tagger


def rank(suspects: Sequence[Suspect]) -> list[Suspect]:
    """Most suspect first; equal scores in file order."""
    return sorted(
        suspects, key=lambda s: (-s.score if not math.isnan(s.score) else math.inf, s.sentence)
    )


def find_suspects(
    corpus: Corpus,
    *,
    more: Sequence[Corpus] = (),
    folds: int = 5,
    model: Any = None,
    n: int = 20,
    executor: Any = None,
    progress: Callable[[int, int, str], None] | None = None,
    cancel: Callable[[], bool] | None = None,
    tagger_params: dict | None = None,
    workers: int | None = None,
    measure: str = MEASURES[0],
) -> list[Suspect]:
    """Every sentence of ``corpus`` as a :class:`Suspect`, most suspect first.

    Each sentence is judged by a max-ent tagger that did not train on it: with ``model`` (a
    tagger, or a model folder or tagger file), that model; else one trained on the other
    ``folds`` − 1 folds of ``corpus`` plus all of ``more``, with ``tagger_params`` over
    ``nerstudio experiment``'s tagger settings. ``n``: taggings listed per sentence. The folds
    run on ``executor`` (a :mod:`nerstudio.runtime.folds` executor, Dask's included; default:
    local processes, ``workers`` of them). ``progress(done, total, text)`` reports; a true
    ``cancel()`` stops the work with :class:`~nerstudio.errors.Cancelled`."""
    if measure not in MEASURES:
        from ..errors import Msg, SettingsError

        raise SettingsError(Msg.UNKNOWN.format(what="measure", name=measure, choices=MEASURES))
    if n < 1:
        from ..errors import SettingsError

        raise SettingsError("n must be at least 1")
    from .views import jackknife_views, model_views

    if model is not None:
        tagger = load_tagger_model(model) if isinstance(model, (str, os.PathLike)) else model
        views = model_views(corpus, tagger, n, progress, cancel)
    else:
        views = jackknife_views(
            corpus, more, folds, n, tagger_params, executor, workers, progress, cancel
        )
    return rank([judge(k, v, measure) for k, v in enumerate(views)])
