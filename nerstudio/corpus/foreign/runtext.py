"""Documents of running text: a file's text decoded with its line and byte in errors, and a text
with character-offset entities turned into sentences of tokens that keep their offsets.

Shared by the readers whose files hold running text and standoff spans (plain text, brat); not a
format of its own (it is in no row of the handler table).
"""

from __future__ import annotations

import codecs
import os
from collections.abc import Iterable

from ...errors import FormatError, Msg
from .. import segment
from ..model import Document, Sentence, Span


def read_text(path: str, encoding: str) -> tuple[str, bool]:
    """The whole file decoded (a UTF-8 byte-order mark removed: offsets count from the first
    character after it, as brat does) and whether it had one. Bad bytes are a FormatError at
    their line."""
    from ..detect import check_regular

    check_regular(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise FormatError(path, None, Msg.CANNOT_READ.format(why=exc.strerror or exc)) from None
    bom = data.startswith(codecs.BOM_UTF8) and codecs.lookup(encoding).name in (
        "utf-8",
        "utf-8-sig",
    )
    if bom:
        data = data[3:]
    try:
        return data.decode(encoding), bom
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise FormatError(
            path,
            line,
            f"not valid {encoding} (byte 0x{data[exc.start]:02x} at column {col}); "
            "pass --encoding with the file's encoding (e.g. --encoding latin-1)",
        ) from None


def split_lines(text: str) -> list[str]:
    """``text``'s lines as the standoff and column formats define them (brat, CoNLL-U): broken
    at ``\n`` only, a ``\r`` before it dropped, no empty line after a final line break.
    ``str.splitlines`` also breaks at U+0085, U+2028, U+2029 and ``\x0b``–``\x1e``, which are
    ordinary characters of a token or an entity in these formats."""
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [ln[:-1] if ln.endswith("\r") else ln for ln in lines]


def line_of(text: str, offset: int) -> int:
    """1-based line of character ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """``[start, end)`` without the whitespace at its edges (empty: whitespace only)."""
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    return start, end


def split(text: str, ranges: Iterable[tuple[int, int]]) -> list[list[tuple[int, int]]]:
    """The sentences of ``text`` (lists of token offsets) as a reader of running text makes them
    when the entities lie at ``ranges``: tokens cut at their edges, no sentence break inside one
    (writers compare it with the tokens they write, to report breaks a reader would not give back)."""
    ranges = list(ranges)
    return segment.split(text, cuts=[c for s, e in ranges for c in (s, e)], merge=ranges)


def document(
    text: str,
    entities: Iterable[tuple[int, int, str, int | None]] = (),
    path: str | None = None,
    doc_id: str = "",
) -> Document:
    """``text`` split into sentences of tokens (:func:`nerstudio.corpus.segment.split`) carrying
    their offsets, with ``entities`` — ``(start, end, label, line)`` character ranges — as spans.

    Tokens are cut at entity boundaries inside words and a sentence break never falls inside an
    entity. Whitespace at an entity's edges is ignored; an entity over whitespace only is an
    error at its ``line``."""
    ents = []
    for start, end, label, line in entities:
        s, e = trim(text, start, end)
        if s == e:
            raise FormatError(
                path, line, f"the entity {label} [{start}, {end}) covers only whitespace"
            )
        ents.append((s, e, label, line))
    sentences = split(text, [(s, e) for s, e, _, _ in ents])
    starts, ends = {}, {}
    for k, sent in enumerate(sentences):
        for i, (a, b) in enumerate(sent):
            starts[a] = (k, i)
            ends[b] = (k, i)
    spans: list[list[Span]] = [[] for _ in sentences]
    for s, e, label, _line in ents:
        (k, i), (k2, j) = starts[s], ends[e]  # cuts and merge guarantee both, in one sentence
        assert k == k2
        spans[k].append(Span(i, j + 1, label))
    doc = Document(id=doc_id, text=text)
    for sent, sp in zip(sentences, spans):
        doc.sentences.append(
            Sentence(
                [text[a:b] for a, b in sent],
                sp,
                line=line_of(text, sent[0][0]),
                source=text,
                offsets=sent,
            )
        )
    return doc


def doc_id_of(path: str) -> str:
    return os.path.splitext(os.path.basename(path))[0]
