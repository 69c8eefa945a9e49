"""Annotator agreement: File ▸ Compare annotations… (issue 16).

Two annotation files of the same text are compared by
:func:`nerstudio.agreement.agreement_of_files` (the figures ``nerstudio agreement A B`` prints)
in a view job of the :class:`~nerstudio.gui.job_service.JobService`, with progress (the bytes read) and a Cancel
button, and shown in the agreement panel of the Annotate workspace. When A is the open corpus's
file, A is the corpus as the window holds it (with any unsaved edits, copied for the worker),
clicking a differing sentence also moves the browser there, and a later gold edit marks the
result as out of date. Files that do not hold the same text are refused in one line (the
agreement module's error, naming the first differing line of both), in the panel and the
status bar.
"""

from __future__ import annotations

import os
import weakref

from PySide6.QtCore import QObject, Slot

from ...agreement import FilesAgreement, agreement_of_files
from ...app.document import Change, ChangeKind
from ...app.types import document_types
from ...corpus.model import Corpus, Sentence
from ..dialogs import CORPUS_FILTER
from ..workers import job_of
from . import Context

JOB = "agreement"


class AgreementController(QObject):
    def __init__(self, ctx: Context, views, parent=None):
        super().__init__(parent)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        self.run: FilesAgreement | None = None
        self._corpus: weakref.ref[Corpus] | None = None  # the open corpus when it was A
        self._pending = 0  # increases with each request: a late result of an older one is dropped
        views.when_built("agreement_view", self._wire)  # built on first use
        ctx.jobs.viewProgress.connect(self._on_progress)
        ctx.events.changed.connect(self._on_change)

    @property
    def view(self):
        return self.v.agreement_view

    def _wire(self, view) -> None:
        view.compareRequested.connect(self.compare_dialog)
        view.cancelRequested.connect(self.cancel)
        view.sentenceActivated.connect(self._on_sentence)

    # -- asking ---------------------------------------------------------------------------
    def ask_files(self) -> tuple[str, str] | None:
        """The two files to compare (A defaults to the open corpus's file); None: cancelled.
        Tests replace this method."""
        c = self.doc.corpus
        default = c.path if c is not None and c.path else ""
        start = str(self.ctx.settings.value("files/lastDir", "") or "")
        from ..views.agreement_view import PairDialog  # on first use

        dlg = PairDialog(self.parent(), default, start, CORPUS_FILTER)
        if not dlg.exec():
            return None
        return dlg.paths()

    def compare_dialog(self) -> None:
        """File ▸ Compare annotations…: ask for A and B, then compare them."""
        paths = self.ask_files()
        if paths:
            self.compare(*paths)

    # -- comparing ------------------------------------------------------------------------
    def compare(self, path_a: str, path_b: str) -> bool:
        """Compare ``path_a`` and ``path_b`` in a worker and show the result in the panel."""
        if not path_a or not path_b:
            self._fail("Give two annotation files: A and B")
            return False
        c = self.doc.corpus
        a_sentences = None
        if c is not None and c.path and os.path.realpath(path_a) == os.path.realpath(c.path):
            # the corpus as the window holds it (unsaved edits included), copied for the worker
            a_sentences = [Sentence(s.words, s.spans, line=s.line) for s in c.sentences]
            self._corpus = weakref.ref(c)
            name_a = os.path.basename(path_a) + (
                " (open corpus, with unsaved edits)" if self.doc.is_dirty() else " (open corpus)"
            )
        else:
            self._corpus = None
            name_a = os.path.basename(path_a)
        self._pending += 1
        ticket, gold_rev = self._pending, self.doc.gold_revision
        scheme = document_types(self.doc)

        def done(run: FilesAgreement) -> None:
            if ticket != self._pending:
                return
            self.run = run
            self.view.set_result(run.result, run.details, name_a, os.path.basename(path_b), scheme)
            n = len(run.result.differences)
            o = run.result.spans.overall
            self.ctx.status(
                f"Agreement of {os.path.basename(path_a)} and {os.path.basename(path_b)}: span F "
                f"{o.f1:.2f}, {n:,} sentence{'s' if n != 1 else ''} differ",
                8000,
            )
            if run.a_is_corpus and gold_rev != self.doc.gold_revision:
                self.view.mark_stale("the corpus was edited since: compare again")

        def failed(message: str) -> None:
            if ticket == self._pending:
                self._fail(message)

        self.view.set_busy(f"Comparing {os.path.basename(path_a)} with {os.path.basename(path_b)}…")
        self.v.tabs.setCurrentWidget(self.view)
        job = job_of(agreement_of_files, path_a, path_b, a_sentences)
        self.ctx.jobs.view(JOB, job, done, failed)
        return True

    def _fail(self, message: str) -> None:
        self.run = None
        self.view.show_message(message)
        self.v.tabs.setCurrentWidget(self.view)
        self.ctx.status(message, 15000)

    @Slot()
    def cancel(self) -> None:
        if self.view.busy:
            self._pending += 1
            self.ctx.jobs.cancel_view(JOB)
            self.view.show_message("Comparison cancelled.")
            self.ctx.status("Comparison cancelled", 4000)

    @Slot(str, str, int, int)
    def _on_progress(self, name: str, _message: str, done: int, total: int) -> None:
        if name == JOB:
            self.view.show_progress(done, total)

    # -- following the document -----------------------------------------------------------
    def a_is_open_corpus(self) -> bool:
        """The result shown compared the corpus open now (as A)."""
        return (
            self.run is not None
            and self.run.a_is_corpus
            and self._corpus is not None
            and self._corpus() is self.doc.corpus
        )

    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if self.run is None or not self.run.a_is_corpus:
            return
        if ch.kind is ChangeKind.GOLD and self.a_is_open_corpus():
            self.view.mark_stale("the corpus was edited since: compare again")
        elif ch.kind is ChangeKind.CORPUS:
            self.view.mark_stale("another corpus is open")

    @Slot(int)
    def _on_sentence(self, k: int) -> None:
        corpus = self.doc.corpus
        if self.a_is_open_corpus() and corpus is not None and 0 <= k < len(corpus):
            self.ctx.cursor.go(k)
