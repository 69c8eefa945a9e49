"""Autosave that keeps up: the recovery file follows the document within a few seconds.

:class:`AutosavePolicy` decides *when*: a write is due ``debounce`` seconds after the last edit,
but never later than ``max_delay`` seconds after the first edit not yet written — so steady
editing (an edit every second, for minutes) is still written every ``max_delay`` seconds
instead of being postponed forever. It reads a clock it is given, so tests drive it with a fake
one. :class:`Autosaver` does the rest for a :class:`~nerstudio.app.document.Document`: it writes
the spans of the sentences edited since the last save to the recovery file (atomically, see
:func:`nerstudio.annotation.write_recovery`), removes the file whenever the document is clean
again (saved, or undone back to the saved state), and finds a recovery file worth offering
(changing something in it). Recovery files are per instance (a process and a window of it,
:class:`~nerstudio.corpus.filelock.Instance`): two windows editing one corpus never share one, and
a file is offered (:meth:`Autosaver.offers`) only once the instance that wrote it is gone.
The file also holds every sentence's review state, note and flag (:func:`state_of`), so that
:func:`restore` brings them back exactly with the spans (a review, a note or a flag alone is an
unsaved change too). No Qt here: after every change the window's timer is told the new deadline
(:attr:`Autosaver.scheduled`) and calls :meth:`Autosaver.poll` then.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ..annotation import read_recovery, recovery_files, recovery_path, write_recovery
from ..corpus.filelock import Instance
from ..corpus.model import Span
from .document import Change, ChangeKind, Document
from .history import SetSpans
from .review import Marks

DEBOUNCE_S = 3.0
MAX_DELAY_S = 5.0


class AutosavePolicy:
    """When the next write is due (see the module docstring)."""

    def __init__(
        self,
        debounce: float = DEBOUNCE_S,
        max_delay: float = MAX_DELAY_S,
        clock: Callable[[], float] = time.monotonic,
    ):
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
        if self.first is None or self.last is None:  # set together
            return None
        return min(self.last + self.debounce, self.first + self.max_delay)

    def due(self) -> bool:
        d = self.deadline()
        return d is not None and self.clock() >= d

    def written(self) -> None:
        self.first = self.last = None


def _age(seconds: float) -> str:
    s = max(0, int(seconds))
    for unit, size in (("day", 86400), ("hour", 3600), ("minute", 60)):
        if s >= size:
            n = s // size
            return f"{n} {unit}{'s' if n != 1 else ''} ago"
    return "just now" if s < 5 else f"{s} seconds ago"


def state_of(document: Document) -> dict:
    """The document's review states, notes and flags as the recovery file keeps them."""
    return {
        "sentences": len(document.opened()),
        "reviewed": np.flatnonzero(document.reviewed).tolist(),
        "notes": {str(k): text for k, text in sorted(document.notes.items())},
        "flagged": np.flatnonzero(document.flagged).tolist(),
    }


def parse_state(state: dict | None, n: int) -> tuple[np.ndarray, Marks] | None:
    """A recovery file's ``state`` for a corpus of ``n`` sentences (None: absent, or written
    for another number of sentences)."""
    if not state or int(state.get("sentences", -1)) != n:
        return None
    reviewed, flagged = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    reviewed[[int(k) for k in state.get("reviewed", []) if 0 <= int(k) < n]] = True
    flagged[[int(k) for k in state.get("flagged", []) if 0 <= int(k) < n]] = True
    notes = {
        int(k): str(t) for k, t in dict(state.get("notes", {})).items() if 0 <= int(k) < n and t
    }
    return reviewed, Marks(notes, flagged)


def state_changes(document: Document, state: tuple[np.ndarray, Marks] | None) -> list[int]:
    """Sentences whose review state, note or flag differ between the document and ``state``."""
    if state is None:
        return []
    reviewed, marks = state
    diff = (reviewed != document.reviewed) | (marks.flagged != document.flagged)
    ks = set(np.flatnonzero(diff).tolist())
    ks |= {
        k
        for k in set(marks.notes) | set(document.notes)
        if marks.notes.get(k) != document.notes.get(k)
    }
    return sorted(ks)


@dataclass
class RecoveryOffer:
    """A recovery file left by an instance that is gone: what it would bring back."""

    path: str
    corpus_name: str
    edits: dict[int, list[Span]] | None  # None: the file cannot be read
    written: float = 0.0  # time.time() of its last write
    owner: Instance | None = None  # None: written by an earlier version
    state: tuple[np.ndarray, Marks] | None = None  # review states and marks (None: not kept)
    marked: tuple[int, ...] = ()  # sentences whose state or marks it changes

    @property
    def n(self) -> int:
        return len(set(self.edits or ()) | set(self.marked))

    def summary(self, now: float | None = None) -> str:
        """ "3 sentences of eng.testb edited 4 minutes ago by process 1234 on HOST"."""
        if self.edits is None:
            return f"{self.path}: not a readable recovery file"
        age = _age((now or time.time()) - self.written) if self.written else "at an unknown time"
        who = f" by process {self.owner.pid} on {self.owner.host}" if self.owner else ""
        noun = "sentence" if self.n == 1 else "sentences"
        return f"{self.n:,} {noun} of {self.corpus_name} edited {age}{who}"


class Autosaver:
    """Keeps this instance's recovery file of a document's corpus in step with its unsaved edits."""

    def __init__(
        self,
        document: Document,
        folder: str,
        policy: AutosavePolicy | None = None,
        instance: Instance | None = None,
    ):
        self.document = document
        self.folder = folder
        self.policy = policy or AutosavePolicy()
        self.instance = instance or Instance.new()
        self.written_path: str | None = None  # the last file written
        self.adopted: list[
            str
        ] = []  # recovered files of dead instances: removed once ours holds their edits
        self.scheduled: Callable[[float | None], None] | None = (
            None  # told the new deadline after a change
        )
        document.subscribe(self._on_change)

    def recovery_file(self) -> str | None:
        c = self.document.corpus
        if c is None or not c.path:
            return None
        return recovery_path(c.path, self.folder, self.instance.tag)

    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self.policy.written()
            self.adopted = []
        elif ch.kind in (ChangeKind.GOLD, ChangeKind.SAVED, ChangeKind.REVIEW, ChangeKind.MARKS):
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
        if not self.document.is_dirty():
            self.discard()
            return None
        try:
            write_recovery(
                path,
                self.document.opened(),
                edited,
                self.instance.to_dict(),
                state_of(self.document),
            )
        except OSError:
            return None
        self.written_path = path
        self._drop_adopted()  # their edits are in ours now
        return path

    def _remove(self, path: str | None) -> None:
        if path and os.path.exists(path):
            try:
                os.remove(path)
            except OSError:
                pass

    def _drop_adopted(self) -> None:
        for p in self.adopted:
            self._remove(p)
        self.adopted = []

    def discard(self) -> None:
        """No unsaved edits (saved, undone, or discarded): this instance's file and the files
        it recovered go."""
        self._remove(self.recovery_file())
        self._drop_adopted()

    def offers(self) -> list[RecoveryOffer]:
        """The recovery files of this corpus left by instances that are gone (a killed process,
        an earlier version), oldest first, each with the edits that would change the corpus.
        A file that changes nothing is removed; files of instances still running are left alone."""
        c = self.document.corpus
        if c is None or not c.path:
            return []
        mine, here = self.recovery_file(), os.path.abspath(c.path)
        out = []
        for path in recovery_files(c.path, self.folder):
            if path == mine:
                continue
            try:
                rec = read_recovery(path)
            except (OSError, ValueError, KeyError, TypeError):
                out.append(RecoveryOffer(path, os.path.basename(here), None))
                continue
            owner = Instance.from_dict(rec.owner) if rec.owner else None
            if owner is not None and owner.alive():
                continue  # another window's, still editing
            if rec.corpus_path and os.path.abspath(rec.corpus_path) != here:
                continue  # another corpus of the same name and hash prefix
            sents = c.sentences
            edits = {
                k: spans
                for k, spans in rec.edits.items()
                if 0 <= k < len(sents)
                and sents[k].words == rec.words.get(k)
                and all(0 <= s.start < s.end <= len(sents[k]) for s in spans)
                and spans != sents[k].spans
            }
            state = parse_state(rec.state, len(sents))
            marked = state_changes(self.document, state)
            if not edits and not marked:
                self._remove(path)
                continue
            out.append(
                RecoveryOffer(
                    path,
                    os.path.basename(here),
                    edits,
                    rec.written,
                    owner,
                    state,
                    tuple(marked),
                )
            )
        return sorted(out, key=lambda o: o.written)

    def adopt(self, offer: RecoveryOffer) -> None:
        """``offer``'s edits are in the document now: its file goes once this instance's own
        recovery file holds them (or the document is saved)."""
        self.adopted.append(offer.path)

    def reject(self, offer: RecoveryOffer) -> None:
        """The user does not want ``offer``'s edits: its file goes."""
        self._remove(offer.path)

    def set_aside(self, offer: RecoveryOffer) -> str | None:
        """An unreadable recovery file: renamed ``….unreadable`` (kept for a look, no longer
        offered); returns the new name."""
        try:
            os.replace(offer.path, offer.path + ".unreadable")
        except OSError:
            return None
        return offer.path + ".unreadable"


def restore(document: Document, offer: RecoveryOffer) -> list[int]:
    """Put ``offer`` back into ``document``: its spans, review states, notes and flags exactly
    as they were written, as one undoable step (and a second one when the file has sentences
    pre-annotated again that the corpus file has reviewed); returns the sentences changed."""
    text = f"recover {offer.n} sentence(s)"
    sents = document.opened().sentences
    edits = tuple(
        (k, tuple(sents[k].spans), tuple(sorted(v)))
        for k, v in sorted((offer.edits or {}).items())
        if sorted(v) != list(sents[k].spans)
    )
    reviews: tuple[int, ...] = ()
    marks = []
    unreview: list[int] = []
    if offer.state is not None:
        reviewed, m = offer.state
        reviews = tuple(np.flatnonzero(reviewed & ~document.reviewed).tolist())
        unreview = np.flatnonzero(~reviewed & document.reviewed).tolist()
        for k in state_changes(document, offer.state):
            old = (document.notes.get(k, ""), bool(document.flagged[k]))
            new = (m.notes.get(k, ""), bool(m.flagged[k]))
            if old != new:
                marks.append((k, old, new))
    if edits or reviews or marks:
        document.history.push(SetSpans(edits, text, reviews, True, tuple(marks)))
    if unreview:
        document.set_reviewed(unreview, False, text)
    changed = {k for k, _, _ in edits} | set(reviews) | {k for k, _, _ in marks} | set(unreview)
    return sorted(changed)
