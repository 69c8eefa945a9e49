"""How unsure the tagger (and the reranker) are about each sentence of an N-best list.

Annotators' time helps the model most on the sentences it is least sure of; the N-best list
already measures that (issue 16). Per sentence:

``mass``
    the probability of the tagger's top candidate, softmax of L(x) over the list (low: the
    tagger spreads its belief over several segmentations);
``margin``
    the top candidate's probability minus the second's (low: a near tie; 1.0 for a sentence
    with one candidate);
``disagreement``
    whether the reranker picks another candidate than the tagger's top (needs a reranker).

:func:`uncertainty_order` sorts sentences most uncertain first. For the perceptron taggers,
whose list scores are no log-probabilities, the softmax of their scores stands in. No Qt: the
command line uses it (``nerstudio rank-uncertain``) and an application view can too.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..choices import MEASURES
from ..errors import Msg, SettingsError
from ..nbest import NBestList


@dataclass
class Uncertainty:
    """Per sentence of a list: see the module docstring. ``choice`` is the reranker's pick
    (``None`` without a reranker), ``disagreement`` ``choice != 0``."""

    mass: np.ndarray
    margin: np.ndarray
    choice: np.ndarray | None = None

    @property
    def disagreement(self) -> np.ndarray | None:
        return None if self.choice is None else self.choice != 0


def top_probabilities(logprobs: np.ndarray) -> tuple[float, float]:
    """(probability of the first candidate, of the second) under softmax of the scores; a list
    of one candidate gives (1, 0), an empty one (1, 0) too (nothing to doubt)."""
    lp = np.asarray(logprobs, dtype=np.float64)
    if lp.size == 0:
        return 1.0, 0.0
    p = np.exp(lp - lp.max())
    p /= p.sum()
    return float(p[0]), float(p[1]) if lp.size > 1 else 0.0


def uncertainty(nb: NBestList, model=None) -> Uncertainty:
    """The measures of every sentence of ``nb``; ``model`` (a
    :class:`~nerstudio.rerank.model.RerankerModel`) adds the disagreement."""
    tops = [top_probabilities(lp) for lp in nb.logprobs]
    mass = np.array([a for a, _ in tops], dtype=np.float64)
    margin = np.array([a - b for a, b in tops], dtype=np.float64)
    choice = None
    if model is not None:
        choice = np.asarray(model.rerank(nb)[1], dtype=np.int64)
    return Uncertainty(mass, margin, choice)


def uncertainty_order(u: Uncertainty, by: str = "mass") -> np.ndarray:
    """Sentence indices, most uncertain first: by ``mass`` or ``margin`` ascending; by
    ``disagreement``, the sentences where the reranker overrules the tagger first, each group by
    ascending mass. Ties keep the list's order."""
    if by not in MEASURES:
        raise SettingsError(Msg.UNKNOWN.format(what="measure", name=by, choices=MEASURES))
    if by == "mass":
        return np.argsort(u.mass, kind="stable")
    if by == "margin":
        return np.argsort(u.margin, kind="stable")
    if u.choice is None or u.disagreement is None:  # the two come together
        raise SettingsError("ranking by disagreement needs a reranker (--model)")
    return np.lexsort((u.mass, ~u.disagreement))
