"""OntoNotes 5.0 / CoNLL-2012 ``*_conll`` files (``*.gold_conll``, ``*.v4_gold_conll``), read.

A document part starts with ``#begin document (bn/cnn/01/cnn_0115); part 000`` and ends with
``#end document``; a sentence is a block of lines of whitespace-aligned columns: document,
part, word number, **word**, part of speech, parse bit, lemma, frameset, sense, speaker,
**named entities**, the predicate arguments (one column per predicate, so the number of
columns differs between sentences) and coreference. The named-entity column (the eleventh)
marks an entity with brackets: ``(PERSON*`` opens it on its first word, ``*)`` closes it,
``(GPE)`` is a one-word entity, ``*`` is any other word.

Why a module of its own: the aligned columns, the varying number of columns and the brackets
made the file look like a broken column corpus. What is read: the words and the entities; each
``#begin document`` part is a document. Nothing else (parse, senses, predicate arguments,
coreference) is an entity; a note says so. Files whose words were replaced by ``[WORD]``
(the skeleton files distributed without the LDC text) are refused, saying so. Import only.
"""

from __future__ import annotations

import os
import re

from ...errors import FormatError
from ..model import Corpus, Document, Sentence, Span
from . import runtext

NAME = "ontonotes"
_BEGIN = re.compile(r"^#begin document\s*\((.*)\);?\s*(?:part\s+(\d+))?")
_NE = 10  # the named-entity column
_BRACKET = re.compile(r"^(\(([^()*]+))?\*(\))?$|^\(([^()*]+)\)$")


def sniff(path: str, head: str) -> bool:
    lines = [ln for ln in runtext.split_lines(head.lstrip("\ufeff")) if ln.strip()]
    return bool(lines) and bool(_BEGIN.match(lines[0]))


def _entities(cells: list[str], path: str, first: int) -> list[Span]:
    spans: list[Span] = []
    open_at: tuple[int, str] | None = None
    for i, cell in enumerate(cells):
        m = _BRACKET.match(cell)
        if m is None:
            raise FormatError(
                path,
                first + i,
                f"named-entity column {cell!r}: expected *, (TYPE*, *) or (TYPE) "
                "(entities do not nest in OntoNotes)",
            )
        label = m.group(2) or m.group(4)
        closes = bool(m.group(3)) or bool(m.group(4))
        if label is not None:
            if open_at is not None:
                raise FormatError(
                    path, first + i, f"entity ({label} opens inside the entity ({open_at[1]}"
                )
            open_at = (i, label)
        if closes:
            if open_at is None:
                raise FormatError(path, first + i, "an entity closes (*)) that was never opened")
            spans.append(Span(open_at[0], i + 1, open_at[1]))
            open_at = None
    if open_at is not None:
        raise FormatError(
            path, first + open_at[0], f"entity ({open_at[1]} is not closed in its sentence"
        )
    return spans


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    raw, bom = runtext.read_text(path, encoding)
    docs: list[Document] = []
    rows: list[list[str]] = []
    first = 0

    def flush() -> None:
        if not rows:
            return
        if not docs:
            docs.append(Document(id=runtext.doc_id_of(path)))
        words = [r[3] for r in rows]
        if all(w == "[WORD]" for w in words):
            raise FormatError(
                path,
                first,
                "an OntoNotes skeleton file: its words are [WORD] placeholders (the text is the "
                "LDC's); rebuild the *_conll files with the CoNLL-2012 scripts and OntoNotes 5.0, "
                "then read those",
            )
        spans = _entities([r[_NE] for r in rows], path, first)
        docs[-1].sentences.append(Sentence(words, spans, line=first))
        rows.clear()

    for lineno, line in enumerate(runtext.split_lines(raw), 1):
        m = _BEGIN.match(line)
        if m:
            flush()
            part = f"; part {m.group(2)}" if m.group(2) else ""
            docs.append(Document(id=f"{m.group(1)}{part}"))
            continue
        if line.startswith("#end document") or not line.strip():
            flush()
            continue
        f = line.split()
        if len(f) <= _NE:
            raise FormatError(
                path,
                lineno,
                f"an OntoNotes word line has at least {_NE + 1} columns (the eleventh holds the "
                f"named entities), found {len(f)}",
            )
        if not rows:
            first = lineno
        rows.append(f)
    flush()
    docs = [d for d in docs if d.sentences]
    if not docs:
        raise FormatError(path, None, "no sentences: no OntoNotes word lines")
    return Corpus(
        docs,
        path=os.fspath(path),
        format=NAME,
        scheme=scheme or "iob2",
        encoding=encoding,
        newline="\r\n" if "\r\n" in raw else "\n",
        bom=bom,
        final_newline=raw.endswith("\n"),
        notes=[
            "OntoNotes columns other than the words and the named entities (parse, senses, "
            "predicate arguments, coreference) not read"
        ],
    )
