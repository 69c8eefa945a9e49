"""Annotate ▸ Learn from corrections in the window (offscreen): rounds run in the worker, re-predict
only what is not reviewed, the panel shows per-batch suggestion F; File ▸ Open tagger model… on
a corpus makes its N-best lists; review states are saved with the corpus."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

import nerstudio
from nerstudio.app import review
from nerstudio.gui.main_window import DEMO_DIR, DEMO_MODEL_DIR, MainWindow


@pytest.fixture
def gold():
    return [list(s.spans) for s in nerstudio.read(DEMO_DIR / "test.conll").sentences]


@pytest.fixture
def window(qtbot, tmp_path):
    corpus = nerstudio.read(DEMO_DIR / "test.conll")
    for s in corpus.sentences:
        s.spans = []
    path = tmp_path / "todo.conll"
    nerstudio.write(corpus, path)
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    st.setValue("annotation/loopEvery", 5)
    st.sync()
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    assert w.load_corpus(str(path), attach=False)
    assert w.jobs.wait(60000)
    w.show()
    return w


def _idle(w, qtbot):
    qtbot.waitUntil(lambda: not w.jobs.busy, timeout=60000)
    qtbot.wait(50)


def test_learn_from_corrections_rounds(window, qtbot, gold):
    w, doc, lc = window, window.document, window.loop
    assert lc.act_learn.isEnabled() and not lc.act_learn.isChecked()
    lc.confirm = lambda *a: pytest.fail("no sentence has entities: nothing to ask")
    lc.act_learn.trigger()
    assert lc.act_learn.isChecked() and w.views.annotate_tabs.currentWidget() is lc.panel
    _idle(w, qtbot)
    assert doc.nbest is not None and any(doc.spans(k) for k in range(len(doc.corpus)))
    assert lc.learner.rounds == 1 and not lc.learner.learned
    # the annotator corrects five sentences: a round trains and re-predicts the others
    for k in range(5):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    _idle(w, qtbot)
    qtbot.waitUntil(lambda: lc.learner.rounds == 2, timeout=60000)
    _idle(w, qtbot)
    assert sorted(lc.learner.learned) == [0, 1, 2, 3, 4]
    assert all(doc.spans(k) == gold[k] for k in range(5))  # reviewed: never changed
    assert lc.panel.table.rowCount() == 1 and lc.panel.table.item(0, 0).text() == "1–5"
    assert "round" in lc.panel.label.text()
    # Mark sentence reviewed: the shown sentence
    w.sentence_cursor.set(7)
    lc.act_review.trigger()
    assert doc.reviewed[7]
    lc.act_learn.trigger()  # off
    assert lc.learner is None and not lc.act_learn.isChecked()


def test_turning_on_asks_before_replacing_entities(window, qtbot, gold):
    _w, doc, lc = window, window.document, window.loop
    doc.set_many({3: gold[3] or [nerstudio.corpus.model.Span(0, 1, "PER")]}, "someone's entities")
    asked = []
    lc.confirm = lambda title, text: asked.append(text) or False
    assert not lc.toggle(True)
    assert (
        asked and "1 sentence" in asked[0] and lc.learner is None and not lc.act_learn.isChecked()
    )


def test_opening_a_tagger_makes_the_corpus_nbest_lists(window, qtbot):
    w, doc = window, window.document
    assert doc.nbest is None
    assert w.files.load_tagger(str(DEMO_MODEL_DIR / "tagger.npz"))
    qtbot.waitUntil(lambda: doc.nbest is not None, timeout=60000)
    _idle(w, qtbot)
    assert (doc.nbest_index.row_of >= 0).sum() == sum(1 for s in doc.corpus.sentences if len(s))


def test_saving_keeps_the_review_states(window, qtbot, gold):
    w, doc = window, window.document
    doc.set_reviewed([2, 4])
    assert doc.is_dirty()
    assert w.annotation.save_corpus()
    assert not doc.is_dirty()
    back = nerstudio.read(doc.corpus.path)
    assert review.read_states(back).nonzero()[0].tolist() == [2, 4]


def test_not_reviewed_filter(window, qtbot):
    w, doc = window, window.document
    doc.set_reviewed([0, 1])
    v = w.views
    v.status_filter.setCurrentIndex(v.status_filter.findData("unreviewed"))
    w.browser.apply_filter()
    assert (
        f"{len(doc.corpus) - 2:,} of {len(doc.corpus):,} sentences shown" in v.filter_count.text()
    )


@pytest.fixture(scope="module")
def averaged():
    from nerstudio.nbest import NBestList
    from nerstudio.rerank.model import train_reranker

    nb = NBestList.load(str(DEMO_MODEL_DIR / "train.nbest.npz"))
    return train_reranker(nb, None, "averaged", {"epochs": 2, "beta": 0.1})


@pytest.mark.slow
def test_the_reranker_learns_in_the_loop(window, qtbot, gold, averaged, tmp_path, monkeypatch):
    import threading

    import numpy as np

    from nerstudio.app import loop_rerank

    w, doc, lc = window, window.document, window.loop
    w.dialogs.ask_unsaved_models = lambda what: "discard"  # in case an assertion fails
    doc.install_model(averaged)
    lc.act_learn.trigger()
    _idle(w, qtbot)
    assert lc.learner.reranker is averaged and "Reranker (averaged)" in lc.panel.label.text()
    assert doc.scored is not None and doc.scored.model is averaged  # its scores are attached
    top = doc.scored.choice
    ix = doc.nbest_index
    k = next(k for k in range(len(doc.corpus)) if ix.row_of[k] >= 0 and top[ix.row_of[k]] > 0)
    assert doc.spans(k) == sorted(doc.nbest.spans(ix.row_of[k], int(top[ix.row_of[k]])))
    for k in range(5):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    qtbot.waitUntil(lambda: lc.learner.rounds == 2, timeout=60000)
    _idle(w, qtbot)
    learned = lc.learner.reranker
    assert learned is not averaged and doc.model is learned and doc.scored.model is learned
    assert not np.array_equal(learned.learner.w_, averaged.learner.w_)
    assert sorted(lc.learner.reranked) == [0, 1, 2, 3, 4]
    assert all(doc.spans(k) == gold[k] for k in range(5))  # reviewed: never changed
    # a round cancelled while the reranker learns changes nothing
    started, go = threading.Event(), threading.Event()
    real = loop_rerank.warm_start

    def held(*args):  # the worker waits here until the test has pressed cancel
        started.set()
        go.wait(30)
        return real(*args)

    monkeypatch.setattr(loop_rerank, "warm_start", held)
    before = [doc.spans(k) for k in range(len(doc.corpus))]
    for k in range(5, 10):
        doc.set_spans(k, gold[k])
        doc.set_reviewed([k])
    qtbot.waitUntil(started.is_set, timeout=60000)
    w.jobs.cancel()
    go.set()
    _idle(w, qtbot)
    assert lc.learner.rounds == 2 and lc.learner.reranker is learned and doc.model is learned
    assert all(doc.spans(k) == before[k] for k in range(10, len(doc.corpus)))
    # Save loop model…: a folder nerstudio.load reads, with the reranker that learned
    w.dialogs.ask_folder = lambda *a: str(tmp_path / "saved")
    lc.act_save.trigger()
    pipe = nerstudio.load(tmp_path / "saved")
    assert np.array_equal(pipe.reranker.learner.w_, learned.learner.w_)
    assert w.files.unsaved_models() == []  # saved: quitting does not ask


@pytest.mark.slow
def test_keys_typed_while_a_round_finishes_stay_in_the_sentence_being_edited(
    window, qtbot, monkeypatch
):
    """The annotator types into a sentence while a round runs and after it ends: the round's
    edit (the application's) moves neither the cursor, the browser's selection, the token
    selection nor the focus, never changes that sentence, and every key lands there; the
    sentence becomes reviewed when they leave it, not at the first key."""
    import threading

    from PySide6.QtCore import Qt
    from PySide6.QtWidgets import QApplication

    from nerstudio.app import loop
    from nerstudio.corpus.model import Span

    w, doc, lc = window, window.document, window.loop
    w.activateWindow()
    lc.act_learn.trigger()
    _idle(w, qtbot)
    assert lc.learner.rounds == 1
    # the status counts what it says: every sentence with words predicted but the one shown
    # (the annotator's while they are on it), those now with entities changed (all had none)
    sents, shown = doc.corpus.sentences, w.sentence_cursor.k
    assert shown >= 0 and len(sents[shown].words)
    n_predicted = sum(1 for j, s in enumerate(sents) if len(s.words) and j != shown)
    n_changed = sum(1 for s in sents if s.spans)
    assert 0 < n_changed < n_predicted
    assert lc.last == (
        f"Predicted {n_predicted:,} sentence(s), {n_changed:,} changed; N-best lists attached."
    )
    # the next round waits in the worker until the test has typed its first keys
    started, go = threading.Event(), threading.Event()
    real = loop.OnlineLearner.run

    def held(self, *args, **kwargs):
        started.set()
        go.wait(30)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(loop.OnlineLearner, "run", held)
    c = doc.corpus
    k = next(k for k in range(20, len(c)) if len(c.sentences[k]) >= 4 and not doc.spans(k))
    view = w.sentence_view
    w.select_sentence(k)
    view.setFocus()
    letter = {lab: w.annotation.scheme.letter(lab) for lab in ("PER", "ORG")}
    assert all(letter.values())
    doc.set_reviewed(range(5))  # five sentences accepted elsewhere: the model is due
    qtbot.waitUntil(started.is_set, timeout=60000)
    view.select_tokens(0, 1)
    qtbot.keyClicks(view, letter["PER"])  # typed while the round runs
    bar = w.corpus_view.verticalScrollBar()
    assert bar.maximum() > 0
    bar.setValue(bar.maximum() // 2)  # the annotator scrolled the browser
    scrolled = bar.value()
    assert doc.spans(k) == [Span(0, 1, "PER")] and not doc.reviewed[k]
    go.set()
    qtbot.waitUntil(lambda: lc.learner.rounds == 2, timeout=60000)
    _idle(w, qtbot)
    # the round re-predicted other sentences, and left this one and the annotator where they were
    assert lc.last.startswith("Last round:") and ", 0 changed" not in lc.last
    assert "; predicted " in lc.last and " changed." in lc.last
    assert doc.history.undo_text() == "model in the loop: re-predict"
    assert w.current_sentence_index() == k and w.sentence_cursor.k == k
    assert view.words() == c.sentences[k].words and view.selection() == (0, 1)
    assert QApplication.focusWidget() is view
    assert bar.value() == scrolled
    assert doc.spans(k) == [Span(0, 1, "PER")] and not doc.reviewed[k]
    view.select_tokens(2, 4)
    qtbot.keyClicks(view, letter["ORG"])  # after the round: still this sentence
    assert doc.spans(k) == [Span(0, 1, "PER"), Span(2, 4, "ORG")]
    assert not doc.reviewed[k]  # still being corrected
    w.select_sentence(k + 1)  # the annotator leaves it: reviewed, with what they typed
    assert doc.reviewed[k] and doc.spans(k) == [Span(0, 1, "PER"), Span(2, 4, "ORG")]
    assert doc.review_log[-1] == (k, ())  # the suggestion it held before their keys
    # a sentence edited before a round's snapshot and not left: the round leaves it alone too
    monkeypatch.setattr(loop.OnlineLearner, "run", real)
    suggested = {}
    real_apply = loop.apply

    def spy(document, res, *args):
        suggested.update(res.suggestions)
        return real_apply(document, res, *args)

    monkeypatch.setattr(loop, "apply", spy)
    k2 = next(j for j in range(k + 1, len(c)) if doc.spans(j) and len(c.sentences[j]) >= 3)
    w.select_sentence(k2)
    view.select_tokens(0, len(c.sentences[k2]))
    qtbot.keyClick(view, Qt.Key.Key_Delete)
    view.select_tokens(1, 2)
    qtbot.keyClicks(view, letter["PER"])
    mine = doc.spans(k2)
    assert mine == [Span(1, 2, "PER")]
    doc.set_reviewed(range(5, 10))
    qtbot.waitUntil(lambda: lc.learner.rounds == 3, timeout=60000)
    _idle(w, qtbot)
    assert suggested[k2] != mine  # the round would have changed it
    assert doc.spans(k2) == mine and w.sentence_cursor.k == k2 and not doc.reviewed[k2]


def test_marking_a_sentence_reviewed_under_the_not_reviewed_filter_keeps_the_view(window, qtbot):
    """The annotator marks the shown sentence reviewed with the browser showing only the
    sentences not reviewed: the round that follows, and its new N-best list filtering the
    browser again, leave the view on that sentence."""
    w, doc, lc = window, window.document, window.loop
    v = w.views
    lc.act_learn.trigger()
    _idle(w, qtbot)
    doc.set_reviewed(range(4))
    v.status_filter.setCurrentIndex(v.status_filter.findData("unreviewed"))
    w.browser.set_uncertain_first(True)  # the round reorders the browser too
    k = 30
    w.select_sentence(k)
    w.sentence_view.select_tokens(1, 2)
    rounds = lc.learner.rounds
    assert lc.act_review.isEnabled()
    lc.act_review.trigger()  # the fifth: the model is due
    assert doc.reviewed[k]
    qtbot.waitUntil(lambda: lc.learner.rounds == rounds + 1, timeout=60000)
    _idle(w, qtbot)
    assert w.sentence_cursor.k == k and w.current_sentence_index() == k
    assert w.views.sentence_view.words() == doc.corpus.sentences[k].words
    assert w.sentence_view.selection() == (1, 2)
    assert w.corpus_view.currentIndex() == w.proxy.mapFromSource(w.tree_model.index_of_sentence(k))
    # the filter drops it once the annotator goes elsewhere
    w.select_sentence(k + 1)
    w.browser.apply_filter()
    assert not w.proxy.accepts(k) and w.proxy.accepts(k + 1)


def test_a_round_that_reorders_the_browser_keeps_the_current_row_in_place(window, qtbot):
    """Most uncertain first under the "not reviewed" filter: a round sorts the browser again and
    drops the sentences reviewed meanwhile; the annotator's row moves in the list but stays at
    its place on the screen (the rows around it change), as a round moves nothing."""
    w, doc, lc = window, window.document, window.loop
    v, view = w.views, window.corpus_view
    w.resize(1280, 800)
    lc.act_learn.trigger()
    _idle(w, qtbot)
    v.status_filter.setCurrentIndex(v.status_filter.findData("unreviewed"))
    w.browser.set_uncertain_first(True)
    row = 12
    view.setCurrentIndex(w.proxy.index(row, 0))
    k = w.current_sentence_index()
    y = view.visualRect(view.currentIndex()).top()
    assert k >= 0 and 0 < y < view.viewport().height() - 40
    above = [
        w.tree_model.sentence_index(w.proxy.mapToSource(w.proxy.index(r, 0))) for r in range(5)
    ]
    rounds = lc.learner.rounds
    doc.set_reviewed(above)  # five sentences above it reviewed: the model is due
    qtbot.waitUntil(lambda: lc.learner.rounds == rounds + 1, timeout=60000)
    _idle(w, qtbot)
    cur = view.currentIndex()
    assert w.current_sentence_index() == k and w.sentence_cursor.k == k
    assert cur.row() != row  # the list changed around it...
    assert view.visualRect(cur).top() == y  # ...and it did not move on the screen


def test_reading_the_same_file_again_keeps_the_view_on_its_sentence(window, qtbot, tmp_path):
    """A reload (the file read again) shows the sentence the view showed; another file opens on
    its first sentence."""
    w, doc = window, window.document
    path = doc.corpus.path
    w.select_sentence(12)
    assert w.load_corpus(path, attach=False)
    assert w.sentence_cursor.k == 12 and w.current_sentence_index() == 12
    other = tmp_path / "other.conll"
    other.write_bytes(open(path, "rb").read())
    assert w.load_corpus(str(other), attach=False)
    assert w.sentence_cursor.k == 0


def test_f7_walks_the_not_reviewed_queue_through_a_round_that_reorders_it(window, qtbot):
    """F7 over "not reviewed, most uncertain first" while the sentences walked are marked
    reviewed: after the round that those reviews start (a new model, a new order), F7 goes on
    with the first sentences of the new order it has not visited, skipping none."""
    w, doc, lc = window, window.document, window.loop
    v = w.views
    lc.act_learn.trigger()
    _idle(w, qtbot)
    v.status_filter.setCurrentIndex(v.status_filter.findData("unreviewed"))
    w.browser.set_uncertain_first(True)
    visited = [w.sentence_cursor.k]
    for _ in range(5):  # the fifth review makes the model due
        w.browser.act_next_uncertain.trigger()
        visited.append(w.sentence_cursor.k)
        assert lc.act_review.isEnabled()
        lc.act_review.trigger()
    qtbot.waitUntil(lambda: lc.learner.rounds == 2, timeout=60000)
    _idle(w, qtbot)
    assert w.sentence_cursor.k == visited[-1]  # the round moved nothing
    assert all(doc.reviewed[k] for k in visited[1:])
    order = [int(k) for k in w.browser.shown_order()]
    todo = [k for k in order if k not in visited]
    walked = []
    for _ in range(3):
        w.browser.act_next_uncertain.trigger()
        walked.append(w.sentence_cursor.k)
    assert walked == todo[:3]
