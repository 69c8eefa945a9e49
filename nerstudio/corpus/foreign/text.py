"""Plain text (``.txt``): running text with no annotation, so that an annotator with nothing
but text can start (open it, pre-annotate it with a model, correct it, save it as JSONL or brat).

A file is **one document**: its sentences (split by :mod:`nerstudio.corpus.segment`; never
across a blank line) keep their character offsets in the file's text, so that every later save
or export (JSONL, brat) can point back into the original text. brat and the annotation tools
also treat one file as one document; blank lines only bound sentences.

Many token-per-line corpora are named ``.txt`` too (CoNLL-2000's ``train.txt``, WikiGold's
``wikigold.conll.txt``): a ``.txt`` file is plain text only when its content does not look like
a column corpus (see :func:`looks_like_columns`), and a ``.txt`` with a ``.ann`` beside it is
brat's. Plain text is read, never written: it cannot hold the entities, so saving as plain text
is refused with the formats that keep them.
"""

from __future__ import annotations

import os
import re

from ...errors import FormatError
from ..model import Corpus
from . import runtext

EXTENSIONS = (".txt", ".text")
_TAG = re.compile(r"^(?:O|[BIESLUC]|[BIESLUM]-\S+|\S+-[BIESLU]|[NSC])$")
_SAMPLE = 200  # non-blank lines looked at


def looks_like_columns(head: str) -> bool:
    """Whether ``head`` reads as a token-per-line corpus rather than prose: its first line opens
    JSON; or every line (``-DOCSTART-`` aside) is a single word (tokens whose tags are
    missing); or at least half the lines hold two or more fields and end in a tag (``O``,
    ``B-PER``, ``I-NP``, ``S``…); or nearly all hold the same small number of fields (2 to 6)
    with some tag among them."""
    lines = [ln for ln in head.splitlines() if ln.strip()][:_SAMPLE]
    if not lines:
        return False
    if lines[0].lstrip().startswith(("{", "[")):  # JSON: never prose
        return True
    rows = [ln for ln in lines if not ln.startswith("-DOCSTART-")]
    if not rows:
        return True
    counts: dict[int, int] = {}
    tagged = 0
    for ln in rows:
        fields = ln.split("\t") if "\t" in ln else ln.split()
        counts[len(fields)] = counts.get(len(fields), 0) + 1
        if len(fields) >= 2 and _TAG.match(fields[-1].strip()):
            tagged += 1
    if counts.get(1, 0) == len(rows):
        return True
    if tagged >= 0.5 * len(rows):
        return True
    n, most = max(counts.items(), key=lambda kv: kv[1])
    return 2 <= n <= 6 and most >= 0.9 * len(rows) and tagged > 0


def looks_binary(head: str) -> bool:
    """Control characters other than tab, line and page breaks, or a PDF: no text."""
    return head.startswith("%PDF") or any(
        (c < " " and c not in "\t\n\r\f") or c == "\x7f" for c in head[:4096]
    )


def sniff(path: str, head: str) -> bool:
    if (
        not path.lower().endswith(EXTENSIONS) or not head.strip() or looks_binary(head)
    ):  # empty: "no sentences"
        return False
    return not looks_like_columns(head)


def read(path: str, encoding: str, scheme: str | None) -> Corpus:
    text, bom = runtext.read_text(path, encoding)
    doc = runtext.document(text, (), path, runtext.doc_id_of(path))
    if not doc.sentences:
        raise FormatError(path, None, "no sentences: the text is empty")
    return Corpus(
        [doc],
        path=os.fspath(path),
        format="text",
        scheme=scheme or "iob2",
        encoding=encoding,
        newline="\r\n" if "\r\n" in text else "\n",
        bom=bom,
        final_newline=text.endswith("\n"),
    )
