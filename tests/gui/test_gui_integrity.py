"""Annotators never lose work: regression tests for issue 13's defects, in the real window.

1. saved edits were hidden (and then reverted on disk) when the corpus reopened with an N-best
   list holding the older gold;
2. steady editing never autosaved (the timer restarted on every edit);
3. undoing back to the saved state left a recovery file behind, and a false recovery offer;
4. extending an entity into its neighbour deleted the neighbour;
5. merging right after a split did nothing, silently.
"""

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

from PySide6.QtCore import QSettings, Qt

from nerstudio.app import recovery
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR

pytestmark = pytest.mark.data_integrity

NBEST = DEMO_MODEL_DIR / "train.nbest.npz"
# sentence 2 of the demo: "Meridia 's Prime Minister Maria Del Toro Hastings on Tuesday called ..."
K = 1
PRIME_MINISTER = (2, 4)
TUESDAY = 9
PER = Span(4, 8, "PER")


def _settings(tmp_path, **values) -> QSettings:
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    for k, v in values.items():
        st.setValue(k, v)
    st.sync()
    return st


@pytest.fixture
def corpus_file(tmp_path):
    """A copy of the demo corpus with its N-best list beside it (opened with the corpus)."""
    dst = tmp_path / "train.conll"
    shutil.copyfile(DEMO_DIR / "train.conll", dst)
    if NBEST.exists():
        shutil.copyfile(NBEST, tmp_path / "train.nbest.npz")
    return dst


def _open(qtbot, st, path):
    from nerstudio.gui.main_window import MainWindow

    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    w.dialogs.ask_recover = lambda path, summary="": pytest.fail(
        f"unexpected recovery offer: {path}"
    )
    assert w.load_corpus(str(path))
    assert w.jobs.wait(60000)
    w.show()
    return w


def _f_column(w) -> list[str]:
    from nerstudio.gui.models.nbest_model import NBestTableModel

    m = w.nbest_panel.model
    return [m.index(r, NBestTableModel.F).data() for r in range(m.rowCount())]


# --------------------------------------------------------------------------------------------
# 1. saved edits stay visible and on disk when the corpus reopens with its N-best list


@pytest.mark.slow
def test_saved_gold_wins_over_the_nbest_lists_copy(qtbot, tmp_path, corpus_file):
    if not NBEST.exists():
        pytest.skip("demo N-best list not built")
    st = _settings(tmp_path)
    w = _open(qtbot, st, corpus_file)
    w.select_sentence(K)
    i = w.document.nbest_row(K)
    accepted = w.document.nbest.spans(i, 2)  # candidate 3
    assert accepted != w.corpus.sentences[K].spans
    w.nbest_panel.select(2)
    assert w.accept_candidate()
    assert w.save_corpus()
    assert read_corpus(str(corpus_file)).sentences[K].spans == accepted
    w.close()

    # relaunch: the list beside the corpus still holds the old gold
    w = _open(qtbot, st, corpus_file)
    w.select_sentence(K)
    assert w.corpus.sentences[K].spans == accepted
    assert w.sentence_view.gold() == accepted  # the sentence view shows the saved gold
    assert _f_column(w)[2] == "100.0"  # candidate 3 is the gold now
    assert w.nbest_panel.model.exact_marks()[2]
    assert w.tree_model.status(K).startswith("✗")  # the top candidate is not the gold
    assert "differ" in w.statusBar().currentMessage()  # the user is told the list was out of date
    # what a training run started now would learn from
    assert w.document.nbest_snapshot().gold[i] == accepted
    # another edit, another save: both edits are in the file
    w.sentence_view.select_tokens(TUESDAY, TUESDAY + 1)
    qtbot.keyClick(w.sentence_view, Qt.Key.Key_M)
    assert w.save_corpus()
    expect = sorted(accepted + [Span(TUESDAY, TUESDAY + 1, "MISC")])
    assert read_corpus(str(corpus_file)).sentences[K].spans == expect


# --------------------------------------------------------------------------------------------
# 2. steady editing autosaves: a crash loses at most the last few seconds

_STEADY_SCRIPT = r"""
import os, sys
os.environ["QT_QPA_PLATFORM"] = "offscreen"
from PySide6.QtCore import QSettings, QTimer
from PySide6.QtWidgets import QApplication
app = QApplication([])
from nerstudio.gui.main_window import MainWindow
w = MainWindow(QSettings(sys.argv[1], QSettings.IniFormat))
assert w.load_corpus(sys.argv[2], attach=False)
targets = [int(x) for x in sys.argv[3].split(",")]
state = {"n": 0}
def edit():
    k = targets[state["n"]]
    w.select_sentence(k)
    w.sentence_view.select_tokens(0, 1)
    w.annotation.type_selection("ORG")
    print("EDIT", state["n"], k, flush=True)
    state["n"] += 1
    if state["n"] == len(targets):
        timer.stop()
timer = QTimer()
timer.setInterval(1000)
timer.timeout.connect(edit)
timer.start()
print("READY", flush=True)
app.exec()
"""

STEADY_EDITS = 15
MAX_LOST_EDITS = 6  # one edit a second: at most the last ~6 seconds may be lost


@pytest.mark.slow
def test_steady_editing_survives_sigkill(qtbot, tmp_path, corpus_file):
    st = _settings(tmp_path)  # the default autosave policy
    c = read_corpus(str(corpus_file))
    targets = [k for k, s in enumerate(c.sentences) if not s.spans and len(s) >= 2][:STEADY_EDITS]
    assert len(targets) == STEADY_EDITS
    script = tmp_path / "steady.py"
    script.write_text(_STEADY_SCRIPT, encoding="utf-8")
    proc = subprocess.Popen(
        [sys.executable, str(script), st.fileName(), str(corpus_file), ",".join(map(str, targets))],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
    )
    done = []
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(done) < STEADY_EDITS:
            line = proc.stdout.readline()
            if not line:
                break
            if line.startswith("EDIT"):
                done.append(int(line.split()[2]))
        assert len(done) == STEADY_EDITS, f"the child made only {len(done)} edits"
        proc.send_signal(signal.SIGKILL)  # no chance to save or clean up
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()

    from nerstudio.gui.main_window import MainWindow

    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    offered = []
    w.dialogs.ask_recover = lambda path, summary="": offered.append(path) or True
    assert w.load_corpus(str(corpus_file), attach=False)
    assert offered, "no recovery file after a crash"
    recovered = [k for k in done if w.corpus.sentences[k].spans == [Span(0, 1, "ORG")]]
    must = done[: STEADY_EDITS - MAX_LOST_EDITS]
    assert set(must) <= set(recovered), f"lost {sorted(set(must) - set(recovered))}"
    # the window shows the first recovered sentence and says what came back; undo takes it back
    assert w.current_sentence_index() == min(recovered)
    assert f"{len(recovered)} sentence" in w.statusBar().currentMessage()
    assert w.isWindowModified()
    w.act_undo.trigger()
    assert all(w.corpus.sentences[k].spans == [] for k in recovered)
    assert not w.isWindowModified()


# --------------------------------------------------------------------------------------------
# 3. back to the saved state: no recovery file, no recovery offer


@pytest.mark.slow
def test_undo_to_clean_removes_the_recovery_file(qtbot, tmp_path, corpus_file):
    st = _settings(tmp_path)
    w = _open(qtbot, st, corpus_file)
    k = next(k for k, s in enumerate(w.corpus.sentences) if not s.spans and len(s) >= 3)
    w.select_sentence(k)
    w.sentence_view.select_tokens(0, 2)
    w.annotation.type_selection("LOC")
    path = w.autosave_now()  # what the timer does a few seconds later
    assert path and os.path.exists(path)
    assert recovery.read_recovery(path).edits == {k: [Span(0, 2, "LOC")]}
    w.act_undo.trigger()
    assert not w.isWindowModified()
    assert not os.path.exists(path)  # clean: nothing to recover
    assert w.close()  # no question asked: nothing unsaved
    w2 = _open(qtbot, st, corpus_file)  # fails on an offer of recovery
    assert not w2.isWindowModified()


def test_a_recovery_that_changes_nothing_is_not_offered(qtbot, tmp_path, corpus_file):
    st = _settings(tmp_path)
    c = read_corpus(str(corpus_file))
    rec = recovery.recovery_path(str(corpus_file), str(tmp_path / "recovery"))
    recovery.write_recovery(rec, c, [0, 1])  # the spans as saved
    t = os.path.getmtime(corpus_file) + 10
    os.utime(rec, (t, t))
    w = _open(qtbot, st, corpus_file)  # fails on an offer of recovery
    assert not w.isWindowModified()
    assert not os.path.exists(rec)


# --------------------------------------------------------------------------------------------
# 4, 5. span edits that used to lose or ignore entities


def test_extending_into_a_neighbour_keeps_it(qtbot, tmp_path, corpus_file):
    w = _open(qtbot, _settings(tmp_path), corpus_file)
    w.select_sentence(K)
    view = w.sentence_view
    assert PER in w.corpus.sentences[K].spans
    view.select_tokens(*PRIME_MINISTER)
    qtbot.keyClick(view, Qt.Key.Key_O)
    assert Span(2, 4, "ORG") in w.corpus.sentences[K].spans
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    spans = w.corpus.sentences[K].spans
    # the boundary moved: the ORG took "Maria", the PER kept the rest
    assert Span(2, 5, "ORG") in spans and Span(5, 8, "PER") in spans
    # a one-token neighbour is never swallowed: the extension is refused, and said so
    view.select_tokens(0, 1)  # "Meridia" (LOC), next to "'s"
    qtbot.keyClick(view, Qt.Key.Key_O)
    view.select_tokens(1, 2)
    qtbot.keyClick(view, Qt.Key.Key_L)  # "'s" LOC: a one-token entity right after the ORG
    view.select_tokens(0, 1)
    before = list(w.corpus.sentences[K].spans)
    qtbot.keyClick(view, Qt.Key.Key_Right, Qt.KeyboardModifier.ControlModifier)
    assert w.corpus.sentences[K].spans == before
    assert w.statusBar().currentMessage()


def test_merge_right_after_a_split(qtbot, tmp_path, corpus_file):
    w = _open(qtbot, _settings(tmp_path), corpus_file)
    w.select_sentence(K)
    view = w.sentence_view
    view.select_tokens(6, 7)  # caret on "Toro", inside the PER
    qtbot.keyClicks(view, "/")
    assert (
        Span(4, 6, "PER") in w.corpus.sentences[K].spans
        and Span(6, 8, "PER") in w.corpus.sentences[K].spans
    )
    qtbot.keyClicks(view, "+")  # the caret has not moved: merge the two halves back
    assert PER in w.corpus.sentences[K].spans
    # nothing to merge (the last entity, caret not at its start): said so, nothing changes
    view.select_tokens(7, 8)
    before = list(w.corpus.sentences[K].spans)
    w.statusBar().clearMessage()
    qtbot.keyClicks(view, "+")
    assert w.corpus.sentences[K].spans == before
    assert "merge" in w.statusBar().currentMessage().lower()
