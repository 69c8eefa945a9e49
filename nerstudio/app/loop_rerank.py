"""The reranker in the annotation loop: it learns from the reviewed sentences and picks the
suggestions among the tagger's candidates.

A reranker of the perceptron family (perceptron, averaged, voted, margin:
:class:`~nerstudio.rerank.perceptron.PerceptronRanker`) can continue training from its current
weights (:meth:`~PerceptronRanker.warm_start`). In the loop (:mod:`nerstudio.app.loop`) every
``every`` newly reviewed sentences it does so on the reviewed sentences' N-best lists (made by
the loop's current tagger) with the reviewed spans as gold; its feature index stays the one it
was trained with (a feature it never saw has no weight to learn). Its choice among each
sentence's candidates is then the suggestion. Boosting and the kernel perceptron do not learn
incrementally here: :func:`why_not` says so and the loop runs with the tagger alone. No Qt.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from ..corpus.model import Span
from ..nbest import NBestList, entity_types
from ..runtime.predictor import needs_documents
from .attachments import Scored, score_nbest

if TYPE_CHECKING:  # the learners (and scipy) load with the first reranker, not with the window
    from ..rerank.model import RerankerModel


def why_not(reranker: object) -> str:
    """Why ``reranker`` cannot learn in the loop ('' when it can)."""
    from ..rerank.model import RerankerModel
    from ..rerank.perceptron import PerceptronRanker

    if reranker is None:
        return "no reranker"
    learner = getattr(reranker, "learner", None)
    if not isinstance(reranker, RerankerModel) or not isinstance(learner, PerceptronRanker):
        algo = getattr(reranker, "algo", type(reranker).__name__)
        return f"a {algo} reranker does not learn in the loop (the perceptron family does)"
    if not hasattr(learner, "w_"):
        return "the reranker is not trained"
    return ""


def fits(reranker: RerankerModel, nb: NBestList) -> bool:
    """Whether the reranker's features know the entity types of ``nb``'s tag set."""
    return entity_types(nb.tagset) == reranker.features.types_


def score(
    reranker: RerankerModel | None,
    nb: NBestList,
    should_cancel: Callable[[], bool] | None = None,
) -> Scored | None:
    """The reranker's scores and choice on ``nb`` (each sentence a document of its own); None
    without a reranker or when its entity types are not the list's (the tagger's best wins)."""
    if reranker is None or not len(nb) or not fits(reranker, nb):
        return None
    if needs_documents(reranker):
        nb.meta["documents"] = list(range(len(nb)))
    return score_nbest(reranker, nb, should_cancel)


def choose(
    reranker: RerankerModel | None,
    nb: NBestList,
    should_cancel: Callable[[], bool] | None = None,
) -> np.ndarray:
    """Per sentence of ``nb`` the chosen candidate: the reranker's (:func:`score`), else the
    tagger's best."""
    scored = score(reranker, nb, should_cancel)
    return np.zeros(len(nb), dtype=np.int64) if scored is None else scored.choice


def training_list(
    nb: NBestList, rows: Sequence[int], gold: Sequence[Sequence[Span]]
) -> tuple[NBestList, int]:
    """The N-best lists of ``rows`` of ``nb`` with ``gold`` as their gold spans, leaving out a
    sentence whose gold has a type the tag set lacks; returns the list and how many were left."""
    types = set(entity_types(nb.tagset)) if nb.typed else None
    keep = [
        (r, list(g))
        for r, g in zip(rows, gold)
        if types is None or all(s.label in types for s in g)
    ]
    sub = NBestList(
        list(nb.tagset),
        [nb.words[r] for r, _ in keep],
        [nb.candidates[r] for r, _ in keep],
        [nb.logprobs[r] for r, _ in keep],
        [g for _, g in keep],
        [nb.ids[r] for r, _ in keep],
        dict(nb.meta),
    )
    return sub, len(rows) - len(keep)


def warm_start(
    reranker: RerankerModel,
    nb: NBestList,
    rows: Sequence[int],
    gold: Sequence[Sequence[Span]],
    should_cancel: Callable[[], bool] | None = None,
) -> tuple[RerankerModel, str]:
    """A new reranker: ``reranker`` trained further, from its weights, on the candidates of
    ``rows`` of ``nb`` with ``gold`` (:meth:`PerceptronRanker.warm_start`); and a note."""
    from ..rerank.model import RerankerModel
    from ..rerank.perceptron import PerceptronRanker

    if not fits(reranker, nb):
        return reranker, "reranker not trained: the tagger's entity types differ from its own"
    sub, left = training_list(nb, rows, gold)
    data = reranker.features.transform(sub, should_cancel=should_cancel)
    if not isinstance(reranker.learner, PerceptronRanker):  # why_not() let in no other
        raise TypeError(f"{reranker.learner!r} does not learn in the loop")
    learner = reranker.learner.warm_start(data, should_cancel=should_cancel)
    meta = dict(reranker.meta, loop_sentences=len(sub))
    model = RerankerModel(reranker.features, learner, meta)
    note = f"reranker trained on {len(sub)} reviewed sentence(s)"
    if left:
        note += f" ({left} left out: a type the tagger lacks)"
    return model, note
