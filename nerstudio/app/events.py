"""What the document tells its listeners: the kinds of change, the change, and how a change
reaches every listener even when one of them fails.

:class:`~nerstudio.app.document.Document` emits one :class:`Change` per change of its state;
:class:`ChangeKind` names every kind (what each carries is written beside it), so a listener
compares members, never strings. :func:`notify` calls the listeners in order: one that raises
is logged with its name and traceback (:mod:`nerstudio.logs`) and the others, and the change
itself, go on. No Qt here (the window relays the changes as a Qt signal).
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


@dataclass(frozen=True)
class Change:
    """One change of the document: its ``kind`` (see :class:`ChangeKind` for what each carries),
    the document's ``revision`` after it, the ``sentences`` it concerns and a ``text``."""

    kind: ChangeKind
    revision: int
    sentences: tuple[int, ...] = ()
    text: str = ""


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
