"""The Qt-free application layer as one stateful, model-based test: the annotator's edits at the
cursor, moves, acceptances, undo and redo, rounds of the model in the loop (snapshot, the
annotator goes on, apply), saves (also in the background while the annotator edits), autosaves,
another program changing the file (and the three ways out: reload, overwrite, keep both), a
second window opening the file read-only (and going on once the first is closed), and a crash
of the window holding the file followed by the recovery in the window that takes its lock.

A plain Python model of what the annotator did is the oracle: every sentence's spans and review
state, the undo history as whole states, the cursor, what is on disk and what a crash keeps (the
state at the last autosave or save). After every step the document must equal the model; right
after a save the file read back must equal the document; after a crash the recovering window
must show everything the crashed one had autosaved; a round of the loop must never change a
reviewed sentence, one edited since its snapshot, or the one the annotator is on.

The loop's model is a fast deterministic stand-in (:func:`suggest`: every capitalised word is
an entity, PER on even rounds and LOC on odd ones) put in a real
:class:`~nerstudio.app.loop.RoundResult` with its N-best list, so :func:`~nerstudio.app.loop.apply`
runs as in the window without training a tagger.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field

import hypothesis.strategies as st
import numpy as np
import pytest
from helpers.changed_on_disk import CONLL
from hypothesis import HealthCheck, event, settings
from hypothesis.stateful import (
    RuleBasedStateMachine,
    initialize,
    invariant,
    precondition,
    rule,
)

from nerstudio.app import loop
from nerstudio.app.autosave import Autosaver, restore
from nerstudio.app.document import Document
from nerstudio.app.events import ChangeKind
from nerstudio.app.ownership import fingerprint
from nerstudio.app.review import read as read_review
from nerstudio.app.review import sidecar_path
from nerstudio.app.saving import CorpusFile, DiskChanged
from nerstudio.app.visit import Visit, reviewing
from nerstudio.corpus.filelock import Instance
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.nbest import NBestList

pytestmark = [pytest.mark.data_integrity, pytest.mark.slow]  # one long stateful run

Spans = tuple[Span, ...]
LABELS = ("PER", "ORG", "LOC")
TAGSET = ["N", "S-PER", "S-LOC"]


def suggest(words: tuple[str, ...], round_no: int) -> Spans:
    """The stand-in model's suggestion for a sentence."""
    label = "PER" if round_no % 2 == 0 else "LOC"
    return tuple(Span(i, i + 1, label) for i, w in enumerate(words) if w[:1].isupper())


def fake_round(rnd: loop.Round, round_no: int) -> loop.RoundResult:
    """What :meth:`OnlineLearner.run` would return for ``rnd`` if its tagger were
    :func:`suggest`: the N-best list (one candidate per sentence) and its suggestions."""
    rows = [k for k, s in enumerate(rnd.sentences) if len(s.words)]
    words, cands = [], []
    for k in rows:
        ws = rnd.sentences[k].words
        tags = np.zeros((1, len(ws)), dtype=np.int16)
        for sp in suggest(ws, round_no):
            tags[0, sp.start] = TAGSET.index(f"S-{sp.label}")
        words.append(tuple(ws))
        cands.append(tags)
    nb = NBestList(list(TAGSET), words, cands, [np.zeros(1) for _ in rows])
    suggestions = {k: nb.spans(i, 0) for i, k in enumerate(rows) if k not in rnd.reviewed}
    return loop.RoundResult(None, rnd.revision, nb, rows, suggestions, {}, False)


def spans_from_tags(tags: list[str]) -> Spans:
    """Spans of a tag per word: ``O``, ``B-X`` (starts an entity) or ``I`` (continues one)."""
    out: list[Span] = []
    for i, t in enumerate(tags):
        if t.startswith("B-"):
            out.append(Span(i, i + 1, t[2:]))
        elif t == "I" and out and out[-1].end == i:
            out[-1] = Span(out[-1].start, i + 1, out[-1].label)
    return tuple(out)


def tag_strategy(n: int) -> st.SearchStrategy[Spans]:
    tags = st.sampled_from(["O", "I", *(f"B-{lab}" for lab in LABELS)])
    return st.lists(tags, min_size=n, max_size=n).map(spans_from_tags)


def another_program_writes(path: str, k: int, spans: Spans) -> None:
    """Another program (an editor, ``sed``) gives sentence ``k`` of the CoNLL file ``spans``:
    only the tag column of its lines changes, written in place of the file."""
    with open(path, encoding="utf-8") as f:
        blocks = f.read().split("\n\n")
    sentences = [i for i, b in enumerate(blocks) if b.strip() and "-DOCSTART-" not in b]
    i = sentences[k]
    lines = blocks[i].strip("\n").split("\n")
    tags = ["O"] * len(lines)
    for sp in spans:
        tags[sp.start] = f"B-{sp.label}"
        for j in range(sp.start + 1, sp.end):
            tags[j] = f"I-{sp.label}"
    blocks[i] = "\n".join(line.rsplit(" ", 1)[0] + " " + tag for line, tag in zip(lines, tags))
    tmp = path + ".other"
    with open(tmp, "w", encoding="utf-8") as f:
        f.write("\n\n".join(blocks))
    was = os.stat(path).st_mtime_ns
    os.replace(tmp, path)
    if os.stat(path).st_mtime_ns <= was:  # a coarse file-system clock: a program writes later
        os.utime(path, ns=(was + 1_000_000, was + 1_000_000))


def age(*paths: str) -> None:
    """Set the files' times 10 s back (as if written a while ago): a window that reads them now
    then sees any later write as new, even where the file system's clock is coarse."""
    for p in paths:
        if os.path.exists(p):
            t = os.stat(p).st_mtime_ns - 10_000_000_000
            os.utime(p, ns=(t, t))


def disk_spans(path: str) -> list[Spans]:
    return [tuple(s.spans) for s in read_corpus(path).sentences]


# --------------------------------------------------------------------------------------------
# the windows


class Window:
    """What a window holds of the corpus, without Qt: its document, its hold on the file (the
    lock), its autosaver, the cursor (a :class:`Visit`) and the view that follows the user's
    undo and redo to the sentence they changed, never a change of the application's."""

    def __init__(self, path: str, rec: str) -> None:
        self.doc = Document()
        self.instance = Instance.new()
        self.file = CorpusFile(self.doc, self.instance)
        self.saver = Autosaver(self.doc, rec, instance=self.instance)
        self.loop_on = False
        self.visit: Visit | None = None
        self.target: int | None = None  # where the view goes after the change being made
        self.doc.open(read_corpus(path), disk=None)

    def edit_here(self) -> None:
        """The window becomes the one the annotator edits in: a cursor and a view."""
        self.visit = Visit(self.doc, lambda: self.loop_on or reviewing(self.doc))
        self.doc.subscribe(self._follow)

    def _follow(self, ch) -> None:
        visit = self.visit
        if (
            ch.kind is ChangeKind.GOLD
            and ch.origin.by_user
            and visit is not None
            and visit.k not in ch.sentences
            and self.target is None
        ):
            self.target = ch.sentences[0]

    def settle(self) -> None:
        """The view goes where the change it heard asked (the window's cursor.go)."""
        target, self.target = self.target, None
        if target is not None and self.visit is not None:
            self.visit.enter(target)

    def crash(self) -> None:
        """``kill -9``: the lock and the recovery file stay, the instance is gone."""
        self.instance.abandon()

    def close(self) -> None:
        self.file.close()


# --------------------------------------------------------------------------------------------
# the oracle


@dataclass(frozen=True)
class State:
    spans: tuple[Spans, ...]
    reviewed: tuple[bool, ...]


@dataclass
class Step:
    before: State
    after: State
    user: bool  # the annotator's (else the application's)
    joined: bool = False

    @property
    def edited(self) -> tuple[int, ...]:
        return tuple(
            k for k, (a, b) in enumerate(zip(self.before.spans, self.after.spans)) if a != b
        )

    @property
    def reviews(self) -> tuple[int, ...]:
        return tuple(
            k for k, (a, b) in enumerate(zip(self.before.reviewed, self.after.reviewed)) if a != b
        )


@dataclass
class Model:
    """What the annotator did, in plain Python (see the module docstring)."""

    state: State
    words: tuple[tuple[str, ...], ...]
    disk: State  # the file and its review states, as last written by nerstudio or read
    steps: list[Step] = field(default_factory=list)
    index: int = 0
    floor: int = 0  # steps below it (a recovery's) are not undone by the test
    clean: int | None = 0
    cursor: int = -1
    before: Spans = ()
    undone: set[int] = field(default_factory=set)
    target: int | None = None
    touched: list[int] = field(default_factory=list)  # per sentence: span changes so far
    durable: State | None = None  # what a crash now keeps

    def __post_init__(self) -> None:
        self.touched = [0] * len(self.words)
        self.durable = self.state

    @property
    def dirty(self) -> bool:
        return self.clean != self.index

    def with_spans(self, edits: dict[int, Spans]) -> State:
        spans = list(self.state.spans)
        for k, v in edits.items():
            spans[k] = tuple(sorted(v))
        return State(tuple(spans), self.state.reviewed)

    def with_reviewed(self, ks: dict[int, bool]) -> State:
        reviewed = list(self.state.reviewed)
        for k, v in ks.items():
            reviewed[k] = v
        return State(self.state.spans, tuple(reviewed))

    def _enter_state(self, step: Step, state: State, history: bool) -> None:
        self.state = state
        for k in step.edited:
            self.touched[k] += 1
        for part, is_gold in ((step.reviews, False), (step.edited, True)):
            if not part:
                continue
            if not history:
                self.undone = set()
            elif self.cursor not in part:
                self.undone |= set(part)
                if is_gold and self.target is None:
                    self.target = part[0]

    def push(self, after: State, user: bool, joined: bool = False) -> None:
        if after == self.state:
            return
        if self.clean is not None and self.clean > self.index:
            self.clean = None
        del self.steps[self.index :]
        step = Step(self.state, after, user, joined)
        self.steps.append(step)
        self.index += 1
        self._enter_state(step, after, history=False)

    def undo(self) -> None:
        self.index -= 1
        step = self.steps[self.index]
        self._enter_state(step, step.before, history=True)
        if step.joined:
            self.undo()

    def redo(self) -> None:
        step = self.steps[self.index]
        self.index += 1
        self._enter_state(step, step.after, history=True)
        if self.index < len(self.steps) and self.steps[self.index].joined:
            self.redo()

    def active(self, loop_on: bool) -> bool:
        return loop_on or any(self.state.reviewed)

    def enter(self, k: int, loop_on: bool) -> None:
        """Visit.enter as the annotator sees it: leaving an edited sentence reviews it, unless
        the move follows an undo or redo elsewhere."""
        if k == self.cursor:
            return
        following = k in self.undone
        self.undone = set()
        c = self.cursor
        if (
            not following
            and c >= 0
            and self.state.spans[c] != self.before
            and not self.state.reviewed[c]
            and self.active(loop_on)
        ):
            last = self.steps[self.index - 1] if self.index else None
            joined = last is not None and last.user and last.edited == (c,) and not last.reviews
            self.push(self.with_reviewed({c: True}), user=True, joined=joined)
        self.cursor = k
        self.before = self.state.spans[k]

    def saved(self) -> None:
        self.clean = self.index
        self.disk = self.state

    def opened(self, state: State, steps: int = 0) -> None:
        """A corpus (re)opened in a window whose first ``steps`` steps are a recovery's."""
        self.state = state
        self.steps = [Step(state, state, user=False) for _ in range(steps)]
        self.index = self.floor = steps
        self.clean = 0
        self.cursor, self.before, self.undone, self.target = -1, (), set(), None
        self.touched = [0] * len(self.words)


# --------------------------------------------------------------------------------------------
# the machine


class AppMachine(RuleBasedStateMachine):
    """See the module docstring."""

    @initialize()
    def open_corpus(self) -> None:
        self.tmp = tempfile.mkdtemp(prefix="nerstudio-sm-")
        self.path = os.path.join(self.tmp, "eng.testb")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(CONLL)
        self.rec = os.path.join(self.tmp, "recovery")
        self.windows: list[Window] = []
        self.w = self._window()
        self.w.edit_here()
        self.reader: Window | None = None
        c = self.w.doc.opened()
        words = tuple(tuple(s.words) for s in c.sentences)
        start = State(tuple(tuple(s.spans) for s in c.sentences), (False,) * len(words))
        self.m = Model(start, words, start)
        self.round: tuple[loop.Round, int, list[int], tuple[bool, ...]] | None = None
        self.rounds = 0
        self._show_first()

    def _show_first(self) -> None:
        """A corpus (re)opened: the view shows its first sentence."""
        assert self.w.visit is not None
        self.w.visit.enter(0)
        self.m.enter(0, self.w.loop_on)
        self._settle()

    def _window(self) -> Window:
        w = Window(self.path, self.rec)
        self.windows.append(w)
        return w

    def teardown(self) -> None:
        for w in getattr(self, "windows", []):
            w.close()
        if getattr(self, "tmp", None):
            shutil.rmtree(self.tmp, ignore_errors=True)

    @property
    def n(self) -> int:
        return len(self.m.words)

    def _settle(self) -> None:
        """After each action: the view follows (both the window's and the model's), and what a
        crash would keep is the state whenever nothing is unsaved."""
        self.w.settle()
        target, self.m.target = self.m.target, None
        if target is not None:
            event("the view follows an undo or redo")
            self.m.enter(target, self.w.loop_on)
        if not self.m.dirty:
            self.m.durable = self.m.state

    # -- the annotator ----------------------------------------------------------------------
    @precondition(lambda self: self.m.cursor >= 0)
    @rule(data=st.data())
    def edit_at_cursor(self, data) -> None:
        k = self.m.cursor
        spans = data.draw(tag_strategy(len(self.m.words[k])), label="spans")
        self.w.doc.set_spans(k, spans)
        self.m.push(self.m.with_spans({k: spans}), user=True)
        self._settle()

    @precondition(lambda self: self.m.cursor >= 0)
    @rule(data=st.data(), k=st.integers(0, 3))
    def edit_and_go_on(self, data, k: int) -> None:
        """The annotator's usual pace: correct the sentence, go to another one."""
        self.edit_at_cursor(data)
        self.move(k)

    @rule(k=st.integers(0, 3))
    def move(self, k: int) -> None:
        assert self.w.visit is not None
        reviewed = self.w.visit.enter(k)
        following = k in self.m.undone
        self.m.enter(k, self.w.loop_on)
        event(
            f"move: {'reviews on leaving' if reviewed else 'follows an undo' if following else 'plain'}"
        )
        self._settle()

    @rule(k=st.integers(0, 3), value=st.booleans())
    def accept(self, k: int, value: bool) -> None:
        """The annotator marks a sentence reviewed (or pre-annotated again)."""
        self.w.doc.set_reviewed([k], value)
        self.m.push(self.m.with_reviewed({k: value}), user=True)
        self._settle()

    @precondition(lambda self: self.m.index > self.m.floor)
    @rule()
    def undo(self) -> None:
        event(
            f"undo: {'an edit and its review' if self.m.steps[self.m.index - 1].joined else 'one step'}"
        )
        self.w.doc.undo()
        self.m.undo()
        self._settle()

    @precondition(lambda self: self.m.index < len(self.m.steps))
    @rule()
    def redo(self) -> None:
        self.w.doc.redo()
        self.m.redo()
        self._settle()

    # -- the model in the loop --------------------------------------------------------------
    @rule()
    def start_round(self) -> None:
        """The loop takes its snapshot; the round runs while the annotator goes on."""
        self.w.loop_on = True
        self.rounds += 1
        rnd = loop.snapshot(self.w.doc)
        self.round = (rnd, self.rounds, list(self.m.touched), self.m.state.reviewed)
        assert set(rnd.reviewed) == {k for k, r in enumerate(self.m.state.reviewed) if r}

    @precondition(lambda self: self.round is not None)
    @rule(data=st.data(), then_undo=st.booleans())
    def finish_round(self, data, then_undo: bool) -> None:
        """The round's suggestions are applied: never to a reviewed sentence, one edited since
        the snapshot, or the one the annotator is on (which they may be correcting right
        now, ``data`` says). ``then_undo``: the annotator undoes the round at once (the view
        goes to a sentence it changed, which must not review the one they leave)."""
        assert self.round is not None and self.w.visit is not None
        if self.m.cursor >= 0 and data.draw(st.booleans(), label="edit meanwhile"):
            self.edit_at_cursor(data)
        rnd, no, touched, reviewed_then = self.round
        self.round = None
        doc, cursor = self.w.doc, self.w.visit.k
        before = [tuple(doc.spans(k)) for k in range(self.n)]
        reviewed = doc.reviewed.copy()
        loop.apply(doc, fake_round(rnd, no), keep=(cursor,))
        protected = set(np.flatnonzero(reviewed).tolist()) | {cursor}
        protected |= {k for k in range(self.n) if self.m.touched[k] != touched[k]}
        for k in sorted(protected - {-1}):
            assert tuple(doc.spans(k)) == before[k], f"the round changed sentence {k}"
        edits = {
            k: suggest(self.m.words[k], no)
            for k in range(self.n)
            if not reviewed_then[k]
            and not self.m.state.reviewed[k]
            and self.m.touched[k] == touched[k]
            and k != self.m.cursor
        }
        n = self.m.index
        self.m.push(self.m.with_spans(edits), user=False)
        event(f"round: changed {len(self.m.steps[n].edited) if self.m.index > n else 0}")
        self._settle()
        if then_undo and self.m.index > n:
            self.undo()

    # -- files ------------------------------------------------------------------------------
    @rule()
    def save(self) -> None:
        self.w.file.save()
        self.m.saved()
        self._settle()
        self._check_file()

    def _check_file(self, saved: State | None = None) -> None:
        """The file read back holds the document (or the state ``saved``): spans and review
        states."""
        back = read_corpus(self.path)
        doc = self.w.doc
        want = saved or State(
            tuple(tuple(doc.spans(k)) for k in range(self.n)), tuple(doc.reviewed.tolist())
        )
        assert tuple(tuple(s.spans) for s in back.sentences) == want.spans
        assert tuple(read_review(back)[0].tolist()) == want.reviewed

    @precondition(lambda self: self.m.cursor >= 0)
    @rule(data=st.data())
    def save_in_the_background(self, data) -> None:
        """The window's save: the document as it is now is written by a worker while the
        annotator goes on editing; the file holds what was saved, the later edit stays
        unsaved, and what a crash keeps is not older than the file."""
        m = self.m
        pending = self.w.file.begin_save()
        index, last, saved = m.index, (m.steps[m.index - 1] if m.index else None), m.state
        self.edit_at_cursor(data)
        pending.run()
        self.w.file.finish_save(pending)
        reachable = index <= len(m.steps) and (index == 0 or m.steps[index - 1] is last)
        m.clean, m.disk = (index if reachable else None), saved
        self._check_file(saved)
        self._settle()
        m.durable = m.state

    @rule()
    def autosave(self) -> None:
        self.w.saver.write()
        self.m.durable = self.m.state

    @rule(
        data=st.data(),
        k=st.integers(0, 3),
        choice=st.sampled_from(["reload", "overwrite", "keep both"]),
    )
    def another_program_changes_the_file(self, data, k: int, choice: str) -> None:
        """Another program changes sentence ``k`` in the file; the annotator saves, is told,
        and chooses Reload, Overwrite or Keep both (then saves)."""
        theirs_k = data.draw(tag_strategy(len(self.m.words[k])), label="theirs")
        if theirs_k == self.m.disk.spans[k]:
            return  # not a change
        another_program_writes(self.path, k, theirs_k)
        base = self.m.disk.spans
        theirs = list(base)
        theirs[k] = theirs_k
        with pytest.raises(DiskChanged):
            self.w.file.save()
        state = self.w.file.check()
        assert state is not None and state.status == "changed"
        if choice == "reload":
            self.w.saver.discard()
            disk = fingerprint(self.path)
            self.w.doc.open(read_corpus(self.path), disk=disk)
            self.round = None
            self.m.opened(State(tuple(theirs), self.m.disk.reviewed))
            self.m.disk = self.m.state
            self._show_first()
        elif choice == "overwrite":
            self.w.file.save(overwrite=True)
            self.m.saved()
            self._check_file()
        else:
            plan = self.w.file.plan_keep_both(self.w.file.read_theirs())
            assert plan.aligned
            self.w.file.keep_both(self.w.file.read_theirs(), state, plan)
            mine = [j for j in range(self.n) if self.m.state.spans[j] != base[j]]
            take = {
                j: theirs[j]
                for j in range(self.n)
                if self.m.state.spans[j] == base[j] and theirs[j] != base[j]
            }
            assert sorted(plan.take) == sorted(take) and plan.mine == mine
            event(f"keep both: {len(take)} theirs, {len(plan.conflicts)} conflict(s)")
            self.m.push(self.m.with_spans(take), user=False)
            if not mine:
                self.m.clean = self.m.index
            self.w.file.save()
            self.m.saved()
            self._check_file()
        self._settle()

    # -- a second window, a crash and the recovery -------------------------------------------
    @precondition(lambda self: self.reader is None)
    @rule()
    def open_second_window(self) -> None:
        """A second window opens the file: read-only, offered nothing, showing the file."""
        age(self.path, sidecar_path(self.path))
        self.reader = self._window()
        assert self.reader.file.read_only
        assert self.reader.saver.offers() == []
        assert [tuple(self.reader.doc.spans(k)) for k in range(self.n)] == list(self.m.disk.spans)

    @precondition(lambda self: self.reader is not None)
    @rule(accept_first=st.booleans())
    def close_first_window(self, accept_first: bool) -> None:
        """The annotator (``accept_first``: accepts the sentence they are on,) saves and closes
        the first window and goes on in the second: told the file changed since it read it
        (when it did), it reloads, then takes the lock."""
        event("the first window closes, the second goes on")
        if accept_first and self.m.cursor >= 0:
            self.accept(self.m.cursor, True)
        self.save()
        self.w.close()
        w, self.reader = self.reader, None
        assert w is not None
        state = w.file.check()
        if state is not None and not state.same:
            w.doc.open(read_corpus(self.path), disk=fingerprint(self.path))
        assert w.file.retry_lock() and not w.file.read_only
        w.edit_here()
        self.w, self.round = w, None
        self.m.opened(self.m.disk)
        self._show_first()

    @precondition(lambda self: self.reader is not None)
    @rule()
    def close_second_window(self) -> None:
        assert self.reader is not None
        self.reader.close()
        self.reader = None

    @rule(autosaved=st.booleans(), another=st.booleans())
    def crash(self, autosaved: bool, another: bool) -> None:
        """The window holding the file is killed (``autosaved``: just after its autosave timer
        fired). The second window (reloading first if the file changed since it read it), or a
        new one, takes the lock over and recovers; ``another``: then one more window opens the
        file (read-only: offered nothing, even while the recovered files are still on disk)."""
        if autosaved:
            self.autosave()
        lost = self.m.durable
        assert lost is not None
        self.w.crash()
        self.round = None
        if self.reader is not None:
            w, self.reader = self.reader, None
            state = w.file.check()
            if state is not None and not state.same:
                w.doc.open(read_corpus(self.path), disk=fingerprint(self.path))
            assert w.file.retry_lock() and not w.file.read_only
        else:
            w = self._window()
        assert not w.file.read_only
        offers = w.saver.offers()
        event(
            f"recovery: {len(offers)} offer(s), {sum(len(o.edits or ()) for o in offers)} edit(s)"
        )
        for offer in offers:
            assert offer.edits is not None, offer.problem
            restore(w.doc, offer)
            w.saver.adopt(offer)
        w.edit_here()
        self.w = w
        assert [tuple(w.doc.spans(k)) for k in range(self.n)] == list(lost.spans), (
            "the recovery lost edits"
        )
        assert tuple(w.doc.reviewed.tolist()) == lost.reviewed, "the recovery lost reviews"
        self.m.opened(lost, steps=w.doc.history.count())
        self._show_first()
        if another:
            self.open_second_window()

    # -- invariants ---------------------------------------------------------------------------
    @invariant()
    def the_document_holds_what_the_user_made(self) -> None:
        if not hasattr(self, "m"):
            return
        doc = self.w.doc
        assert [tuple(doc.spans(k)) for k in range(self.n)] == list(self.m.state.spans), (
            "the entities are not what the annotator made"
        )
        assert tuple(doc.reviewed.tolist()) == self.m.state.reviewed, (
            "the review states are not what the annotator made"
        )
        assert doc.is_dirty() == self.m.dirty, "unsaved is not what the annotator did"

    @invariant()
    def the_cursor_moves_only_for_the_user(self) -> None:
        if not hasattr(self, "m"):
            return
        visit = self.w.visit
        assert visit is not None
        assert visit.k == self.m.cursor, (
            f"the cursor is on sentence {visit.k}; the annotator put it on {self.m.cursor}"
        )

    @invariant()
    def a_second_window_is_read_only_and_offered_nothing(self) -> None:
        if getattr(self, "reader", None) is None:
            return
        assert self.reader is not None
        assert self.reader.file.read_only and not self.w.file.read_only
        assert self.reader.saver.offers() == []


AppMachine.TestCase.settings = settings(
    max_examples=100,
    stateful_step_count=30,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
test_app_state_machine = AppMachine.TestCase
