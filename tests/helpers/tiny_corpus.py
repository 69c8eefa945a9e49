"""Eight hand-labelled sentences for the taggers' tests (test_tagger, test_tag_alphabets): small
enough to check against brute force, varied enough to train on."""

from __future__ import annotations

import numpy as np

from nerstudio.corpus.model import Corpus, Document, Sentence, Span
from nerstudio.tagging.maxent import MaxEntTagger

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


def conll_like(repeat: int = 3) -> list[Sentence]:
    """Tiny sentences with POS and chunk columns (the CoNLL set's groups by column)."""
    out = []
    for s in tiny_sentences(repeat):
        pos = [
            "NNP" if w[:1].isupper() else "CD" if w.isdigit() else "." if w == "." else "VBD"
            for w in s.words
        ]
        chk = ["I-NP" if p in ("NNP", "CD") else "O" for p in pos]
        out.append(Sentence(s.words, s.spans, extra=[pos, chk]))
    return out


def _training_parts(m: MaxEntTagger, sents):
    """The factored design as ``fit`` builds it, and the plain (scipy) design it must equal."""
    from nerstudio.tagging.maxent import make_tagset

    labels = sorted({sp.label for s in sents for sp in s.spans})
    m.tagset_ = make_tagset(labels if m.typed else [], m.task)
    design, y, mask = m._training_design(sents)
    lens = np.array([len(s.words) for s in sents])
    p1, pair = m._dynamic_ids(y, lens)
    X = m._design(m.extractor_.transform(sents), p1, pair).astype(np.float64)
    return design, y, mask, X
