"""JSON Lines records: one record read into tokens and spans (validated), one written back.

A record is ``{"text": ..., "spans": [{"start", "end", "label"}, ...]}`` with character offsets
(``[start, end, label]`` triples, and the keys ``entities`` or ``label``, are accepted too);
optional ``tokens`` (a list of strings) fixes the tokenisation, optional ``columns`` (lists of
strings, one per token: POS, chunk, ...) carries the extra columns of CoNLL files, optional
``doc_id`` (a string or an integer) groups records into documents. Other fields are kept when
the record is written back.

Sentences cut from running text (plain text, brat, …) are written with their exact text
(spacing included), spans as character offsets in it, and where that text lies in its document:
``offset`` (the character offset of the record's text in the document), ``before`` (the
document's text between the previous record's and this one's, when not empty) and, on a
document's last record, ``after`` (what follows it). Reading such records back rebuilds the
document's text exactly (:func:`document_text`), so a later export (brat) indexes the original
text; records without them are joined by line breaks.

Everything a record holds is checked, so that a bad record is one ``file:line`` error and never
an exception of another kind, nor a silently altered reading:

* offsets are whole numbers (``3`` or ``3.0``); fractions, ``NaN``, infinities, booleans and
  strings are refused; a span must be non-empty and inside the text;
* labels are strings (``null`` is refused, not read as ``"None"``);
* with ``tokens``, the characters between them and after the last one must be whitespace (a
  character no token covers would be lost, or become a token of its own when the text is
  written as running text: refused);
* without ``tokens`` the text is split into words and punctuation by
  :mod:`~nerstudio.corpus.segment`, as plain text is (one tokeniser for all running text), and a
  span boundary that falls inside a word splits the word there (``"Obama's"`` with a span over ``Obama`` gives the tokens
  ``Obama`` and ``'s``); with ``tokens``, spans must fall on token boundaries; whitespace at the
  edges of a span is not part of the entity (an entity is a run of tokens): the span is read
  without it and each such span is counted (``Record.trimmed``), so that the readers report it
  (a ``note:`` with the count and the first example): trimming is the right reading, but it is
  a change to the user's offsets, and a conversion writes the trimmed ones;
* a record with no tokens (empty or blank text) holds no sentence: it is kept as it is when the
  file is written back as JSONL, and reported when a conversion drops it;
* nesting too deep for the JSON parser, numbers too long to convert and unpaired surrogates
  (``"\\ud800"``) are refused with the line they are on.
"""

from __future__ import annotations

import itertools
import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ..errors import FormatError
from .model import Sentence, Span, StrPath
from .segment import tokens as segment_tokens

SPAN_KEYS = ("spans", "entities", "label")
#: the record field holding a sentence's review state in the application's annotation loop
#: (``"reviewed"``; absent: pre-annotated, see :mod:`nerstudio.app.review`)
REVIEW_FIELD = "nerstudio_review"


@dataclass
class Record:
    """What one JSONL line holds, checked."""

    words: list[str]
    offsets: list[tuple[int, int]]
    spans: list[Span]
    span_key: str | None
    columns: tuple[tuple[str, ...], ...]
    doc_id: str | None
    text: str
    offset: int | None = None
    before: str | None = None
    after: str | None = None
    trimmed: tuple = ()  # (start, end, new start, new end) of spans read without the whitespace at their edges


def loads(text: str, path: StrPath | None, lineno: int) -> Any:
    """``json.loads`` whose every failure is a :class:`FormatError` at ``path:lineno``."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        if text.strip() in ("{", "["):  # pretty-printed JSON, one value over many lines
            raise FormatError(
                path,
                lineno,
                f"a line holding only {text.strip()!r}: this is JSON spread over "
                "several lines, not JSON Lines (one whole object per line); write "
                "it one object per line (e.g. jq -c . FILE)",
            ) from None
        raise FormatError(path, lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
    except RecursionError:
        raise FormatError(path, lineno, "invalid JSON: nested too deeply") from None
    except ValueError as exc:  # e.g. an integer of more than 4300 digits
        raise FormatError(path, lineno, f"invalid JSON: {exc}") from None


def _offset(value: object, what: str, sp: object, path: StrPath | None, lineno: int) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise FormatError(
            path, lineno, f"span {_show(sp)}: {what} must be a whole number, not {_show(value)}"
        )
    if isinstance(value, float):
        if not math.isfinite(value) or value != int(value):
            raise FormatError(
                path, lineno, f"span {_show(sp)}: {what} must be a whole number, not {_show(value)}"
            )
        return int(value)
    return value


def _show(value: object, limit: int = 60) -> str:
    try:
        s = json.dumps(value, ensure_ascii=False, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        s = repr(value)
    s = s.encode("utf-8", "backslashreplace").decode("utf-8")  # an unpaired surrogate, escaped
    return s if len(s) <= limit else s[: limit - 3] + "..."


def _char_spans(
    raw: object, key: str, path: StrPath | None, lineno: int
) -> list[tuple[int, int, str]]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise FormatError(
            path,
            lineno,
            f'"{key}" must be a list of spans '
            '({"start", "end", "label"} objects or [start, end, label] lists), '
            f"not {_show(raw)}",
        )
    out = []
    for sp in raw:
        if isinstance(sp, dict) and all(k in sp for k in ("start", "end", "label")):
            s, e, lab = sp["start"], sp["end"], sp["label"]
        elif isinstance(sp, list) and len(sp) == 3:
            s, e, lab = sp
        else:
            raise FormatError(
                path,
                lineno,
                f'cannot read span {_show(sp)}: use {{"start", "end", "label"}} '
                "or [start, end, label]",
            )
        s = _offset(s, "start", sp, path, lineno)
        e = _offset(e, "end", sp, path, lineno)
        if not isinstance(lab, str):
            raise FormatError(
                path, lineno, f"span {_show(sp)}: the label must be a string, not {_show(lab)}"
            )
        out.append((s, e, lab))
    return out


def _check_unicode(strings: Iterable[str], path: StrPath | None, lineno: int) -> None:
    for s in strings:
        try:
            s.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise FormatError(
                path,
                lineno,
                f"{_show(s)} holds an unpaired surrogate {s[exc.start]!r}: not valid Unicode",
            ) from None


def check_strings(value: object, path: StrPath | None, lineno: int) -> None:
    """Refuse an unpaired surrogate anywhere in a JSON value (keys and strings of every field:
    what is read is what can be written back)."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, str):
            _check_unicode((v,), path, lineno)
        elif isinstance(v, dict):
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)


def may_hold_surrogates(line: str) -> bool:
    """Whether a JSON text can hold an unpaired surrogate (only as a \\u escape)."""
    return "\\u" in line or "\\U" in line


def parse_record(line: str, path: StrPath | None, lineno: int) -> Record:
    """Read one JSONL line (see the module docstring); raises :class:`FormatError`."""
    obj = loads(line, path, lineno)
    if not isinstance(obj, dict):
        raise FormatError(path, lineno, 'each line must be a JSON object with a "text" field')
    if may_hold_surrogates(line):
        check_strings(obj, path, lineno)
    return parse_object(obj, path, lineno)


def _text_and_tokens(
    obj: dict, path: StrPath | None, lineno: int
) -> tuple[str | None, list[str] | None]:
    """The record's ``text`` and ``tokens`` (at least one of them), checked."""
    text, tokens = obj.get("text"), obj.get("tokens")
    if text is None and tokens is None:
        raise FormatError(path, lineno, 'a JSONL record needs a "text" field (or "tokens")')
    if text is not None and not isinstance(text, str):
        raise FormatError(path, lineno, f'"text" must be a string, not {_show(text)}')
    if tokens is not None and (
        not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens)
    ):
        raise FormatError(path, lineno, '"tokens" must be a list of strings')
    return text, tokens


def _doc_id(obj: dict, path: StrPath | None, lineno: int) -> object:
    doc = obj.get("doc_id")
    if doc is not None and (isinstance(doc, bool) or not isinstance(doc, (str, int))):
        raise FormatError(
            path, lineno, f'"doc_id" must be a string or an integer, not {_show(doc)}'
        )
    return doc


def _span_key(obj: dict, path: StrPath | None, lineno: int) -> str | None:
    """The field holding the record's spans (``None``: no entities); a record with tags and no
    spans is refused (never read as a record without entities)."""
    key = next((k for k in SPAN_KEYS if k in obj), None)
    if key is None:
        tag_key = next((k for k in ("ner_tags", "tags") if k in obj), None)
        if tag_key is not None:
            raise FormatError(
                path,
                lineno,
                f'a record with "{tag_key}" and no spans is a Hugging Face token-'
                "classification record: read it with --from hf",
            )
    return key


def _token_offsets(
    text: str, tokens: list[str], path: StrPath | None, lineno: int
) -> list[tuple[int, int]]:
    """Where each token lies in the text; only whitespace may be left between and after them."""
    offsets: list[tuple[int, int]] = []
    pos = 0
    exact = text == " ".join(tokens)  # what nerstudio writes: tokens joined by single spaces
    for t in tokens:
        k = pos if exact else text.find(t, pos)
        if k < 0:
            raise FormatError(path, lineno, f"token {t!r} not found in the text after offset {pos}")
        if (
            not exact and text[pos:k].strip()
        ):  # else a text target would make them tokens of their own
            raise FormatError(
                path,
                lineno,
                f"the text between tokens holds {text[pos:k].strip()[:20]!r} (before "
                f"token {len(offsets) + 1} {t!r} at {k}), which no token covers: "
                "characters between tokens must be whitespace",
            )
        offsets.append((k, k + len(t)))
        pos = k + len(t) + exact
    if not exact and text[pos:].strip():  # else the words after the last token are lost
        raise FormatError(
            path,
            lineno,
            f"the text after the last token holds {text[pos:].strip()[:20]!r} (from "
            f"{pos}), which no token covers: every word of the text must be a token",
        )
    return offsets


def _record_offset(obj: dict, path: StrPath | None, lineno: int) -> int | None:
    offset = obj.get("offset")
    if offset is None:
        return None
    offset = _offset(offset, "offset", obj.get("offset"), path, lineno)
    if offset < 0:
        raise FormatError(path, lineno, f'"offset" must not be negative, not {offset}')
    return offset


def _around(obj: dict, path: StrPath | None, lineno: int) -> list[str | None]:
    """The record's ``before`` and ``after`` (the text around it in its document)."""
    around: list[str | None] = []
    for name in ("before", "after"):
        v = obj.get(name)
        if v is not None and not isinstance(v, str):
            raise FormatError(
                path,
                lineno,
                f'"{name}" must be a string (the text around the record), not {_show(v)}',
            )
        around.append(v)
    return around


def parse_object(
    obj: dict, path: StrPath | None, lineno: int, check_unicode: bool = False
) -> Record:
    text, tokens = _text_and_tokens(obj, path, lineno)
    doc = _doc_id(obj, path, lineno)
    key = _span_key(obj, path, lineno)
    char_spans = _char_spans(obj[key], key, path, lineno) if key else []
    if check_unicode:
        _check_unicode(
            [text or "", *(tokens or ()), *(lab for _, _, lab in char_spans)], path, lineno
        )
    if tokens is not None:
        if text is None:
            text = " ".join(tokens)
        offsets = _token_offsets(text, tokens, path, lineno)
        words = list(tokens)
    else:
        assert text is not None  # a record without "text" has "tokens" (refused above if not)
        offsets = segment_tokens(text, {c for s, e, _ in char_spans for c in (s, e)})
        words = [text[a:b] for a, b in offsets]
    columns = _columns(obj.get("columns"), len(words), path, lineno)
    trimmed: list = []
    spans = _token_spans(char_spans, text, offsets, path, lineno, trimmed)
    offset = _record_offset(obj, path, lineno)
    around = _around(obj, path, lineno)
    if check_unicode:
        _check_unicode(
            [str(doc or ""), *(v for v in around if v), *(v for c in columns for v in c)],
            path,
            lineno,
        )
    return Record(
        words,
        offsets,
        spans,
        key,
        columns,
        None if doc is None else str(doc),
        text,
        offset,
        around[0],
        around[1],
        trimmed=tuple(trimmed),
    )


def trimmed_example(text: str, t: tuple) -> str:
    """One trimmed span for a note: its text as given and the range it is read as."""
    s0, e0, s, e = t
    shown = text[s0:e0]
    shown = shown if len(shown) <= 40 else shown[:37] + "..."
    return f"{shown!r} [{s0}, {e0}) read as {text[s:e]!r} [{s}, {e})"


def _columns(raw: object, n: int, path: StrPath | None, lineno: int) -> tuple[tuple[str, ...], ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list) or not all(
        isinstance(c, list) and len(c) == n and all(isinstance(v, str) for v in c) for c in raw
    ):
        raise FormatError(
            path,
            lineno,
            f'"columns" must be a list of columns, each a list of {n} strings (one per token)',
        )
    return tuple(tuple(c) for c in raw)


def _token_spans(
    char_spans: list[tuple[int, int, str]],
    text: str,
    offsets: list[tuple[int, int]],
    path: StrPath | None,
    lineno: int,
    trimmed: list | None = None,
) -> list[Span]:
    # an empty token shares its offset with a neighbour: the non-empty token owns the boundary
    order = sorted(range(len(offsets)), key=lambda i: offsets[i][0] < offsets[i][1])
    starts = {offsets[i][0]: i for i in order}
    ends = {offsets[i][1]: i for i in order}
    spans = []
    for s0, e0, lab in char_spans:
        if s0 >= e0:
            raise FormatError(
                path, lineno, f"span [{s0}, {e0}) is empty (its end must come after its start)"
            )
        if not (s0 >= 0 and e0 <= len(text)):
            raise FormatError(
                path, lineno, f"span [{s0}, {e0}) is outside the text of {len(text)} characters"
            )
        s, e = s0, e0
        # tolerate spans that include surrounding whitespace (unless it is part of a token)
        if s not in starts:
            while s < e and text[s].isspace():
                s += 1
        if e not in ends:
            while e > s and text[e - 1].isspace():
                e -= 1
        if s == e:
            raise FormatError(
                path, lineno, f"span [{s0}, {e0}) {text[s0:e0]!r} covers only whitespace"
            )
        if s not in starts or e not in ends:
            raise FormatError(
                path, lineno, f"span [{s0}, {e0}) {text[s0:e0]!r} does not fall on token boundaries"
            )
        if (s, e) != (s0, e0) and trimmed is not None:
            trimmed.append((s0, e0, s, e))
        spans.append(Span(starts[s], ends[e] + 1, lab))
    spans.sort()
    for a, b in itertools.pairwise(spans):
        if a == b:
            raise FormatError(path, lineno, f"the span {a} is given twice")
        if b.start < a.end:
            raise FormatError(
                path, lineno, f"overlapping spans {a} and {b} (nested entities are not supported)"
            )
    return spans


def _span_objects(s: Sentence, offsets: list[tuple[int, int]]) -> list[dict]:
    return [
        {"start": offsets[sp.start][0], "end": offsets[sp.end - 1][1], "label": sp.label}
        for sp in s.spans
    ]


def render_record(
    s: Sentence,
    doc_id: str | None,
    before: str | None = None,
    after: str | None = None,
    fields: dict | None = None,
) -> str:
    """The JSONL line for ``s``: its source record (updated if its spans were edited), or a new
    record with ``text``, ``tokens``, ``spans`` and, when the sentence has extra columns,
    ``columns``; a sentence cut from running text also gets ``offset`` and the text ``before``
    and ``after`` it in its document when they are given and not empty. ``fields``: record
    fields to set (a value ``None`` removes the field), e.g. :data:`REVIEW_FIELD`."""
    fields = fields or {}
    if s.raw is not None:
        try:
            obj = loads(s.raw, None, 0)
            rec = parse_object(obj, None, 0) if isinstance(obj, dict) else None
        except FormatError:
            rec = None  # not a record we can update: write a fresh one
        if rec is not None and rec.words == list(s.words):
            same_fields = all(obj.get(k) == v for k, v in fields.items())
            if rec.spans == s.spans and same_fields:
                return s.raw
            _set_fields(obj, fields)
            if rec.spans == s.spans:
                return json.dumps(obj, ensure_ascii=False)
            obj[rec.span_key or "spans"] = _span_objects(s, rec.offsets)
            if "tokens" not in obj and parse_object(obj, None, 0).words != list(s.words):
                # old span boundaries split words: keep the tokens as they were
                obj["tokens"] = list(s.words)
            return json.dumps(obj, ensure_ascii=False)
    text, offsets = s.char_offsets()
    obj = {}
    if doc_id is not None:
        obj["doc_id"] = doc_id
    obj["text"] = text
    obj["tokens"] = list(s.words)
    obj["spans"] = _span_objects(s, offsets)
    if s.offsets:
        obj["offset"] = s.offsets[0][0]
        if before:
            obj["before"] = before
        if after:
            obj["after"] = after
    if s.extra:
        obj["columns"] = [list(c) for c in s.extra]
    _set_fields(obj, fields)
    return json.dumps(obj, ensure_ascii=False)


def _set_fields(obj: dict, fields: dict) -> None:
    for k, v in fields.items():
        if v is None:
            obj.pop(k, None)
        else:
            obj[k] = v


def record_losses(raw: str) -> tuple[bool, list[str]]:
    """For a source record converted to a column format: whether its text had spacing that
    tokens joined by spaces do not reproduce, and the names of its other fields (lost)."""
    try:
        obj = json.loads(raw)
        rec = parse_object(obj, None, 0)
    except (ValueError, RecursionError, FormatError):
        return False, []
    known = {"text", "tokens", "columns", "doc_id", *SPAN_KEYS}
    return rec.text != " ".join(rec.words), sorted(k for k in obj if k not in known)


class TextCursor:
    """Where each record of one document lies in the document's text, from its ``offset`` and
    ``before``: the one check of record placement, run by the streamed reader
    (:class:`~nerstudio.corpus.formats.Reader`) and by :func:`document_text` alike, so that
    ``stats``/``convert`` and the whole-file reader accept and refuse the same files.

    A record whose ``offset`` goes back to the start of the previous record's text or before it
    cannot be in the same document: it starts a new one (two nerstudio outputs concatenated, a
    line repeated), which :meth:`goes_back` tells the reader, which reports it. An ``offset``
    inside the previous record's text is an error at its line."""

    def __init__(self, path: StrPath | None = None) -> None:
        self.path = path
        self.reset()

    def reset(self) -> None:
        self.pos = 0  # the length of the document's text so far
        self.start = 0  # where the previous record's text starts
        self.n = 0  # records placed

    def goes_back(self, s: Sentence) -> bool:
        offset = (s.meta or {}).get("offset")
        return self.n > 0 and offset is not None and offset <= self.start

    def place(self, s: Sentence) -> tuple[str, str]:
        """``(the text before the record, the record's text)``; advances past them."""
        where = s.meta or {}
        before, offset = where.get("before"), where.get("offset")
        if before is None:
            if offset is None:
                before = "" if self.n == 0 else "\n"
            elif offset >= self.pos:
                before = " " * (offset - self.pos)
            else:
                raise FormatError(
                    self.path,
                    s.line,
                    f'"offset" {offset} falls inside the previous record\'s '
                    f"text (which ends at {self.pos})",
                )
        elif offset is not None and self.n > 0 and offset != self.pos + len(before):
            raise FormatError(
                self.path,
                s.line,
                f'"offset" {offset} does not follow the previous record and '
                f'"before" (expected {self.pos + len(before)})',
            )
        piece = s.text()
        self.start = self.pos + len(before)
        self.pos += len(before) + len(piece)
        self.n += 1
        return before, piece


def document_text(sentences: Sequence[Sentence], path: StrPath | None = None) -> str | None:
    """Give the sentences read from one document's JSONL records one shared source text, the
    document's (see the module docstring): each sentence's ``source`` and ``offsets`` are
    rebuilt in place; returns that text (``None`` when no record has spacing of its own or an
    ``offset``: then the words joined by spaces are the text, and nothing is stored)."""
    if not any(s.offsets is not None for s in sentences):
        return None  # words joined by spaces, one record per line: Document.text_and_offsets derives it
    parts, shifted = [], []
    cursor = TextCursor(path)
    for k, s in enumerate(sentences):
        where = s.meta or {}
        before, piece = cursor.place(s)
        parts.append(before)
        start = cursor.pos - len(piece)
        shifted.append([(a + start, b + start) for a, b in s.char_offsets()[1]])
        parts.append(piece)
        if where.get("after") and k == len(sentences) - 1:
            parts.append(where["after"])
    text = "".join(parts)
    for s, offs in zip(sentences, shifted):
        s.source, s.offsets = text, tuple(offs)
    return text
