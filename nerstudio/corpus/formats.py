"""Readers and writers for CoNLL-style column files and JSONL.

Formats (detected from the file, or forced by name):

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
    one JSON object per line: ``{"text": ..., "spans": [{"start", "end", "label"}, ...]}`` with
    character offsets (``[start, end, label]`` triples, and the keys ``entities`` or ``label``,
    are accepted too); optional ``tokens`` (list of strings) fixes the tokenisation, optional
    ``doc_id`` groups lines into documents.

Reading is streamed line by line from a binary file (never the whole file in one string), so
:func:`iter_sentences` can walk files of any size; :func:`read_corpus` keeps everything. Writing
goes to a temporary file that replaces the target only when complete (atomic). A corpus written
back in its own format and scheme is byte-identical to the file it was read from.
"""

from __future__ import annotations

import codecs
import contextlib
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from typing import IO, Callable, Iterable, Iterator

from ..errors import FormatError
from .model import Corpus, Document, Sentence, Span
from .schemes import SchemeError, decode, detect_scheme, encode, normalize_scheme

FORMATS = ("conll2003", "conll2002", "columns", "tsv", "jsonl")
FORMAT_ALIASES = {"conll": "conll2003", "conll03": "conll2003", "conll02": "conll2002",
                  "tab": "tsv", "wnut": "tsv", "json": "jsonl", "2col": "columns", "plain": "columns"}
DOCSTART = "-DOCSTART-"
_SNIFF_BYTES = 1 << 16
_DETECT_SENTENCES = 5000  # sentences buffered to detect the scheme while streaming
_INTERN_MAX = 100_000  # distinct strings shared between tokens; bounded so that streaming is too


def normalize_format(name: str) -> str:
    key = name.strip().lower()
    key = FORMAT_ALIASES.get(key, key)
    if key not in FORMATS:
        raise ValueError(f"unknown format {name!r} (choose from {', '.join(FORMATS)})")
    return key


# --------------------------------------------------------------------------------------------
# Sniffing


def _check_file(path: str) -> None:
    if not os.path.exists(path):
        raise FormatError(path, None, "no such file")
    if os.path.isdir(path):
        raise FormatError(path, None, "is a folder, not a corpus file")


def sniff_format(path: str, encoding: str = "utf-8") -> str:
    """Guess the format from the first 64 KiB of the file."""
    _check_file(path)
    with open(path, "rb") as f:
        head = f.read(_SNIFF_BYTES)
    text = head.decode(encoding, errors="replace").lstrip("\ufeff")
    lines = text.splitlines()
    if len(head) == _SNIFF_BYTES and lines:
        lines = lines[:-1]  # possibly cut in the middle
    for line in lines:
        if not line.strip():
            continue
        if line.lstrip().startswith("{"):
            return "jsonl"
        if line.startswith(DOCSTART):
            continue
        if "\t" in line:
            return "tsv"
        n = len(line.split(" "))
        return {4: "conll2003", 3: "conll2002"}.get(n, "columns")
    for line in lines:  # only -DOCSTART- lines (or nothing)
        if "\t" in line:
            return "tsv"
    return "conll2003"


def format_sep(fmt: str) -> str:
    return "\t" if fmt == "tsv" else " "


# --------------------------------------------------------------------------------------------
# Reading


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

    * ``("line", text)`` for a line with no token (blank or whitespace-only separator),
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
    watch: Callable[[int], None] | None = None  # called with the bytes read so far (progress; may raise Cancelled)
    _intern: dict = field(default_factory=dict, repr=False)

    def __post_init__(self):
        self.path = os.fspath(self.path)
        self.encoding = (self.encoding or "utf-8")
        try:
            "".encode(self.encoding)
        except LookupError:
            raise FormatError(self.path, None, f"unknown encoding {self.encoding!r}") from None
        self.format = normalize_format(self.format) if self.format else sniff_format(self.path, self.encoding)
        if self.scheme:
            self.scheme = normalize_scheme(self.scheme)
        self.sep = format_sep(self.format)

    # -- lines ---------------------------------------------------------------------------

    def _lines(self) -> Iterator[tuple[int, str]]:
        """Decoded lines without their line ending, with 1-based numbers."""
        _check_file(self.path)
        enc = self.encoding
        first = True
        self.n_lines = 0
        self.final_newline = True
        with open(self.path, "rb") as f:
            for lineno, b in enumerate(f, 1):
                if first:
                    first = False
                    if b.startswith(b"\xef\xbb\xbf") and codecs.lookup(enc).name in ("utf-8", "utf-8-sig"):
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
                        self.path, lineno,
                        f"not valid {enc} (byte 0x{b[exc.start]:02x} at column {exc.start + 1}); "
                        f"pass --encoding with the file's encoding (e.g. --encoding latin-1)") from None
                self.n_lines = lineno
                if self.watch is not None and not lineno & 0xFFF:
                    self.watch(f.tell())
                yield lineno, text

    # -- raw records ---------------------------------------------------------------------

    def _raw_events(self) -> Iterator[tuple[str, object]]:
        if self.format == "jsonl":
            yield from self._raw_jsonl()
        else:
            yield from self._raw_columns()

    def _raw_columns(self) -> Iterator[tuple[str, object]]:
        sep, intern = self.sep, self._intern
        ncols = self.ncols
        words: list = []
        start = 0
        for lineno, text in self._lines():
            if not text.strip():
                if words:
                    yield "sentence", self._make_raw(words, start)
                    words = []
                yield "line", text
                continue
            fields = text.split(sep)
            if fields[-1] == "" and len(fields) > 1:
                raise FormatError(self.path, lineno, "the line ends with a column separator "
                                                     "(a trailing space or tab?): the tag column is empty")
            if fields[0] == DOCSTART:
                if words:
                    yield "sentence", self._make_raw(words, start)
                    words = []
                yield "docstart", text
                continue
            n = len(fields)
            if ncols is None:
                if n < 2:
                    hint = " (is it tab-separated? try --from tsv)" if sep == " " else ""
                    raise FormatError(self.path, lineno,
                                      f"a token line needs at least 2 columns (token and tag), found 1{hint}")
                ncols = self.ncols = n
            elif n != ncols:
                raise FormatError(self.path, lineno,
                                  f"ragged columns: expected {ncols} columns as on earlier lines, found {n}")
            if not words:
                start = lineno
            if len(intern) < _INTERN_MAX:
                words.append(tuple(intern.setdefault(x, x) for x in fields))
            else:
                words.append(tuple(intern.get(x, x) for x in fields))
        if words:
            yield "sentence", self._make_raw(words, start)

    def _make_raw(self, rows: list, start: int) -> _Raw:
        # rows are tuples of fields; split them column-major
        columns = list(zip(*rows))
        return _Raw(list(columns[0]), [tuple(c) for c in columns[1:-1]], list(columns[-1]), start)

    def _raw_jsonl(self) -> Iterator[tuple[str, object]]:
        intern = self._intern
        last_doc = None
        for lineno, text in self._lines():
            if not text.strip():
                yield "line", text
                continue
            try:
                obj = json.loads(text)
            except json.JSONDecodeError as exc:
                raise FormatError(self.path, lineno, f"invalid JSON: {exc.msg} (column {exc.colno})") from None
            if not isinstance(obj, dict):
                raise FormatError(self.path, lineno, "each line must be a JSON object with a \"text\" field")
            doc = obj.get("doc_id")
            if doc is not None and doc != last_doc:
                yield "docstart", str(doc)
                last_doc = doc
            words, _offsets, spans, _key = _jsonl_parse(obj, self.path, lineno)
            words = [intern.setdefault(w, w) if len(intern) < _INTERN_MAX else intern.get(w, w) for w in words]
            yield "sentence", _Raw(words, [], [], lineno, raw=text, meta={"spans": spans})

    # -- decoding ------------------------------------------------------------------------

    def _decode(self, r: _Raw) -> Sentence:
        if r.raw is not None and r.meta is not None and "spans" in r.meta:  # JSONL: spans given
            return Sentence(r.words, r.meta["spans"], line=r.line, raw=r.raw)
        try:
            spans, fixed = decode(r.tags, self.scheme, on_invalid="raise" if self.strict else self.on_invalid)
        except SchemeError as exc:
            raise FormatError(self.path, r.line + exc.index, exc.message) from None
        self.repairs += fixed
        s = Sentence.__new__(Sentence)
        s.words, s.extra, s.tags, s.spans = tuple(r.words), tuple(r.extra), tuple(r.tags), spans
        s.line, s.raw, s.meta = r.line, None, None
        return s

    def events(self, detect_all: bool = False) -> Iterator[tuple[str, object]]:
        """Yield events; the scheme is detected from the first sentences unless it was forced.

        ``detect_all`` buffers the whole file before detecting (what :func:`read_corpus` does).
        """
        self.repairs = 0
        raw = self._raw_events()
        if self.scheme is None and self.format != "jsonl":
            buffer = []
            n_sent = 0
            for ev in raw:
                buffer.append(ev)
                if ev[0] == "sentence":
                    n_sent += 1
                    if not detect_all and n_sent >= _DETECT_SENTENCES:
                        break
            self.scheme = detect_scheme(r.tags for kind, r in buffer if kind == "sentence")
            source: Iterable = _chain(buffer, raw)
        else:
            if self.scheme is None:
                self.scheme = "iob2"
            source = raw
        n = 0
        for kind, obj in source:
            if kind == "sentence":
                n += 1
                yield kind, self._decode(obj)
            else:
                yield kind, obj
        if n == 0:
            what = "the file is empty" if self.n_lines == 0 else "no token lines (only -DOCSTART- or blank lines)"
            raise FormatError(self.path, None if self.n_lines == 0 else 1, f"no sentences: {what}")

    def sentences(self) -> Iterator[Sentence]:
        for kind, obj in self.events():
            if kind == "sentence":
                yield obj  # type: ignore[misc]


def _chain(buffer: list, rest: Iterator) -> Iterator:
    yield from buffer
    buffer.clear()
    yield from rest


_TOKEN_RE = re.compile(r"\w+(?:[-'’.]\w+)*\.?|[^\w\s]", re.UNICODE)


def _jsonl_parse(obj: dict, path: str, lineno: int):
    """Tokens, their character offsets, token-index spans and the spans' key of a JSONL record."""
    text = obj.get("text")
    tokens = obj.get("tokens")
    if text is None and tokens is None:
        raise FormatError(path, lineno, 'a JSONL record needs a "text" field (or "tokens")')
    if text is not None and not isinstance(text, str):
        raise FormatError(path, lineno, '"text" must be a string')
    raw_spans = span_key = None
    for key in ("spans", "entities", "label"):
        if key in obj:
            raw_spans, span_key = obj[key], key
            break
    raw_spans = raw_spans or []
    char_spans: list[tuple[int, int, str]] = []
    for sp in raw_spans:
        try:
            if isinstance(sp, dict):
                s, e, lab = sp["start"], sp["end"], sp["label"]
            else:
                s, e, lab = sp
            s, e = int(s), int(e)
        except (KeyError, TypeError, ValueError):
            raise FormatError(path, lineno, f"cannot read span {sp!r}: use {{\"start\", \"end\", \"label\"}} "
                                            "or [start, end, label]") from None
        char_spans.append((s, e, str(lab)))
    if tokens is not None:
        if not isinstance(tokens, list) or not all(isinstance(t, str) for t in tokens):
            raise FormatError(path, lineno, '"tokens" must be a list of strings')
        if text is None:
            text = " ".join(tokens)
        offsets = []
        pos = 0
        for t in tokens:
            k = text.find(t, pos)
            if k < 0:
                raise FormatError(path, lineno, f"token {t!r} not found in the text after offset {pos}")
            offsets.append((k, k + len(t)))
            pos = k + len(t)
        words = list(tokens)
    else:
        cuts = {c for s, e, _ in char_spans for c in (s, e)}
        offsets = []
        for m in _TOKEN_RE.finditer(text):
            a, b = m.span()
            inner = sorted(c for c in cuts if a < c < b)
            for c in inner + [b]:
                offsets.append((a, c))
                a = c
        words = [text[a:b] for a, b in offsets]
    # an empty token shares its offset with a neighbour: the non-empty token owns the boundary
    order = sorted(range(len(offsets)), key=lambda i: offsets[i][0] < offsets[i][1])
    starts = {offsets[i][0]: i for i in order}
    ends = {offsets[i][1]: i for i in order}
    spans = []
    for s, e, lab in char_spans:
        if not (0 <= s < e <= len(text)):
            raise FormatError(path, lineno, f"span [{s}, {e}) is outside the text of {len(text)} characters")
        # tolerate spans that include surrounding whitespace (unless it is part of a token)
        if s not in starts:
            while s < e and text[s].isspace():
                s += 1
        if e not in ends:
            while e > s and text[e - 1].isspace():
                e -= 1
        if s not in starts or e not in ends:
            raise FormatError(path, lineno, f"span [{s}, {e}) {text[s:e]!r} does not fall on token boundaries")
        spans.append(Span(starts[s], ends[e] + 1, lab))
    spans.sort()
    for a, b in zip(spans, spans[1:]):
        if b.start < a.end:
            raise FormatError(path, lineno, f"overlapping spans {a} and {b} (nested entities are not supported)")
    return words, offsets, spans, span_key


def iter_sentences(path, format: str | None = None, scheme: str | None = None, encoding: str | None = None,
                   strict: bool = False, on_invalid: str = "repair") -> Iterator[Sentence]:
    """Stream the sentences of a file without keeping them (for large files)."""
    return Reader(path, format, scheme, encoding, strict, on_invalid).sentences()


def read_corpus(path, format: str | None = None, scheme: str | None = None, encoding: str | None = None,
                strict: bool = False, watch: Callable[[int], None] | None = None) -> Corpus:
    """Read a corpus file. Raises :class:`~nerstudio.errors.FormatError` naming file and line.
    ``watch(bytes_read)`` is called every few thousand lines (progress; it may raise to stop)."""
    reader = Reader(path, format, scheme, encoding, strict, watch=watch)
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
    docs = [d for d in docs if d.sentences]
    for k, d in enumerate(docs):
        d.id = str(k + 1) if reader.format != "jsonl" or d.docstart is None else d.docstart
    return Corpus(docs, path=reader.path, format=reader.format, scheme=reader.scheme, encoding=reader.encoding,
                  newline=reader.newline, bom=reader.bom, final_newline=reader.final_newline, sep=reader.sep,
                  ncols=reader.ncols, layout=None if reader.mixed_newlines else layout, repairs=reader.repairs)


# --------------------------------------------------------------------------------------------
# Writing


@contextlib.contextmanager
def atomic_open(path, encoding: str = "utf-8", newline: str = "\n", mode: str = "w") -> Iterator[IO]:
    """Open a temporary file next to ``path``; it replaces ``path`` only if the block succeeds."""
    path = os.fspath(path)
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise FormatError(path, None, f"cannot write: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".", suffix=".tmp", dir=folder)
    try:
        if "b" in mode:
            f = os.fdopen(fd, mode)
        else:
            f = os.fdopen(fd, mode, encoding=encoding, newline="")
        with f:
            yield f
            f.flush()
            os.fsync(f.fileno())
        with contextlib.suppress(OSError):
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _sentence_tags(s: Sentence, scheme: str, src_scheme: str | None) -> list[str] | tuple[str, ...]:
    """The tags to write: the original ones when the spans they encode are unchanged."""
    if s.tags is not None and scheme == src_scheme and len(s.tags) == len(s.words):
        try:
            if decode(s.tags, scheme)[0] == s.spans:
                return s.tags
        except SchemeError:
            pass
    return encode(s.spans, len(s.words), scheme)


def _docstart_line(fmt: str, ncols: int) -> str:
    if fmt == "conll2002":
        return "-DOCSTART- -DOCSTART- O"
    sep = format_sep(fmt)
    return sep.join([DOCSTART] + ["-X-"] * max(0, ncols - 2) + ["O"])


def _target_ncols(fmt: str, src_ncols: int | None, n_extra: int) -> int:
    if fmt == "conll2003":
        return 4
    if fmt == "conll2002":
        return 3
    return src_ncols if src_ncols else n_extra + 2


def _check_writable(s: Sentence, sep: str, fmt: str, src_path) -> None:
    """A token holding the column separator (or empty, in a space-separated file) cannot be written."""
    for i, w in enumerate(s.words):
        if sep in w or "\n" in w or (sep == " " and not w):
            what = "is empty" if not w else f"{w!r} contains {'a space' if sep == ' ' else 'a tab or newline'}"
            raise FormatError(src_path, (s.line + i) if s.line else None,
                              f"token {i + 1} {what}: it cannot be written as {fmt}; use --to tsv or --to jsonl")


def _token_lines(s: Sentence, tags, sep: str, ncols: int) -> Iterator[str]:
    want = ncols - 2
    extra = s.extra
    if len(extra) != want:
        extra = (tuple(extra) + tuple(("-X-",) * len(s) for _ in range(want - len(extra))))[:want]
    if extra:
        for row in zip(s.words, *extra, tags):
            yield sep.join(row)
    else:
        for w, t in zip(s.words, tags):
            yield w + sep + t


def _jsonl_record(s: Sentence, doc_id: str | None) -> str:
    if s.raw is not None:
        try:
            obj = json.loads(s.raw)
            words, offsets, spans, key = _jsonl_parse(obj, "", 0)
        except Exception:  # noqa: BLE001 - not a record we can update: write a fresh one
            obj = None
        if obj is not None and list(words) == list(s.words):
            if spans == s.spans:
                return s.raw
            obj[key or "spans"] = [{"start": offsets[sp.start][0], "end": offsets[sp.end - 1][1],
                                    "label": sp.label} for sp in s.spans]
            if "tokens" not in obj and _jsonl_parse(obj, "", 0)[0] != list(s.words):
                obj["tokens"] = list(s.words)  # old span boundaries split words: keep the tokens as they were
            return json.dumps(obj, ensure_ascii=False)
    offsets, pos = [], 0
    for w in s.words:
        offsets.append((pos, pos + len(w)))
        pos += len(w) + 1
    obj = {}
    if doc_id is not None:
        obj["doc_id"] = doc_id
    obj["text"] = " ".join(s.words)
    obj["tokens"] = list(s.words)
    obj["spans"] = [{"start": offsets[sp.start][0], "end": offsets[sp.end - 1][1], "label": sp.label}
                    for sp in s.spans]
    if s.extra:
        obj["columns"] = [list(c) for c in s.extra]
    return json.dumps(obj, ensure_ascii=False)


def render_lines(corpus_like, fmt: str, scheme: str, events: Iterable[tuple[str, object]],
                 lossless: bool) -> Iterator[str]:
    """Lines (without endings) of the output file for a stream of reader-style events."""
    src_scheme = corpus_like.scheme
    if fmt == "jsonl":
        doc_id = None
        n_doc = 0
        for kind, obj in events:
            if kind == "docstart":
                n_doc += 1
                doc_id = str(obj) if corpus_like.format == "jsonl" else str(n_doc)
            elif kind == "sentence":
                yield _jsonl_record(obj, doc_id)  # type: ignore[arg-type]
            elif lossless:
                yield obj  # type: ignore[misc]
        return
    sep = format_sep(fmt)
    src_ncols = corpus_like.ncols if corpus_like.format == fmt else None  # column count to keep, if any
    ncols = None
    for kind, obj in events:
        if kind == "sentence":
            s: Sentence = obj  # type: ignore[assignment]
            if ncols is None:
                ncols = corpus_like.ncols if lossless else _target_ncols(fmt, src_ncols, len(s.extra))
            if not lossless:
                _check_writable(s, sep, fmt, corpus_like.path)
            yield from _token_lines(s, _sentence_tags(s, scheme, src_scheme), sep, ncols)
            if not lossless:
                yield ""
        elif lossless:
            yield obj  # type: ignore[misc]
        elif kind == "docstart":
            n = ncols or _target_ncols(fmt, src_ncols, max(0, (corpus_like.ncols or 2) - 2))
            yield _docstart_line(fmt, n)
            if fmt != "conll2002":
                yield ""


def corpus_events(corpus: Corpus, lossless: bool) -> Iterator[tuple[str, object]]:
    if lossless and corpus.layout is not None:
        sents = corpus.sentences
        for item in corpus.layout:
            if isinstance(item, int):
                yield "sentence", sents[item]
            elif corpus.format != "jsonl" and item.split(corpus.sep, 1)[0] == DOCSTART:
                yield "docstart", item
            else:
                yield "line", item
        return
    multi = len(corpus.documents) > 1
    for d in corpus.documents:
        if d.docstart is not None or multi:
            yield "docstart", (d.docstart if corpus.format == "jsonl" and d.docstart else d.id)
        for s in d.sentences:
            yield "sentence", s


def write_lines(path, lines: Iterable[str], encoding: str = "utf-8", newline: str = "\n", bom: bool = False,
                final_newline=True) -> None:
    """Atomically write lines; ``final_newline`` may be a callable read after the last line."""
    if codecs.lookup(encoding).name == "utf-8-sig":
        encoding = "utf-8"  # ``bom`` alone decides whether the file starts with one
    with atomic_open(path, encoding=encoding) as f:
        prev = None
        n = 0  # number of the line held in prev
        try:
            if bom:
                f.write("\ufeff")
            for line in lines:
                if prev is not None:
                    f.write(prev + newline)
                prev = line
                n += 1
            if prev is not None:
                last = final_newline() if callable(final_newline) else final_newline
                f.write(prev + (newline if last else ""))
        except UnicodeEncodeError as exc:
            raise FormatError(path, n or None,
                              f"cannot encode {exc.object[exc.start:exc.end]!r} as {encoding}") from None


def _sig(encoding: str) -> bool:
    """Whether a file newly written in ``encoding`` starts with a BOM (only for utf-8-sig)."""
    return codecs.lookup(encoding).name == "utf-8-sig"


def write_corpus(corpus: Corpus, path, format: str | None = None, scheme: str | None = None,
                 encoding: str | None = None) -> None:
    """Write ``corpus`` atomically. Same format and scheme as read gives back the original bytes.

    In its own format the file's layout (``-DOCSTART-`` and separator lines, line endings, BOM,
    final newline) is kept, and sentences whose spans did not change keep their original tags.
    In another format the canonical layout of that format is written.
    """
    fmt = normalize_format(format) if format else corpus.format
    sch = normalize_scheme(scheme) if scheme else corpus.scheme
    enc = encoding or corpus.encoding
    lossless = fmt == corpus.format and corpus.layout is not None
    lines = render_lines(corpus, fmt, sch, corpus_events(corpus, lossless), lossless)
    same_bytes = lossless and enc == corpus.encoding
    write_lines(path, lines, enc, corpus.newline if lossless else "\n", corpus.bom if same_bytes else _sig(enc),
                corpus.final_newline if lossless else True)


def convert_file(src, dst, from_format: str | None = None, to_format: str | None = None,
                 scheme: str | None = None, from_scheme: str | None = None, encoding: str | None = None,
                 strict: bool = False) -> Reader:
    """Stream ``src`` into ``dst`` (atomic), converting format and/or scheme. Returns the reader."""
    target_scheme = normalize_scheme(scheme) if scheme else None  # bad names fail before any work
    target_format = normalize_format(to_format) if to_format else None
    reader = Reader(src, from_format, from_scheme, encoding, strict)
    fmt = target_format or reader.format
    events = reader.events()
    first = next(events)  # fills in reader.scheme
    sch = target_scheme or reader.scheme
    lossless = fmt == reader.format

    def all_events():
        yield first
        yield from events

    lines = render_lines(reader, fmt, sch, all_events(), lossless)
    write_lines(dst, lines, reader.encoding, reader.newline if lossless else "\n",
                reader.bom if lossless else _sig(reader.encoding),
                (lambda: reader.final_newline) if lossless else True)
    return reader
