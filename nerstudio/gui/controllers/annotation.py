"""Annotation: gold edits, undo and redo, accepting a candidate, saving, autosave and recovery.

Edits from the sentence view (keys and mouse) and "accept candidate as gold" become
:meth:`Document.set_spans <nerstudio.app.document.Document.set_spans>` calls — one undoable step
each, in the document's own history, which the Undo / Redo actions drive. An
:class:`~nerstudio.app.autosave.Autosaver` keeps the recovery file in step (a single-shot timer
armed at its deadline: a few seconds after the last edit, at most ``max delay`` after the first
one not yet written), and removes it whenever the document is clean. After a crash, the edits
that differ from the file are offered back as one undoable step, and the window goes to the
first recovered sentence.
"""

from __future__ import annotations

import os
import time

from PySide6.QtCore import QObject, QTimer, Signal, Slot
from PySide6.QtGui import QAction, QKeySequence

from ...app.autosave import DEBOUNCE_S, MAX_DELAY_S, AutosavePolicy, Autosaver
from ...app.document import Change
from ...corpus.formats import write_corpus
from ...errors import NerstudioError
from ..dialogs import CORPUS_FILTER
from . import Context


def default_recovery_dir(settings=None) -> str:
    val = settings.value("annotation/recoveryDir") if settings is not None else None
    if val:
        return str(val)
    env = os.environ.get("NERSTUDIO_RECOVERY_DIR")
    if env:
        return env
    from ..paths import recovery_dir
    return recovery_dir()


def _seconds(settings, key: str, default: float) -> float:
    val = settings.value(key) if settings is not None else None
    return int(val) / 1000 if val not in (None, "") else default


class AnnotationController(QObject):
    dirtyChanged = Signal(bool)
    autosaved = Signal(str)  # the recovery file just written

    def __init__(self, ctx: Context, views, parent_widget):
        super().__init__(parent_widget)
        self.ctx, self.doc, self.v = ctx, ctx.document, views
        policy = AutosavePolicy(_seconds(ctx.settings, "annotation/autosaveMs", DEBOUNCE_S),
                                _seconds(ctx.settings, "annotation/autosaveMaxMs", MAX_DELAY_S))
        self.autosaver = Autosaver(self.doc, default_recovery_dir(ctx.settings), policy)
        self.autosaver.scheduled = self._arm
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.timeout.connect(self._on_timer)
        views.sentence_view.editRequested.connect(self._on_edit_requested)
        views.sentence_view.editRefused.connect(lambda msg: ctx.status(msg, 6000))
        ctx.events.changed.connect(self._on_change)
        w = parent_widget
        self.act_undo = _action(w, "&Undo", self.undo, QKeySequence.Undo)
        self.act_redo = _action(w, "&Redo", self.redo, QKeySequence.Redo)
        self.act_accept = _action(w, "&Accept candidate as gold", lambda: self.accept_candidate(), "Ctrl+Return",
                                  "Make the selected candidate's entities the gold of this sentence")
        self.act_save = _action(w, "&Save corpus", lambda: self.save_corpus(), QKeySequence.Save,
                                "Save the gold annotations to the corpus file (its own format)")
        self.act_save_as = _action(w, "Save corpus &as…", self.save_corpus_as_dialog, None,
                                   "Save the gold annotations to another file")
        self._update_actions()

    # -- the document ---------------------------------------------------------------------
    @Slot(object)
    def _on_change(self, ch: Change) -> None:
        if ch.kind not in ("gold", "saved", "corpus"):
            return
        if ch.kind == "gold" and self.ctx.cursor.k not in ch.sentences and ch.sentences:
            self.ctx.cursor.go(ch.sentences[0])  # undo / redo of an edit elsewhere goes back there
        self._update_actions()
        self.dirtyChanged.emit(self.doc.is_dirty())

    def _update_actions(self) -> None:
        h = self.doc.history
        self.act_undo.setEnabled(h.can_undo())
        self.act_redo.setEnabled(h.can_redo())
        self.act_undo.setText(f"&Undo {h.undo_text()}".strip())
        self.act_redo.setText(f"&Redo {h.redo_text()}".strip())

    # -- edits ----------------------------------------------------------------------------
    @Slot(list, str)
    def _on_edit_requested(self, spans: list, text: str) -> None:
        if self.ctx.cursor.k >= 0:
            self.doc.set_spans(self.ctx.cursor.k, spans, text)

    def undo(self) -> None:
        self.doc.undo()

    def redo(self) -> None:
        self.doc.redo()

    def accept_candidate(self, j: int | None = None) -> bool:
        """Make candidate ``j`` (default: the selected one) the gold of the current sentence."""
        k = self.ctx.cursor.k
        i = self.doc.nbest_row(k)
        if k < 0 or i < 0:
            self.ctx.status("No candidates for this sentence", 4000)
            return False
        if j is None:
            sel = self.v.nbest_panel.selected()
            j = sel[0] if sel else None
        if j is None:
            self.ctx.status("Select a candidate in the N-best table first", 4000)
            return False
        if self.doc.set_spans(k, self.doc.nbest.spans(i, j), f"accept candidate {j + 1} as gold") is None:
            self.ctx.status(f"Candidate {j + 1} already equals the gold", 4000)
            return False
        return True

    # -- saving ---------------------------------------------------------------------------
    def save_corpus(self, path: str | None = None) -> bool:
        c = self.doc.corpus
        if c is None:
            return False
        if not path and not c.path:
            return self.save_corpus_as_dialog()
        target = path or c.path
        try:
            write_corpus(c, target)
        except (NerstudioError, OSError, ValueError) as exc:
            self.ctx.dialogs.critical("Cannot save corpus", str(exc))
            return False
        moved = bool(path) and os.path.abspath(path) != os.path.abspath(c.path or "")
        if moved:
            self.autosaver.discard()  # the old file's recovery file
        self.doc.mark_saved(os.path.abspath(path) if moved else None)
        self.ctx.status(f"Saved {target}", 5000)
        return True

    def save_corpus_as_dialog(self) -> bool:
        if self.doc.corpus is None:
            return False
        path = self.ctx.dialogs.ask_save("Save corpus as", self.doc.corpus.path or "", CORPUS_FILTER)
        return bool(path) and self.save_corpus(path)

    def confirm_unsaved(self) -> bool:
        """True when the corpus may be closed (nothing unsaved, saved, or edits discarded)."""
        if not self.doc.is_dirty():
            return True
        choice = self.ctx.dialogs.ask_unsaved()
        if choice == "save":
            return self.save_corpus()
        if choice == "discard":
            self.autosaver.discard()
            return True
        return False

    # -- autosave and recovery ------------------------------------------------------------
    def _arm(self, deadline: float | None) -> None:
        if deadline is None:
            self.timer.stop()
        else:
            self.timer.start(max(0, int((deadline - time.monotonic()) * 1000)))

    @Slot()
    def _on_timer(self) -> None:
        path = self.autosaver.poll()
        if path:
            self.autosaved.emit(path)
        else:
            self._arm(self.autosaver.deadline())

    def autosave_now(self) -> str | None:
        """Write the recovery file now (what the timer does when it is due)."""
        path = self.autosaver.write()
        self._arm(None)
        if path:
            self.autosaved.emit(path)
        return path

    def recovery_file(self) -> str | None:
        return self.autosaver.recovery_file()

    def offer_recovery(self) -> list[int]:
        """After a corpus opens: offer back the edits of a recovery file that change it."""
        pending = self.autosaver.pending()
        if pending is None:
            return []
        path, edits = pending
        if edits is None:
            self.ctx.dialogs.warning("Cannot recover", f"{path}: not a readable recovery file")
            return []
        if not self.ctx.dialogs.ask_recover(path):
            self.autosaver.discard()
            return []
        done = self.doc.set_many(edits, f"recover {len(edits)} sentence(s)")
        if done:
            self.ctx.cursor.go(done[0])
            shown = ", ".join(str(k + 1) for k in done[:12]) + (", …" if len(done) > 12 else "")
            self.ctx.status(f"Recovered edits of {len(done)} sentence(s) ({shown}); Ctrl+Z undoes them, save to "
                            "keep them", 15000)
        return done


def _action(parent, text, slot, shortcut=None, tip="") -> QAction:
    a = QAction(text, parent)
    if shortcut is not None:
        a.setShortcut(QKeySequence(shortcut))
    if tip:
        a.setStatusTip(tip)
        a.setToolTip(f"{tip} ({a.shortcut().toString()})" if shortcut is not None else tip)
    a.triggered.connect(slot)
    return a
