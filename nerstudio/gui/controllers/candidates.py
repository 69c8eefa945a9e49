"""Candidates and explanations: the sentence view, the N-best panel and the feature panel.

For the sentence under the cursor it shows the gold (always the corpus's, from the document)
with the selected candidate, the candidates with their L(x), reranker scores, span F and
exact-match marks, and the features behind a candidate's score or behind the difference of two
(a reranker's global features, or a K&T tagger's non-local features). A gold edit of the shown
sentence recomputes its F column and marks from the document; the selection stays.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

import numpy as np
from PySide6.QtCore import QObject, QTimer, Slot

from ...app.document import Change, ChangeKind
from ...numfmt import num
from ...runs.describe import kt_kind
from ..models.feature_model import TermRow, rows_from_terms
from . import Context

if TYPE_CHECKING:
    from ...app.attachments import KTCandidates
    from ...nbest import NBestList


class CandidatesController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        views.nbest_panel.candidateSelected.connect(self._on_candidate)
        views.nbest_panel.pairSelected.connect(self._on_pair)
        ctx.cursor.moved.connect(self.show_sentence)
        ctx.events.changed.connect(self._on_change)

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        k = self.ctx.cursor.k
        if ch.kind is ChangeKind.GOLD and k in ch.sentences:
            self._gold_changed(k)
        elif ch.kind is ChangeKind.NBEST and k >= 0:
            self.show_sentence(k)
        elif ch.kind in (ChangeKind.SCORES, ChangeKind.MODEL) and k >= 0:
            # in the next turn of the event loop: the browser repaints its marks first, and no
            # single turn does all the refreshing after a training run
            QTimer.singleShot(0, self, lambda: self.ctx.cursor.k == k and self.show_sentence(k))

    # -- the sentence ---------------------------------------------------------------------
    @Slot(int)
    def show_sentence(self, k: int) -> None:
        doc, v = self.doc, self.v
        if doc.corpus is None or not 0 <= k < len(doc.corpus):
            return
        s = doc.corpus.sentences[k]
        i, nb = doc.nbest_row(k), doc.nbest
        if i < 0 or nb is None:
            v.sentence_view.set_sentence(s.words, s.spans)
            v.nbest_panel.clear(
                "No N-best list loaded — File ▸ Open N-best list… (Ctrl+Shift+O), or train one in "
                "the Train workspace (Ctrl+3, then F5)"
                if nb is None
                else "This sentence has no candidates in the N-best list"
            )
            v.feature_panel.show_message("No candidates for this sentence")
            return
        spans = nb.candidate_spans(i)
        ex = self._exact(i)
        chosen = doc.reranked_choice(i)
        v.nbest_panel.set_score_label("score" if doc.kt is not None else "L(x)")
        v.nbest_panel.set_candidates(
            nb.words[i],
            spans,
            nb.logprobs[i],
            doc.scores_of(i),
            doc.span_f(i),
            chosen,
            ex,
            header=self._header(i, ex),
        )
        if spans:
            v.nbest_panel.select(chosen if chosen is not None and chosen >= 0 else 0)
        else:
            v.sentence_view.set_sentence(nb.words[i], s.spans, [])

    def _nbest(self) -> NBestList:
        """The N-best list, attached whenever a sentence has a row in it (nbest_row ≥ 0)."""
        nb = self.doc.nbest
        assert nb is not None, "a sentence has candidates only while a list is attached"
        return nb

    def _exact(self, i: int):
        exact = self.doc.exact()
        return None if exact is None else exact[self.doc.candidate_rows(i)]

    def _header(self, i: int, ex) -> str:
        parts = [f"<b>{self._nbest().n_candidates(i)} candidates</b>"]
        if ex is not None:
            gold_at = np.flatnonzero(ex)
            parts.append(
                f"gold is candidate {gold_at[0] + 1}"
                if len(gold_at)
                else "<span style='color:#c62828'>gold not among them</span>"
            )
        chosen = self.doc.reranked_choice(i)
        if chosen is not None:
            parts.append(
                "reranker keeps the top candidate"
                if chosen == 0
                else f"<b>reranker picks candidate {chosen + 1}</b>"
            )
        return " · ".join(parts)

    def _gold_changed(self, k: int) -> None:
        """The shown sentence's gold changed: redraw it with the same candidate, and the
        candidates' F and exact-match marks (the selection stays)."""
        if self.doc.corpus is None:
            return
        s = self.doc.corpus.sentences[k]
        self.v.sentence_view.set_gold(s.spans)
        i = self.doc.nbest_row(k)
        if i >= 0:
            ex = self._exact(i)
            self.v.nbest_panel.model.set_quality(self.doc.span_f(i), ex)
            self.v.nbest_panel.header.setText(self._header(i, ex))

    # -- candidates and features ----------------------------------------------------------
    def _row(self) -> int:
        return self.doc.nbest_row(self.ctx.cursor.k)

    def _draw(self, i: int, j: int, name: str, b: int | None = None) -> None:
        """Candidate j under the gold; with b, candidates j (A) and b (B) both (compare mode)."""
        k = self.ctx.cursor.k
        nb = self._nbest()
        self.v.sentence_view.set_sentence(
            nb.words[i],
            self.doc.spans(k),
            nb.spans(i, j),
            name,
            None if b is None else nb.spans(i, b),
            f"candidate {(b or 0) + 1}",
        )

    @Slot(int)
    def _on_candidate(self, j: int) -> None:
        i = self._row()
        if i < 0:
            return
        doc, fp = self.doc, self.v.feature_panel
        chosen = doc.reranked_choice(i)
        self._draw(i, j, f"candidate {j + 1}" + (" (reranker's pick)" if chosen == j else ""))
        if doc.kt is not None:
            self._explain_kt(doc.kt, i, j)
            return
        sc = doc.scored
        if sc is None:
            fp.show_message(
                "<i>No reranker loaded: open one (Ctrl+M) or train one (F5) to see each candidate's "
                "global features and weights.</i>"
            )
            return
        row = doc.data_row(i, j)
        try:
            expl = sc.model.explain(sc.data, row)
        except Exception as exc:
            fp.show_message(f"<i>This reranker cannot list per-feature contributions: {exc}</i>")
            return
        rows = rows_from_terms(expl.terms)
        score = float(getattr(expl, "score", sc.scores[row]))
        fp.show_explanation(rows, f"Candidate {j + 1}", score)

    @Slot(int, int)
    def _on_pair(self, a: int, b: int) -> None:
        i = self._row()
        if i < 0:
            return
        doc, fp = self.doc, self.v.feature_panel
        self._draw(i, a, f"candidate {a + 1}", b)
        if doc.kt is not None:
            self._compare_kt(doc.kt, i, a, b)
            return
        sc = doc.scored
        if sc is None:
            fp.show_message("<i>No reranker loaded: nothing separates the candidates yet.</i>")
            return
        ra, rb = doc.data_row(i, a), doc.data_row(i, b)
        try:
            cmp_ = sc.model.compare(sc.data, ra, rb)
        except Exception as exc:
            fp.show_message(f"<i>This reranker cannot compare feature by feature: {exc}</i>")
            return
        rows = rows_from_terms(cmp_.terms, compare=True)
        for r in rows:
            if r.name == "L(x)":  # show both log-probabilities rather than their difference
                r.a, r.b = float(sc.data.L[ra]), float(sc.data.L[rb])
        delta = float(getattr(cmp_, "delta", sc.scores[ra] - sc.scores[rb]))
        fp.show_comparison(
            rows,
            f"candidate {a + 1}",
            f"candidate {b + 1}",
            delta,
            scores=(float(sc.scores[ra]), float(sc.scores[rb])),
        )

    def _explain_kt(self, kt: KTCandidates, i: int, j: int) -> None:
        """Candidate j of a K&T tagger: the non-local features of its document candidate."""
        terms, total, nl, d, jj = kt.explain(i, j)
        kind = kt_kind(kt.model)
        doc_name = kt.doc_nbest.ids[d] if d < len(kt.doc_nbest.ids) else str(d + 1)
        if not kt.joint:
            self.v.feature_panel.show_message(
                f"<b>Candidate {j + 1}</b> · local score Φ·w = {num(total)} (document candidate {jj + 1} of "
                f"{doc_name}). <i>The {kind} tagger has local features only: no non-local features to show. "
                "Train the candidate or proposed algorithm for those.</i>"
            )
            return
        rows = [TermRow(name, fam, c, None, w, cw) for name, fam, c, w, cw in terms]
        self.v.feature_panel.show_explanation(
            rows,
            f"Candidate {j + 1}",
            total,
            [("local", total - nl), ("non-local", nl)],
            f" ({len(terms)} non-local features of document candidate {jj + 1} of {html.escape(str(doc_name))}, "
            f"{kind})",
        )

    def _compare_kt(self, kt: KTCandidates, i: int, a: int, b: int) -> None:
        if not kt.joint:
            ea, eb = kt.explain(i, a), kt.explain(i, b)
            self.v.feature_panel.show_message(
                f"<b>A = candidate {a + 1}</b> ({num(ea[1])}) vs <b>B = candidate {b + 1}</b> ({num(eb[1])}): "
                f"local score difference {num(ea[1] - eb[1], sign=True)}. "
                "<i>Local features only: no non-local features.</i>"
            )
            return
        terms, ea, eb = kt.compare(i, a, b)
        rows = [TermRow(name, fam, x, y, w, c) for name, fam, x, y, w, c in terms]
        delta, dnl = ea[1] - eb[1], ea[2] - eb[2]
        same = " (the same document candidate)" if ea[4] == eb[4] else ""
        self.v.feature_panel.show_comparison(
            rows,
            f"candidate {a + 1}",
            f"candidate {b + 1}",
            delta,
            scores=(ea[1], eb[1]),
            breakdown=[("local", delta - dnl), ("non-local", dnl)],
            note=same,
            who=f"the {kt_kind(kt.model)} tagger",
        )

    def compare_with_top(self) -> None:
        p = self.v.nbest_panel
        sel = p.selected()
        j = sel[0] if sel else p.model.chosen()
        if j is None or j <= 0 or p.model.rowCount() < 2:
            j = 1 if p.model.rowCount() > 1 else None
        if j is not None:
            p.select(j, 0)
