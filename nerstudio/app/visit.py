"""The sentence the annotator is on, and what leaving it means for its review state.

A sentence the annotator corrects becomes *reviewed* when they leave it (go to another
sentence), not at their first key: until then it is still being corrected, so the model in the
annotation loop does not learn from it (:mod:`~nerstudio.app.loop` learns from reviewed
sentences) and a round never changes it (:func:`~nerstudio.app.loop.apply` keeps the sentence
being edited). Marking it (``Document.set_reviewed``) makes it reviewed at once.

:class:`Visit` follows the cursor (:meth:`Visit.enter` on every move): it remembers what the
sentence held when the annotator came to it, and on leaving, if they changed it, calls
``Document.review_on_leave``. It does so only while review is in use
(``active``: by default, some sentence is reviewed already — the window adds "the loop is on"),
so annotating without review or the loop creates no review state and no review file. A move
that follows an undo or redo elsewhere (the view going to the sentence the undo changed) reviews
nothing: that would drop the redo steps. No Qt here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..corpus.model import Span
from .document import Change, Document
from .events import ChangeKind, Origin


def reviewing(document: Document) -> bool:
    """Whether review is in use on ``document``: some sentence is reviewed."""
    return bool(document.reviewed.any())


class Visit:
    """See the module docstring. ``active()``: whether leaving an edited sentence reviews it."""

    def __init__(self, document: Document, active: Callable[[], bool] | None = None) -> None:
        self.document = document
        self.active = active if active is not None else (lambda: reviewing(document))
        self.k = -1  # the sentence the annotator is on (-1: none)
        self.before: tuple[Span, ...] = ()  # what it held when they came to it
        self._undone: set[int] = set()  # sentences an undo / redo just changed elsewhere
        document.subscribe(self._on_change, first=True)  # before a view follows an undo

    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self.k, self.before, self._undone = -1, (), set()
        elif ch.kind in (ChangeKind.GOLD, ChangeKind.REVIEW, ChangeKind.MARKS):
            if ch.origin is Origin.HISTORY and self.k not in ch.sentences:
                self._undone |= set(ch.sentences)
            elif ch.origin is not Origin.HISTORY:
                self._undone = set()

    def edited(self) -> bool:
        """The annotator changed the sentence they are on since they came to it."""
        doc = self.document
        return self._valid(self.k) and tuple(doc.spans(self.k)) != self.before

    def enter(self, k: int) -> bool:
        """The annotator is now on sentence ``k``: the one they leave becomes reviewed if they
        edited it (see the module docstring). Returns whether it did."""
        if k == self.k:
            return False
        following_undo = k in self._undone
        self._undone = set()
        done = False if following_undo else self.leave()
        self.k = k if self._valid(k) else -1
        self.before = tuple(self.document.spans(k)) if self.k >= 0 else ()
        return done

    def leave(self) -> bool:
        """The annotator leaves their sentence: reviewed if they edited it and review is in
        use. Returns whether it became reviewed."""
        k = self.k
        if not self.edited() or self.document.reviewed[k] or not self.active():
            return False
        return self.document.review_on_leave(k)

    def _valid(self, k: int) -> bool:
        c = self.document.corpus
        return c is not None and 0 <= k < len(c)
