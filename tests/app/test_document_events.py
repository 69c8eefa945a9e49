"""The document's events and guards (issue 27): typed change kinds, state read-only from
outside, a failing listener isolated and logged, one check for every span written."""

from __future__ import annotations

import logging
import re

import numpy as np
import pytest
from helpers import ROOT

from nerstudio.app.document import Change, ChangeKind, Document, Origin, Run
from nerstudio.corpus.model import Corpus, Sentence, Span


def _doc() -> Document:
    d = Document()
    d.open(
        Corpus.from_sentences(
            [
                Sentence(["EU", "rejects", "German", "call", "."], [Span(0, 1, "ORG")]),
                Sentence(["Peter", "Blackburn", "spoke", "."], [Span(0, 2, "PER")]),
                Sentence(["Nothing", "here", "."], []),
            ]
        )
    )
    return d


def test_every_change_carries_a_change_kind_and_a_string_comparison_fails_loudly():
    d, seen = _doc(), []
    d.subscribe(seen.append)
    d.set_spans(2, [Span(0, 1, "MISC")])  # the gold only: an edit does not review
    d.set_reviewed([2])
    d.set_note(0, "check")
    d.set_flag(0, True)
    d.mark_saved()
    d.install_model(object(), None)
    d.model_saved("/tmp/m.npz")
    d.record_run(Run(None, 0, 1.0, {}))
    kinds = [ch.kind for ch in seen]
    assert kinds == [
        ChangeKind.GOLD,
        ChangeKind.REVIEW,
        ChangeKind.MARKS,
        ChangeKind.MARKS,
        ChangeKind.SAVED,
        ChangeKind.MODEL,
        ChangeKind.MODEL_FILE,
        ChangeKind.RUN,
    ]
    assert seen[0].sentences == (2,) and seen[6].text == "/tmp/m.npz"
    # who made each: the annotator's edits and marks; the application's save, model, run
    assert [ch.origin for ch in seen] == [Origin.USER] * 4 + [Origin.APP] * 4
    d.undo()
    assert seen[-1].kind is ChangeKind.MARKS and seen[-1].origin is Origin.HISTORY
    assert d.model_path == "/tmp/m.npz"
    assert [ch.revision for ch in seen] == list(range(seen[0].revision, d.revision + 1))
    with pytest.raises(TypeError, match="ChangeKind"):
        _ = seen[1].kind == "gold"  # the events before the enum: a bug, not a silent False
    with pytest.raises(TypeError):
        _ = seen[1].kind in ("corpus", "gold")


def test_no_listener_compares_a_change_kind_with_a_string():
    """The TypeError above catches a comparison that runs; this one, those no test reaches."""
    package = ROOT / "nerstudio"
    pattern = re.compile(r"\bch(ange)?\.kind\s*(==|!=|is|in|not in)\s*\(?\s*[\"']")
    found = [
        f"{path.relative_to(package)}:{n}"
        for path in sorted(package.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]
    assert found == []
    assert pattern.search('if ch.kind in ("gold", "saved"):')  # the pattern finds the old style


@pytest.mark.parametrize(
    "name",
    [
        "corpus",
        "disk",
        "revision",
        "history",
        "gold_revision",
        "nbest_index",
        "nbest_path",
        "nbest_file",
        "scored",
        "kt",
        "tagger",
        "tagger_path",
        "model",
        "model_path",
        "dev_nbest",
        "dev_nbest_path",
        "dev_nbest_file",
        "kt_model",
        "kt_model_path",
        "reviewed",
        "flagged",
        "runs",
        "review_log",
        "notes",
    ],
)
def test_assigning_the_state_from_outside_raises(name):
    d = _doc()
    before = getattr(d, name)
    with pytest.raises(AttributeError):
        setattr(d, name, None)
    assert getattr(d, name) is before or getattr(d, name) == before


def test_the_state_cannot_be_changed_in_place_either():
    d, seen = _doc(), []
    d.subscribe(seen.append)
    with pytest.raises(ValueError, match="read-only"):
        d.reviewed[0] = True
    with pytest.raises(ValueError, match="read-only"):
        d.flagged[0] = True
    with pytest.raises(TypeError):
        d.notes[0] = "a note"  # type: ignore[index]
    with pytest.raises(AttributeError):
        d.runs.append(Run(None, 0, 1.0, {}))  # type: ignore[attr-defined]
    assert not d.reviewed.any() and not d.flagged.any() and not d.notes and not d.runs
    assert not seen
    # the document's own methods still change them, live
    reviewed = d.reviewed
    assert d.set_reviewed([1]) == [1] and reviewed[1] and d.set_flag(2, True) and d.flagged[2]


def test_a_failing_listener_is_logged_and_the_others_still_hear(listener_failures):
    d, heard = _doc(), []

    def broken(ch: Change) -> None:
        raise RuntimeError("listener bug")

    d.subscribe(broken)
    d.subscribe(heard.append)
    d.set_many({0: [Span(1, 2, "MISC")]}, "label", reviewed=True)
    assert [ch.kind for ch in heard] == [ChangeKind.REVIEW, ChangeKind.GOLD]
    # the change itself is whole: spans, review state and the undo step
    assert d.spans(0) == [Span(1, 2, "MISC")] and d.reviewed[0] and d.history.count() == 1
    records = list(listener_failures)
    listener_failures.clear()  # expected here; any other test fails on such a record
    assert len(records) == 2 and all(r.levelno == logging.ERROR for r in records)
    msg = records[-1].getMessage()
    assert "test_a_failing_listener_is_logged_and_the_others_still_hear.<locals>.broken" in msg
    assert "gold change" in msg
    exc = records[-1].exc_info
    assert exc is not None and isinstance(exc[1], RuntimeError)
    text = logging.Formatter().format(records[-1])
    assert "Traceback" in text and "listener bug" in text
    heard.clear()
    d.undo()  # neither does a failure stop a step half way
    assert [ch.kind for ch in heard] == [ChangeKind.REVIEW, ChangeKind.GOLD]
    assert d.spans(0) == [Span(0, 1, "ORG")] and not d.reviewed[0]
    assert len(listener_failures) == 2
    listener_failures.clear()


def _state(d: Document):
    return (
        [list(s.spans) for s in d.corpus.sentences],
        d.history.count(),
        d.revision,
        d.reviewed.tolist(),
    )


@pytest.mark.parametrize(
    "edits, error",
    [
        ({2: [Span(0, 1, "LOC")], 0: [Span(4, 6, "ORG")]}, ValueError),  # past the end
        ({1: [Span(2, 2, "PER")]}, ValueError),  # empty
        ({1: [Span(-1, 1, "PER")]}, ValueError),  # before the start
        ({1: [Span(0, 1, "")]}, ValueError),  # no label
        ({1: [(0.0, 1.0, "PER")]}, ValueError),  # not integer bounds
        ({1: [(0, 1)]}, ValueError),  # not a span
        ({3: [Span(0, 1, "PER")]}, IndexError),  # no such sentence
        ({-1: [Span(0, 1, "PER")]}, IndexError),  # not the last sentence
    ],
)
def test_every_span_writing_path_takes_the_same_check(edits, error):
    d = _doc()
    before = _state(d)
    with pytest.raises(error):
        d.set_many(edits, "pre-annotate")  # all or nothing: the good edit is not made either
    assert _state(d) == before
    k, spans = next((k, v) for k, v in edits.items() if k not in (2,) or len(edits) == 1)
    with pytest.raises(error):
        d.set_spans(k, spans)
    assert _state(d) == before


def test_checked_spans_are_sorted_and_numpy_bounds_are_accepted():
    d = _doc()
    done = d.set_many({1: [Span(2, 3, "X"), (np.int64(0), np.int64(2), "PER")]}, "t")
    assert done == [1] and d.spans(1) == [Span(0, 2, "PER"), Span(2, 3, "X")]


@pytest.mark.parametrize("k", [-1, 3])
def test_sentence_indices_are_checked_for_review_states_notes_and_flags(k):
    d = _doc()
    before = _state(d)
    for call in (
        lambda: d.set_reviewed([k]),
        lambda: d.set_note(k, "x"),
        lambda: d.set_flag(k, True),
    ):
        with pytest.raises(IndexError):
            call()  # -1 was the last sentence before: a silent wrong write
    assert _state(d) == before and not d.notes and not d.flagged.any()


def test_a_pre_annotation_written_into_a_corpus_takes_the_same_check():
    from nerstudio.app.preannotate import Preannotation, apply

    corpus = _doc().corpus
    before = [list(s.spans) for s in corpus.sentences]
    bad = Preannotation(edits={2: [Span(0, 1, "LOC")], 1: [Span(3, 5, "PER")]})
    with pytest.raises(ValueError, match="outside sentence 1"):
        apply(corpus, bad)
    assert [list(s.spans) for s in corpus.sentences] == before  # all, or none
    apply(corpus, Preannotation(edits={2: [Span(1, 2, "X"), Span(0, 1, "LOC")]}))
    assert corpus.sentences[2].spans == [Span(0, 1, "LOC"), Span(1, 2, "X")]


@pytest.mark.parametrize("which", ["model", "tagger", "kt_model"])
def test_a_model_written_to_a_file_gets_that_path(which):
    d, seen = _doc(), []
    d.subscribe(seen.append)
    with pytest.raises(ValueError, match="no"):
        d.model_saved("/tmp/x.npz", which)  # nothing installed: nothing was saved
    {"model": d.install_model, "tagger": d.install_tagger, "kt_model": d.install_kt_model}[which](
        object(), None
    )
    d.model_saved("/tmp/x.npz", which)
    assert getattr(d, which + "_path") == "/tmp/x.npz"
    assert [ch.kind for ch in seen][-1] is ChangeKind.MODEL_FILE and seen[-1].text == "/tmp/x.npz"
    with pytest.raises(ValueError):
        d.model_saved("/tmp/x.npz", "corpus")
