"""GermEval 2014 NER files (German named entities in two levels), read.

A sentence is a ``#`` line naming its source (``#<TAB>http://de.wikipedia.org/… [2009-08-13]``)
followed by one line per token, ``N<TAB>token<TAB>outer<TAB>inner``, and a blank line. Both tag
columns are IOB2 (``B-LOC``, ``I-ORGpart``, ``B-OTHderiv``); the inner column marks entities
inside an outer one (``Bundesland`` ``Hessen`` inside ``Landesregierung von Hessen``).

Why a module of its own: the ``#`` lines and the two tag columns made the file look like a
broken TSV corpus. nerstudio's entities do not nest, so the **outer** level is read (the one
GermEval's main metric scores) and the inner entities are counted in a note, never dropped
silently. The ``#`` line of each sentence is its document (one document per source). Import
only: a corpus read from GermEval is saved in another format (CoNLL, TSV, JSONL).
"""

from __future__ import annotations

import os
import re

from ...errors import FormatError
from ..model import Corpus, Document, Sentence
from ..schemes import SchemeError, decode, detect_scheme
from . import runtext

NAME = "germeval"
_TAG = re.compile(r"^(O|[BI]-\S+)$")


def _row(line: str) -> list[str] | None:
    f = line.split("\t")
    return f if len(f) == 4 and f[0].isdigit() and _TAG.match(f[2]) and _TAG.match(f[3]) else None


def sniff(path: str, head: str) -> bool:
    lines = [ln.rstrip("\r") for ln in runtext.split_lines(head) if ln.strip()][:200]
    if not lines or not lines[0].startswith("#"):
        return False
    words = [ln for ln in lines if not ln.startswith("#")][:-1]  # the last may be cut
    return bool(words) and all(_row(ln) for ln in words)


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    raw, bom = runtext.read_text(path, encoding)
    sents: list[tuple[str | None, int, list[list[str]]]] = []  # (source, first line, rows)
    source: str | None = None
    rows: list[list[str]] = []
    first = 0
    for lineno, line in enumerate(runtext.split_lines(raw), 1):
        if not line.strip():
            if rows:
                sents.append((source, first, rows))
            rows, source = [], None
            continue
        if line.startswith("#") and not rows:
            source = line[1:].strip()
            continue
        f = _row(line)
        if f is None:
            raise FormatError(
                path,
                lineno,
                "a GermEval 2014 token line is N<TAB>token<TAB>outer tag<TAB>inner tag, "
                f"found {line[:60]!r}",
            )
        if not rows:
            first = lineno
        rows.append(f)
    if rows:
        sents.append((source, first, rows))
    if not sents:
        raise FormatError(path, None, "no sentences: no GermEval token lines")
    outer = [[r[2] for r in rows] for _, _, rows in sents]
    scheme = scheme or detect_scheme(outer)
    docs: list[Document] = []
    repairs = inner = 0
    inner_first: int | None = None
    for (src, at, rows), tags in zip(sents, outer):
        try:
            spans, fixed = decode(tags, scheme)
            inside, _ = decode([r[3] for r in rows], scheme)
        except SchemeError as exc:
            raise FormatError(path, at + exc.index, exc.message) from None
        repairs += fixed
        if inside:
            inner += len(inside)
            inner_first = inner_first or at + inside[0].start
        if not docs or (src is not None and src != docs[-1].id):
            docs.append(Document(id=src or str(len(docs) + 1)))
        docs[-1].sentences.append(Sentence([r[1] for r in rows], spans, tags=tags, line=at))
    notes = []
    if inner:
        notes.append(
            f"{inner} inner-level entit(ies) (GermEval's fourth column, entities inside "
            f"entities) not read: nerstudio's entities do not nest, the outer level is read, "
            f"first at line {inner_first}"
        )
    return Corpus(
        docs,
        path=os.fspath(path),
        format=NAME,
        scheme=scheme,
        encoding=encoding,
        newline="\r\n" if "\r\n" in raw else "\n",
        bom=bom,
        final_newline=raw.endswith("\n"),
        repairs=repairs,
        notes=notes,
    )
