"""Suspect annotations in the window (offscreen): a list opened or found by the ranking in the
worker becomes the browser's Suspects filter, most suspect first; F7 walks it, F9 accepts a
suggestion as one undoable edit, Shift+F9 dismisses and reviews; a region the annotator changed
is never applied; the queue and the review states survive save, close and reopen, and a crash
(recovered with the unsaved edits)."""

from __future__ import annotations

import threading

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from helpers.suspects_example import TEXT, suspects_of
from PySide6.QtCore import Qt

import nerstudio.label_errors as label_errors
from nerstudio.app.suspects import Status
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.gui.views.suspects_dialog import SuspectOptions
from nerstudio.label_errors import write_tsv


@pytest.fixture
def files(tmp_path):
    corpus = tmp_path / "data.conll"
    corpus.write_text(TEXT, encoding="utf-8")
    tsv = tmp_path / "suspects.tsv"
    write_tsv(tsv, read_corpus(corpus), suspects_of(read_corpus(corpus)))
    return str(corpus), str(tsv)


def _open(make_window, qtbot, files):
    w = make_window()
    assert w.load_corpus(files[0], attach=False)
    w.show()
    qtbot.waitExposed(w)
    return w


@pytest.fixture
def window(make_window, qtbot, files):
    w = _open(make_window, qtbot, files)
    w.dialogs.ask_open = lambda *a: files[1]
    w.suspects.act_open.trigger()
    return w


def _listed(w) -> list[int]:
    """The sentences the browser lists, in its order."""
    return [int(k) for k in w.browser.shown_order()]


def test_a_list_becomes_the_suspects_filter_most_suspect_first(window):
    w, q = window, window.suspect_queue
    assert [s.score for s in q.suspects] == [0.9, 0.7, 0.5, 0.3]
    assert w.status_filter.currentData() == "suspect"
    assert _listed(w) == [0, 1, 3]  # sentences with an open suspect, by their best score
    assert w.current_sentence_index() == 0 and w.views.tabs.currentWidget() is w.suspects.panel
    text = w.suspects.panel.text()
    assert "4 suspects: 4 open" in text and "Sentence 1: 2 suspects" in text
    assert "Suspect 1 of 4" in text and "Suspect 4 of 4" in text
    assert "ORG for 'Leeds'" in text and "Gold" in text and "Suggested" in text
    # the measure's column shows the score
    tm = w.tree_model
    assert tm.headerData(4, Qt.Orientation.Horizontal) == "suspect"
    assert tm.index_of_sentence(1).siblingAtColumn(4).data() == "0.700"


def _activate(w, qtbot):
    w.activateWindow()
    qtbot.waitUntil(w.isActiveWindow, timeout=5000)  # window shortcuts need the active window
    w.corpus_view.setFocus()


def test_the_keys_walk_accept_and_dismiss_and_ctrl_z_takes_them_back(window, qtbot):
    w, doc, q = window, window.document, window.suspect_queue
    _activate(w, qtbot)
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9)  # accept the most suspect: Leeds is ORG
    assert doc.spans(0)[0] == Span(0, 1, "ORG") and doc.reviewed[0]
    assert q.status(0) is Status.ACCEPTED and doc.history.count() == 1 and w.isWindowModified()
    assert "suggestion accepted" in w.suspects.panel.text()
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9)  # the sentence's other suspect is current now
    assert doc.spans(0) == [Span(0, 1, "ORG"), Span(4, 5, "LOC")] and q.status(3) is Status.ACCEPTED
    assert not w.suspects.act_accept.isEnabled() and not w.suspects.act_dismiss.isEnabled()
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9)  # nothing open here: nothing happens
    assert doc.history.count() == 2
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F7)
    assert w.current_sentence_index() == 1
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9, Qt.KeyboardModifier.ShiftModifier)  # dismiss
    assert (
        q.status(1) is Status.DISMISSED and doc.reviewed[1] and doc.spans(1) == [Span(0, 2, "PER")]
    )
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F7)
    assert w.current_sentence_index() == 3
    assert _listed(w) == [3]  # the decided ones left the filter once the walk left them
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert q.status(1) is Status.OPEN and not doc.reviewed[1]
    assert w.current_sentence_index() == 1  # the undo went back to the dismissal it undid
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert doc.spans(0) == [Span(0, 1, "LOC"), Span(2, 3, "ORG"), Span(4, 5, "LOC")]
    assert not doc.reviewed[0] and q.statuses() == [Status.OPEN] * 4 and not doc.is_dirty()
    keys = w.shortcuts_html()
    assert "Accept suggestion" in keys and "F9" in keys and "Dismiss suspect" in keys


def test_a_region_changed_since_the_ranking_is_not_applied(window, qtbot):
    w, doc, q = window, window.document, window.suspect_queue
    w.select_sentence(3)
    doc.set_spans(3, [Span(0, 1, "ORG"), Span(3, 4, "LOC")])  # the annotator retyped Paris
    assert q.status(2) is Status.EDITED and not w.suspects.act_accept.isEnabled()
    w.suspects.accept()
    assert doc.spans(3) == [Span(0, 1, "ORG"), Span(3, 4, "LOC")] and doc.history.count() == 1
    assert "the suggestion is not applied" in w.status.currentMessage()
    text = w.suspects.panel.text()
    assert "you changed this part since the ranking" in text and "Now" in text


def test_the_ranking_runs_in_the_worker_with_progress_and_cancel(
    make_window, qtbot, files, tmp_path, monkeypatch
):
    w = _open(make_window, qtbot, files)
    doc = w.document
    more = tmp_path / "more.conll"
    more.write_text(TEXT, encoding="utf-8")
    calls, gate = [], threading.Event()

    def find_suspects(
        corpus, *, more=(), folds=5, model=None, n=20, progress=None, cancel=None, **kw
    ):
        calls.append((threading.current_thread(), corpus, more, folds, model, n))
        for done in range(1, 4):
            progress(done, 3, f"fold {done} of 3")
            if not gate.wait(10) or cancel():
                from nerstudio.errors import Cancelled

                raise Cancelled("cancelled")
        return suspects_of(corpus)[:2]

    monkeypatch.setattr(label_errors, "find_suspects", find_suspects, raising=False)
    seen = []
    w.jobs.progress.connect(lambda msg, d, n: seen.append(msg))
    opts = SuspectOptions(n=7, folds=3, more=(str(more),))
    w.dialogs.ask_suspect_options = lambda model: opts
    w.select_sentence(2)
    w.suspects.act_find.trigger()
    assert w.jobs.busy and not w.suspects.act_find.isEnabled()
    doc.set_spans(2, [])  # the annotator goes on while it runs
    qtbot.waitUntil(lambda: any("fold 1 of 3" in m for m in seen), timeout=5000)  # progress
    gate.set()
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=20000)
    thread, corpus, extra, folds, model, n = calls[0]
    # n is the taggings per sentence (the core's default), not the count of suspects asked for
    assert thread is not threading.main_thread() and (folds, model, n) == (3, None, 20)
    assert corpus is not doc.corpus and len(extra) == 1 and len(extra[0]) == len(corpus)
    q = w.suspect_queue
    assert (
        len(q.suspects) == 2
        and q.source == "judged by 3 folds of the corpus and 1 more training corpora"
    )
    assert w.status_filter.currentData() == "suspect" and "Found 2 suspect" in w.suspects.last
    assert w.sentence_cursor.k == 2  # they went on working: the view stayed where it was
    # a second run, cancelled: the queue stays as it was
    gate.clear()
    w.dialogs.ask_suspect_options = lambda model: SuspectOptions(n=3)
    w.suspects.act_find.trigger()
    qtbot.waitUntil(lambda: len(calls) == 2, timeout=5000)
    w.jobs.cancel()
    gate.set()
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=20000)
    assert len(q.suspects) == 2 and "cancelled" in w.status.currentMessage()
    # a third, waited for: the window goes to the most suspect sentence
    w.dialogs.ask_suspect_options = lambda model: SuspectOptions(model=str(tmp_path))
    w.suspects.act_find.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=20000)
    assert calls[2][4] == str(tmp_path) and q.source == f"judged by the model in {tmp_path.name}"
    assert w.sentence_cursor.k == q.suspects[0].sentence == 0


def test_the_queue_and_review_states_survive_save_close_and_reopen(
    window, make_window, qtbot, files
):
    w, doc, q = window, window.document, window.suspect_queue
    w.suspects.accept()  # sentence 1's first suspect
    w.select_sentence(1)
    w.suspects.dismiss()
    shown, reviewed = q.statuses(), doc.reviewed.copy()
    assert w.save_corpus()
    w.close()
    w2 = _open(make_window, qtbot, files)
    try:
        q2 = w2.suspect_queue
        assert (
            q2.statuses() == shown == [Status.ACCEPTED, Status.DISMISSED, Status.OPEN, Status.OPEN]
        )
        assert list(w2.document.reviewed) == list(reviewed)
        assert "4 suspects: 2 open, 1 accepted, 1 dismissed" in w2.suspects.panel.text()
        assert "4 suspects: 2 open" in w2.status.currentMessage()  # said as the corpus opens
        tabs = w2.views.annotate_tabs
        assert tabs.tabText(tabs.indexOf(w2.suspects.panel)) == "Suspects (2)"
        w2.status_filter.setCurrentIndex(w2.status_filter.findData("suspect"))
        assert _listed(w2) == [0, 3]
    finally:
        w2.close()


@pytest.mark.data_integrity
def test_dismissals_survive_a_crash(window, make_window, qtbot, files):
    """Decided in the window, autosaved, then the process is killed: the window that opens the
    corpus next recovers the decisions with the edits, the queue as it was shown."""
    w, q = window, window.suspect_queue
    _activate(w, qtbot)
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9, Qt.KeyboardModifier.ShiftModifier)  # sentence 1
    w.select_sentence(1)
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9, Qt.KeyboardModifier.ShiftModifier)
    w.select_sentence(3)
    qtbot.keyClick(w.corpus_view, Qt.Key.Key_F9)  # accepted: Paris is PER
    shown = q.statuses()
    assert shown == [Status.DISMISSED, Status.DISMISSED, Status.ACCEPTED, Status.OPEN]
    saved = w.annotation.autosave_now()
    w.annotation.timer.stop()
    w.annotation.autosaver.instance.abandon()  # kill -9: its lock and recovery file stay
    w2 = make_window()
    offered = []
    w2.dialogs.ask_recover = lambda path, summary="": offered.append(path) or True
    assert w2.load_corpus(files[0], attach=False)
    assert offered == [saved]
    q2 = w2.suspect_queue
    assert q2.statuses() == shown and w2.isWindowModified()
    assert "4 suspects: 1 open, 1 accepted, 2 dismissed" in w2.suspects.panel.text()
    w2.status_filter.setCurrentIndex(w2.status_filter.findData("suspect"))
    assert _listed(w2) == [0]  # its other suspect is still open
    w2.act_undo.trigger()  # the recovery, the queue's part with it
    assert q2.statuses() == [Status.OPEN] * 4


def test_a_bad_list_is_refused_in_one_line(make_window, qtbot, files, tmp_path):
    w = _open(make_window, qtbot, files)
    bad = tmp_path / "bad.tsv"
    lines = open(files[1], encoding="utf-8").read().splitlines()
    cells = lines[1].split("\t")
    cells[1] = "99999"  # a sentence the corpus does not have
    bad.write_text(lines[0] + "\n" + "\t".join(cells) + "\n", encoding="utf-8")
    said = []
    w.dialogs.critical = lambda title, text: said.append((title, text))
    w.dialogs.ask_open = lambda *a: str(bad)
    w.suspects.act_open.trigger()
    assert said and said[0][0] == "Cannot open suspects list" and f"{bad}:2:" in said[0][1]
    assert "\n" not in said[0][1] and not w.suspect_queue.active


def test_the_options_dialog_says_how_the_sentences_are_judged(qtbot, tmp_path):
    from nerstudio.gui.views.suspects_dialog import SuspectsDialog

    asked = iter([str(tmp_path / "a.conll"), str(tmp_path / "b.conll")])
    d = SuspectsDialog(lambda: next(asked), lambda start: str(tmp_path / "model"), "")
    qtbot.addWidget(d)
    assert d.options() == SuspectOptions(20, 5, ())
    d.folds.setValue(3)
    d.count.setValue(50)
    d._add()
    d._add()
    assert d.options() == SuspectOptions(
        50, 3, (str(tmp_path / "a.conll"), str(tmp_path / "b.conll"))
    )
    assert not d.model.isEnabled()
    d.by_model.setChecked(True)
    assert d.model.isEnabled() and not d.folds.isEnabled()
    d.accept()  # no folder yet: refused
    assert d.result() == 0 and "choose the model folder" in d.model.placeholderText()
    d._browse()
    d.accept()
    assert d.result() == 1
    assert d.options() == SuspectOptions(50, model=str(tmp_path / "model"))
    assert d.options().describe() == "judged by the model in model"


def test_the_browser_filters_again_only_when_its_filter_changed(qtbot, files):
    """Deciding a suspect re-applies the Suspects filter twice (its review, its entities): on a
    large corpus each filtering held the window for a while, so the same filter is not applied
    again; a mask changed in place since (the document's type masks are) still is."""
    import numpy as np

    from nerstudio.gui.models.corpus_model import CorpusTreeModel, SentenceFilterProxy

    class Counting(SentenceFilterProxy):
        calls = 0

        def filterAcceptsRow(self, row, parent):
            Counting.calls += 1
            return super().filterAcceptsRow(row, parent)

    corpus = read_corpus(files[0])
    model, proxy = CorpusTreeModel(corpus), Counting()
    proxy.setSourceModel(model)
    mask = np.array([True, False, True, False])
    proxy.set_filter("", mask)
    shown = [k for k in range(4) if proxy.accepts(k)]
    assert shown == [0, 2] and Counting.calls > 0
    Counting.calls = 0
    proxy.set_filter("", mask.copy())
    assert Counting.calls == 0
    mask[1] = True  # changed in place by its owner
    proxy.set_filter("", mask)
    assert Counting.calls > 0 and [k for k in range(4) if proxy.accepts(k)] == [0, 1, 2]
    assert proxy.rowCount() == 1 and proxy.rowCount(proxy.index(0, 0)) == 3


def test_the_real_ranking_fills_the_queue_and_f9_takes_its_first_suggestion(
    make_window, qtbot, demo_files
):
    """No stand-in: the demo's model judges the demo's dev corpus through the window's job, and
    the first suspect's suggestion is taken and undone."""
    w = make_window()
    assert w.load_corpus(str(demo_files / "dev.conll"))
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=60000)
    doc, q = w.document, w.suspect_queue
    w.dialogs.ask_suspect_options = lambda model: SuspectOptions(
        n=5, model=str(demo_files / "model")
    )
    w.suspects.act_find.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=60000)
    assert len(q.suspects) == 5 and all(s.suggested != s.gold for s in q.suspects)
    scores = [s.score for s in q.suspects]
    assert scores == sorted(scores, reverse=True)
    first = q.suspects[0]
    assert w.sentence_cursor.k == first.sentence
    before = doc.spans(first.sentence)
    w.suspects.accept()
    after = doc.spans(first.sentence)
    assert after != before and set(first.suggested) <= set(after)
    assert doc.reviewed[first.sentence]
    doc.undo()
    assert doc.spans(first.sentence) == before
