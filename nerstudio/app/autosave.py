"""Autosave that keeps up: the recovery file follows the document within a few seconds.

:class:`AutosavePolicy` decides *when*: a write is due ``debounce`` seconds after the last edit,
but never later than ``max_delay`` seconds after the first edit not yet written — so steady
editing (an edit every second, for minutes) is still written every ``max_delay`` seconds
instead of being postponed forever. It reads a clock it is given, so tests drive it with a fake
one. :class:`Autosaver` does the rest for a :class:`~nerstudio.app.document.Document`: it writes
the spans of the sentences edited since the last save to the recovery file (atomically, see
:func:`nerstudio.app.recovery.write_recovery`), removes the file whenever the document is clean
again (saved, or undone back to the saved state), writes it at once when a save leaves edits
unsaved (made while it ran in the background: the recovery file then holds the state before
the save, which a crash must not put back over the newer corpus file), and finds a recovery file
worth offering (changing something in it). Recovery files are per instance (a process and a window of it,
:class:`~nerstudio.corpus.filelock.Instance`): two windows editing one corpus never share one, and
a file is offered (:meth:`Autosaver.offers`) only once the instance that wrote it is gone, and
only to the instance holding the corpus's lock (a read-only window could not save what it
recovered, so it neither restores nor removes another instance's file). Save as moves the file
to the corpus's new name; a damaged file is refused whole, with one line naming it.
The file also holds every sentence's review state, note and flag (:func:`state_of`), so that
:func:`restore` brings them back exactly with the spans (a review, a note or a flag alone is an
unsaved change too), and, given the window's suspects queue (:mod:`.suspects`), which suspects
are dismissed: the queue owns them, so the autosaver asks it when it writes, writes again when
a decision changes them (on the same timer as an edit), and at once when the queue's own file
was written meanwhile (a dismissal of a reviewed sentence is kept there at once, and an older
recovery file would take it back). No Qt here: after every change the window's timer is told
the new deadline (:attr:`Autosaver.scheduled`) and calls :meth:`Autosaver.poll` then.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..corpus.filelock import Instance, lock_path, read_holder
from ..corpus.model import Sentence, Span
from ..errors import NerstudioError
from .document import Change, ChangeKind, Document
from .history import SetSpans
from .recovery import (
    QueueState,
    plain_label,
    read_recovery,
    recovery_files,
    recovery_path,
    write_recovery,
)
from .review import Marks
from .suspects import QueueChange, QueueKind, SuspectQueue

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
    """A recovery file's ``state`` (as :func:`~nerstudio.app.recovery.read_recovery` checked it)
    for a corpus of ``n`` sentences (None: absent, or written for another number of sentences)."""
    if not state or state["sentences"] != n:
        return None
    reviewed, flagged = np.zeros(n, dtype=bool), np.zeros(n, dtype=bool)
    reviewed[state["reviewed"]] = True
    flagged[state["flagged"]] = True
    notes = {int(k): t for k, t in state["notes"].items() if t}
    return reviewed, Marks(notes, flagged)


def own_changes(document: Document, edits: dict[int, list[Span]] | None) -> set[int]:
    """Sentences of ``document`` changed since it was saved that a recovery does not edit: their
    review state, note and flag stay the window's own (a window that took a killed holder's
    file over may have unsaved changes of its own)."""
    return set(document.unsaved()) - set(edits or ())


def state_changes(
    document: Document, state: tuple[np.ndarray, Marks] | None, keep: set[int] | None = None
) -> list[int]:
    """Sentences whose review state, note or flag differ between the document and ``state``
    (but for the sentences of ``keep``)."""
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
    return sorted(ks - (keep or set()))


@dataclass
class RecoveryOffer:
    """A recovery file left by an instance that is gone: what it would bring back."""

    path: str
    corpus_name: str
    edits: dict[int, list[Span]] | None  # None: the file cannot be read
    written: float = 0.0  # time.time() of its last write
    owner: Instance | None = None  # None: written by an earlier version
    state: tuple[np.ndarray, Marks] | None = None  # review states and marks (None: not kept)
    marked: tuple[int, ...] = ()  # sentences whose state, marks or suspects it changes
    problem: str = ""  # why it cannot be recovered (edits is None then)
    queue: QueueState | None = None  # the suspects dismissed (None: not kept, or another list)
    note: str = ""  # what of it cannot be restored (the rest can)

    @property
    def n(self) -> int:
        return len(set(self.edits or ()) | set(self.marked))

    def summary(self, now: float | None = None) -> str:
        """ "3 sentences of eng.testb edited 4 minutes ago by process 1234 on HOST"."""
        if self.edits is None:
            return self.problem or f"{self.path}: not a readable recovery file"
        age = _age((now or time.time()) - self.written) if self.written else "at an unknown time"
        who = f" by process {self.owner.pid} on {self.owner.host}" if self.owner else ""
        noun = "sentence" if self.n == 1 else "sentences"
        note = f"; {self.note}" if self.note else ""
        return f"{self.n:,} {noun} of {self.corpus_name} edited {age}{who}{note}"


class Autosaver:
    """Keeps this instance's recovery file of a document's corpus in step with its unsaved edits."""

    def __init__(
        self,
        document: Document,
        folder: str,
        policy: AutosavePolicy | None = None,
        instance: Instance | None = None,
        queue: SuspectQueue | None = None,
    ):
        self.document = document
        self.queue = queue  # its dismissals are kept with the edits
        # queue.writes when this instance's recovery state was last in step with the queue's file
        self._queue_writes = queue.writes if queue is not None else 0
        self.folder = folder
        self.policy = policy or AutosavePolicy()
        self.instance = instance or Instance.new()
        self.written_path: str | None = None  # this instance's file on disk (None: none there)
        self.adopted: list[
            str
        ] = []  # recovered files of dead instances: removed once ours holds their edits
        self.scheduled: Callable[[float | None], None] | None = (
            None  # told the new deadline after a change
        )
        document.subscribe(self._on_change)
        if queue is not None:
            queue.subscribe(self._on_queue)

    def recovery_file(self) -> str | None:
        c = self.document.corpus
        if c is None or not c.path:
            return None
        return recovery_path(c.path, self.folder, self.instance.tag)

    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self._in_step()
            self.policy.written()
            self.adopted = []
            self.written_path = None  # the previous corpus's, if any, is left alone
        elif ch.kind in (ChangeKind.GOLD, ChangeKind.SAVED, ChangeKind.REVIEW, ChangeKind.MARKS):
            if ch.kind is ChangeKind.SAVED:
                self._follow_move()
            if ch.kind is ChangeKind.SAVED and self.document.is_dirty():
                # edited while a background save ran: the recovery files on disk hold the
                # state before the save, which a crash would put back over the newer file
                self.write()
            elif self.document.is_dirty():
                self.policy.edited()
            else:
                self.policy.written()
                self.discard()
        if self.scheduled is not None:
            self.scheduled(self.policy.deadline())

    def _on_queue(self, ch: QueueChange) -> None:
        """A suspect decided, taken back or a new list, while there are unsaved edits: written
        like an edit, or at once when the queue's file changed since the recovery file was
        (that file holds the dismissals at the time; recovered, it would take the newer back)."""
        if ch.kind is QueueKind.NOTE or self.queue is None:
            return
        if not self.document.is_dirty():
            self._in_step()  # nothing unsaved: no recovery file to be out of step
            return
        if self.queue.writes != self._queue_writes:
            self.write()
        else:
            self.policy.edited()
        if self.scheduled is not None:
            self.scheduled(self.policy.deadline())

    def _in_step(self) -> None:
        """What is on disk for this instance agrees with the queue's file as it is now."""
        if self.queue is not None:
            self._queue_writes = self.queue.writes

    def _follow_move(self) -> None:
        """Saved under another name (Save as): the recovery file goes with the corpus. The new
        name's file is written first, then the old one removed, so a crash in between leaves
        both (the old one offering edits saved since, nothing lost) but never neither."""
        old = self.written_path
        if old is None or old == self.recovery_file():
            return
        if self.document.is_dirty() and self.write() is None:
            return  # not written: the old file still holds the edits
        self._remove(old)

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
        queue = self.queue.recovery_state() if self.queue is not None else None
        try:
            write_recovery(
                path,
                self.document.opened(),
                edited,
                self.instance.to_dict(),
                state_of(self.document),
                queue,
            )
        except OSError:
            return None
        self._in_step()
        self.written_path = path
        self._drop_adopted()  # their edits are in ours now
        return path

    def _remove(self, path: str | None) -> None:
        if path and os.path.exists(path):
            try:
                os.remove(path)
            except OSError:
                return
        if path == self.written_path:
            self.written_path = None

    def _drop_adopted(self) -> None:
        for p in self.adopted:
            self._remove(p)
        self.adopted = []

    def discard(self) -> None:
        """No unsaved edits (saved, undone, or discarded): this instance's file and the files
        it recovered go."""
        self._remove(self.recovery_file())
        self._drop_adopted()
        self._in_step()

    def holds_file(self) -> bool:
        """Whether this instance may take over other instances' recovery files of its corpus:
        the corpus's lock names it, or there is no lock (a folder where none can be written, or
        a document opened without :class:`~nerstudio.app.saving.CorpusFile`). A read-only
        window (the lock names another instance, live or not yet taken over) may not: it could
        not save what it recovered."""
        c = self.document.corpus
        if c is None or not c.path:
            return False
        lock = lock_path(c.path)
        return not os.path.lexists(lock) or self.instance.is_me(read_holder(lock))

    def offers(self) -> list[RecoveryOffer]:
        """The recovery files of this corpus left by instances that are gone (a killed process,
        an earlier version), oldest first, each with the edits that would change the corpus;
        none unless this instance :meth:`holds_file`. A damaged file is offered as refused (its
        ``problem`` says why, in one line). A file that changes nothing is removed (kept until
        this instance's own file holds its edits, when the document has unsaved edits); files
        of instances still running are left alone."""
        c = self.document.corpus
        if c is None or not c.path or not self.holds_file():
            return []
        mine, here = self.recovery_file(), os.path.abspath(c.path)
        name = os.path.basename(here)
        labels: set[str] | None = None  # the corpus's, computed when first needed
        out = []
        for path in recovery_files(c.path, self.folder):
            if path == mine:
                continue
            try:
                rec = read_recovery(path)
            except (OSError, NerstudioError) as exc:
                out.append(RecoveryOffer(path, name, None, problem=_one_line(path, exc)))
                continue
            owner = Instance.from_dict(rec.owner) if rec.owner else None
            if owner is not None and owner.alive():
                continue  # another window's, still editing
            if rec.corpus_path and os.path.abspath(rec.corpus_path) != here:
                continue  # another corpus of the same name and hash prefix
            sents = c.sentences
            if labels is None and any(
                not plain_label(s.label) for spans in rec.edits.values() for s in spans
            ):
                labels = set(c.labels)
            problem = _misfit(rec.edits, rec.words, sents, labels or set())
            if problem:
                why = f"{path}: not a recovery of this corpus: {problem}"
                out.append(RecoveryOffer(path, name, None, rec.written, owner, problem=why))
                continue
            edits = {k: spans for k, spans in rec.edits.items() if spans != sents[k].spans}
            state = parse_state(rec.state, len(sents))
            keep = own_changes(self.document, edits)
            marked = state_changes(self.document, state, keep)
            queue, note = self._queue_of(rec.queue)
            if queue is not None and self.queue is not None:
                marked = sorted(set(marked) | set(self.queue.recovery_changes(queue, keep)))
            if not edits and not marked:
                if self.document.is_dirty():
                    self.adopted.append(path)  # ours will hold what it holds
                else:
                    self._remove(path)
                continue
            out.append(
                RecoveryOffer(
                    path, name, edits, rec.written, owner, state, tuple(marked), "", queue, note
                )
            )
        return sorted(out, key=lambda o: o.written)

    def _queue_of(self, kept: QueueState | None) -> tuple[QueueState | None, str]:
        """A recovery file's suspect dismissals, if they can be restored here; else why not."""
        if kept is None or self.queue is None:
            return None, ""  # none kept, or a document without a queue (nothing to restore)
        if not self.queue.fits(kept):
            return None, "its suspect dismissals are for another suspects list: not restored"
        return kept, ""

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


def _one_line(path: str, exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if path in text else f"{path}: {text}"


def _misfit(
    edits: dict[int, list[Span]],
    words: dict[int, tuple[str, ...]],
    sents: Sequence[Sentence],
    labels: set[str],
) -> str:
    """Why a recovery file's sentences do not belong to the corpus ``sents`` ("" when they
    do): a sentence beyond its end or with other words, a label it cannot hold."""
    for k, spans in sorted(edits.items()):
        if k >= len(sents):
            return f"sentence {k + 1} is beyond the corpus's {len(sents):,} sentences"
        if sents[k].words != words[k]:
            return f"sentence {k + 1} has other words than the corpus's (changed since?)"
        bad = next(
            (s.label for s in spans if not plain_label(s.label) and s.label not in labels), None
        )
        if bad is not None:
            return f"sentence {k + 1}: the label {bad!r} cannot be saved"
    return ""


def restore(
    document: Document, offer: RecoveryOffer, queue: SuspectQueue | None = None
) -> list[int]:
    """Put ``offer`` back into ``document``: its spans, review states, notes and flags exactly
    as they were written, as one undoable step (sentences it has pre-annotated again that the
    corpus file has reviewed are a second command, joined to the first: one undo takes both
    back), and into ``queue`` (the document's
    suspects) its dismissals, undone with those steps (:meth:`~.suspects.SuspectQueue.recover`);
    returns the sentences changed. The review state, note, flag and suspects of a sentence the
    document changed itself since it was saved and ``offer`` does not edit stay the document's
    (:func:`own_changes`)."""
    text = f"recover {offer.n} sentence(s)"
    start, keep = document.history.index, own_changes(document, offer.edits)
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
        mine = np.zeros(len(reviewed), dtype=bool)
        mine[sorted(keep)] = True
        reviews = tuple(np.flatnonzero(reviewed & ~document.reviewed & ~mine).tolist())
        unreview = np.flatnonzero(~reviewed & document.reviewed & ~mine).tolist()
        for k in state_changes(document, offer.state, keep):
            old = (document.notes.get(k, ""), bool(document.flagged[k]))
            new = (m.notes.get(k, ""), bool(m.flagged[k]))
            if old != new:
                marks.append((k, old, new))
    first = bool(edits or reviews or marks)
    if first:
        document.history.push(SetSpans(edits, text, reviews, True, tuple(marks)))
    if unreview:
        document.set_reviewed(unreview, False, text, joined=first)
    changed = {k for k, _, _ in edits} | set(reviews) | {k for k, _, _ in marks} | set(unreview)
    if queue is not None and offer.queue is not None and queue.fits(offer.queue):
        h = document.history
        changed |= set(queue.recover(offer.queue, h.commands[start : h.index], keep))
    return sorted(changed)
