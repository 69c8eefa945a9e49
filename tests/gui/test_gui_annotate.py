"""Annotation in the sentence view: keys and mouse, undo/redo, accept a candidate, save, recovery."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QPoint, QSettings, Qt

from nerstudio.app import recovery
from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.gui.main_window import DEMO_DIR, DEMO_MODEL_DIR, MainWindow


def _settings(tmp_path) -> QSettings:
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    st.setValue("annotation/autosaveMs", 150)
    st.sync()
    return st


@pytest.fixture
def corpus_file(tmp_path):
    dst = tmp_path / "train.conll"
    shutil.copyfile(DEMO_DIR / "train.conll", dst)
    return dst


@pytest.fixture
def window(qtbot, tmp_path, corpus_file):
    w = MainWindow(_settings(tmp_path))
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"  # never block on a dialog in tests
    assert w.load_corpus(str(corpus_file), attach=False)
    nb = DEMO_MODEL_DIR / "train.nbest.npz"
    if nb.exists():
        assert w.load_nbest(str(nb))
        assert w.runner.wait(30000)
    w.show()
    return w


def _click(qtbot, view, token: int, shift: bool = False) -> None:
    c = view._boxes[token].center()
    qtbot.mouseClick(
        view,
        Qt.MouseButton.LeftButton,
        Qt.KeyboardModifier.ShiftModifier if shift else Qt.KeyboardModifier.NoModifier,
        QPoint(int(c.x()), int(c.y())),
    )


def _sentence_without_entities(corpus, n_min=4) -> int:
    return next(k for k, s in enumerate(corpus.sentences) if not s.spans and len(s) >= n_min)


# --------------------------------------------------------------------------------------------
# Qt-free edit functions


# --------------------------------------------------------------------------------------------
# the window


def test_keys_mouse_undo_redo_save_reload(window, qtbot, corpus_file):
    c = window.corpus
    original = corpus_file.read_bytes()
    view = window.sentence_view
    assert window.findChild(object, "sentenceView") is view
    k = _sentence_without_entities(c)
    window.select_sentence(k)
    assert view.words() == c.sentences[k].words
    # mouse: click token 1, Shift+click token 2, then the O key types them as ORG
    _click(qtbot, view, 1)
    _click(qtbot, view, 2, shift=True)
    assert view.selection() == (1, 3)
    qtbot.keyClick(view, Qt.Key.Key_O)
    assert c.sentences[k].spans == [Span(1, 3, "ORG")]
    assert window.isWindowModified()
    # keyboard: caret on the span, P retypes it; Ctrl+Left extends it to token 0
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert view.selection() == (1, 2)
    qtbot.keyClick(view, Qt.Key.Key_P)
    assert c.sentences[k].spans == [Span(1, 3, "PER")]
    qtbot.keyClick(view, Qt.Key.Key_Left, Qt.KeyboardModifier.ControlModifier)
    assert c.sentences[k].spans == [Span(0, 3, "PER")]
    # shrink from the right (the end moves left), split before the caret, merge back
    qtbot.keyClick(
        view,
        Qt.Key.Key_Left,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert c.sentences[k].spans == [Span(0, 2, "PER")]
    view.select_tokens(1, 2)
    qtbot.keyClicks(view, "/")
    assert c.sentences[k].spans == [Span(0, 1, "PER"), Span(1, 2, "PER")]
    view.select_tokens(0, 1)
    qtbot.keyClicks(view, "+")
    assert c.sentences[k].spans == [Span(0, 2, "PER")]
    # the entity table and the drawn gold follow
    assert window.entity_table.rowCount() == 1
    assert view.gold() == [Span(0, 2, "PER")]
    # Delete clears
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    assert c.sentences[k].spans == []
    stack = window.document.history
    assert stack.count() == 7  # one command per edit
    # undo everything, redo everything
    undo_button = window.findChild(object, "undoButton")
    assert undo_button is not None and window.findChild(object, "redoButton") is not None
    for _ in range(7):
        window.act_undo.trigger()
    assert c.sentences[k].spans == [] and not window.isWindowModified()
    for _ in range(6):
        window.act_redo.trigger()
    assert c.sentences[k].spans == [Span(0, 2, "PER")]
    assert window.isWindowModified()
    edited = {k: [Span(0, 2, "PER")]}

    # accept a candidate as gold on another sentence (undo jumps back to it)
    ses = window.document
    if ses.nbest is not None:
        k2 = next(
            j
            for j in range(len(c))
            if j != k
            and ses.nbest_row(j) >= 0
            and any(
                ses.nbest.spans(ses.nbest_row(j), x) != c.sentences[j].spans
                for x in range(1, ses.nbest.n_candidates(ses.nbest_row(j)))
            )
        )
        window.select_sentence(k2)
        i2 = ses.nbest_row(k2)
        j = next(
            x
            for x in range(1, ses.nbest.n_candidates(i2))
            if ses.nbest.spans(i2, x) != c.sentences[k2].spans
        )
        window.nbest_panel.select(j)
        before = list(c.sentences[k2].spans)
        window.findChild(object, "acceptButton").defaultAction().trigger()
        assert c.sentences[k2].spans == ses.nbest.spans(i2, j)
        assert ses.nbest.gold[i2] == ses.nbest.spans(i2, j)  # the next training run sees it
        window.act_undo.trigger()
        assert c.sentences[k2].spans == before
        window.act_redo.trigger()
        edited[k2] = list(ses.nbest.spans(i2, j))

    # save (Ctrl+S action), then reload
    window.act_save_corpus.trigger()
    assert not window.isWindowModified()
    assert not os.path.exists(window.annotation.recovery_file())
    again = read_corpus(str(corpus_file))
    for kk, s in enumerate(again.sentences):
        assert s.spans == edited.get(kk, read_spans(original, corpus_file.parent, kk)), kk
    # untouched sentences byte-identical: only the tag lines of edited sentences differ
    old_lines = original.split(b"\n")
    new_lines = corpus_file.read_bytes().split(b"\n")
    assert len(old_lines) == len(new_lines)
    allowed = set()
    for kk in edited:
        s = again.sentences[kk]
        allowed.update(range(s.line - 1, s.line - 1 + len(s)))
    diff = {n for n, (a, b) in enumerate(zip(old_lines, new_lines)) if a != b}
    assert diff and diff <= allowed
    # the same result as writing the original corpus with the edited spans
    orig = read_corpus(str(DEMO_DIR / "train.conll"))
    expect = orig.with_spans([edited.get(kk, s.spans) for kk, s in enumerate(orig.sentences)])
    write_corpus(expect, str(corpus_file.parent / "expect.conll"))
    assert (corpus_file.parent / "expect.conll").read_bytes() == corpus_file.read_bytes()


_ORIG_CACHE: dict = {}


def read_spans(data: bytes, folder, k: int):
    if "c" not in _ORIG_CACHE:
        _ORIG_CACHE["c"] = read_corpus(str(DEMO_DIR / "train.conll"))
    return _ORIG_CACHE["c"].sentences[k].spans


def test_close_asks_before_losing_edits(window, qtbot):
    c = window.corpus
    k = _sentence_without_entities(c)
    window.select_sentence(k)
    window.sentence_view.select_tokens(0, 1)
    window.annotation.type_selection("LOC")
    assert window.document.is_dirty()
    asked = []
    window.dialogs.ask_unsaved = lambda: asked.append(1) or "cancel"
    assert not window.close()  # cancelled: the window stays, the edit too
    assert asked and window.corpus is c and c.sentences[k].spans == [Span(0, 1, "LOC")]
    # opening another corpus asks too
    assert not window.load_corpus(str(DEMO_DIR / "dev.conll"))
    assert window.corpus is c
    window.dialogs.ask_unsaved = lambda: "discard"
    assert window.close()


def test_autosave_writes_a_recovery_file(window, qtbot):
    c = window.corpus
    k = _sentence_without_entities(c)
    window.select_sentence(k)
    window.sentence_view.select_tokens(1, 3)
    with qtbot.waitSignal(window.annotation.autosaved, timeout=5000) as blocker:
        window.annotation.type_selection("MISC")
    rec = recovery.read_recovery(blocker.args[0])
    assert rec.edits == {k: [Span(1, 3, "MISC")]}
    assert rec.corpus_path == os.path.abspath(c.path)


_CRASH_SCRIPT = r"""
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QSettings
from PySide6.QtWidgets import QApplication
app = QApplication([])
from nerstudio.gui.main_window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.IniFormat))
assert w.load_corpus(sys.argv[2], attach=False)
k = int(sys.argv[3])
w.select_sentence(k)
w.annotation.autosaved.connect(lambda p: print("AUTOSAVED", p, flush=True))
w.sentence_view.select_tokens(0, 2)
w.annotation.type_selection("ORG")
print("EDITED", flush=True)
app.exec()
"""


@pytest.mark.slow
def test_killed_app_recovers_the_edit(qtbot, tmp_path, corpus_file):
    st = _settings(tmp_path)
    k = _sentence_without_entities(read_corpus(str(corpus_file)))
    script = tmp_path / "crash.py"
    script.write_text(_CRASH_SCRIPT, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), st.fileName(), str(corpus_file), str(k)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    try:
        deadline = time.monotonic() + 90
        saved = None
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("AUTOSAVED"):
                saved = line.split(None, 1)[1].strip()
                break
        assert saved, "the app never autosaved"
        proc.send_signal(signal.SIGKILL)  # no chance to save or clean up
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()
    assert os.path.exists(saved)
    before = corpus_file.read_bytes()
    w = MainWindow(st)
    qtbot.addWidget(w)
    offered = []
    w.dialogs.ask_recover = lambda path, summary="": offered.append(path) or True
    w.dialogs.ask_unsaved = lambda: "discard"
    assert w.load_corpus(str(corpus_file), attach=False)
    assert offered == [saved]
    assert w.corpus.sentences[k].spans == [Span(0, 2, "ORG")]
    assert w.isWindowModified()
    assert corpus_file.read_bytes() == before  # recovered, not yet saved
    assert w.save_corpus()
    assert read_corpus(str(corpus_file)).sentences[k].spans == [Span(0, 2, "ORG")]
    assert not os.path.exists(saved)


# --------------------------------------------------------------------------------------------
# what depends on the gold follows an edit


def _sentence_with_other_candidate(window):
    """A sentence with candidates, one of which (j > 0) differs from the gold: (k, i, j)."""
    ses, c = window.document, window.corpus
    for k in range(len(c)):
        i = ses.nbest_row(k)
        if i < 0 or not c.sentences[k].spans:
            continue
        for j in range(1, ses.nbest.n_candidates(i)):
            if ses.nbest.spans(i, j) != c.sentences[k].spans and ses.nbest.spans(i, j):
                return k, i, j
    pytest.skip("no sentence with a differing candidate")


def test_a_gold_edit_refreshes_f_marks_and_counts(window, qtbot):
    from nerstudio.gui.models.nbest_model import NBestTableModel

    if window.document.nbest is None:
        pytest.skip("demo N-best list not built")
    k, i, j = _sentence_with_other_candidate(window)
    c, tm, ses = window.corpus, window.tree_model, window.document
    window.select_sentence(k)
    window.nbest_panel.select(j)
    model = window.nbest_panel.model
    f_col = lambda r: model.index(r, NBestTableModel.F).data()
    assert f_col(j) != "100.0"
    doc = tm.index(tm.document_of(k), 0)
    doc_count = lambda: doc.siblingAtColumn(2).data()
    sent = tm.index_of_sentence(k)
    before_doc = doc_count()
    new = ses.nbest.spans(i, j)
    assert window.accept_candidate(j)
    # the N-best table: F and the exact-match mark of every candidate, the selection stays
    assert f_col(j) == "100.0" and model.exact_marks()[j]
    exact_now = [ses.nbest.spans(i, x) == new for x in range(ses.nbest.n_candidates(i))]
    assert list(model.exact_marks()) == exact_now
    assert window.nbest_panel.selected() == [j] and window.sentence_view.candidate()[0] == new
    assert f"gold is candidate {exact_now.index(True) + 1}" in window.nbest_panel.header.text()
    # the browser: the sentence's ✓/✗ mark and entity count, and its document's count
    assert tm.status(k).startswith("✓" if exact_now[0] else "✗")
    assert sent.siblingAtColumn(2).data() == len(new)
    assert doc_count() == sum(len(s.spans) for s in c.documents[tm.document_of(k)].sentences)
    # the index behind the flags counts the new gold
    assert window.flags()["error"][k] == (not exact_now[0])
    # the corpus tab counts again when shown
    window.tabs.setCurrentWidget(window.summary)
    total = sum(len(s.spans) for s in c.sentences)
    assert f"<td>entities</td><td align=right>{total:,}</td>" in window.summary.text()
    # undo puts everything back
    window.act_undo.trigger()
    assert f_col(j) != "100.0" and doc_count() == before_doc


def test_recovered_edits_reach_the_nbest_list_attached_after_them(qtbot, tmp_path, corpus_file):
    """Recovery happens when the corpus opens; its N-best list is attached afterwards (in the
    worker). The recovered gold must still be in that list: in its quality columns and in what
    the next training run learns from."""
    src = DEMO_MODEL_DIR / "train.nbest.npz"
    if not src.exists():
        pytest.skip("demo N-best list not built")
    # found as the corpus's companion
    shutil.copyfile(src, corpus_file.with_name("train.nbest.npz"))
    st = _settings(tmp_path)
    probe = MainWindow(st)
    qtbot.addWidget(probe)
    probe.dialogs.ask_unsaved = lambda: "discard"
    assert probe.load_corpus(str(corpus_file))
    assert probe.runner.wait(30000)
    k, i, j = _sentence_with_other_candidate(probe)
    new = probe.document.nbest.spans(i, j)
    probe.close()
    # a recovery file with that edit, newer than the corpus
    c = read_corpus(str(corpus_file))
    c.sentences[k].spans = list(new)
    rec = recovery.recovery_path(str(corpus_file), str(tmp_path / "recovery"))
    recovery.write_recovery(rec, c, [k])
    t = os.path.getmtime(corpus_file) + 10
    os.utime(rec, (t, t))

    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    w.dialogs.ask_recover = lambda path, summary="": True
    assert w.load_corpus(str(corpus_file))  # recovery now, N-best list in the worker
    assert w.corpus.sentences[k].spans == new
    assert w.runner.wait(30000)
    ses = w.document
    assert ses.nbest_row(k) == i and ses.nbest.gold[i] == new  # what the next training run reads
    assert ses.nbest_index.exact()[ses.candidate_rows(i)][j]
    w.select_sentence(k)
    assert w.nbest_panel.model.exact_marks()[j] and w.tree_model.status(k).startswith(
        "✓" if j == 0 else "✗"
    )
    assert w.isWindowModified()
