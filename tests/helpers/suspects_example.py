"""A small corpus and four hand-made suspects of it, for the suspects queue's tests (app and
window)."""

from __future__ import annotations

from nerstudio.app.document import Document
from nerstudio.app.suspects import SuspectQueue
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Span
from nerstudio.label_errors import Suspect

TEXT = """-DOCSTART- O

Leeds B-LOC
beat O
Chelsea B-ORG
in O
London B-LOC

Peter B-PER
Blackburn I-PER
met O
Smith O
today O

The O
European B-ORG
Commission I-ORG
said O
so O

Paris B-LOC
is O
in O
France B-LOC
. O
"""


def suspects_of(corpus) -> list[Suspect]:
    """Four suspects of :data:`TEXT`: two in sentence 0, one each in sentences 1 and 3."""
    S = Span
    gold = [list(s.spans) for s in corpus.sentences]
    assert gold[0] == [S(0, 1, "LOC"), S(2, 3, "ORG"), S(4, 5, "LOC")]
    return [
        Suspect(0, 0.9, 0, 1, (S(0, 1, "LOC"),), (S(0, 1, "ORG"),), "ORG for 'Leeds'"),
        Suspect(1, 0.7, 3, 4, (), (S(3, 4, "PER"),), "PER for 'Smith' (gold: none)"),
        Suspect(3, 0.5, 0, 1, (S(0, 1, "LOC"),), (S(0, 1, "PER"),), "PER for 'Paris'"),
        Suspect(0, 0.3, 2, 3, (S(2, 3, "ORG"),), (), "no entity on 'Chelsea'"),
    ]


def open_read_only(path: str) -> tuple[Document, SuspectQueue]:
    """The corpus at ``path`` and its suspects queue as another window would read them now,
    holding nothing: what the files hold."""
    doc = Document()
    queue = SuspectQueue(doc)
    doc.open(read_corpus(path))
    return doc, queue
