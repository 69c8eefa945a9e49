"""Review states on disk: which sentences the annotator has reviewed, kept through save and reload.

A sentence is *pre-annotated* (its entities are a model's suggestion, or nobody looked at it)
until the annotator edits it or accepts it; then it is *reviewed*. The states live in the
:class:`~nerstudio.app.document.Document` (``Document.reviewed``); this module only reads them
from and writes them to files:

* **JSONL** holds them in the file: a reviewed sentence's record gets the field
  ``"nerstudio_review": "reviewed"`` (:data:`~nerstudio.corpus.jsonl.REVIEW_FIELD`); a record
  without it is pre-annotated, so a file with nothing reviewed is written unchanged.
* **every other format** (CoNLL columns, CoNLL-U, brat, the annotation tools' JSON, …) gets a
  sidecar file beside the corpus, ``NAME.nerstudio-review.json`` (:func:`sidecar_path`),
  written atomically after the corpus: the number of sentences, a checksum of their words and
  the indices of the reviewed ones. It is written only when something is reviewed or a sidecar
  exists already (so annotating without the loop leaves no extra file).

Reading never refuses a corpus because of its review states: a sidecar that does not match the
corpus (another number of sentences or other words: the corpus was changed by another program)
or cannot be read, or a record field with an unknown value, is ignored with a note on the
corpus (``Corpus.notes``), which the application shows. No Qt here.
"""

from __future__ import annotations

import json
import os
import zlib
from typing import Sequence

import numpy as np

from ..corpus.atomic import atomic_open
from ..corpus.jsonl import REVIEW_FIELD
from ..corpus.model import Corpus
from ..corpus.writing import Losses, write_corpus

SIDECAR_SUFFIX = ".nerstudio-review.json"
SIDECAR_FORMAT = "nerstudio-review"
SIDECAR_VERSION = 1
REVIEWED = "reviewed"


def in_file(fmt: str | None) -> bool:
    """Whether format ``fmt`` holds the review states in the corpus file itself."""
    return fmt == "jsonl"


def sidecar_path(corpus_path) -> str:
    """``NAME.nerstudio-review.json`` beside the corpus file (or folder) ``corpus_path``."""
    return os.fspath(corpus_path).rstrip("/\\") + SIDECAR_SUFFIX


def words_checksum(corpus: Corpus) -> int:
    """CRC-32 of the corpus's words (a sentence per line, tokens separated by a tab)."""
    crc = 0
    for s in corpus.sentences:
        crc = zlib.crc32(("\t".join(s.words) + "\n").encode("utf-8"), crc)
    return crc


def read_states(corpus: Corpus) -> np.ndarray:
    """Per sentence of ``corpus``: reviewed (True) or pre-annotated, as its file says (see the
    module docstring); all False for a corpus without a file. Problems become notes."""
    out = np.zeros(len(corpus), dtype=bool)
    if not corpus.path:
        return out
    if in_file(corpus.format):
        bad = 0
        for k, s in enumerate(corpus.sentences):
            if s.raw is None or REVIEW_FIELD not in s.raw:
                continue
            try:
                value = json.loads(s.raw).get(REVIEW_FIELD)
            except (ValueError, AttributeError, RecursionError):
                continue  # the reader accepted the record: cannot happen, and nothing to read
            if value == REVIEWED:
                out[k] = True
            elif value is not None:
                bad += 1
                if bad == 1:
                    corpus.notes.append(f"{os.path.basename(corpus.path)}:{s.line}: {REVIEW_FIELD} {value!r} is not "
                                        f"{REVIEWED!r}: the sentence is taken as pre-annotated")
        return out
    side = sidecar_path(corpus.path)
    if not os.path.isfile(side):
        return out
    try:
        with open(side, encoding="utf-8") as f:
            data = json.load(f)
        ks = _check_sidecar(data, corpus)
    except (OSError, ValueError, RecursionError) as exc:
        corpus.notes.append(f"{os.path.basename(side)}: review states not read: {exc}")
        return out
    out[ks] = True
    return out


def _check_sidecar(data, corpus: Corpus) -> np.ndarray:
    if not isinstance(data, dict) or data.get("format") != SIDECAR_FORMAT:
        raise ValueError(f"not a {SIDECAR_FORMAT} file")
    if data.get("version") != SIDECAR_VERSION:
        raise ValueError(f"version {data.get('version')!r} is not {SIDECAR_VERSION}")
    if data.get("sentences") != len(corpus):
        raise ValueError(f"written for {data.get('sentences')!r} sentences, the corpus has {len(corpus)}")
    if data.get("words_crc32") != words_checksum(corpus):
        raise ValueError("written for other words than the corpus's (it was changed since)")
    ks = data.get("reviewed")
    if not isinstance(ks, list) or not all(isinstance(k, int) and not isinstance(k, bool) for k in ks):
        raise ValueError('"reviewed" is not a list of sentence numbers')
    ks = np.asarray(ks, dtype=np.int64)
    if len(ks) and (ks.min() < 0 or ks.max() >= len(corpus)):
        raise ValueError('"reviewed" names a sentence the corpus does not have')
    return ks


def write_sidecar(corpus: Corpus, reviewed: Sequence[bool], corpus_path) -> str | None:
    """Write the sidecar of ``corpus`` saved at ``corpus_path`` (atomically); returns its path,
    or None when nothing is reviewed and there was no sidecar to update."""
    side = sidecar_path(corpus_path)
    ks = np.flatnonzero(np.asarray(reviewed, dtype=bool))
    if not len(ks) and not os.path.exists(side):
        return None
    data = {"format": SIDECAR_FORMAT, "version": SIDECAR_VERSION, "corpus": os.path.basename(os.fspath(corpus_path)),
            "sentences": len(corpus), "words_crc32": words_checksum(corpus), "reviewed": [int(k) for k in ks]}
    with atomic_open(side, encoding="utf-8") as f:
        f.write(json.dumps(data) + "\n")
    return side


def save(corpus: Corpus, reviewed: Sequence[bool], path, fmt: str | None = None,
         losses: Losses | None = None) -> None:
    """Write ``corpus`` to ``path`` in ``fmt`` (default: its own) with its review states: in the
    file (JSONL) or in the sidecar (every other format). Both writes are atomic."""
    fmt = fmt or corpus.format
    reviewed = np.asarray(reviewed, dtype=bool)
    if len(reviewed) != len(corpus):
        raise ValueError(f"{len(reviewed)} review states for {len(corpus)} sentences")
    if in_file(fmt):
        index = {id(s): k for k, s in enumerate(corpus.sentences)}

        def fields(s) -> dict:
            k = index.get(id(s))
            return {REVIEW_FIELD: REVIEWED if k is not None and reviewed[k] else None}
        write_corpus(corpus, path, fmt, losses=losses, record_fields=fields)
        return
    write_corpus(corpus, path, fmt, losses=losses)
    write_sidecar(corpus, reviewed, path)
