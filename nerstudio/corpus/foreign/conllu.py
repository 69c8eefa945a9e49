"""CoNLL-U (Universal Dependencies) with named entities in the MISC column.

A sentence is a block of comment lines (``# sent_id = …``, ``# text = …``, ``# newdoc``) and
ten tab-separated columns per word: ID FORM LEMMA UPOS XPOS FEATS HEAD DEPREL DEPS MISC. The
entity tag of a word is the ``NE=`` (or ``NER=``, or NorNE's ``name=``) attribute of its MISC
column, ``B-PER``,
``I-PER``… (IOB1, IOB2 or BIOES: detected from the whole file, ``--from-scheme`` forces it); a
word without the attribute is outside any entity. A word of an ``NE=`` file tagged ``NER=``
instead is read too (counted in a note). A file with neither attribute but with Universal
Dependencies' ``Entity=`` bracket annotation (CorefUD, GUM) is read from its brackets (see
:mod:`.ud_entity`: the type from the bracket, nested and discontinuous mentions reported); a
file with none of them is read with no entities, and a note says so.

* **CoNLL-U Plus**: a first line ``# global.columns = ID FORM UPOS NER MISC`` declares the
  columns (Flair writes ``id form ner misc``). Their entity column is the one named ``NE`` or
  ``NER`` (or ``PREFIX:NE(R)``; ``_`` and ``*`` are outside), written back into that column;
  without one, MISC as above. A numbered, commented file of another width without the line is
  refused (:mod:`..detect`), saying to declare its columns. Flair's ``# relations =`` comments
  are counted in a note and kept as comments.
* The tokens are the syntactic words (integer IDs). Multiword token ranges (``1-2 vámonos``) and
  empty nodes (``8.1``) are not tokens, and are kept; an entity tag on one of their lines is not
  read (a note counts them: which words it would cover is a guess).
* ``# newdoc`` starts a new document. The UPOS column is the sentence's extra column (the
  tagger's part-of-speech).
* A document's text is its sentences' texts, one per line: the ``# text`` comment when the
  words are found in it in order (``SpaceAfter=No`` is what makes them agree), else the words
  joined by spaces (a sentence with contractions); tokens keep their offsets in it, so JSONL and
  brat exports keep the sentences' own spacing.

**Writing back** a corpus read from CoNLL-U keeps every original line (comments, ranges, empty
nodes, the other columns and MISC attributes); only the entity attribute of the MISC column of
words whose entities changed is rewritten (removed for ``O`` unless the file wrote ``NE=O``).
A corpus from another format gets minimal CoNLL-U: ``# sent_id``, ``# text`` (the sentence's
text, line breaks as spaces), ID, FORM, UPOS from the first extra column when there is one,
``_`` elsewhere, and MISC with ``NE=`` and ``SpaceAfter=No`` where the text has no space.
"""

from __future__ import annotations

import os
import re
from typing import TYPE_CHECKING

from ...errors import FormatError
from ..atomic import atomic_open
from ..model import Corpus, Document, Sentence, Span
from ..schemes import SchemeError, decode, detect_scheme, encode
from . import runtext, ud_entity, utf8

if TYPE_CHECKING:
    from ..writing import Losses

_ID = re.compile(r"^\d+(?:-\d+|\.\d+)?$")
KEYS = ("NE", "NER", "name")  # name=: NorNE (Norwegian UD with entities)


_PLUS = re.compile(r"^#\s*global\.columns\s*=\s*(.*)$")
_NE_COLUMNS = ("NE", "NER")  # a CoNLL-U Plus column of entity tags (also PREFIX:NE, PREFIX:NER)


class _Layout:
    """Where a file keeps what nerstudio reads: CoNLL-U's ten columns, or the columns a CoNLL-U
    Plus file declares on its first line (``# global.columns = ID FORM UPOS NER``)."""

    __slots__ = ("form", "misc", "n", "names", "tag", "upos")

    def __init__(self, names: list[str]):
        self.names = names
        self.n = len(names)
        upper = [x.upper() for x in names]
        self.form = upper.index("FORM")
        self.upos = upper.index("UPOS") if "UPOS" in upper else None
        self.misc = upper.index("MISC") if "MISC" in upper else None
        self.tag = next(
            (i for i, x in enumerate(upper) if x.rpartition(":")[2] in _NE_COLUMNS), None
        )


_CONLLU = _Layout(
    ["ID", "FORM", "LEMMA", "UPOS", "XPOS", "FEATS", "HEAD", "DEPREL", "DEPS", "MISC"]
)


def _plus_columns(first_line: str) -> list[str] | None:
    """The columns a CoNLL-U Plus file declares, when they hold ID and FORM (else ``None``)."""
    m = _PLUS.match(first_line.lstrip("\ufeff").rstrip("\r"))
    names = m.group(1).split() if m else []
    return (
        names if {"ID", "FORM"} <= {x.upper() for x in names} and names[0].upper() == "ID" else None
    )


def _layout(path: str, raw: str) -> _Layout:
    names = _plus_columns(raw.split("\n", 1)[0])
    return _CONLLU if names is None else _Layout(names)


def _fields(line: str, n: int = 10) -> list[str] | None:
    f = line.split("\t")
    return f if len(f) == n and _ID.match(f[0]) else None


def sniff(path: str, head: str) -> bool:
    from .webanno import old_version

    if (
        old_version(head) is not None
    ):  # WebAnno TSV 1 has ten columns too: its reader says what to do
        return False
    lines = [ln.rstrip("\r") for ln in runtext.split_lines(head) if ln.strip()][:200]
    words = [ln for ln in lines if not ln.startswith("#")]
    if not words:
        return path.lower().endswith(".conllu") and bool(lines)
    plus = _plus_columns(lines[0])
    n = 10 if plus is None else len(plus)
    # the last line may be cut by the 64 KiB head
    if all(_fields(ln, n) for ln in words[:-1] or words):
        return True
    # numbered tab-separated word lines after comments, not ten columns (Flair's five-column
    # "CoNLL-U"): read() refuses them saying what to declare
    return (
        plus is None
        and lines[0].startswith("#")
        and path.lower().endswith((".conllu", ".conllup"))
        and all(ln.split("\t", 1)[0].isdigit() and "\t" in ln for ln in words[:-1] or words)
    )


def _misc(value: str) -> list[str]:
    return [] if value == "_" else value.split("|")


def _tag_of(misc: list[str], key: str | None) -> str | None:
    for attr in misc:
        k, eq, v = attr.partition("=")
        if eq and k == key:
            return v
    return None


class _Block:
    __slots__ = ("first", "lines", "newdoc", "text", "word_rows")

    def __init__(self, first: int):
        self.lines: list[str] = []
        self.first = first
        self.word_rows: list[int] = []  # indices in lines of the syntactic words
        self.newdoc: str | None = None
        self.text: str | None = None


def _blocks(path: str, text: str, layout: _Layout = _CONLLU) -> list[_Block]:
    blocks, cur = [], None
    for lineno, line in enumerate(text.split("\n"), 1):
        line = line.rstrip("\r")
        if not line.strip():
            if cur is not None:
                blocks.append(cur)
                cur = None
            continue
        if cur is None:
            cur = _Block(lineno)
        if line.startswith("#"):
            body = line[1:].strip()
            if body.startswith("newdoc"):
                cur.newdoc = body.partition("=")[2].strip() or body[6:].strip()
            elif body.startswith("text") and body[4:].lstrip().startswith("="):
                cur.text = body[4:].lstrip()[1:].strip()
            cur.lines.append(line)
            continue
        f = line.split("\t")
        if len(f) != layout.n:
            if layout is _CONLLU:
                raise FormatError(path, lineno, _not_ten(len(f)))
            raise FormatError(
                path,
                lineno,
                f"a word line of this CoNLL-U Plus file has the {layout.n} columns its first "
                f"line declares ({' '.join(layout.names)}), found {len(f)}",
            )
        if not _ID.match(f[0]):
            raise FormatError(path, lineno, f"bad word ID {f[0]!r} (expected 1, 2-3 or 4.1)")
        if f[0].isdigit():
            cur.word_rows.append(len(cur.lines))
        cur.lines.append(line)
    if cur is not None:
        blocks.append(cur)
    return blocks


def _not_ten(n: int) -> str:
    hint = (
        ": if a column holds the entity tags (Flair's five columns: ID FORM UPOS NER MISC), "
        "declare the columns on a first line, e.g. '# global.columns = ID FORM UPOS NER MISC', "
        "and the file is read as CoNLL-U Plus"
        if 2 <= n < 10
        else ""
    )
    return f"a CoNLL-U word line has 10 tab-separated columns, found {n}{hint}"


def _offsets(text: str | None, words: list[str]) -> list[tuple[int, int]] | None:
    """Each word's offsets in the sentence's ``# text``, or ``None`` when they do not all occur
    in order (e.g. the words of a contraction)."""
    if text is None:
        return None
    out, pos = [], 0
    for w in words:
        k = text.find(w, pos)
        if k < 0 or text[pos:k].strip():
            return None
        out.append((k, k + len(w)))
        pos = k + len(w)
    return out


def _misc_of(layout: _Layout, line: str) -> list[str]:
    """The MISC attributes of a word line (none when the layout has no MISC column)."""
    return [] if layout.misc is None else _misc(line.split("\t")[layout.misc])


def _column_tag(layout: _Layout, line: str) -> str:
    """The tag in a CoNLL-U Plus entity column: ``_`` and ``*`` are outside."""
    value = line.split("\t")[layout.tag]  # type: ignore[index]
    return "O" if value in ("_", "*") else value


class _Tags:
    """The entity tags of every sentence, and where they were read from: ``key`` is the
    attribute (or the declared column's name), ``other`` the second attribute read too,
    ``mixed`` the lines of the words tagged with it."""

    __slots__ = ("brackets", "key", "mixed", "other", "tags")

    def __init__(self, key: str | None, other: str | None, tags: list[list[str]]):
        self.key, self.other, self.tags = key, other, tags
        self.mixed: list[int] = []
        self.brackets = False  # read from UD's Entity= brackets (IOB2)

    def scheme(self, forced: str | None) -> str:
        if forced:
            return forced
        return "iob2" if self.brackets else detect_scheme(self.tags)


def _read_tags(
    blocks: list[_Block],
    miscs: list[list[list[str]]],
    present: set[str],
    layout: _Layout,
    notes: list[str],
) -> _Tags:
    key = next((k for k in KEYS if k in present), None)
    other = next((k for k in KEYS if k in present and k != key), None)
    if layout.tag is not None:  # CoNLL-U Plus: the declared entity column
        tags_all = [[_column_tag(layout, b.lines[r]) for r in b.word_rows] for b in blocks]
        return _Tags(layout.names[layout.tag], None, tags_all)
    if key is None and "Entity" in present:
        found = _Tags(key, other, _entity_tags(blocks, miscs, notes))
        found.brackets = True
        return found
    found = _Tags(key, other, [])
    for b, ms in zip(blocks, miscs):
        found.tags.append([_attribute_tag(found, b.first + r, m) for r, m in zip(b.word_rows, ms)])
    return found


def _attribute_tag(found: _Tags, lineno: int, misc: list[str]) -> str:
    """A word's tag from its MISC attributes; NER= on a word of an NE= file is read too."""
    tag = _tag_of(misc, found.key)
    if tag is None and found.other is not None:
        tag = _tag_of(misc, found.other)
        if tag is not None:
            found.mixed.append(lineno)
    return tag or "O"


def _no_entities_note(layout: _Layout) -> str:
    if layout is _CONLLU:
        return (
            "no NE=, NER= or name= attribute in the MISC column (nor UD's Entity= brackets): "
            "no entities read"
        )
    return (
        f"no entity column among the declared columns ({' '.join(layout.names)}: NE "
        "or NER) nor NE=, NER= or name= in MISC: no entities read"
    )


def _relations_note(blocks: list[_Block]) -> str | None:
    relations = [
        (b.first + k, line.count("|") + 1)
        for b in blocks
        for k, line in enumerate(b.lines)
        if re.match(r"#\s*relations\s*=\s*\S", line)
    ]
    if not relations:
        return None
    return (
        f"{sum(n for _, n in relations)} relation(s) in '# relations' comments (Flair) not "
        f"read: nerstudio holds entities only (kept when saved back as conllu), first at line "
        f"{relations[0][0]}"
    )


def _tagged_beside(layout: _Layout, line: str) -> bool:
    """Whether a multiword-token or empty-node line carries an entity tag."""
    misc = _misc_of(layout, line)
    return any(_tag_of(misc, k) not in (None, "O") for k in KEYS) or (
        layout.tag is not None and _column_tag(layout, line) != "O"
    )


def _rows_beside(b: _Block) -> list[int]:
    """The rows of a block's multiword-token and empty-node lines."""
    words = set(b.word_rows)
    return [r for r, line in enumerate(b.lines) if r not in words and not line.startswith("#")]


def _beside_note(blocks: list[_Block], layout: _Layout) -> str | None:
    beside = [  # lines of ranges and empty nodes that carry an entity tag
        b.first + r for b in blocks for r in _rows_beside(b) if _tagged_beside(layout, b.lines[r])
    ]
    if not beside:
        return None
    return (
        f"{len(beside)} entity tag(s) on multiword-token or empty-node lines (1-2, 1.1) not "
        f"read: nerstudio's tokens are the syntactic words; kept when saved back as conllu, "
        f"first at line {beside[0]}"
    )


def _mixed_note(found: _Tags) -> str | None:
    if not found.mixed:
        return None
    key, other, mixed = found.key, found.other, found.mixed
    return (
        f"{len(mixed)} word(s) tagged with {other}= in a file that uses {key}= read as tags, first "
        f"at line {mixed[0]}; written back, changed tags use {key}="
    )


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    raw, bom = runtext.read_text(path, encoding)
    layout = _layout(path, raw)
    blocks = [b for b in _blocks(path, raw, layout) if b.word_rows]
    if not blocks:
        raise FormatError(path, None, "no sentences: no CoNLL-U word lines")
    miscs = [[_misc_of(layout, b.lines[r]) for r in b.word_rows] for b in blocks]
    present = {a.partition("=")[0] for ms in miscs for m in ms for a in m if "=" in a}
    notes: list[str] = []
    found = _read_tags(blocks, miscs, present, layout, notes)
    scheme = found.scheme(scheme)
    if found.key is None and "Entity" not in present:
        notes.append(_no_entities_note(layout))
    for note in (_relations_note(blocks), _beside_note(blocks, layout), _mixed_note(found)):
        if note is not None:
            notes.append(note)
    explicit_o = any(_tag_of(m, found.key) == "O" for ms in miscs for m in ms)
    docs, repairs = _documents(path, blocks, found, scheme, layout, explicit_o)
    return Corpus(
        docs,
        path=os.fspath(path),
        format="conllu",
        scheme=scheme,
        encoding=encoding,
        newline="\r\n" if "\r\n" in raw else "\n",
        bom=bom,
        final_newline=raw.endswith("\n"),
        repairs=repairs,
        notes=notes,
    )


def _documents(
    path: str, blocks: list[_Block], found: _Tags, scheme: str, layout: _Layout, explicit_o: bool
) -> tuple[list[Document], int]:
    """The documents (``# newdoc`` starts one) and the repairs made decoding their tags."""
    docs: list[Document] = []
    repairs = 0
    for b, tags in zip(blocks, found.tags):
        if b.newdoc is not None or not docs:
            docs.append(Document(id=b.newdoc or str(len(docs) + 1)))
        s, fixed = _sentence(path, b, tags, scheme, layout, found.key, explicit_o)
        repairs += fixed
        docs[-1].sentences.append(s)
    for d in docs:
        _share_text(d)
    return docs, repairs


def _sentence(
    path: str,
    b: _Block,
    tags: list[str],
    scheme: str,
    layout: _Layout,
    key: str | None,
    explicit_o: bool,
) -> tuple[Sentence, int]:
    """One block's sentence (its lines kept to be written back) and the repairs decoding it."""
    rows = [b.lines[r].split("\t") for r in b.word_rows]
    words = [f[layout.form] for f in rows]
    try:
        spans, fixed = decode(tags, scheme)
    except SchemeError as exc:
        raise FormatError(
            path, b.first + b.word_rows[exc.index], f"MISC {key}: {exc.message}"
        ) from None
    offs = _offsets(b.text, words)
    s = Sentence(
        words,
        spans,
        extra=[[f[layout.upos] for f in rows]] if layout.upos is not None else [],
        tags=tags,
        line=b.first + b.word_rows[0],
        meta={
            "conllu": b.lines,
            "rows": b.word_rows,
            "key": key or "NE",
            "explicit_o": explicit_o,
            "column": layout.tag,  # CoNLL-U Plus: the entity column, else MISC's attribute
            "misc": layout.misc,
        },
        source=b.text if offs is not None else None,
        offsets=offs,
    )
    return s, fixed


def _share_text(d: Document) -> None:
    """A document's text: its sentences' texts, one per line (each the ``# text`` when the words
    are found in it, else the words); the sentences' offsets are moved into it."""
    text, pos, new = "", 0, []
    for s in d.sentences:
        line, rel = s.char_offsets()
        new.append([(a + pos, b_ + pos) for a, b_ in rel])
        text += line + "\n"
        pos = len(text)
    for s, o in zip(d.sentences, new):
        s.source, s.offsets = text, tuple(o)
    d.text = text


def _entity_tags(
    blocks: list[_Block], miscs: list[list[list[str]]], notes: list[str]
) -> list[list[str]]:
    """IOB2 tags of every sentence from UD's ``Entity=`` brackets (:mod:`.ud_entity`)."""
    mentions = ud_entity.Mentions()
    tags_all = []
    for b, ms in zip(blocks, miscs):
        for line in b.lines:
            if line.startswith("#"):
                names = ud_entity.fields_of(line[1:].strip())
                if names:
                    mentions.fields = names
        values = [_tag_of(m, "Entity") for m in ms]
        ents = mentions.sentence(values, [b.first + r for r in b.word_rows])
        tags_all.append(encode([Span(a, e, t) for a, e, t in ents], len(values), "iob2"))
    notes.extend(mentions.notes())
    return tags_all


def _set_tag(misc_value: str, key: str, tag: str, explicit_o: bool) -> str:
    attrs = _misc(misc_value)
    new = f"{key}={tag}" if tag != "O" or explicit_o else None
    for i, a in enumerate(attrs):
        if a.partition("=")[0] == key:
            if new is None:
                del attrs[i]
            else:
                attrs[i] = new
            break
    else:
        if new is not None:
            attrs.append(new)
    return "|".join(attrs) if attrs else "_"


def _check_labels(s: Sentence, path: str) -> None:
    """A label becomes ``NE=B-LABEL`` in the MISC column, whose attributes are separated by
    ``|`` in a tab-separated line: a label holding those (or a line break) cannot be read back."""
    for sp in s.spans:
        bad = next((c for c in sp.label if c in "|\t\n\r"), None)
        if bad is not None:
            raise FormatError(
                path,
                s.line or None,
                f"the label {sp.label!r} holds {bad!r}, which CoNLL-U's MISC "
                "column cannot hold in an attribute value: it cannot be written "
                "as conllu; save as jsonl",
            )


def _sentence_lines(
    s: Sentence, scheme: str, src_scheme: str | None, k: int, doc: Document | None, path: str
) -> list[str]:
    meta = s.meta or {}
    _check_labels(s, path)
    if "conllu" in meta:
        return _lines_kept(s, meta, scheme, src_scheme, path)
    return _lines_new(s, scheme, k, doc, path)


def _lines_kept(
    s: Sentence, meta: dict, scheme: str, src_scheme: str | None, path: str
) -> list[str]:
    """A sentence read from CoNLL-U: its own lines, the entity tags rewritten when changed."""
    lines = list(meta["conllu"])
    unchanged = s.tags is not None and scheme == src_scheme and decode(s.tags, scheme)[0] == s.spans
    if unchanged:
        return lines
    tags = encode(s.spans, len(s.words), scheme)
    column, misc = meta.get("column"), meta.get("misc", 9)
    if column is None and misc is None:
        raise FormatError(
            path,
            s.line or None,
            "this CoNLL-U Plus file declares neither an entity column (NE or NER) nor MISC: "
            "its entities cannot be written back into it; save as jsonl",
        )
    for r, tag in zip(meta["rows"], tags):
        f = lines[r].split("\t")
        if column is not None:
            f[column] = tag
        else:
            f[misc] = _set_tag(f[misc], meta["key"], tag, meta["explicit_o"])
        lines[r] = "\t".join(f)
    return lines


def _check_forms(s: Sentence, path: str) -> None:
    for i, w in enumerate(s.words):
        if not w or "\t" in w or "\n" in w or "\r" in w:
            raise FormatError(
                path,
                s.line or None,
                f"token {i + 1} {w!r} cannot be a CoNLL-U form "
                "(empty, or holding a tab or line break)",
            )


def _newdoc_line(s: Sentence, doc: Document, path: str) -> str:
    if doc.id and doc.id.splitlines() != [doc.id]:
        raise FormatError(
            path,
            s.line or None,
            f"the document id {doc.id!r} holds a line break: it cannot be "
            "a CoNLL-U '# newdoc id' comment; save as jsonl",
        )
    return f"# newdoc id = {doc.id}" if doc.id else "# newdoc"


def _word_line(i: int, w: str, tag: str, space_after: bool, upos: str | None) -> str:
    misc = [] if tag == "O" else [f"NE={tag}"]
    if not space_after:
        misc.append("SpaceAfter=No")
    pos = upos if upos and not any(c.isspace() for c in upos) else "_"
    return "\t".join([str(i + 1), w, "_", pos, "_", "_", "_", "_", "_", "|".join(misc) or "_"])


def _lines_new(s: Sentence, scheme: str, k: int, doc: Document | None, path: str) -> list[str]:
    """Minimal CoNLL-U for a sentence from another format (see the module docstring)."""
    _check_forms(s, path)
    text, offs = s.char_offsets()
    out = [] if doc is None else [_newdoc_line(s, doc, path)]
    out.append(f"# sent_id = {k}")
    out.append("# text = " + " ".join(text.split()))
    upos = s.extra[0] if s.extra else None
    for i, (w, tag) in enumerate(zip(s.words, encode(s.spans, len(s.words), scheme))):
        glued = i + 1 < len(offs) and offs[i][1] == offs[i + 1][0]
        out.append(_word_line(i, w, tag, not glued, upos[i] if upos else None))
    return out


def write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None:
    src_scheme = corpus.scheme if corpus.format == "conllu" else None
    multi = len(corpus.documents) > 1
    nl = corpus.newline if corpus.format == "conllu" else "\n"
    k = 0
    with atomic_open(path, encoding=utf8(corpus.encoding)) as f:
        if corpus.bom and corpus.format == "conllu":
            f.write("\ufeff")
        for d in corpus.documents:
            for j, s in enumerate(d.sentences):
                k += 1
                lines = _sentence_lines(
                    s, scheme, src_scheme, k, d if multi and j == 0 else None, corpus.path or path
                )
                f.write(nl.join(lines) + nl + nl)
