"""Tag schemes: encode/decode, conlleval repairs, strict mode, detection, and seqeval agreement."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.corpus import (
    SCHEMES,
    SchemeError,
    Span,
    decode,
    detect_scheme,
    encode,
    normalize_scheme,
)
from nerstudio.corpus.schemes import convert_tags

# --------------------------------------------------------------------------------------------
# Encoding and decoding examples

SPANS = [Span(0, 2, "PER"), Span(2, 3, "PER"), Span(4, 5, "LOC"), Span(5, 8, "ORG")]
N = 9

ENCODED = {
    "iob2": ["B-PER", "I-PER", "B-PER", "O", "B-LOC", "B-ORG", "I-ORG", "I-ORG", "O"],
    "iob1": ["I-PER", "I-PER", "B-PER", "O", "I-LOC", "I-ORG", "I-ORG", "I-ORG", "O"],
    "bioes": ["B-PER", "E-PER", "S-PER", "O", "S-LOC", "B-ORG", "I-ORG", "E-ORG", "O"],
    "bilou": ["B-PER", "L-PER", "U-PER", "O", "U-LOC", "B-ORG", "I-ORG", "L-ORG", "O"],
    "scn": ["S-PER", "C-PER", "S-PER", "N", "S-LOC", "S-ORG", "C-ORG", "C-ORG", "N"],
}

UNTYPED = [Span(0, 2, ""), Span(2, 3, ""), Span(4, 7, "")]
UNTYPED_ENCODED = {
    "iob2": ["B", "I", "B", "O", "B", "I", "I", "O"],
    "iob1": ["I", "I", "B", "O", "I", "I", "I", "O"],
    "bioes": ["B", "E", "S", "O", "B", "I", "E", "O"],
    "bilou": ["B", "L", "U", "O", "B", "I", "L", "O"],
    "scn": ["S", "C", "S", "N", "S", "C", "C", "N"],
}


@pytest.mark.parametrize("scheme", SCHEMES)
def test_encode_typed(scheme):
    assert encode(SPANS, N, scheme) == ENCODED[scheme]


@pytest.mark.parametrize("scheme", SCHEMES)
def test_decode_typed(scheme):
    assert decode(ENCODED[scheme], scheme) == (SPANS, 0)
    assert decode(ENCODED[scheme], scheme, strict=True) == (SPANS, 0)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_untyped_labels(scheme):
    tags = encode(UNTYPED, 8, scheme)
    assert tags == UNTYPED_ENCODED[scheme]
    assert decode(tags, scheme, strict=True) == (UNTYPED, 0)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_empty_and_all_outside(scheme):
    assert encode([], 0, scheme) == []
    assert decode([], scheme) == ([], 0)
    outside = "N" if scheme == "scn" else "O"
    assert encode([], 3, scheme) == [outside] * 3
    assert decode([outside] * 3, scheme) == ([], 0)


def test_labels_with_hyphens():
    spans = [Span(0, 2, "creative-work")]
    for scheme in SCHEMES:
        tags = encode(spans, 3, scheme)
        assert decode(tags, scheme, strict=True)[0] == spans
    assert encode(spans, 3, "iob2") == ["B-creative-work", "I-creative-work", "O"]


@pytest.mark.parametrize(
    "spans",
    [
        [Span(0, 2, "A"), Span(1, 3, "B")],  # overlap
        [Span(2, 2, "A")],  # empty
        [Span(0, 4, "A")],  # past the end
        [Span(-1, 1, "A")],
    ],
)
def test_encode_rejects_bad_spans(spans):
    with pytest.raises(ValueError):
        encode(spans, 3, "iob2")


def test_encode_sorts_spans():
    assert encode([Span(2, 3, "B"), Span(0, 1, "A")], 3, "iob2") == ["B-A", "O", "B-B"]


def test_convert_tags():
    iob1 = ["I-PER", "I-PER", "B-PER", "O", "I-LOC"]
    assert convert_tags(iob1, "iob1", "iob2") == ["B-PER", "I-PER", "B-PER", "O", "B-LOC"]
    assert convert_tags(iob1, "iob1", "bioes") == ["B-PER", "E-PER", "S-PER", "O", "S-LOC"]
    assert convert_tags(iob1, "iob1", "scn") == ["S-PER", "C-PER", "S-PER", "N", "S-LOC"]
    # repaired on the way: the stray I- starts an entity
    assert convert_tags(["O", "I-X", "I-X"], "iob2", "iob2") == ["O", "B-X", "I-X"]


@pytest.mark.parametrize(
    "name,expected",
    [
        ("IOB2", "iob2"),
        ("bio", "iob2"),
        ("iob", "iob2"),
        ("iob1", "iob1"),
        (" IOBES ", "bioes"),
        ("bmes", "bioes"),
        ("BILOU", "bilou"),
        ("scn", "scn"),
    ],
)
def test_normalize_scheme(name, expected):
    assert normalize_scheme(name) == expected


def test_normalize_scheme_unknown():
    with pytest.raises(ValueError, match="unknown tag scheme 'xyz'"):
        normalize_scheme("xyz")


# --------------------------------------------------------------------------------------------
# Repairs (conlleval reading) and the "drop" reading


@pytest.mark.parametrize(
    "scheme,tags,spans,repairs",
    [
        # IOB2: I-X after O starts an entity, once per stray run
        ("iob2", ["O", "I-PER", "I-PER", "O"], [Span(1, 3, "PER")], 1),
        ("iob2", ["I-PER"], [Span(0, 1, "PER")], 1),
        ("iob2", ["B-PER", "I-LOC", "I-LOC"], [Span(0, 1, "PER"), Span(1, 3, "LOC")], 1),
        ("iob2", ["O", "I-A", "O", "I-A"], [Span(1, 2, "A"), Span(3, 4, "A")], 2),
        # SCN: C after N starts an entity
        ("scn", ["N", "C-PER", "C-PER"], [Span(1, 3, "PER")], 1),
        ("scn", ["N", "C"], [Span(1, 2, "")], 1),
        ("scn", ["S-PER", "C-LOC"], [Span(0, 1, "PER"), Span(1, 2, "LOC")], 1),
        # IOB1: I- after O is regular; B- after O (or after another type) is irregular but a start
        ("iob1", ["O", "I-PER", "I-PER"], [Span(1, 3, "PER")], 0),
        ("iob1", ["I-PER", "B-PER"], [Span(0, 1, "PER"), Span(1, 2, "PER")], 0),
        ("iob1", ["O", "B-MISC", "I-MISC"], [Span(1, 3, "MISC")], 1),
        ("iob1", ["B-MISC"], [Span(0, 1, "MISC")], 1),
        ("iob1", ["I-PER", "B-LOC"], [Span(0, 1, "PER"), Span(1, 2, "LOC")], 1),
        # BIOES: unclosed entities are closed, stray E-/I- start entities
        ("bioes", ["B-PER", "I-PER"], [Span(0, 2, "PER")], 1),
        ("bioes", ["B-PER", "O"], [Span(0, 1, "PER")], 1),
        ("bioes", ["B-PER", "S-LOC"], [Span(0, 1, "PER"), Span(1, 2, "LOC")], 1),
        ("bioes", ["B-PER", "B-PER", "E-PER"], [Span(0, 1, "PER"), Span(1, 3, "PER")], 1),
        ("bioes", ["O", "E-PER"], [Span(1, 2, "PER")], 1),
        ("bioes", ["O", "I-PER", "E-PER"], [Span(1, 3, "PER")], 1),
        ("bilou", ["B-PER", "I-PER"], [Span(0, 2, "PER")], 1),
        ("bilou", ["O", "L-PER"], [Span(1, 2, "PER")], 1),
    ],
)
def test_repairs(scheme, tags, spans, repairs):
    assert decode(tags, scheme) == (spans, repairs)
    assert decode(tags, scheme, on_invalid="repair") == (spans, repairs)
    if repairs:
        with pytest.raises(SchemeError):
            decode(tags, scheme, strict=True)
    else:
        assert decode(tags, scheme, strict=True) == (spans, 0)


@pytest.mark.parametrize(
    "scheme,tags,spans",
    [
        ("iob2", ["O", "I-PER", "I-PER", "B-LOC"], [Span(3, 4, "LOC")]),
        ("iob2", ["B-PER", "I-LOC", "I-LOC"], [Span(0, 1, "PER")]),
        ("bioes", ["B-PER", "I-PER"], []),
        ("bioes", ["B-PER", "I-PER", "O", "S-LOC"], [Span(3, 4, "LOC")]),
        ("bioes", ["B-PER", "B-PER", "E-PER"], [Span(1, 3, "PER")]),
        ("bioes", ["O", "I-PER", "E-PER"], []),
        ("bioes", ["B-PER", "E-LOC"], []),
        ("scn", ["N", "C-PER", "S-PER"], [Span(2, 3, "PER")]),
    ],
)
def test_drop(scheme, tags, spans):
    assert decode(tags, scheme, on_invalid="drop")[0] == spans


@pytest.mark.parametrize(
    "scheme,tags,index",
    [
        ("iob2", ["O", "I-PER"], 1),
        ("iob2", ["B-PER", "O", "O", "I-PER", "I-PER"], 3),
        ("iob2", ["B-PER", "I-LOC"], 1),
        ("scn", ["S-PER", "N", "C-PER"], 2),
        ("iob1", ["O", "O", "B-MISC"], 2),
        ("bioes", ["B-PER", "I-PER", "O"], 2),
        ("bioes", ["O", "B-PER", "I-PER"], 2),  # unclosed at the end: the last token
        ("bioes", ["O", "E-PER"], 1),
        ("bilou", ["B-PER", "U-PER"], 1),
    ],
)
def test_strict_raises_with_index(scheme, tags, index):
    with pytest.raises(SchemeError) as info:
        decode(tags, scheme, strict=True)
    assert info.value.index == index
    assert "invalid transition" in info.value.message
    with pytest.raises(SchemeError) as info2:
        decode(tags, scheme, on_invalid="raise")
    assert info2.value.index == index


@pytest.mark.parametrize(
    "scheme,tags,index",
    [
        ("iob2", ["O", "X-PER"], 1),
        ("iob2", ["B-"], 0),
        ("iob2", ["O", "O", "E-PER"], 2),
        ("iob2", ["N"], 0),
        ("iob1", ["S-PER"], 0),
        ("scn", ["O"], 0),
        ("scn", ["B-PER"], 0),
        ("bioes", ["L-PER"], 0),
        ("bilou", ["E-PER"], 0),
        ("iob2", [""], 0),
        ("iob2", ["o"], 0),
    ],
)
def test_unknown_tags_raise_even_when_not_strict(scheme, tags, index):
    with pytest.raises(SchemeError) as info:
        decode(tags, scheme)
    assert info.value.index == index
    assert "unknown tag" in str(info.value)


# --------------------------------------------------------------------------------------------
# Detection


@pytest.mark.parametrize(
    "seqs,expected",
    [
        ([["B-PER", "I-PER", "O"], ["O", "B-LOC"]], "iob2"),
        ([["I-PER", "I-PER", "O", "I-LOC"]], "iob1"),
        ([["I-PER", "B-PER", "O"]], "iob1"),
        ([["B-PER", "E-PER", "S-LOC", "O"]], "bioes"),
        ([["S-LOC", "O"]], "bioes"),
        ([["B-PER", "L-PER", "U-LOC", "O"]], "bilou"),
        ([["S-PER", "C-PER", "N"]], "scn"),
        ([["N", "S", "C", "N"]], "scn"),
        ([["N", "S-PER", "N"]], "scn"),
        ([["N", "N"]], "scn"),
        ([["O", "O"]], "iob2"),
        ([], "iob2"),
        ([["B", "I", "O"]], "iob2"),
        ([["I", "I", "O", "I"]], "iob1"),
        # conll2002-like: IOB2 with one stray I- tag is still IOB2
        ([["B-PER", "I-PER", "O"]] * 5 + [["O", "I-MISC"]], "iob2"),
        # conll2003-like: IOB1 with a few B- between same-type neighbours and one irregular B-
        ([["I-PER", "O", "I-LOC"]] * 5 + [["I-PER", "B-PER"], ["O", "B-MISC"]], "iob1"),
    ],
)
def test_detect_scheme(seqs, expected):
    assert detect_scheme(seqs) == expected


def test_detect_scheme_accepts_a_generator():
    assert detect_scheme(iter([("I-A", "O"), ("I-B",)])) == "iob1"


# --------------------------------------------------------------------------------------------
# Properties

LABELS = ["PER", "LOC", "ORG", "creative-work", ""]


@st.composite
def span_lists(draw, labels=LABELS, max_len=14):
    """A sentence length and sorted, non-overlapping spans inside it (adjacent spans allowed)."""
    n = draw(st.integers(0, max_len))
    spans = []
    pos = 0
    while pos < n:
        gap = draw(st.integers(0, 3))
        pos += gap
        if pos >= n or not draw(st.booleans()):
            continue
        length = draw(st.integers(1, min(4, n - pos)))
        spans.append(Span(pos, pos + length, draw(st.sampled_from(labels))))
        pos += length
    return n, spans


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=span_lists())
def test_property_encode_decode_round_trip(data):
    n, spans = data
    for scheme in SCHEMES:
        tags = encode(spans, n, scheme)
        assert len(tags) == n
        assert decode(tags, scheme) == (spans, 0), scheme
        assert decode(tags, scheme, strict=True) == (spans, 0), scheme
        assert decode(tags, scheme, on_invalid="drop") == (spans, 0), scheme
        for other in SCHEMES:
            assert convert_tags(tags, scheme, other) == encode(spans, n, other)


def _tag_alphabet(scheme: str, labels=("PER", "LOC")) -> list[str]:
    prefixes = {"iob1": "BI", "iob2": "BI", "bioes": "BIES", "bilou": "BILU", "scn": "SC"}[scheme]
    outside = "N" if scheme == "scn" else "O"
    return [outside, outside] + [f"{p}-{lab}" if lab else p for p in prefixes for lab in labels]


def tag_sequences(scheme: str, labels=("PER", "LOC")):
    return st.lists(st.sampled_from(_tag_alphabet(scheme, labels)), max_size=12)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_property_reencoding_is_valid(data):
    """Whatever the input, encode(decode(tags)) is a valid sequence that decodes to the same spans."""
    for scheme in SCHEMES:
        tags = data.draw(tag_sequences(scheme, ("PER", "LOC", "")), label=scheme)
        for mode in ("repair", "drop"):
            spans, repairs = decode(tags, scheme, on_invalid=mode)
            again = encode(spans, len(tags), scheme)
            assert decode(again, scheme, strict=True) == (spans, 0)
        # strict raises exactly when the conlleval reading repairs something
        spans, repairs = decode(tags, scheme)
        if repairs:
            with pytest.raises(SchemeError):
                decode(tags, scheme, strict=True)
        else:
            assert decode(tags, scheme, strict=True) == (spans, 0)


def _as_bioes(tags):
    return [{"L": "E", "U": "S"}.get(t[0], t[0]) + t[1:] for t in tags]


@pytest.mark.slow
@pytest.mark.parametrize("scheme", ["iob1", "iob2", "bioes", "bilou"])
def test_property_repair_equals_seqeval_default(scheme):
    seq = pytest.importorskip("seqeval.metrics.sequence_labeling")

    @settings(max_examples=200, deadline=None)
    @given(tags=tag_sequences(scheme))
    def check(tags):
        spans, _ = decode(tags, scheme)
        ref_tags = _as_bioes(tags) if scheme == "bilou" else tags
        expected = {(t, s, e + 1) for t, s, e in seq.get_entities(list(ref_tags))}
        assert {(sp.label, sp.start, sp.end) for sp in spans} == expected
        assert len(spans) == len(expected)

    check()


@pytest.mark.parametrize("scheme", ["iob2", "bioes", "bilou"])
def test_property_drop_equals_seqeval_strict(scheme):
    sch = pytest.importorskip("seqeval.scheme")
    ref = {"iob2": sch.IOB2, "bioes": sch.IOBES, "bilou": sch.BILOU}[scheme]

    @settings(max_examples=200, deadline=None)
    @given(tags=tag_sequences(scheme))
    def check(tags):
        spans, _ = decode(tags, scheme, on_invalid="drop")
        ents = sch.Entities([list(tags)], ref).entities[0]
        assert [(sp.label, sp.start, sp.end) for sp in spans] == [
            (e.tag, e.start, e.end) for e in ents
        ]

    check()


@pytest.mark.slow
def test_seqeval_examples_from_its_docs():
    """Fixed cross-checks, so a seqeval upgrade that changes semantics is noticed."""
    seq = pytest.importorskip("seqeval.metrics.sequence_labeling")
    tags = ["B-PER", "I-PER", "O", "B-LOC"]
    assert seq.get_entities(tags) == [("PER", 0, 1), ("LOC", 3, 3)]
    assert decode(tags, "iob2")[0] == [Span(0, 2, "PER"), Span(3, 4, "LOC")]
