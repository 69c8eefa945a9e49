"""What the document tells its listeners: the kinds of change, the change, and how a change
reaches every listener even when one of them fails.

:class:`~nerstudio.app.document.Document` emits one :class:`Change` per change of its state;
:class:`ChangeKind` names every kind (what each carries is written beside it), so a listener
compares members, never strings; :class:`Origin` says who made the change — the annotator, the
annotator undoing or redoing a step, or the application by itself (a model in the loop, a job
that finished, a reload) — so that a view moves to a changed sentence only for the user's own
action, never for what the application does in the background. :func:`notify` calls the
listeners in order: one that raises is logged with its name and traceback (:mod:`nerstudio.logs`)
and the others, and the change itself, go on. No Qt here (the window relays the changes as a Qt
signal).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..logs import logger

log = logger("document")


class ChangeKind(Enum):
    """What a :class:`Change` is about. A listener compares ``change.kind`` with these members;
    comparing it with a string (the events before this enum) raises TypeError rather than being
    silently false."""

    #: a new corpus was opened: everything changed (attachments and undo history are gone)
    CORPUS = "corpus"
    #: the gold spans of ``sentences`` changed (an edit, an undo or redo, a recovery …);
    #: ``text`` is the step's description
    GOLD = "gold"
    #: the review state of ``sentences`` changed (accepted, or pre-annotated again)
    REVIEW = "review"
    #: the notes or flags of ``sentences`` changed
    MARKS = "marks"
    #: the corpus was saved (or the document now equals its file): nothing is unsaved
    SAVED = "saved"
    #: an N-best list was attached (a previous one, its scores and candidates are gone)
    NBEST = "nbest"
    #: a reranker's scores of the attached list were installed
    SCORES = "scores"
    #: a reranker model was installed (or removed)
    MODEL = "model"
    #: a sequence tagger (the one producing N-best lists) was installed
    TAGGER = "tagger"
    #: a development N-best list was set (or removed)
    DEV = "dev"
    #: a Kazama & Torisawa tagger was installed
    KT_MODEL = "kt_model"
    #: a training run was recorded (the last of ``Document.runs``)
    RUN = "run"
    #: a model was written to a file, now its path; ``text`` is that path (the model itself
    #: did not change)
    MODEL_FILE = "model_file"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            raise TypeError(f"compare a change's kind with ChangeKind, not the string {other!r}")
        return self is other

    __hash__ = Enum.__hash__


class Origin(Enum):
    """Who made a :class:`Change`."""

    #: the annotator's own edit, mark or acceptance (at the sentence they are on, or one they
    #: chose, e.g. label all occurrences)
    USER = "user"
    #: the annotator undid or redid a step (whoever made the step): the view may go there
    HISTORY = "history"
    #: the application by itself: a model in the loop, a background job's result, a reload, a
    #: recovery, a save; nothing the user is looking at or typing into may move for it
    APP = "app"

    @property
    def by_user(self) -> bool:
        """The user's own action (an edit or an undo / redo), which may move the view."""
        return self is not Origin.APP


@dataclass(frozen=True)
class Change:
    """One change of the document: its ``kind`` (see :class:`ChangeKind` for what each carries),
    the document's ``revision`` after it, the ``sentences`` it concerns, a ``text`` and its
    ``origin`` (:class:`Origin`)."""

    kind: ChangeKind
    revision: int
    sentences: tuple[int, ...] = ()
    text: str = ""
    origin: Origin = Origin.APP


def notify(listeners: Iterable[Callable[[Change], None]], change: Change) -> None:
    """Call every listener with ``change``. One that raises is logged (its name, the change,
    the traceback; the tests fail on such a record, tests/conftest.py) and stops neither the
    others nor the change itself: a step half applied would be worse than a stale view."""
    for fn in list(listeners):
        try:
            fn(change)
        except Exception:
            log.error(
                "listener %s failed on a %s change", _name_of(fn), change.kind.value, exc_info=True
            )


def _name_of(fn: Callable[..., Any]) -> str:
    """A listener as a log names it: ``module.Class.method``."""
    return f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"
