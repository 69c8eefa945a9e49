"""Autosave and recovery keep review states, notes and flags exactly, with the spans: in the
document model, and in a window killed (SIGKILL) after its autosave."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

from nerstudio.app import recovery
from nerstudio.app.autosave import Autosaver, restore
from nerstudio.app.document import Document
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR


@pytest.fixture
def corpus_file(tmp_path):
    dst = tmp_path / "todo.conll"
    dst.write_bytes((DEMO_DIR / "dev.conll").read_bytes())
    return dst


def _state(doc):
    return (
        doc.reviewed.copy(),
        dict(doc.notes),
        doc.flagged.copy(),
        [list(s.spans) for s in doc.corpus.sentences],
    )


def _same(a, b):
    return (
        np.array_equal(a[0], b[0]) and a[1] == b[1] and np.array_equal(a[2], b[2]) and a[3] == b[3]
    )


def _edit(doc):
    doc.set_spans(1, [Span(0, 1, "ORG")])  # an edit, then accepted (or left): reviewed
    doc.set_reviewed([1, 4])  # 4 accepted as it is
    doc.set_note(6, "ask about the acronym")
    doc.set_flag(6, True)
    doc.set_flag(9, True)
    doc.set_note(11, "a note only")


def test_recovery_restores_review_states_notes_flags_and_spans(corpus_file, tmp_path):
    rec = str(tmp_path / "recovery")
    dead = Document()
    dead.open(read_corpus(str(corpus_file)))
    saver = Autosaver(dead, rec)
    _edit(dead)
    want = _state(dead)
    path = saver.write()
    assert path and recovery.read_recovery(path).state["flagged"] == [6, 9]
    saver.instance.abandon()  # the window is killed: nothing saved, nothing cleaned up
    doc = Document()
    doc.open(read_corpus(str(corpus_file)))
    fresh = _state(doc)
    (offer,) = Autosaver(doc, rec).offers()
    assert sorted(offer.marked) == [1, 4, 6, 9, 11] and offer.n == 5
    changed = restore(doc, offer)
    assert changed == [1, 4, 6, 9, 11]
    assert _same(_state(doc), want)
    assert doc.undo() is not None  # one undoable step, back to the file's state
    assert _same(_state(doc), fresh) and doc.undo() is None


def test_a_recovery_that_takes_a_review_back_is_still_one_undo_step(corpus_file, tmp_path):
    """The killed window had marked a sentence that the file has reviewed pre-annotated again:
    that is a second command of the recovery, joined to the first, so one undo (and one redo)
    takes the whole recovery."""
    rec = str(tmp_path / "recovery")
    n = len(read_corpus(str(corpus_file)))
    on_file = np.zeros(n, dtype=bool)
    on_file[[2, 3]] = True  # what the corpus file's review says
    dead = Document()
    dead.open(read_corpus(str(corpus_file)), reviewed=on_file.copy())
    saver = Autosaver(dead, rec)
    dead.set_spans(1, [Span(0, 1, "ORG")])
    dead.set_reviewed([3], False)
    want = _state(dead)
    assert saver.write()
    saver.instance.abandon()
    doc = Document()
    doc.open(read_corpus(str(corpus_file)), reviewed=on_file.copy())
    fresh = _state(doc)
    (offer,) = Autosaver(doc, rec).offers()
    assert restore(doc, offer) == [1, 3]
    assert _same(_state(doc), want)
    assert doc.undo() is not None
    assert _same(_state(doc), fresh) and doc.undo() is None
    assert doc.redo() is not None
    assert _same(_state(doc), want) and doc.redo() is None


def test_a_note_alone_is_autosaved_and_offered(corpus_file, tmp_path):
    rec = str(tmp_path / "recovery")
    dead = Document()
    dead.open(read_corpus(str(corpus_file)))
    saver = Autosaver(dead, rec)
    dead.set_note(2, "check")  # no span changes: the old autosave wrote nothing
    assert saver.write()
    saver.instance.abandon()
    doc = Document()
    doc.open(read_corpus(str(corpus_file)))
    (offer,) = Autosaver(doc, rec).offers()
    assert offer.edits == {} and offer.marked == (2,)
    assert restore(doc, offer) == [2] and doc.notes == {2: "check"}


def test_a_state_written_for_another_corpus_length_is_ignored(corpus_file, tmp_path):
    rec = str(tmp_path / "recovery")
    dead = Document()
    dead.open(read_corpus(str(corpus_file)))
    saver = Autosaver(dead, rec)
    dead.set_spans(1, [Span(0, 1, "ORG")])
    path = saver.write()
    saver.instance.abandon()
    r = recovery.read_recovery(path)
    c = read_corpus(str(corpus_file))
    state = dict(r.state, sentences=len(c) + 1)
    recovery.write_recovery(path, dead.corpus, [1], r.owner, state)
    doc = Document()
    doc.open(read_corpus(str(corpus_file)))
    (offer,) = Autosaver(doc, rec).offers()
    assert offer.state is None and offer.edits == {1: [Span(0, 1, "ORG")]}
    restore(doc, offer)
    assert doc.spans(1) == [Span(0, 1, "ORG")] and not doc.reviewed.any()


_CRASH = r"""
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from nerstudio.corpus.model import Span
from nerstudio.gui.main_window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.IniFormat))
assert w.load_corpus(sys.argv[2], attach=False)
doc = w.document
w.annotation.autosaved.connect(lambda p: print("AUTOSAVED", p, flush=True))
doc.set_spans(1, [Span(0, 1, "ORG")])
doc.set_reviewed([1, 4])
doc.set_note(6, "ask about the acronym")
doc.set_flag(6, True)
doc.set_flag(9, True)
doc.set_note(11, "a note only")
app.exec()
"""


@pytest.mark.slow
def test_a_killed_window_recovers_review_states_notes_and_flags(qtbot, tmp_path, corpus_file):
    pytest.importorskip("PySide6")
    from PySide6.QtCore import QSettings

    from nerstudio.gui.main_window import MainWindow

    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    st.setValue("annotation/autosaveMs", 150)
    st.sync()
    script = tmp_path / "crash.py"
    script.write_text(_CRASH, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), st.fileName(), str(corpus_file)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        saved, deadline = None, time.monotonic() + 90
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("AUTOSAVED"):
                saved = line.split(None, 1)[1].strip()
                break
        assert saved, "the app never autosaved"
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
    # what the killed window had, made here the same way
    want_doc = Document()
    want_doc.open(read_corpus(str(corpus_file)))
    _edit(want_doc)
    want = _state(want_doc)
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_recover = lambda path, summary="": True
    w.dialogs.ask_unsaved = lambda: "discard"
    assert w.load_corpus(str(corpus_file), attach=False)
    assert _same(_state(w.document), want)
    assert w.isWindowModified()
