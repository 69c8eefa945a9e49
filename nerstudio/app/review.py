"""Review states, notes and flags on disk: what the annotator said of each sentence, kept through save and reload.

A sentence is *pre-annotated* (its entities are a model's suggestion, or nobody looked at it)
until the annotator accepts it, or leaves it after editing it while review is in use
(:mod:`~nerstudio.app.visit`); then it is *reviewed*. The states live in the
:class:`~nerstudio.app.document.Document` (``Document.reviewed``); this module only reads them
from and writes them to files:

* **JSONL** holds them in the file: a reviewed sentence's record gets the field
  ``"nerstudio_review": "reviewed"`` (:data:`~nerstudio.corpus.jsonl.REVIEW_FIELD`); a record
  without it is pre-annotated, so a file with nothing reviewed is written unchanged.
* **Prodigy** tasks hold the same fields in their ``"meta"`` object (which Prodigy keeps and
  shows), e.g. ``"meta": {"nerstudio_review": "reviewed"}``.
* **every other format** (CoNLL columns, CoNLL-U, brat, the annotation tools' JSON, …) gets a
  sidecar file beside the corpus, ``NAME.nerstudio-review.json`` (:func:`sidecar_path`),
  written atomically after the corpus: the number of sentences, a checksum of their words and
  the indices of the reviewed ones. It is written only when something is reviewed or a sidecar
  exists already (so annotating without the loop leaves no extra file).

The annotator's **notes** (free text) and **flags** on sentences (:attr:`Document.notes
<nerstudio.app.document.Document.notes>`, ``Document.flagged``) take the same path: a JSONL
record gets ``"nerstudio_note": "text"`` and ``"nerstudio_flag": true`` (:data:`NOTE_FIELD`,
:data:`FLAG_FIELD`); the sidecar gets ``"notes": {"sentence number": "text"}`` and
``"flagged": [sentence numbers]`` (optional fields of version 1: a sidecar without them has
none). :func:`read_marks` reads them, :func:`save` writes all three.

Reading never refuses a corpus because of its review states: a sidecar that does not match the
corpus (another number of sentences or other words: the corpus was changed by another program)
or cannot be read, or a record field with an unknown value, is ignored with a note on the
corpus (``Corpus.notes``), which the application shows. No Qt here.
"""

from __future__ import annotations

import json
import os
import zlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..corpus.atomic import atomic_open
from ..corpus.fsnames import nofollow_opener
from ..corpus.jsonl import REVIEW_FIELD
from ..corpus.model import Corpus, Sentence, StrPath
from ..corpus.writing import PACE_LINES, Losses, pace_point, write_corpus
from .sidecar import SIDECAR_SUFFIX, sidecar_path  # noqa: F401 (re-exported: review.sidecar_path)

SIDECAR_FORMAT = "nerstudio-review"
SIDECAR_VERSION = 1
REVIEWED = "reviewed"
NOTE_FIELD = "nerstudio_note"  # a JSONL record's note (a string; absent: no note)
FLAG_FIELD = "nerstudio_flag"  # a JSONL record's flag (true; absent: not flagged)


@dataclass
class Marks:
    """The annotator's notes (sentence number → text, never empty) and flags (per sentence)."""

    notes: dict[int, str] = field(default_factory=dict)
    flagged: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))

    @classmethod
    def empty(cls, n: int) -> Marks:
        return cls({}, np.zeros(n, dtype=bool))

    def any(self) -> bool:
        return bool(self.notes) or bool(self.flagged.any())


PRODIGY = "prodigy"  # its tasks' "meta" object holds the same fields as a JSONL record


def in_file(fmt: str | None) -> bool:
    """Whether format ``fmt`` holds the review states (and notes and flags) in the corpus file itself."""
    return fmt in ("jsonl", PRODIGY)


def words_checksum(corpus: Corpus) -> int:
    """CRC-32 of the corpus's words (a sentence per line, tokens separated by a tab)."""
    crc = 0
    for k, s in enumerate(corpus.sentences):
        crc = zlib.crc32(("\t".join(s.words) + "\n").encode("utf-8"), crc)
        if not k % PACE_LINES:
            pace_point()  # a background save's sidecar: the window's thread gets its turns
    return crc


def read_states(corpus: Corpus) -> np.ndarray:
    """Per sentence of ``corpus``: reviewed (True) or pre-annotated, as its file says (see the
    module docstring); all False for a corpus without a file. Problems become notes."""
    return read(corpus)[0]


def read_marks(corpus: Corpus) -> Marks:
    """The notes and flags of ``corpus``'s sentences as its file (JSONL) or sidecar says;
    none for a corpus without a file. Problems become notes."""
    return read(corpus)[1]


def read(corpus: Corpus) -> tuple[np.ndarray, Marks]:
    """The review states and the :class:`Marks` of ``corpus`` in one reading of its records or
    sidecar (see the module docstring). Problems become notes on the corpus, one per problem."""
    out, marks = np.zeros(len(corpus), dtype=bool), Marks.empty(len(corpus))
    if not corpus.path:
        return out, marks
    if in_file(corpus.format):
        _read_records(corpus, out, marks)
        return out, marks
    side = sidecar_path(corpus.path)
    if not os.path.lexists(side):
        return out, marks
    try:  # someone else's folder: a link is not followed, a pipe not waited on
        with open(side, encoding="utf-8", opener=nofollow_opener) as f:
            data = json.load(f)
        ks = _check_sidecar(data, corpus)
    except (OSError, ValueError, RecursionError) as exc:
        corpus.notes.append(
            f"{os.path.basename(side)}: review states, notes and flags not read: {exc}"
        )
        return out, marks
    out[ks] = True
    try:
        marks.notes, flagged = _sidecar_marks(data, len(corpus))
    except ValueError as exc:
        corpus.notes.append(f"{os.path.basename(side)}: notes and flags not read: {exc}")
        return out, marks
    marks.flagged[flagged] = True
    return out, marks


def _fields_of(s: Sentence, fmt: str) -> dict | None:
    """The object holding sentence ``s``'s fields in a file of ``fmt`` (None: none)."""
    if fmt == PRODIGY:
        kept = s.meta.get(PRODIGY) if s.meta else None
        meta = kept.get("meta") if isinstance(kept, dict) else None
        return meta if isinstance(meta, dict) else None
    if s.raw is None or not any(f in s.raw for f in (REVIEW_FIELD, NOTE_FIELD, FLAG_FIELD)):
        return None
    try:
        rec = json.loads(s.raw)
    except (ValueError, RecursionError):
        return None  # the reader accepted the record: cannot happen, and nothing to read
    return rec if isinstance(rec, dict) else None


def _read_records(corpus: Corpus, out: np.ndarray, marks: Marks) -> None:
    name = os.path.basename(corpus.path or "")
    bad_review = bad_mark = 0
    for k, s in enumerate(corpus.sentences):
        rec = _fields_of(s, corpus.format)
        if rec is None:
            continue
        value, note, flag = rec.get(REVIEW_FIELD), rec.get(NOTE_FIELD), rec.get(FLAG_FIELD)
        if value == REVIEWED:
            out[k] = True
        elif value is not None:
            bad_review += 1
            if bad_review == 1:
                corpus.notes.append(
                    f"{name}:{s.line}: {REVIEW_FIELD} {value!r} is not {REVIEWED!r}: the sentence "
                    "is taken as pre-annotated"
                )
        if isinstance(note, str) and note.strip():
            marks.notes[k] = note
        if flag is True:
            marks.flagged[k] = True
        if not (note is None or isinstance(note, str)) or flag not in (None, False, True):
            bad_mark += 1
            if bad_mark == 1:
                corpus.notes.append(
                    f"{name}:{s.line}: {NOTE_FIELD} must be a text and {FLAG_FIELD} true or "
                    "false: what is not is ignored"
                )


def _sidecar_marks(data: dict, n: int) -> tuple[dict[int, str], list[int]]:
    notes = data.get("notes", {})
    if not isinstance(notes, dict) or not all(isinstance(v, str) for v in notes.values()):
        raise ValueError('"notes" is not an object of texts')
    try:
        notes = {int(k): v for k, v in notes.items() if v.strip()}
    except ValueError:
        raise ValueError('"notes" has a key that is not a sentence number') from None
    flagged = data.get("flagged", [])
    if not isinstance(flagged, list) or not all(
        isinstance(k, int) and not isinstance(k, bool) for k in flagged
    ):
        raise ValueError('"flagged" is not a list of sentence numbers')
    if any(not 0 <= k < n for k in [*notes, *flagged]):
        raise ValueError('"notes" or "flagged" names a sentence the corpus does not have')
    return notes, flagged


def _check_sidecar(data: object, corpus: Corpus) -> np.ndarray:
    if not isinstance(data, dict) or data.get("format") != SIDECAR_FORMAT:
        raise ValueError(f"not a {SIDECAR_FORMAT} file")
    if data.get("version") != SIDECAR_VERSION:
        raise ValueError(f"version {data.get('version')!r} is not {SIDECAR_VERSION}")
    if data.get("sentences") != len(corpus):
        raise ValueError(
            f"written for {data.get('sentences')!r} sentences, the corpus has {len(corpus)}"
        )
    if data.get("words_crc32") != words_checksum(corpus):
        raise ValueError("written for other words than the corpus's (it was changed since)")
    ks = data.get("reviewed")
    if not isinstance(ks, list) or not all(
        isinstance(k, int) and not isinstance(k, bool) for k in ks
    ):
        raise ValueError('"reviewed" is not a list of sentence numbers')
    out = np.asarray(ks, dtype=np.int64)
    if len(out) and (out.min() < 0 or out.max() >= len(corpus)):
        raise ValueError('"reviewed" names a sentence the corpus does not have')
    return out


def write_sidecar(
    corpus: Corpus,
    reviewed: Sequence[bool] | np.ndarray,
    corpus_path: StrPath,
    marks: Marks | None = None,
) -> str | None:
    """Write the sidecar of ``corpus`` saved at ``corpus_path`` (atomically) with its review
    states and ``marks``; returns its path, or None when nothing is reviewed, noted or flagged
    and there was no sidecar to update."""
    side = sidecar_path(corpus_path)
    ks = np.flatnonzero(np.asarray(reviewed, dtype=bool))
    marked = marks is not None and marks.any()
    if not len(ks) and not marked and not os.path.exists(side):
        return None
    data: dict[str, object] = {
        "format": SIDECAR_FORMAT,
        "version": SIDECAR_VERSION,
        "corpus": os.path.basename(os.fspath(corpus_path)),
        "sentences": len(corpus),
        "words_crc32": words_checksum(corpus),
        "reviewed": [int(k) for k in ks],
    }
    if marks is not None and marked:
        data["notes"] = {str(k): v for k, v in sorted(marks.notes.items())}
        data["flagged"] = [int(k) for k in np.flatnonzero(marks.flagged)]
    with atomic_open(side, encoding="utf-8") as f:
        f.write(json.dumps(data) + "\n")
    return side


def save(
    corpus: Corpus,
    reviewed: Sequence[bool] | np.ndarray,
    path: StrPath,
    fmt: str | None = None,
    losses: Losses | None = None,
    marks: Marks | None = None,
) -> None:
    """Write ``corpus`` to ``path`` in ``fmt`` (default: its own) with its review states and
    the annotator's ``marks`` (notes and flags): in the file (JSONL) or in the sidecar (every
    other format). Both writes are atomic."""
    fmt = fmt or corpus.format
    states = np.asarray(reviewed, dtype=bool)
    if len(states) != len(corpus):
        raise ValueError(f"{len(states)} review states for {len(corpus)} sentences")
    marks = marks if marks is not None else Marks.empty(len(corpus))
    if len(marks.flagged) != len(corpus):
        raise ValueError(f"{len(marks.flagged)} flags for {len(corpus)} sentences")
    if in_file(fmt):
        index = {id(s): k for k, s in enumerate(corpus.sentences)}

        def fields(s: Sentence) -> dict:
            k = index.get(id(s))
            if k is None:
                return {REVIEW_FIELD: None, NOTE_FIELD: None, FLAG_FIELD: None}
            return {
                REVIEW_FIELD: REVIEWED if states[k] else None,
                NOTE_FIELD: marks.notes.get(k),
                FLAG_FIELD: True if marks.flagged[k] else None,
            }

        if fmt == PRODIGY:
            _write_prodigy(corpus, path, losses, fields)
        else:
            write_corpus(corpus, path, fmt, losses=losses, record_fields=fields)
        return
    write_corpus(corpus, path, fmt, losses=losses)
    write_sidecar(corpus, states, path, marks)


def _write_prodigy(
    corpus: Corpus,
    path: StrPath,
    losses: Losses | None,
    fields: Callable[[Sentence], dict],
) -> None:
    """Write ``corpus`` as Prodigy tasks whose ``"meta"`` gets ``fields(sentence)`` (``None``:
    the key goes): the writer keeps each task's other fields (``Sentence.meta["prodigy"]``), so
    a copy of the corpus (the sentences shared, their ``meta`` replaced) carries them."""
    from .keepboth import frozen, release

    out = frozen(corpus, [s.spans for s in corpus.sentences])
    try:
        for s, t in zip(corpus.sentences, out.sentences):
            kept = dict(t.meta[PRODIGY]) if t.meta and isinstance(t.meta.get(PRODIGY), dict) else {}
            had = isinstance(kept.get("meta"), dict)
            meta = dict(kept["meta"]) if had else {}
            for key, value in fields(s).items():
                if value is None:
                    meta.pop(key, None)
                else:
                    meta[key] = value
            if meta or (had and not kept["meta"]):  # a "meta" emptied of our fields goes
                kept["meta"] = meta
            else:
                kept.pop("meta", None)
            t.meta = {**(t.meta or {}), PRODIGY: kept}
        write_corpus(out, path, PRODIGY, losses=losses)
    finally:
        release(out)
