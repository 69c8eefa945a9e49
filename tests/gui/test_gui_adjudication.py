"""File ▸ Adjudicate annotations… in the window: the disagreements walked with keys (take A, take
B, edit, skip), the merged file and its report saved, different tokens refused (issue 23, part 2).
The example is test_adjudication.py's, whose figures are worked out by hand there."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from helpers.adjudication_example import TEXT, A, B, write_conll
from PySide6.QtCore import Qt

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span

pytestmark = pytest.mark.ux


@pytest.fixture
def w(make_window, qtbot):
    w = make_window()
    # decisions left unsaved when the test closes the window
    w.adjudication.ask_unsaved = lambda: "discard"
    w.show()
    qtbot.waitExposed(w)
    return w


def _opened(w, qtbot, paths):
    assert w.adjudication.open(paths)
    qtbot.waitUntil(
        lambda: w.adjudication.view is not None and w.adjudication.view.isVisible(), timeout=20000
    )
    return w.adjudication.view


def test_walk_with_keys_and_save(w, qtbot, tmp_path):
    a, b = write_conll(tmp_path / "a.conll", A), write_conll(tmp_path / "b.conll", B)
    v = _opened(w, qtbot, [a, b])
    assert "A–B span F1 44.44, kappa 0.351" in v.header.text()
    assert v.where.text().startswith("Disagreement 1 of 3 · sentence 1 (line 1)")
    assert "[New York]LOC" in v.versions.text() and "[New York]ORG" in v.versions.text()
    s = v.sentence
    qtbot.keyClick(s, Qt.Key.Key_A)  # New York: A's LOC
    assert v.where.text().startswith("Disagreement 2 of 3")
    qtbot.keyClick(s, Qt.Key.Key_B)  # Mary: B's PER
    assert v.where.text().startswith("Disagreement 3 of 3")
    # Paris Hilton: edited by hand — "Paris" as LOC (the digit of LOC is 3), Enter keeps it
    qtbot.keyClick(s, Qt.Key.Key_E)
    assert v.editing and "EDITING" in v.where.text()
    s.select_tokens(0, 2)
    qtbot.keyClick(s, Qt.Key.Key_Delete)
    s.select_tokens(1, 2)
    qtbot.keyClick(s, Qt.Key.Key_3)
    qtbot.keyClick(s, Qt.Key.Key_Return)
    assert not v.editing
    adj = w.adjudication.adj
    assert adj.merged() == [
        [Span(0, 1, "PER"), Span(3, 5, "LOC")],
        [Span(0, 1, "ORG"), Span(2, 3, "PER")],
        [Span(1, 2, "LOC")],
    ]
    assert "edited by hand 1, undecided 0" in v.report.toPlainText()
    # back to the first and skip it: undecided again, no entity written there
    qtbot.keyClick(s, Qt.Key.Key_P)
    qtbot.keyClick(s, Qt.Key.Key_P)
    qtbot.keyClick(s, Qt.Key.Key_S)
    assert len(adj.undecided()) == 1
    out = tmp_path / "merged.jsonl"
    w.dialogs.ask_save = lambda *_a: str(out)
    qtbot.keyClick(s, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)  # written in a worker
    qtbot.waitUntil(
        lambda: w.adjudication.saved == str(out) and not w.adjudication.saving, timeout=20000
    )
    assert not w.adjudication.unsaved
    got = [sorted(x.spans) for x in read_corpus(str(out)).sentences]
    assert got == [[Span(0, 1, "PER")], [Span(0, 1, "ORG"), Span(2, 3, "PER")], [Span(1, 2, "LOC")]]
    rep = json.loads((tmp_path / "merged.jsonl.report.json").read_text())
    assert rep["regions"] == {"agreed": 2, "disagreements": 3, "take": 1, "edit": 1, "undecided": 1}
    assert rep["disagreements"][0]["decision"] == "undecided"
    assert w.document.corpus is None  # the window's corpus is not involved


def test_different_tokens_refused_naming_the_line(w, qtbot, tmp_path):
    other = [list(x) for x in TEXT]
    other[2][1] = "Hylton"
    a, b = write_conll(tmp_path / "a.conll", A), write_conll(tmp_path / "b.conll", B, other)
    said = []
    w.dialogs.critical = lambda title, text: said.append(text)
    assert w.adjudication.open([a, b])
    qtbot.waitUntil(lambda: bool(said), timeout=20000)
    assert f"{b}:12" in said[0] and f"{a}:12" in said[0] and w.adjudication.view is None


def test_decisions_not_saved_are_asked_about(w, qtbot, tmp_path):
    a, b = write_conll(tmp_path / "a.conll", A), write_conll(tmp_path / "b.conll", B)
    v = _opened(w, qtbot, [a, b])
    asked = []
    w.adjudication.ask_unsaved = lambda: asked.append(1) or "cancel"
    qtbot.keyClick(v.sentence, Qt.Key.Key_Escape)  # nothing decided: closes without a question
    assert not v.isVisible() and not asked
    v = _opened(w, qtbot, [a, b])
    qtbot.keyClick(v.sentence, Qt.Key.Key_A)
    qtbot.keyClick(v.sentence, Qt.Key.Key_Escape)  # a decision: asked, cancelled, still open
    assert asked and v.isVisible()
    out = tmp_path / "m.conll"
    w.adjudication.ask_unsaved = lambda: "save"
    w.dialogs.ask_save = lambda *_a: str(out)
    v.close()
    assert not v.isVisible() and read_corpus(str(out)).sentences[0].spans == [
        Span(0, 1, "PER"),
        Span(3, 5, "LOC"),
    ]


def test_a_save_that_fails_says_why_and_keeps_the_decisions(w, qtbot, tmp_path):
    a, b = write_conll(tmp_path / "a.conll", A), write_conll(tmp_path / "b.conll", B)
    v = _opened(w, qtbot, [a, b])
    qtbot.keyClick(v.sentence, Qt.Key.Key_A)
    said = []
    w.dialogs.critical = lambda title, text: said.append(text)
    assert w.adjudication.save(str(tmp_path / "missing-folder" / "m.jsonl"))
    qtbot.waitUntil(lambda: bool(said) and not w.adjudication.saving, timeout=20000)
    assert "missing-folder" in said[0] and w.adjudication.unsaved
