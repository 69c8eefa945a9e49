"""Autosave that keeps up: the recovery file follows the document within a few seconds.

:class:`AutosavePolicy` decides *when*: a write is due ``debounce`` seconds after the last edit,
but never later than ``max_delay`` seconds after the first edit not yet written — so steady
editing (an edit every second, for minutes) is still written every ``max_delay`` seconds
instead of being postponed forever. It reads a clock it is given, so tests drive it with a fake
one. :class:`Autosaver` does the rest for a :class:`~nerstudio.app.document.Document`: it writes
the spans of the sentences edited since the last save to the recovery file (atomically, see
:func:`nerstudio.annotation.write_recovery`), removes the file whenever the document is clean
again (saved, or undone back to the saved state), and finds a recovery file worth offering
(newer than the corpus, and changing something in it). No Qt here: after every change the
window's timer is told the new deadline (:attr:`Autosaver.scheduled`) and calls
:meth:`Autosaver.poll` then.
"""

from __future__ import annotations

import os
import time
from typing import Callable

from ..annotation import read_recovery, recovery_is_newer, recovery_path, write_recovery
from .document import Change, Document

DEBOUNCE_S = 3.0
MAX_DELAY_S = 5.0


class AutosavePolicy:
    """When the next write is due (see the module docstring)."""

    def __init__(self, debounce: float = DEBOUNCE_S, max_delay: float = MAX_DELAY_S,
                 clock: Callable[[], float] = time.monotonic):
        self.debounce = float(debounce)
        self.max_delay = max(float(max_delay), self.debounce)
        self.clock = clock
        self.first: float | None = None  # the first edit not written yet
        self.last: float | None = None

    def edited(self) -> None:
        now = self.clock()
        if self.first is None:
            self.first = now
        self.last = now

    def deadline(self) -> float | None:
        """Clock time at which a write is due (None: nothing to write)."""
        if self.first is None:
            return None
        return min(self.last + self.debounce, self.first + self.max_delay)

    def due(self) -> bool:
        d = self.deadline()
        return d is not None and self.clock() >= d

    def written(self) -> None:
        self.first = self.last = None


class Autosaver:
    """Keeps the recovery file of a document's corpus in step with its unsaved edits."""

    def __init__(self, document: Document, folder: str, policy: AutosavePolicy | None = None):
        self.document = document
        self.folder = folder
        self.policy = policy or AutosavePolicy()
        self.written_path: str | None = None  # the last file written
        self.scheduled: Callable[[float | None], None] | None = None  # told the new deadline after a change
        document.subscribe(self._on_change)

    def recovery_file(self) -> str | None:
        c = self.document.corpus
        if c is None or not c.path:
            return None
        return recovery_path(c.path, self.folder)

    def _on_change(self, ch: Change) -> None:
        if ch.kind == "corpus":
            self.policy.written()
        elif ch.kind in ("gold", "saved"):
            if self.document.is_dirty():
                self.policy.edited()
            else:
                self.policy.written()
                self.discard()
        if self.scheduled is not None:
            self.scheduled(self.policy.deadline())

    def deadline(self) -> float | None:
        return self.policy.deadline()

    def poll(self) -> str | None:
        """Write the recovery file if a write is due; returns its path when written."""
        return self.write() if self.policy.due() else None

    def write(self) -> str | None:
        """Write the recovery file now (nothing to write: removes it)."""
        path = self.recovery_file()
        edited = self.document.unsaved()
        self.policy.written()
        if path is None:
            return None
        if not edited:
            self.discard()
            return None
        try:
            write_recovery(path, self.document.corpus, edited)
        except OSError:
            return None
        self.written_path = path
        return path

    def discard(self) -> None:
        path = self.recovery_file()
        if path and os.path.exists(path):
            try:
                os.remove(path)
            except OSError:
                pass

    def pending(self):
        """``(path, {sentence: spans})`` of a recovery file that was written after the corpus
        was saved and would change it, or None. A file that changes nothing is removed."""
        path = self.recovery_file()
        if not path or not os.path.exists(path) or not recovery_is_newer(path, self.document.corpus.path):
            return None
        try:
            rec = read_recovery(path)
        except (OSError, ValueError, KeyError, TypeError):
            return path, None  # unreadable: offered, and the error said when accepted
        sents = self.document.corpus.sentences
        edits = {k: spans for k, spans in rec.edits.items()
                 if 0 <= k < len(sents) and sents[k].words == rec.words.get(k)
                 and all(0 <= s.start < s.end <= len(sents[k]) for s in spans) and spans != sents[k].spans}
        if not edits:
            self.discard()
            return None
        return path, edits
