"""Fixed label keys (issue 23, part 5): the digit and letter keys of a label set never move.

They used to follow the order in which the labels were met, so a blank file offered PER as 1, a
pre-annotation then made it ORG, and the same data reopened as JSONL made it LOC. The keys are
checked across a real pre-annotation (the demo model) and a reopening in another format, for the
CoNLL types and for a label set of the user's own, and the remembered orders across "sessions"
(two stores on one file).
"""

from __future__ import annotations

import pytest

import nerstudio
from nerstudio.app import preannotate as pa
from nerstudio.app.document import Document
from nerstudio.app.label_keys import LabelOrders
from nerstudio.app.types import document_types
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus, Span
from nerstudio.corpus.model import Document as CDocument
from nerstudio.corpus.writing import write_corpus
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR


def _keys(scheme) -> dict[str, tuple[str | None, str | None]]:
    return {lab: (scheme.digit(lab), scheme.letter(lab)) for lab in scheme.labels}


def _blank(n: int):
    """The first ``n`` sentences of the demo dev corpus, without entities."""
    sents = list(nerstudio.read(DEMO_DIR / "dev.conll").sentences[:n])
    for s in sents:
        s.spans = []
    return Corpus([CDocument(sents)], format="conll2003")


def _opened(corpus) -> Document:
    d = Document()
    d.open(corpus)
    return d


@pytest.mark.data_integrity
def test_keys_fixed_across_preannotation_and_reopening_as_jsonl(tmp_path):
    corpus = _blank(60)
    doc = _opened(corpus)
    before = _keys(document_types(doc))
    assert before["PER"][0] == "1"  # the CoNLL order, PER ORG LOC MISC
    res = pa.preannotate(corpus, pa.load_model(DEMO_MODEL_DIR))
    # several types arrive, in corpus order
    assert len({sp.label for v in res.edits.values() for sp in v}) >= 3
    doc.set_many(res.edits, "pre-annotate")
    assert _keys(document_types(doc)) == before
    out = tmp_path / "pre.jsonl"
    write_corpus(doc.corpus, out, "jsonl")
    assert _keys(document_types(_opened(read_corpus(out)))) == before
    conll = tmp_path / "pre.conll"
    write_corpus(doc.corpus, conll, "conll")
    assert _keys(document_types(_opened(read_corpus(conll)))) == before


@pytest.mark.data_integrity
def test_a_label_set_of_ones_own_keeps_its_keys(tmp_path, monkeypatch):
    monkeypatch.setenv("NERSTUDIO_LABEL_KEYS", str(tmp_path / "keys.json"))
    corpus = _blank(3)
    corpus.sentences[0].spans = [Span(0, 1, "drug")]
    corpus.sentences[1].spans = [Span(0, 1, "dose")]
    doc = _opened(corpus)
    first = _keys(document_types(doc))
    assert list(first) == ["dose", "drug"]
    # sorts first, but arrives during the session: appended
    doc.set_spans(2, [Span(0, 1, "aaa-route")])
    during = _keys(document_types(doc))
    assert list(during) == ["dose", "drug", "aaa-route"] and {k: during[k] for k in first} == first
    out = tmp_path / "own.jsonl"
    write_corpus(doc.corpus, out, "jsonl")
    # the next session, another format
    assert _keys(document_types(_opened(read_corpus(out)))) == during
    doc.undo()  # the type leaves the text, not the keyboard
    assert _keys(document_types(doc)) == during


def test_orders_remembered_in_the_file_and_known_sets(tmp_path):
    path = tmp_path / "k.json"
    a = LabelOrders(str(path))
    # inside CoNLL: all four, fixed
    assert a.order(["MISC", "LOC"]) == (
        "PER",
        "ORG",
        "LOC",
        "MISC",
    )
    assert a.order(["LOC", "PER", "MISC", "ORG", ""]) == ("PER", "ORG", "LOC", "MISC", "")
    assert a.order(["b", "a"]) == ("a", "b")
    assert a.order(["a", "b"], current=("a", "b")) == ("a", "b")
    assert a.order(["a", "b", "0"], current=("a", "b")) == ("a", "b", "0")
    b = LabelOrders(str(path))  # another session reads what the first remembered
    assert b.order(["0", "b", "a"]) == ("a", "b", "0")
    assert b.order(["b", "0"]) == ("a", "b", "0")  # inside a remembered set: its order, complete
    assert b.order(["a", "b", "c", "0"]) == ("a", "b", "0", "c")  # the largest remembered set first
    path.write_text("not json")
    assert LabelOrders(str(path)).order(["y", "x"]) == ("x", "y")  # an unreadable file: afresh
