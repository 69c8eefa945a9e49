"""Keyboard speed (issue 23, part 5): the first key after opening a file reaches the sentence,
next / previous entity and token work from the corpus browser as from the sentence view, a key
focuses the sentence view, the legend shows the fixed digit keys. The keystroke count of ten
corrections in the real window is bench/keystrokes.py's."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QApplication

from nerstudio.corpus.model import Span
from nerstudio.demo import DEMO_DIR

pytestmark = pytest.mark.ux


@pytest.fixture
def opened(demo_files, make_window, qtbot):
    w = make_window()
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    w.activateWindow()
    w.views.feature_panel.search.setFocus()  # focus somewhere else, as a window opened by hand has it
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.views.feature_panel.search)
    w.views.feature_panel.search.clearFocus()
    assert w.load_corpus(str(demo_files / "dev.conll"), attach=False)
    assert w.runner.wait(30000)
    return w


def _sentence_with(corpus, n_spans=3) -> int:
    return next(
        k
        for k, s in enumerate(corpus.sentences)
        if len(s.spans) >= n_spans and s.spans[0].start > 0
    )


def test_first_key_after_opening_reaches_the_sentence(opened, qtbot):
    w = opened
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.sentence_view)
    k = w.current_sentence_index()
    # not the caret's
    first = next(s for s in sorted(w.corpus.sentences[k].spans) if s.start > 0 or s.end > 1)
    qtbot.keyClick(QApplication.focusWidget(), Qt.Key.Key_Tab)  # the first key: next entity
    assert w.sentence_view.selection() == (first.start, first.end)


def test_entity_and_token_keys_from_the_browser_and_the_view(opened, qtbot):
    w = opened
    k = _sentence_with(w.corpus)
    w.select_sentence(k)
    spans = sorted(w.corpus.sentences[k].spans)
    for widget in (w.corpus_view, w.sentence_view):
        widget.setFocus()
        w.sentence_view.select_tokens(0, 1)
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
        qtbot.keyClick(widget, Qt.Key.Key_Tab)
        assert w.sentence_view.selection() == (spans[1].start, spans[1].end)
        qtbot.keyClick(widget, Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)
        assert w.sentence_view.selection() == (spans[0].start, spans[0].end)
        qtbot.keyClick(widget, Qt.Key.Key_Right)
        assert w.sentence_view.selection() == (spans[0].end, spans[0].end + 1)
        qtbot.keyClick(widget, Qt.Key.Key_Right, Qt.KeyboardModifier.ShiftModifier)
        assert w.sentence_view.selection() == (spans[0].end, spans[0].end + 2)
        qtbot.keyClick(widget, Qt.Key.Key_Left)
        assert w.sentence_view.selection() == (spans[0].end, spans[0].end + 1)
        assert w.current_sentence_index() == k  # the browser did not move
    # past the last entity: nothing moves, the status bar says why
    w.sentence_view.select_tokens(spans[-1].start, spans[-1].end)
    qtbot.keyClick(w.sentence_view, Qt.Key.Key_Tab)
    assert w.sentence_view.selection() == (spans[-1].start, spans[-1].end)
    assert "No entity after" in w.statusBar().currentMessage()
    # the digit after a Tab retypes the entity it selected: one undoable edit
    qtbot.keyClick(w.sentence_view, Qt.Key.Key_Tab, Qt.KeyboardModifier.ShiftModifier)
    target = sorted(w.corpus.sentences[k].spans)[-2]
    new = "MISC" if target.label != "MISC" else "PER"
    qtbot.keyClick(w.sentence_view, {"PER": Qt.Key.Key_1, "MISC": Qt.Key.Key_4}[new])
    assert Span(target.start, target.end, new) in w.corpus.sentences[k].spans


def test_left_right_still_fold_a_document_in_the_browser(opened, qtbot):
    w = opened
    view, model = w.corpus_view, w.corpus_view.model()
    doc = model.index(0, 0)
    view.setCurrentIndex(doc)
    view.expand(doc)
    view.setFocus()
    qtbot.keyClick(view, Qt.Key.Key_Left)
    assert not view.isExpanded(doc)


def test_focus_key_and_legend_digits(opened, qtbot):
    w = opened
    w.views.search.setFocus()
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.views.search)
    qtbot.keyClick(w.views.search, Qt.Key.Key_S, Qt.KeyboardModifier.AltModifier)
    qtbot.waitUntil(lambda: QApplication.focusWidget() is w.sentence_view)
    assert w.legend.text().startswith("1 PER P  2 ORG O  3 LOC L  4 MISC M")
    rows = {b: a for a, b in w.annotation.shortcut_rows()}
    assert (
        rows["Next entity (selects it)"] == "Tab" and rows["Caret to the previous token"] == "Left"
    )


@pytest.mark.slow
@pytest.mark.data_integrity
def test_legend_and_digits_fixed_across_preannotation_and_reopening(make_window, qtbot, tmp_path):
    """The issue's report, in the window: a blank file, pre-annotated by the demo model, saved as
    JSONL and reopened — the digit 1 sets PER every time, and the legend says so."""
    import nerstudio
    from nerstudio.demo import DEMO_MODEL_DIR

    corpus = nerstudio.read(DEMO_DIR / "dev.conll")
    for s in corpus.sentences:
        s.spans = []
    blank = tmp_path / "blank.conll"
    nerstudio.write(corpus, blank)
    w = make_window()
    w.show()
    qtbot.waitExposed(w)
    assert w.load_corpus(str(blank), attach=False) and w.runner.wait(30000)
    legend = w.legend.text()
    assert legend.startswith("1 PER P  2 ORG O  3 LOC L  4 MISC M")
    w.dialogs.ask_model_folder = lambda start: str(DEMO_MODEL_DIR)
    w.act_preannotate.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy and bool(w.preannotate.last), timeout=60000)
    assert sum(len(s.spans) for s in w.corpus.sentences) > 20 and w.legend.text() == legend
    out = tmp_path / "pre.jsonl"
    assert w.save_corpus(str(out))
    assert w.load_corpus(str(out), attach=False) and w.runner.wait(30000)
    assert w.legend.text() == legend
    k = next(k for k, s in enumerate(w.corpus.sentences) if not s.spans)
    w.select_sentence(k)
    w.sentence_view.setFocus()
    w.sentence_view.select_tokens(0, 1)
    qtbot.keyClick(w.sentence_view, Qt.Key.Key_1)
    assert w.corpus.sentences[k].spans == [Span(0, 1, "PER")]


def test_moving_keys_from_the_nbest_table_but_not_the_type_keys(window, qtbot):
    w = window  # the demo, with its N-best lists
    k = _sentence_with(w.corpus, 2)
    w.select_sentence(k)
    spans = sorted(w.corpus.sentences[k].spans)
    before = list(spans)
    w.sentence_view.select_tokens(0, 1)
    w.nbest_view.setFocus()
    qtbot.keyClick(w.nbest_view, Qt.Key.Key_Tab)
    assert w.sentence_view.selection() == (spans[0].start, spans[0].end)
    qtbot.keyClick(w.nbest_view, Qt.Key.Key_Right)
    assert w.sentence_view.selection() == (spans[0].end, spans[0].end + 1)
    qtbot.keyClick(w.nbest_view, Qt.Key.Key_4)  # a type key: not the table's to give
    assert sorted(w.corpus.sentences[k].spans) == before
