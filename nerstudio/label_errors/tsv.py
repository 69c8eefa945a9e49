"""The suspects as a tab-separated file: one line per sentence, most suspect first.

The first line is a header starting with ``#`` that names the columns:

``rank``
    1 for the most suspect sentence;
``sentence``
    the sentence's number in the corpus file, from 1, in file order (``-DOCSTART-`` lines are no
    sentences);
``score``
    the evidence that gold is wrong (:mod:`.evidence`): the natural log of how many times more
    probable the model finds its suggestion than gold; ``inf`` when gold holds a type the model
    does not know, ``-inf`` when the model proposes nothing but gold;
``span``
    the tokens where gold and the suggestion differ, numbered from 1: ``4-5``, ``7`` (one token),
    ``-`` (none);
``gold`` / ``suggested``
    each side's entities in that span, as ``TYPE FIRST-LAST words`` joined by `` | ``
    (``ORG 4-5 Leeds United | LOC 7 Yorkshire``), ``-`` for none;
``text``
    the sentence's words;
``evidence``
    the same in words, for the annotator.

Tabs, line breaks and backslashes inside a cell are written ``\\t``, ``\\n``, ``\\r`` and
``\\\\``. :func:`read_tsv` reads the file back against the corpus it was made for: a line that
does not fit that corpus (another file, edited text) is a :class:`~nerstudio.errors.FormatError`
naming the file and the line.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Sequence

from ..corpus.atomic import atomic_open
from ..corpus.model import Corpus, Span, StrPath
from ..errors import FormatError
from .evidence import Suspect

COLUMNS = ("rank", "sentence", "score", "span", "gold", "suggested", "text", "evidence")
HEADER = "#" + "\t".join(COLUMNS)
NONE = "-"
SEPARATOR = " | "

_ESCAPES = {"\\": "\\\\", "\t": "\\t", "\n": "\\n", "\r": "\\r"}
_UNESCAPES = {v[1]: k for k, v in _ESCAPES.items()}


def escape(text: str) -> str:
    return "".join(_ESCAPES.get(c, c) for c in text)


def unescape(text: str) -> str:
    return re.sub(r"\\(.)", lambda m: _UNESCAPES.get(m.group(1), m.group(0)), text)


def _tokens(start: int, end: int) -> str:
    """Tokens ``[start, end)`` numbered from 1: ``4-5``, ``7``."""
    return f"{start + 1}" if end == start + 1 else f"{start + 1}-{end}"


def format_entities(spans: Sequence[Span], words: Sequence[str]) -> str:
    if not spans:
        return NONE
    return SEPARATOR.join(f"{s.label} {_tokens(s.start, s.end)} {s.text(words)}" for s in spans)


def format_score(score: float) -> str:
    """The shortest text that reads back as the same float (scores are rounded when made)."""
    return "inf" if score == math.inf else "-inf" if score == -math.inf else repr(float(score))


def write_tsv(path: StrPath, corpus: Corpus, suspects: Sequence[Suspect]) -> None:
    """Write ``suspects`` (in their order) as the module docstring describes, atomically."""
    sentences = corpus.sentences
    with atomic_open(path, mode="w", encoding="utf-8") as f:
        f.write(HEADER + "\n")
        for rank, sus in enumerate(suspects, 1):
            words = sentences[sus.sentence].words
            cells = [
                str(rank),
                str(sus.sentence + 1),
                format_score(sus.score),
                _tokens(sus.start, sus.end) if sus.end > sus.start else NONE,
                format_entities(sus.gold, words),
                format_entities(sus.suggested, words),
                " ".join(words),
                sus.evidence,
            ]
            f.write("\t".join(escape(c) for c in cells) + "\n")


_SPAN = re.compile(r"(\d+)(?:-(\d+))?")
_ENTITY_HEAD = re.compile(r"(.+?) (\d+)(?:-(\d+))? ")


def _token_range(text: str, n: int) -> tuple[int, int]:
    m = _SPAN.fullmatch(text)
    if m is None:
        raise ValueError(f"span {text!r} is not FIRST-LAST or one token number")
    first = int(m.group(1))
    last = int(m.group(2)) if m.group(2) else first
    if not 1 <= first <= last <= n:
        raise ValueError(f"span {text!r} is not within the sentence's {n} tokens")
    return first - 1, last


def parse_entities(text: str, words: Sequence[str]) -> tuple[Span, ...]:
    """The entities of a ``gold`` or ``suggested`` cell; their words must be the sentence's."""
    if text == NONE:
        return ()
    out, pos = [], 0
    while True:
        m = _ENTITY_HEAD.match(text, pos)
        if m is None:
            raise ValueError(f"{text[pos:]!r} is not an entity as TYPE FIRST-LAST words")
        start, end = _token_range(m.group(2) + (f"-{m.group(3)}" if m.group(3) else ""), len(words))
        said = " ".join(words[start:end])
        if not text.startswith(said, m.end()):
            raise ValueError(
                f"tokens {_tokens(start, end)} of the sentence are not {text[m.end() :]!r}"
            )
        out.append(Span(start, end, m.group(1)))
        pos = m.end() + len(said)
        if pos == len(text):
            return tuple(sorted(out))
        if not text.startswith(SEPARATOR, pos):
            raise ValueError(f"expected {SEPARATOR!r} after {text[:pos]!r}")
        pos += len(SEPARATOR)


def read_tsv(path: StrPath, corpus: Corpus) -> list[Suspect]:
    """The suspects of a file :func:`write_tsv` wrote for ``corpus``, in the file's order."""
    name = os.fspath(path)
    sentences = corpus.sentences
    out = []
    try:
        with open(name, encoding="utf-8", newline="") as f:
            lines = f.read().split("\n")
    except UnicodeDecodeError as exc:
        raise FormatError(name, None, f"not UTF-8 text ({exc.reason})") from None
    if lines and lines[-1] == "":
        lines.pop()
    if not lines or lines[0].rstrip("\r") != HEADER:
        raise FormatError(name, 1, f"not a suspects file: the first line must be {HEADER!r}")
    for no, line in enumerate(lines[1:], 2):
        cells = line.rstrip("\r").split("\t")
        if len(cells) != len(COLUMNS):
            raise FormatError(name, no, f"{len(cells)} columns, expected {len(COLUMNS)}")
        try:
            out.append(_suspect([unescape(c) for c in cells], sentences))
        except ValueError as exc:
            raise FormatError(name, no, str(exc)) from None
    return out


def _suspect(cells: list[str], sentences) -> Suspect:
    rank, number, score, span, gold, suggested, text, evidence = cells
    if not rank.isdigit():
        raise ValueError(f"rank {rank!r} is not a number")
    if not number.isdigit() or not 1 <= int(number) <= len(sentences):
        raise ValueError(f"sentence {number!r} is not a number from 1 to {len(sentences)}")
    k = int(number) - 1
    words = sentences[k].words
    if text != " ".join(words):
        raise ValueError(
            f"the text is not that of sentence {number} of the corpus (made for another file?)"
        )
    try:
        value = float(score)
    except ValueError:
        raise ValueError(f"score {score!r} is not a number") from None
    if math.isnan(value):
        raise ValueError("score is not a number (nan)")
    start, end = (0, 0) if span == NONE else _token_range(span, len(words))
    g, s = parse_entities(gold, words), parse_entities(suggested, words)
    if any(e.start < start or e.end > end for e in (*g, *s)):
        raise ValueError(f"an entity lies outside the span {span}")
    return Suspect(k, value, start, end, g, s, evidence)
