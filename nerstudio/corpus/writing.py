"""Writing corpora: the lines of a file in any format and scheme, written atomically, with a
report of what the target format cannot keep.

A corpus written in its own format and scheme gives back the bytes it was read from (its layout
of ``-DOCSTART-`` and separator lines, line endings, byte-order mark and final newline, and the
original tags of sentences whose entities did not change). In another format the canonical
layout of that format is written, and nothing is written that nerstudio could not read back:

* **refused** (a :class:`~nerstudio.errors.FormatError` naming the source line, before the
  target is touched): in a column format, a token, column value or label holding whitespace
  where it would split the line into columns, an empty token (space-separated formats), and a
  ``-DOCSTART-`` token, which would read back as a document boundary;
* **reported** (:class:`Losses`, printed by ``nerstudio convert``): what the target cannot hold
  and is dropped: empty JSONL records, JSONL document ids (column formats mark where a document
  starts, not its name), the spacing of JSONL text and its other fields, extra columns beyond the
  target's (CoNLL-2003's chunk column in CoNLL-2002).

Kept apart from the readers (:mod:`nerstudio.corpus.formats`) so that each side stays short.
"""

from __future__ import annotations

import codecs
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..errors import FormatError
from . import foreign
from .atomic import atomic_open
from .detect import DOCSTART, format_sep, is_docstart, normalize_format
from .filelock import refuse_if_held
from .jsonl import record_losses, render_record
from .model import Corpus, Sentence, StrPath
from .schemes import SchemeError, decode, encode, normalize_scheme


@dataclass
class Losses:
    """What a conversion could not keep: per kind, how often and the first source line."""

    target: str = ""
    counts: dict = field(default_factory=dict)
    first_line: dict = field(default_factory=dict)
    fields: set = field(default_factory=set)
    # kind -> message ({n}, {fmt}) for kinds a format's writer names
    texts: dict = field(default_factory=dict)

    def add(self, kind: str, line: int | None = None, n: int = 1, text: str | None = None) -> None:
        if text is not None:
            self.texts.setdefault(kind, text)
        self.counts[kind] = self.counts.get(kind, 0) + n
        if line and kind not in self.first_line:
            self.first_line[kind] = line

    def __bool__(self) -> bool:
        return bool(self.counts)

    def messages(self) -> list[str]:
        """One line per kind of loss, for the user."""
        out = []
        fmt = self.target
        for kind, n in self.counts.items():
            at = f", first at line {self.first_line[kind]}" if kind in self.first_line else ""
            if kind == "empty":
                out.append(
                    f"{n} empty record(s) not written: {fmt} cannot hold a sentence without tokens"
                )
            elif kind == "doc_id":
                out.append(
                    f"the ids of {n} document(s) not kept: {fmt} marks where documents start, not their names"
                )
            elif kind == "columns":
                out.append(
                    f"extra columns of {n} sentence(s) not kept: {fmt} has fewer columns{at}"
                )
            elif kind == "spacing":
                out.append(
                    f"the original spacing of {n} record(s) not kept: {fmt} holds tokens only{at}"
                )
            elif kind == "text":
                out.append(
                    f"the running text and character offsets of {n} sentence(s) not kept: {fmt} holds "
                    "tokens only (jsonl and brat keep them)"
                )
            elif kind == "brat_refs":
                out.append(
                    f"{n} relation, event, attribute or note line(s) of the .ann not written: "
                    "they refer to entities that were removed"
                )
            elif kind == "fields":
                names = ", ".join(sorted(self.fields))
                out.append(f"other fields ({names}) of {n} record(s) not kept in {fmt}{at}")
            elif kind in self.texts:
                out.append(self.texts[kind].format(n=n, fmt=fmt) + at)
        return out


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


def _bad_field(value: str, sep: str) -> str | None:
    """Why ``value`` cannot be a field of a column file (``None`` if it can)."""
    if "\n" in value or "\r" in value:
        return "contains a line break"
    if sep == " ":
        if not value:
            return "is empty"
        if " " in value:
            return "contains a space"
        odd = next((c for c in value if c.isspace()), None)
        if odd is not None:
            return f"contains whitespace ({odd!r})"
    elif "\t" in value:
        return "contains a tab"
    return None


def check_writable(
    s: Sentence, fmt: str, src_path: StrPath | None, labels_only: bool = False
) -> None:
    """Raise :class:`FormatError` for what a column format cannot hold (see the module docstring)."""
    sep = format_sep(fmt)

    def where(i: int) -> int | None:  # the line of token i; JSONL: the record's line
        return None if not s.line else s.line if s.raw is not None else s.line + i

    hint = "use --to jsonl" if sep == "\t" else "use --to tsv or --to jsonl"
    for sp in s.spans:
        why = _bad_field(sp.label, sep) if sp.label else None
        if why:
            raise FormatError(
                src_path,
                where(sp.start),
                f"label {sp.label!r} {why}: it cannot be written as {fmt}; use --to jsonl",
            )
    if labels_only:
        return
    for i, w in enumerate(s.words):
        why = _bad_field(w, sep)
        if why:
            raise FormatError(
                src_path,
                where(i),
                f"token {i + 1} {w!r} {why}: it cannot be written as {fmt}; {hint}",
            )
        if w == DOCSTART:
            raise FormatError(
                src_path,
                where(i),
                f"token {i + 1} is {DOCSTART}, which {fmt} reads as a document "
                "boundary; use --to jsonl",
            )
    for k, col in enumerate(s.extra):
        for i, v in enumerate(col):
            why = _bad_field(v, sep)
            if why:
                raise FormatError(
                    src_path,
                    where(i),
                    f"column {k + 2} of token {i + 1} ({v!r}) {why}: it cannot "
                    f"be written as {fmt}; {hint}",
                )


def _check_jsonl_writable(s: Sentence, src_path: StrPath | None) -> None:
    """JSONL spans are character ranges: an entity made only of empty tokens has none."""
    for sp in s.spans:
        if not any(s.words[sp.start : sp.end]):
            raise FormatError(
                src_path,
                (s.line + sp.start) if s.line and s.raw is None else (s.line or None),
                f"the entity {sp.label or '(untyped)'} at token {sp.start + 1} covers only empty "
                "tokens: it cannot be written as jsonl (its character range would be empty)",
            )


def _token_lines(s: Sentence, tags: Sequence[str], sep: str, ncols: int) -> Iterator[str]:
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


def _text_after(s: Sentence) -> str | None:
    """The running text after a sentence cut from it (None: not cut from running text)."""
    return s.source[s.offsets[-1][1] :] if s.source is not None and s.offsets else None


def render_lines(
    corpus_like: Any,  # a Corpus, or a reader's stream with the same attributes
    fmt: str,
    scheme: str,
    events: Iterable[tuple[str, object]],
    lossless: bool,
    losses: Losses | None = None,
    record_fields: Callable[[Sentence], dict] | None = None,
    target: StrPath | None = None,
) -> Iterator[str]:
    """Lines (without endings) of the output file for a stream of reader-style events; what
    the target cannot keep is counted in ``losses``. ``record_fields(sentence)``: fields to set
    in a sentence's JSONL record (see :func:`~nerstudio.corpus.jsonl.render_record`). Refusals
    name the source file and line, or ``target`` for a corpus read from no file."""
    src = corpus_like.path or target
    losses = Losses(fmt) if losses is None else losses
    losses.target = fmt
    if fmt == "jsonl":
        yield from _jsonl_lines(corpus_like.format, events, lossless, losses, record_fields, src)
    else:
        yield from _column_lines(corpus_like, fmt, scheme, events, lossless, losses, src)


#: A sentence cut from running text, held until the next event says what text follows it:
#: the sentence, its document id and the text before it.
_Held = tuple[Sentence, str | None, str | None]


def _hold(s: Sentence, prev: Sentence | None, doc_id: str | None) -> _Held | None:
    """Hold ``s`` if it was cut from running text (its record keeps the text around it)."""
    if s.raw is not None or not s.offsets or s.source is None:
        return None
    start = s.offsets[0][0]
    end = 0
    if prev is not None and prev.offsets and prev.source is s.source:
        end = prev.offsets[-1][1]
    return (s, doc_id, s.source[end:start] if end <= start else None)


def _release(held: _Held, nxt: object, fields: dict | None) -> str:
    """The record of a held sentence, given the next event's object (None at the end): the
    text after it is recorded unless the next sentence continues the same text."""
    s, doc_id, before = held
    continued = isinstance(nxt, Sentence) and nxt.offsets and nxt.source is s.source
    return render_record(s, doc_id, before, None if continued else _text_after(s), fields)


def _jsonl_lines(
    src_fmt: str | None,
    events: Iterable[tuple[str, object]],
    lossless: bool,
    losses: Losses,
    record_fields: Callable[[Sentence], dict] | None,
    src: StrPath | None,
) -> Iterator[str]:
    """:func:`render_lines` for a JSONL target: one record a sentence."""

    def extra(s: Sentence) -> dict | None:
        return record_fields(s) if record_fields is not None else None

    # a document's own id (JSONL, other tools' records, brat file names), else its number
    own_ids = src_fmt == "jsonl" or foreign.handler(src_fmt or "") is not None
    doc_id = None
    n_doc = 0
    held: _Held | None = None
    prev: Sentence | None = None
    for kind, obj in events:
        if held is not None:
            yield _release(held, obj, extra(held[0]))
            held = None
        if kind == "docstart":
            n_doc += 1
            doc_id = str(obj) if own_ids and (obj or src_fmt == "jsonl") else str(n_doc)
        elif isinstance(obj, Sentence):  # kind "sentence"
            _check_jsonl_writable(obj, src)
            held = _hold(obj, prev, doc_id)
            if held is None:
                yield render_record(obj, doc_id, fields=extra(obj))
            prev = obj
        elif lossless:
            yield str(obj)
        elif src_fmt == "jsonl" and str(obj).strip():
            losses.add("empty")
    if held is not None:
        yield _release(held, None, extra(held[0]))


def _count_losses(s: Sentence, src_fmt: str | None, ncols: int, losses: Losses) -> None:
    """What a column file of ``ncols`` columns cannot keep of a non-empty sentence."""
    if len(s.extra) > ncols - 2:
        losses.add("columns", s.line)
    from_record = src_fmt == "jsonl" and s.raw is not None
    if s.offsets is not None and not from_record:
        # read from running text (plain text, brat, a tool's records)
        losses.add("text", s.line)
    if src_fmt == "jsonl" and s.raw is not None:
        spacing, other = record_losses(s.raw)
        if spacing:
            losses.add("spacing", s.line)
        if other:
            losses.add("fields", s.line)
            losses.fields.update(other)


def _column_lines(
    corpus_like: Any,
    fmt: str,
    scheme: str,
    events: Iterable[tuple[str, object]],
    lossless: bool,
    losses: Losses,
    src: StrPath | None,
) -> Iterator[str]:
    """:func:`render_lines` for a column target: one line a token, a blank line after each
    sentence (unless ``lossless``: then the source's own blank and other lines)."""
    sep = format_sep(fmt)
    src_fmt = corpus_like.format
    src_scheme = corpus_like.scheme
    src_ncols = corpus_like.ncols if src_fmt == fmt else None  # column count to keep, if any
    ncols = None
    for kind, obj in events:
        if isinstance(obj, Sentence):  # kind "sentence"
            s = obj
            if ncols is None:
                ncols = (
                    corpus_like.ncols if lossless else _target_ncols(fmt, src_ncols, len(s.extra))
                )
            check_writable(s, fmt, src, labels_only=lossless)
            if not s.words:
                losses.add("empty", s.line)
                continue
            _count_losses(s, src_fmt, ncols, losses)
            yield from _token_lines(s, _sentence_tags(s, scheme, src_scheme), sep, ncols)
            if not lossless:
                yield ""
        elif lossless:
            yield str(obj)
        elif kind == "docstart":
            if src_fmt == "jsonl":
                losses.add("doc_id")
            n = ncols or _target_ncols(fmt, src_ncols, max(0, (corpus_like.ncols or 2) - 2))
            yield _docstart_line(fmt, n)
            if fmt != "conll2002":
                yield ""
        elif src_fmt == "jsonl" and str(obj).strip():
            losses.add("empty")


def corpus_events(corpus: Corpus, lossless: bool) -> Iterator[tuple[str, object]]:
    """The reader-style events of a corpus in memory (its own layout when ``lossless``)."""
    if lossless and corpus.layout is not None:
        sents = corpus.sentences
        for item in corpus.layout:
            if isinstance(item, int):
                yield "sentence", sents[item]
            elif corpus.format != "jsonl" and is_docstart(item.split(corpus.sep, 1)[0]):
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
    if corpus.format == "jsonl" and corpus.layout is not None:  # empty records, for the report
        for item in corpus.layout:
            if isinstance(item, str) and item.strip():
                yield "line", item


_pacing = threading.local()  # .pace: what this thread's writes call every PACE_LINES lines
PACE_LINES = 256


@contextmanager
def paced(pace: Callable[[], None] | None) -> Iterator[None]:
    """Within it, this thread's :func:`write_lines` (every column format and JSONL) calls
    ``pace()`` every :data:`PACE_LINES` lines: a background save lets the window's thread have
    the interpreter (:class:`nerstudio.app.pacing.Pacer`); None: no pacing."""
    before = getattr(_pacing, "pace", None)
    _pacing.pace = pace
    try:
        yield
    finally:
        _pacing.pace = before


def pace_point() -> None:
    """Call this thread's pace (see :func:`paced`), if any: for a long loop of a save outside
    :func:`write_lines`."""
    pace: Callable[[], None] | None = getattr(_pacing, "pace", None)
    if pace is not None:
        pace()


def write_lines(
    path: StrPath,
    lines: Iterable[str],
    encoding: str = "utf-8",
    newline: str = "\n",
    bom: bool = False,
    final_newline: bool | Callable[[], bool] = True,
) -> None:
    """Atomically write lines; ``final_newline`` may be a callable read after the last line."""
    if codecs.lookup(encoding).name == "utf-8-sig":
        encoding = "utf-8"  # ``bom`` alone decides whether the file starts with one
    utf8 = codecs.lookup(encoding).name == "utf-8"
    pace: Callable[[], None] | None = getattr(_pacing, "pace", None)
    with atomic_open(path, encoding=encoding) as f:
        prev = None
        n = 0  # number of the line held in prev
        try:
            if bom:
                f.write("\ufeff")
            for line in lines:
                if prev is not None:
                    f.write(prev + newline)
                elif not bom and utf8 and line.startswith("\ufeff"):
                    # else a reader takes the first token's U+FEFF for a byte-order mark
                    f.write("\ufeff")
                prev = line
                n += 1
                if pace is not None and not n % PACE_LINES:
                    pace()
            if prev is not None:
                last = final_newline() if callable(final_newline) else final_newline
                f.write(prev + (newline if last else ""))
        except UnicodeEncodeError as exc:
            raise FormatError(
                path, n or None, f"cannot encode {exc.object[exc.start : exc.end]!r} as {encoding}"
            ) from None


def new_file_bom(encoding: str) -> bool:
    """Whether a file newly written in ``encoding`` starts with a BOM (only for utf-8-sig)."""
    return codecs.lookup(encoding).name == "utf-8-sig"


def output_encoding(fmt: str, encoding: str) -> str:
    """The encoding a file of format ``fmt`` is written in when ``encoding`` is asked (or was
    read): column formats keep it; JSONL and the other tools' formats are UTF-8 by definition
    (:func:`nerstudio.corpus.foreign.utf8`), so a Latin-1 input is written in UTF-8 there. A
    caller that reads the file again after writing it reads it in this encoding."""
    fmt = normalize_format(fmt)
    if fmt == "jsonl" or foreign.handler(fmt) is not None:
        return foreign.utf8(encoding)
    return encoding


def write_corpus(
    corpus: Corpus,
    path: StrPath,
    format: str | None = None,
    scheme: str | None = None,
    encoding: str | None = None,
    losses: Losses | None = None,
    record_fields: Callable[[Sentence], dict] | None = None,
) -> None:
    """Write ``corpus`` atomically. Same format and scheme as read gives back the original bytes.

    In its own format the file's layout (``-DOCSTART-`` and separator lines, line endings, BOM,
    final newline) is kept, and sentences whose spans did not change keep their original tags.
    In another format the canonical layout of that format is written; what it cannot keep is
    counted in ``losses`` (see the module docstring). ``record_fields``: JSONL only, see
    :func:`render_lines`.
    """
    refuse_if_held(path)  # a window of another nerstudio is editing it
    fmt = normalize_format(format) if format else corpus.format
    sch = normalize_scheme(scheme) if scheme else corpus.scheme
    enc = encoding or corpus.encoding
    other = foreign.handler(fmt)
    if other is not None:
        if not other.writable:
            raise FormatError(
                path,
                None,
                f"nerstudio reads {other.name} files but does not write them: save as "
                "jsonl (.jsonl) or brat (.ann), which keep the text, its offsets and "
                "the entities",
            )
        losses = Losses(fmt) if losses is None else losses
        losses.target = fmt
        other.load().write(corpus, os.fspath(path), losses, sch)
        return
    enc = output_encoding(fmt, enc)
    lossless = fmt == corpus.format and corpus.layout is not None
    lines = render_lines(
        corpus, fmt, sch, corpus_events(corpus, lossless), lossless, losses, record_fields, path
    )
    same_bytes = lossless and enc == corpus.encoding
    write_lines(
        path,
        lines,
        enc,
        corpus.newline if lossless else "\n",
        corpus.bom if same_bytes else new_file_bom(enc),
        corpus.final_newline if lossless else True,
    )
