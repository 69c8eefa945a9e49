"""Suspect annotations: the record of a sentence whose gold annotation is probably wrong.

This is the part of the module the window's queue is built against: the :class:`Suspect`
record, :func:`apply_suggestion` and the TSV a ranking is kept in (:func:`write_tsv`,
:func:`read_tsv`). The ranking itself (``find_suspects``) is the core's; on this branch only
the shared interface exists, so that the window can be built and tested against it. No Qt here.
"""

from __future__ import annotations

import math
import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .corpus.atomic import atomic_open
from .corpus.model import Corpus, Span, StrPath
from .errors import FormatError

HEADER = "#sentence\tscore\tstart\tend\tgold\tsuggested\twords\tevidence"
_EMPTY = "-"


@dataclass(frozen=True)
class Suspect:
    """A region ``[start, end)`` of sentence ``sentence`` (0-based, file order) where the gold
    entities ``gold`` and the ``suggested`` ones differ, ``score`` the evidence that the gold
    is wrong (higher: more suspect) and ``evidence`` that evidence in one sentence of words."""

    sentence: int
    score: float
    start: int
    end: int
    gold: tuple[Span, ...]
    suggested: tuple[Span, ...]
    evidence: str


def _inside(sp: Span, start: int, end: int) -> bool:
    return start <= sp.start and sp.end <= end


def apply_suggestion(spans: Sequence[Span], suspect: Suspect) -> list[Span]:
    """``spans`` (a sentence's entities) with those inside the suspect's region replaced by its
    suggestion, sorted."""
    kept = [sp for sp in spans if not _inside(sp, suspect.start, suspect.end)]
    return sorted([*kept, *suspect.suggested])


def _spans_text(spans: Iterable[Span]) -> str:
    return " ".join(f"{sp.start}-{sp.end}:{sp.label}" for sp in spans) or _EMPTY


def _one_line(text: str) -> str:
    return " ".join(text.split())


def write_tsv(path: StrPath, corpus: Corpus, suspects: Iterable[Suspect]) -> None:
    """Write ``suspects`` of ``corpus`` to ``path`` (atomically): a ``#`` header line, then one
    line per suspect (its sentence counted from 1, the region's words for the reader)."""
    with atomic_open(path, encoding="utf-8") as f:
        f.write(HEADER + "\n")
        for s in suspects:
            words = corpus.sentences[s.sentence].words[s.start : s.end]
            f.write(
                "\t".join(
                    (
                        str(s.sentence + 1),
                        repr(float(s.score)),
                        str(s.start),
                        str(s.end),
                        _spans_text(s.gold),
                        _spans_text(s.suggested),
                        _one_line(" ".join(words)),
                        _one_line(s.evidence),
                    )
                )
                + "\n"
            )


def _int(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()):
        raise ValueError(f"{what} {text!r} is not a whole number")
    return int(text)


def _spans(text: str, start: int, end: int, what: str) -> tuple[Span, ...]:
    if text == _EMPTY:
        return ()
    out = []
    for item in text.split(" "):
        bounds, sep, label = item.partition(":")
        a, dash, b = bounds.partition("-")
        if not (sep and dash and label and f"{a}{b}".isascii() and a.isdigit() and b.isdigit()):
            raise ValueError(f"{what} entity {item!r} is not START-END:LABEL")
        sp = Span(int(a), int(b), label)
        if not (start <= sp.start < sp.end <= end):
            raise ValueError(f"{what} entity {item!r} is not inside the region {start}-{end}")
        out.append(sp)
    return tuple(sorted(out))


def _parse(fields: list[str], corpus: Corpus) -> Suspect:
    if len(fields) != 8:
        raise ValueError(f"{len(fields)} fields, not 8 ({HEADER[1:].replace(chr(9), ', ')})")
    k = _int(fields[0], "sentence") - 1
    if not 0 <= k < len(corpus):
        raise ValueError(f"sentence {k + 1} is not in the corpus ({len(corpus)} sentences)")
    try:
        score = float(fields[1])
    except ValueError:
        raise ValueError(f"score {fields[1]!r} is not a number") from None
    if not math.isfinite(score):
        raise ValueError(f"score {fields[1]!r} is not a finite number")
    start, end = _int(fields[2], "start"), _int(fields[3], "end")
    words = corpus.sentences[k].words
    if not start < end <= len(words):
        raise ValueError(
            f"region {start}-{end} is not inside sentence {k + 1} ({len(words)} tokens)"
        )
    if fields[6] != _one_line(" ".join(words[start:end])):
        raise ValueError(f"the words {fields[6]!r} are not those of sentence {k + 1} there")
    gold = _spans(fields[4], start, end, "gold")
    suggested = _spans(fields[5], start, end, "suggested")
    if gold == suggested:
        raise ValueError("gold and suggestion are the same")
    return Suspect(k, score, start, end, gold, suggested, fields[7])


def read_tsv(path: StrPath, corpus: Corpus) -> list[Suspect]:
    """The suspects a :func:`write_tsv` file holds for ``corpus``, in its order; a line that
    does not fit the corpus raises :class:`~nerstudio.errors.FormatError` naming it."""
    out = []
    name = os.fspath(path)
    with open(name, "rb") as f:
        for n, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8").rstrip("\r\n")
                if line and not line.startswith("#"):
                    out.append(_parse(line.split("\t"), corpus))
            except ValueError as exc:  # UnicodeDecodeError too
                raise FormatError(name, n, str(exc)) from None
    return out
