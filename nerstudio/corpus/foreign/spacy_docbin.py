"""spaCy's binary training data: a ``DocBin`` file (``.spacy``), what ``spacy train`` and
``spacy convert`` read and write.

Why a module of its own: the file is not text but zlib-compressed msgpack of token attribute
arrays, readable only through spaCy itself. spaCy is an **optional** dependency (the ``spacy``
extra): nerstudio imports it only here, only when such a file is read or written, and without it
that is one :class:`~nerstudio.errors.FormatError` giving the install command. Recognising the
file needs no spaCy: its first bytes are a zlib header and, decompressed, a msgpack map that
starts with DocBin's ``version``/``attrs`` keys (a ``.spacy`` name is enough; the reader then
says when the content is no DocBin).

Reading (``get_docs`` with a blank ``Vocab``: no pipeline is downloaded or loaded): one ``Doc``
is one document, its ``text`` the document's text and every token keeps its character offsets
in it. Sentences are ``doc.sents`` when the Doc has sentence boundaries (set by hand, by a
sentencizer or by a parse); a Doc without them is **one sentence** (nerstudio does not
re-segment a tokenisation someone chose; reported). Whitespace tokens (spaCy's ``"\\n"``, extra
spaces) are not words. Entities are ``doc.ents``; an entity across a sentence boundary joins the
sentences it spans (reported). Tokens whose entity annotation is *missing* (spaCy's unknown IOB
value) are read as outside any entity (reported). Not read, and reported when present: the
overlapping spans of ``doc.spans`` groups (nerstudio's entities do not overlap), document
categories, and token annotations (tags, POS, morphology, lemmas, parses).

Writing: one Doc per document, sentence starts set, ``ents`` from the spans (every other token
explicitly outside). A document read from running text (plain text, brat, the annotation tools'
formats, a DocBin) is written with its **exact text**: words and trailing spaces derived from
the token offsets, other whitespace between tokens as spaCy's own whitespace tokens, so every
offset still indexes ``doc.text``. Other documents' tokens are joined by single spaces. Empty
tokens cannot be held (refused), extra columns and document ids are not kept, and untyped
(boundary-only) entities are given the type ``ENT`` (reported).
"""

from __future__ import annotations

import os
import zlib
from typing import TYPE_CHECKING, Any, TypeAlias

from ...errors import FormatError, Msg
from ..atomic import atomic_open
from ..model import Corpus, Document, Sentence, Span
from . import _records as R

if TYPE_CHECKING:
    from ..writing import Losses

#: words, trailing spaces, sentence starts, and each (sentence, token)'s index in the Doc
_Built: TypeAlias = "tuple[list[str], list[bool], list[bool], dict[tuple[int, int], int]]"

NAME = "spacy"
EXTENSION = ".spacy"
INSTALL = "pip install 'nerstudio[spacy]'"
UNTYPED = "ENT"  # the type given to untyped (boundary-only) entities, which spaCy cannot hold
_PEEK = 256  # compressed bytes inflated to recognise a DocBin
_OTHER_ATTRS = (
    ("TAG", "tags"),
    ("POS", "POS"),
    ("MORPH", "morphology"),
    ("LEMMA", "lemmas"),
    ("DEP", "parses"),
)


def is_docbin(path: str) -> bool:
    """Whether ``path`` starts like ``DocBin.to_bytes`` output: a zlib stream whose first
    inflated bytes are a msgpack map holding DocBin's first keys. Never raises."""
    try:
        with open(path, "rb") as f:
            head = f.read(_PEEK)
        if len(head) < 2 or head[0] & 0x0F != 8 or ((head[0] << 8) | head[1]) % 31:
            return False
        body = zlib.decompressobj().decompress(head, 64)
    except (OSError, zlib.error):
        return False
    is_map = body[:1] and (0x80 <= body[0] <= 0x8F or body[0] in (0xDE, 0xDF))
    return bool(is_map) and (b"version" in body[:24] or b"attrs" in body[:24])


def sniff(path: str, head: str) -> bool:
    # a zlib stream starts with 0x78 ("x" in the decoded head): only then is the file opened
    # again, and only a regular file (never a pipe whose bytes would be consumed)
    if path.lower().endswith(EXTENSION):
        return True
    return head[:1] == "x" and os.path.isfile(path) and is_docbin(path)


def _spacy(path: str) -> tuple[Any, Any, Any, Any]:
    """spaCy's ``Doc``, ``DocBin``, ``Span`` and ``Vocab``, or one FormatError saying how to
    install it."""
    try:
        from spacy.tokens import Doc, DocBin
        from spacy.tokens import Span as SpacySpan
        from spacy.vocab import Vocab
    except ImportError:
        raise FormatError(
            path, None, f"spaCy DocBin files need spaCy, which is not installed: {INSTALL}"
        ) from None
    except Exception as exc:  # an installed spaCy that fails to import (binary mismatch...)
        raise FormatError(
            path,
            None,
            f"spaCy is installed but cannot be imported ({exc}); reinstall it: {INSTALL}",
        ) from None
    return Doc, DocBin, SpacySpan, Vocab


def _blank(text: str) -> bool:
    return not text.strip()


def _plural(n: int, one: str, many: str) -> str:
    return f"{n} {one if n == 1 else many}"


def _groups(doc: Any) -> tuple[list[list[int]], int]:  # doc: a spaCy Doc
    """Token index ranges ``[start, end)`` of the Doc's sentences, joined where an entity
    crosses a boundary, and how many joins that took."""
    if len(doc) > 1 and doc.has_annotation("SENT_START"):
        bounds = [[s.start, s.end] for s in doc.sents]
    else:
        bounds = [[0, len(doc)]]
    joins = 0
    for ent in doc.ents:
        while True:
            k = next(i for i, b in enumerate(bounds) if b[0] <= ent.start < b[1])
            if ent.end <= bounds[k][1]:
                break
            bounds[k][1] = bounds[k + 1][1]
            del bounds[k + 1]
            joins += 1
    return bounds, joins


def _document(doc: Any, k: int, counts: dict) -> Document:  # doc: a spaCy Doc
    text = doc.text
    bounds, joins = _groups(doc)
    counts["joined"] += joins
    if len(doc) > 1 and not doc.has_annotation("SENT_START"):
        counts["unsplit"] += 1
    ents = {}
    for ent in doc.ents:
        words = [t.i for t in ent if not _blank(t.text)]
        if not words:
            counts["blank_ents"] += 1
            continue
        ents[words[0]] = (words[-1], ent.label_)
    out = Document(id=str(k + 1), text=text)
    for start, end in bounds:
        index, words, offsets = {}, [], []
        for tok in doc[start:end]:
            if _blank(tok.text):
                continue
            if tok.ent_iob == 0:
                counts["missing"] += 1
            index[tok.i] = len(words)
            words.append(tok.text)
            offsets.append((tok.idx, tok.idx + len(tok.text)))
        if not words:
            continue
        spans = [
            Span(index[a], index[b] + 1, label) for a, (b, label) in ents.items() if a in index
        ]
        out.sentences.append(Sentence(words, spans, source=text, offsets=offsets))
    groups = sum(1 for g in doc.spans.values() if len(g))
    if groups:
        counts["span_groups"] += groups
        counts["group_spans"] += sum(len(g) for g in doc.spans.values())
    counts["cats"] += bool(doc.cats)
    for attr, what in _OTHER_ATTRS:
        if doc.has_annotation(attr):
            counts["other"].add(what)
    return out


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    if not is_docbin(path):
        raise FormatError(
            path,
            None,
            "not a spaCy DocBin file (zlib-compressed msgpack, as DocBin.to_disk writes it)",
        )
    _, DocBin, _, Vocab = _spacy(path)
    try:
        with open(path, "rb") as f:
            data = f.read()
        docs = list(DocBin().from_bytes(data).get_docs(Vocab()))
    except OSError as exc:
        raise FormatError(path, None, Msg.CANNOT_READ.format(why=exc.strerror or exc)) from None
    except Exception as exc:  # a damaged file: zlib, msgpack, missing keys, array shapes
        raise FormatError(
            path, None, f"not a readable spaCy DocBin ({type(exc).__name__}: {exc})"
        ) from None
    counts = {
        "joined": 0,
        "unsplit": 0,
        "blank_ents": 0,
        "missing": 0,
        "span_groups": 0,
        "group_spans": 0,
        "cats": 0,
        "other": set(),
    }
    documents = [_document(doc, k, counts) for k, doc in enumerate(docs)]
    empty = sum(1 for d in documents if not d.sentences)
    documents = [d for d in documents if d.sentences]
    if not documents:
        raise FormatError(
            path,
            None,
            "no sentences: "
            + (
                f"{_plural(empty, 'Doc', 'Docs')}, none with tokens"
                if empty
                else "the DocBin holds no Doc"
            ),
        )
    return Corpus(
        documents,
        path=path,
        format=NAME,
        scheme=scheme or "iob2",
        encoding=encoding,
        layout=None,
        notes=_notes(counts, empty),
    )


def _notes(c: dict, empty: int) -> list[str]:
    notes = []
    if c["unsplit"]:
        notes.append(
            f"{_plural(c['unsplit'], 'Doc', 'Docs')} without sentence boundaries read as one sentence "
            "each (nerstudio does not re-split a Doc's tokens)"
        )
    if c["joined"]:
        notes.append(
            f"{_plural(c['joined'], 'sentence boundary', 'sentence boundaries')} inside an entity "
            "ignored: the sentences on either side were read as one"
        )
    if c["missing"]:
        notes.append(
            f"{_plural(c['missing'], 'token', 'tokens')} with missing entity annotation (spaCy's unknown "
            "IOB value) read as outside any entity"
        )
    if c["blank_ents"]:
        notes.append(
            f"{_plural(c['blank_ents'], 'entity', 'entities')} over whitespace tokens only not read"
        )
    if c["span_groups"]:
        notes.append(
            f"{_plural(c['group_spans'], 'span', 'spans')} in {c['span_groups']} doc.spans group(s) not "
            "read: only doc.ents (non-overlapping) become entities"
        )
    if c["cats"]:
        notes.append(f"the categories (doc.cats) of {_plural(c['cats'], 'Doc', 'Docs')} not read")
    if c["other"]:
        notes.append(f"spaCy token annotations not read: {', '.join(sorted(c['other']))}")
    if empty:
        notes.append(f"{_plural(empty, 'Doc', 'Docs')} without tokens (or only whitespace) skipped")
    return notes


def _refuse_empty(path: str, s: Sentence, i: int) -> None:
    if not s.words[i]:
        where = f" (the sentence at line {s.line})" if s.line else ""
        raise FormatError(
            path,
            s.line or None,
            f"token {i + 1} is empty{where}: a spaCy Doc cannot hold an empty "
            "token; save as tsv or jsonl",
        )


def _exact(doc: Document, path: str, losses: Losses) -> _Built | None:
    """Words, trailing spaces, sentence starts and each ``(sentence, token)``'s Doc index for a
    document with source text, reproducing that text exactly; ``None`` when its offsets do not
    run forward through it."""
    text = doc.text
    if text is None:
        return None
    words: list[str] = []
    spaces: list[bool] = []
    starts: list[bool] = []
    index: dict[tuple[int, int], int] = {}
    gaps = 0

    def gap(stretch: str) -> None:
        nonlocal gaps
        if words and stretch.startswith(" "):
            spaces[-1] = True
            stretch = stretch[1:]
        if stretch:
            gaps += not _blank(stretch)
            words.append(stretch)
            spaces.append(False)
            starts.append(not words[:-1])

    pos = 0
    for k, s in enumerate(doc.sentences):
        if s.offsets is None:
            return None
        for i, (a, b) in enumerate(s.offsets):
            _refuse_empty(path, s, i)
            if a < pos or b > len(text):
                return None
            gap(text[pos:a])
            index[(k, i)] = len(words)
            words.append(text[a:b])
            spaces.append(False)
            starts.append(i == 0)
            pos = b
    gap(text[pos:])
    first = index.get((0, 0))
    if first:  # whitespace before the first word belongs to the first sentence
        starts[0], starts[first] = True, False
    if gaps:
        losses.add(
            "spacy_gaps",
            n=gaps,
            text="{n} stretch(es) of text between tokens written as tokens of their "
            "own: the Doc keeps the exact text",
        )
    return words, spaces, starts, index


def _joined(doc: Document, path: str) -> _Built:
    words: list[str] = []
    spaces: list[bool] = []
    starts: list[bool] = []
    index: dict[tuple[int, int], int] = {}
    for k, s in enumerate(doc.sentences):
        for i, w in enumerate(s.words):
            _refuse_empty(path, s, i)
            index[(k, i)] = len(words)
            words.append(w)
            spaces.append(True)
            starts.append(i == 0)
    if spaces:
        spaces[-1] = False
    return words, spaces, starts, index


def _doc(
    spacy: tuple[Any, Any, Any, Any], vocab: Any, doc: Document, path: str, losses: Losses
) -> Any:
    Doc, _, SpacySpan, _ = spacy
    exact = doc.text is not None and all(s.offsets is not None for s in doc.sentences)
    built = _exact(doc, path, losses) if exact else None
    if built is None:
        if exact:
            losses.add(
                "spacy_order",
                text="the text of {n} document(s) not kept (tokens out of order in it): "
                "their tokens were joined by spaces",
            )
        built = _joined(doc, path)
    words, spaces, starts, index = built
    out = Doc(vocab, words=words, spaces=spaces, sent_starts=starts)
    ents = [
        SpacySpan(out, index[(k, sp.start)], index[(k, sp.end - 1)] + 1, label=sp.label or UNTYPED)
        for k, s in enumerate(doc.sentences)
        for sp in s.spans
    ]
    untyped = sum(1 for s in doc.sentences for sp in s.spans if not sp.label)
    if untyped:  # spaCy drops an entity without a label
        losses.add(
            "spacy_untyped",
            n=untyped,
            text="entities without a type ({n}) written with the type "
            f"{UNTYPED} ({{fmt}} drops an entity without a label)",
        )
    out.ents = ents  # every other token explicitly outside (O), not missing
    return out


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    spacy = _spacy(path)
    _, DocBin, _, Vocab = spacy
    vocab = Vocab()
    docs = [
        _doc(spacy, vocab, d, path, losses)
        for d in corpus.documents
        if any(s.words for s in d.sentences)
    ]
    R.count_columns(corpus, losses, NAME)
    renamed = sum(1 for k, d in enumerate(corpus.documents) if d.id not in ("", str(k + 1)))
    if renamed:
        losses.add("doc_id", n=renamed)
    data = DocBin(docs=docs).to_bytes()
    with atomic_open(path, mode="wb") as f:
        f.write(data)
