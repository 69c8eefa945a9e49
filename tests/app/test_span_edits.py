"""The span edits and the annotation commands on a selection (nerstudio.app.span_edits), Qt-free:
what each key does to one sentence's entities, checked on examples and, for every command, on
random sentences against the invariants the window relies on."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.app import span_edits
from nerstudio.app.span_edits import COMMANDS, Edit, EditRefused, Selection
from nerstudio.corpus.model import Span


def test_span_edit_functions():
    spans = [Span(0, 2, "PER"), Span(3, 4, "LOC"), Span(5, 7, "ORG")]
    assert span_edits.set_label(spans, 1, 4, "MISC") == [Span(1, 4, "MISC"), Span(5, 7, "ORG")]
    assert span_edits.clear(spans, 3, 6) == [Span(0, 2, "PER")]
    # growing into a neighbour takes its tokens; a neighbour left with none is refused, not deleted
    assert span_edits.resize(spans, Span(3, 4, "LOC"), 2, 6, 8) == [
        Span(0, 2, "PER"),
        Span(2, 6, "LOC"),
        Span(6, 7, "ORG"),
    ]
    with pytest.raises(span_edits.EditRefused):
        span_edits.resize([Span(0, 1, "ORG"), Span(1, 2, "LOC")], Span(0, 1, "ORG"), 0, 2, 3)
    # '+' on the first token of an entity right after another merges the two (undoes '/')
    halves = [Span(0, 2, "PER"), Span(2, 4, "PER"), Span(6, 7, "LOC")]
    assert span_edits.merge_pair(halves, 2) == (Span(0, 2, "PER"), Span(2, 4, "PER"))
    assert span_edits.merge_pair(halves, 3) == (Span(2, 4, "PER"), Span(6, 7, "LOC"))
    assert span_edits.merge_pair(halves, 6) is None and span_edits.merge_pair(halves, 5) is None
    assert span_edits.resize(spans, Span(3, 4, "LOC"), 4, 4, 8) == [
        Span(0, 2, "PER"),
        Span(5, 7, "ORG"),
    ]
    assert span_edits.split(spans, Span(5, 7, "ORG"), 6) == [
        Span(0, 2, "PER"),
        Span(3, 4, "LOC"),
        Span(5, 6, "ORG"),
        Span(6, 7, "ORG"),
    ]
    assert span_edits.merge(spans, Span(3, 4, "LOC"), Span(5, 7, "ORG")) == [
        Span(0, 2, "PER"),
        Span(3, 7, "LOC"),
    ]
    with pytest.raises(ValueError):
        span_edits.split(spans, Span(3, 4, "LOC"), 3)


WORDS = ["w0", "w1", "w2", "w3", "w4", "w5", "w6", "w7"]


def test_commands_on_a_selection_say_what_they_did():
    spans = [Span(0, 2, "PER"), Span(3, 4, "LOC"), Span(4, 7, "ORG")]
    caret_on = lambda k: Selection(k, k + 1, k, len(WORDS))
    assert span_edits.type_selection(spans, WORDS, caret_on(1), "ORG") == Edit(
        [Span(0, 2, "ORG"), Span(3, 4, "LOC"), Span(4, 7, "ORG")], "type “w0 w1” as ORG"
    )
    assert span_edits.type_selection(spans, WORDS, Selection(1, 4, 3, 8), "MISC") == Edit(
        [Span(1, 4, "MISC"), Span(4, 7, "ORG")], "mark “w1 w2 w3” as MISC"
    )
    # the caret stays inside the entity it shrank
    assert span_edits.command("shrink_left", spans, caret_on(6)) == Edit(
        [Span(0, 2, "PER"), Span(3, 4, "LOC"), Span(4, 6, "ORG")], "shrink ORG entity", 5
    )
    with pytest.raises(EditRefused, match="Cannot extend the ORG: the LOC next to it"):
        span_edits.command("extend_left", spans, caret_on(5))
    with pytest.raises(EditRefused, match="Nothing to merge"):
        span_edits.command("merge", [Span(0, 2, "PER")], caret_on(0))
    assert span_edits.command("split", spans, caret_on(4)) is None  # before its first token
    assert span_edits.command("clear", spans, Selection(-1, -1, -1, 8)) is None
    assert not any(span_edits.available(spans, Selection(-1, -1, -1, 8)).values())


@st.composite
def sentences(draw):
    """A sentence's non-overlapping spans and a selection in it."""
    n = draw(st.integers(1, 8))
    cuts = sorted(draw(st.sets(st.integers(0, n), max_size=6)))
    spans = [
        Span(a, b, draw(st.sampled_from(["PER", "LOC"])))
        for a, b in zip(cuts[::2], cuts[1::2])
        if draw(st.booleans()) and a < b
    ]
    a = draw(st.integers(0, n - 1))
    b = draw(st.integers(a + 1, n))
    return spans, Selection(a, b, draw(st.sampled_from([a, b - 1])), n)


def _well_formed(spans: list[Span], n: int) -> None:
    assert spans == sorted(spans)
    assert all(0 <= s.start < s.end <= n for s in spans)
    assert all(x.end <= y.start for x, y in itertools.pairwise(spans))


@settings(max_examples=400, deadline=None)
@given(sentences(), st.sampled_from(COMMANDS))
def test_every_command_keeps_entities_apart_and_agrees_with_what_is_offered(case, name):
    """An offered command changes the sentence or says why it cannot; one not offered changes
    nothing. What it leaves is sorted, non-overlapping spans inside the sentence, and the caret
    it moves to is a token of the sentence."""
    spans, sel = case
    offered = span_edits.available(spans, sel)[name]
    try:
        edit = span_edits.command(name, spans, sel)
    except EditRefused:
        return
    if edit is None or not edit.changes(spans):
        assert not offered, f"{name} is offered but does nothing"
        return
    assert offered, f"{name} is not offered but changes {spans} into {edit.spans}"
    _well_formed(edit.spans, sel.n_tokens)
    assert edit.caret is None or 0 <= edit.caret < sel.n_tokens


@settings(max_examples=200, deadline=None)
@given(sentences(), st.sampled_from(["PER", "LOC", "ORG"]))
def test_typing_a_selection_leaves_exactly_one_entity_there(case, label):
    spans, sel = case
    edit = span_edits.type_selection(spans, WORDS, sel, label)
    assert edit is not None
    _well_formed(edit.spans, sel.n_tokens)
    sp = span_edits.span_at(edit.spans, sel.caret)
    assert sp is not None and sp.label == label
