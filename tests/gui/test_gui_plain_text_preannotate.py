"""Issue 16's acceptance path, end to end in the window: a plain-text file is opened, pre-annotated
with the bundled demo model (tagger + reranker), corrected, saved; the saved entities are the
pipeline's, and their character offsets index the original text, also after an export to brat."""

from __future__ import annotations

import pytest

pytest.importorskip("PySide6")
pytest.importorskip("pytestqt")

import nerstudio
from nerstudio.corpus.formats import read_corpus, write_corpus
from nerstudio.corpus.model import Span
from nerstudio.gui.main_window import DEMO_MODEL_DIR

TEXT = (
    "Passenger numbers at Kessel Airport rose again in March, the Harbour Authority said on Tuesday.\n\n"
    "Maria Lindqvist, who runs the ferry line between Kessel and Port Albury, expects a busy  summer.\r\n"
    "The Albury Times reported that Nordvik Shipping will add two boats.\n"
)


def _char_entities(corpus):
    """(start, end, label) of every entity, in the document's own text."""
    out = []
    for d in corpus.documents:
        _, offsets = d.text_and_offsets()
        for s, offs in zip(d.sentences, offsets):
            out += [(offs[sp.start][0], offs[sp.end - 1][1], sp.label) for sp in s.spans]
    return out


def test_plain_text_opened_preannotated_corrected_and_saved(qtbot, tmp_path, empty_window):
    src = tmp_path / "harbour.txt"
    src.write_bytes(TEXT.encode("utf-8"))
    w = empty_window
    assert w.load_corpus(str(src), attach=False)
    doc = w.document
    assert doc.corpus.format == "text" and len(doc.corpus) == 3
    assert all(not s.spans for s in doc.corpus.sentences)

    w.dialogs.ask_model_folder = lambda start: str(DEMO_MODEL_DIR)
    w.act_preannotate.trigger()
    qtbot.waitUntil(lambda: not w.jobs.busy and bool(w.preannotate.last), timeout=60000)

    # the entities are the pipeline's, sentence by sentence, in the text's own offsets
    pipe = nerstudio.load(DEMO_MODEL_DIR)
    expected = []
    for s in doc.corpus.sentences:
        # given tokens, the pipeline's offsets are in the tokens joined by single spaces
        joined = [sum(len(x) + 1 for x in s.words[:i]) for i in range(len(s.words))]
        for e in pipe.predict(list(s.words)):
            i = joined.index(e.start)
            j = max(t for t in range(len(s.words)) if joined[t] < e.end)
            expected.append((s.offsets[i][0], s.offsets[j][1], e.label))
    got = _char_entities(doc.corpus)
    assert got == sorted(got) and got == sorted(expected)
    assert len(got) >= 3, got  # the demo model finds entities in this text
    assert all(TEXT[a:b].strip() == TEXT[a:b] for a, b, _ in got)
    assert doc.history.count() == 1 and doc.is_dirty()

    # the annotator corrects one entity: "Port Albury" is a location
    k = 1
    words = doc.corpus.sentences[k].words
    i = words.index("Port")
    fixed = [sp for sp in doc.spans(k) if sp.end <= i or sp.start >= i + 2] + [
        Span(i, i + 2, "LOC")
    ]
    doc.set_spans(k, fixed)

    out = tmp_path / "harbour.jsonl"
    w.dialogs.ask_save = lambda title, default, filt: str(out)
    w.act_save_corpus.trigger()  # plain text cannot hold entities: Save is Save As, JSONL
    assert not w.isWindowModified()
    assert src.read_bytes() == TEXT.encode("utf-8")

    saved = read_corpus(out)
    assert saved.documents[0].text == TEXT
    ents = _char_entities(saved)
    assert ents == _char_entities(doc.corpus)
    start = TEXT.index("Port Albury")
    assert (start, start + len("Port Albury"), "LOC") in ents
    assert all("\n" not in TEXT[a:b] for a, b, _ in ents)  # no entity crosses a sentence

    # exported to brat, the .txt is the original text and every .ann offset indexes it
    brat = tmp_path / "brat" / "harbour.ann"
    brat.parent.mkdir()
    write_corpus(saved, brat, "brat")
    assert brat.with_suffix(".txt").read_bytes().decode("utf-8") == TEXT
    rows = [
        line.split("\t")
        for line in brat.read_text(encoding="utf-8").splitlines()
        if line.startswith("T")
    ]
    assert (
        sorted((int(r[1].split()[1]), int(r[1].split()[2]), r[1].split()[0]) for r in rows) == ents
    )
    for r in rows:
        a, b = int(r[1].split()[1]), int(r[1].split()[2])
        assert TEXT[a:b] == r[2]
