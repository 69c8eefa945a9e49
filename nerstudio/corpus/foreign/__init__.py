"""The formats of other annotation tools (Prodigy, doccano, Label Studio, Hugging Face, brat,
GermEval 2014, OntoNotes, CoNLL-U, WebAnno TSV, plain text, spaCy): one table of handlers,
looked up by name, by content and by extension.

nerstudio's own formats (CoNLL columns, TSV, JSONL) are streamed line by line by
:class:`~nerstudio.corpus.formats.Reader`; the formats here are read whole into a
:class:`~nerstudio.corpus.model.Corpus` by their own module and written whole from one. Every
command and the application reach them through the same entry points
(:func:`~nerstudio.corpus.formats.read_corpus`, ``Reader``, ``write_corpus``, ``convert_file``),
which ask this table first, so a format added here is known everywhere.

A handler module (``nerstudio/corpus/foreign/<module>.py``) defines:

``sniff(path: str, head: str) -> bool``
    whether the file is in this format, from ``head`` (the first 64 KiB, decoded) and, when
    content is not enough, its name; must be cheap and must never raise;
``read(path: str, encoding: str, scheme: str | None) -> Corpus``
    the whole file, with ``Corpus.format`` set to the handler's name; problems are
    :class:`~nerstudio.errors.FormatError` naming file and line;
``write(corpus: Corpus, path: str, losses: Losses, scheme: str) -> None`` (when ``writable``)
    atomically (:func:`~nerstudio.corpus.atomic.atomic_open`; several files as one save with
    :func:`~nerstudio.corpus.atomic.atomic_files`), in tag ``scheme`` where the format has tags,
    counting in ``losses`` what the format cannot keep, and refusing (naming the sentence) what
    its reader would not read back; in UTF-8 (:func:`utf8`), whatever the input's encoding.

Modules are imported only when a file is sniffed, read or written in their format, so that
start-up stays fast.
"""

from __future__ import annotations

import codecs
import importlib
import os
from dataclasses import dataclass
from types import ModuleType


@dataclass(frozen=True)
class Handler:
    """One format: its name, other names, the extensions that name it, its module and a
    one-line description (``--help``, errors, the README's table)."""

    name: str
    module: str
    description: str
    extensions: tuple[str, ...] = ()
    aliases: tuple[str, ...] = ()
    writable: bool = True

    def load(self) -> ModuleType:
        return importlib.import_module(f"{__name__}.{self.module}")


# Order matters for sniffing: the first handler that recognises a file wins (specific before
# general: e.g. Prodigy before doccano, both before nerstudio's own JSONL, which is not here).
HANDLERS: tuple[Handler, ...] = (
    Handler("prodigy", "prodigy", "Prodigy JSONL: ner/ner_manual tasks, accepted ones read"),
    Handler(
        "doccano-rel",
        "doccano_rel",
        "doccano JSONL, relation mode: entities with start_offset/end_offset",
        aliases=("doccano-relation", "doccano-relations"),
    ),
    Handler(
        "doccano",
        "doccano",
        "doccano JSONL: text and [start, end, label] triples",
        aliases=("doccano-label", "doccano-labels"),
    ),
    Handler(
        "label-studio",
        "labelstudio",
        "Label Studio JSON export; written as tasks with predictions",
        aliases=("labelstudio", "ls"),
    ),
    Handler(
        "hf",
        "hf",
        "Hugging Face token classification JSON/JSONL: tokens and ner_tags",
        aliases=("huggingface", "hugging-face", "datasets"),
    ),
    # running text with standoff or token-level annotation (helper formats-text); after the JSON
    # formats, plain text last (it must not take a .txt that another format recognises)
    Handler("brat", "brat", "brat standoff: .ann beside a .txt", (".ann",)),
    Handler(
        "germeval",
        "germeval",
        "GermEval 2014 NER (import): the outer level read, the inner one reported",
        (),
        ("germeval2014", "germeval-2014"),
        writable=False,
    ),
    Handler(
        "ontonotes",
        "ontonotes",
        "OntoNotes / CoNLL-2012 *_conll files (import): the named-entity bracket column",
        (),
        ("conll2012", "conll-2012", "onto"),
        writable=False,
    ),
    Handler(
        "conllu", "conllu", "CoNLL-U, entities in MISC NE=/NER=", (".conllu",), ("conll-u", "ud")
    ),
    Handler(
        "webanno",
        "webanno",
        "WebAnno/INCEpTION TSV 3 (import)",
        (),
        ("webanno-tsv", "tsv3", "inception"),
        writable=False,
    ),
    # binary: told by its zlib + msgpack start or its name; spaCy itself only to read and write
    Handler(
        "spacy",
        "spacy_docbin",
        "spaCy DocBin (.spacy), needs the spacy extra",
        (".spacy",),
        ("docbin", "spacy-docbin"),
    ),
    Handler(
        "text",
        "text",
        "plain text, split into sentences and tokens",
        (".txt", ".text"),
        ("txt", "plaintext"),
        writable=False,
    ),
)

BY_NAME = {h.name: h for h in HANDLERS}
ALIASES = {a: h.name for h in HANDLERS for a in h.aliases}


def handler(name: str) -> Handler | None:
    """The handler called ``name`` (or one of its aliases), ``None`` for nerstudio's own formats."""
    key = name.strip().lower()
    return BY_NAME.get(ALIASES.get(key, key))


def writable(name: str) -> bool:
    """Whether nerstudio writes format ``name`` (its own formats, and handlers not marked
    import-only)."""
    h = handler(name)
    return h is None or h.writable


def sniff(path: str, head: str) -> str | None:
    """The name of the first handler that recognises ``path``, else ``None``."""
    for h in HANDLERS:
        try:
            if h.load().sniff(path, head):
                return h.name
        except (OSError, ValueError):  # unreadable or malformed input is not this format: the next
            continue  # handler, then the reader, reports it; a sniffer's own bug is not hidden
    return None


def for_extension(path: str | os.PathLike[str]) -> str | None:
    """The handler named by ``path``'s extension (for output files), else ``None``; formats
    nerstudio does not write name none (a ``.txt`` output keeps meaning the input's format)."""
    name = os.fspath(path).lower()
    for h in HANDLERS:
        if h.writable and any(name.endswith(ext) for ext in h.extensions):
            return h.name
    return None


def utf8(encoding: str) -> str:
    """The encoding to write a format defined as UTF-8 in (JSON and JSON Lines, CoNLL-U, brat:
    every handler here, and nerstudio's own JSONL): ``encoding`` when it is UTF-8 (with or
    without a byte-order mark), else UTF-8. A corpus read from a Latin-1 file is written in
    UTF-8 there, or the other tools would misread every accented letter."""
    return encoding if codecs.lookup(encoding).name in ("utf-8", "utf-8-sig") else "utf-8"


def describe() -> str:
    """``name (description)`` for every handler, for the list of supported formats."""
    return ", ".join(f"{h.name} ({h.description})" for h in HANDLERS)
