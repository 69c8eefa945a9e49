"""Span edits for annotation, as plain functions: what a key or a drag does to one sentence's
entities.

Every edit takes the gold spans of one sentence and returns a new sorted list; nothing is changed
in place, so an undo command only has to keep the lists before and after (the document,
:mod:`nerstudio.app.document`, applies them). Spans never overlap: typing a selection replaces
the spans under it, but moving a boundary (:func:`resize`) only takes tokens from a neighbour and
refuses to swallow one whole (:class:`EditRefused`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from ..corpus.model import Span
from ..errors import NerstudioError


class EditRefused(NerstudioError, ValueError):
    """An edit that would lose an entity the user did not point at (say why, change nothing)."""


def _sorted(spans: Iterable[Sequence[Any]]) -> list[Span]:
    return sorted(Span(*s) for s in spans)


def span_at(spans: Sequence[Span], token: int) -> Span | None:
    """The span covering ``token``, if any."""
    for s in spans:
        if s.start <= token < s.end:
            return s
    return None


def overlapping(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    return [s for s in spans if s.start < end and start < s.end]


def set_label(spans: Sequence[Span], start: int, end: int, label: str) -> list[Span]:
    """A span ``[start, end)`` with ``label``; spans overlapping it are removed."""
    if not 0 <= start < end:
        raise ValueError(f"empty or negative span [{start}, {end})")
    keep = [s for s in spans if not (s.start < end and start < s.end)]
    return _sorted(keep + [Span(start, end, label)])


def clear(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    """Remove every span overlapping ``[start, end)``."""
    return _sorted(s for s in spans if not (s.start < end and start < s.end))


def resize(spans: Sequence[Span], span: Span, start: int, end: int, n_tokens: int) -> list[Span]:
    """Move the boundaries of ``span`` to ``[start, end)`` (clipped to the sentence). A
    neighbour it grows into gives up the tokens it now covers; a neighbour that would lose all
    its tokens is not removed: :class:`EditRefused` is raised instead. A span shrunk to nothing
    disappears."""
    start, end = max(0, start), min(n_tokens, end)
    rest = [s for s in spans if s != span]
    if end <= start:
        return _sorted(rest)
    out = []
    for s in rest:
        if not (s.start < end and start < s.end):
            out.append(s)
            continue
        left, right = Span(s.start, start, s.label), Span(end, s.end, s.label)
        kept = [p for p in (left, right) if p.start < p.end]
        if not kept:
            raise EditRefused(f"the {s.label or 'entity'} next to it has no token left to give")
        out.extend(kept)
    return _sorted(out + [Span(start, end, span.label)])


def split(spans: Sequence[Span], span: Span, at: int) -> list[Span]:
    """Cut ``span`` before token ``at`` into two spans of the same type."""
    if not span.start < at < span.end:
        raise ValueError(f"cannot split {tuple(span)} before token {at}")
    rest = [s for s in spans if s != span]
    return _sorted(rest + [Span(span.start, at, span.label), Span(at, span.end, span.label)])


def merge(spans: Sequence[Span], a: Span, b: Span) -> list[Span]:
    """One span from the first start to the last end of ``a`` and ``b``, typed like the first;
    anything in between is absorbed."""
    first, _last = (a, b) if a.start <= b.start else (b, a)
    return set_label(
        [s for s in spans if s not in (a, b)], first.start, max(a.end, b.end), first.label
    )


def neighbours(spans: Sequence[Span], span: Span) -> tuple[Span | None, Span | None]:
    """The spans just before and just after ``span``."""
    srt = _sorted(spans)
    i = srt.index(span)
    return (srt[i - 1] if i > 0 else None), (srt[i + 1] if i + 1 < len(srt) else None)


def merge_pair(spans: Sequence[Span], caret: int) -> tuple[Span, Span] | None:
    """What ``+`` merges for a caret on ``caret``: the entity there with the one ending right
    before it when the caret is on its first token (so a split is undone by ``+`` where it was
    made), else with the next entity; None when there is nothing to merge."""
    sp = span_at(spans, caret)
    if sp is None:
        return None
    prev, nxt = neighbours(spans, sp)
    if caret == sp.start and prev is not None and prev.end == sp.start:
        return prev, sp
    if nxt is not None:
        return sp, nxt
    return None
