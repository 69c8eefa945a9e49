"""Span edits for annotation, as plain functions: what a key or a drag does to one sentence's
entities.

Every edit takes the gold spans of one sentence and returns a new sorted list; nothing is changed
in place, so an undo command only has to keep the lists before and after (the document,
:mod:`nerstudio.app.document`, applies them). Spans never overlap: typing a selection replaces
the spans under it, but moving a boundary (:func:`resize`) only takes tokens from a neighbour and
refuses to swallow one whole (:class:`EditRefused`).

The annotation commands (:data:`COMMANDS`: type, clear, extend, shrink, split, merge) are what a
key does to a :class:`Selection` of a sentence: :func:`command` returns the :class:`Edit` (the
new spans, the undo step's words, where the caret goes) or refuses with the reason, and
:func:`available` says which commands apply to a selection. The sentence views only show the
selection; the controllers run the commands through here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
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


# ------------------------------------------------------------------------------------------------
# the annotation commands on a selection

#: the commands besides typing, in the Edit menu's order
COMMANDS = (
    "clear",
    "extend_left",
    "extend_right",
    "shrink_left",
    "shrink_right",
    "split",
    "merge",
)

#: why a command that applies to nothing refuses (merge says so; the others say it when their
#: key is pressed while they cannot apply)
NOTHING_TO_MERGE = (
    "Nothing to merge: put the caret on an entity that has a next entity, or on the first token "
    "of one that follows another"
)


@dataclass(frozen=True)
class Selection:
    """The tokens ``[start, end)`` selected in a sentence of ``n_tokens`` tokens, with the caret
    on one of them; ``start`` -1: nothing selected."""

    start: int
    end: int
    caret: int
    n_tokens: int

    @property
    def empty(self) -> bool:
        return self.start < 0 or self.n_tokens == 0


@dataclass(frozen=True)
class Edit:
    """What a command does: the sentence's new spans, the undo step's words and the token the
    caret moves to (None: it stays)."""

    spans: list[Span]
    text: str
    caret: int | None = None

    def changes(self, spans: Sequence[Span]) -> bool:
        return sorted(self.spans) != sorted(spans)


def available(spans: Sequence[Span], sel: Selection) -> dict[str, bool]:
    """Which commands apply to ``sel`` (``type`` and every name of :data:`COMMANDS`)."""
    ok = not sel.empty
    sp = span_at(spans, sel.caret) if ok else None
    return {
        "type": ok,
        "clear": ok and bool(overlapping(spans, sel.start, sel.end)),
        "extend_left": sp is not None and sp.start > 0,
        "extend_right": sp is not None and sp.end < sel.n_tokens,
        "shrink_left": sp is not None,
        "shrink_right": sp is not None,
        "split": sp is not None and sp.start < sel.caret < sp.end,
        "merge": ok and merge_pair(spans, sel.caret) is not None,
    }


def type_selection(
    spans: Sequence[Span], words: Sequence[str], sel: Selection, label: str
) -> Edit | None:
    """Type the selection ``label``; with only the caret's token selected inside an entity,
    retype that entity."""
    if sel.empty:
        return None
    sp = span_at(spans, sel.caret)
    if sel.end - sel.start == 1 and sp is not None:
        return Edit(
            set_label(spans, sp.start, sp.end, label), f"type “{sp.text(words)}” as {label}"
        )
    return Edit(
        set_label(spans, sel.start, sel.end, label),
        f"mark “{' '.join(words[sel.start : sel.end])}” as {label}",
    )


def command(name: str, spans: Sequence[Span], sel: Selection) -> Edit | None:
    """The command ``name`` (one of :data:`COMMANDS`) on ``sel``: its :class:`Edit`, None when
    it applies to nothing there, :class:`EditRefused` (with why) when it would lose an entity."""
    if sel.empty:
        return None
    if name == "clear":
        return Edit(clear(spans, sel.start, sel.end), "clear entity")
    if name == "merge":
        pair = merge_pair(spans, sel.caret)
        if pair is None:
            raise EditRefused(NOTHING_TO_MERGE)
        return Edit(merge(spans, *pair), f"merge {pair[0].label} entities")
    sp = span_at(spans, sel.caret)
    if sp is None:
        return None
    if name == "split":
        if not sp.start < sel.caret < sp.end:
            return None
        return Edit(split(spans, sp, sel.caret), f"split {sp.label} entity")
    moves = {  # the new (start, end) of the entity under the caret
        "extend_left": (sp.start - 1, sp.end),
        "extend_right": (sp.start, sp.end + 1),
        "shrink_left": (sp.start, sp.end - 1),  # its end moves left
        "shrink_right": (sp.start + 1, sp.end),  # its start moves right
    }
    if name not in moves:
        raise ValueError(f"unknown annotation command {name!r}")
    start, end = moves[name]
    if start < 0 or end > sel.n_tokens:
        return None
    what = name.split("_")[0]
    try:
        new = resize(spans, sp, start, end, sel.n_tokens)
    except EditRefused as exc:
        raise EditRefused(
            f"Cannot {what} the {sp.label or 'entity'}: {exc} (merge them instead)"
        ) from None
    caret = max(start, min(sel.caret, end - 1)) if end > start else None
    return Edit(new, f"{what} {sp.label} entity", caret)
