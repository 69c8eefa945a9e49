"""Undo commands for annotation edits: one :class:`QUndoCommand` per edit.

Every edit (label, relabel, clear, resize, split, merge, accept a candidate as gold) replaces the
gold spans of one sentence, so one command class keeps the spans before and after and hands
them to the annotator, which puts them into the corpus and refreshes the views.
"""

from __future__ import annotations

from PySide6.QtGui import QUndoCommand

from ..corpus.model import Span


class SetSpansCommand(QUndoCommand):
    """Replace the gold spans of sentence ``k`` (``old`` → ``new``)."""

    def __init__(self, annotator, k: int, old: list[Span], new: list[Span], text: str):
        super().__init__(text)
        self.annotator = annotator
        self.k = k
        self.old = list(old)
        self.new = list(new)

    def redo(self) -> None:
        self.annotator.apply_spans(self.k, self.new)

    def undo(self) -> None:
        self.annotator.apply_spans(self.k, self.old)
