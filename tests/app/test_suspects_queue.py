"""The queue of suspect annotations without Qt (nerstudio/app/suspects.py and its file).

Accepting a suspect is one undoable edit of the annotator's that also reviews the sentence;
dismissing it reviews the sentence as an undoable step; a suspect whose region the annotator
changed since the ranking is never applied; the queue and its decisions survive save, close
and reopen (Save as moves them) and are read defensively. A stateful test interleaves accept,
dismiss, undo, redo, edits, saves and reopenings against a plain model of what the annotator did.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

import hypothesis.strategies as st
import pytest
from helpers.suspects_example import TEXT, open_read_only, suspects_of
from hypothesis import HealthCheck, settings
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from nerstudio.app import suspects_file
from nerstudio.app.document import Document
from nerstudio.app.events import Origin
from nerstudio.app.saving import CorpusFile
from nerstudio.app.suspects import QueueKind, Status, SuspectQueue, region
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.errors import DataError, FormatError
from nerstudio.label_errors import Suspect, apply_suggestion, read_tsv, write_tsv


@pytest.fixture
def path(tmp_path):
    p = tmp_path / "data.conll"
    p.write_text(TEXT, encoding="utf-8")
    return str(p)


def _open(path: str) -> tuple[Document, SuspectQueue, CorpusFile]:
    doc = Document()
    queue = SuspectQueue(doc)
    doc.open(read_corpus(path))
    return doc, queue, CorpusFile(doc)


@pytest.fixture
def opened(path):
    doc, queue, file = _open(path)
    queue.install(suspects_of(doc.corpus), "test ranking")
    yield doc, queue, file
    file.close()


def test_the_queue_is_ordered_most_suspect_first_with_its_masks(opened):
    _doc, q, _ = opened
    assert [s.score for s in q.suspects] == [0.9, 0.7, 0.5, 0.3]
    assert q.of_sentence(0) == [0, 3] and q.of_sentence(2) == []
    assert list(q.order()) == [0, 1, 3]
    assert list(q.open_mask()) == [True, True, False, True]
    sc = q.scores()
    assert list(sc[[0, 1, 3]]) == [0.9, 0.7, 0.5] and sc[2] != sc[2]  # NaN: no suspect
    assert q.statuses() == [Status.OPEN] * 4 and q.current(0) == 0


def test_accepting_is_one_undoable_edit_of_the_annotators_that_reviews_the_sentence(opened):
    doc, q, _ = opened
    heard, changes = [], []
    q.subscribe(heard.append)
    doc.subscribe(changes.append)
    before = doc.spans(0)
    assert q.accept(0) == [0]
    assert [(c.kind.value, c.origin) for c in changes] == [
        ("review", Origin.USER),  # the annotator's own edit, one step
        ("gold", Origin.USER),
    ]
    assert doc.spans(0) == [Span(0, 1, "ORG"), Span(2, 3, "ORG"), Span(4, 5, "LOC")]
    assert doc.reviewed[0] and doc.history.count() == 1 and doc.is_dirty()
    assert q.status(0) is Status.ACCEPTED and q.current(0) == 3  # the other one of sentence 0
    assert heard[-1].kind is QueueKind.STATUS and heard[-1].sentences == (0,)
    assert heard[-1].origin is Origin.USER
    doc.undo()
    assert doc.spans(0) == before and not doc.reviewed[0] and q.status(0) is Status.OPEN
    assert heard[-1].origin is Origin.HISTORY
    doc.redo()
    assert q.status(0) is Status.ACCEPTED and doc.reviewed[0]
    with pytest.raises(DataError, match="in place already"):
        q.accept(0)
    assert doc.history.count() == 1


def test_dismissing_reviews_the_sentence_and_an_undo_brings_the_suspect_back(opened):
    doc, q, _ = opened
    q.dismiss(1)
    assert q.status(1) is Status.DISMISSED and doc.reviewed[1]
    assert doc.spans(1) == [Span(0, 2, "PER")]  # the gold kept
    assert not q.open_mask()[1]
    doc.undo()
    assert q.status(1) is Status.OPEN and not doc.reviewed[1]
    doc.redo()
    assert q.status(1) is Status.DISMISSED
    doc.undo()
    doc.set_spans(2, [])  # a new edit drops the redo branch: the dismissal is gone with it
    assert q.status(1) is Status.OPEN and doc.redo() is None


def test_a_sentence_reviewed_already_is_dismissed_for_good_and_written_at_once(opened, path):
    doc, q, _file = opened
    q.dismiss(0)  # reviews sentence 0: an undoable step
    q.dismiss(3)  # the same sentence, reviewed now: no step, held for good
    assert q.status(3) is Status.DISMISSED and doc.history.count() == 1
    doc.undo()
    assert q.status(0) is Status.OPEN and q.status(3) is Status.DISMISSED
    with open(suspects_file.path_for(path), encoding="utf-8") as f:
        stored = json.load(f)["suspects"]
    assert [s["dismissed"] for s in stored] == [False, False, False, True]


def test_a_region_the_annotator_changed_is_never_applied(opened):
    doc, q, _ = opened
    doc.set_spans(3, [Span(0, 1, "ORG"), Span(3, 4, "LOC")])  # Paris: neither gold nor suggestion
    assert q.status(2) is Status.EDITED and not q.open_mask()[3]
    with pytest.raises(DataError, match="you changed that part of the sentence"):
        q.accept(2)
    assert doc.spans(3) == [Span(0, 1, "ORG"), Span(3, 4, "LOC")] and doc.history.count() == 1
    doc.set_spans(3, [Span(0, 1, "PER"), Span(3, 4, "LOC")])  # the suggestion, typed by hand
    assert q.status(2) is Status.ACCEPTED
    doc.set_spans(0, [Span(0, 2, "LOC"), Span(2, 3, "ORG"), Span(4, 5, "LOC")])  # across the region
    assert q.status(0) is Status.EDITED
    assert region(doc.spans(0), q.suspects[0]) == (Span(0, 2, "LOC"),)


def test_the_queue_survives_save_close_and_reopen(opened, path):
    doc, q, file = opened
    q.accept(0)
    q.dismiss(1)
    shown = q.statuses()
    file.save()
    doc.undo()  # after the save: not saved, so not what a reopening shows
    file.close()
    doc2, q2, file2 = _open(path)
    try:
        assert q2.suspects == q.suspects and q2.source == "test ranking"
        assert q2.statuses() == shown == [Status.ACCEPTED, Status.DISMISSED] + [Status.OPEN] * 2
        assert doc2.reviewed[0] and doc2.reviewed[1]
        assert doc2.history.count() == 0  # what was read is not undone
        said = "data.conll.nerstudio-suspects.json: 4 suspects: 2 open, 1 accepted, 1 dismissed"
        assert said in doc2.corpus.notes
    finally:
        file2.close()


def test_save_as_writes_the_queue_beside_the_new_file(opened, path, tmp_path):
    _doc, q, file = opened
    q.dismiss(2)
    other = str(tmp_path / "copy.conll")
    file.save(other)
    assert os.path.isfile(suspects_file.path_for(other))
    file.close()
    _doc2, q2, file2 = _open(other)
    try:
        assert q2.status(2) is Status.DISMISSED and len(q2.suspects) == 4
    finally:
        file2.close()


def test_no_queue_no_file(path):
    doc, q, file = _open(path)
    try:
        doc.set_spans(0, [])
        file.save()
        assert not os.path.exists(suspects_file.path_for(path)) and not q.active
    finally:
        file.close()


def test_an_empty_list_replaces_the_one_before(opened, path):
    _doc, q, file = opened
    q.install([], "judged by 5 folds of the corpus")  # a ranking that found nothing
    assert not q.active and q.has_list and "empty" in q.why_none()
    file.close()
    _doc2, q2, file2 = _open(path)
    file2.close()
    assert not q2.active and q2.has_list  # the former list does not come back


@pytest.mark.parametrize(
    "content, why",
    [
        ("not json", "Expecting value"),
        ('{"format": "nerstudio-suspects", "version": 2}', "version 2 is not 1"),
        ("[" * 100_000, "recursion"),
        ("\xff\xfe", "utf-8"),
    ],
)
def test_a_bad_queue_file_is_a_one_line_note_and_is_left_alone(path, content, why):
    side = suspects_file.path_for(path)
    with open(side, "w", encoding="latin-1") as f:
        f.write(content)
    doc, q, file = _open(path)
    try:
        assert not q.active
        notes = [n for n in doc.corpus.notes if "suspects list not read" in n]
        assert len(notes) == 1 and side in notes[0] and why in notes[0] and "\n" not in notes[0]
        doc.set_spans(0, [])
        file.save()  # the file is not ours: not overwritten
        with open(side, encoding="latin-1") as f:
            assert f.read() == content
    finally:
        file.close()


def test_a_queue_file_of_other_words_is_refused(opened, path):
    _doc, _q, file = opened
    file.close()
    with open(path, encoding="utf-8") as f:
        text = f.read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace("Leeds", "Luton"))
    doc2, q2, file2 = _open(path)
    try:
        assert not q2.active
        assert any("other words than the corpus" in n for n in doc2.corpus.notes)
    finally:
        file2.close()


def test_every_field_of_the_queue_file_is_checked(opened, path):
    _doc, _q, _file = opened
    side = suspects_file.path_for(path)
    with open(side, encoding="utf-8") as f:
        good = json.load(f)
    bad_items = [
        {"sentence": 99},
        {"sentence": True},
        {"start": 3, "end": 2},
        {"end": 9},
        {"score": "high"},
        {"score": 10**400},
        {"score": float("nan")},
        {"score": "Infinity"},
        {"gold": [[0, 1]]},
        {"gold": [[0, 5, "LOC"]]},
        {"suggested": [[0, 1, "LOC"]]},  # the same as gold
        {"evidence": None},
        {"dismissed": "no"},
    ]
    for change in bad_items:
        data = json.loads(json.dumps(good))
        data["suspects"][0].update(change)
        with open(side, "w", encoding="utf-8") as f:
            json.dump(data, f)
        doc2, q2, file2 = _open(path)
        file2.close()
        assert not q2.active, change
        assert sum("suspects list not read" in n for n in doc2.corpus.notes) == 1, change


def test_a_score_of_infinity_survives_save_and_reopen(path):
    """A gold type the model does not know scores inf (it ranks first), nothing but gold -inf:
    the file spells them as the TSV does, stays standard JSON, and reads them back."""
    doc, q, file = _open(path)
    ranked = suspects_of(doc.corpus)
    ranked[0] = Suspect(**{**ranked[0].__dict__, "score": float("inf")})
    ranked[-1] = Suspect(**{**ranked[-1].__dict__, "score": float("-inf")})
    q.install(ranked, "a ranking with infinities")
    file.save()
    file.close()
    with open(suspects_file.path_for(path), encoding="utf-8") as f:
        text = f.read()
    assert "Infinity" not in text  # standard JSON: other programs read it too
    json.loads(text, parse_constant=lambda c: pytest.fail(f"non-standard JSON constant {c}"))
    _doc2, q2, file2 = _open(path)
    try:
        assert q2.active and [s.score for s in q2.suspects] == [s.score for s in ranked]
    finally:
        file2.close()


@pytest.mark.skipif(os.name != "posix", reason="symbolic links and named pipes: POSIX")
def test_a_link_or_a_pipe_in_the_queue_files_place_is_neither_followed_nor_written(
    opened, path, tmp_path
):
    doc, q, file = opened
    side = suspects_file.path_for(path)
    secret = tmp_path / "secret.json"
    os.replace(side, secret)  # a valid queue, outside the folder
    before = secret.read_bytes()
    os.symlink(secret, side)
    heard = []
    q.subscribe(heard.append)
    doc.set_spans(0, [])
    file.save()  # the queue is written at every save: not through the link
    assert secret.read_bytes() == before and os.path.islink(side)
    assert heard[-1].kind is QueueKind.NOTE and "symbolic link" in heard[-1].text
    file.close()
    doc2, q2, file2 = _open(path)  # nor read through it
    file2.close()
    assert not q2.active and any("symbolic link" in n for n in doc2.corpus.notes)
    os.remove(side)
    os.mkfifo(side)
    doc3, q3, file3 = _open(path)  # never waits on the pipe
    file3.close()
    assert not q3.active and any("named pipe" in n for n in doc3.corpus.notes)


def test_the_tsv_of_a_ranking_round_trips_and_a_bad_line_is_named(opened, tmp_path):
    doc, q, _ = opened
    out = tmp_path / "suspects.tsv"
    write_tsv(out, doc.corpus, q.suspects)
    assert read_tsv(out, doc.corpus) == list(q.suspects)
    lines = out.read_text(encoding="utf-8").splitlines()
    cells = lines[2].split("\t")
    cells[1] = "99"  # a sentence the corpus does not have
    lines[2] = "\t".join(cells)
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(FormatError) as err:
        read_tsv(out, doc.corpus)
    assert f"{out}:3:" in str(err.value)
    s = q.suspects[0]
    assert apply_suggestion(doc.spans(0), s) == [Span(0, 1, "ORG"), *doc.spans(0)[1:]]


# --------------------------------------------------------------------------------------------
# interleavings


@dataclass(frozen=True)
class State:
    spans: tuple[tuple[Span, ...], ...]
    reviewed: tuple[bool, ...]
    dismissed: frozenset[int]


@dataclass
class Model:
    """What the annotator did: whole states along the undo history, the dismissals held for
    good, and what the files hold."""

    suspects: tuple[Suspect, ...]
    states: list[State]
    index: int = 0
    forever: set[int] = field(default_factory=set)
    disk: State | None = None
    disk_dismissed: frozenset[int] = frozenset()

    @property
    def state(self) -> State:
        return self.states[self.index]

    def push(self, new: State) -> None:
        del self.states[self.index + 1 :]
        self.states.append(new)
        self.index += 1

    def status(self, i: int) -> Status:
        s, st = self.suspects[i], self.state
        now = region(st.spans[s.sentence], s)
        if now == s.suggested:
            return Status.ACCEPTED
        if i in st.dismissed or i in self.forever:
            return Status.DISMISSED
        return Status.OPEN if now == s.gold else Status.EDITED


EDITS = st.sampled_from(
    [(), (Span(0, 1, "ORG"),), (Span(0, 1, "PER"),), (Span(0, 2, "LOC"),), (Span(3, 4, "PER"),)]
)


class QueueMachine(RuleBasedStateMachine):
    """Accept, dismiss, undo, redo, edit, save and reopen in any order: the document and the
    queue equal the model after every step; a reopening shows what was saved."""

    @initialize()
    def start(self) -> None:
        import tempfile

        self.dir = tempfile.mkdtemp(prefix="suspects-")
        self.path = os.path.join(self.dir, "data.conll")
        with open(self.path, "w", encoding="utf-8") as f:
            f.write(TEXT)
        self.doc, self.q, self.file = _open(self.path)
        self.q.install(suspects_of(self.doc.corpus), "machine")
        c = self.doc.corpus
        first = State(tuple(tuple(s.spans) for s in c.sentences), (False,) * len(c), frozenset())
        self.m = Model(self.q.suspects, [first], disk=first)

    def teardown(self) -> None:
        import shutil

        if hasattr(self, "file"):
            self.file.close()
            shutil.rmtree(self.dir, ignore_errors=True)

    @rule(i=st.integers(0, 3))
    def accept(self, i: int) -> None:
        s, st_ = self.q.suspects[i], self.m.state
        if self.m.status(i) is not Status.OPEN:
            with pytest.raises(DataError):
                self.q.accept(i)
            return
        self.q.accept(i)
        spans = list(st_.spans)
        spans[s.sentence] = tuple(apply_suggestion(spans[s.sentence], s))
        reviewed = list(st_.reviewed)
        reviewed[s.sentence] = True
        self.m.push(State(tuple(spans), tuple(reviewed), st_.dismissed))

    @rule(i=st.integers(0, 3))
    def dismiss(self, i: int) -> None:
        s, st_ = self.q.suspects[i], self.m.state
        if self.m.status(i) is not Status.OPEN:
            with pytest.raises(DataError):
                self.q.dismiss(i)
            return
        self.q.dismiss(i)
        if st_.reviewed[s.sentence]:
            self.m.forever.add(i)
            self.m.disk_dismissed = self.m.disk_dismissed | {i}
            return
        reviewed = list(st_.reviewed)
        reviewed[s.sentence] = True
        self.m.push(State(st_.spans, tuple(reviewed), st_.dismissed | {i}))

    @rule(k=st.sampled_from([0, 1, 3]), spans=EDITS)
    def edit(self, k: int, spans: tuple[Span, ...]) -> None:
        new = tuple(sorted(spans))
        if self.doc.set_spans(k, list(new)) is None:
            assert new == self.m.state.spans[k]
            return
        st_ = self.m.state
        all_spans = list(st_.spans)
        all_spans[k] = new
        self.m.push(State(tuple(all_spans), st_.reviewed, st_.dismissed))

    @precondition(lambda self: self.m.index > 0)
    @rule()
    def undo(self) -> None:
        assert self.doc.undo() is not None
        self.m.index -= 1

    @precondition(lambda self: self.m.index < len(self.m.states) - 1)
    @rule()
    def redo(self) -> None:
        assert self.doc.redo() is not None
        self.m.index += 1

    @rule()
    def save(self) -> None:
        self.file.save()
        self.m.disk = self.m.state
        self.m.disk_dismissed = self.m.state.dismissed | frozenset(self.m.forever)
        doc, q = open_read_only(self.path)
        assert q.statuses() == [self.m.status(i) for i in range(4)]  # saved = shown
        assert [tuple(s.spans) for s in doc.corpus.sentences] == list(self.m.state.spans)

    @rule()
    def reopen(self) -> None:
        self.file.close()
        self.doc, self.q, self.file = _open(self.path)
        assert self.m.disk is not None
        d = self.m.disk
        self.m.states, self.m.index = [State(d.spans, d.reviewed, frozenset())], 0
        self.m.forever = set(self.m.disk_dismissed)

    @invariant()
    def document_and_queue_equal_the_model(self) -> None:
        if not hasattr(self, "m"):
            return
        st_ = self.m.state
        assert [tuple(s.spans) for s in self.doc.corpus.sentences] == list(st_.spans)
        assert tuple(bool(r) for r in self.doc.reviewed) == st_.reviewed
        assert self.q.statuses() == [self.m.status(i) for i in range(4)]
        assert list(self.q.open_mask()) == [
            any(self.m.status(i) is Status.OPEN for i in self.q.of_sentence(k)) for k in range(4)
        ]


QueueMachine.TestCase.settings = settings(
    max_examples=60,
    stateful_step_count=25,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
test_queue_interleavings = pytest.mark.slow(QueueMachine.TestCase)


class _Quiet:
    """A worker context that reports nothing and is never cancelled."""

    def progress(self, message: str = "", done: int = 0, total: int = 0) -> None:
        pass

    def should_cancel(self) -> bool:
        return False

    def check(self) -> None:
        pass


def test_the_window_lists_at_most_count_suspects_each_with_a_suggestion(path, monkeypatch):
    """The ranking returns every sentence; the queue gets the ``count`` most suspect that have
    something to accept, in the ranking's order."""
    from nerstudio import label_errors
    from nerstudio.app.suspects import rank_suspects

    corpus = read_corpus(path)
    four = suspects_of(corpus)
    nothing = Suspect(2, 0.8, 0, 0, (), (), "the model doubts it but proposes nothing else")
    ranked = [four[0], nothing, *four[1:]]
    seen = {}

    def find_suspects(corpus, **kw):
        seen.update(kw)
        return ranked

    monkeypatch.setattr(label_errors, "find_suspects", find_suspects)
    got = rank_suspects(_Quiet(), corpus, 2, 5)
    assert got == [four[0], four[1]]
    assert "n" not in seen and seen["folds"] == 5  # n: the core's taggings per sentence
    assert rank_suspects(_Quiet(), corpus, 10, 5) == four


def test_the_window_ranking_never_forks_and_takes_the_folds_executor(monkeypatch):
    """The window's ranking runs its folds one after the other in the worker thread (a process
    that runs Qt threads must not fork), or on the executor the "Folds run on" setting names."""
    from helpers.tiny_corpus import tiny_corpus

    from nerstudio.app.suspects import rank_suspects
    from nerstudio.runtime import folds as folds_mod

    def forks(*a, **kw):
        raise AssertionError("the window's ranking started processes")

    monkeypatch.setattr(folds_mod, "ProcessExecutor", forks)
    corpus = tiny_corpus()
    here = rank_suspects(_Quiet(), corpus, 50, 2)
    inline = folds_mod.InlineExecutor()
    used = []
    real = inline.run

    def run(*a, **kw):
        used.append(True)
        return real(*a, **kw)

    inline.run = run
    there = rank_suspects(_Quiet(), corpus, 50, 2, executor=inline)
    assert used and there == here
