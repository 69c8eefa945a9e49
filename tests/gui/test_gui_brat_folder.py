"""A brat collection in the window: File ▸ Open brat folder… opens a folder of pairs as one
corpus of documents, an edit is saved back (Ctrl+S) into its own pair only, and the other files
of the folder keep every byte."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span

A = "Nokia signed a deal with Siemens in Munich.\n"
B = "Greta Lind flew to Oslo on Monday.\n"


def _collection(folder):
    folder.mkdir()
    (folder / "a.txt").write_text(A, encoding="utf-8")
    (folder / "a.ann").write_text(
        "T1\tORG 0 5\tNokia\nT2\tORG 25 32\tSiemens\n#1\tAnnotatorNotes T1\tFinnish\n",
        encoding="utf-8",
    )
    (folder / "b.txt").write_text(B, encoding="utf-8")
    (folder / "b.ann").write_text("T1\tPER 0 10\tGreta Lind\n", encoding="utf-8")
    (folder / "annotation.conf").write_text("[entities]\nPER\nORG\nLOC\n", encoding="utf-8")
    return folder


def test_a_brat_folder_is_opened_edited_and_saved_pair_by_pair(qtbot, tmp_path, make_window):
    folder = _collection(tmp_path / "collection")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    w = make_window()
    w.dialogs.ask_corpus_folder = lambda: str(folder)
    w.act_open_folder.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy and w.document.corpus is not None, timeout=30000)
    doc = w.document
    assert doc.corpus.format == "brat" and [d.id for d in doc.corpus.documents] == ["a", "b"]
    k = len(doc.corpus.documents[0].sentences)  # the first sentence of b.txt
    w.select_sentence(k)  # the header names the pair's own file
    assert "b.txt:1" in w.views.sentence_header.text()
    words = doc.corpus.sentences[k].words
    i = words.index("Oslo")
    doc.set_spans(k, list(doc.spans(k)) + [Span(i, i + 1, "LOC")])
    assert w.isWindowModified()
    w.act_save_corpus.trigger()
    assert not w.isWindowModified()
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert set(after) == set(before)
    assert {n: v for n, v in after.items() if n != "b.ann"} == {
        n: v for n, v in before.items() if n != "b.ann"
    }
    assert after["b.ann"].decode("utf-8").splitlines() == [
        "T1\tPER 0 10\tGreta Lind",
        "T2\tLOC 19 23\tOslo",
    ]
    assert read_corpus(folder).sentences[k].spans == [Span(0, 2, "PER"), Span(i, i + 1, "LOC")]


@pytest.mark.slow
def test_an_unsaved_edit_in_a_brat_folder_is_recovered(qtbot, tmp_path, make_window):
    """Autosave covers a folder like a file: the recovery file is written after an edit, and a
    new window opening the folder offers it and gets the edit back."""
    folder = _collection(tmp_path / "collection")
    w = make_window()
    assert w.load_corpus(str(folder), attach=False)
    k = len(w.corpus.documents[0].sentences)
    i = w.corpus.sentences[k].words.index("Oslo")
    with qtbot.waitSignal(w.annotation.autosaved, timeout=10000):
        w.document.set_spans(k, list(w.document.spans(k)) + [Span(i, i + 1, "LOC")])
    w.annotation.autosaver.instance.abandon()  # as if its process were killed: its files stay
    w2 = make_window()
    offered = []
    w2.dialogs.ask_recover = lambda path, summary="": offered.append(path) or True
    assert w2.load_corpus(str(folder), attach=False)
    assert offered and w2.corpus.sentences[k].spans == [Span(0, 2, "PER"), Span(i, i + 1, "LOC")]
    assert w2.isWindowModified()
