"""Saving the document's corpus: which format, which target, the check, the write, the new record.

:class:`CorpusFile` is the document's hold on its file. When a corpus opens it records what was
read (:class:`~nerstudio.app.ownership.Fingerprint`, kept as ``document.disk``, and every
sentence's entities as the base of a later merge) and takes the file's lock
(:class:`~nerstudio.corpus.filelock.FileLock`); without the lock (another window holds it) the
corpus is read-only: Save refuses with :class:`Locked`, Save as another file works.

:meth:`CorpusFile.save` never overwrites silently: before writing to the file the corpus came
from it checks the disk, and a file changed by another program (or deleted, or moved) raises
:class:`DiskChanged`. When Save is pressed only sizes and times are compared
(:meth:`~CorpusFile.begin_save`); when they differ the write itself compares the content first
(:meth:`PendingSave.run`, off the window's thread for a large file) and writes nothing if it
changed: :meth:`~CorpusFile.finish_save` raises :class:`DiskChanged` then. The caller then asks the user, and calls :meth:`~CorpusFile.save` again
with ``overwrite=True``, or :meth:`~CorpusFile.reload_theirs` / :meth:`~CorpusFile.keep_both`
(:mod:`nerstudio.app.keepboth`), or saves elsewhere. After a write the new fingerprint is
recorded. The window, scripts and the tests share this; no Qt here.
"""

from __future__ import annotations

import gc
import os
from dataclasses import dataclass

import numpy as np

from ..corpus.filelock import FileLock, Instance
from ..corpus.foreign import writable
from ..corpus.formats import format_for_output, read_corpus, write_corpus
from ..corpus.model import Corpus
from ..corpus.writing import output_encoding, paced
from ..errors import DataError, SettingsError
from . import keepboth
from .document import Change, ChangeKind, Document
from .ownership import DiskState, Fingerprint, check, fingerprint, unchanged
from .pacing import Pacer
from .review import Marks
from .review import save as save_with_review


class Locked(Exception):
    """The corpus is open for writing in another window (``holder`` says who)."""

    def __init__(self, path: str, holder: str):
        super().__init__(f"{path} is open in another nerstudio window: {holder}")
        self.path, self.holder = path, holder


class DiskChanged(Exception):
    """The file on disk is not what this window read or last saved (``state.status`` is
    ``changed`` or ``missing``)."""

    def __init__(self, path: str, state: DiskState):
        what = (
            "was deleted or moved"
            if state.status == "missing"
            else "was changed by another program"
        )
        super().__init__(f"{path} {what} since it was opened")
        self.path, self.state = path, state


@dataclass(frozen=True)
class SaveResult:
    path: str
    format: str
    moved: bool  # saved under another name: that file is now the corpus's


def same_path(a: str | None, b: str | None) -> bool:
    return bool(a and b and os.path.abspath(a) == os.path.abspath(b))


class CorpusFile:
    """See the module docstring. ``instance``: who this window is (its lock and recovery files)."""

    def __init__(self, document: Document, instance: Instance | None = None):
        self.document = document
        self.instance = instance or Instance.new()
        self.lock: FileLock | None = None
        self.base: list = []  # every sentence's spans as on disk when read or last saved
        self.n_tokens = 0
        document.subscribe(self._on_change)
        if document.corpus is not None:
            self._opened()

    # -- what was read ----------------------------------------------------------------------
    def _on_change(self, ch: Change) -> None:
        if ch.kind is ChangeKind.CORPUS:
            self._opened()

    def _opened(self) -> None:
        c = self.document.opened()
        path = os.path.abspath(c.path) if c.path else None
        disk = getattr(self.document, "disk", None)
        if path and (disk is None or disk.path != path):
            disk = fingerprint(path)  # read by code that did not record it: what is there now
        self.document.set_disk(disk if path else None)
        self.base = keepboth.snapshot(c)
        self.n_tokens = c.n_tokens  # tokens never change, only entities
        self._lock(path)

    def _lock(self, path: str | None) -> None:
        if self.lock is not None and same_path(self.lock.path, path):
            self.lock.acquire()
            return
        self.release()
        if path:
            self.lock = FileLock(path, self.instance)
            self.lock.acquire()

    @property
    def path(self) -> str | None:
        c = self.document.corpus
        return os.path.abspath(c.path) if c is not None and c.path else None

    @property
    def read_only(self) -> bool:
        """Another window holds the lock (a folder where no lock can be written is not read-only)."""
        return self.lock is not None and not self.lock.held and not self.lock.error

    def holder(self) -> str:
        return self.lock.describe_holder() if self.lock is not None else "nobody"

    def retry_lock(self) -> bool:
        """Try again to take the lock (its holder may have closed); True when this window may
        now save to the file."""
        if self.lock is None:
            return True
        return self.lock.acquire() or bool(self.lock.error)

    def release(self) -> None:
        if self.lock is not None:
            self.lock.release()
            self.lock = None

    def close(self) -> None:
        """The window closes: release the lock; the instance ends."""
        self.release()
        self.instance.close()

    # -- the disk ---------------------------------------------------------------------------
    def check(self) -> DiskState | None:
        """The disk against what was read or last saved here (None: no file to compare)."""
        disk: Fingerprint | None = getattr(self.document, "disk", None)
        if disk is None:
            return None
        return check(disk)

    def acknowledge(self, state: DiskState) -> None:
        """A disk state with the same content as recorded (only touched): record its times."""
        if state.same:
            self.document.set_disk(state.now)

    # -- saving -----------------------------------------------------------------------------
    def target(self, path: str | None = None) -> tuple[str, str] | None:
        """``(file, format)`` a save writes; None when the user must choose a file (no file
        yet, or a format nerstudio reads but does not write: JSONL is proposed). Under another
        name (``path``), the format that name's extension gives when nerstudio writes it."""
        c = self.document.corpus
        if c is None:
            return None
        kept = writable(c.format)
        if not path and (not c.path or not kept):
            return None
        target = path or c.path
        if not target:
            return None
        if path and not same_path(path, c.path):
            # saved under another name: the format its extension names (b.jsonl is JSONL, not
            # the CoNLL text of the corpus it came from), else the corpus's own
            named = format_for_output(path, c.format)
            if named is not None and writable(named):
                return target, named
        return target, (c.format if kept else (format_for_output(target) or "jsonl"))

    def save(self, path: str | None = None, overwrite: bool = False) -> SaveResult:
        """Write the corpus to its file (or to ``path``) now. Raises :class:`Locked`,
        :class:`DiskChanged` (unless ``overwrite``), ValueError when there is no target, and
        whatever the writer raises (nothing written then)."""
        pending = self.begin_save(path, overwrite)
        pending.run()
        return self.finish_save(pending)

    def begin_save(self, path: str | None = None, overwrite: bool = False) -> PendingSave:
        """The checks of :meth:`save` and a snapshot of the corpus: :meth:`PendingSave.run`
        writes it (in any thread: later edits do not reach it), :meth:`finish_save` records it."""
        c = self.document.opened()
        tf = self.target(path)
        if tf is None:
            raise SettingsError("choose a file to save to")
        target, fmt = tf
        moved = not same_path(target, c.path)
        expect: Fingerprint | None = None  # compared with the disk by the write, before writing
        if not moved:
            if self.read_only and not self.retry_lock():
                raise Locked(target, self.holder())
            disk: Fingerprint | None = getattr(self.document, "disk", None)
            if disk is not None and not overwrite and not unchanged(disk):
                # touched or changed: only the content can tell, and hashing a large file here
                # would hold the window; the write checks first (DiskChanged from finish_save)
                expect = disk
        else:
            other = FileLock(target, self.instance)
            if os.path.exists(target) and not other.acquire() and not other.error:
                raise Locked(target, other.describe_holder())
            other.release()
        return PendingSave(
            target,
            fmt,
            moved,
            c,
            [s.spans for s in c.sentences],
            self.document.save_point(),
            self.document.reviewed.copy(),
            self.document.marks(),
            expect,
        )

    def finish_save(self, pending: PendingSave) -> SaveResult:
        """Record a written :class:`PendingSave` (raises what its write raised)."""
        if pending.error is not None:
            raise pending.error
        c = self.document.corpus
        if (
            c is not pending.corpus
        ):  # another corpus opened meanwhile: the file is written, nothing to record
            return SaveResult(pending.target, pending.format, pending.moved)
        # later saves write what was saved (no-op unless the format was read-only), and the
        # file is read back in the encoding it was written in (UTF-8 for the formats that are
        # UTF-8 by definition, whatever the file was read in)
        c.format = pending.format
        c.encoding = output_encoding(pending.format, c.encoding)
        self.document.set_disk(pending.disk)
        self.base = pending.base
        self.document.mark_saved(
            os.path.abspath(pending.target) if pending.moved else None, at=pending.point
        )
        if pending.moved:
            self._lock(os.path.abspath(pending.target))
        return SaveResult(pending.target, pending.format, pending.moved)

    # -- their version ----------------------------------------------------------------------
    def read_theirs(self) -> Corpus:
        """The corpus as the disk holds it now (read like the open one)."""
        c = self.document.opened()
        if c.path is None:
            raise DataError("the corpus was read from no file")
        return read_corpus(c.path, format=c.format, encoding=c.encoding)

    def edited(self) -> list[int]:
        """The sentences whose entities differ from the file as read or last saved here."""
        sents = self.document.corpus.sentences if self.document.corpus is not None else []
        if len(self.base) != len(sents):
            return []
        return [
            k
            for k, (s, b) in enumerate(zip(sents, self.base))
            if s.spans is not b and list(s.spans) != list(b)
        ]

    def plan_keep_both(self, theirs: Corpus) -> keepboth.MergePlan:
        return keepboth.plan(self.base, self.document.opened(), theirs)

    def keep_both(
        self, theirs: Corpus, state: DiskState, plan: keepboth.MergePlan | None = None
    ) -> list[int]:
        """Their entities where only they changed a sentence, mine elsewhere, as one undoable
        step; the disk's version becomes the base. Returns the sentences that took theirs."""
        plan = plan or self.plan_keep_both(theirs)
        if not plan.aligned:
            raise DataError(keepboth.describe(plan))
        doc = self.document
        keepboth.adopt_file(doc.opened(), theirs)
        done = doc.set_many(
            plan.take, f"keep both: {len(plan.take)} sentence(s) from the file on disk"
        )
        doc.set_disk(state.now)
        self.base = keepboth.snapshot(theirs)
        if not plan.mine:
            doc.mark_saved()  # nothing of mine left to save: the document is the file on disk
        return done


class PendingSave:
    """A save decided on the main thread and written by :meth:`run` anywhere: the corpus as it
    was then (its sentences' span lists, which edits replace but never change in place), the
    document's save point, and after the write the file's new fingerprint."""

    def __init__(
        self,
        target: str,
        fmt: str,
        moved: bool,
        corpus: Corpus,
        spans: list,
        point: tuple,
        reviewed: np.ndarray | None = None,
        marks: Marks | None = None,
        expect: Fingerprint | None = None,
    ) -> None:
        self.target, self.format, self.moved = target, fmt, moved
        self.corpus, self._spans, self.point = corpus, spans, point
        self.reviewed = reviewed  # the review states of that moment (None: none written)
        self.marks = marks  # the notes and flags of that moment (app.review.Marks; None: none)
        self.expect = expect  # what the file must still hold (None: not checked here)
        self.disk: Fingerprint | None = None
        self.base: list = []
        self.error: BaseException | None = None

    def run(self, pace: Pacer | None = None) -> None:
        """Write the snapshot (and fingerprint the file). ``pace``: a background save's
        :class:`~.pacing.Pacer`, called as it goes, so that the window's thread has the
        interpreter when it needs it; None (a save on the calling thread) writes flat out."""
        # the copy of every sentence would set off the cyclic garbage collector, whose full
        # passes over a large corpus hold the interpreter lock (and the window) for hundreds of
        # ms: paused while writing (the copies are freed by reference counting after)
        if self.expect is not None:
            state = check(self.expect)  # hashes the file when it was touched
            if not state.same:
                self.error = DiskChanged(self.target, state)
                return
        collecting = gc.isenabled()
        gc.disable()
        try:
            frozen = keepboth.frozen(self.corpus, self._spans, pace)
            try:
                with paced(pace):
                    if self.reviewed is None:
                        write_corpus(frozen, self.target, self.format)
                    else:  # review states: in the file (JSONL) or in its sidecar
                        save_with_review(
                            frozen, self.reviewed, self.target, self.format, marks=self.marks
                        )
            finally:
                keepboth.release(frozen, pace)
            self.disk = fingerprint(self.target)
            self.base = self._spans
        except Exception as exc:
            self.error = exc
        finally:
            if collecting:
                gc.enable()
