"""The undo history of the document: plain commands, no Qt.

Every gold edit (label, clear, resize, split, merge, accept a candidate, a recovery) replaces the
spans of one or more sentences, so one command class keeps the spans before and after (and
which sentences the step marks reviewed or pre-annotated, see ``Document.reviewed``, and the
notes and flags it changes, ``Document.notes``), and who made it (an
:class:`~nerstudio.app.events.Origin`: an undo or a redo is always the user's). The
history applies commands to the :class:`~nerstudio.app.document.Document` (never to a window),
remembers which position is the saved state ("clean"), and forgets the redo branch when a new
edit is made after an undo.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..corpus.model import Span
from .events import Origin


@dataclass(frozen=True)
class SetSpans:
    """Replace the gold spans of sentences: ``edits`` is ``((k, old, new), ...)``; ``reviews``:
    sentences whose review state the step sets to ``review_value`` (undo sets the other);
    ``marks``: ``((k, (old note, old flag), (new note, new flag)), ...)``; ``origin``: who made
    the step; ``joined``: undone and redone together with the step before it (a sentence
    becoming reviewed as the annotator leaves it, after their edit of it); ``suggested``:
    ``((k, spans), ...)``, what a sentence of ``reviews`` held before the annotator's edits (the
    review log's suggestion; default: what it holds as the step is done)."""

    edits: tuple[tuple[int, tuple[Span, ...], tuple[Span, ...]], ...]
    text: str
    reviews: tuple[int, ...] = ()
    review_value: bool = True
    marks: tuple[tuple[int, tuple[str, bool], tuple[str, bool]], ...] = ()
    origin: Origin = Origin.APP
    joined: bool = False
    suggested: tuple[tuple[int, tuple[Span, ...]], ...] = ()

    @classmethod
    def one(
        cls,
        k: int,
        old: Iterable[Span],
        new: Iterable[Span],
        text: str,
        reviews: tuple[int, ...] = (),
        origin: Origin = Origin.APP,
    ) -> SetSpans:
        return cls(((k, tuple(old), tuple(new)),), text, reviews, origin=origin)

    @property
    def sentences(self) -> tuple[int, ...]:
        return tuple(k for k, _, _ in self.edits)


#: ``apply(k_to_spans, text, reviews, value, k_to_mark, origin, k_to_suggestion)``
Apply = Callable[
    [dict[int, list[Span]], str, tuple[int, ...], bool, dict, Origin, dict[int, tuple[Span, ...]]],
    None,
]


class History:
    """Undo / redo over :class:`SetSpans` commands; ``apply(k_to_spans, text, reviews, value,
    k_to_mark, origin, k_to_suggestion)`` puts spans, review states, notes and flags in place
    (the document's own method). A step marked ``joined`` is undone and redone with the one
    before it."""

    def __init__(self, apply: Apply):
        self._apply = apply
        self.commands: list[SetSpans] = []
        self.index = 0  # commands[:index] are done
        self.clean_index: int | None = 0  # None: the saved state is no longer reachable

    def count(self) -> int:
        return len(self.commands)

    def is_clean(self) -> bool:
        return self.clean_index == self.index

    def set_clean(self) -> None:
        self.clean_index = self.index

    def position(self) -> tuple:
        """A token for the state now: :meth:`set_clean_at` marks it as saved later (a save
        that ran in the background while the user went on editing)."""
        return self.index, (self.commands[self.index - 1] if self.index else None)

    def set_clean_at(self, position: tuple) -> None:
        """The state of ``position`` is the saved one, if the history still leads to it (the
        command it ended with is still in place); else the saved state is unreachable."""
        i, last = position
        reachable = i <= len(self.commands) and (i == 0 or self.commands[i - 1] is last)
        self.clean_index = i if reachable else None

    def clear(self) -> None:
        self.commands.clear()
        self.index = 0
        self.clean_index = 0

    def can_undo(self) -> bool:
        return self.index > 0

    def can_redo(self) -> bool:
        return self.index < len(self.commands)

    def undo_text(self) -> str:
        return self.commands[self.index - 1].text if self.can_undo() else ""

    def redo_text(self) -> str:
        return self.commands[self.index].text if self.can_redo() else ""

    def last(self) -> SetSpans | None:
        """The step an undo would undo (None: none)."""
        return self.commands[self.index - 1] if self.can_undo() else None

    def push(self, cmd: SetSpans) -> None:
        """Do ``cmd`` and make it the last step (the redo branch is dropped)."""
        if self.clean_index is not None and self.clean_index > self.index:
            self.clean_index = None
        del self.commands[self.index :]
        self.commands.append(cmd)
        self.index += 1
        self._do(cmd, cmd.origin)

    def _do(self, cmd: SetSpans, origin: Origin) -> None:
        self._apply(
            {k: list(new) for k, _, new in cmd.edits},
            cmd.text,
            cmd.reviews,
            cmd.review_value,
            {k: new for k, _, new in cmd.marks},
            origin,
            dict(cmd.suggested),
        )

    def undo(self) -> SetSpans | None:
        """Undo the last step (and the one before when it is ``joined`` to it); returns the
        first one undone."""
        if not self.can_undo():
            return None
        self.index -= 1
        cmd = self.commands[self.index]
        self._apply(
            {k: list(old) for k, old, _ in cmd.edits},
            "undo " + cmd.text,
            cmd.reviews,
            not cmd.review_value,
            {k: old for k, old, _ in cmd.marks},
            Origin.HISTORY,
            {},
        )
        if cmd.joined:
            self.undo()
        return cmd

    def redo(self) -> SetSpans | None:
        """Redo the next step (and the one after when that one is ``joined`` to it); returns
        the first one redone."""
        if not self.can_redo():
            return None
        cmd = self.commands[self.index]
        self.index += 1
        self._do(cmd, Origin.HISTORY)
        if self.can_redo() and self.commands[self.index].joined:
            self.redo()
        return cmd
