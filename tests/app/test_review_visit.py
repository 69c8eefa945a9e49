"""Nothing the application does by itself moves the annotator (Qt-free): every change says who
made it; a sentence becomes reviewed when the annotator leaves it after editing it, or marks it,
not at the first key; a model's round never changes the sentence being edited and says how many
it predicted and how many changed; F7's walk visits every sentence of its queue in order
whatever reorders it; annotating without review writes no review file."""

from __future__ import annotations

import os

import pytest

from nerstudio.app import loop, review
from nerstudio.app.document import Document
from nerstudio.app.events import ChangeKind, Origin
from nerstudio.app.visit import Visit
from nerstudio.app.walk import Walk
from nerstudio.corpus.formats import read_corpus
from nerstudio.corpus.model import Corpus, Sentence, Span
from nerstudio.corpus.model import Document as CorpusDocument
from nerstudio.demo import DEMO_DIR, DEMO_MODEL_DIR


def _doc() -> Document:
    s = [
        Sentence(["EU", "rejects", "German", "call", "."], [Span(0, 1, "ORG")]),
        Sentence(["Peter", "Blackburn", "spoke", "."], [Span(0, 2, "PER")]),
        Sentence(["Nothing", "here", "."], []),
        Sentence(["Bonn", "and", "Paris", "met", "."], [Span(0, 1, "LOC")]),
    ]
    d = Document()
    d.open(Corpus([CorpusDocument(s, id="d1")], format="conll2003"))
    return d


def _watch(d: Document) -> list:
    seen: list = []
    d.subscribe(seen.append)
    return seen


def test_every_gold_change_says_who_made_it():
    d = _doc()
    seen = _watch(d)
    d.set_spans(2, [Span(0, 1, "MISC")])  # the annotator's edit
    d.set_many({3: []}, "a model's suggestion")  # the application's (a round, a job)
    d.set_many({0: []}, "label all occurrences", origin=Origin.USER)
    d.undo()
    d.redo()
    gold = [(ch.sentences, ch.origin) for ch in seen if ch.kind is ChangeKind.GOLD]
    assert gold == [
        ((2,), Origin.USER),
        ((3,), Origin.APP),
        ((0,), Origin.USER),
        ((0,), Origin.HISTORY),
        ((0,), Origin.HISTORY),
    ]
    assert [o.by_user for o in Origin] == [True, True, False]
    d.undo()
    d.undo()  # the application's step undone: the user's action now
    assert seen[-1].sentences == (3,) and seen[-1].origin is Origin.HISTORY


def test_an_edit_reviews_the_sentence_only_when_the_annotator_leaves_it():
    d = _doc()
    d.set_reviewed([3])  # review in use
    v = Visit(d)
    v.enter(1)
    d.set_spans(1, [Span(0, 1, "PER")])
    d.set_spans(1, [Span(0, 1, "PER"), Span(1, 2, "PER")])
    assert not d.reviewed[1]  # still being corrected: not reviewed at the first key
    assert v.enter(2)  # left after editing it: reviewed
    assert d.reviewed[1] and d.review_log[-1] == (1, (Span(0, 2, "PER"),))  # the suggestion
    assert not v.enter(0) and not d.reviewed[2]  # looked at, not edited: not reviewed
    # one undo takes back the last edit and the review together
    d.undo()
    assert not d.reviewed[1] and d.spans(1) == [Span(0, 1, "PER")]
    d.redo()
    assert d.reviewed[1] and d.spans(1) == [Span(0, 1, "PER"), Span(1, 2, "PER")]
    # an edit undone before leaving: nothing changed, nothing reviewed
    v.enter(2)
    d.set_spans(2, [Span(0, 1, "MISC")])
    d.undo()
    assert not v.enter(0) and not d.reviewed[2]


def test_without_review_in_use_leaving_reviews_nothing_and_writes_no_review_file(tmp_path):
    d = _doc()
    v = Visit(d)  # nothing reviewed, no loop: review not in use
    v.enter(1)
    d.set_spans(1, [Span(0, 1, "PER")])
    v.enter(2)
    assert not d.reviewed.any()
    path = tmp_path / "c.conll"
    review.save(d.opened(), d.reviewed, path, "conll2003", marks=d.marks())
    assert not os.path.exists(review.sidecar_path(path))  # an edit alone: no review file
    # review in use (the window's loop is on): leaving an edited sentence reviews it
    v2 = Visit(d, active=lambda: True)
    v2.enter(2)
    d.set_spans(2, [Span(0, 1, "MISC")])
    v2.enter(3)
    assert d.reviewed.tolist() == [False, False, True, False]
    review.save(d.opened(), d.reviewed, path, "conll2003", marks=d.marks())
    assert os.path.exists(review.sidecar_path(path))


def test_a_move_that_follows_an_undo_elsewhere_reviews_nothing_and_keeps_the_redo():
    d = _doc()
    d.set_reviewed([3])
    v = Visit(d)
    v.enter(0)
    d.set_spans(0, [])  # the annotator edits sentence 0
    d.set_many({2: [Span(0, 1, "MISC")]}, "a model's suggestion")
    d.undo()  # the suggestion taken back: the view follows the undo to sentence 2
    assert v.edited() and not v.enter(2) and not d.reviewed[0]
    assert d.history.can_redo()  # nothing was pushed: the undone step can be redone
    d.redo()
    assert d.spans(0) == [] and d.spans(2) == [Span(0, 1, "MISC")]
    v.enter(0)
    d.set_spans(0, [Span(0, 1, "ORG")])
    assert v.enter(1) and d.reviewed[0]  # the annotator's own move: reviewed


@pytest.fixture(scope="module")
def demo_round():
    """A real round of the bundled demo tagger on the demo test corpus, its gold removed."""
    from nerstudio.runtime.predictor import load_model_folder

    corpus = read_corpus(str(DEMO_DIR / "test.conll"))
    for s in corpus.sentences:
        s.spans = []
    tagger, _ = load_model_folder(DEMO_MODEL_DIR)
    learner = loop.OnlineLearner(tagger, every=1000)
    doc = Document()
    doc.open(corpus)
    return doc, learner.run(loop.snapshot(doc), train=False)


def test_a_round_never_changes_the_sentence_being_edited_and_counts_what_it_says(demo_round):
    doc, res = demo_round
    todo = [k for k, s in res.suggestions.items() if s]
    at = todo[0]  # the annotator is on a sentence the round would change
    seen = _watch(doc)
    applied = loop.apply(doc, res, keep=(at,))
    assert doc.spans(at) == [] and at not in applied.predicted
    assert set(applied.predicted) == set(res.suggestions) - {at}
    assert set(applied.changed) == set(todo) - {at}
    assert len(applied.changed) < len(applied.predicted)  # some were predicted empty, as they are
    assert applied.summary() == (
        f"predicted {len(applied.predicted):,} sentence(s), {len(applied.changed):,} changed"
    )
    gold = [ch for ch in seen if ch.kind is ChangeKind.GOLD]
    assert len(gold) == 1 and gold[0].origin is Origin.APP  # the application's: nothing moves


def test_the_walk_visits_every_sentence_of_the_queue_in_order_whatever_reorders_it():
    w = Walk()
    queue = [5, 3, 8, 1, 7]
    assert w.next(queue, 0, "mass") == 5
    assert w.next(queue, 5, "mass") == 3
    # a model's round reorders the queue: 3 (being looked at) and 5 moved back, 7 moved ahead
    queue = [7, 8, 1, 5, 3]
    assert w.next(queue, 3, "mass") == 7
    # something moved the cursor to a sentence late in the queue: the walk does not skip
    assert w.next(queue, 1, "mass") == 8
    assert w.next(queue, 8, "mass") is None  # 1 was visited (the cursor was on it)
    assert w.path == [0, 5, 3, 7, 1, 8]
    assert w.back(8, "mass") == 1 and w.back(5, "mass") == 0
    # another queue (another measure or filter): a new walk
    assert w.next([2, 5], 8, "margin") == 2 and w.path == [8, 2]
