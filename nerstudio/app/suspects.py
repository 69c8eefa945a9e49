"""The queue of suspect annotations: the open corpus's sentences whose gold is probably wrong,
most suspect first, and what the annotator decided about each.

A ranking (:func:`nerstudio.label_errors.find_suspects`, run by the window in its worker) or
a list read from a TSV gives :class:`~nerstudio.label_errors.Suspect` records: a region of a
sentence, the gold entities there, a suggestion and the evidence. :class:`SuspectQueue` is
their one owner, and says of each its :class:`Status`, derived — never copied — from the
document and from the one decision only the queue records (a dismissal):

* **accepted**: the region holds the suggestion (:meth:`SuspectQueue.accept` puts it there as
  one undoable edit of the annotator's, which also marks the sentence reviewed; an undo brings
  the suspect back, and typing the suggestion by hand accepts it too);
* **dismissed**: the annotator kept the gold (:meth:`SuspectQueue.dismiss`: the sentence is
  marked reviewed, an undoable step; undoing that step brings the suspect back);
* **open**: the region still holds the gold the ranking judged;
* **edited**: the annotator changed the region since the ranking to something else; the
  suggestion was made for the old gold and is not applied (:meth:`~SuspectQueue.accept`
  refuses, saying why).

A dismissal is tied to the undo step that marked the sentence reviewed: it holds while that
step is done. A sentence reviewed already has no such step; its dismissal holds for good (and
is written to the queue's file at once, since no save would carry it). The queue is read from
and written to ``NAME.nerstudio-suspects.json`` beside the corpus (:mod:`.suspects_file`):
read when the corpus opens (before the document's other listeners hear of it), written when a
list is installed and whenever the corpus is saved, with the dismissals as of the saved state.

Between saves the dismissals live only here, so the recovery file keeps them with the unsaved
edits (:meth:`SuspectQueue.recovery_state`, written by :class:`~.autosave.Autosaver`); after a
crash :meth:`SuspectQueue.recover` makes them what they were, tied to the recovery's undo steps
so that undoing the recovery undoes them too. The decisions on a suspect are therefore kept as
a value for good and, over it, the values undo steps gave it (:meth:`SuspectQueue.dismissed`:
the latest one whose step is done wins).

Listeners (:meth:`SuspectQueue.subscribe`) hear a :class:`QueueChange` when a list is installed,
when statuses may have changed (a dismissal, an edit or review change of a suspect's sentence,
an undo) and when the queue's file could not be written. No Qt here.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

import numpy as np

from ..corpus.model import Corpus, Span
from ..errors import DataError, FormatError, NerstudioError
from ..logs import logger
from . import suspects_file
from .events import Change, ChangeKind, Origin
from .progress import Progress
from .recovery import QueueState
from .review import words_checksum

if TYPE_CHECKING:
    from ..label_errors import Suspect
    from .document import Document


log = logger("document")  # a failing listener is logged where the document's are


class Status(Enum):
    """What became of a suspect (see the module docstring)."""

    OPEN = "open"
    ACCEPTED = "accepted"
    DISMISSED = "dismissed"
    EDITED = "edited"


class QueueKind(Enum):
    """What a :class:`QueueChange` is about."""

    #: a new list was installed (or the queue emptied): everything changed
    LIST = "list"
    #: the statuses of the suspects of ``sentences`` may have changed
    STATUS = "status"
    #: ``text`` is a message for the annotator (the queue's file could not be written)
    NOTE = "note"


@dataclass(frozen=True)
class QueueChange:
    """One change of the queue: its ``kind``, the ``sentences`` it concerns, a message
    (``text``, for :attr:`QueueKind.NOTE`) and who made it (an undo: :attr:`Origin.HISTORY`)."""

    kind: QueueKind
    sentences: tuple[int, ...] = ()
    text: str = ""
    origin: Origin = Origin.APP


def region(spans: Sequence[Span], suspect: Suspect) -> tuple[Span, ...]:
    """The entities of ``spans`` that overlap the suspect's region, sorted."""
    return tuple(sorted(sp for sp in spans if sp.start < suspect.end and sp.end > suspect.start))


class SuspectQueue:
    """See the module docstring. ``store``: read and write the queue's file beside the corpus."""

    def __init__(self, document: Document, store: bool = True) -> None:
        self.document = document
        self.store = store
        self._suspects: tuple[Suspect, ...] = ()
        self._source = ""
        self._by_sentence: dict[int, list[int]] = {}
        self._for_good: set[int] = set()  # dismissals that hold whatever the history does
        # per suspect, oldest first: (an undo step, dismissed or not while it is done)
        self._steps: dict[int, list[tuple[object, bool]]] = {}
        self._written: frozenset[int] = frozenset()  # the dismissals in the queue's file
        self._fingerprint = ""  # of the list (suspects_file.fingerprint), when first needed
        #: how many times the queue's file was written (a recovery file written before the last
        #: time must be written again: it would put back older decisions)
        self.writes = 0
        self._mine = False  # a queue was read or made: its file is ours to write
        self._pending: int | None = None  # the suspect a review step is being made for
        self._checksum: int | None = None  # the corpus's words (they never change)
        self._done: tuple[int, set[int]] = (-1, set())  # revision, ids of the done steps
        self._listeners: list[Callable[[QueueChange], None]] = []
        #: whether this window may write the corpus's files (the owner of the corpus's lock says:
        #: a window that opened it read-only keeps its queue to itself until it saves elsewhere)
        self._may_write: Callable[[], bool] = lambda: True
        self._held_back = False  # a write was held back (said once per corpus)
        document.subscribe(self._on_change, first=True)
        if document.corpus is not None:
            self._opened()

    # -- listeners --------------------------------------------------------------------------
    def subscribe(self, fn: Callable[[QueueChange], None]) -> Callable[[], None]:
        """Call ``fn(change)`` after every change of the queue; returns the unsubscriber."""
        self._listeners.append(fn)
        return lambda: self._listeners.remove(fn) if fn in self._listeners else None

    def _tell(
        self, kind: QueueKind, ks: Sequence[int] = (), text: str = "", o: Origin = Origin.APP
    ) -> None:
        """Tell every listener; one that raises is logged and the others still hear."""
        change = QueueChange(kind, tuple(ks), text, o)
        for fn in list(self._listeners):
            try:
                fn(change)
            except Exception:
                log.error(
                    "suspects listener %r failed on a %s change", fn, kind.value, exc_info=True
                )

    # -- the list ---------------------------------------------------------------------------
    @property
    def suspects(self) -> tuple[Suspect, ...]:
        """The suspects, most suspect first."""
        return self._suspects

    @property
    def source(self) -> str:
        """Where the list came from, in words (a ranking's settings, a file's name)."""
        return self._source

    @property
    def active(self) -> bool:
        """Whether there are suspects (they may be all decided)."""
        return bool(self._suspects)

    @property
    def has_list(self) -> bool:
        """Whether a list was made or read for this corpus (it may be empty)."""
        return self._mine

    def _set(self, suspects: Sequence[Suspect], source: str, dismissed: frozenset[int]) -> None:
        c = self.document.corpus
        n = len(c) if c is not None else 0
        bad = [s for s in suspects if not 0 <= s.sentence < n]
        if bad:
            raise ValueError(f"suspect of sentence {bad[0].sentence}: the corpus has {n}")
        order = sorted(range(len(suspects)), key=lambda i: -suspects[i].score)
        self._suspects = tuple(suspects[i] for i in order)
        back = {i: j for j, i in enumerate(order)}
        self._for_good = {back[i] for i in dismissed if i in back}
        self._written = frozenset(self._for_good)
        self._steps = {}
        self._fingerprint = ""
        self._source = source
        self._by_sentence = {}
        for j, s in enumerate(self._suspects):
            self._by_sentence.setdefault(s.sentence, []).append(j)

    def follow(self, file: Any) -> None:
        """Write the queue's file only while ``file`` (the corpus's
        :class:`~nerstudio.app.saving.CorpusFile`) may be saved: a window that opened the
        corpus read-only keeps its list and decisions to itself until it holds the corpus or
        saves it elsewhere."""
        self._may_write = lambda: not file.read_only

    def install(self, suspects: Sequence[Suspect], source: str) -> None:
        """Make ``suspects`` (of the open corpus; none: an empty queue) the queue, none decided,
        and write its file beside the corpus."""
        self.document.opened()
        self._set(suspects, source, frozenset())
        self._mine = True
        self._write(self._written)
        self._tell(QueueKind.LIST)

    def of_sentence(self, k: int) -> list[int]:
        """The suspects of sentence ``k`` (indices into :attr:`suspects`), most suspect first."""
        return list(self._by_sentence.get(k, ()))

    # -- statuses ---------------------------------------------------------------------------
    def _done_steps(self) -> set[int]:
        rev = self.document.revision
        if self._done[0] != rev:
            h = self.document.history
            self._done = (rev, {id(c) for c in h.commands[: h.index]})
        return self._done[1]

    def dismissed(self, i: int) -> bool:
        """Whether suspect ``i`` is dismissed (its status may be accepted all the same)."""
        return self._held(i, self._done_steps())

    def _held(self, i: int, done: set[int]) -> bool:
        """Whether suspect ``i`` is dismissed when the steps whose ids are ``done`` are done."""
        for step, value in reversed(self._steps.get(i, ())):
            if id(step) in done:
                return value
        return i in self._for_good

    def status(self, i: int) -> Status:
        s = self._suspects[i]
        now = region(self.document.spans(s.sentence), s)
        if now == tuple(sorted(s.suggested)):
            return Status.ACCEPTED
        if self.dismissed(i):
            return Status.DISMISSED
        return Status.OPEN if now == tuple(sorted(s.gold)) else Status.EDITED

    def statuses(self) -> list[Status]:
        return [self.status(i) for i in range(len(self._suspects))]

    def counts(self) -> dict[Status, int]:
        """How many suspects have each status."""
        out = dict.fromkeys(Status, 0)
        for st in self.statuses():
            out[st] += 1
        return out

    def summary(self) -> str:
        """The queue in words: "20 suspects: 12 open, 5 accepted, 3 dismissed"."""
        n = len(self._suspects)
        if not n:
            return "no suspects"
        parts = [f"{c} {st.value}" for st, c in self.counts().items() if c or st is Status.OPEN]
        return f"{n} suspect{'s' if n != 1 else ''}: " + ", ".join(parts)

    def why_none(self) -> str:
        """Why no suspect is open, in words."""
        if not self._mine:
            return "No suspects list for this corpus"
        if not self._suspects:
            return f"The suspects list is empty ({self._source})"
        return f"No open suspect left ({self.summary()})"

    def current(self, k: int) -> int | None:
        """The suspect of sentence ``k`` the keys act on: its most suspect open one."""
        return next((i for i in self.of_sentence(k) if self.status(i) is Status.OPEN), None)

    def open_mask(self) -> np.ndarray:
        """Per sentence of the corpus: it has an open suspect."""
        c = self.document.corpus
        out = np.zeros(len(c) if c is not None else 0, dtype=bool)
        for k in self._by_sentence:
            out[k] = self.current(k) is not None
        return out

    def scores(self) -> np.ndarray:
        """Per sentence: the score of its most suspect suspect (NaN: none)."""
        c = self.document.corpus
        out = np.full(len(c) if c is not None else 0, np.nan)
        for k, ix in self._by_sentence.items():
            out[k] = self._suspects[ix[0]].score
        return out

    def order(self) -> np.ndarray:
        """The sentences with suspects, most suspect first."""
        return np.asarray(list(dict.fromkeys(s.sentence for s in self._suspects)), dtype=np.int64)

    # -- decisions --------------------------------------------------------------------------
    def _refuse(self, i: int, verb: str) -> None:
        st = self.status(i)
        k = self._suspects[i].sentence + 1
        why = {
            Status.ACCEPTED: "its suggestion is in place already (Ctrl+Z takes it back)",
            Status.DISMISSED: "it was dismissed (Ctrl+Z takes that back)",
            Status.EDITED: "you changed that part of the sentence since the ranking, so the "
            "suggestion, made for the old entities, is not applied",
        }[st]
        raise DataError(f"Cannot {verb} the suspect of sentence {k}: {why}")

    def accept(self, i: int) -> list[int]:
        """Put suspect ``i``'s suggestion in its sentence, and mark the sentence reviewed, as
        one undoable edit of the annotator's; returns the sentences changed. Raises
        :class:`~nerstudio.errors.DataError` unless it is open."""
        from ..label_errors import apply_suggestion

        if self.status(i) is not Status.OPEN:
            self._refuse(i, "accept")
        s = self._suspects[i]
        spans = apply_suggestion(self.document.spans(s.sentence), s)
        text = f"accept the suggestion for sentence {s.sentence + 1}"
        return self.document.set_many({s.sentence: spans}, text, True, Origin.USER)

    def dismiss(self, i: int) -> None:
        """Keep the gold of open suspect ``i`` and mark its sentence reviewed (an undoable
        step, unless it is reviewed already). Raises :class:`~nerstudio.errors.DataError`
        unless it is open."""
        if self.status(i) is not Status.OPEN:
            self._refuse(i, "dismiss")
        doc, k = self.document, self._suspects[i].sentence
        self._pending = i  # the step is recorded as its REVIEW change is heard (_on_change)
        try:
            if doc.set_reviewed([k], text=f"dismiss the suspect in sentence {k + 1}"):
                return
        finally:
            self._pending = None
        self._for_good.add(i)
        self._steps.pop(i, None)  # it holds whatever the history does
        self._write(self._written | {i})
        self._tell(QueueKind.STATUS, (k,), o=Origin.USER)

    # -- recovery ---------------------------------------------------------------------------
    def recovery_state(self) -> QueueState | None:
        """The dismissals now, as the recovery file keeps them (None: no list kept beside the
        corpus, nothing to keep)."""
        if not self._suspects or not self._mine or not self.store:
            return None
        n = len(self._suspects)
        dismissed = frozenset(i for i in range(n) if self.dismissed(i))
        return QueueState(self._list_fingerprint(), n, dismissed)

    def _list_fingerprint(self) -> str:
        if not self._fingerprint:
            self._fingerprint = suspects_file.fingerprint(self._suspects)
        return self._fingerprint

    def fits(self, state: QueueState) -> bool:
        """Whether ``state`` (a recovery file's) was written for this very list."""
        return (
            bool(self._suspects)
            and self._mine
            and state.count == len(self._suspects)
            and state.fingerprint == self._list_fingerprint()
        )

    def _differences(
        self, state: QueueState, keep: Collection[int] = ()
    ) -> tuple[set[int], set[int]]:
        """The suspects ``state`` dismisses that are not dismissed now, and the other way (but
        for the suspects of the sentences ``keep``)."""
        n = len(self._suspects)
        mine = {i for i in range(n) if self._suspects[i].sentence not in keep}
        now = {i for i in mine if self.dismissed(i)}
        return (set(state.dismissed) & mine) - now, now - set(state.dismissed)

    def recovery_changes(self, state: QueueState, keep: Collection[int] = ()) -> list[int]:
        """The sentences whose suspects :meth:`recover` would change (``state`` must fit)."""
        add, lift = self._differences(state, keep)
        return sorted({self._suspects[i].sentence for i in add | lift})

    def recover(
        self, state: QueueState, steps: Sequence[object], keep: Collection[int] = ()
    ) -> list[int]:
        """Make the dismissals those of ``state`` (a recovery file's, which :meth:`fits`);
        ``steps``: the undo steps the recovery of the document made, in order. A dismissal it
        brings back holds while the first is done, one it takes back (made before the last
        save, undone since) is lifted while the last is done: undoing the recovery takes
        both back. Without a step (the recovery changed nothing else) they hold for good and
        the queue's file is written at once, like a dismissal of a sentence reviewed already.
        The suspects of the sentences ``keep`` (changed in this window and not by the
        recovery, :func:`~.autosave.own_changes`) stay as they are. Returns the sentences whose
        suspects changed."""
        add, lift = self._differences(state, keep)
        if not add and not lift:
            return []
        if steps:
            for i in sorted(add):
                self._steps.setdefault(i, []).append((steps[0], True))
            for i in sorted(lift):
                self._steps.setdefault(i, []).append((steps[-1], False))
        else:
            for i in add | lift:
                self._steps.pop(i, None)
            self._for_good = (self._for_good | add) - lift
            self._write((self._written | add) - lift)
        ks = sorted({self._suspects[i].sentence for i in add | lift})
        self._tell(QueueKind.STATUS, ks)
        return ks

    # -- the document -----------------------------------------------------------------------
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self._opened()
        elif ch.kind is ChangeKind.SAVED:
            self._write(self._saved_dismissals())
        elif ch.kind in (ChangeKind.GOLD, ChangeKind.REVIEW):
            if self._pending is not None and ch.kind is ChangeKind.REVIEW:
                step = self.document.history.last()
                self._steps.setdefault(self._pending, []).append((step, True))
            ks = [k for k in ch.sentences if k in self._by_sentence]
            if ks:
                self._tell(QueueKind.STATUS, ks, o=ch.origin)

    def _opened(self) -> None:
        """A corpus opened: its queue, as its file holds it (a file that cannot be used is a
        note on the corpus, shown with the other notes of the reading)."""
        self._set((), "", frozenset())
        self._checksum, self._mine, self._held_back = None, False, False
        c = self.document.corpus
        if c is None or not self.store or not c.path:
            return
        if not os.path.lexists(suspects_file.path_for(c.path)):
            return
        try:
            stored = suspects_file.read(c, self._words())
        except FormatError as exc:
            c.notes.append(f"suspects list not read: {exc}")
            return
        if stored is not None:
            self._set(stored.suspects, stored.source, stored.dismissed)
            self._mine = True
            name = os.path.basename(suspects_file.path_for(c.path))
            c.notes.append(f"{name}: {self.summary()}")  # shown with the reading's other notes

    def _words(self) -> int:
        if self._checksum is None:
            self._checksum = words_checksum(self.document.opened())
        return self._checksum

    def _saved_dismissals(self) -> frozenset[int]:
        """The dismissals of the state the corpus's file now holds."""
        h = self.document.history
        at = h.index if h.clean_index is None else h.clean_index
        saved = {id(c) for c in h.commands[:at]}
        return frozenset(i for i in range(len(self._suspects)) if self._held(i, saved))

    def _write(self, dismissed: frozenset[int]) -> None:
        c = self.document.corpus
        if c is None or not self.store or not c.path or not self._mine:
            return
        if not self._may_write():
            if not self._held_back:
                self._held_back = True
                self._tell(
                    QueueKind.NOTE,
                    text="The suspects list is kept in this window only: another window holds "
                    "the corpus (Save as… writes it beside the new file)",
                )
            return
        try:
            suspects_file.write(c.path, c, self._suspects, dismissed, self._source, self._words())
        except (OSError, FormatError) as exc:
            self._tell(QueueKind.NOTE, text=f"The suspects list was not saved: {exc}")
            return
        self._written = dismissed
        self.writes += 1


def rank_suspects(
    ctx: Progress,
    corpus: Corpus,
    count: int,
    folds: int,
    more: tuple[str, ...] = (),
    model: str | None = None,
    executor: Any = None,
) -> list[Suspect]:
    """Rank the sentences of ``corpus`` (a copy taken on the main thread: later edits do not
    reach it) by the evidence that their gold is wrong, with
    :func:`nerstudio.label_errors.find_suspects`, judged by ``folds`` folds (and the corpora in
    the files ``more``, read here) or by the model folder ``model``; in the worker, reporting to
    ``ctx``. The queue gets the ``count`` most suspect sentences that have a suggestion to accept
    (a sentence the model doubts without proposing anything else is no work for the queue).
    The folds run on ``executor`` (the window's "Folds run on" setting), else one after the
    other in this thread: a process that runs Qt threads is never forked. A file that cannot
    be used is a :class:`~nerstudio.errors.NerstudioError` (one clear line)."""
    from ..corpus.formats import read_corpus
    from ..label_errors import find_suspects

    extra = []
    for path in more:
        ctx.progress(f"reading {os.path.basename(path)}")
        try:
            extra.append(read_corpus(path))
        except OSError as exc:
            raise NerstudioError(f"{path}: {exc.strerror or exc}") from None
        ctx.check()
    ranked = find_suspects(
        corpus,
        more=tuple(extra),
        folds=folds,
        model=model,
        progress=lambda done, total, text: ctx.progress(text, done, total),
        cancel=ctx.should_cancel,
        executor=executor,
        workers=1 if executor is None else None,
    )
    return [s for s in ranked if s.suggested != s.gold][:count]
