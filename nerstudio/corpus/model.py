"""The corpus data model: Span, Token, Sentence, Document, Corpus.

Storage is column-major and compact (a sentence holds a tuple of words and one tuple per extra
column), so that a corpus of millions of tokens fits comfortably in memory; :class:`Token` objects
are light views made on demand.

Everything needed to write a file back byte for byte is kept: the raw tags as read, the raw
``-DOCSTART-`` and separator lines (``Corpus.layout``), the column separator, line endings, the
byte-order mark and whether the file ended with a newline. A sentence whose spans were not edited
is written with its original tags, even where those tags were irregular.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeAlias

#: a file name as the readers and writers take it
StrPath: TypeAlias = "str | os.PathLike[str]"


class _SpanFields(NamedTuple):
    start: int
    end: int
    label: str


class Span(_SpanFields):
    """An entity over token indices ``start`` (inclusive) to ``end`` (exclusive)."""

    __slots__ = ()

    def __len__(self) -> int:  # number of tokens, not number of fields
        return self.end - self.start

    @classmethod
    def _make(cls, iterable: Iterable[Any]) -> Span:  # type: ignore[override]
        # (mypy cannot match a classmethod to the NamedTuple's synthesized _make)
        # namedtuple's _make (used by _replace) checks len(), which counts tokens here
        fields = tuple(iterable)
        if len(fields) != 3:
            raise TypeError(f"Expected 3 arguments, got {len(fields)}")
        return tuple.__new__(cls, fields)

    def text(self, words: Sequence[str]) -> str:
        return " ".join(words[self.start : self.end])


@dataclass(frozen=True, slots=True)
class Token:
    """One token: its text, its extra columns (POS, chunk, ...) and its index in the sentence."""

    text: str
    extra: tuple[str, ...] = ()
    index: int = 0


class Sentence:
    """A sentence: words, extra columns, gold spans, and what is needed to write it back.

    * ``words``: tuple of token strings (may contain empty strings, as in BTC);
    * ``extra``: tuple of columns, each a tuple with one string per token (POS, chunk, ...);
    * ``spans``: list of gold :class:`Span` (editable);
    * ``tags``: the tag strings as read (``None`` for sentences built in code);
    * ``line``: 1-based line of the first token in the source file (0 if none);
    * ``raw``: the source record for formats that keep one per sentence (JSONL);
    * ``source`` and ``offsets``: for corpora read from running text (plain text, brat, the
      annotation tools' JSON formats), the text the sentence was cut from (its document's
      text: one string shared by the document's sentences, never copied) and each token's
      ``(start, end)`` character offsets in it; ``None`` otherwise. Words never change once
      read, so the offsets stay true through every edit of the spans.
    """

    __slots__ = ("extra", "line", "meta", "offsets", "raw", "source", "spans", "tags", "words")

    def __init__(
        self,
        words: Sequence[str],
        spans: Sequence[Span] = (),
        extra: Sequence[Sequence[str]] = (),
        tags: Sequence[str] | None = None,
        line: int = 0,
        raw: str | None = None,
        meta: dict | None = None,
        source: str | None = None,
        offsets: Sequence[tuple[int, int]] | None = None,
    ):
        self.words = tuple(words)
        n = len(self.words)
        self.extra = tuple(tuple(col) for col in extra)
        for col in self.extra:
            if len(col) != n:
                raise ValueError("extra column length differs from the number of words")
        self.spans = sorted(Span(*s) for s in spans)
        self.tags = None if tags is None else tuple(tags)
        self.line = line
        self.raw = raw
        self.meta = meta
        self.source = source
        self.offsets = None if offsets is None else tuple((int(a), int(b)) for a, b in offsets)
        if self.offsets is not None:
            if source is None:
                raise ValueError("offsets need the source text they index")
            if len(self.offsets) != n:
                raise ValueError("one (start, end) offset pair per word is required")

    def __len__(self) -> int:
        return len(self.words)

    def __repr__(self) -> str:
        return f"Sentence({' '.join(self.words)[:60]!r}, spans={self.spans})"

    @property
    def tokens(self) -> list[Token]:
        cols = self.extra
        return [Token(w, tuple(c[i] for c in cols), i) for i, w in enumerate(self.words)]

    def text(self) -> str:
        """The sentence as written in its source text when it has one, else its words joined
        by spaces."""
        if self.offsets:
            return self.source[self.offsets[0][0] : self.offsets[-1][1]]  # type: ignore[index]
        return " ".join(self.words)

    def char_offsets(self) -> tuple[str, list[tuple[int, int]]]:
        """:meth:`text` and each token's offsets in it (from the source text when there is one,
        else for the words joined by single spaces)."""
        if self.offsets:
            base = self.offsets[0][0]
            return self.text(), [(a - base, b - base) for a, b in self.offsets]
        out, pos = [], 0
        for w in self.words:
            out.append((pos, pos + len(w)))
            pos += len(w) + 1
        return " ".join(self.words), out

    def entity_texts(self) -> list[tuple[str, str]]:
        return [(sp.label, sp.text(self.words)) for sp in self.spans]

    def copy(self, spans: Sequence[Span] | None = None) -> Sentence:
        """A copy sharing the (immutable) words and columns; ``spans`` replaces the gold spans."""
        s = Sentence.__new__(Sentence)
        s.words, s.extra, s.tags, s.line, s.raw = (
            self.words,
            self.extra,
            self.tags,
            self.line,
            self.raw,
        )
        s.meta = None if self.meta is None else dict(self.meta)
        s.source, s.offsets = self.source, self.offsets
        s.spans = sorted(Span(*x) for x in (self.spans if spans is None else spans))
        return s


@dataclass(slots=True)
class Document:
    """A run of sentences; ``docstart`` is the raw ``-DOCSTART-`` line that opened it, if any.

    ``text`` is the running text the document was read from (plain text, brat, the annotation
    tools' formats; see :attr:`Sentence.source`), ``None`` for token-per-line corpora. ``path``
    is the file it was read from when that is not the corpus's own (a pair of a brat folder),
    so a sentence's line is shown with the file it is in."""

    sentences: list[Sentence] = field(default_factory=list)
    docstart: str | None = None
    id: str = ""
    text: str | None = None
    path: str | None = None

    def text_and_offsets(self) -> tuple[str, list[list[tuple[int, int]]]]:
        """The document's text and, per sentence, its tokens' offsets in it: the source text
        when the document has one, else sentences on lines of words joined by spaces."""
        if self.text is not None and all(s.offsets is not None for s in self.sentences):
            return self.text, [list(s.offsets) for s in self.sentences]  # type: ignore[arg-type]
        parts, offsets, pos = [], [], 0
        for s in self.sentences:
            line, rel = s.char_offsets()
            parts.append(line)
            offsets.append([(a + pos, b + pos) for a, b in rel])
            pos += len(line) + 1
        return "\n".join(parts) + ("\n" if parts else ""), offsets


@dataclass
class Corpus:
    """Documents of sentences plus the source file's layout and conventions.

    ``layout`` lists the file's lines in order for lossless writing: a ``str`` is a raw line that
    holds no token (blank or whitespace-only separator, ``-DOCSTART-``), an ``int`` is the index
    of a sentence in :attr:`sentences`. It is ``None`` for corpora built in code, which are
    written in the canonical layout of the target format.
    """

    documents: list[Document] = field(default_factory=list)
    path: str | None = None
    format: str = "conll2003"
    scheme: str = "iob2"
    encoding: str = "utf-8"
    newline: str = "\n"
    bom: bool = False
    final_newline: bool = True
    sep: str = " "
    ncols: int | None = None  # columns per token line, tag included (column formats)
    layout: list | None = None
    repairs: int = 0  # invalid transitions repaired while decoding the tags
    # what reading could not keep or chose (one line each, for the user)
    notes: list = field(default_factory=list)
    _sentences: list[Sentence] | None = field(default=None, repr=False)

    @property
    def sentences(self) -> list[Sentence]:
        """All sentences in file order (cached; call :meth:`invalidate` after changing documents)."""
        if self._sentences is None:
            self._sentences = [s for d in self.documents for s in d.sentences]
        return self._sentences

    def invalidate(self) -> None:
        self._sentences = None

    def __len__(self) -> int:
        return len(self.sentences)

    def __iter__(self) -> Iterator[Sentence]:
        return iter(self.sentences)

    @property
    def n_tokens(self) -> int:
        return sum(len(s) for s in self.sentences)

    @property
    def labels(self) -> list[str]:
        return sorted({sp.label for s in self.sentences for sp in s.spans})

    def location(self, k: int, document: int | None = None) -> str:
        """``file:line`` of sentence ``k`` (its document's own file in a collection), or ``""``
        when the sentence has no line; ``document``: its document's index, when known."""
        s = self.sentences[k]
        if not s.line:
            return ""
        if document is None:
            document = self.sentence_document()[k]
        path = self.documents[document].path or self.path or ""
        return f"{os.path.basename(path)}:{s.line}"

    def sentence_document(self) -> list[int]:
        """Index of the document of every sentence."""
        out: list[int] = []
        for k, d in enumerate(self.documents):
            out.extend([k] * len(d.sentences))
        return out

    def with_spans(self, spans_per_sentence: Sequence[Sequence[Span]]) -> Corpus:
        """A copy of this corpus (same layout and conventions) with other spans, e.g. a prediction."""
        if len(spans_per_sentence) != len(self.sentences):
            raise ValueError("one list of spans per sentence is required")
        it = iter(spans_per_sentence)
        docs = [
            Document([s.copy(next(it)) for s in d.sentences], d.docstart, d.id, d.text, d.path)
            for d in self.documents
        ]
        return Corpus(
            docs,
            self.path,
            self.format,
            self.scheme,
            self.encoding,
            self.newline,
            self.bom,
            self.final_newline,
            self.sep,
            self.ncols,
            None if self.layout is None else list(self.layout),
            0,
        )

    @classmethod
    def from_sentences(cls, sentences: Sequence[Sentence], **kw: Any) -> Corpus:
        return cls([Document(list(sentences))], **kw)
