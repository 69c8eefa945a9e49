"""WebAnno / INCEpTION TSV 3 (import only): the export format of those annotation tools.

A file starts with ``#FORMAT=WebAnno TSV 3.x`` and one header line per layer (``#T_SP=`` span
layers, ``#T_CH=`` chains, ``#T_RL=`` relations: the layer's name, then its features, one
column each), then sentences: ``#Text=`` lines (the sentence's text) and one line per token,
``SENT-TOK<TAB>START-END<TAB>token<TAB>`` and the layers' columns. Entities are the
``de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity`` layer's ``value`` column: ``PER`` on
a one-token entity, ``PER[3]`` on each token of a longer one (the number ties them together),
several stacked on a token as ``PER[3]|LOC[4]``, ``_`` for none.

Choices, reported in ``Corpus.notes`` (never silent):

* entities without a value (``*``, ``*[5]``) are not read (nerstudio's entities have a type);
* stacked (overlapping or nested) entities: the longest is kept, as for brat;
* an entity whose tokens lie in two sentences is not read, nor one whose tokens leave out
  tokens between them (discontinuous), nor one whose id carries two labels (``PER[3]`` on one
  token, ``LOC[3]`` on the next);
* sub-token lines (``1-3.1``) are not tokens; the annotations on them are not read.

Tokens keep their offsets in the document: the document's text is rebuilt from the sentences'
``#Text`` lines placed where their first tokens start (the file counts UTF-16 code units, as
INCEpTION's Java strings do, so an emoji counts two there and one in nerstudio's offsets) (the gap before a sentence is spaces
ending in a line break); each token is found in its sentence's text. The other layers are not
read. nerstudio does not write this format: save as JSONL or brat, which keep text, offsets and
entities.
"""

from __future__ import annotations

import bisect
import os
import re
from typing import Any

from ...errors import FormatError
from ..model import Corpus, Document, Sentence, Span
from . import runtext

NE_LAYER = "de.tudarmstadt.ukp.dkpro.core.api.ner.type.NamedEntity"
_TOKEN = re.compile(r"^(\d+)-(\d+)(\.\d+)?\t(\d+)-(\d+)\t")
_VALUE = re.compile(r"^(.*?)(?:\[(\d+)\])?$", re.S)
_UNESCAPE = {
    "\\\\": "\\",
    "\\[": "[",
    "\\]": "]",
    "\\|": "|",
    "\\_": "_",
    "\\*": "*",
    "\\-": "-",
    "\\>": ">",
    "\\t": "\t",
    "\\n": "\n",
    "\\r": "\r",
    "\\;": ";",
}
_ESC = re.compile(r"\\[\\\[\]|_*\->tnr;]")


def _unescape(s: str) -> str:
    return _ESC.sub(lambda m: _UNESCAPE[m.group(0)], s)


def sniff(path: str, head: str) -> bool:
    return (
        head.lstrip("\ufeff").startswith("#FORMAT=WebAnno TSV 3") or old_version(head) is not None
    )


_OLD_HEADER = re.compile(r"^ ?# ?de\.tudarmstadt\.ukp\.")


def old_version(head: str) -> str | None:
    """``"1 or 2"`` when ``head`` is a WebAnno TSV file older than version 3 (WebAnno 2 and
    earlier: no ``#FORMAT`` line; a `` # de.tudarmstadt.ukp…`` layer header or ``#id=``/``#text=``
    sentence headers over ``1-1<TAB>token`` lines), else ``None``."""
    lines = [ln.rstrip("\r") for ln in head.lstrip("\ufeff").split("\n")[:50] if ln.strip()]
    if not lines:
        return None
    if lines[0].startswith("#FORMAT="):
        m = re.match(r"#FORMAT=WebAnno TSV (\d+)", lines[0])
        return m.group(1) if m and m.group(1) in ("1", "2") else None
    if _OLD_HEADER.match(lines[0]) and any(ln.startswith(("#id=", "#text=")) for ln in lines):
        return "2"  # the layer header WebAnno 2 writes
    rest = [ln for ln in lines if not ln.startswith("#")]
    comments = [ln for ln in lines if ln.startswith("#")]
    if (
        not rest
        or not any(ln.startswith("#text=") for ln in comments)
        or any(ln.startswith("# ") for ln in comments)
    ):
        return None
    if all(re.match(r"^\d+-\d+\t", ln) for ln in rest[:-1] or rest):  # TSV 2: SENT-TOKEN ids
        return "2"
    if all(
        re.match(r"^\d+\t", ln) and ln.count("\t") == 9 for ln in rest[:-1] or rest
    ):  # TSV 1: ten columns
        return "1"
    return None


def _split_values(cell: str) -> list[str]:
    """``PER[1]|LOC[2]`` → its values (an escaped ``\\|`` does not split)."""
    if cell in ("_", ""):
        return []
    return [v for v in re.split(r"(?<!\\)\|", cell) if v != ""]


def _layout(lines: list[str], path: str) -> tuple[int | None, int]:
    """The column of the NamedEntity value feature (or ``None``) and the line after the header."""
    col, k, i = None, 3, 1
    while i < len(lines) and lines[i].startswith("#T_"):
        kind, _, spec = lines[i].partition("=")
        parts = spec.split("|")
        if kind == "#T_SP" and parts[0] == NE_LAYER:
            feats = parts[1:]
            if "value" in feats:
                col = k + feats.index("value")
        k += max(1, len(parts) - 1)
        i += 1
    return col, i


def _choose(
    ents: list[tuple[int, int, int, str, int]],
) -> tuple[list[tuple[int, int, int, str, int]], int]:
    """Non-overlapping entities, the longest first, and how many were set aside. The kept ones
    of each sentence are held sorted, so each test looks at two neighbours (n log n)."""
    kept: dict[int, list[tuple[int, int]]] = {}  # sentence -> sorted (first, last) token
    out, aside = [], 0
    for e in sorted(ents, key=lambda e: (-(e[2] - e[1]), e[0], e[1], e[4])):
        row = kept.setdefault(e[0], [])
        i = bisect.bisect_left(row, (e[1], e[2]))
        if (i < len(row) and row[i][0] <= e[2]) or (i > 0 and row[i - 1][1] >= e[1]):
            aside += 1
            continue
        row.insert(i, (e[1], e[2]))
        out.append(e)
    return out, aside


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    raw, bom = runtext.read_text(path, encoding)
    lines = raw.split("\n")
    lines = [ln[:-1] if ln.endswith("\r") else ln for ln in lines]
    if old_version(raw) is not None:
        raise FormatError(
            path,
            1,
            f"a WebAnno TSV {old_version(raw)} file (WebAnno 2 and earlier): nerstudio "
            "reads WebAnno TSV 3 only; open the project in WebAnno 3 or INCEpTION and "
            "export the documents as 'WebAnno TSV 3', or export them as CoNLL 2002",
        )
    if not lines or not lines[0].startswith("#FORMAT=WebAnno TSV 3"):
        raise FormatError(
            path, 1, "not WebAnno TSV 3: the first line must be '#FORMAT=WebAnno TSV 3.x'"
        )
    col, start = _layout(lines, path)
    sentences: list[
        dict[str, Any]
    ] = []  # {"text": [...], "tokens": [(s, e, form, cell, lineno)], "id": n}
    cur: dict[str, Any] | None = None
    subtokens = 0
    for lineno in range(start + 1, len(lines) + 1):
        line = lines[lineno - 1]
        if not line.strip():
            cur = None
            continue
        if line.startswith("#Text="):
            if cur is None or cur["tokens"]:
                cur = {"text": [], "tokens": [], "line": lineno}
                sentences.append(cur)
            cur["text"].append(_unescape(line[6:]))
            continue
        if line.startswith("#"):
            continue
        m = _TOKEN.match(line)
        if m is None:
            raise FormatError(
                path, lineno, "a token line is 'SENT-TOK<TAB>START-END<TAB>token<TAB>…'"
            )
        fields = line.split("\t")
        cell = fields[col] if col is not None and col < len(fields) else "_"
        if m.group(3):  # a sub-token
            subtokens += bool(_split_values(cell))
            continue
        if cur is None:
            cur = {"text": [], "tokens": [], "line": lineno}
            sentences.append(cur)
        if len(fields) < 3:
            raise FormatError(path, lineno, "a token line needs its offsets and its text")
        cur["tokens"].append((int(m.group(4)), int(m.group(5)), _unescape(fields[2]), cell, lineno))
    sentences = [s for s in sentences if s["tokens"]]
    if not sentences:
        raise FormatError(path, None, "no sentences: no token lines")
    return _build(path, sentences, col, scheme, encoding, bom, raw, subtokens)


def _sentence_offsets(
    path: str, s: dict[str, Any], stext: str, start: int
) -> list[tuple[int, int]]:
    """Each token's offsets in the document's text, its sentence's text starting at ``start``."""
    offs, at = [], 0
    for _a, _b, form, _cell, lineno in s["tokens"]:
        k = stext.find(form, at)
        if k < 0:
            raise FormatError(
                path,
                lineno,
                f"token {form!r} is not in its sentence's #Text after character {at}",
            )
        offs.append((start + k, start + k + len(form)))
        at = k + len(form)
    return offs


def _document_text(
    path: str, sentences: list[dict[str, Any]]
) -> tuple[str, list[tuple[list[tuple[int, int]], dict]]]:
    """The document's text rebuilt from the sentences' texts (see the module docstring), and
    each sentence with its tokens' offsets in it."""
    text_parts: list[str] = []
    pos_py = 0  # length of the text so far (Python characters)
    prev_end = 0  # the previous sentence's end in the file's offsets
    sents: list[tuple[list[tuple[int, int]], dict]] = []
    for s in sentences:
        stext = "\n".join(s["text"]) if s["text"] else " ".join(t[2] for t in s["tokens"])
        first = s["tokens"][0][0]
        gap = max(0, first - prev_end) if sents else first
        if gap:
            text_parts.append((" " * (gap - 1) + "\n") if sents else " " * gap)
            pos_py += gap
        offs = _sentence_offsets(path, s, stext, pos_py)
        text_parts.append(stext)
        pos_py += len(stext)
        # the file's offsets count UTF-16 code units (UIMA's Java strings): a character outside
        # the BMP counts two there, one in Python
        prev_end = max(prev_end, first + len(stext.encode("utf-16-le")) // 2)
        sents.append((offs, s))
    return "".join(text_parts) + "\n", sents


class _Values:
    """The entity values of the token cells: entities on one token (``PER``), tokens of
    entities that span several (``PER[3]``, by id), and how many have no label."""

    def __init__(self) -> None:
        self.groups: dict[str, list] = {}
        self.singles: list[tuple[int, int, int, str, int]] = []
        self.unlabelled = 0

    def add(self, k: int, i: int, cell: str, lineno: int) -> None:
        for v in _split_values(cell):
            m = _VALUE.match(v)
            assert m is not None  # the pattern matches every string
            label, ident = _unescape(m.group(1)), m.group(2)
            if label in ("", "*"):
                self.unlabelled += ident is None or ident not in self.groups
                if ident is not None:
                    self.groups.setdefault(ident, []).append(None)
            elif ident is None:
                self.singles.append((k, i, i, label, lineno))
            else:
                self.groups.setdefault(ident, []).append((k, i, label, lineno))


def _group_problem(toks: list) -> str | None:
    """Why the tokens of one id are not read as an entity (``None``: they are)."""
    if any(t is None for t in toks):
        return "unlabelled"
    if len({t[0] for t in toks}) > 1:
        return "crossing"
    if len({t[2] for t in toks}) > 1:  # one id, two labels: which is meant is a guess
        return "mixed"
    first, last = min(t[1] for t in toks), max(t[1] for t in toks)
    if last - first + 1 != len({t[1] for t in toks}):  # tokens left out between its own
        return "gapped"
    return None


def _entities(sents: list[tuple[list[tuple[int, int]], dict]]) -> tuple[list, dict[str, int]]:
    """The entities (sentence, first token, last token, label, line) and the counts of those
    not read (``unlabelled``, ``crossing``, ``mixed``, ``gapped``)."""
    values = _Values()
    for k, (_, s) in enumerate(sents):
        for i, (_, _, _, cell, lineno) in enumerate(s["tokens"]):
            values.add(k, i, cell, lineno)
    counts = {"unlabelled": values.unlabelled, "crossing": 0, "gapped": 0, "mixed": 0}
    ents: list = list(values.singles)
    for toks in values.groups.values():
        problem = _group_problem(toks)
        if problem == "unlabelled":
            continue
        if problem is not None:
            counts[problem] += 1
            continue
        first, last = min(t[1] for t in toks), max(t[1] for t in toks)
        ents.append((toks[0][0], first, last, toks[0][2], toks[0][3]))
    return ents, counts


def _notes(col: int | None, counts: dict[str, int]) -> list[str]:
    notes = []
    if col is None:
        notes.append(f"no {NE_LAYER}|value layer in the header: no entities read")
    for key, what in (
        ("unlabelled", "entit{} without a value (*) not read"),
        ("aside", "stacked (overlapping) entit{} set aside (the longest kept)"),
        ("crossing", "entit{} across two sentences not read"),
        ("gapped", "discontinuous entit{} (tokens left out between its own) not read"),
        ("mixed", "entit{} with two labels on one id (PER[3] and LOC[3]) not read"),
        ("subtokens", "sub-token annotation{} not read"),
    ):
        n = counts[key]
        if n:
            plural = ("ies" if n > 1 else "y") if "entit" in what else ("s" if n > 1 else "")
            notes.append(f"{n} " + what.format(plural))
    return notes


def _build(
    path: str,
    sentences: list[dict[str, Any]],
    col: int | None,
    scheme: str | None,
    encoding: str,
    bom: bool,
    raw: str,
    subtokens: int,
) -> Corpus:
    text, sents = _document_text(path, sentences)
    ents, counts = _entities(sents)
    kept, counts["aside"] = _choose(ents)
    counts["subtokens"] = subtokens
    spans: list[list[Span]] = [[] for _ in sents]
    for k, i, j, label, _ in kept:
        spans[k].append(Span(i, j + 1, label))
    doc = Document(id=runtext.doc_id_of(path), text=text)
    for (offs, s), sp in zip(sents, spans):
        doc.sentences.append(
            Sentence(
                [t[2] for t in s["tokens"]], sp, line=s["tokens"][0][4], source=text, offsets=offs
            )
        )
    corpus = Corpus(
        [doc],
        path=os.fspath(path),
        format="webanno",
        scheme=scheme or "iob2",
        encoding=encoding,
        newline="\r\n" if "\r\n" in raw else "\n",
        bom=bom,
        final_newline=raw.endswith("\n"),
    )
    corpus.notes.extend(_notes(col, counts))
    return corpus
