"""Non-local features: the paper's example, and a literal re-implementation on random documents."""

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.corpus.model import Span
from nerstudio.text.nonlocal_features import NonLocalFeatures, template_of


def literal(words, spans):
    """Every definition of the module docstring, spelt out with plain loops over all pairs."""
    ents = sorted((s.start, s.end, s.label) for s in spans)
    key = lambda e: tuple(words[e[0] : e[1]])
    out = Counter()
    pair = lambda a, b: f"{min(a, b)}~{max(a, b)}"

    def sub(small, big):
        n, m = len(small), len(big)
        return n < m and any(big[i : i + n] == small for i in range(m - n + 1))

    def majority(labels):
        c = Counter(labels)
        if not c:
            return None
        best = max(c.values())
        return sorted(k for k in c if c[k] == best)[0]

    inside = {i for a, b, _ in ents for i in range(a, b)}
    for x in range(len(ents)):
        for y in range(x + 1, len(ents)):
            if key(ents[x]) == key(ents[y]):
                out["PC:" + pair(ents[x][2], ents[y][2])] += 1
                out["PC=same" if ents[x][2] == ents[y][2] else "PC=diff"] += 1
    for e in ents:
        k = key(e)
        for i in range(len(words) - len(k) + 1):
            if tuple(words[i : i + len(k)]) == k and not any(
                j in inside for j in range(i, i + len(k))
            ):
                out[f"PC:{e[2]}~O"] += 1
    for e in ents:
        for f in ents:
            if e is f or (f[0] <= e[0] and e[1] <= f[1]) or len(key(f)) > 12:
                continue
            if sub(key(e), key(f)):
                out[f"SP:{e[2]}<{f[2]}"] += 1
                out["SP=same" if e[2] == f[2] else "SP=diff"] += 1
    for e in ents:
        m = majority([f[2] for f in ents if f is not e and key(f) == key(e)])
        if m is not None:
            out[f"MJ:{e[2]}~{m}"] += 1
        m = majority(
            [
                f[2]
                for f in ents
                if f is not e
                and not (f[0] <= e[0] and e[1] <= f[1])
                and len(key(f)) <= 12
                and sub(key(e), key(f))
            ]
        )
        if m is not None:
            out[f"MJS:{e[2]}~{m}"] += 1
        for i in range(e[0], e[1]):
            labs = [
                f[2]
                for f in ents
                for j in range(f[0], f[1])
                if words[j] == words[i] and not (e[0] <= j < e[1])
            ]
            m = majority(labs)
            if m is not None:
                out[f"MJT:{e[2]}~{m}"] += 1
    for x in range(len(ents) - 1):
        gap = tuple(w.lower() for w in words[ents[x][1] : ents[x + 1][0]])
        if gap in {(",",), ("and",), ("or",), (",", "and"), (",", "or")}:
            out["CJ:" + pair(ents[x][2], ents[x + 1][2])] += 1
            out["CJ=same" if ents[x][2] == ents[x + 1][2] else "CJ=diff"] += 1
    return out


def test_paper_conjunction_and_consistency():
    words = [
        "Talks",
        "in",
        "U.S.",
        ",",
        "EU",
        ",",
        "and",
        "Japan",
        ".",
        "Japan",
        "said",
        "Japan",
        "Airlines",
        "and",
        "U.S.",
        "officials",
        "agreed",
    ]
    spans = [
        Span(2, 3, "LOC"),
        Span(4, 5, "ORG"),
        Span(7, 8, "LOC"),
        Span(9, 10, "LOC"),
        Span(11, 13, "ORG"),
        Span(14, 15, "LOC"),
    ]
    f = NonLocalFeatures().strings(words, spans)
    assert f["CJ:LOC~ORG"] == 3  # U.S. , EU / EU , and Japan / Japan Airlines and U.S.
    assert f["CJ=diff"] == 3
    assert f["PC:LOC~LOC"] == 2  # Japan/Japan and U.S./U.S.
    assert f["SP:LOC<ORG"] == 2  # both Japans inside "Japan Airlines"
    assert f["MJ:LOC~LOC"] == 4
    assert f["MJS:LOC~ORG"] == 2
    assert f == literal(words, spans)


def test_unlabelled_repeat_fires_phrase_with_O():
    words = ["Smith", "met", "Smith"]
    f = NonLocalFeatures().strings(words, [Span(0, 1, "PER")])
    assert f["PC:PER~O"] == 1
    f = NonLocalFeatures().strings(words, [Span(0, 1, "PER"), Span(2, 3, "PER")])
    assert f["PC:PER~O"] == 0 and f["PC:PER~PER"] == 1


words_st = st.lists(
    st.sampled_from(["A", "B", "C", ",", "and", "or", "x"]), min_size=1, max_size=14
)


@st.composite
def doc_and_spans(draw):
    words = draw(words_st)
    spans, i = [], 0
    while i < len(words):
        if draw(st.booleans()):
            n = draw(st.integers(1, min(3, len(words) - i)))
            spans.append(Span(i, i + n, draw(st.sampled_from(["PER", "ORG", "LOC"]))))
            i += n
        else:
            i += 1
    return words, spans


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(doc_and_spans())
def test_matches_literal_definitions(ds):
    words, spans = ds
    assert NonLocalFeatures().strings(words, spans) == literal(words, spans)


def test_templates_select_families_and_vocabulary_freezes():
    words = ["Japan", "and", "Japan", "Airlines", ",", "Japan"]
    spans = [Span(0, 1, "LOC"), Span(2, 4, "ORG"), Span(5, 6, "LOC")]
    only = NonLocalFeatures(["conjunction"])
    assert {template_of(s) for s in only.strings(words, spans)} == {"CJ"}
    nl = NonLocalFeatures()
    idx, val = nl.vector(words, spans)
    assert np.all(np.diff(idx) > 0) and len(idx) == nl.n_features and val.sum() > 0
    back = NonLocalFeatures.from_state(nl.state())
    idx2, _val2 = back.vector(words, spans + [Span(1, 2, "MISC")])  # unknown strings are dropped
    assert set(idx2) <= set(range(nl.n_features)) and back.n_features == nl.n_features
    with pytest.raises(ValueError, match="unknown non-local template"):
        NonLocalFeatures(["phrase", "nope"])
