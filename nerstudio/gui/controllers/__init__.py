"""The window's behaviour, split by feature: one controller per feature, each a QObject.

Every controller gets the same :class:`Context` — the :class:`~nerstudio.app.document.Document`
(through :class:`DocumentEvents`, its changes as a Qt signal), the
:class:`~nerstudio.gui.job_service.JobService`, the :class:`~nerstudio.gui.dialogs.Dialogs`, the
status bar and the :class:`SentenceCursor` (which sentence is shown) — plus the views it drives.
Controllers never call each other or reach into a view's private members: they change the
document, move the cursor, or answer the views' signals, and react to the document's changes.

``browser`` (corpus tree, filters, navigation, summary) · ``files`` (opening and saving corpora,
lists, models, results; recent files) · ``candidates`` (sentence view, N-best and feature panels,
explanations) · ``annotation`` (edits, undo, save, autosave, recovery) · ``training`` (runs,
sequence taggers, installing results, state display) · ``comparison`` · ``stepper`` ·
``model_features`` (what a reranker has learned, over the whole list) · ``agreement`` (two
annotation files of the same text compared) · ``preannotate`` (a model's entities as the
starting gold, one undoable edit) · ``occurrences`` (label all occurrences of a phrase, one
undoable edit) · ``adjudication`` (annotators' files merged, disagreements walked one by one) ·
``suspects`` (suspect annotations: the ranking, the Suspects tab, accept and dismiss).
An import-linter contract keeps these modules independent of one another.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import QObject, QSettings, Signal

from ...app.document import Change, Document
from ...app.suspects import SuspectQueue
from ..dialogs import Dialogs
from ..job_service import JobService


class DocumentEvents(QObject):
    """The document's :class:`~nerstudio.app.document.Change` events as a Qt signal."""

    changed = Signal(object)

    def __init__(self, document: Document, parent=None):
        super().__init__(parent)
        self.document = document
        document.subscribe(self._relay)

    def _relay(self, ch: Change) -> None:
        self.changed.emit(ch)


class SentenceCursor(QObject):
    """The sentence on display. ``go(k)`` asks for it (the browser selects it in the tree);
    ``moved(k)`` says it is now shown; ``k`` is the current one (-1: none); ``last_ms`` is how
    long the panels took to show the last one."""

    requested = Signal(int)
    moved = Signal(int)
    #: show only these corpus sentences in the browser (a list, or None for all), with a label
    #: saying why ("sentences where BO01 moves the decision")
    showOnly = Signal(object, str)

    def __init__(self, parent=None):
        super().__init__(parent)
        self.k = -1
        self.last_ms = 0.0

    def go(self, k: int) -> None:
        self.requested.emit(int(k))

    def set(self, k: int) -> None:
        t0 = time.perf_counter()
        self.k = int(k)
        self.moved.emit(self.k)
        self.last_ms = (time.perf_counter() - t0) * 1000


@dataclass
class Context:
    """What every controller shares; the window builds one and hands it to each."""

    document: Document
    events: DocumentEvents
    jobs: JobService  # the one background job at a time, and the views' own jobs
    dialogs: Dialogs  # every question to the user goes through it (tests answer it)
    cursor: SentenceCursor
    settings: QSettings
    status: Callable[[str, int], None]  # show a message in the status bar for so many ms
    suspects: SuspectQueue  # the open corpus's suspect annotations (app.suspects)
