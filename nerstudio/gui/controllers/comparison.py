"""The comparison tab: the tagger's top candidates against the reranker's picks and the
oracle, overall and per type, with the sentences the reranker fixed, broke, improved or
worsened.

Computed as a view job from a snapshot of the attached list (the gold of that moment) when the
tab is shown and the document changed since the shown result; a gold edit marks a shown result
as out of date ("Recompute"). Clicking a sentence moves the cursor there (a dev sentence: to the
open corpus's sentence with the same words, else the status bar says where it is). When the list is the
one the reranker was trained on, a banner says the figures are optimistic and the dev list
(scored with the reranker in the job) can be compared instead.
"""

from __future__ import annotations

import os

import numpy as np
from PySide6.QtCore import QObject, Signal, Slot

from ...app.attachments import score_nbest
from ...app.document import Change, ChangeKind
from ...runs.training import trained_on_list
from . import Context

_OPTIMISTIC = {
    "same": "Optimistic: these are the sentences the reranker was trained on, so its score here flatters it. "
    "Compare on the dev list for an honest figure.",
    "count": "Probably optimistic: the reranker was trained on as many sentences as this list has — most "
    "likely these ones. Compare on the dev list for an honest figure.",
}


class ComparisonController(QObject):
    devListWanted = Signal()  # the user asked for the dev list and none is loaded: open one

    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self._revision = -1  # the document revision of the result shown (or being computed)
        self.on_dev = False  # comparing on the dev list instead of the attached one
        self._want_dev = False  # waiting for a dev list the user is opening
        views.when_built("comparison_view", self._wire)  # built on first use
        views.tabs.currentChanged.connect(lambda _i: self.refresh())
        ctx.events.changed.connect(self._on_change)
        ctx.jobs.viewProgress.connect(self._on_progress)

    @property
    def view(self):
        return self.v.comparison_view

    def _wire(self, view) -> None:
        view.sentenceActivated.connect(self._on_sentence)
        view.refreshRequested.connect(lambda: self.refresh(force=True))
        view.devRequested.connect(self.use_dev)
        view.sentencesWanted.connect(self._show_only)

    @Slot(str, str, int, int)
    def _on_progress(self, name: str, _message: str, done: int, total: int) -> None:
        if name == "comparison":
            self.view.show_progress(done, total)

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        # a view not built yet shows nothing to update: it is built, with its opening message,
        # when its tab first comes forward (building it here would cost every start the view)
        built = self.v.built("comparison_view")
        if ch.kind is ChangeKind.GOLD:
            if (
                built is not None
                and built.result is not None
                and self._revision >= 0
                and not self.on_dev
            ):
                built.mark_stale("gold edited since: Recompute")
            return
        if ch.kind is ChangeKind.CORPUS:
            self._revision = -1
            self.on_dev = self._want_dev = False
            self.ctx.jobs.cancel_view("comparison")
            if built is not None:
                built.show_message(built.OPENING)
        if ch.kind is ChangeKind.DEV and self._want_dev and self.doc.dev_nbest is not None:
            self._want_dev = False
            self.on_dev = True
            self.refresh(force=True)
        elif ch.kind in (ChangeKind.NBEST, ChangeKind.SCORES) or (
            ch.kind in (ChangeKind.DEV, ChangeKind.MODEL) and self.on_dev
        ):
            self.refresh()

    @Slot(bool)
    def use_dev(self, on: bool) -> None:
        """Compare on the dev list (opening one first when none is loaded), or back on the
        attached list."""
        if on and self.doc.dev_nbest is None:
            self._want_dev = True
            self.view.set_source(False, False)  # checked once a dev list is there
            self.devListWanted.emit()
            return
        self.on_dev = on
        self.refresh(force=True)

    def refresh(self, force: bool = False) -> bool:
        """Compare the tagger's top candidates with the reranker's picks over the attached
        N-best list, or the dev list (when the tab is shown and the document changed, or on
        request). Scoring the list the reranker was trained on is flagged as optimistic."""
        doc = self.doc
        if not force and (self._revision == doc.revision or not self.v.shows("comparison_view")):
            return False
        self._revision = doc.revision
        if self.on_dev and doc.dev_nbest is None:
            self.on_dev = False
        self.view.set_source(self.on_dev, doc.dev_nbest is not None)
        nb = doc.dev_nbest if self.on_dev else doc.nbest
        if nb is None or nb.gold is None:
            self.ctx.jobs.cancel_view("comparison")
            self.view.show_message(
                "No N-best list with gold entities: open one (Ctrl+Shift+O), or open dev.conll "
                "to compare on the development set."
            )
            return False
        from ...experiments.compare import compare_outputs

        model = doc.model
        if self.on_dev:
            snap, scored_choice = nb, None  # scored in the job below
            name = (
                os.path.basename(doc.dev_nbest_path)
                if doc.dev_nbest_path
                else "dev list of this session"
            )
            has = model is not None
        else:
            has = doc.scored is not None
            scored_choice = (
                doc.scored.choice if doc.scored is not None else np.zeros(len(nb), dtype=np.int64)
            )
            snap = doc.nbest_snapshot()  # the gold as it is now, while the worker compares
            name = (
                os.path.basename(doc.nbest_path)
                if doc.nbest_path
                else "N-best list of this session"
            )
        rev, gold_rev, on_dev = doc.revision, doc.gold_revision, self.on_dev
        # on the dev list the open corpus is the training corpus: its entities are the "seen" ones
        from ...experiments.breakdown import training_strings

        seen = training_strings(doc.corpus.sentences) if on_dev and doc.corpus is not None else None

        def job(ctx):
            def prog(d, n):
                ctx.progress("comparing", d, n)

            choice = scored_choice
            if choice is None:
                if model is None:
                    choice = np.zeros(len(snap), dtype=np.int64)
                else:
                    ctx.progress("scoring the dev list with the reranker…")
                    choice = score_nbest(model, snap, ctx.should_cancel).choice
            trained = None if on_dev or not has else trained_on_list(model, snap)
            res = compare_outputs(snap, choice, should_cancel=ctx.should_cancel, progress=prog)
            return res, trained, error_analysis(snap, choice, seen)

        def done(out):
            res, trained, errors = out
            if rev == self._revision:
                self.view.set_result(res, snap.words, has, name)
                self.view.set_errors(*errors)
                self.view.set_optimistic(_OPTIMISTIC.get(trained, ""))
                if (
                    gold_rev != doc.gold_revision and not on_dev
                ):  # the gold changed while it was computed
                    self.view.mark_stale("gold edited since: Recompute")

        def failed(message):
            if rev == self._revision:
                self.view.show_message(f"The comparison failed: {message}")

        what = "the dev list" if on_dev else f"{len(nb):,} sentences"
        self.view.set_busy(
            f"Comparing the tagger's top candidates with the reranked output over {what}…"
        )
        self.ctx.jobs.view("comparison", job, done, failed)
        return True

    def _show_only(self, rows, why: str) -> None:
        """An error-analysis cell: the browser shows only those sentences (of the open corpus)."""
        doc = self.doc
        if self.on_dev:
            nb, c = doc.dev_nbest, doc.corpus
            if nb is None or c is None:
                return
            where = {tuple(s.words): k for k, s in enumerate(c.sentences)}
            ks = [where[tuple(nb.words[i])] for i in rows if tuple(nb.words[i]) in where]
            if not ks:
                self.ctx.status(
                    f"{why}: these are dev sentences, not in the open corpus — open the dev corpus "
                    "to browse them",
                    10000,
                )
                return
        else:
            ix = doc.nbest_index
            if ix is None:
                return
            inv = {int(r): k for k, r in enumerate(ix.row_of) if r >= 0}
            ks = sorted(inv[i] for i in rows if i in inv)
        self.ctx.cursor.showOnly.emit(ks, why)

    @Slot(int)
    def _on_sentence(self, i: int) -> None:
        """Show list sentence ``i``: the corpus sentence it is (on the dev list: the one with the
        same words, when the open corpus has it; else the status bar says where it is)."""
        doc = self.doc
        if self.on_dev:
            nb, c = doc.dev_nbest, doc.corpus
            if nb is None or c is None or not 0 <= i < len(nb):
                return
            words = tuple(nb.words[i])
            k = next((k for k, s in enumerate(c.sentences) if tuple(s.words) == words), -1)
            if k >= 0:
                self.ctx.cursor.go(k)
            else:
                name = (
                    os.path.basename(doc.dev_nbest_path) if doc.dev_nbest_path else "the dev list"
                )
                self.ctx.status(
                    f"Dev sentence {i + 1} ({' '.join(words[:8])}…) is in {name}, not in the open "
                    "corpus: open the dev corpus (File ▸ Open) to inspect it",
                    10000,
                )
            return
        ix = doc.nbest_index
        if ix is None:
            return
        hits = np.flatnonzero(ix.row_of == i)
        if len(hits):
            self.ctx.cursor.go(int(hits[0]))


def error_analysis(nb, choice, seen) -> tuple[dict, dict]:
    from ...experiments.breakdown import breakdown
    from ...experiments.error_analysis import analysis, error_sentences

    """The baseline (tagger's top) and reranked output of ``nb`` analysed as two systems."""
    gold = list(nb.gold)
    systems, cells = {}, {}
    for name, pred in (("Baseline", nb.top()), ("Reranked", nb.top(choice))):
        b = (
            breakdown(nb.words, gold, pred, seen)
            if seen is not None
            else analysis(nb.words, gold, pred)
        )
        systems[name] = b
        cells[name] = error_sentences(nb.words, gold, pred, seen)
    return systems, cells
