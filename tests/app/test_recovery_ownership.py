"""Recovery belongs to the file, without a window: only the instance holding a corpus's lock is
offered (and may remove) another instance's recovery file, restoring is an undoable edit that
can be saved, Save as takes the recovery file along, and a damaged recovery file is refused with
one line naming it, never a crash and never spans that cannot be saved."""

from __future__ import annotations

import json
import os

import pytest
from helpers.changed_on_disk import CONLL

from nerstudio.app import autosave, recovery
from nerstudio.app.autosave import Autosaver, restore
from nerstudio.app.document import Document
from nerstudio.app.saving import CorpusFile
from nerstudio.corpus.filelock import Instance
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span

MINE = [Span(0, 2, "ORG")]  # sentence 1, "Peter Blackburn", is PER in the file


@pytest.fixture
def corpus_file(tmp_path):
    p = tmp_path / "eng.testb"
    p.write_text(CONLL, encoding="utf-8")
    return p


@pytest.fixture
def rec(tmp_path):
    return str(tmp_path / "recovery")


class Window:
    """What a window holds of a corpus, without Qt: the document, its hold on the file (the
    lock) and its autosaver, all one instance."""

    def __init__(self, path, rec):
        self.doc = Document()
        self.instance = Instance.new()
        self.file = CorpusFile(self.doc, self.instance)
        self.saver = Autosaver(self.doc, rec, instance=self.instance)
        self.doc.open(read_corpus(str(path)), disk=None)

    def kill(self) -> None:
        """``kill -9``: the lock and the recovery file stay, the instance is gone."""
        self.instance.abandon()

    def close(self) -> None:
        self.file.close()


def _dead_recovery(path, rec, spans=MINE, k=1) -> str:
    """The recovery file a killed window left with sentence ``k`` edited to ``spans``."""
    w = Window(path, rec)
    w.doc.set_spans(k, spans)
    written = w.saver.write()
    w.kill()
    w.file.release()
    return written


# --------------------------------------------------------------------------------------------
# who is offered


@pytest.mark.data_integrity
def test_only_the_lock_holder_is_offered_a_killed_windows_recovery(corpus_file, rec):
    """Window 1 autosaves and is killed while window 2 has the file open read-only: window 2 is
    offered window 1's edits once it has taken the lock over, a later read-only window never;
    restored, they are one undoable edit that window 2 saves."""
    w1 = Window(corpus_file, rec)
    w1.doc.set_spans(1, MINE)
    p1 = w1.saver.write()
    w2 = Window(corpus_file, rec)
    assert w2.file.read_only and w2.saver.offers() == []  # window 1 is still editing
    w1.kill()
    assert w2.saver.offers() == []  # the lock names window 1 still: taken over first
    assert w2.file.retry_lock() and not w2.file.read_only
    w3 = Window(corpus_file, rec)
    assert w3.file.read_only
    assert w3.saver.offers() == []  # read-only: it could not save them
    (offer,) = w2.saver.offers()
    assert offer.path == p1 and offer.edits == {1: MINE}
    w2.doc.set_spans(2, [])  # window 2's own edit, before
    assert restore(w2.doc, offer) == [1]
    w2.saver.adopt(offer)
    assert w2.doc.spans(1) == MINE
    w2.doc.undo()  # the recovery is one undoable step
    assert w2.doc.spans(1) == [Span(0, 2, "PER")] and w2.doc.spans(2) == []
    w2.doc.redo()
    w3.doc.set_spans(3, [])
    w3.saver.write()  # the read-only window's own file: window 1's stays
    assert os.path.exists(p1)
    w2.file.save()
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == MINE and back.sentences[2].spans == []
    assert not os.path.exists(p1)  # saved: window 1's file is done with
    for w in (w2, w3):
        w.close()


@pytest.mark.data_integrity
def test_a_read_only_window_never_removes_another_instances_recovery_file(corpus_file, rec):
    """A recovery file that changes nothing the read-only window sees is not its to remove:
    the window holding the file may have edits it does not."""
    dead = Instance.new()
    dead.abandon()
    same = recovery.recovery_path(str(corpus_file), rec, dead.tag)
    recovery.write_recovery(same, read_corpus(str(corpus_file)), [1], dead.to_dict())  # as saved
    holder = Window(corpus_file, rec)
    reader = Window(corpus_file, rec)
    assert reader.file.read_only
    assert reader.saver.offers() == [] and os.path.exists(same)
    holder.close()
    reader.close()


@pytest.mark.data_integrity
def test_a_recovery_equal_to_unsaved_edits_goes_only_once_ours_holds_them(corpus_file, rec):
    """The holder's unsaved edit equals a dead instance's: nothing to offer, but its file stays
    until this window's own recovery file holds the edit (discarding on close would lose it)."""
    dead = _dead_recovery(corpus_file, rec)
    w = Window(corpus_file, rec)
    w.doc.set_spans(1, MINE)
    assert w.saver.offers() == [] and os.path.exists(dead)
    mine = w.saver.write()
    assert not os.path.exists(dead) and recovery.read_recovery(mine).edits == {1: MINE}
    w.close()


# --------------------------------------------------------------------------------------------
# Save as


@pytest.mark.data_integrity
def test_save_as_takes_the_recovery_file_along(corpus_file, rec, tmp_path):
    """After Save as, reopening the old file offers nothing: its edits were saved elsewhere."""
    w = Window(corpus_file, rec)
    w.doc.set_spans(1, MINE)
    old = w.saver.write()
    new = tmp_path / "copy.conll"
    w.file.save(str(new))
    assert not os.path.exists(old)
    assert recovery.recovery_files(str(corpus_file), rec) == []
    w.kill()
    w.file.release()
    again = Window(corpus_file, rec)
    assert again.saver.offers() == []
    again.close()


@pytest.mark.data_integrity
def test_edits_made_during_save_as_are_kept_under_the_new_name_first(
    corpus_file, rec, tmp_path, monkeypatch
):
    """An edit made while Save as writes stays unsaved: its recovery file is written under the
    new name before the old name's goes, so a crash in between loses nothing."""
    w = Window(corpus_file, rec)
    w.doc.set_spans(1, MINE)
    old = w.saver.write()
    new = tmp_path / "copy.conll"
    seen = []
    remove = os.remove

    def watched(path):
        if path == old:  # what a crash right now would leave
            seen.append(
                {p: recovery.read_recovery(p).edits for p in recovery.recovery_files(str(new), rec)}
            )
        remove(path)

    monkeypatch.setattr(autosave.os, "remove", watched)
    pending = w.file.begin_save(str(new))
    w.doc.set_spans(2, [])  # while it is written
    pending.run()
    w.file.finish_save(pending)
    assert seen == [{w.saver.recovery_file(): {2: []}}]
    assert not os.path.exists(old) and w.doc.unsaved() == [2]
    assert recovery.read_recovery(w.saver.recovery_file()).corpus_path == str(new)
    w.close()


# --------------------------------------------------------------------------------------------
# damaged recovery files


def _mutate(obj, case):
    s = obj["sentences"][0]
    if case == "index as text":
        s["index"] = "1"
    elif case == "negative index":
        s["index"] = -1
    elif case == "index beyond the corpus":
        s["index"] = 10**6
    elif case == "listed twice":
        obj["sentences"].append(dict(s))
    elif case == "overlapping spans":
        s["spans"] = [[0, 2, "ORG"], [1, 2, "PER"]]
    elif case == "span beyond the sentence":
        s["spans"] = [[0, 9, "ORG"]]
    elif case == "empty span":
        s["spans"] = [[1, 1, "ORG"]]
    elif case == "span as object":
        s["spans"] = [{"start": 0, "end": 2, "label": "ORG"}]
    elif case == "boolean offsets":
        s["spans"] = [[False, True, "ORG"]]
    elif case == "null label":
        s["spans"] = [[0, 2, None]]
    elif case == "number label":
        s["spans"] = [[0, 2, 5]]
    elif case == "label with a tab":
        s["spans"] = [[0, 2, "ORG\tX"]]
    elif case == "other words":
        s["words"] = ["Paul", "Blackburn"]
    elif case == "words not strings":
        s["words"] = [1, 2]
    elif case == "missing spans":
        del s["spans"]
    elif case == "sentences not a list":
        obj["sentences"] = {"1": s}
    elif case == "version as text":
        obj["version"] = "1"
    elif case == "time as text":
        obj["written"] = "yesterday"
    elif case == "owner a number":
        obj["owner"] = 5
    elif case == "corpus a list":
        obj["corpus"] = ["x"]
    elif case == "unknown field":
        obj["extra"] = 1
    elif case == "reviewed as text":
        obj["state"]["reviewed"] = "abc"
    elif case == "flagged out of range":
        obj["state"]["flagged"] = [999]
    elif case == "notes a list":
        obj["state"]["notes"] = ["x"]
    elif case == "note key not a number":
        obj["state"]["notes"] = {"x": "y"}
    elif case == "state a list":
        obj["state"] = []
    else:
        raise AssertionError(case)
    return json.dumps(obj)


STRUCTURE = [
    "index as text",
    "negative index",
    "index beyond the corpus",
    "listed twice",
    "overlapping spans",
    "span beyond the sentence",
    "empty span",
    "span as object",
    "boolean offsets",
    "null label",
    "number label",
    "label with a tab",
    "other words",
    "words not strings",
    "missing spans",
    "sentences not a list",
    "version as text",
    "time as text",
    "owner a number",
    "corpus a list",
    "unknown field",
    "reviewed as text",
    "flagged out of range",
    "notes a list",
    "note key not a number",
    "state a list",
]
RAW = {
    "not JSON": b"{not json",
    "not UTF-8": b'{"format": "\xff"}',
    "nested too deep": b"[" * 100_000,
    "a list": b"[]",
    "NaN time": b'{"format": "nerstudio-recovery", "version": 1, "written": NaN}',
}


@pytest.mark.data_integrity
@pytest.mark.parametrize("case", STRUCTURE + list(RAW))
def test_a_damaged_recovery_file_is_refused_in_one_line(corpus_file, rec, case):
    path = _dead_recovery(corpus_file, rec)
    if case in RAW:
        data = RAW[case]
    else:
        obj = json.loads(open(path, encoding="utf-8").read())
        obj["state"]["notes"] = {"1": "a note"}
        data = _mutate(obj, case).encode("utf-8")
    with open(path, "wb") as f:
        f.write(data)
    w = Window(corpus_file, rec)
    (offer,) = w.saver.offers()  # never raises
    assert offer.edits is None  # nothing of it can be restored
    line = offer.summary()
    assert path in line and "\n" not in line and "Traceback" not in line
    assert w.saver.set_aside(offer) == path + ".unreadable"
    assert w.saver.offers() == [] and not w.doc.is_dirty()
    w.close()


def test_a_label_the_corpus_already_has_is_recovered(tmp_path, rec):
    """A label with a space is refused unless the corpus has it already (a JSONL corpus may)."""
    p = tmp_path / "works.jsonl"
    p.write_text(
        json.dumps({"text": "Moby Dick", "spans": [[0, 9, "WORK OF ART"]]})
        + "\n"
        + json.dumps({"text": "Peter Blackburn", "spans": []})
        + "\n",
        encoding="utf-8",
    )
    dead = _dead_recovery(p, rec, [Span(0, 2, "WORK OF ART")])
    w = Window(p, rec)
    (offer,) = w.saver.offers()
    assert offer.edits == {1: [Span(0, 2, "WORK OF ART")]} and offer.path == dead
    restore(w.doc, offer)
    w.file.save()
    assert read_corpus(str(p)).sentences[1].spans == [Span(0, 2, "WORK OF ART")]
    w.close()


@pytest.mark.data_integrity
def test_a_recovery_file_never_puts_back_what_a_save_replaced(corpus_file, rec):
    """Sentence 1 autosaved as ORG, then made LOC and saved in the background while the
    annotator edits sentence 2: the file holds LOC. A crash right after must not restore the
    recovery file's older ORG over it (the file written before the save held the state before
    it); the edit made during the save is kept too."""
    w = Window(corpus_file, rec)
    w.doc.set_spans(1, MINE)
    w.saver.write()
    w.doc.set_spans(1, [Span(0, 2, "LOC")])
    pending = w.file.begin_save()
    w.doc.set_spans(2, [])  # while it is written
    pending.run()
    w.file.finish_save(pending)
    assert read_corpus(str(corpus_file)).sentences[1].spans == [Span(0, 2, "LOC")]
    w.kill()
    again = Window(corpus_file, rec)
    for offer in again.saver.offers():
        restore(again.doc, offer)
    assert again.doc.spans(1) == [Span(0, 2, "LOC")] and again.doc.spans(2) == []
    again.close()
