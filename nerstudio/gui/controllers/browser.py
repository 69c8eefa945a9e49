"""The corpus browser: the document tree with its marks and counts, filters, navigation, the
sentence header, the gold-entity table and the corpus summary.

With an N-best list attached it also orders the sentences "most uncertain first" (by the
tagger's top-candidate probability, its margin over the second, or — with a reranker's scores —
the reranker overruling the tagger), keeps only the uncertain ones on request, shows the measure
in a sortable column and goes to the next most uncertain sentence (F7: a walk through that
queue, which no reordering makes skip a sentence, :mod:`nerstudio.app.walk`). All of it derives
from the document's attached list and scores
(:class:`~nerstudio.app.uncertainty.DocumentUncertainty`) and is recomputed when either
changes. Its "Suspects" filter shows the sentences with an open suspect annotation
(:mod:`nerstudio.app.suspects`), most suspect first, the score in the measure's column, and F7
walks them; it follows the queue's changes.

It moves the :class:`~nerstudio.gui.controllers.SentenceCursor` when the user picks a sentence
(and selects the sentence someone asked the cursor for), and follows the document: a new
corpus fills the tree, a gold edit updates that sentence's counts and ✓/✗ mark, the type
filter and the summary, a new N-best list or new scores refresh every mark.
"""

from __future__ import annotations

import html
import os
from collections import Counter

import numpy as np
from PySide6.QtCore import QObject, Qt, Slot
from PySide6.QtWidgets import QTableWidgetItem

from ...app.document import Change, ChangeKind
from ...app.suspects import QueueChange, QueueKind
from ...app.types import document_types
from ...app.uncertainty import DocumentUncertainty
from ...app.walk import Walk
from ...rerank.uncertainty import MEASURES
from ..actions import build_action
from ..models.corpus_model import CorpusTreeModel, status_text
from ..views.palette import type_color
from ..views.row_kept import row_kept
from ..views.uncertainty_bar import LABELS, TIPS
from ..window_views import SUSPECTS_FILTER as SUSPECTS
from . import Context

MAX_ENTITY_ROWS = 2000  # rows of the gold-entity table (one item each per column)
SUSPECT_TIP = "The evidence that the sentence's gold is wrong (its most suspect region)"


class BrowserController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._summary_stale = False
        self._shown_path: str | None = None  # the file of the corpus shown (its real path)
        self._only: tuple | None = (
            None  # (mask, why): a set of sentences asked for by another feature
        )
        v = views
        v.search.textChanged.connect(self.apply_filter)
        v.status_filter.currentIndexChanged.connect(lambda _i: self._apply_uncertainty())
        v.type_filter.currentIndexChanged.connect(self.apply_filter)
        v.corpus_view.selectionModel().currentChanged.connect(self._on_current_changed)
        v.tree_model.statusChanged.connect(v.corpus_view.viewport().update)
        v.tabs.currentChanged.connect(self._on_tab_changed)
        ctx.cursor.requested.connect(self.select_sentence)
        ctx.cursor.moved.connect(self._show_header)
        ctx.cursor.moved.connect(self._moved_on)
        ctx.cursor.showOnly.connect(self.show_only)
        v.filter_count.linkActivated.connect(lambda _link: self.show_only(None))
        ctx.events.changed.connect(self._on_change)
        self.suspects = ctx.suspects
        self.suspects.subscribe(self._on_queue)
        self._init_uncertainty(parent)

    @property
    def corpus(self):
        return self.doc.corpus

    # -- the document ---------------------------------------------------------------------
    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self.walk.reset()
            self.v.uncertainty_bar.reset()
            self._descending = False
            # the same file read again (a reload): the view stays on the sentence it showed
            path = os.path.realpath(self.corpus.path) if self.corpus.path else None
            again = path is not None and path == self._shown_path
            self._shown_path = path
            self._set_corpus(self.ctx.cursor.k if again else 0)
            self._refresh_uncertainty()
        elif ch.kind is ChangeKind.GOLD:
            self._gold_edited(ch.sentences)
        elif ch.kind in (ChangeKind.NBEST, ChangeKind.SCORES):
            with row_kept(self.v.corpus_view):  # the application's: nothing moves on screen
                self._refresh_marks()
                self._refresh_uncertainty(keep=True)

    def _on_queue(self, ch: QueueChange) -> None:
        """The suspects queue changed: its filter and order follow (the sentence shown stays)."""
        if self.corpus is None:
            return
        if ch.kind is QueueKind.LIST:
            self.walk.reset()  # another list: F7 starts from its top
            self._refresh_uncertainty(keep=True)
        elif ch.kind is QueueKind.STATUS and self._suspects_shown():
            self.apply_filter(keep=True)  # the order and the scores are the list's

    def _moved_on(self, _k: int) -> None:
        """A suspect decided stays listed while it is shown, and goes when the annotator leaves."""
        if self._suspects_shown():
            self.apply_filter(keep=True)

    def _suspects_shown(self) -> bool:
        return self.v.status_filter.currentData() == SUSPECTS

    @Slot(object, str)
    def show_only(self, sentences, why: str = "") -> None:
        """Show only ``sentences`` (corpus indices; None: all again), saying ``why``; the first
        becomes current."""
        c = self.corpus
        if c is None or sentences is None:
            self._only = None
        else:
            mask = np.zeros(len(c), dtype=bool)
            ks = [k for k in sentences if 0 <= k < len(c)]
            mask[ks] = True
            self._only = (mask, why)
        self.apply_filter()
        if self._only is not None and ks:
            self.select_sentence(ks[0])

    def _set_corpus(self, k: int = 0) -> None:
        """Show the new corpus, on sentence ``k`` (the first when it has no such sentence)."""
        self._only = None
        c, v = self.corpus, self.v
        v.tree_model.set_corpus(c)
        v.type_filter.blockSignals(True)
        v.type_filter.clear()
        v.type_filter.addItem("Any type", None)
        for lab in self.doc.type_masks:
            v.type_filter.addItem(lab or "(untyped)", lab)
        v.type_filter.blockSignals(False)
        # the filters and the search of the previous corpus would hide this one's sentences
        for w, reset in (
            (v.status_filter, lambda: v.status_filter.setCurrentIndex(0)),
            (v.search, v.search.clear),
        ):
            w.blockSignals(True)
            reset()
            w.blockSignals(False)
        self.apply_filter()
        if len(c.documents) <= 50:
            v.corpus_view.expandToDepth(0)
        self._update_summary()
        self.ctx.cursor.k = -1
        if len(c):
            self.select_sentence(k if 0 <= k < len(c) else 0)

    def _gold_edited(self, ks) -> None:
        v = self.v
        have = {v.type_filter.itemData(i) for i in range(v.type_filter.count())}
        for lab in self.doc.type_masks:
            if lab not in have:
                v.type_filter.addItem(lab or "(untyped)", lab)
        if self.doc.nbest is not None and v.tree_model.has_status():
            flags = self.doc.flags()
            for k in ks:
                v.tree_model.set_sentence_status(k, status_text(flags, k))
        for k in ks:
            v.tree_model.sentence_changed(k)
        if self.ctx.cursor.k in ks:
            self._fill_entity_table(self.corpus.sentences[self.ctx.cursor.k])
        self._summary_stale = True
        if v.tabs.currentWidget() is v.summary:
            self._update_summary()

    def _refresh_marks(self) -> None:
        if self.corpus is None:
            return
        self.v.tree_model.set_status(self.doc.flags() if self.doc.nbest is not None else None)
        if self.v.status_filter.currentData():
            self.apply_filter(keep=True)

    # -- navigation -----------------------------------------------------------------------
    @Slot(int)
    def select_sentence(self, k: int) -> None:
        v = self.v
        idx = v.proxy.mapFromSource(v.tree_model.index_of_sentence(k))
        if idx.isValid():
            v.corpus_view.scrollTo(idx)
            v.corpus_view.setCurrentIndex(idx)
            if self.ctx.cursor.k != k:
                self.ctx.cursor.set(k)
        else:
            self.ctx.cursor.set(k)

    def current_sentence_index(self) -> int:
        v = self.v
        idx = v.corpus_view.currentIndex()
        k = v.tree_model.sentence_index(v.proxy.mapToSource(idx)) if idx.isValid() else -1
        return k if k >= 0 else self.ctx.cursor.k

    def shown_order(self) -> np.ndarray:
        """The sentences the browser shows, in the order it shows them: its own order (most
        uncertain first) or corpus order, without those the filters hide."""
        order = self.v.tree_model.order()
        if order is None:
            order = np.arange(len(self.corpus), dtype=np.int64)
        return order[self._visible_mask()[order]] if self.v.proxy.active else order

    def _step_in(self, shown: np.ndarray, k: int, delta: int) -> int | None:
        """The sentence one step (``delta`` ±1) from ``k`` along ``shown``, a part of the browser's
        order; when ``shown`` lacks ``k`` (hidden by a filter), the step starts from where ``k``
        stands in the browser's order."""
        pos = np.flatnonzero(shown == k)
        if len(pos):
            j = int(pos[0]) + delta
        else:
            full = self.v.tree_model.order()
            if k < 0:  # no sentence yet: from the start
                before = 0
            elif full is None:  # corpus order: shown is sorted
                before = int(np.searchsorted(shown, k))
            else:
                rank = np.empty(len(full), dtype=np.int64)
                rank[full] = np.arange(len(full))
                before = int(np.count_nonzero(rank[shown] < rank[k]))
            j = before if delta > 0 else before - 1
        return int(shown[j]) if 0 <= j < len(shown) else None

    def step_sentence(self, delta: int) -> None:
        if not self.corpus or not len(self.corpus):
            return
        k = self.current_sentence_index()
        if k < 0:
            self.select_sentence(0)
            return
        nxt = self._step_in(self.shown_order(), k, delta)
        if nxt is not None:
            self.select_sentence(nxt)
        elif self.v.proxy.active or self.v.tree_model.order() is not None:
            self.ctx.status("No more sentences match the filters", 3000)

    def step_matching(self, flag: str, delta: int) -> None:
        """The next (``delta`` 1) or previous (-1) sentence with ``flag`` ("error", "changed")
        in the browser's order: F8 follows the most-uncertain-first order when the browser shows it."""
        if not self.corpus or not len(self.corpus):
            return
        mask = self.doc.flags().get(flag)
        if mask is None or not mask.any():
            self.ctx.status("No such sentence (is an N-best list / reranker loaded?)", 4000)
            return
        shown = self.shown_order()
        target = self._step_in(shown[mask[shown]], self.current_sentence_index(), delta)
        if target is not None:
            self.select_sentence(target)
        else:
            self.ctx.status("No more such sentences", 3000)

    def _visible_mask(self) -> np.ndarray:
        n = len(self.corpus)
        if not self.v.proxy.active:
            return np.ones(n, dtype=bool)
        return np.fromiter((self.v.proxy.accepts(k) for k in range(n)), dtype=bool, count=n)

    @Slot(object, object)
    def _on_current_changed(self, current, _previous) -> None:
        k = self.v.tree_model.sentence_index(self.v.proxy.mapToSource(current))
        if k >= 0:
            self.ctx.cursor.set(k)

    @Slot(int)
    def _show_header(self, k: int) -> None:
        c = self.corpus
        if c is None or not 0 <= k < len(c):
            return
        s = c.sentences[k]
        doc = self.v.tree_model.document_of(k)
        where = c.location(k, doc)
        self.v.sentence_header.setText(
            f"<b>Sentence {k + 1}</b> of {len(c):,} · document "
            f"{c.documents[doc].id} · {len(s)} tokens · {where}"
        )
        self._fill_entity_table(s)

    def _fill_entity_table(self, s) -> None:
        t = self.v.entity_table
        spans = s.spans[:MAX_ENTITY_ROWS]
        more = len(s.spans) - len(spans)
        t.setRowCount(len(spans) + (1 if more else 0))
        if more:  # a sentence of a file without blank lines can hold every entity of the corpus
            t.setSpan(len(spans), 0, 1, t.columnCount())
            t.setItem(
                len(spans),
                0,
                QTableWidgetItem(
                    f"… and {more:,} more entities (the first {len(spans):,} are listed)"
                ),
            )
        else:
            t.clearSpans()
        types = document_types(self.doc)
        for r, sp in enumerate(spans):
            item = QTableWidgetItem(sp.label or "entity")
            item.setForeground(type_color(sp.label, types))
            t.setItem(r, 0, item)
            t.setItem(r, 1, QTableWidgetItem(sp.text(s.words)))
            t.setItem(r, 2, QTableWidgetItem(f"{sp.start}–{sp.end - 1}"))
            t.setItem(r, 3, QTableWidgetItem(str(len(sp))))

    # -- filters --------------------------------------------------------------------------
    @Slot()
    def apply_filter(self, *_args, keep: bool = False) -> None:
        """Filter the browser's sentences as the filters say. ``keep``: the document changed
        (not the filters), so the sentence on display stays listed — the view never moves for
        what the application does (a model's round, a new N-best list); it goes when the
        annotator leaves it or changes a filter."""
        c, v = self.corpus, self.v
        if c is None:
            return
        mask = None
        key = v.status_filter.currentData()
        if key:
            m = self.suspects.open_mask() if key == SUSPECTS else self.doc.flags().get(key)
            mask = m if m is not None else np.zeros(len(c), dtype=bool)
        lab = v.type_filter.currentData()
        masks = self.doc.type_masks
        if lab is not None and lab in masks:
            mask = masks[lab] if mask is None else (mask & masks[lab])
        unsure = self._uncertain_mask()
        if unsure is not None:
            mask = unsure if mask is None else (mask & unsure)
        only = self._only
        if only is not None and len(only[0]) == len(c):
            mask = only[0] if mask is None else (mask & only[0])
        k = self.ctx.cursor.k
        if keep and mask is not None and 0 <= k < len(c) and not mask[k]:
            mask = mask.copy()
            mask[k] = True
        v.proxy.set_filter(v.search.text(), mask)
        if v.proxy.active:
            n = int(self._visible_mask().sum())
            why = (
                f" ({html.escape(only[1])}) · <a href='all'>show all</a>"
                if only is not None
                else ""
            )
            v.filter_count.setText(f"{n:,} of {len(c):,} sentences shown{why}")
            if n <= 2000:
                v.corpus_view.expandAll()
        else:
            ns, nd = len(c), len(c.documents)
            v.filter_count.setText(
                f"{ns:,} sentence{'s' if ns != 1 else ''} in {nd:,} "
                f"document{'s' if nd != 1 else ''}"
            )

    # -- most uncertain first -------------------------------------------------------------
    def _init_uncertainty(self, window) -> None:
        self.uncertainty = DocumentUncertainty(self.doc)
        self.walk = Walk()  # F7's way through the queue
        self._descending = False  # the column clicked twice: most certain first
        self._last_measure = "mass"
        bar = self.v.uncertainty_bar
        bar.changed.connect(self._on_uncertainty_settings)
        hdr = self.v.corpus_view.header()
        hdr.setSectionsClickable(True)
        hdr.sectionClicked.connect(self._on_header_clicked)
        self.act_uncertain_first = build_action(window, "browser.act_uncertain_first", self)
        self.act_next_uncertain = build_action(window, "browser.act_next_uncertain", self)
        self._refresh_uncertainty()

    def measure(self) -> str | None:
        """The measure the browser is ordered by (None: corpus order)."""
        return self.v.uncertainty_bar.measure()

    def set_uncertain_first(self, on: bool = True, measure: str | None = None) -> None:
        """Order the browser most uncertain first (by ``measure``, else the last one used), or
        back in corpus order."""
        bar = self.v.uncertainty_bar
        if not on:
            bar.set_measure(None)
            return
        m = measure or self._last_measure
        if self.uncertainty.why_unavailable(m):
            m = "mass"
        why = self.uncertainty.why_unavailable(m)
        if why:
            self.ctx.status(why, 5000)
            self._sync_uncertainty_action()
            return
        bar.set_measure(m)

    def _on_uncertainty_settings(self) -> None:
        m = self.measure()
        if m is not None:
            self._last_measure = m
        else:
            self._descending = False
        self._apply_uncertainty()

    @Slot(int)
    def _on_header_clicked(self, section: int) -> None:
        if section == CorpusTreeModel.UNCERTAINTY:
            if self.measure() is None:
                self._descending = False
                self.set_uncertain_first(True)
            else:
                self._descending = not self._descending
                self._apply_uncertainty()
        elif section == 0 and self.measure() is not None:
            self.set_uncertain_first(False)
        else:
            self._sync_sort_indicator()

    def _refresh_uncertainty(self, keep: bool = False) -> None:
        """The attached list or the reranker's scores changed: which measures are available,
        then the column, the order and the filter again (``keep``: see :meth:`apply_filter`)."""
        reasons = {m: self.uncertainty.why_unavailable(m) for m in MEASURES}
        bar = self.v.uncertainty_bar
        bar.set_available(reasons)
        m = bar.measure()
        if m is not None and reasons[m]:
            bar.blockSignals(True)
            bar.set_measure(None if reasons["mass"] else "mass")
            bar.blockSignals(False)
            self.ctx.status(
                f"Ordered by {LABELS['mass'] if bar.measure() else 'the corpus'}: {reasons[m]}",
                6000,
            )
        self.act_next_uncertain.setEnabled(not reasons["mass"] or self.suspects.active)
        self.act_uncertain_first.setEnabled(not reasons["mass"])
        self._apply_uncertainty(keep)

    def _apply_uncertainty(self, keep: bool = False) -> None:
        c, v = self.corpus, self.v
        if c is None:
            return
        m = self.measure()
        shown = m or "mass"
        order: np.ndarray | None = None
        if self._suspects_shown():  # most suspect first
            v.tree_model.set_uncertainty(self.suspects.scores(), "suspect", SUSPECT_TIP)
            order = self.suspects.order()
        else:
            v.tree_model.set_uncertainty(
                self.uncertainty.values(shown),
                "margin" if shown == "margin" else "p(top)",
                TIPS[shown] if shown != "disagreement" else TIPS["mass"],
                self.uncertainty.disagrees() if shown == "disagreement" else None,
            )
            order = self.uncertainty.order(m) if m is not None else None
            ranked = self.uncertainty.ranked(m) if m is not None and self._descending else None
            if order is not None and ranked is not None:  # both, or neither (the same measure)
                order = np.concatenate([ranked[::-1], order[len(ranked) :]])
        k = self.ctx.cursor.k
        was_flat = v.tree_model.flat
        v.tree_model.set_order(order)
        if was_flat and order is None and len(c.documents) <= 50:
            v.corpus_view.expandToDepth(0)
        self._sync_uncertainty_action()
        self.apply_filter(keep=keep)
        if 0 <= k < len(c):
            idx = v.proxy.mapFromSource(v.tree_model.index_of_sentence(k))
            if idx.isValid() and v.corpus_view.currentIndex() != idx:
                v.corpus_view.setCurrentIndex(idx)
                v.corpus_view.scrollTo(idx)

    def _sync_uncertainty_action(self) -> None:
        a = self.act_uncertain_first
        a.blockSignals(True)
        a.setChecked(self.measure() is not None)
        a.blockSignals(False)
        self._sync_sort_indicator()

    def _sync_sort_indicator(self) -> None:
        hdr = self.v.corpus_view.header()
        on = self.measure() is not None
        hdr.setSortIndicatorShown(on)
        if on:
            hdr.setSortIndicator(
                CorpusTreeModel.UNCERTAINTY,
                Qt.SortOrder.DescendingOrder if self._descending else Qt.SortOrder.AscendingOrder,
            )

    def _uncertain_mask(self) -> np.ndarray | None:
        """The sentences the uncertainty filter keeps (None: no such filter)."""
        key, value = self.v.uncertainty_bar.limit_value()
        if key is None or self.corpus is None:
            return None
        n = len(self.corpus)
        mask = np.zeros(n, dtype=bool)
        if key == "below":
            mass = self.uncertainty.values("mass")
            if mass is not None:
                with np.errstate(invalid="ignore"):
                    mask = mass < value
        else:
            ranked = self.uncertainty.ranked(self.measure() or "mass")
            if ranked is not None:
                mask[ranked[: int(value)]] = True
        return mask

    def step_uncertain(self, delta: int = 1) -> None:
        """Go to the next (``delta`` 1) sentence of the review queue — the most-uncertain-first
        order of the browser's measure (top-candidate probability in corpus order) among the
        sentences the filters show — that this walk has not been through
        (:class:`~nerstudio.app.walk.Walk`: a new order after a model's round, or the cursor
        moved, skips nothing), or back (-1) to the one it went through before. With the
        Suspects filter, the queue is the open suspects, most suspect first."""
        what = "uncertain sentences"
        if self._suspects_shown():
            order, what = self.suspects.order(), "open suspects"
            ranked = order[self.suspects.open_mask()[order]]
            if not len(ranked):
                self.ctx.status(self.suspects.why_none(), 5000)
                return
        else:
            ranked = self.uncertainty.ranked(self.measure() or "mass")
        if ranked is None or not len(ranked):
            self.ctx.status(
                self.uncertainty.why_unavailable() or "No sentence has candidates", 5000
            )
            return
        ranked = ranked[self._visible_mask()[ranked]]
        if not len(ranked):
            self.ctx.status(f"No {what} match the filters", 4000)
            return
        k, key = self.current_sentence_index(), self._queue_key()
        target = self.walk.next(ranked, k, key) if delta > 0 else self.walk.back(k, key)
        if target is not None:
            self.select_sentence(target)
        elif delta > 0:
            self.ctx.status(f"No more {what}: every one the filters show was visited", 4000)
        else:
            self.ctx.status("This is the first sentence of the walk (F7)", 4000)

    def _queue_key(self) -> tuple:
        """What F7's queue is: its order and filters (another one starts a new walk)."""
        v, only = self.v, self._only
        return (
            self.measure() or "mass",
            self._descending,
            v.status_filter.currentData(),
            v.type_filter.currentData(),
            v.search.text(),
            v.uncertainty_bar.limit_value(),
            None if only is None else only[1],
        )

    # -- summary --------------------------------------------------------------------------
    @Slot(int)
    def _on_tab_changed(self, _i: int) -> None:
        if self.v.tabs.currentWidget() is self.v.summary and self._summary_stale:
            self._update_summary()

    def _update_summary(self) -> None:
        self._summary_stale = False
        c = self.corpus
        if c is None:
            self.v.summary.setText("")
            return
        ents = Counter(sp.label for s in c.sentences for sp in s.spans)
        rows = "".join(
            f"<tr><td>{lab or '(untyped)'}</td><td align=right>{n:,}</td></tr>"
            for lab, n in sorted(ents.items())
        )
        self.v.summary.setText(
            f"<b>{c.path}</b><br>format {c.format}, scheme {c.scheme.upper()}, {c.encoding}<br><br>"
            f"<table cellspacing=4><tr><td>documents</td><td align=right>{len(c.documents):,}</td></tr>"
            f"<tr><td>sentences</td><td align=right>{len(c):,}</td></tr>"
            f"<tr><td>tokens</td><td align=right>{c.n_tokens:,}</td></tr>"
            f"<tr><td>entities</td><td align=right>{sum(ents.values()):,}</td></tr>{rows}</table>"
        )
