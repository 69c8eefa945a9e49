"""Eight hand-labelled sentences for the taggers' tests (test_tagger, test_tag_alphabets): small
enough to check against brute force, varied enough to train on."""

from __future__ import annotations

from nerstudio.corpus.model import Corpus, Document, Sentence, Span

TEXT = [
    ("Mr. John Smith visited Paris on Monday .", [(1, 3, "PER"), (4, 5, "LOC")]),
    ("The Acme Corp. said shares rose in London .", [(1, 3, "ORG"), (7, 8, "LOC")]),
    ("Yesterday Paris beat Lyon 2 1 .", [(1, 2, "ORG"), (3, 4, "ORG")]),
    ("John Smith works for Acme Corp. in Paris .", [(0, 2, "PER"), (4, 6, "ORG"), (7, 8, "LOC")]),
    ("Several analysts in London expect a rise .", [(3, 4, "LOC")]),
    ("Anna Berg of Acme Corp. flew to Lyon .", [(0, 2, "PER"), (3, 5, "ORG"), (7, 8, "LOC")]),
    ("He said the German economy grew .", [(3, 4, "MISC")]),
    ("Paris and London are big cities .", [(0, 1, "LOC"), (2, 3, "LOC")]),
]


def tiny_sentences(repeat: int = 3) -> list[Sentence]:
    out = []
    for _ in range(repeat):
        for text, spans in TEXT:
            out.append(Sentence(text.split(), [Span(*s) for s in spans]))
    return out


def tiny_corpus(docs: int = 6) -> Corpus:
    sents = tiny_sentences(docs)
    per = len(sents) // docs
    return Corpus([Document(sents[k * per : (k + 1) * per], id=str(k + 1)) for k in range(docs)])
