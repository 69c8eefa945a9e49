"""The "What if" tab (issue 24, point 7): the sentence edited with real keys, the tagger's
candidates and the reranker's choice of the edited sentence shown with each score change, and the
corpus untouched."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import Qt

from nerstudio.demo import DEMO_MODEL_DIR
from nerstudio.experiments.what_if import analyse

pytestmark = pytest.mark.skipif(
    not (DEMO_MODEL_DIR / "reranker.npz").exists(), reason="demo model not built"
)


def test_editing_the_sentence_updates_the_candidates_not_the_corpus(window, qtbot):
    w = window
    w.show()
    k = next(
        k for k, s in enumerate(w.corpus.sentences) if s.words[-1] == "." and len(s.words) >= 8
    )
    w.select_sentence(k)
    before = (
        list(w.corpus.sentences[k].words),
        list(w.corpus.sentences[k].spans),
        w.document.revision,
    )
    view = w.views.what_if_view
    w.tabs.setCurrentWidget(view)
    assert view.edit.text() == " ".join(before[0])
    assert "as it is" in view.header.text() and view.table.rowCount() == len(w.what_if.last.scores)
    # delete the final " ." and type " today ." instead
    view.edit.setFocus()
    view.edit.end(False)
    qtbot.keyClick(view.edit, Qt.Key.Key_Backspace)
    qtbot.keyClicks(view.edit, "today .")
    words = before[0][:-1] + ["today", "."]
    qtbot.waitUntil(lambda: w.what_if.last.words == words, timeout=5000)
    expect = analyse(w.document.tagger, w.document.model, words)
    assert w.what_if.last.choice == expect.choice
    assert (
        f"picks candidate <b>{expect.choice + 1}</b>" in view.header.text()
        and "Edited" in view.header.text()
    )
    assert view.table.rowCount() == len(expect.scores)
    deltas = [view.table.item(r, 3).text() for r in range(view.table.rowCount())]
    assert any(d != "new" for d in deltas)  # candidates lined up with the sentence's own
    assert (
        list(w.corpus.sentences[k].words),
        list(w.corpus.sentences[k].spans),
        w.document.revision,
    ) == before
    view.reset_button.click()
    assert view.edit.text() == " ".join(before[0]) and "as it is" in view.header.text()


def test_a_user_error_is_a_message_and_a_bug_is_not_hidden(window, monkeypatch):
    import nerstudio.experiments.what_if as what_if
    from nerstudio.errors import DataError

    w = window
    w.select_sentence(0)
    w.tabs.setCurrentWidget(w.views.what_if_view)

    def needs_columns(*args, **kwargs):
        raise DataError("the model uses 2 extra column(s) (POS/chunk) but the text has 0")

    monkeypatch.setattr(what_if, "analyse", needs_columns)
    w.what_if._forget()
    assert w.what_if.update() is False
    assert (
        "Cannot analyse this sentence: the model uses 2 extra" in w.views.what_if_view.header.text()
    )

    def bug(*args, **kwargs):
        raise KeyError("a table the code got wrong")

    monkeypatch.setattr(what_if, "analyse", bug)
    with pytest.raises(KeyError):  # reaches the application's bug report, not the message line
        w.what_if._forget()  # forgets the analysis and analyses again
