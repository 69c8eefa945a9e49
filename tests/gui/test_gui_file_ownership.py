"""Other programs and other windows, in the application (issue 22, cases 1–3): a file changed on
disk is never overwritten silently, a second window on one file is read-only, and two windows
never share a recovery file. The questions are answered by replacing a method of ``Dialogs``;
the dialogs themselves are clicked through once."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("PySide6")

from helpers.changed_on_disk import CONLL, sed_i
from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QLabel, QMessageBox

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span

# sentence 2: "Peter Blackburn" (PER); sentence 3: "BRUSSELS 1996-08-22" (LOC)
MINE = [Span(0, 2, "ORG")]
THEIRS_OLD, THEIRS_NEW = "BRUSSELS NNP B-NP B-LOC", "BRUSSELS NNP B-NP B-ORG"


@pytest.fixture
def corpus_file(tmp_path):
    p = tmp_path / "eng.testb"
    p.write_text(CONLL, encoding="utf-8")
    return p


def _open(make_window, path, asked=None, answer="cancel"):
    w = make_window()
    w.dialogs.ask_recover = lambda path, summary="": pytest.fail(
        f"unexpected recovery offer: {path}"
    )
    if asked is not None:
        w.dialogs.ask_disk_changed = lambda *a: asked.append(a) or answer
    assert w.load_corpus(str(path), attach=False)
    assert w.jobs.wait(30000)
    w.show()
    return w


def _activate() -> None:
    """The user switches away from the window and back."""
    app = QApplication.instance()
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationInactive)
    app.applicationStateChanged.emit(Qt.ApplicationState.ApplicationActive)


# --------------------------------------------------------------------------------------------
# case 1: a file changed on disk


@pytest.mark.data_integrity
def test_case1_another_programs_change_is_not_overwritten(make_window, corpus_file):
    """Relabel one entity, change another sentence with sed, switch away and back, Ctrl+S:
    the user is asked (on activation, and again on save), and the file keeps sed's change."""
    asked = []
    w = _open(make_window, corpus_file, asked)
    w.document.set_spans(1, MINE)
    sed_i(corpus_file, THEIRS_OLD, THEIRS_NEW)
    _activate()
    n_activation = len(asked)
    _activate()
    w.act_save_corpus.trigger()
    assert read_corpus(str(corpus_file)).sentences[2].spans == [
        Span(0, 1, "ORG")
    ]  # sed's change is there
    assert w.isWindowModified()
    assert "Not saved" in w.statusBar().currentMessage()
    # asked on activation, once for one change
    assert n_activation == 1 and asked[0][1] == "changed"
    assert len(asked) == 2 and asked[-1][2] == 1  # and on save; one sentence edited here


def test_keep_both_merges_and_saves(make_window, corpus_file):
    asked = []
    w = _open(make_window, corpus_file, asked, "keep_both")
    w.document.set_spans(1, MINE)
    sed_i(corpus_file, THEIRS_OLD, THEIRS_NEW)
    assert w.save_corpus()
    assert asked[0][4] is True
    assert (
        asked[0][3]
        == "Keep both: 1 sentence takes the file's entities, 1 sentence keeps this window's."
    )
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == MINE and back.sentences[2].spans == [Span(0, 1, "ORG")]
    assert not w.isWindowModified()
    w.act_undo.trigger()  # the merge is one step
    assert w.document.spans(2) == [Span(0, 1, "LOC")] and w.document.spans(1) == MINE


def test_keep_both_is_not_offered_when_their_tokens_changed(make_window, corpus_file):
    asked = []
    w = _open(make_window, corpus_file, asked)
    w.document.set_spans(1, MINE)
    sed_i(corpus_file, "Commission NNP", "Commissioner NNP")
    assert not w.save_corpus()
    ((_path, status, edits, keep, can_keep, _when, can_overwrite),) = asked
    assert (
        status == "changed"
        and edits == 1
        and not can_keep
        and "tokens of sentence 4 changed" in keep
    )
    assert can_overwrite


def test_reload_shows_their_version(make_window, corpus_file):
    w = _open(make_window, corpus_file, [], "reload")
    w.dialogs.ask_unsaved = lambda: pytest.fail("Reload was the answer: no second question")
    w.document.set_spans(1, MINE)
    sed_i(corpus_file, THEIRS_OLD, THEIRS_NEW)
    assert not w.save_corpus()
    assert w.jobs.wait(30000)
    assert w.document.spans(2) == [Span(0, 1, "ORG")] and w.document.spans(1) == [Span(0, 2, "PER")]
    assert not w.isWindowModified()
    assert read_corpus(str(corpus_file)).sentences[1].spans == [Span(0, 2, "PER")]


def test_overwrite_writes_mine(make_window, corpus_file):
    w = _open(make_window, corpus_file, [], "overwrite")
    w.document.set_spans(1, MINE)
    sed_i(corpus_file, THEIRS_OLD, THEIRS_NEW)
    assert w.save_corpus()
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == MINE and back.sentences[2].spans == [Span(0, 1, "LOC")]


def test_a_deleted_file_is_reported_and_saved_again(make_window, corpus_file):
    asked = []
    w = _open(make_window, corpus_file, asked, "overwrite")
    w.document.set_spans(1, MINE)
    corpus_file.unlink()
    _activate()
    assert asked and asked[0][1] == "missing"
    assert read_corpus(str(corpus_file)).sentences[1].spans == MINE  # "Save here again"


def test_the_disk_changed_dialog_offers_the_choices(qtbot, make_window, corpus_file):
    w = make_window()
    seen = {}

    def click(label):
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, lambda: click(label))
            return
        seen["buttons"] = [b.text() for b in box.buttons()]
        seen["default"] = box.defaultButton().text()
        seen["text"] = box.text() + "\n" + box.informativeText()
        next(b for b in box.buttons() if b.text() == label).click()

    QTimer.singleShot(0, lambda: click("Overwrite"))
    keep = "Keep both: 1 sentence takes the file's entities."
    assert (
        w.dialogs.ask_disk_changed(str(corpus_file), "changed", 3, keep, True, "12:41:03")
        == "overwrite"
    )
    assert seen["default"] == "Keep both"
    assert {"Keep both", "Reload (drop my edits)", "Overwrite", "Save as…"} <= set(seen["buttons"])
    assert (
        "eng.testb" in seen["text"]
        and "unsaved edits in 3 sentences" in seen["text"]
        and "12:41:03" in seen["text"]
    )
    QTimer.singleShot(0, lambda: click("Save here again"))
    assert w.dialogs.ask_disk_changed(str(corpus_file), "missing", 1, "", False) == "overwrite"
    assert "deleted or moved" in seen["text"]


def _click_later(label, seen):
    """Click the button ``label`` of the message box that is about to open."""

    def click():
        box = QApplication.activeModalWidget()
        if not isinstance(box, QMessageBox):
            QTimer.singleShot(50, click)
            return
        seen["buttons"] = [b.text() for b in box.buttons()]
        seen["text"] = box.text()
        next(b for b in box.buttons() if b.text() == label).click()

    QTimer.singleShot(0, click)


def test_the_recovery_and_lock_dialogs_answer(make_window):
    w = make_window()
    seen = {}
    summary = "3 sentences of eng.testb edited 4 minutes ago by process 1234 on host"
    for label, answer in (("Recover", True), ("Discard them", False), ("Ask me later", None)):
        _click_later(label, seen)
        assert w.dialogs.ask_recover("/tmp/x.recovery.json", summary) is answer
        assert summary in seen["text"]
    _click_later("Save as…", seen)
    assert (
        w.dialogs.ask_locked("/data/eng.testb", "ann@host (process 1234, since 14:05)") == "save_as"
    )
    assert "eng.testb" in seen["text"] and "process 1234" in seen["text"]


# --------------------------------------------------------------------------------------------
# case 2: two windows on one file


@pytest.mark.data_integrity
def test_case2_two_windows_do_not_overwrite_each_other(make_window, corpus_file):
    """Both edit a different sentence and save: the second is read-only (it says who holds the
    file) and cannot overwrite the first; once the first closes, Keep both saves both edits."""
    w1 = _open(make_window, corpus_file, [])
    asked = []
    w2 = _open(make_window, corpus_file, asked, "keep_both")
    locked = []
    w2.dialogs.ask_locked = lambda path, holder: locked.append(holder) or "cancel"
    w1.document.set_spans(0, [])
    w2.document.set_spans(1, MINE)
    assert w1.save_corpus()
    w2.save_corpus()
    assert read_corpus(str(corpus_file)).sentences[0].spans == []  # the first window's save stands
    assert w2.isWindowModified()  # the second's edit is not lost either: still unsaved
    assert locked and f"process {os.getpid()}" in locked[0]  # the user was told who holds the file
    label = w2.findChild(QLabel, "readOnlyLabel")
    assert label.isVisible() and f"process {os.getpid()}" in label.text()
    assert not w1.findChild(QLabel, "readOnlyLabel").isVisible()
    assert "(read-only)" in w2.windowTitle() and "(read-only)" not in w1.windowTitle()
    w1.close()
    _activate()  # the lock is free: w2 takes it, and sees w1's save on disk
    assert not label.isVisible() and "(read-only)" not in w2.windowTitle()
    assert asked and asked[0][1] == "changed"
    assert w2.save_corpus()
    back = read_corpus(str(corpus_file))
    assert back.sentences[0].spans == [] and back.sentences[1].spans == MINE


# --------------------------------------------------------------------------------------------
# case 3: recovery files per window

_EDITOR = r"""
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from nerstudio.corpus.model import Span
from nerstudio.gui.main_window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.IniFormat))
w.dialogs.ask_recover = lambda *a: None
assert w.load_corpus(sys.argv[2], attach=False)
w.annotation.autosaved.connect(lambda p: print("AUTOSAVED", p, flush=True))
w.document.set_spans(int(sys.argv[3]), [])
app.exec()
"""


@pytest.mark.slow
@pytest.mark.data_integrity
def test_case3_two_killed_windows_are_both_recovered(qtbot, tmp_path, make_window, corpus_file):
    """Two instances edit the same file, autosave, and are killed with kill -9: the next one
    offers both instances' edits, saying of which file, how many sentences and how long ago."""
    w0 = make_window()  # its settings file names the recovery folder the children use too
    settings = w0.settings.fileName()
    w0.close()
    script = tmp_path / "editor.py"
    script.write_text(_EDITOR, encoding="utf-8")
    procs, saved = [], []
    try:
        for k in (0, 2):
            p = subprocess.Popen(
                [sys.executable, str(script), settings, str(corpus_file), str(k)],
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
            )
            procs.append(p)
        for p in procs:
            deadline = time.monotonic() + 90
            while time.monotonic() < deadline:
                line = p.stdout.readline()
                if not line or line.startswith("AUTOSAVED"):
                    saved.append(line.split(None, 1)[1].strip() if line else None)
                    break
        assert all(saved), "an instance never autosaved"
        for p in procs:
            p.send_signal(signal.SIGKILL)
            p.wait(10)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait(10)
            p.stdout.close()
    w = make_window()
    offered = []
    w.dialogs.ask_recover = lambda path, summary="": offered.append((path, summary)) or True
    assert w.load_corpus(str(corpus_file), attach=False)
    assert sorted(p for p, _ in offered) == sorted(saved) and len(set(saved)) == 2
    for _path, summary in offered:
        assert re.match(
            r"1 sentence of eng\.testb edited (just now|\d+ seconds ago) by process \d+ on ",
            summary,
        )
    assert w.document.spans(0) == [] and w.document.spans(2) == []  # both instances' edits
    assert not w.findChild(
        QLabel, "readOnlyLabel"
    ).isVisible()  # the killed holder's lock is taken over
    assert w.save_corpus()
    assert all(not os.path.exists(p) for p in saved)


@pytest.mark.slow
def test_a_read_only_window_names_the_window_that_took_the_lock_over(
    tmp_path, make_window, corpus_file
):
    """Three windows on one file: another process's window holds it, two windows here open it
    read-only. That process is killed; the first window here takes the lock over when the
    application is active again. The other stays read-only, is offered nothing, and names the
    window that holds the file now, not the killed one."""
    w0 = make_window()  # its settings file names the recovery folder the child uses too
    settings = w0.settings.fileName()
    w0.close()
    script = tmp_path / "editor.py"
    script.write_text(_EDITOR, encoding="utf-8")
    p = subprocess.Popen(
        [sys.executable, str(script), settings, str(corpus_file), "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        deadline = time.monotonic() + 90
        line = ""
        while time.monotonic() < deadline and not line.startswith("AUTOSAVED"):
            line = p.stdout.readline() or "AUTOSAVED?"
        assert line.startswith("AUTOSAVED "), "the other window never autosaved"
        w2 = _open(make_window, corpus_file)
        w3 = _open(make_window, corpus_file)  # fails on an offer
        label = w3.findChild(QLabel, "readOnlyLabel")
        assert f"process {p.pid}," in label.text()
        p.send_signal(signal.SIGKILL)
        p.wait(10)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait(10)
        p.stdout.close()
    offered = []
    w2.dialogs.ask_recover = lambda path, summary="": offered.append(path) or True
    _activate()
    assert len(offered) == 1 and "(read-only)" not in w2.windowTitle()
    assert "(read-only)" in w3.windowTitle()
    assert f"process {os.getpid()}," in label.text() and f"process {p.pid}," not in label.text()


# --------------------------------------------------------------------------------------------
# a killed holder's recovery file goes to the window that takes its lock over


@pytest.mark.slow
@pytest.mark.data_integrity
@pytest.mark.parametrize("how", ["save", "activate"])
def test_the_window_taking_a_killed_holders_lock_is_offered_its_edits(
    make_window, corpus_file, how
):
    """Window 1 autosaves and is killed while window 2 has the file open read-only. Window 2
    takes the lock over (on Save, or when the application is active again) and is offered
    window 1's edits; a later window is read-only and offered nothing; window 2 saves both."""
    w1 = _open(make_window, corpus_file)
    w1.document.set_spans(1, MINE)
    p1 = w1.annotation.autosave_now()
    w2 = _open(make_window, corpus_file)  # read-only: fails on an offer
    assert "(read-only)" in w2.windowTitle()
    w2.document.set_spans(2, [])
    w1.annotation.timer.stop()
    w1.annotation.autosaver.instance.abandon()  # kill -9: its lock and recovery file stay
    offered = []
    w2.dialogs.ask_recover = lambda path, summary="": offered.append(path) or True
    if how == "save":
        assert not w2.save_corpus()  # the lock is taken, the edits recovered: look, then save
        assert "Not saved yet" in w2.statusBar().currentMessage()
    else:
        _activate()
    assert offered == [p1]
    assert "(read-only)" not in w2.windowTitle()
    assert w2.document.spans(1) == MINE and w2.document.spans(2) == []
    w2.act_undo.trigger()  # the recovery is one undoable edit
    assert w2.document.spans(1) == [Span(0, 2, "PER")] and w2.document.spans(2) == []
    w2.act_redo.trigger()
    w3 = _open(make_window, corpus_file)  # a later window: read-only, never offered
    assert "(read-only)" in w3.windowTitle()
    assert w2.save_corpus()
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == MINE and back.sentences[2].spans == []
    assert not os.path.exists(p1)


@pytest.mark.data_integrity
def test_save_as_takes_the_windows_recovery_file_along(make_window, corpus_file, tmp_path):
    """After Save as, the old name has no recovery file: reopening it offers nothing."""
    w = _open(make_window, corpus_file)
    w.document.set_spans(1, MINE)
    old = w.annotation.autosave_now()
    new = tmp_path / "copy.conll"
    w.dialogs.ask_save = lambda *a: str(new)
    assert w.annotation.save_corpus_as_dialog()
    assert not os.path.exists(old)
    w.close()
    w2 = _open(make_window, corpus_file)  # fails on an offer
    assert w2.document.spans(1) == [Span(0, 2, "PER")]


def test_a_damaged_recovery_file_is_reported_in_one_line_and_kept(make_window, corpus_file):
    """Overlapping spans in a recovery file: refused with one line naming it, set aside, the
    corpus opens unchanged."""
    w1 = _open(make_window, corpus_file)
    w1.document.set_spans(1, MINE)
    path = w1.annotation.autosave_now()
    w1.annotation.timer.stop()
    w1.annotation.autosaver.instance.abandon()
    w1.annotation.owner.file.release()
    text = open(path, encoding="utf-8").read()
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace('[[0, 2, "ORG"]]', '[[0, 2, "ORG"], [1, 2, "PER"]]'))
    warned = []
    w = make_window()
    w.dialogs.ask_recover = lambda *a: pytest.fail("a damaged file was offered")
    w.dialogs.warning = lambda title, msg: warned.append(msg)
    assert w.load_corpus(str(corpus_file), attach=False)
    (msg,) = warned
    assert path in msg and "overlap" in msg and "\n" not in msg
    assert os.path.exists(path + ".unreadable") and not w.isWindowModified()


# --------------------------------------------------------------------------------------------
# a large corpus is saved in a thread


def test_a_large_corpus_is_saved_in_the_background(qtbot, make_window, corpus_file):
    """Every corpus counts as large here: Save returns at once, an edit made meanwhile stays
    unsaved, the file holds what was there when Save was pressed."""
    w = make_window()
    w.settings.setValue("annotation/backgroundSaveTokens", 1)
    w2 = make_window()  # the setting is read when the window is made
    w.close()
    w2.dialogs.ask_recover = lambda path, summary="": pytest.fail("no recovery expected")
    assert w2.load_corpus(str(corpus_file), attach=False)
    w2.document.set_spans(1, MINE)
    assert w2.save_corpus()
    w2.document.set_spans(2, [])  # while it is written
    qtbot.waitUntil(lambda: not w2.annotation.owner.saving, timeout=10000)
    assert "Saved" in w2.statusBar().currentMessage()
    back = read_corpus(str(corpus_file))
    assert back.sentences[1].spans == MINE and back.sentences[2].spans == [Span(0, 1, "LOC")]
    assert w2.isWindowModified() and w2.document.unsaved() == [2]
    w2.act_undo.trigger()
    assert not w2.isWindowModified()


def test_an_edit_made_while_the_save_thread_writes_stays_unsaved(
    qtbot, make_window, corpus_file, monkeypatch
):
    """The save thread is held where it lets the window's thread in (its pacing) until the
    window has made an edit: the file holds what was shown when Save was pressed, the edit stays
    unsaved, and undoing it shows what the file holds."""
    import threading

    from nerstudio.gui.controllers import file_owner

    edited = threading.Event()

    class Held(file_owner.Pacer):
        def __call__(self) -> None:
            assert edited.wait(10)

    monkeypatch.setattr(file_owner, "Pacer", Held)
    w = make_window()
    w.settings.setValue("annotation/backgroundSaveTokens", 1)
    w2 = make_window()
    w.close()
    w2.dialogs.ask_recover = lambda path, summary="": pytest.fail("no recovery expected")
    assert w2.load_corpus(str(corpus_file), attach=False)
    w2.document.set_spans(1, MINE)
    shown = [list(s.spans) for s in w2.document.corpus.sentences]
    assert w2.save_corpus() and w2.annotation.owner.saving
    w2.document.set_spans(2, [])  # the save thread is writing (held) meanwhile
    edited.set()
    qtbot.waitUntil(lambda: not w2.annotation.owner.saving, timeout=10000)
    assert "Saved" in w2.statusBar().currentMessage()
    assert [list(s.spans) for s in read_corpus(str(corpus_file)).sentences] == shown
    assert w2.isWindowModified() and w2.document.unsaved() == [2]
    w2.act_undo.trigger()
    assert not w2.isWindowModified()
    assert [list(s.spans) for s in w2.document.corpus.sentences] == shown


def test_a_background_save_asks_when_its_write_finds_the_file_changed(
    qtbot, make_window, corpus_file
):
    """A change the sizes and times do not show (same size) is found by the save thread, which
    writes nothing; the window then asks, as for a change seen when Save was pressed."""
    w = make_window()
    w.settings.setValue("annotation/backgroundSaveTokens", 1)
    asked: list = []
    w2 = _open(make_window, corpus_file, asked, answer="cancel")
    w.close()
    w2.document.set_spans(1, MINE)
    sed_i(corpus_file, "BRUSSELS NNP B-NP B-LOC", "BRUSSELS NNP B-NP B-ORG")  # same size
    theirs = corpus_file.read_bytes()
    assert w2.save_corpus()  # begun: Save cannot tell yet
    qtbot.waitUntil(lambda: not w2.annotation.owner.saving, timeout=10000)
    assert len(asked) == 1 and asked[0][1] == "changed"
    assert "Not saved" in w2.statusBar().currentMessage()
    assert corpus_file.read_bytes() == theirs
    assert w2.isWindowModified() and w2.document.unsaved() == [1]
