"""The local part of the K&T joint model: where a document's candidates and Φ^l come from.

:class:`~nerstudio.tagging.joint.JointTagger` re-scores candidates with local plus non-local
features; the local part (:class:`Local`: candidates, local score, local update) is one of

* :class:`KBestLocal` — the k best under the current local weights of the structured perceptron
  (Algorithms 4.1 and 4.2);
* :class:`FixedLocal` — fixed candidate lists, the full local feature set re-trained
  (``reranking2``);
* :class:`FirstScoreLocal` — fixed candidate lists with one local feature, the first model's score
  (``reranking1``).

The fixed lists come from :func:`first_model_lists` (cross-validated over document folds for
training documents: :func:`nerstudio.experiments.kazama_fits.cross_validated_lists`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from .perceptron import PerceptronTagger
from .sequences import Sequences
from .weights import AveragedWeights


class Local:
    """The local part of the total model for one set of documents: candidates and Φ^l."""

    n: int = 0

    def candidates(self, i: int, k: int, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Up to k candidates of document i and their local scores Φ^l·w."""
        raise NotImplementedError

    def score(self, i: int, tags: np.ndarray, w: np.ndarray) -> float:
        """Φ^l(x_i, tags)·w."""
        raise NotImplementedError

    def update(self, aw: AveragedWeights, i: int, good: np.ndarray, bad: np.ndarray) -> None:
        """aw += Φ^l(good) − Φ^l(bad)."""
        raise NotImplementedError


class KBestLocal(Local):
    """Candidates from the k-best of the current local weights (Algorithms 4.1 and 4.2)."""

    def __init__(self, tagger: PerceptronTagger, seqs: Sequences):
        self.tagger, self.seqs, self.n = tagger, seqs, tagger.n_weights_

    def candidates(self, i, k, w):
        return self.tagger.kbest(self.seqs, i, k, weights=w)

    def score(self, i, tags, w):
        return self.tagger.score(self.seqs, i, tags, weights=w)

    def update(self, aw, i, good, bad):
        self.tagger.update(aw, self.seqs, i, good, bad)  # compiled; agreeing positions cost nothing


class FixedLocal(KBestLocal):
    """Fixed candidate lists, the full local feature set re-trained (``reranking2``)."""

    def __init__(self, tagger, seqs, lists: Sequence[np.ndarray]):
        super().__init__(tagger, seqs)
        self.lists = lists

    def candidates(self, i, k, w):
        Y = self.lists[i][:k]
        return Y, self.tagger.score_many(self.seqs, i, Y, weights=w)


class FirstScoreLocal(Local):
    """Fixed candidate lists, one local feature: the first model's score (``reranking1``).

    ``scores[i]`` holds the scores of document i's candidates and ``gold_scores[i]`` that of its
    gold labelling, both under the first model that produced the list (a cross-validation model
    for training documents)."""

    n = 1

    def __init__(
        self,
        lists: Sequence[np.ndarray],
        scores: Sequence[np.ndarray],
        gold_scores: Sequence[float],
        gold: Sequence[np.ndarray] | None,
    ):
        self.lists = lists
        self._scores = [np.asarray(s, dtype=np.float64) for s in scores]
        self._lookup = []
        for i, Y in enumerate(lists):
            d = {
                y.tobytes(): float(s)
                for y, s in zip(np.asarray(Y, dtype=np.int16), self._scores[i])
            }
            if gold is not None:
                d[np.asarray(gold[i], dtype=np.int16).tobytes()] = float(gold_scores[i])
            self._lookup.append(d)

    def candidates(self, i, k, w):
        Y = self.lists[i][:k]
        return Y, w[0] * self._scores[i][: len(Y)]

    def _first_score(self, i, tags) -> float:
        return self._lookup[i][np.asarray(tags, dtype=np.int16).tobytes()]

    def score(self, i, tags, w):
        return float(w[0]) * self._first_score(i, tags)

    def update(self, aw, i, good, bad):
        aw.add(
            np.zeros(1, np.int64),
            np.array([self._first_score(i, good) - self._first_score(i, bad)]),
        )


def first_model_lists(first: PerceptronTagger, seqs: Sequences, n: int):
    """Candidates of every sequence under ``first`` with their scores, and the gold scores."""
    lists, scores, gold_scores = [], [], []
    for i in range(len(seqs)):
        Y, s = first.kbest(seqs, i, n)
        lists.append(np.asarray(Y, dtype=np.int16))
        scores.append(s)
        gold_scores.append(first.score(seqs, i, seqs.gold[i]) if seqs.gold is not None else 0.0)
    return lists, scores, gold_scores
