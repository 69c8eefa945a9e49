"""Sentences read from running text keep their source text and token offsets (issue 16)."""

import pytest

from nerstudio.corpus.model import Corpus, Document, Sentence, Span

TEXT = "Mr.  Smith went to Paris.\nHe  left."


def _doc():
    s1 = Sentence(
        ["Mr.", "Smith", "went", "to", "Paris", "."],
        [Span(1, 2, "PER"), Span(4, 5, "LOC")],
        source=TEXT,
        offsets=[(0, 3), (5, 10), (11, 15), (16, 18), (19, 24), (24, 25)],
    )
    s2 = Sentence(["He", "left", "."], source=TEXT, offsets=[(26, 28), (30, 34), (34, 35)])
    return Document([s1, s2], id="d", text=TEXT)


def test_text_and_offsets_come_from_the_source():
    d = _doc()
    s1, s2 = d.sentences
    assert s1.text() == "Mr.  Smith went to Paris."
    text, rel = s2.char_offsets()
    assert text == "He  left." and [text[a:b] for a, b in rel] == ["He", "left", "."]
    full, offs = d.text_and_offsets()
    assert full is TEXT
    assert [[full[a:b] for a, b in o] for o in offs] == [list(s1.words), list(s2.words)]


def test_offsets_survive_copies_and_predictions():
    d = _doc()
    c = Corpus([d], format="jsonl")
    other = c.with_spans([[Span(0, 2, "PER")], []])
    s = other.sentences[0]
    assert s.offsets == d.sentences[0].offsets and s.source is TEXT
    assert other.documents[0].text is TEXT
    assert s.copy().offsets == s.offsets


def test_without_source_text_words_are_joined():
    d = Document([Sentence(["New", "York"]), Sentence(["Hi"])])
    text, offs = d.text_and_offsets()
    assert text == "New York\nHi\n"
    assert [[text[a:b] for a, b in o] for o in offs] == [["New", "York"], ["Hi"]]


def test_offsets_must_match_the_words():
    with pytest.raises(ValueError):
        Sentence(["a", "b"], source="a b", offsets=[(0, 1)])
    with pytest.raises(ValueError):
        Sentence(["a"], offsets=[(0, 1)])
