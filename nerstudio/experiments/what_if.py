"""What if the sentence were different: the tagger's N-best list, the global features and the
reranker's choice of an edited sentence, and how each candidate's score changed (no Qt).

:func:`analyse` decodes a token list with the tagger (beam search, N candidates), turns the list
into the reranker's features and scores it. :func:`compare` lines the candidates of an edited
sentence up with those of the original by their entities (type and words in any case, wherever
they are), and
explains each score change by the features only one of the two has and the change in L(x) — for a
linear reranker exactly (``Δ = a0·ΔL + Σ w(gained) − Σ w(lost)``, counts included). Nothing here
touches a corpus.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from ..corpus.model import Sentence
from ..errors import SettingsError
from ..nbest import NBestList

if TYPE_CHECKING:
    from ..rerank.data import RankingData


@dataclass
class WhatIf:
    words: list[str]
    nbest: NBestList  # one sentence
    data: RankingData
    scores: np.ndarray  # per candidate
    choice: int  # the reranker's pick

    def entities(self, j: int) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """Candidate ``j``'s entities as (type, lower-cased words), in order: what lines the
        candidates of two versions of a sentence up (a change of case keeps the entities)."""
        return tuple(
            (s.label, tuple(w.lower() for w in self.words[s.start : s.end]))
            for s in self.nbest.spans(0, j)
        )

    def features(self, j: int) -> dict[int, float]:
        X = self.data.X
        row = X.getrow(j)
        return dict(zip(row.indices.tolist(), row.data.tolist()))


def analyse(tagger, model, words, n: int = 20) -> WhatIf:
    """The tagger's ``n`` best analyses of ``words``, their features and the reranker's scores."""
    words = [w for w in words if w]
    if not words:
        raise SettingsError("an empty sentence")
    nb = tagger.nbest([Sentence(list(words), [])], n=n, with_gold=False)
    data = model.data(nb)
    scores = np.asarray(model.scores(data), dtype=np.float64)
    return WhatIf(list(words), nb, data, scores, int(np.argmax(scores)))


@dataclass
class Change:
    j: int  # candidate of the edited sentence
    before: int | None  # the original's candidate with the same entities (None: new)
    delta: float | None  # score change
    dL: float | None  # a0 · change of L(x)
    gained: list[tuple[str, float]]  # (feature, weight × count) only the edited candidate has
    lost: list[tuple[str, float]]


def compare(model, old: WhatIf, new: WhatIf, top: int = 5) -> list[Change]:
    """Each candidate of ``new`` against the candidate of ``old`` with the same entities."""
    try:
        a0, w = model.learner.linear_weights()
    except NotImplementedError:
        a0, w = None, None
    names = list(old.data.feature_names) or list(getattr(model.features, "names_", []))
    where: dict[tuple[tuple[str, tuple[str, ...]], ...], int] = {}
    for j in range(len(old.scores)):
        where.setdefault(old.entities(j), j)
    out = []
    for j in range(len(new.scores)):
        i = where.get(new.entities(j))
        if i is None:
            out.append(Change(j, None, None, None, [], []))
            continue
        fa, fb = new.features(j), old.features(i)
        gained = {f: v - fb.get(f, 0.0) for f, v in fa.items() if v != fb.get(f, 0.0)}
        gained.update({f: -v for f, v in fb.items() if f not in fa})
        dL = None if a0 is None else float(a0 * (new.data.L[j] - old.data.L[i]))

        def named(items):
            return [
                (
                    names[f] if f < len(names) else f"feature {f}",
                    float(w[f] * c) if w is not None else c,
                )
                for f, c in items
            ]

        if w is not None:  # a feature of weight 0 changes nothing: not listed
            gained = {f: c for f, c in gained.items() if w[f] != 0.0}

        def size(fc):
            return -abs(w[fc[0]] * fc[1]) if w is not None else 0.0

        ups = sorted(((f, c) for f, c in gained.items() if c > 0), key=size)
        downs = sorted(((f, -c) for f, c in gained.items() if c < 0), key=size)
        out.append(
            Change(
                j, i, float(new.scores[j] - old.scores[i]), dL, named(ups[:top]), named(downs[:top])
            )
        )
    return out
