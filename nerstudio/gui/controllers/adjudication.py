"""Adjudication: File ▸ Adjudicate annotations… (INCEpTION's curation).

Two or more annotators' files of the same text are read in a view job of the
:class:`~nerstudio.gui.job_service.JobService` (off the main thread) and aligned by
:class:`nerstudio.adjudication.Adjudication`, which refuses files with different tokens in one
line naming the first differing line (shown in the status bar and a message). The disagreements
are then walked in the :class:`~nerstudio.gui.views.adjudication_view.AdjudicationView`, a window
of its own: its keys take an annotator's version, edit or skip, and this controller records each
decision. Save writes the merged entities into the first file's corpus (its layout and columns
kept) in the format the chosen name's extension gives — any format nerstudio writes — and the
report (agreement before, the decisions) as JSON beside it, in a view job over a snapshot of the
decisions (the full report of a 200,000-token corpus takes seconds: ``bench/adjudication.py``).
The open corpus is not touched.
Closing the adjudication window (or the main window, or opening other files) with decisions not
saved asks first: save, discard or cancel.
"""

from __future__ import annotations

import os
from string import ascii_uppercase
from typing import TYPE_CHECKING

from PySide6.QtCore import QObject
from PySide6.QtWidgets import QFileDialog, QMessageBox

from ...adjudication import read_and_align, report_name, write_merged
from ...app.label_keys import label_orders
from ...app.types import TypeScheme
from ...errors import NerstudioError
from ..dialogs import CORPUS_FILTER
from ..workers import job_of
from . import Context

if TYPE_CHECKING:
    from ...adjudication import Adjudication
    from ...corpus.model import Corpus
    from ..views.adjudication_view import AdjudicationView

JOB = "adjudication"
JOB_SAVE = "adjudication-save"


class AdjudicationController(QObject):
    def __init__(self, ctx: Context, parent_widget):
        super().__init__(parent_widget)
        self.ctx = ctx
        self._window = parent_widget
        self.adj: Adjudication | None = None
        self.base: Corpus | None = None  # the first file's corpus: the merged file's layout
        self.view: AdjudicationView | None = None  # once a merge is opened
        self.saved: str | None = None
        self.unsaved = False  # decisions taken since the merged file was last saved
        self.saving = False
        ctx.jobs.viewProgress.connect(self._on_progress)

    def _on_progress(self, name: str, message: str, done: int, total: int) -> None:
        if name in (JOB, JOB_SAVE):
            self.ctx.status(f"Adjudication: {message} ({done} of {total})", 5000)

    # -- opening --------------------------------------------------------------------------
    def ask_files(self) -> list[str] | None:
        """Two or more files (tests replace this method)."""
        start = str(self.ctx.settings.value("files/lastDir", "") or "")
        paths, _ = QFileDialog.getOpenFileNames(
            self._window,
            "Adjudicate: two or more annotations of the same text",
            start,
            CORPUS_FILTER,
        )
        return paths or None

    def open_dialog(self) -> None:
        paths = self.ask_files()
        if paths:
            self.open(paths)

    def open(self, paths: list[str]) -> bool:
        """Read and align ``paths`` in a worker, then show the walk."""
        if not self.confirm_close():
            return False
        if len(paths) < 2:
            self.ctx.dialogs.warning(
                "Adjudicate annotations", "Choose two or more annotation files of the same text"
            )
            return False
        if len(paths) > len(ascii_uppercase):
            self.ctx.dialogs.warning(
                "Adjudicate annotations", f"At most {len(ascii_uppercase)} files"
            )
            return False

        def done(result: tuple[Adjudication, Corpus]) -> None:
            adj, self.base = result
            self.adj = adj
            labels = {s.label for c in adj.sentences for sent in c for s in sent.spans}
            # the same fixed keys as the main window
            scheme = TypeScheme.of(label_orders().order(labels))
            if self.view is not None:
                self.view.confirm_close = None  # asked before the files were read
                self.view.close()
            from ..views.adjudication_view import AdjudicationView  # on first use

            self.view = v = AdjudicationView(adj, scheme, self._window)
            v.takeRequested.connect(self._take)
            v.skipRequested.connect(self._skip)
            v.editDone.connect(self._edit)
            v.saveRequested.connect(self.save_dialog)
            v.confirm_close = self.confirm_close
            self.unsaved = False
            v.show()
            v.raise_()
            v.sentence.setFocus()
            n = len(adj.disagreements)
            self.ctx.status(
                f"Adjudicating {len(paths)} files: {n:,} disagreement{'s' if n != 1 else ''} to walk "
                "(A/B… take, E edit, S skip)",
                10000,
            )

        def failed(message: str) -> None:
            self.ctx.status(message, 15000)
            self.ctx.dialogs.critical("Cannot adjudicate these files", message)

        self.ctx.status(f"Reading {len(paths)} annotation files…", 5000)
        self.ctx.jobs.view(JOB, job_of(read_and_align, list(paths)), done, failed)
        return True

    # -- deciding -------------------------------------------------------------------------
    # (the view's signals: there is an adjudication whenever there is a view)
    def _take(self, i: int, who: int) -> None:
        if self.adj is not None:
            self.adj.take(i, who)
            self._decided()

    def _skip(self, i: int) -> None:
        if self.adj is not None:
            self.adj.skip(i)
            self._decided()

    def _edit(self, k: int, spans: list) -> None:
        if self.adj is not None:
            self.adj.edit(k, spans)
            self._decided()

    def _decided(self) -> None:
        self.unsaved = True
        if self.view is not None:  # it is: its own signals bring us here
            self.view.advance()

    def confirm_close(self) -> bool:
        """True when the adjudication window may close: nothing decided since the last save, or
        the user saved or discarded the decisions."""
        if not self.unsaved or self.view is None or not self.view.isVisible():
            return True
        choice = self.ask_unsaved()
        if choice == "save":
            return self.save_dialog(wait=True) is not None
        return choice == "discard"

    def ask_unsaved(self) -> str:
        """'save', 'discard' or 'cancel' for decisions not saved (tests replace this method)."""
        box = QMessageBox(
            QMessageBox.Icon.Question,
            "Adjudication not saved",
            "Decisions were taken since the merged file was last saved.",
            QMessageBox.StandardButton.Save
            | QMessageBox.StandardButton.Discard
            | QMessageBox.StandardButton.Cancel,
            self.view or self._window,
        )
        box.setInformativeText("Save the merged file before closing?")
        box.setDefaultButton(QMessageBox.StandardButton.Save)
        answers = {
            QMessageBox.StandardButton.Save: "save",
            QMessageBox.StandardButton.Discard: "discard",
        }
        return answers.get(QMessageBox.StandardButton(box.exec()), "cancel")

    # -- saving ---------------------------------------------------------------------------
    def save_dialog(self, wait: bool = False) -> str | None:
        if self.adj is None:
            return None
        first = self.adj.paths[0] or ""
        default = os.path.join(
            os.path.dirname(first), "merged" + (os.path.splitext(first)[1] or ".jsonl")
        )
        path = self.ctx.dialogs.ask_save("Save the merged annotations", default, CORPUS_FILTER)
        return self.save(path, wait) if path else None

    def save(self, path: str, wait: bool = False) -> str | None:
        """Write the merged corpus to ``path`` (its extension's format) and the report to
        ``path``.report.json, in a worker (``wait``: here, at once, as when the window closes);
        returns the report's path, None when nothing was started (said why)."""
        from ...corpus.detect import format_for_output
        from ...corpus.foreign import writable

        if self.saving:
            self.ctx.status("The merged file is being saved: wait a moment", 5000)
            return None
        adj, base = self.adj, self.base
        if adj is None or base is None:
            return None
        fmt = format_for_output(path, base.format) or base.format
        if not writable(fmt):
            self.ctx.dialogs.critical(
                "Cannot save",
                f"{path}: nerstudio does not write {fmt}; choose a name ending "
                "in .jsonl, .conll, .tsv …",
            )
            return None
        for s, spans in zip(base.sentences, adj.merged()):
            s.spans = spans
        report_path = report_name(path)
        job = job_of(write_merged, adj.snapshot(), base, path, fmt, report_path)
        decided = len(adj.order), dict(adj.decisions)

        def done(rep) -> None:
            self.saving = False
            self.saved = path
            if self.adj is adj and (len(adj.order), adj.decisions) == decided:
                self.unsaved = False
            self.ctx.status(
                f"Saved {path} ({fmt}): {rep.entities} entities, {rep.counts['undecided']} undecided; "
                f"the report is {os.path.basename(report_path)}",
                10000,
            )
            if self.view is not None:
                self.view.where.setText(
                    self.view.where.text() + f"  —  saved {os.path.basename(path)}"
                )

        def failed(message: str, *_tb) -> None:
            self.saving = False
            self.ctx.dialogs.critical("Cannot save the merged annotations", message)

        self.saving = True
        if wait:
            try:
                done(job(_Here()))
            except NerstudioError as exc:
                failed(str(exc))
                return None
        else:
            self.ctx.status(f"Saving {path}…", 5000)
            self.ctx.jobs.view(JOB_SAVE, job, done, failed)
        return report_path


class _Here:
    """The job context of a save done at once (no progress to show, nothing to cancel)."""

    def progress(self, *_args) -> None:
        pass

    def check(self) -> None:
        pass
