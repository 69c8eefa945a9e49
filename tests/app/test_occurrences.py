"""Label all occurrences (issue 23, part 3): finding a phrase as whole tokens, the one undoable
edit that labels the chosen occurrences (overlaps replaced and reported), removing all, undo."""

from __future__ import annotations

import random

from nerstudio.app import occurrences as occ
from nerstudio.app.document import Document
from nerstudio.corpus.model import Corpus, Sentence, Span
from nerstudio.corpus.model import Document as CDocument


def _corpus() -> Corpus:
    rows = [
        ("Green Future won in Paris .", [Span(0, 2, "ORG")]),
        ("The Parisian press loves green future and Green Future .", [Span(4, 6, "MISC")]),
        ("Green Future Party leaders met in Paris", [Span(0, 3, "ORG"), Span(6, 7, "LOC")]),
        ("Nothing here", []),
        ("Green Future , Green Future !", [Span(0, 2, "PER")]),
    ]
    sents = [Sentence(t.split(), list(sp)) for t, sp in rows]
    return Corpus([CDocument(sents)])


def test_find_whole_tokens_case_and_existing():
    c = _corpus()
    got = occ.find(c.sentences, "Green Future")
    assert [(o.k, o.start, o.end) for o in got] == [
        (0, 0, 2),
        (1, 7, 9),
        (2, 0, 2),
        (4, 0, 2),
        (4, 3, 5),
    ]
    assert [o.status("ORG") for o in got] == ["same", "free", "overlap", "relabel", "free"]
    assert got[2].overlapping() == (Span(0, 3, "ORG"),)
    nocase = occ.find(c.sentences, "green FUTURE", case_sensitive=False)
    assert [(o.k, o.start) for o in nocase] == [(0, 0), (1, 4), (1, 7), (2, 0), (4, 0), (4, 3)]
    assert [(o.k, o.start) for o in occ.find(c.sentences, "Paris")] == [
        (0, 4),
        (2, 6),
    ]  # not "Parisian"
    assert (
        occ.find(c.sentences, "") == []
        and occ.find(c.sentences, "Future won in Paris . extra") == []
    )
    aaa = [Sentence(["a", "a", "a"], [])]
    assert [(o.start, o.end) for o in occ.find(aaa, "a a")] == [
        (0, 2)
    ]  # left to right, not overlapping


def test_find_agrees_with_a_text_search():
    """Against an independent search: the tokens joined by a separator no token holds."""
    rng = random.Random(7)
    vocab = ["a", "b", "A", "ab", "B"]
    sents = [
        Sentence([rng.choice(vocab) for _ in range(rng.randint(1, 12))], []) for _ in range(200)
    ]
    for phrase in (["a"], ["a", "b"], ["A", "a"], ["b", "b", "a"]):
        for case in (True, False):
            want = []
            for k, s in enumerate(sents):
                words = s.words if case else [w.casefold() for w in s.words]
                p = phrase if case else [w.casefold() for w in phrase]
                text, needle = (
                    "\x00" + "\x00".join(words) + "\x00",
                    "\x00" + "\x00".join(p) + "\x00",
                )
                pos = text.find(needle)
                while pos >= 0:
                    start = text[: pos + 1].count("\x00") - 1
                    want.append((k, start, start + len(p)))
                    pos = text.find(needle, pos + len(needle) - 1)
            got = [(o.k, o.start, o.end) for o in occ.find(sents, phrase, case)]
            assert got == want, (phrase, case)


def test_label_all_is_one_undoable_edit_with_its_report():
    c = _corpus()
    doc = Document()
    doc.open(c)
    before = [list(s.spans) for s in c.sentences]
    found = occ.find(c.sentences, "Green Future")
    chosen = [o for o in found if o.status("ORG") != "overlap"]  # what the preview ticks by default
    edits, rep = occ.label_edit(c.sentences, chosen, "ORG")
    assert (rep.added, rep.relabelled, rep.unchanged, rep.replaced) == (2, 1, 1, [])
    assert rep.text("ORG") == "2 labelled ORG, 1 relabelled, 1 already right"
    assert edits == {
        1: [Span(4, 6, "MISC"), Span(7, 9, "ORG")],
        4: [Span(0, 2, "ORG"), Span(3, 5, "ORG")],
    }
    assert doc.set_many(edits, "label all “Green Future” as ORG") == [1, 4]
    assert doc.history.count() == 1
    # the overlapping one, ticked by hand: the longer entity is replaced, and reported
    edits2, rep2 = occ.label_edit(c.sentences, occ.find(c.sentences, "Green Future")[2:3], "ORG")
    assert edits2 == {2: [Span(0, 2, "ORG"), Span(6, 7, "LOC")]} and rep2.replaced == [
        (2, Span(0, 3, "ORG"))
    ]
    assert "1 overlapping entity replaced" in rep2.text()
    doc.undo()
    assert [list(s.spans) for s in c.sentences] == before
    doc.redo()
    assert c.sentences[4].spans == [Span(0, 2, "ORG"), Span(3, 5, "ORG")]


def test_remove_all_only_exact_entities_of_the_label():
    c = _corpus()
    doc = Document()
    doc.open(c)
    found = occ.find(c.sentences, "Green Future")
    edits, rep = occ.remove_edit(c.sentences, found, "ORG")
    assert edits == {0: []} and rep.removed == 1  # the PER one and the longer ORG one stay
    edits, rep = occ.remove_edit(c.sentences, found)
    assert edits == {0: [], 4: []} and rep.text() == "2 entities removed"
    doc.set_many(edits, "remove all")
    assert c.sentences[2].spans == [Span(0, 3, "ORG"), Span(6, 7, "LOC")]
    doc.undo()
    assert c.sentences[4].spans == [Span(0, 2, "PER")]
