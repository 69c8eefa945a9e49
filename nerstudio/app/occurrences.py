"""Label all occurrences: every place a phrase occurs in the corpus, labelled (or cleared) at once.

An annotator who has just marked "Green Future" as ORG wants the other 37 mentions marked too
(INCEpTION's "annotate all", Label Studio #771). :func:`find` lists every occurrence of a phrase
— a run of whole tokens, so "Paris" never matches inside "Parisian" — case-sensitive or not,
each with what the gold already has there. :func:`label_edit` turns the occurrences the user
kept into one edit for :meth:`Document.set_many <nerstudio.app.document.Document.set_many>` (one
undoable step) and says what it does: entities added, relabelled, already right, and the
existing entities that overlap an occurrence without matching it, which are replaced (the preview
leaves those unticked by default, so nothing is replaced unless asked). :func:`remove_edit`
clears the entities that span exactly an occurrence. No Qt here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from ..corpus.model import Sentence, Span


@dataclass(frozen=True)
class Occurrence:
    """The phrase at tokens ``[start, end)`` of sentence ``k``; ``existing``: the gold entities
    there that overlap it."""

    k: int
    start: int
    end: int
    existing: tuple[Span, ...] = ()

    def exact(self) -> Span | None:
        """The gold entity spanning exactly the occurrence, if any."""
        return next((s for s in self.existing if (s.start, s.end) == (self.start, self.end)), None)

    def overlapping(self) -> tuple[Span, ...]:
        """Gold entities that overlap the occurrence without spanning exactly it."""
        return tuple(s for s in self.existing if (s.start, s.end) != (self.start, self.end))

    def status(self, label: str) -> str:
        """``same`` (already an entity of ``label``), ``relabel`` (an entity of another type),
        ``overlap`` (crosses other entities), ``free``."""
        if self.overlapping():
            return "overlap"
        ex = self.exact()
        if ex is None:
            return "free"
        return "same" if ex.label == label else "relabel"


def tokens_of(phrase: str) -> list[str]:
    """The phrase as tokens (split at whitespace; as the sentence view shows tokens)."""
    return phrase.split()


def find(
    sentences: Sequence[Sentence], phrase: Sequence[str] | str, case_sensitive: bool = True
) -> list[Occurrence]:
    """Every occurrence of ``phrase`` (tokens, or a string split at whitespace) as a run of whole
    tokens, left to right; occurrences in one sentence never overlap (as a text search finds them)."""
    want = tokens_of(phrase) if isinstance(phrase, str) else list(phrase)
    if not want:
        return []
    norm = (lambda w: w) if case_sensitive else str.casefold
    want = [norm(w) for w in want]
    m = len(want)
    out: list[Occurrence] = []
    for k, s in enumerate(sentences):
        words = s.words
        i = 0
        while i + m <= len(words):
            if norm(words[i]) == want[0] and [norm(w) for w in words[i : i + m]] == want:
                existing = tuple(sp for sp in s.spans if sp.start < i + m and i < sp.end)
                out.append(Occurrence(k, i, i + m, existing))
                i += m
            else:
                i += 1
    return out


@dataclass
class Report:
    """What an edit does: counts of occurrences and the entities it replaces or removes."""

    added: int = 0
    relabelled: int = 0
    unchanged: int = 0
    # (sentence, entity) removed for an overlap
    replaced: list[tuple[int, Span]] = field(default_factory=list)
    removed: int = 0

    def text(self, label: str = "") -> str:
        parts = []
        if self.added:
            parts.append(f"{self.added} labelled {label}".rstrip())
        if self.relabelled:
            parts.append(f"{self.relabelled} relabelled")
        if self.unchanged:
            parts.append(f"{self.unchanged} already right")
        if self.replaced:
            parts.append(
                f"{len(self.replaced)} overlapping entit{'y' if len(self.replaced) == 1 else 'ies'} replaced"
            )
        if self.removed:
            parts.append(f"{self.removed} entit{'y' if self.removed == 1 else 'ies'} removed")
        return ", ".join(parts) or "nothing to change"


def label_edit(
    sentences: Sequence[Sentence], chosen: Iterable[Occurrence], label: str
) -> tuple[dict[int, list[Span]], Report]:
    """The new spans of every sentence an occurrence in ``chosen`` changes (an entity of ``label``
    over each; entities overlapping it removed), and the :class:`Report`."""
    by_k: dict[int, list[Occurrence]] = {}
    for o in chosen:
        by_k.setdefault(o.k, []).append(o)
    edits: dict[int, list[Span]] = {}
    rep = Report()
    for k, occs in sorted(by_k.items()):
        spans = list(sentences[k].spans)
        for o in sorted(occs, key=lambda o: o.start):
            hit = [s for s in spans if s.start < o.end and o.start < s.end]
            exact = next((s for s in hit if (s.start, s.end) == (o.start, o.end)), None)
            others = [s for s in hit if s is not exact]
            if exact is not None and exact.label == label and not others:
                rep.unchanged += 1
                continue
            if exact is not None:
                rep.relabelled += exact.label != label
            else:
                rep.added += 1
            rep.replaced += [(k, s) for s in others]
            spans = [s for s in spans if s not in hit] + [Span(o.start, o.end, label)]
        if sorted(spans) != sorted(sentences[k].spans):
            edits[k] = sorted(spans)
    return edits, rep


def remove_edit(
    sentences: Sequence[Sentence], chosen: Iterable[Occurrence], label: str | None = None
) -> tuple[dict[int, list[Span]], Report]:
    """Remove the entities spanning exactly an occurrence in ``chosen`` (only those of ``label``
    when given); entities that merely overlap one are kept."""
    rep = Report()
    drop: dict[int, set] = {}
    for o in chosen:
        for s in sentences[o.k].spans:
            if (s.start, s.end) == (o.start, o.end) and (label is None or s.label == label):
                drop.setdefault(o.k, set()).add(s)
    edits = {}
    for k, gone in sorted(drop.items()):
        edits[k] = sorted(s for s in sentences[k].spans if s not in gone)
        rep.removed += len(gone)
    return edits, rep
