"""The comparison tab: the tagger's top candidates against the reranker's picks and the
oracle, overall and per type, with the sentences the reranker fixed, broke, improved or
worsened.

Computed as a view job from a snapshot of the attached list (the gold of that moment) when the
tab is shown and the document changed since the shown result; a gold edit marks a shown result
as out of date ("Recompute"). Clicking a sentence moves the cursor there.
"""

from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import QObject, Slot

from ...app.document import Change
from . import Context


class ComparisonController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self.view = views.comparison_view
        self._revision = -1  # the document revision of the result shown (or being computed)
        self.view.sentenceActivated.connect(self._on_sentence)
        self.view.refreshRequested.connect(lambda: self.refresh(force=True))
        views.tabs.currentChanged.connect(lambda _i: self.refresh())
        ctx.events.changed.connect(self._on_change)
        ctx.jobs.viewProgress.connect(self._on_progress)

    @Slot(str, str, int, int)
    def _on_progress(self, name: str, _message: str, done: int, total: int) -> None:
        if name == "comparison":
            self.view.show_progress(done, total)

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind == "gold":
            if self.view.result is not None and self._revision >= 0:
                self.view.mark_stale("gold edited since: Recompute")
            return
        if ch.kind == "corpus":
            self._revision = -1
            self.ctx.jobs.cancel_view("comparison")
            self.view.show_message("Load an N-best list with gold (and a reranker) to compare.")
        if ch.kind in ("nbest", "scores"):
            self.refresh()

    def refresh(self, force: bool = False) -> bool:
        """Compare the tagger's top candidates with the reranker's picks over the attached
        N-best list (when the tab is shown and the document changed, or on request)."""
        doc = self.doc
        if not force and (self._revision == doc.revision or self.v.tabs.currentWidget() is not self.view):
            return False
        nb = doc.nbest
        self._revision = doc.revision
        if nb is None or nb.gold is None:
            self.ctx.jobs.cancel_view("comparison")
            self.view.show_message("No N-best list with gold entities: open one (Ctrl+Shift+O), or open dev.conll "
                                   "to compare on the development set.")
            return False
        from ...experiments.compare import compare_outputs
        has = doc.scored is not None
        choice = doc.scored.choice if has else np.zeros(len(nb), dtype=np.int64)
        snap = doc.nbest_snapshot()  # the gold as it is now, while the worker compares
        name = os.path.basename(doc.nbest_path) if doc.nbest_path else "N-best list of this session"
        rev, gold_rev = doc.revision, doc.gold_revision

        def job(ctx):
            def prog(d, n):
                ctx.progress("comparing", d, n)
            return compare_outputs(snap, choice, should_cancel=ctx.should_cancel, progress=prog)

        def done(res):
            if rev == self._revision:
                self.view.set_result(res, snap.words, has, name)
                if gold_rev != doc.gold_revision:  # the gold changed while it was computed
                    self.view.mark_stale("gold edited since: Recompute")

        def failed(message):
            if rev == self._revision:
                self.view.show_message(f"The comparison failed: {message}")
        self.view.set_busy(f"Comparing the tagger's top candidates with the reranked output over {len(nb):,} "
                           "sentences…")
        self.ctx.jobs.view("comparison", job, done, failed)
        return True

    @Slot(int)
    def _on_sentence(self, i: int) -> None:
        ix = self.doc.nbest_index
        if ix is None:
            return
        hits = np.flatnonzero(ix.row_of == i)
        if len(hits):
            self.ctx.cursor.go(int(hits[0]))
