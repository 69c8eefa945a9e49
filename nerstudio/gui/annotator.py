"""Annotation state of the window: the undo stack, the dirty flag, saving and crash recovery.

Edits arrive as "new spans for sentence k" (from the sentence view's keys and mouse, or from
"accept candidate as gold") and are pushed as :class:`~nerstudio.gui.commands.SetSpansCommand`.
Spans go straight into the open corpus (and the N-best list's gold, so the next training run
uses them). A few seconds after an edit, the spans of every sentence edited since the last save
go to a recovery file (:mod:`nerstudio.annotation`); saving writes the corpus in its own format
(atomic, byte-identical where nothing changed) and removes the recovery file.
"""

from __future__ import annotations

import os

from PySide6.QtCore import QObject, QStandardPaths, QTimer, Signal, Slot
from PySide6.QtGui import QUndoStack

from ..annotation import (apply_recovery, read_recovery, recovery_is_newer, recovery_path,
                          write_recovery)
from ..corpus.formats import write_corpus
from ..corpus.model import Span
from .commands import SetSpansCommand

AUTOSAVE_MS = 3000


def default_recovery_dir(settings=None) -> str:
    val = settings.value("annotation/recoveryDir") if settings is not None else None
    if val:
        return str(val)
    env = os.environ.get("NERSTUDIO_RECOVERY_DIR")
    if env:
        return env
    base = QStandardPaths.writableLocation(QStandardPaths.AppDataLocation) or os.path.expanduser("~/.nerstudio")
    return os.path.join(base, "recovery")


class Annotator(QObject):
    """Undo stack, dirty state, save and autosave for the window's corpus."""

    changed = Signal(int)  # sentence whose gold spans changed
    recovered = Signal(list)  # sentences whose gold spans came back from a recovery file
    dirtyChanged = Signal(bool)
    autosaved = Signal(str)

    def __init__(self, window, settings=None, autosave_ms: int | None = None):
        super().__init__(window)
        self.window = window
        self.stack = QUndoStack(self)
        self.stack.setObjectName("undoStack")
        self.recovery_dir = default_recovery_dir(settings)
        if autosave_ms is None and settings is not None and settings.value("annotation/autosaveMs"):
            autosave_ms = int(settings.value("annotation/autosaveMs"))
        self.timer = QTimer(self)
        self.timer.setSingleShot(True)
        self.timer.setInterval(AUTOSAVE_MS if autosave_ms is None else int(autosave_ms))
        self.timer.timeout.connect(self.autosave)
        self._touched: set[int] = set()
        self._recovered = False  # edits brought back from a recovery file (not on the stack)
        self.stack.cleanChanged.connect(lambda _c: self.dirtyChanged.emit(self.is_dirty()))

    # -- state ----------------------------------------------------------------------------
    @property
    def corpus(self):
        return self.window.corpus

    def is_dirty(self) -> bool:
        return self._recovered or not self.stack.isClean()

    def recovery_file(self) -> str | None:
        c = self.corpus
        if c is None or not c.path:
            return None
        return recovery_path(c.path, self.recovery_dir)

    def reset(self) -> None:
        """A new corpus: forget the undo history and any pending autosave."""
        self.timer.stop()
        self.stack.clear()
        self.stack.setClean()
        self._touched.clear()
        was = self._recovered
        self._recovered = False
        if was:
            self.dirtyChanged.emit(self.is_dirty())

    # -- edits ----------------------------------------------------------------------------
    def edit(self, k: int, new: list[Span], text: str) -> bool:
        """Push one undoable edit of sentence ``k``'s gold spans (no-op if nothing changes)."""
        c = self.corpus
        if c is None or not 0 <= k < len(c):
            return False
        old = list(c.sentences[k].spans)
        new = sorted(Span(*s) for s in new)
        if new == old:
            return False
        for s in new:
            if not 0 <= s.start < s.end <= len(c.sentences[k]):
                raise ValueError(f"span {tuple(s)} outside sentence {k}")
        self.stack.push(SetSpansCommand(self, k, old, new, text))
        return True

    def apply_spans(self, k: int, spans: list[Span]) -> None:
        """Called by the commands: put ``spans`` into sentence ``k`` and refresh."""
        c = self.corpus
        c.sentences[k].spans = list(spans)
        self.window.session.set_gold(k, spans)
        self._touched.add(k)
        self.timer.start()
        self.changed.emit(k)

    def unsaved(self) -> list[int]:
        """Sentences edited (or recovered) since the corpus was last saved."""
        return sorted(self._touched)

    # -- saving ---------------------------------------------------------------------------
    def save(self, path: str | None = None) -> str:
        """Write the corpus (atomic) to ``path`` or where it came from; clears the dirty flag
        and the recovery file."""
        c = self.corpus
        target = path or c.path
        if not target:
            raise ValueError("the corpus has no file name: choose one")
        write_corpus(c, target)
        if path and os.path.abspath(path) != os.path.abspath(c.path or ""):
            self.discard_recovery()
            c.path = os.path.abspath(path)
        self.timer.stop()
        self.discard_recovery()
        self._touched.clear()
        self._recovered = False
        self.stack.setClean()
        self.dirtyChanged.emit(self.is_dirty())
        return target

    @Slot()
    def autosave(self) -> str | None:
        """Write the recovery file now (the timer calls this a few seconds after an edit)."""
        path = self.recovery_file()
        if path is None or not self._touched:
            return None
        try:
            write_recovery(path, self.corpus, sorted(self._touched))
        except OSError:
            return None
        self.autosaved.emit(path)
        return path

    def discard_recovery(self) -> None:
        path = self.recovery_file()
        if path and os.path.exists(path):
            try:
                os.remove(path)
            except OSError:
                pass

    def pending_recovery(self) -> str | None:
        """A recovery file for the open corpus written after the corpus was saved."""
        path = self.recovery_file()
        if path and os.path.exists(path) and recovery_is_newer(path, self.corpus.path):
            return path
        return None

    def recover(self, path: str) -> list[int]:
        """Apply a recovery file to the open corpus; the corpus is then dirty (save to keep)."""
        rec = read_recovery(path)
        done = apply_recovery(self.corpus, rec)
        ses = self.window.session
        for k in done:
            ses.set_gold(k, self.corpus.sentences[k].spans)
            self._touched.add(k)
        if done:
            self.recovered.emit(list(done))
            self._recovered = True
            self.dirtyChanged.emit(True)
        return done
