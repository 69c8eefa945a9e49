"""Annotate ▸ Label all occurrences… in the window: the preview from the entity under the caret,
ticking, one undoable edit, remove all (issue 23, part 3)."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from nerstudio.app import occurrences as occ
from nerstudio.corpus.model import Span

pytestmark = pytest.mark.ux


@pytest.fixture
def w(demo_files, make_window, qtbot):
    w = make_window()
    w.resize(1280, 800)
    w.show()
    qtbot.waitExposed(w)
    assert w.load_corpus(str(demo_files / "dev.conll"), attach=False)
    assert w.runner.wait(30000)
    return w


def _repeated_entity(corpus):
    """An entity whose words occur at least three times, not all as that entity."""
    for k, s in enumerate(corpus.sentences):
        for sp in s.spans:
            found = occ.find(corpus.sentences, s.words[sp.start : sp.end])
            if len(found) >= 3 and any(o.status(sp.label) != "same" for o in found):
                return k, sp, found
    raise AssertionError("no repeated entity in the demo corpus")


def test_label_all_from_the_entity_under_the_caret_and_undo(w, qtbot):
    k, sp, found = _repeated_entity(w.corpus)
    before = [list(s.spans) for s in w.corpus.sentences]
    w.select_sentence(k)
    w.sentence_view.setFocus()
    w.sentence_view.select_tokens(sp.start, sp.start + 1)  # the caret on the entity
    qtbot.keyClick(
        w.sentence_view,
        Qt.Key.Key_A,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    d = w.occurrences.dialog
    assert d is not None and d.isVisible()
    assert (
        d.phrase.text() == " ".join(w.corpus.sentences[k].words[sp.start : sp.end])
        and d.label() == sp.label
    )
    assert d.list.count() == len(found)
    # the new type for all but the last, by hand
    new = "MISC" if sp.label != "MISC" else "ORG"
    d.type.setCurrentIndex(d.type.findData(new))
    d.tick_all(True)
    d.list.item(d.list.count() - 1).setCheckState(Qt.CheckState.Unchecked)
    qtbot.mouseClick(d.label_button, Qt.MouseButton.LeftButton)
    assert not d.isVisible()
    for o in found[:-1]:
        assert Span(o.start, o.end, new) in w.corpus.sentences[o.k].spans
    last = found[-1]  # unticked: as it was

    def there(spans):
        return [s for s in spans if s.start < last.end and last.start < s.end]

    assert there(w.corpus.sentences[last.k].spans) == there(before[last.k])
    assert w.document.history.count() == 1 and "Ctrl+Z" in w.statusBar().currentMessage()
    w.annotation.undo()
    assert [list(s.spans) for s in w.corpus.sentences] == before


def test_remove_all_and_a_search_as_the_phrase(w, qtbot):
    k, sp, found = _repeated_entity(w.corpus)
    phrase = " ".join(w.corpus.sentences[k].words[sp.start : sp.end])
    w.sentence_view.clear()  # nothing selected: the search box's text is the phrase
    w.views.search.setText(phrase)
    d = w.occurrences.open_dialog()
    assert d.phrase.text() == phrase and d.list.count() == len(found)
    d.case.setChecked(False)
    n_nocase = d.list.count()
    assert n_nocase >= len(found)
    qtbot.mouseClick(d.remove_button, Qt.MouseButton.LeftButton)
    for o in occ.find(w.corpus.sentences, phrase, case_sensitive=False):
        assert not any((s.start, s.end) == (o.start, o.end) for s in w.corpus.sentences[o.k].spans)
    assert "removed" in w.occurrences.last
