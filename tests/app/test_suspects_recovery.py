"""The suspects queue survives a crash like every other edit (no Qt).

The queue owns its dismissals, not the document; between saves they live only in memory, so the
recovery file keeps them with the unsaved edits (its ``suspects`` field, version 2) and a
recovery makes the queue what it was: dismissed, taken back, accepted (the entities say that).
Undoing the recovery undoes the queue's part too. A field that does not fit is refused in one
line, a file for another list restores the edits and says the dismissals are not, and files
without the field are written and read as version 1. A stateful test interleaves edits, accept,
dismiss, undo, redo, save, reopen, autosave and crash against a plain model: after a recovery
the document and the queue equal what was shown when the recovery file was last written, and
after a save and reopening what was saved.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field

import hypothesis.strategies as st
import pytest
from helpers.suspects_example import TEXT, open_read_only, suspects_of
from hypothesis import HealthCheck, event, settings, target
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from nerstudio.app import recovery, suspects_file
from nerstudio.app.autosave import Autosaver, restore
from nerstudio.app.document import Document
from nerstudio.app.saving import CorpusFile
from nerstudio.app.suspects import Status, SuspectQueue, region
from nerstudio.corpus.filelock import Instance
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import DataError
from nerstudio.label_errors import Suspect, apply_suggestion

OPEN, ACCEPTED, DISMISSED = Status.OPEN, Status.ACCEPTED, Status.DISMISSED


class Window:
    """What a window holds, without Qt: the document, its suspects queue (read from beside the
    corpus as it opens), its hold on the file and its autosaver, all one instance's."""

    def __init__(self, path: str, rec: str) -> None:
        self.doc = Document()
        self.queue = SuspectQueue(self.doc)
        self.instance = Instance.new()
        self.saver = Autosaver(self.doc, rec, instance=self.instance, queue=self.queue)
        self.doc.open(read_corpus(path))
        self.file = CorpusFile(self.doc, self.instance)
        self.queue.follow(self.file)  # as the window's file owner does

    def crash(self) -> None:
        """``kill -9``: nothing saved, nothing cleaned up; the lock and recovery file stay."""
        self.instance.abandon()

    def recover(self) -> list[int]:
        """Restore every recovery file offered, as the window does when the user says yes."""
        changed: list[int] = []
        for offer in self.saver.offers():
            assert offer.edits is not None, offer.problem
            changed += restore(self.doc, offer, self.queue)
            self.saver.adopt(offer)
        return changed

    def close(self) -> None:
        self.file.close()
        self.instance.abandon()


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "data.conll"
    p.write_text(TEXT, encoding="utf-8")
    return str(p)


@pytest.fixture
def rec(tmp_path):
    return str(tmp_path / "recovery")


@pytest.fixture
def listed(path, rec):
    """A window with the four suspects of the example listed (and written beside the corpus)."""
    w = Window(path, rec)
    w.queue.install(suspects_of(w.doc.corpus), "test ranking")
    return w


def _after_crash(w: Window, path: str, rec: str) -> Window:
    w.crash()
    new = Window(path, rec)
    new.recover()
    return new


def test_dismissals_and_acceptances_made_since_the_save_come_back(listed, path, rec):
    w = listed
    w.queue.accept(2)  # sentence 3: PER for Paris
    w.queue.dismiss(1)  # sentence 1
    shown, spans = w.queue.statuses(), [w.doc.spans(k) for k in range(4)]
    assert shown == [OPEN, DISMISSED, ACCEPTED, OPEN]
    assert recovery.read_recovery(w.saver.write()).queue.dismissed == {1}
    after = _after_crash(w, path, rec)
    assert after.queue.statuses() == shown
    assert [after.doc.spans(k) for k in range(4)] == spans
    assert list(after.doc.reviewed) == [False, True, False, True]
    # the recovery is undone as a whole, the queue's part with it, and redone
    assert after.doc.undo() is not None and after.doc.undo() is None
    assert after.queue.statuses() == [OPEN] * 4 and not after.doc.reviewed.any()
    after.doc.redo()
    assert after.queue.statuses() == shown
    # saved, the suspects file holds them: a reopening shows them
    after.file.save()
    after.close()
    again = Window(path, rec)
    assert again.queue.statuses() == shown and again.saver.offers() == []
    again.close()


def test_a_dismissal_taken_back_since_the_save_stays_taken_back(listed, path, rec):
    """Dismissed and saved (so the suspects file has it), then undone: the recovery must not
    bring the suspects file's dismissal back over the undo."""
    w = listed
    w.queue.dismiss(1)
    w.file.save()
    w.doc.undo()
    assert w.queue.statuses() == [OPEN] * 4 and w.doc.is_dirty()
    w.saver.write()
    after = _after_crash(w, path, rec)
    assert after.queue.statuses() == [OPEN] * 4 and not after.doc.reviewed[1]
    after.doc.undo()  # back to what the files hold
    assert after.queue.statuses() == [OPEN, DISMISSED, OPEN, OPEN] and after.doc.reviewed[1]
    after.close()


def test_a_decision_written_beside_the_corpus_at_once_rewrites_the_recovery_file(listed, path, rec):
    """A dismissal in a sentence reviewed already goes to the suspects file at once; a recovery
    file written before it would take it back, so it is written again at once."""
    w = listed
    w.doc.set_spans(2, [])  # something unsaved
    w.queue.dismiss(0)  # reviews sentence 0: an undoable step, autosaved with the edits
    first = w.saver.write()
    w.queue.dismiss(3)  # sentence 0 again, reviewed now: kept for good, beside the corpus
    assert recovery.read_recovery(first).queue.dismissed == {0, 3}  # no timer was needed
    shown = w.queue.statuses()
    after = _after_crash(w, path, rec)
    assert after.queue.statuses() == shown == [DISMISSED, OPEN, OPEN, DISMISSED]
    after.close()


def test_a_recovery_that_changes_only_the_queue_keeps_it_for_good(listed, path, rec):
    """Dismissed and saved, undone, and the sentence reviewed again by hand: the document is
    as saved, only the queue differs. Restored, the decision is written beside the corpus at
    once (no step of the document carries it)."""
    w = listed
    w.queue.dismiss(1)
    w.file.save()
    w.doc.undo()
    w.doc.set_reviewed([1])
    assert w.queue.statuses() == [OPEN] * 4 and w.doc.is_dirty()
    w.saver.write()
    w.crash()
    after = Window(path, rec)
    (offer,) = after.saver.offers()
    assert offer.edits == {} and offer.marked == (1,)
    assert restore(after.doc, offer, after.queue) == [1]
    assert after.queue.statuses() == [OPEN] * 4 and not after.doc.is_dirty()
    with open(suspects_file.path_for(path), encoding="utf-8") as f:
        assert not any(s["dismissed"] for s in json.load(f)["suspects"])
    after.close()


def test_a_window_taking_a_killed_holders_file_over_keeps_its_own_decisions(listed, path, rec):
    """A second window, read-only, edits sentence 0 (outside its suspects' regions) and
    dismisses one of them; the first is killed, the second takes the lock and recovers: it gets
    the first window's decisions and keeps its own (as it keeps its own review states)."""
    w1 = listed
    w1.queue.dismiss(1)
    w2 = Window(path, rec)
    assert w2.file.read_only
    w2.doc.set_spans(0, [Span(0, 1, "LOC"), Span(2, 3, "ORG")])  # London is not an entity
    w2.queue.dismiss(0)
    w1.saver.write()
    w1.crash()
    assert w2.file.retry_lock() and not w2.file.read_only
    w2.recover()
    assert w2.queue.statuses() == [DISMISSED, DISMISSED, OPEN, OPEN]
    assert w2.doc.spans(0) == [Span(0, 1, "LOC"), Span(2, 3, "ORG")] and w2.doc.reviewed[0]
    w2.close()


def test_a_read_only_window_keeps_its_list_to_itself_until_it_holds_the_corpus(listed, path, rec):
    """Another window's list beside the corpus is not overwritten by a window that opened it
    read-only: its own ranking and its decisions stay in it (said once) until it takes the
    corpus over and saves."""
    side = suspects_file.path_for(path)
    w1 = listed
    with open(side, "rb") as f:
        before = f.read()
    w2 = Window(path, rec)
    assert w2.file.read_only and w2.queue.statuses() == [OPEN] * 4  # it reads the holder's list
    notes: list[str] = []
    w2.queue.subscribe(lambda ch: notes.append(ch.text) if ch.text else None)
    mine = suspects_of(w2.doc.corpus)[:2]
    w2.queue.install(mine, "the second window's ranking")
    w2.doc.set_reviewed([mine[1].sentence])
    w2.queue.dismiss(1)  # a reviewed sentence: written at once by a window that may write
    with open(side, "rb") as f:
        assert f.read() == before
    assert len([n for n in notes if "kept in this window only" in n]) == 1
    w1.close()
    assert w2.file.retry_lock() and not w2.file.read_only
    w2.file.save()
    stored = suspects_file.read(w2.doc.corpus)
    assert stored is not None and stored.source == "the second window's ranking"
    assert stored.dismissed == {1}
    w2.close()


def test_dismissals_for_another_list_are_not_restored_and_the_edits_are(listed, path, rec):
    w = listed
    w.queue.dismiss(1)
    w.doc.set_spans(2, [Span(0, 1, "ORG")])
    w.saver.write()
    w.crash()
    other = suspects_of(read_corpus(path))[:2]
    suspects_file.write(path, read_corpus(path), other, (), "another ranking")
    after = Window(path, rec)
    (offer,) = after.saver.offers()
    line = offer.summary()
    assert "for another suspects list: not restored" in line and "\n" not in line
    restore(after.doc, offer, after.queue)
    assert after.doc.spans(2) == [Span(0, 1, "ORG")] and after.doc.reviewed[1]
    assert after.queue.statuses() == [OPEN, OPEN]
    after.close()


def test_without_a_list_the_file_is_version_1_and_version_1_files_are_read(path, rec):
    w = Window(path, rec)
    w.doc.set_spans(2, [])
    written = w.saver.write()
    with open(written, encoding="utf-8") as f:
        obj = json.load(f)
    assert obj["version"] == 1 and "suspects" not in obj  # an earlier nerstudio reads it
    w.crash()
    after = Window(path, rec)
    after.queue.install(suspects_of(after.doc.corpus), "later")
    after.recover()
    assert after.doc.spans(2) == [] and after.queue.statuses() == [OPEN] * 4
    after.close()


def _damaged(listed: Window, path: str, rec: str, change) -> str:
    w = listed
    w.queue.dismiss(1)
    written = w.saver.write()
    w.crash()
    with open(written, encoding="utf-8") as f:
        obj = json.load(f)
    change(obj)
    with open(written, "w", encoding="utf-8") as f:
        json.dump(obj, f)
    return written


def _set(key, value):
    return lambda obj: obj["suspects"].__setitem__(key, value)


BAD = {
    "suspects a list": lambda obj: obj.__setitem__("suspects", [1]),
    "list not a hash": _set("list", "../../etc/passwd"),
    "list a number": _set("list", 7),
    "count negative": _set("count", -1),
    "count as text": _set("count", "4"),
    "dismissed beyond the count": _set("dismissed", [4]),
    "dismissed negative": _set("dismissed", [-1]),
    "dismissed a bool": _set("dismissed", [True]),
    "dismissed not a list": _set("dismissed", {"1": True}),
    "an unknown field": _set("path", "/tmp/x"),
    "a missing field": lambda obj: obj["suspects"].pop("count"),
    "suspects in a version 1 file": lambda obj: obj.__setitem__("version", 1),
}


@pytest.mark.data_integrity
@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_suspects_field_is_refused_in_one_line(listed, path, rec, case):
    written = _damaged(listed, path, rec, BAD[case])
    after = Window(path, rec)
    (offer,) = after.saver.offers()  # never raises
    assert offer.edits is None
    line = offer.summary()
    assert written in line and "\n" not in line and "Traceback" not in line
    assert after.queue.statuses() == [OPEN] * 4 and not after.doc.is_dirty()
    after.close()


def test_a_newer_recovery_file_is_refused_in_one_line(listed, path, rec):
    written = _damaged(listed, path, rec, lambda obj: obj.__setitem__("version", 3))
    after = Window(path, rec)
    (offer,) = after.saver.offers()
    assert offer.edits is None and "newer than this nerstudio" in offer.summary()
    assert written in offer.summary()
    after.close()


@pytest.mark.skipif(os.name != "posix", reason="symbolic links and named pipes: POSIX")
def test_a_link_or_a_pipe_in_a_recovery_files_place_is_not_read(listed, path, rec, tmp_path):
    """Refused in one line and set aside: a link's target (outside the folder) is never read
    nor touched, and a named pipe is never waited on."""
    w = listed
    w.queue.dismiss(1)
    written = w.saver.write()
    w.crash()
    elsewhere = tmp_path / "elsewhere.json"
    os.replace(written, elsewhere)
    before = elsewhere.read_bytes()
    os.symlink(elsewhere, written)
    after = Window(path, rec)
    (offer,) = after.saver.offers()
    assert offer.edits is None and "symbolic link" in offer.summary() and written in offer.summary()
    assert after.saver.set_aside(offer) and elsewhere.read_bytes() == before
    assert after.queue.statuses() == [OPEN] * 4 and not after.doc.is_dirty()
    os.mkfifo(written)
    (offer,) = after.saver.offers()  # never waits on the pipe
    assert offer.edits is None and "named pipe" in offer.summary()
    after.close()


# --------------------------------------------------------------------------------------------
# interleavings


@dataclass(frozen=True)
class State:
    spans: tuple[tuple[Span, ...], ...]
    reviewed: tuple[bool, ...]
    dismissed: frozenset[int]  # the dismissals held by the steps up to this state


@dataclass
class Model:
    """What the annotator did and what is on disk, in plain Python."""

    suspects: tuple[Suspect, ...]
    states: list[State]
    disk: State  # the corpus file, its review states and the suspects file's dismissals
    index: int = 0
    clean: int | None = 0
    forever: set[int] = field(default_factory=set)  # dismissed whatever the history does
    durable: State | None = None  # what the recovery file holds (None: there is none)

    @property
    def state(self) -> State:
        return self.states[self.index]

    @property
    def dirty(self) -> bool:
        return self.clean != self.index

    def shown(self) -> State:
        """The state now, with every dismissal (held by a step or for good)."""
        st_ = self.state
        return State(st_.spans, st_.reviewed, st_.dismissed | frozenset(self.forever))

    def push(self, new: State) -> None:
        if self.clean is not None and self.clean > self.index:
            self.clean = None
        del self.states[self.index + 1 :]
        self.states.append(new)
        self.index += 1

    def restart(self, st_: State, clean: bool) -> None:
        """A window opened on ``st_`` (its history cannot go below it)."""
        self.states, self.index, self.forever = [st_], 0, set()
        self.clean = 0 if clean else None

    def status(self, i: int) -> Status:
        s, st_ = self.suspects[i], self.state
        now = region(st_.spans[s.sentence], s)
        if now == s.suggested:
            return ACCEPTED
        if i in st_.dismissed or i in self.forever:
            return DISMISSED
        return OPEN if now == s.gold else Status.EDITED


EDITS = st.sampled_from(
    [(), (Span(0, 1, "ORG"),), (Span(0, 1, "PER"),), (Span(0, 2, "LOC"),), (Span(3, 4, "PER"),)]
)


class CrashMachine(RuleBasedStateMachine):
    """Accept, dismiss, edit, mark reviewed or not, undo, redo, save, reopen, autosave and crash
    in any order; a recovery is one step that one undo takes back."""

    @initialize()
    def start(self) -> None:
        self.dir = tempfile.mkdtemp(prefix="suspects-crash-")
        self.path = os.path.join(self.dir, "data.conll")
        self.rec = os.path.join(self.dir, "recovery")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(TEXT)
        self.w = Window(self.path, self.rec)
        self.w.queue.install(suspects_of(self.w.doc.corpus), "machine")
        c = self.w.doc.corpus
        first = State(tuple(tuple(s.spans) for s in c.sentences), (False,) * len(c), frozenset())
        self.m = Model(self.w.queue.suspects, [first], first)
        self.lifted = 0
        self.recovery: State | None = None  # the state a recovery pushed, if any
        self.undone = 0  # recoveries taken back by an undo

    def teardown(self) -> None:
        if hasattr(self, "w"):
            target(float(self.lifted), label="dismissals taken back by a recovery")
            target(float(self.undone), label="recoveries taken back by one undo")
            self.w.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    def _after(self) -> None:
        """The autosaver removes its file whenever nothing is unsaved."""
        if not self.m.dirty:
            self.m.durable = None

    @rule(i=st.integers(0, 3))
    def accept(self, i: int) -> None:
        s, st_ = self.m.suspects[i], self.m.state
        if self.m.status(i) is not OPEN:
            with pytest.raises(DataError):
                self.w.queue.accept(i)
            return
        self.w.queue.accept(i)
        spans = list(st_.spans)
        spans[s.sentence] = tuple(apply_suggestion(spans[s.sentence], s))
        reviewed = list(st_.reviewed)
        reviewed[s.sentence] = True
        self.m.push(State(tuple(spans), tuple(reviewed), st_.dismissed))
        self._after()

    @rule(i=st.integers(0, 3))
    def dismiss(self, i: int) -> None:
        s, st_ = self.m.suspects[i], self.m.state
        if self.m.status(i) is not OPEN:
            with pytest.raises(DataError):
                self.w.queue.dismiss(i)
            return
        self.w.queue.dismiss(i)
        if st_.reviewed[s.sentence]:  # for good: beside the corpus at once
            self.m.forever.add(i)
            d = self.m.disk
            self.m.disk = State(d.spans, d.reviewed, d.dismissed | {i})
            if self.m.dirty:  # and the recovery file follows at once
                self.m.durable = self.m.shown()
            return
        reviewed = list(st_.reviewed)
        reviewed[s.sentence] = True
        self.m.push(State(st_.spans, tuple(reviewed), st_.dismissed | {i}))
        self._after()

    @rule(k=st.sampled_from([0, 1, 3]), spans=EDITS)
    def edit(self, k: int, spans: tuple[Span, ...]) -> None:
        new = tuple(sorted(spans))
        if self.w.doc.set_spans(k, list(new)) is None:
            assert new == self.m.state.spans[k]
            return
        st_ = self.m.state
        all_spans = list(st_.spans)
        all_spans[k] = new
        self.m.push(State(tuple(all_spans), st_.reviewed, st_.dismissed))
        self._after()

    @rule(k=st.sampled_from([0, 1, 3]), value=st.booleans())
    def mark(self, k: int, value: bool) -> None:
        """The annotator accepts sentence ``k`` as it is, or marks it pre-annotated again."""
        st_ = self.m.state
        changed = self.w.doc.set_reviewed([k], value)
        if st_.reviewed[k] == value:
            assert changed == []
            return
        assert changed == [k]
        reviewed = list(st_.reviewed)
        reviewed[k] = value
        self.m.push(State(st_.spans, tuple(reviewed), st_.dismissed))
        self._after()

    @precondition(lambda self: self.m.index > 0)
    @rule()
    def undo(self) -> None:
        assert self.w.doc.undo() is not None
        if self.m.state is self.recovery:
            self.undone += 1
        self.m.index -= 1
        self._after()

    @precondition(lambda self: self.m.index < len(self.m.states) - 1)
    @rule()
    def redo(self) -> None:
        assert self.w.doc.redo() is not None
        self.m.index += 1
        self._after()

    @rule()
    def save(self) -> None:
        self.w.file.save()
        self.m.disk = self.m.shown()
        self.m.clean = self.m.index
        self._after()

    @precondition(lambda self: self.m.index > 0)
    @rule(n=st.integers(1, 3))
    def save_and_undo(self, n: int) -> None:
        """Saved, then Ctrl+Z ``n`` times: the files hold what is no longer shown."""
        self.save()
        for _ in range(min(n, self.m.index)):
            self.undo()

    @rule()
    def autosave(self) -> None:
        self.w.saver.write()
        self.m.durable = self.m.shown() if self.m.dirty else None

    @rule()
    def reopen(self) -> None:
        """Closed without saving (the unsaved work discarded) and opened again."""
        self.w.saver.discard()
        self.w.close()
        self.w = Window(self.path, self.rec)
        d = self.m.disk
        self.m.restart(State(d.spans, d.reviewed, d.dismissed), clean=True)
        self._after()

    @rule(autosaved=st.booleans())
    def crash(self, autosaved: bool) -> None:
        """Killed (``autosaved``: just after the autosave timer fired); a new window opens the
        corpus and recovers what the recovery file holds."""
        if autosaved:
            self.autosave()
        self.w.crash()
        self.w = Window(self.path, self.rec)
        self.w.recover()
        d, lost = self.m.disk, self.m.durable
        want = lost if lost is not None else d
        taken_back, brought_back = d.dismissed - want.dismissed, want.dismissed - d.dismissed
        event(f"crash: dismissals brought back {bool(brought_back)}, taken back {bool(taken_back)}")
        self.lifted += len(taken_back)  # the rarest case: hypothesis looks for more of it
        clean = want.spans == d.spans and want.reviewed == d.reviewed
        if clean:  # only the queue differed: kept for good, beside the corpus
            self.m.disk = State(d.spans, d.reviewed, want.dismissed)
            self.m.restart(want, clean)
        else:  # the recovery is one undoable step on top of the file's state
            self.m.restart(State(d.spans, d.reviewed, d.dismissed), clean=True)
            self.m.push(want)
            self.recovery = self.m.state
        assert self.w.doc.is_dirty() == (not clean)
        self._after()

    @invariant()
    def document_and_queue_equal_the_model(self) -> None:
        if not hasattr(self, "m"):
            return
        st_ = self.m.state
        doc, q = self.w.doc, self.w.queue
        assert [tuple(s.spans) for s in doc.corpus.sentences] == list(st_.spans)
        assert tuple(bool(r) for r in doc.reviewed) == st_.reviewed
        assert q.statuses() == [self.m.status(i) for i in range(4)]
        shown = self.m.shown().dismissed
        assert {i for i in range(4) if q.dismissed(i)} == shown

    @invariant()
    def the_files_hold_what_was_saved(self) -> None:
        """A window opening the corpus read-only now shows what was saved."""
        if not hasattr(self, "m"):
            return
        doc, q = open_read_only(self.path)
        d = self.m.disk
        assert [tuple(s.spans) for s in doc.corpus.sentences] == list(d.spans)
        assert tuple(bool(r) for r in doc.reviewed) == d.reviewed
        assert {i for i in range(4) if q.dismissed(i)} == d.dismissed


CrashMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_crash_interleavings = pytest.mark.slow(CrashMachine.TestCase)
