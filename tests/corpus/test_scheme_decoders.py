"""The per-scheme decoders of :mod:`nerstudio.corpus.schemes` against the single function they
replaced, kept here as the oracle: same spans, same repair count, same error (index and
message) on random tag sequences of every scheme, in every ``on_invalid`` mode."""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nerstudio.corpus import SCHEMES, SchemeError, Span, decode
from nerstudio.corpus.schemes import _DECODERS, parse_tag

_PREFIXES = {
    "iob1": ("B", "I"),
    "iob2": ("B", "I"),
    "bioes": ("B", "I", "E", "S"),
    "bilou": ("B", "I", "L", "U"),
    "scn": ("S", "C"),
}
_OUTSIDE = {"iob1": "O", "iob2": "O", "bioes": "O", "bilou": "O", "scn": "N"}


def reference_decode(
    tags: Sequence[str], scheme: str, strict: bool = False, on_invalid: str = "repair"
) -> tuple[list[Span], int]:
    if strict:
        on_invalid = "raise"
    drop = on_invalid == "drop"
    spans: list[Span] = []
    repairs = 0
    start = -1
    label = ""
    prev, prev_label = "O", ""
    bioes = scheme in ("bioes", "bilou")
    for i, tag in enumerate(tags):
        try:
            hit = parse_tag(tag, scheme)
        except ValueError as exc:
            raise SchemeError(i, str(exc)) from None
        kind, lab = hit
        if kind == "O" and start < 0:
            prev, prev_label = kind, lab
            continue
        bad = None
        if kind == "O":
            if start >= 0:
                if bioes and prev in ("B", "I"):
                    bad = f"entity {label or 'span'} not closed by E-/S- before {tag!r}"
                if not (drop and bad):
                    spans.append(Span(start, i, label))
                start = -1
        elif kind == "B":
            unclosed = False
            if scheme == "iob1" and not (prev in ("B", "I") and prev_label == lab):
                bad = f"B-{lab} does not follow an entity of type {lab} (IOB1)"
            if start >= 0:
                if bioes and prev in ("B", "I"):
                    bad = f"entity {label or 'span'} not closed by E-/S- before {tag!r}"
                    unclosed = True
                if not (drop and unclosed):
                    spans.append(Span(start, i, label))
            start, label = i, lab
            if drop and scheme == "iob1" and bad:
                start = -1
        elif kind in ("I", "C"):
            continues = start >= 0 and label == lab and (not bioes or prev in ("B", "I"))
            if not continues:
                if scheme != "iob1":
                    bad = f"{tag!r} does not continue an entity (after {tags[i - 1] if i else 'sentence start'!r})"
                if start >= 0 and not (drop and bioes and prev in ("B", "I")):
                    spans.append(Span(start, i, label))
                start, label = i, lab
                if drop and bad:
                    start = -1
        elif kind == "E":
            if start >= 0 and label == lab and prev in ("B", "I"):
                spans.append(Span(start, i + 1, label))
            else:
                bad = f"{tag!r} does not end an open entity"
                if not drop:
                    if start >= 0:
                        spans.append(Span(start, i, label))
                    spans.append(Span(i, i + 1, lab))
            start = -1
        elif kind == "S":
            if scheme == "scn":
                if start >= 0:
                    spans.append(Span(start, i, label))
                start, label = i, lab
            else:
                if start >= 0:
                    if prev in ("B", "I"):
                        bad = f"entity {label or 'span'} not closed by E-/S- before {tag!r}"
                    if not (drop and bad):
                        spans.append(Span(start, i, label))
                    start = -1
                spans.append(Span(i, i + 1, lab))
        if bad:
            if on_invalid == "raise":
                raise SchemeError(i, f"invalid transition: {bad}")
            repairs += 1
        prev, prev_label = kind, lab
    if start >= 0:
        if scheme in ("bioes", "bilou") and prev in ("B", "I"):
            if on_invalid == "raise":
                raise SchemeError(
                    len(tags) - 1,
                    f"invalid transition: entity {label or 'span'} not closed at sentence end",
                )
            repairs += 1
            if drop:
                return spans, repairs
        spans.append(Span(start, len(tags), label))
    return spans, repairs


def _alphabet(scheme: str) -> list[str]:
    """Every tag of the scheme over two types and the untyped label, plus unknown tags."""
    tags = [_OUTSIDE[scheme]]
    for prefix in _PREFIXES[scheme]:
        tags += [prefix, f"{prefix}-PER", f"{prefix}-LOC"]
    return tags + ["X-PER", "B-"]


def _outcome(fn, tags: list[str], scheme: str, mode: str) -> object:  # type: ignore[no-untyped-def]
    try:
        return fn(tags, scheme, on_invalid=mode)
    except SchemeError as exc:
        return ("error", exc.index, exc.message)


@st.composite
def _case(draw: st.DrawFn) -> tuple[str, list[str], str]:
    scheme = draw(st.sampled_from(SCHEMES))
    alphabet = _alphabet(scheme)
    # Unknown tags are rare, so that most sequences are decoded to the end.
    weights = st.one_of(st.sampled_from(alphabet[:-2]), st.sampled_from(alphabet))
    tags = draw(st.lists(st.one_of(*([st.sampled_from(alphabet[:-2])] * 9), weights), max_size=12))
    mode = draw(st.sampled_from(("repair", "drop", "raise")))
    return scheme, tags, mode


@pytest.mark.slow
@settings(max_examples=400, deadline=None)
@given(_case())
def test_decoders_equal_the_reference(case: tuple[str, list[str], str]) -> None:
    scheme, tags, mode = case
    assert _outcome(decode, tags, scheme, mode) == _outcome(reference_decode, tags, scheme, mode)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_decoders_equal_the_reference_exhaustively(scheme: str) -> None:
    """Every sequence of up to four tags over two types, in every mode."""
    alphabet = [t for t in _alphabet(scheme)[:-2] if t == _OUTSIDE[scheme] or "-" in t]
    seqs: list[list[str]] = [[]]
    frontier: list[list[str]] = [[]]
    for _ in range(4):
        frontier = [s + [t] for s in frontier for t in alphabet]
        seqs += frontier
    for tags in seqs:
        for mode in ("repair", "drop", "raise"):
            assert _outcome(decode, tags, scheme, mode) == _outcome(
                reference_decode, tags, scheme, mode
            ), (tags, mode)


def test_strict_is_raise() -> None:
    with pytest.raises(SchemeError) as exc:
        decode(["O", "I-PER"], "iob2", strict=True)
    assert exc.value.index == 1


def test_every_scheme_has_a_decoder() -> None:
    assert set(_DECODERS) == set(SCHEMES)
