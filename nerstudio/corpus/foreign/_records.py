"""What the handlers of the annotation tools' JSON formats (Prodigy, doccano, Label Studio,
Hugging Face) share: decoded lines and JSON values with the line they start on, one record's
text and character spans turned into a sentence, records grouped into documents, and records
written atomically.

The tools all store a *record* (a task, an example) of running text with character-offset
spans. nerstudio reads each record as **one sentence** (the unit the annotator saw; nothing is
re-segmented, so writing back gives the same records) and groups consecutive records with the
same document id into one :class:`~nerstudio.corpus.model.Document` (a record without an id is
a document of its own: the tools' records are independent texts unless an id says otherwise,
and document-level features must not treat a thousand unrelated texts as one story), whose
``text`` is their texts joined by line breaks, so that every sentence keeps its text and token offsets
(:attr:`Sentence.source`, :attr:`Sentence.offsets`). Tokenisation and every check of the
offsets and labels are those of nerstudio's own JSONL records
(:func:`nerstudio.corpus.jsonl.parse_object`), so the formats cannot drift apart.

What a record's reading changes is counted in a :class:`Tally` and becomes one note per kind
with its count and first example and line (:data:`TALLY_TEXTS`): spans read without the
whitespace at their edges (trimming is the reading — an entity is a run of tokens — but it
changes the user's offsets, so it is said, and a conversion writes the trimmed offsets), Prodigy
relations, doccano label ids and records in doccano's other mode.
"""

from __future__ import annotations

import codecs
import json
import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import IO, TYPE_CHECKING, Any, NoReturn

from ...errors import FormatError, Msg
from ..atomic import atomic_open
from ..jsonl import check_strings, loads, may_hold_surrogates, parse_object, trimmed_example
from ..model import Corpus, Document, Sentence, Span
from ..segment import tokens as segment_tokens

if TYPE_CHECKING:
    from ..jsonl import Record
    from ..writing import Losses


def read_text(path: str, encoding: str) -> str:
    """The whole file, decoded (a UTF-8 byte-order mark dropped); a decoding error names its line."""
    from ..detect import check_regular

    check_regular(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise FormatError(path, None, Msg.CANNOT_READ.format(why=exc.strerror or exc)) from None
    if data.startswith(codecs.BOM_UTF8) and codecs.lookup(encoding).name in ("utf-8", "utf-8-sig"):
        data = data[3:]
    try:
        return data.decode(encoding)
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise FormatError(
            path,
            line,
            f"not valid {encoding} (byte 0x{data[exc.start]:02x}); pass --encoding "
            "with the file's encoding (e.g. --encoding latin-1)",
        ) from None
    except LookupError:
        raise FormatError(path, None, f"unknown encoding {encoding!r}") from None


def iter_jsonl(path: str, encoding: str) -> Iterator[tuple[int, dict]]:
    """``(line, object)`` for every non-blank line of a JSON Lines file."""
    for lineno, line in enumerate(read_text(path, encoding).split("\n"), 1):
        if not line.strip():
            continue
        obj = loads(line, path, lineno)
        if not isinstance(obj, dict):
            raise FormatError(
                path, lineno, f"each line must be a JSON object, not {type(obj).__name__}"
            )
        if may_hold_surrogates(line):
            check_strings(obj, path, lineno)
        yield lineno, obj


def iter_json_items(
    path: str, encoding: str, wrappers: tuple[str, ...] = (), single: bool = False
) -> Iterator[tuple[int, object]]:
    """``(line, item)`` for the items of a file holding one JSON array, or an object holding the
    array under one of ``wrappers`` (``{"data": [...]}``); each item with the line it starts on.
    ``single``: a file holding one object (and no wrapper) is that one item."""
    text = read_text(path, encoding)
    for line, item in _json_items(path, text, wrappers, single):
        if may_hold_surrogates(text):
            check_strings(item, path, line)
        yield line, item


def _json_items(
    path: str, text: str, wrappers: tuple[str, ...], single: bool
) -> Iterator[tuple[int, object]]:
    dec = json.JSONDecoder()

    seen = [0, 1]  # a position and its line: lines are counted once, forwards

    def line_at(pos: int) -> int:
        if pos < seen[0]:
            seen[:] = [0, 1]
        seen[1] += text.count("\n", seen[0], pos)
        seen[0] = pos
        return seen[1]

    def fail(pos: int, message: str) -> NoReturn:
        raise FormatError(path, line_at(pos), message)

    def value(pos: int) -> tuple[Any, int]:
        try:
            return dec.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            fail(exc.pos, f"invalid JSON: {exc.msg} (column {exc.colno})")
        except RecursionError:
            fail(pos, "invalid JSON: nested too deeply")
        except ValueError as exc:
            fail(pos, f"invalid JSON: {exc}")

    def skip(pos: int) -> int:
        while pos < len(text) and text[pos] in " \t\r\n":
            pos += 1
        return pos

    def items(pos: int, top: bool) -> Iterator[tuple[int, object]]:
        if not text.startswith("[", pos):
            fail(pos, "expected a JSON array")
        pos = skip(pos + 1)
        if text.startswith("]", pos):
            return
        while True:
            item, end = value(pos)
            yield line_at(pos), item
            pos = skip(end)
            if text.startswith("]", pos):
                if top and skip(pos + 1) != len(text):
                    fail(skip(pos + 1), "unexpected data after the JSON array")
                return
            if not text.startswith(",", pos):
                fail(pos, "expected ',' or ']' between the items of the array")
            pos = skip(pos + 1)

    pos = skip(0)
    if not text.startswith("{", pos):
        yield from items(pos, True)
        return
    obj, end = value(pos)  # the array under a key: the whole object is read once, then its items
    if skip(end) != len(text):
        fail(
            skip(end),
            "unexpected data after the JSON value"
            + (
                " (one JSON object per line is JSON Lines: each line is read as one item when the first "
                "line holds a whole object)"
                if single
                else ""
            ),
        )
    key = next((k for k in wrappers if isinstance(obj.get(k), list)), None)
    if key is None and single:
        yield line_at(pos), obj
        return
    if key is None:
        fail(
            pos,
            "expected a JSON array"
            + (
                f" or an object with {' or '.join(repr(k) for k in wrappers)} holding one"
                if wrappers
                else ""
            ),
        )
    start = text.find("[", text.find(f'"{key}"', pos))
    try:
        found = list(items(start, False)) if start >= 0 else []
    except FormatError:
        found = []
    if [item for _, item in found] == obj[key]:
        yield from found
    else:  # the key's text was not where the array is: items without their own lines
        for item in obj[key]:
            yield 1, item


def first_json_object(head: str) -> dict | None:
    """The first line of ``head`` as a JSON object, or ``None`` (for sniffers)."""
    line = head.lstrip("\ufeff \t\r\n").split("\n", 1)[0]
    if not line.startswith("{"):
        return None
    try:
        obj = json.loads(line)
    except (ValueError, RecursionError):
        return None
    return obj if isinstance(obj, dict) else None


# formats whose records are documents of their own unless an id groups them (CorpusBuilder)
RECORD_FORMATS = ("prodigy", "doccano", "doccano-rel", "label-studio")


TALLY_TEXTS = {
    "relations": "{n} relation(s) not read: nerstudio holds entities only (a Prodigy task keeps them among "
    "its other fields when written back as prodigy)",
    "label_ids": "{n} entit(ies) labelled with a doccano label id, not a name, read with the id as their "
    "label (a doccano 1.x export: rename the labels, or export with label names)",
    "same_span": "{n} entit(ies) annotated again with the same offsets and label (a span given twice, or "
    "several annotators of one project) read once",
    "other_mode": "{n} record(s) in the other doccano mode read (their entities kept; written back in the "
    "file's mode)",
    "trimmed": "{n} span(s) with whitespace at their edges read without it (an entity is a run of tokens: "
    "converted or edited, it is written with the trimmed offsets)",
}


class Tally:
    """What one read did not keep as it was (dropped, trimmed, rewritten, set aside), by kind:
    how often, and the first example with its line, for one ``note:`` line per kind."""

    def __init__(self, path: str):
        self.path = path
        self.counts: dict = {}
        self.first: dict = {}

    def add(self, kind: str, line: int | None, example: str = "", n: int = 1) -> None:
        if n <= 0:
            return
        self.counts[kind] = self.counts.get(kind, 0) + n
        self.first.setdefault(kind, (line, example))

    def notes(self, texts: dict) -> list[str]:
        """``texts``: kind -> what happened (``{n}`` is the count); one line per kind seen."""
        out = []
        for kind, n in self.counts.items():
            line, example = self.first[kind]
            at = f"first at line {line}" if line else "first"
            out.append(texts[kind].format(n=n) + f" ({at}{': ' + example if example else ''})")
        return out


def unique_spans(spans: list, tally: Tally, line: int) -> list:
    """``[start, end, label]`` spans with each repeat of an identical one left out (counted as
    ``same_span``): a span given twice says nothing more than once, and the tools that wrote it
    (Prodigy's binary answers, doccano's imports, several annotators' work merged) read it once."""
    seen: set = set()
    out = []
    for x in spans:
        key = json.dumps(x, sort_keys=True, default=str)  # any value (a bad label is refused later)
        if key in seen:
            tally.add("same_span", line, show(x))
            continue
        seen.add(key)
        out.append(x)
    return out


def show(value: object, limit: int = 60) -> str:
    s = json.dumps(value, ensure_ascii=False, default=str)
    return s if len(s) <= limit else s[: limit - 3] + "..."


@dataclass
class _Pending:
    text: str
    words: list
    offsets: list
    spans: list
    line: int
    meta: dict | None


@dataclass
class CorpusBuilder:
    """Records in file order, grouped into documents by their document id (``None``: no id)."""

    path: str
    format: str
    encoding: str
    scheme: str | None = None
    notes: list = field(default_factory=list)
    _docs: list = field(default_factory=list)  # (doc id, [_Pending])
    empty: int = 0
    # what the records' reading changed (build() turns it into notes)
    tally: Tally = field(init=False)

    def __post_init__(self) -> None:
        self.tally = Tally(self.path)

    def add_text(
        self,
        text: str,
        char_spans: list,
        line: int,
        doc_id: str | int | None = None,
        fields: dict | None = None,
    ) -> None:
        """One record of running text with ``[start, end, label]`` character spans (checked and
        tokenised the way nerstudio's JSONL records are); ``fields``: the record's other fields,
        given back when the corpus is written in its format. A record without tokens is counted,
        not kept."""
        rec = parse_object({"text": text, "spans": char_spans}, self.path, line, check_unicode=True)
        self.trimmed(rec, line)
        self.add_tokens(rec.text, rec.words, rec.offsets, rec.spans, line, doc_id, fields)

    def trimmed(self, rec: Record, line: int) -> None:
        """Count the spans of ``rec`` read without the whitespace at their edges."""
        if rec.trimmed:
            self.tally.add(
                "trimmed", line, trimmed_example(rec.text, rec.trimmed[0]), len(rec.trimmed)
            )

    def add_tokens(
        self,
        text: str,
        words: list,
        offsets: list,
        spans: list,
        line: int,
        doc_id: str | int | None = None,
        fields: dict | None = None,
    ) -> None:
        if not words:
            self.empty += 1
            return
        doc_id = None if doc_id is None else str(doc_id)
        if (
            not self._docs or doc_id is None or self._docs[-1][0] != doc_id
        ):  # no id: a document of its own
            self._docs.append((doc_id, []))
        meta = None if fields is None else origin(self.format, fields, spans)
        self._docs[-1][1].append(
            _Pending(text, list(words), list(offsets), list(spans), line, meta)
        )

    def build(self) -> Corpus:
        if not self._docs:
            what = f"{self.empty} record(s), none with any text" if self.empty else "no records"
            raise FormatError(self.path, None, f"no sentences: {what}")
        if self.empty:
            self.notes.insert(0, f"{self.empty} record(s) without text skipped (no sentence)")
        self.notes.extend(self.tally.notes(TALLY_TEXTS))
        docs = []
        for k, (doc_id, pending) in enumerate(self._docs):
            text = "\n".join(p.text for p in pending)
            sentences, base = [], 0
            for p in pending:
                offs = [(a + base, b + base) for a, b in p.offsets]
                sentences.append(
                    Sentence(p.words, p.spans, line=p.line, meta=p.meta, source=text, offsets=offs)
                )
                base += len(p.text) + 1
            # docstart: the id the file gave (None: numbered here, and not written back as an id)
            docs.append(
                Document(
                    sentences,
                    docstart=doc_id,
                    id=doc_id if doc_id is not None else str(k + 1),
                    text=text,
                )
            )
        return Corpus(
            docs,
            path=self.path,
            format=self.format,
            scheme=self.scheme or "iob2",
            encoding=self.encoding,
            layout=None,
            notes=list(self.notes),
        )


def sentence_records(
    corpus: Corpus, losses: Losses | None = None
) -> Iterator[tuple[str | None, Sentence, str, list[tuple[int, int]]]]:
    """For writers: ``(document id, sentence, its text, its tokens' offsets in that text)`` for
    every sentence with tokens. Records without an id are read as documents of their own, so the
    id is ``None`` only for a document of one record: the only document of the corpus, or a record
    that had no id in a record format; the records of a document of several sentences carry its id.
    A sentence whose text is blank (empty or whitespace tokens only) would be a record the
    tools' readers skip: it is not written, and counted in ``losses``."""
    multi = len(corpus.documents) > 1
    numbered = corpus.format in RECORD_FORMATS

    def anonymous(d: Document) -> bool:
        if sum(1 for s in d.sentences if s.words) > 1:
            return False
        return not multi or (numbered and d.docstart is None)

    ids = document_ids(corpus, losses, anonymous)
    for d, doc_id in zip(corpus.documents, ids):
        for s in d.sentences:
            if not s.words:
                continue
            text, offsets = s.char_offsets()
            if losses is not None and any(not w.strip() for w in s.words):
                losses.add(
                    "blank_tokens",
                    s.line or None,
                    text="the empty or whitespace tokens of {n} sentence(s) "
                    "not kept as tokens: {fmt} holds the text, whose "
                    "tokens are words",
                )
            if not text.strip():
                if losses is not None:
                    losses.add(
                        "blank",
                        s.line or None,
                        text="{n} sentence(s) of empty or whitespace tokens only not "
                        "written: a {fmt} record needs some text",
                    )
                continue
            yield doc_id, s, text, offsets


def document_ids(
    corpus: Corpus,
    losses: Losses | None = None,
    anonymous: Callable[[Document], bool] | None = None,
) -> list[str | None]:
    """One id per document for the records' ``doc_id``: its own, else its number; records with
    the same id in a row are read as one document, so an id that repeats (two documents read
    with one id) is made unique with ``#2``, ``#3``… and counted in ``losses``, never merged.
    Documents for which ``anonymous(document)`` holds are written without an id (``None``)."""
    out: list[str | None] = []
    seen, renamed = set(), 0
    for k, d in enumerate(corpus.documents):
        if anonymous is not None and anonymous(d):
            out.append(None)
            continue
        base = str(d.id) if d.id else str(k + 1)
        doc_id, n = base, 1
        while doc_id in seen:
            n += 1
            doc_id = f"{base}#{n}"
        renamed += doc_id != base
        seen.add(doc_id)
        out.append(doc_id)
    if renamed and losses is not None:
        losses.add(
            "doc_ids",
            n=renamed,
            text="{n} document(s) shared an id with an earlier one: written with "
            "'#2', '#3'… added, so that they stay apart",
        )
    return out


def char_spans(s: Sentence, offsets: list[tuple[int, int]]) -> list[tuple[int, int, str]]:
    """The sentence's spans as ``(start, end, label)`` character offsets in its text."""
    return [(offsets[sp.start][0], offsets[sp.end - 1][1], sp.label) for sp in s.spans]


def check_spans_writable(
    s: Sentence, offsets: list[tuple[int, int]], path: str, text: str | None = None
) -> None:
    """An entity made only of empty tokens has no characters, and one made only of whitespace
    is refused by every reader of running text: no character-offset format holds them."""
    for sp in s.spans:
        a, b = offsets[sp.start][0], offsets[sp.end - 1][1]
        if a >= b:
            raise FormatError(
                path,
                s.line or None,
                f"the entity {sp.label or '(untyped)'} at token {sp.start + 1} "
                "covers only empty tokens: it has no characters to point at",
            )
        if text is not None and not text[a:b].strip():
            raise FormatError(
                path,
                s.line or None,
                f"the entity {sp.label or '(untyped)'} at token {sp.start + 1} "
                f"covers only whitespace ({text[a:b]!r}): a reader of running "
                "text finds no entity there",
            )


_ODD_SPACE = re.compile(r"[^\S \n]")  # whitespace other than a space or a line break


def check_reads_back(
    s: Sentence, text: str, offsets: list[tuple[int, int]], path: str, fmt: str
) -> None:
    """A record of running text is tokenised again when read: when its text holds whitespace
    that the tokeniser may see otherwise than Python (tabs, U+0085, U+2028, ``\\x1c``…), read
    the record as the reader will and refuse it, naming the sentence, if its entities would not
    come back."""
    if not _ODD_SPACE.search(text):
        return
    try:
        parse_object(
            {"text": text, "spans": [list(x) for x in char_spans(s, offsets)]}, path, s.line or 0
        )
    except FormatError as exc:
        raise FormatError(
            path,
            s.line or None,
            f"the sentence {' '.join(s.words)[:40]!r} cannot be written as "
            f"{fmt}: its entities would not read back ({exc.message}); save as "
            "jsonl",
        ) from None


def count_token_breaks(
    s: Sentence, text: str, offsets: list[tuple[int, int]], losses: Losses
) -> None:
    """Count a sentence whose tokens the reader of a record of running text would not give
    back: it tokenises the text again (:func:`~nerstudio.corpus.segment.tokens`, cut at the
    entities' edges, as :func:`~nerstudio.corpus.jsonl.parse_object` does)."""
    if any(not w.strip() for w in s.words):  # counted as blank tokens already
        return
    cuts = {c for a, b, _ in char_spans(s, offsets) for c in (a, b)}
    if segment_tokens(text, cuts) != [tuple(o) for o in offsets]:
        losses.add(
            "token_breaks",
            s.line or None,
            text="the token breaks of {n} sentence(s) not kept: {fmt} holds running text, "
            "which is split into tokens again when read (jsonl keeps them)",
        )


def count_columns(corpus: Corpus, losses: Losses, fmt: str) -> None:
    """Report the extra columns (POS, chunk, ...) a JSON format does not hold."""
    for s in corpus.sentences:
        if s.extra:
            losses.add("columns", s.line or None)


def kept_fields(s: Sentence, fmt: str) -> dict:
    """The other fields of the record ``s`` was read from, when it was read from ``fmt``."""
    if s.meta and isinstance(s.meta.get(fmt), dict):
        return dict(s.meta[fmt])
    return {}


def spans_unchanged(s: Sentence, fmt: str) -> bool:
    """Whether the sentence still has the spans it was read with from ``fmt``."""
    return bool(s.meta) and s.meta is not None and s.meta.get(f"{fmt}:spans") == tuple(s.spans)


def origin(fmt: str, fields: dict, spans: Iterable[Span]) -> dict:
    """The ``Sentence.meta`` that lets a writer of ``fmt`` give back the record's other fields."""
    return {fmt: fields, f"{fmt}:spans": tuple(sorted(Span(*x) for x in spans))}


def write_json_lines(path: str, objects: Iterable[dict], encoding: str = "utf-8") -> None:
    with atomic_open(path, encoding=encoding) as f:
        dump_json_lines(f, path, objects)


def dump_json_lines(f: IO[str], path: str, objects: Iterable[dict]) -> None:
    """One JSON object per line into the open file ``f``; a string that cannot be written (an
    unpaired surrogate, a character the encoding lacks) is an error naming its line, and so is
    a file without any record (no reader reads it back)."""
    n = 0
    for n, obj in enumerate(objects, 1):
        try:
            f.write(json.dumps(obj, ensure_ascii=False) + "\n")
        except UnicodeEncodeError as exc:
            raise FormatError(
                path,
                n,
                f"not saved: {exc.object[exc.start : exc.end]!r} cannot be written in "
                f"{getattr(f, 'encoding', 'its encoding')}{_surrogate(exc)}; the file is unchanged",
            ) from None
    if not n:
        _nothing(path)


def _nothing(path: str) -> NoReturn:
    raise FormatError(
        path,
        None,
        "not saved: no sentence has any text, and a file without records is not read back",
    )


def _surrogate(exc: UnicodeEncodeError) -> str:
    bad = exc.object[exc.start : exc.end]
    return (
        " (an unpaired surrogate: not valid Unicode)"
        if any(0xD800 <= ord(c) <= 0xDFFF for c in bad)
        else ""
    )


def write_json(path: str, value: object, encoding: str = "utf-8") -> None:
    if isinstance(value, list) and not value:
        _nothing(path)
    with atomic_open(path, encoding=encoding) as f:
        f.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
