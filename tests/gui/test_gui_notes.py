"""Guidelines, notes and flags in the window (offscreen): Annotate ▸ Add note… / Toggle flag with
their keys, the note under the sentence's header, undo, the browser's filters, the saved file,
and the guidelines tab with the label descriptions in the legend's tooltips, reloaded on change."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings, Qt
from PySide6.QtGui import QAction, QKeySequence

import nerstudio
from nerstudio.app import review
from nerstudio.gui.controllers.notes import FLAG_KEY, NOTE_KEY
from nerstudio.gui.main_window import DEMO_DIR, MainWindow

GUIDELINES = """# Demo guidelines

## PER — Person
Names of people, fictional ones too; not their titles.

## Other labels
- ORG: companies, institutions, *sports teams*
- LOC: places
"""


@pytest.fixture
def window(qtbot, tmp_path):
    path = tmp_path / "demo.jsonl"
    nerstudio.write(nerstudio.read(DEMO_DIR / "test.conll"), path)
    (tmp_path / "guidelines.md").write_text(GUIDELINES)
    st = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    st.setValue("annotation/recoveryDir", str(tmp_path / "recovery"))
    st.sync()
    w = MainWindow(st)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    assert w.load_corpus(str(path), attach=False)
    assert w.jobs.wait(60000)
    w.show()
    w.select_sentence(2)
    return w


def test_note_and_flag_keys_do_not_clash_with_any_other_action(window):
    mine = {window.notes.act_note, window.notes.act_flag}
    for key in (NOTE_KEY, FLAG_KEY):
        seq = QKeySequence(key)
        others = [
            a.text() for a in window.findChildren(QAction) if a not in mine and seq in a.shortcuts()
        ]
        assert not others, f"{key} is also {others}"
    assert window.annotation.key_table().get(seq[0].toCombined()) is None
    rows = {text: key for key, text in window.shortcuts()}
    assert rows.get("Add note…") and rows.get("Toggle flag")  # F1's list shows them


def test_note_and_flag_in_the_window_undo_filter_and_save(window, qtbot):
    w, doc, nc = window, window.document, window.notes
    nc.ask_note = lambda k, text: "Is this an ORG or a LOC?"
    w.views.sentence_view.setFocus()
    qtbot.keyClick(
        w.views.sentence_view,
        Qt.Key.Key_N,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert doc.notes == {2: "Is this an ORG or a LOC?"}
    qtbot.keyClick(
        w.views.sentence_view,
        Qt.Key.Key_F,
        Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
    )
    assert doc.flagged.nonzero()[0].tolist() == [2] and nc.act_flag.isChecked()
    assert (
        nc.note_line.isVisible()
        and "Flagged" in nc.note_line.text()
        and "ORG or a LOC" in nc.note_line.text()
    )
    assert w.isWindowModified() and w.annotation.act_undo.isEnabled()
    # the browser's filter shows the flagged sentence only
    combo = w.views.status_filter
    combo.setCurrentIndex(combo.findData("flagged"))
    assert w.proxy.rowCount() >= 1 and w.views.filter_count.text()
    assert w.browser._visible_mask().nonzero()[0].tolist() == [2]
    combo.setCurrentIndex(combo.findData("noted"))
    assert w.browser._visible_mask().nonzero()[0].tolist() == [2]
    combo.setCurrentIndex(0)
    # undo takes the flag away (and comes back to the sentence from elsewhere)
    w.select_sentence(5)
    assert not nc.note_line.isVisible()
    w.annotation.act_undo.trigger()
    assert not doc.flagged.any() and w.current_sentence_index() == 2
    assert nc.note_line.text() == "Note: Is this an ORG or a LOC?"
    nc.ask_note = lambda k, text: "Bob's <b>firm</b>\nsecond line"  # shown as typed, on two lines
    assert (
        nc.edit_note()
        and nc.note_line.text() == "Note: Bob's &lt;b&gt;firm&lt;/b&gt;<br>second line"
    )
    w.annotation.act_undo.trigger()
    assert doc.notes == {2: "Is this an ORG or a LOC?"}
    # saved into the JSONL record
    assert w.save_corpus(wait=True)
    recs = [json.loads(line) for line in open(doc.corpus.path, encoding="utf-8")]
    assert recs[2][review.NOTE_FIELD] == "Is this an ORG or a LOC?"
    assert sum(review.NOTE_FIELD in r for r in recs) == 1 and not any(
        review.FLAG_FIELD in r for r in recs
    )
    assert not w.isWindowModified()


def test_guidelines_tab_and_legend_tooltips_reload_when_the_file_changes(window, qtbot, tmp_path):
    nc = window.notes
    assert nc.path == str(tmp_path / "guidelines.md")
    assert "Names of people" in nc.panel.browser.toPlainText()
    assert "Other labels" in nc.panel.browser.toPlainText()  # rendered: no "##" left
    assert "##" not in nc.panel.browser.toPlainText()
    chips = window.views.legend.chips
    assert "Names of people" in chips["PER"].toolTip() and "Person" in chips["PER"].toolTip()
    assert "sports teams" in chips["ORG"].toolTip() and "*" not in chips["ORG"].toolTip()
    # no description: the chip's own tip
    assert "Set the selected tokens' type" in chips["MISC"].toolTip()
    (tmp_path / "guidelines.md").write_text(
        GUIDELINES.replace("- LOC: places", "- LOC: cities, countries, rivers")
    )
    qtbot.waitUntil(lambda: "rivers" in chips["LOC"].toolTip(), timeout=5000)
    assert "rivers" in nc.panel.browser.toPlainText()


def test_a_guidelines_file_created_later_is_found_and_one_can_be_chosen(window, qtbot, tmp_path):
    nc = window.notes
    (tmp_path / "guidelines.md").unlink()
    qtbot.waitUntil(lambda: nc.path is None, timeout=5000)
    assert "No guidelines file" in nc.panel.label.text()
    assert (
        "(key" in window.views.legend.chips["PER"].toolTip()
        and "Names of people" not in window.views.legend.chips["PER"].toolTip()
    )
    (tmp_path / "demo.guidelines.md").write_text("- PER: people only\n")
    qtbot.waitUntil(lambda: nc.path == str(tmp_path / "demo.guidelines.md"), timeout=5000)
    assert "people only" in window.views.legend.chips["PER"].toolTip()
    other = tmp_path / "elsewhere.md"
    other.write_text("## LOC\nPlaces.\n")
    nc.choose(str(other))
    assert nc.path == str(other) and "Places." in window.views.legend.chips["LOC"].toolTip()
    assert nc.find() == str(other)  # remembered for this corpus
