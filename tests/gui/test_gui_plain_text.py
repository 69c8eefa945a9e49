"""A plain-text file opened in the application: its sentences are shown, and Save leads to a
format that keeps the entities and the text's offsets (issue 16)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from PySide6.QtCore import QSettings

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.gui.main_window import MainWindow

TEXT = "Maria Lopez flew from Vienna to Linz.\r\nShe met Dr. Smith  there.\r\n\r\nNew paragraph, café.\r\n"


@pytest.fixture
def window(qtbot, tmp_path):
    settings = QSettings(str(tmp_path / "settings.ini"), QSettings.Format.IniFormat)
    w = MainWindow(settings)
    qtbot.addWidget(w)
    w.dialogs.ask_unsaved = lambda: "discard"
    return w


def test_a_text_file_opens_as_sentences_and_save_proposes_jsonl(window, tmp_path):
    src = tmp_path / "story.txt"
    src.write_bytes(TEXT.encode("utf-8"))
    assert window.load_corpus(str(src))
    c = window.corpus
    assert c.format == "text"
    assert [list(s.words) for s in c.sentences] == [
        ["Maria", "Lopez", "flew", "from", "Vienna", "to", "Linz", "."],
        ["She", "met", "Dr.", "Smith", "there", "."],
        ["New", "paragraph", ",", "café", "."],
    ]
    assert window.sentence_view.words() == c.sentences[0].words
    window.annotation.doc.set_spans(0, [Span(0, 2, "PER"), Span(4, 5, "LOC")])
    asked = []
    out = tmp_path / "story.jsonl"
    window.dialogs.ask_save = lambda title, default, filt: asked.append(default) or str(out)
    window.act_save_corpus.trigger()  # Save on plain text is Save As, JSONL proposed
    assert asked == [str(tmp_path / "story.jsonl")]
    assert src.read_bytes() == TEXT.encode("utf-8")  # the text itself is never overwritten
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert records[0]["spans"] == [
        {"start": 0, "end": 11, "label": "PER"},
        {"start": 22, "end": 28, "label": "LOC"},
    ]
    again = read_corpus(out)
    assert again.documents[0].text == TEXT  # the text's offsets survive the save
    assert again.sentences[0].spans == [Span(0, 2, "PER"), Span(4, 5, "LOC")]
    assert not window.isWindowModified()
    window.annotation.doc.set_spans(1, [Span(3, 4, "PER")])
    asked.clear()
    window.act_save_corpus.trigger()  # now a JSONL corpus: saved in place, nothing asked
    assert asked == [] and read_corpus(out).sentences[1].spans == [Span(3, 4, "PER")]


def test_what_a_reader_set_aside_is_shown_when_the_file_opens(window, tmp_path):
    text = "Ada Lovelace met Charles Babbage in London.\n"
    (tmp_path / "n.txt").write_text(text, encoding="utf-8")
    (tmp_path / "n.ann").write_text(
        "T1\tPER 0 12\tAda Lovelace\nT2\tPER 4 12\tLovelace\n", encoding="utf-8"
    )
    assert window.load_corpus(str(tmp_path / "n.ann"))
    assert window.corpus.format == "brat" and window.corpus.sentences[0].spans == [
        Span(0, 2, "PER")
    ]
    assert "set aside" in window.statusBar().currentMessage()
