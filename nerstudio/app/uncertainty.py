"""The browser's "most uncertain first": the core's uncertainty measures of the open document.

:func:`nerstudio.rerank.uncertainty.uncertainty` measures an N-best list (issue 16): the
probability mass of the tagger's top candidate, its margin over the second, and whether the
reranker overrules the tagger. Here those measures are read from the
:class:`~nerstudio.app.document.Document` — its attached list and the reranker's scores of that
list (``Document.scored``, the same pick ``RerankerModel.rerank`` makes) — and mapped to corpus
sentences. Nothing is copied to go stale: every call compares the document's current list and
scores with the ones the cached measures were made from and recomputes when either was replaced
(a new list, a new model's scores). Gold edits change no measure (they depend on the candidates'
scores only). The window's corpus browser orders and filters by these; the measures' names in
words are its view's (:mod:`nerstudio.gui.views.uncertainty_bar`).
"""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING

import numpy as np

from ..rerank.uncertainty import MEASURES, Uncertainty, top_probabilities, uncertainty_order

if TYPE_CHECKING:
    from .attachments import NBestIndex, Scored
    from .document import Document

# the index and the scores the cached measures were made from (weakly: see _made_from)
_Key = tuple["weakref.ref[NBestIndex]", "weakref.ref[Scored] | None"]


class DocumentUncertainty:
    """The uncertainty of the document's attached N-best list, per corpus sentence."""

    def __init__(self, document: Document) -> None:
        self.doc = document
        self._key: _Key | None = None
        self._u: Uncertainty | None = None
        self._orders: dict[str, np.ndarray] = {}

    def why_unavailable(self, measure: str = "mass") -> str:
        """Why ``measure`` cannot order the sentences now ('' when it can)."""
        if measure not in MEASURES:
            return f"unknown measure {measure!r}"
        if self.doc.corpus is None or self.doc.nbest_index is None:
            return "No N-best list is attached to the corpus (File ▸ Open N-best list…)"
        if measure == "disagreement" and self._scored() is None:
            return "Needs a reranker: open one (File ▸ Open reranker model…) or train one"
        return ""

    def _scored(self) -> Scored | None:
        s, nb = self.doc.scored, self.doc.nbest
        if s is None or nb is None or len(s.choice) != len(nb):
            return None
        return s

    def measures(self) -> Uncertainty | None:
        """The core's measures of the attached list (None without one), with the reranker's
        choice when its scores are installed."""
        ix = self.doc.nbest_index
        if self.doc.corpus is None or ix is None:
            self._key, self._u, self._orders = None, None, {}
            return None
        scored = self._scored()
        if not self._made_from(ix, scored):
            tops = [top_probabilities(lp) for lp in ix.nbest.logprobs]
            mass = np.array([a for a, _ in tops], dtype=np.float64)
            margin = np.array([a - b for a, b in tops], dtype=np.float64)
            choice = None if scored is None else np.asarray(scored.choice, dtype=np.int64)
            self._u, self._orders = Uncertainty(mass, margin, choice), {}
            self._key = (weakref.ref(ix), None if scored is None else weakref.ref(scored))
        return self._u

    def _made_from(self, ix: NBestIndex, scored: Scored | None) -> bool:
        """The cached measures were made from this very index and these very scores (weak
        references: a replaced list is not kept alive, and a new one never passes for it)."""
        if self._key is None:
            return False
        r_ix, r_sc = self._key
        return r_ix() is ix and (r_sc() if r_sc is not None else None) is scored

    def values(self, measure: str) -> np.ndarray | None:
        """Per corpus sentence, the number the browser's column shows for ``measure`` (the
        margin for ``margin``, the top-candidate probability otherwise); NaN where the sentence
        has no candidates."""
        u, ix = self.measures(), self.doc.nbest_index
        if u is None or ix is None:
            return None
        per_row = u.margin if measure == "margin" else u.mass
        row_of = ix.row_of
        out = np.full(len(row_of), np.nan)
        has = row_of >= 0
        out[has] = per_row[row_of[has]]
        return out

    def disagrees(self) -> np.ndarray | None:
        """Per corpus sentence: the reranker overrules the tagger (None without a reranker)."""
        u, ix = self.measures(), self.doc.nbest_index
        if u is None or ix is None or u.choice is None or u.disagreement is None:
            return None
        row_of = ix.row_of
        out = np.zeros(len(row_of), dtype=bool)
        has = row_of >= 0
        out[has] = u.disagreement[row_of[has]]
        return out

    def order(self, measure: str) -> np.ndarray | None:
        """Corpus sentences most uncertain first by ``measure`` (:func:`uncertainty_order` of the
        list, mapped to the corpus), then those without candidates in corpus order; None when
        the measure is unavailable."""
        if self.why_unavailable(measure):
            return None
        u, ix = self.measures(), self.doc.nbest_index
        if u is None or ix is None:
            return None
        hit = self._orders.get(measure)
        if hit is None:
            row_of = ix.row_of
            sentence_of = np.full(len(u.mass), -1, dtype=np.int64)
            has = np.flatnonzero(row_of >= 0)
            sentence_of[row_of[has]] = has
            ranked = sentence_of[uncertainty_order(u, measure)]
            ranked = ranked[ranked >= 0]
            rest = np.flatnonzero(row_of < 0)
            hit = self._orders[measure] = np.concatenate([ranked, rest]).astype(np.int64)
        return hit

    def ranked(self, measure: str) -> np.ndarray | None:
        """:meth:`order` without the sentences that have no candidates."""
        o, ix = self.order(measure), self.doc.nbest_index
        if o is None or ix is None:
            return None
        kept: np.ndarray = o[ix.row_of[o] >= 0]
        return kept
