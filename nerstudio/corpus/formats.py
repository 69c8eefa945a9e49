"""Reading CoNLL-style column files and JSONL, and the other tools' formats (the entry point).

Formats (detected from the file's content, see :mod:`nerstudio.corpus.detect`, or forced by name):

``conll2003``
    ``WORD POS CHUNK TAG``, single spaces, ``-DOCSTART- -X- -X- O`` lines followed by a blank
    line, IOB1 tags in the original release.
``conll2002``
    ``WORD POS TAG`` (Spanish, Dutch); the Dutch ``-DOCSTART- -DOCSTART- O`` line is *not*
    followed by a blank line. IOB2.
``columns``
    any other number of space-separated columns, the tag last (``word tag`` 2-column files,
    CoNLL-2000 chunking, WikiGold).
``tsv``
    tab-separated ``token<TAB>tag`` (WNUT-17, BTC). Lines holding only whitespace are sentence
    breaks, tokens may be empty or end in spaces: fields are split on TAB only.
``jsonl``
    one JSON object per line (see :mod:`nerstudio.corpus.jsonl` for what a record may hold).

Reading is streamed from a binary file, a block of whole lines at a time (never the whole file
in one string; decoded a block at once where the encoding allows, else line by line), so
:func:`iter_sentences` can walk files of any size; :func:`read_corpus` keeps everything. Both
detect the tag scheme from the tags of the *whole* file: streaming buffers the first sentences
and, for a longer file, scans the rest for its tags only, so the two always agree. Every problem
of the input is a :class:`~nerstudio.errors.FormatError` naming file and line; nothing else
escapes a reader. What a reader did not keep as it was is a note (:attr:`Reader.notes`,
:attr:`Corpus.notes`, one per kind, with its count and first line); the streamed and the whole
reading produce the same notes (JSONL records are placed in their document's text by the one
:class:`~nerstudio.corpus.jsonl.TextCursor` in both), and with ``strict`` any note is an error,
as is any loss of a conversion's output (nothing is written). Writing lives in
:mod:`nerstudio.corpus.writing`; :func:`~nerstudio.corpus.convert.convert_file` streams one file
into another.
"""

from __future__ import annotations

import codecs
import gc
import os
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass, field
from typing import BinaryIO, TypeVar

from ..errors import FormatError, Msg
from . import foreign
from .atomic import atomic_open  # noqa: F401 (re-exported: the place callers know it from)
from .detect import (  # noqa: F401
    DOCSTART,
    FORMAT_ALIASES,
    FORMATS,
    SUPPORTED,
    check_file,
    format_for_output,
    format_sep,
    is_docstart,
    normalize_format,
    refuse_non_text,
    sniff_format,
)
from .foreign._records import TALLY_TEXTS, Tally
from .journal import settle
from .jsonl import TextCursor, document_text, parse_record, trimmed_example
from .model import Corpus, Document, Sentence, StrPath
from .schemes import SchemeDetector, SchemeError, decode, normalize_scheme
from .writing import Losses, corpus_events, render_lines, write_corpus, write_lines  # noqa: F401

_TALLY_TEXTS = {
    **TALLY_TEXTS,
    "restart": '{n} record(s) whose "offset" goes back to the start of the record before it (or '
    "further) read as the start of a new document (files concatenated, or a line repeated?)",
}
_DETECT_SENTENCES = 5000  # sentences buffered while streaming before the rest is scanned for tags
_INTERN_MAX = 100_000  # distinct strings shared between tokens; bounded so that streaming is too
_BLOCK = 1 << 18  # bytes per read (1 << 20 held 40 MB of lines at once when streaming)
_T = TypeVar("_T")


def _block_safe(encoding: str) -> bool:
    """A newline byte is only ever a newline, and each line decodes on its own (no state
    carried from one line to the next): a block of lines decodes as its lines do one by one."""
    name = codecs.lookup(encoding).name
    return name in ("utf-8", "ascii", "latin-1") or name.startswith(("iso8859-", "cp125"))


@dataclass
class _Raw:
    """A sentence before its tags are decoded."""

    words: list
    extra: list
    tags: list
    line: int
    raw: str | None = None
    meta: dict | None = None


@dataclass
class Reader:
    """Streaming reader. Iterate :meth:`events` to get, in file order:

    * ``("line", text)`` for a line with no token (blank or whitespace-only separator, or a
      JSONL record without tokens),
    * ``("docstart", text)`` for a ``-DOCSTART-`` line (or a new ``doc_id`` in JSONL),
    * ``("sentence", Sentence)`` with spans decoded from the tags.

    File conventions (``newline``, ``bom``, ``final_newline``, ``ncols``, ``repairs``,
    ``scheme``) are filled in as the file is read; they are complete once iteration ends.
    """

    path: str
    format: str | None = None
    scheme: str | None = None
    encoding: str | None = None
    strict: bool = False
    on_invalid: str = "repair"  # "repair" (conlleval), "drop" (seqeval strict) or "raise"
    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True
    ncols: int | None = None
    repairs: int = 0
    mixed_newlines: bool = False
    n_lines: int = 0
    # what another tool's reader could not keep (Corpus.notes)
    notes: list = field(default_factory=list)
    # called with the bytes read so far (progress; may raise Cancelled)
    watch: Callable[[int], None] | None = None
    _intern: dict = field(default_factory=dict, repr=False)
    _sniffed: bool = field(default=False, repr=False)

    def __post_init__(self) -> None:
        self.path = os.fspath(self.path)
        settle(self.path)  # an interrupted save is finished (or refused), never read half done
        self.encoding = self.encoding or "utf-8"
        try:
            "".encode(self.encoding)
        except LookupError:
            raise FormatError(self.path, None, f"unknown encoding {self.encoding!r}") from None
        if self.format:
            self.format = normalize_format(self.format)
            check_file(self.path)
            self.foreign = foreign.handler(self.format)
            if self.foreign is None:
                with self._open() as f:
                    refuse_non_text(self.path, f.read(8))
        else:
            self.format = sniff_format(self.path, self.encoding)
            self._sniffed = True
            self.foreign = foreign.handler(self.format)
        if self.scheme:
            self.scheme = normalize_scheme(self.scheme)
        self.sep = format_sep(self.format)

    # the settings once known: format and encoding are set by __post_init__, the scheme before
    # events() yields anything (or by read_foreign); a reader's own code runs only after that
    @property
    def known_format(self) -> str:
        assert self.format is not None
        return self.format

    @property
    def known_encoding(self) -> str:
        assert self.encoding is not None
        return self.encoding

    @property
    def known_scheme(self) -> str:
        assert self.scheme is not None
        return self.scheme

    def read_foreign(self) -> Corpus:
        """The whole file, read by the handler of another tool's format (see
        :mod:`nerstudio.corpus.foreign`); the reader's conventions are set from it."""
        assert self.foreign is not None
        corpus: Corpus = self.foreign.load().read(self.path, self.encoding, self.scheme)
        self.scheme = self.scheme or corpus.scheme
        self.newline, self.bom = corpus.newline, corpus.bom
        self.final_newline = corpus.final_newline
        self.ncols, self.repairs = corpus.ncols, corpus.repairs
        self.notes = list(corpus.notes)
        if self.strict and corpus.repairs:
            _refuse_repairs(corpus, self.path)
        self._refuse_losses()
        return corpus

    def _refuse_losses(self) -> None:
        """With ``strict``, what reading did not keep as it was (a note) is an error."""
        if self.strict and self.notes:
            more = f" (and {len(self.notes) - 1} more note(s))" if len(self.notes) > 1 else ""
            raise FormatError(self.path, None, f"--strict: {self.notes[0]}{more}")

    def _foreign_events(self) -> Iterator[tuple[str, object]]:
        corpus = self.read_foreign()
        multi = len(corpus.documents) > 1
        for d in corpus.documents:
            if multi or d.docstart is not None:
                yield "docstart", d.docstart if d.docstart is not None else d.id
            for s in d.sentences:
                yield "sentence", s

    def _open(self) -> BinaryIO:
        try:
            return open(self.path, "rb")
        except OSError as exc:
            raise FormatError(
                self.path, None, Msg.CANNOT_READ.format(why=exc.strerror or exc)
            ) from None

    # -- lines ---------------------------------------------------------------------------

    def _lines(self) -> Iterator[tuple[int, str]]:
        """Decoded lines without their line ending, with 1-based numbers (the file is checked
        now, the lines read as they are asked for)."""
        check_file(self.path)
        self.n_lines = 0
        self.final_newline = True
        return self._block_lines() if _block_safe(self.known_encoding) else self._each_line()

    def _each_line(
        self, data: Iterable[bytes] | None = None, first_line: int = 1
    ) -> Iterator[tuple[int, str]]:
        """Line by line: each line is read and decoded on its own (any encoding). ``data``: the
        lines of a block already read (from line ``first_line``) instead of the file."""
        enc = self.known_encoding
        first = first_line == 1
        f = self._open() if data is None else None
        with f if f is not None else nullcontext():
            for lineno, b in enumerate(f if f is not None else data or (), first_line):
                if first:
                    first = False
                    if b.startswith(b"\xef\xbb\xbf") and codecs.lookup(enc).name in (
                        "utf-8",
                        "utf-8-sig",
                    ):
                        self.bom = True
                        b = b[3:]
                    self.newline = "\r\n" if b.endswith(b"\r\n") else "\n"
                if b.endswith(b"\n"):
                    ending = "\r\n" if b.endswith(b"\r\n") else "\n"
                    b = b[: -len(ending)]
                    if ending != self.newline:
                        self.mixed_newlines = True
                else:
                    self.final_newline = False
                try:
                    text = b.decode(enc)
                except UnicodeDecodeError as exc:
                    raise FormatError(
                        self.path,
                        lineno,
                        f"not valid {enc} (byte 0x{b[exc.start]:02x} at column {exc.start + 1}); "
                        f"pass --encoding with the file's encoding (e.g. --encoding latin-1)",
                    ) from None
                self.n_lines = lineno
                if self.watch is not None and f is not None and not lineno & 0xFFF:
                    self.watch(f.tell())
                yield lineno, text

    def _block_lines(self) -> Iterator[tuple[int, str]]:
        """The lines of :meth:`_each_line`, read a block of whole lines at a time and decoded
        at once: for encodings where a newline byte is only ever a newline and each line
        decodes on its own (UTF-8, ASCII, the single-byte code pages), the same lines, several
        times faster. The first line, a last line without a newline and a block that does not
        decode go through :meth:`_each_line` (the same conventions, the same error at the same
        line, after the same lines before it)."""
        lineno = 0
        tail = b""
        offset = 0  # bytes of the file before the block
        with self._open() as f:
            while True:
                data = f.read(_BLOCK)
                if not data:
                    if tail:  # the last line, without a newline
                        yield from self._each_line([tail], lineno + 1)
                    return
                block = tail + data
                cut = block.rfind(b"\n") + 1
                block, tail = block[:cut], block[cut:]
                if not block:  # a line longer than a block
                    continue
                if lineno == 0:
                    first = block.find(b"\n") + 1
                    yield from self._each_line([block[:first]], 1)
                    lineno, offset, block = 1, first, block[first:]
                try:
                    text = block.decode(self.known_encoding)
                except UnicodeDecodeError:
                    rows = [x + b"\n" for x in block.split(b"\n")[:-1]]
                    yield from self._each_line(rows, lineno + 1)
                    lineno, offset = lineno + len(rows), offset + len(block)
                    continue
                lines = text.split("\n")
                lines.pop()  # after the block's last newline
                crlf = text.count("\r\n")  # "\n" only ends lines: the lines ending in CR LF
                if crlf:
                    lines = [x[:-1] if x.endswith("\r") else x for x in lines]
                if crlf != (len(lines) if self.newline == "\r\n" else 0):
                    self.mixed_newlines = True
                for k in range(0, len(lines), 0x1000):
                    part = lines[k : k + 0x1000]
                    self.n_lines = lineno + len(part)
                    yield from zip(range(lineno + 1, self.n_lines + 1), part)
                    lineno = self.n_lines
                    if self.watch is not None:
                        self.watch(offset + len(block) * (k + len(part)) // len(lines))
                offset += len(block)

    # -- raw records ---------------------------------------------------------------------

    def _raw_events(self) -> Iterator[tuple[str, object]]:
        if self.format == "jsonl":
            yield from self._raw_jsonl()
        else:
            yield from self._raw_columns()

    def _unrecognised(self, message: str) -> str:
        """``message``, marked as a failure to recognise the file when its format was guessed."""
        return f"unrecognised format: {message}; {SUPPORTED}" if self._sniffed else message

    def _raw_columns(self) -> Iterator[tuple[str, object]]:
        sep = self.sep
        ncols = self.ncols
        words: list = []
        start = 0
        for lineno, text in self._lines():
            if not text or text.isspace():  # blank (not text.strip(), without the copy)
                if words:
                    yield "sentence", self._make_raw(words, start)
                    words = []
                yield "line", text
                continue
            fields = text.split(sep)
            if "" in fields:
                if fields[-1] == "" and len(fields) > 1:
                    raise FormatError(
                        self.path,
                        lineno,
                        "the line ends with a column separator "
                        "(a trailing space or tab?): the tag column is empty",
                    )
                if sep == " ":  # only TSV may have empty tokens
                    raise FormatError(
                        self.path,
                        lineno,
                        "an empty column (a leading space, or two spaces in a row); "
                        "if the file is tab-separated, try --from tsv",
                    )
            if is_docstart(fields[0]):
                if words:
                    yield "sentence", self._make_raw(words, start)
                    words = []
                yield "docstart", text
                continue
            n = len(fields)
            if ncols is None:
                if n < 2:
                    hint = (
                        " (is it tab-separated? try --from tsv)"
                        if sep == " " and "\t" in text
                        else ""
                    )
                    raise FormatError(
                        self.path,
                        lineno,
                        self._unrecognised(
                            f"a token line needs at least 2 columns (token and tag), found 1{hint}"
                        ),
                    )
                ncols = self.ncols = n
            elif n != ncols:
                raise FormatError(
                    self.path,
                    lineno,
                    f"ragged columns: expected {ncols} columns as on earlier lines, found {n}",
                )
            if not words:
                start = lineno
            words.append(fields)
        if words:
            yield "sentence", self._make_raw(words, start)

    def _make_raw(self, rows: list, start: int) -> _Raw:
        # rows are lists of fields; split them column-major, equal strings shared (interned)
        intern = self._intern
        share = intern.setdefault if len(intern) < _INTERN_MAX else intern.get
        columns = [list(map(share, c, c)) for c in zip(*rows)]
        return _Raw(columns[0], [tuple(c) for c in columns[1:-1]], columns[-1], start)

    def _raw_jsonl(self) -> Iterator[tuple[str, object]]:
        intern = self._intern
        last_doc = None
        for lineno, text in self._lines():
            if not text.strip():
                yield "line", text
                continue
            rec = parse_record(text, self.path, lineno)
            if rec.trimmed:
                self._tally.add(
                    "trimmed", lineno, trimmed_example(rec.text, rec.trimmed[0]), len(rec.trimmed)
                )
            if rec.doc_id is not None and rec.doc_id != last_doc:
                yield "docstart", rec.doc_id
                last_doc = rec.doc_id
            if not rec.words:  # an empty record: no sentence, but kept in the file's layout
                yield "line", text
                continue
            words = [
                intern.setdefault(w, w) if len(intern) < _INTERN_MAX else intern.get(w, w)
                for w in rec.words
            ]
            yield (
                "sentence",
                _Raw(
                    words,
                    list(rec.columns),
                    [],
                    lineno,
                    raw=text,
                    meta={"spans": rec.spans, "record": rec},
                ),
            )

    # -- decoding ------------------------------------------------------------------------

    def _decode(self, r: _Raw) -> Sentence:
        if r.raw is not None and r.meta is not None and "spans" in r.meta:  # JSONL: spans given
            rec = r.meta["record"]
            where = {
                k: v
                for k, v in (("offset", rec.offset), ("before", rec.before), ("after", rec.after))
                if v is not None
            }
            # a record's own spacing is kept as its source text; tokens joined by single spaces
            # need none (Sentence.char_offsets derives them), which keeps large corpora small
            plain = not where and rec.text == " ".join(rec.words)
            return Sentence(
                r.words,
                rec.spans,
                extra=r.extra,
                line=r.line,
                raw=r.raw,
                meta=where or None,
                source=None if plain else rec.text,
                offsets=None if plain else rec.offsets,
            )
        try:
            spans, fixed = decode(
                r.tags, self.known_scheme, on_invalid="raise" if self.strict else self.on_invalid
            )
        except SchemeError as exc:
            message = exc.message
            if r.line + exc.index == self._first_token_line and message.startswith("unknown tag"):
                message = self._unrecognised(message)
            raise FormatError(self.path, r.line + exc.index, message) from None
        self.repairs += fixed
        s = Sentence.__new__(Sentence)
        s.words, s.extra, s.tags, s.spans = tuple(r.words), tuple(r.extra), tuple(r.tags), spans
        s.line, s.raw, s.meta, s.source, s.offsets = r.line, None, None, None, None
        return s

    def _scan_tags(self, detector: SchemeDetector, skip: int) -> None:
        """Feed ``detector`` the tags of every sentence after the first ``skip`` (a second,
        independent pass over the file that keeps nothing)."""
        other = Reader(self.path, self.format, "iob2", self.encoding)
        sep = self.sep
        tags: list[str] = []
        for _, text in other._lines():  # sentences split as in _raw_columns, tags only
            if not text.strip() or is_docstart(text.split(sep, 1)[0]):
                if tags:
                    if skip:
                        skip -= 1
                    else:
                        detector.add(tags)
                    tags = []
                continue
            tags.append(text[text.rfind(sep) + 1 :])
        if tags and not skip:
            detector.add(tags)

    def events(self, detect_all: bool = False) -> Iterator[tuple[str, object]]:
        """Yield events; the scheme is detected from the tags of the whole file unless forced.

        ``detect_all`` buffers the whole file before detecting (what :func:`read_corpus` does);
        otherwise the first sentences are buffered and the rest of the file is scanned for its
        tags only, so the scheme is the same either way.
        """
        if self.foreign is not None:
            yield from self._foreign_events()
            return
        self.repairs = 0
        self.notes = []
        self._tally = Tally(self.path)
        self._first_token_line = None
        raw = self._raw_events()
        if self.scheme is None and self.format != "jsonl":
            buffer: list[tuple[str, object]] = []
            detector = SchemeDetector()
            n_sent = 0
            complete = True
            for ev in raw:
                buffer.append(ev)
                if isinstance(ev[1], _Raw):  # a sentence
                    n_sent += 1
                    detector.add(ev[1].tags)
                    if not detect_all and n_sent >= _DETECT_SENTENCES:
                        complete = False
                        break
            if not complete:
                self._scan_tags(detector, n_sent)
            self.scheme = detector.result()
            source: Iterable[tuple[str, object]] = _chain(buffer, raw)
        else:
            if self.scheme is None:
                self.scheme = "iob2"
            source = raw
        n = 0
        cursor = TextCursor(self.path) if self.format == "jsonl" else None
        for kind, obj in source:
            if isinstance(obj, _Raw):  # a sentence
                if n == 0:
                    self._first_token_line = obj.line
                n += 1
                s = self._decode(obj)
                if cursor is not None:  # each record placed in its document's text (as read_corpus)
                    if cursor.goes_back(s):  # so s.meta holds an "offset"
                        offset = (s.meta or {})["offset"]
                        where = f'"offset" {offset} after text ending at {cursor.pos}'
                        self._tally.add("restart", s.line, where)
                        cursor.reset()
                        yield "docstart", None
                    cursor.place(s)
                yield kind, s
            else:
                if kind == "docstart" and cursor is not None:
                    cursor.reset()
                yield kind, obj
        self.notes.extend(self._tally.notes(_TALLY_TEXTS))
        self._refuse_losses()
        if n == 0:
            empty = self.n_lines == 0
            what = (
                "the file is empty" if empty else "no token lines (only -DOCSTART- or blank lines)"
            )
            raise FormatError(self.path, None if empty else 1, f"no sentences: {what}")

    def sentences(self) -> Iterator[Sentence]:
        for kind, obj in self.events():
            if kind == "sentence":
                yield obj  # type: ignore[misc]


def _refuse_repairs(corpus: Corpus, path: str) -> None:
    """With ``strict``, an invalid tag transition that a foreign reader repaired (the conlleval
    way) is an error at its token, as it is for column files."""
    for s in corpus.sentences:
        if s.tags is None:
            continue
        try:
            decode(s.tags, corpus.scheme, on_invalid="raise")
        except SchemeError as exc:
            rows = (s.meta or {}).get("rows")  # CoNLL-U: the lines of the words in the block
            line = s.line + rows[exc.index] - rows[0] if s.line and rows else s.line or None
            raise FormatError(
                path, line, f"--strict: token {exc.index + 1}: {exc.message}"
            ) from None
    raise FormatError(path, None, f"--strict: {corpus.repairs} invalid tag transition(s) repaired")


def _chain(buffer: list[_T], rest: Iterator[_T]) -> Iterator[_T]:
    yield from buffer
    buffer.clear()
    yield from rest


def iter_sentences(
    path: StrPath,
    format: str | None = None,
    scheme: str | None = None,
    encoding: str | None = None,
    strict: bool = False,
    on_invalid: str = "repair",
) -> Iterator[Sentence]:
    """Stream the sentences of a file without keeping them (for large files)."""
    return Reader(os.fspath(path), format, scheme, encoding, strict, on_invalid).sentences()


def read_corpus(
    path: StrPath,
    format: str | None = None,
    scheme: str | None = None,
    encoding: str | None = None,
    strict: bool = False,
    watch: Callable[[int], None] | None = None,
) -> Corpus:
    """Read a corpus file. Raises :class:`~nerstudio.errors.FormatError` naming file and line.
    ``watch(bytes_read)`` is called every few thousand lines (progress; it may raise to stop).

    The cyclic garbage collector is paused while the file is read: reading makes millions of
    objects that all stay (and no cycles), and each collection would walk all of them again —
    40 % of the time of a 1M-token file."""
    with _collector_paused():
        return _read_corpus(Reader(os.fspath(path), format, scheme, encoding, strict, watch=watch))


@contextmanager
def _collector_paused() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()


def _read_corpus(reader: Reader) -> Corpus:
    if reader.foreign is not None:
        return reader.read_foreign()
    docs: list[Document] = [Document()]
    layout: list = []
    n = 0
    for kind, obj in reader.events(detect_all=True):
        if kind == "sentence":
            docs[-1].sentences.append(obj)  # type: ignore[arg-type]
            layout.append(n)
            n += 1
        elif kind == "docstart":
            docs.append(Document(docstart=obj))  # type: ignore[arg-type]
            layout.append(obj if reader.format != "jsonl" else None)
        else:
            layout.append(obj)
    if reader.format == "jsonl":
        layout = [x for x in layout if x is not None]
        for d in docs:  # the records' texts, placed in their document's text (jsonl.document_text)
            d.text = document_text(d.sentences, reader.path)
    docs = [d for d in docs if d.sentences]
    for k, d in enumerate(docs):
        d.id = str(k + 1) if reader.format != "jsonl" or d.docstart is None else d.docstart
    return Corpus(
        docs,
        path=reader.path,
        format=reader.known_format,
        scheme=reader.known_scheme,
        encoding=reader.known_encoding,
        newline=reader.newline,
        bom=reader.bom,
        final_newline=reader.final_newline,
        sep=reader.sep,
        ncols=reader.ncols,
        layout=None if reader.mixed_newlines else layout,
        repairs=reader.repairs,
        notes=list(reader.notes),
    )
