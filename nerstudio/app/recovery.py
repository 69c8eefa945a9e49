"""The recovery journal: every sentence edited since the last save, written beside the corpus.

A JSON file holding, for every sentence edited since the last save, its spans now (plus its
words, to check it still belongs to the corpus it is applied to) and the review state, and,
while the corpus has a suspects list (:mod:`.suspects`), which of its suspects are dismissed
(:class:`QueueState`: the queue owns them, not the document, so they would otherwise be lost
with the window). It is written atomically; after a crash, :func:`read_recovery` reads it back
and the document re-applies the edits as one undoable step, the queue its dismissals with it
(:class:`nerstudio.app.autosave.Autosaver`). It may come from someone else's folder: every field
is validated, and a bad file is a one-line :class:`~nerstudio.errors.FormatError` naming it.

Version 2 added the ``suspects`` field; a file without it is written as version 1, so that an
earlier nerstudio still recovers it, and files of version 1 are read as before.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..corpus.filelock import Instance
from ..corpus.formats import atomic_open
from ..corpus.fsnames import nofollow_opener
from ..corpus.model import Corpus, Span
from ..corpus.schemes import check_spans
from ..errors import DataError, FormatError
from .span_edits import _sorted

RECOVERY_FORMAT = "nerstudio-recovery"
RECOVERY_VERSION = 2  # 2: the suspects queue's dismissals ("suspects")
QUEUE_SINCE = 2  # the first version with the "suspects" field


RECOVERY_SUFFIX = ".recovery.json"


def _recovery_stem(corpus_path: str) -> str:
    ap = os.path.abspath(corpus_path)
    digest = hashlib.sha1(ap.encode("utf-8")).hexdigest()[:12]
    return f"{os.path.basename(ap)}.{digest}"


def recovery_path(corpus_path: str, folder: str, instance: str | None = None) -> str:
    """Where ``instance``'s recovery file of ``corpus_path`` lives in ``folder``: one per corpus
    *and* per instance (``PID-ID``), so two windows editing one corpus never share one. Without
    ``instance``: the name earlier versions used (one per corpus), still read."""
    tag = f".{instance}" if instance else ""
    return os.path.join(folder, f"{_recovery_stem(corpus_path)}{tag}{RECOVERY_SUFFIX}")


def recovery_files(corpus_path: str, folder: str) -> list[str]:
    """Every recovery file of ``corpus_path`` in ``folder`` (any instance's, and the old name)."""
    stem = _recovery_stem(corpus_path) + "."
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    return sorted(
        os.path.join(folder, n) for n in names if n.startswith(stem) and n.endswith(RECOVERY_SUFFIX)
    )


@dataclass(frozen=True)
class QueueState:
    """The suspects queue as a recovery file keeps it: which list (``fingerprint``, of its
    suspects in order, :func:`~nerstudio.app.suspects_file.fingerprint`), how many suspects it
    has, and the indices of those dismissed when the file was written."""

    fingerprint: str
    count: int
    dismissed: frozenset[int]


@dataclass
class Recovery:
    corpus_path: str
    edits: dict[int, list[Span]]  # sentence index -> its spans
    words: dict[int, tuple[str, ...]]
    written: float  # time.time() when written
    owner: dict | None = (
        None  # the instance that wrote it (corpus.filelock.Instance), None in old files
    )
    state: dict | None = None  # review states, notes and flags of every sentence (app.autosave),
    # checked: "reviewed" and "flagged" sorted lists and "notes" keys below "sentences"
    queue: QueueState | None = None  # the suspects queue's dismissals (None: no list, old files)


def write_recovery(
    path: str,
    corpus: Corpus,
    sentences: Sequence[int],
    owner: dict | None = None,
    state: dict | None = None,
    queue: QueueState | None = None,
) -> None:
    """Write the current spans of ``sentences`` of ``corpus`` to ``path`` (atomically);
    ``owner``: the instance writing it (whether it still runs decides whether it is offered);
    ``state``: the document's review states, notes and flags (kept as given, JSON);
    ``queue``: the suspects queue's dismissals (the file is version 1 without them)."""
    sents = corpus.sentences
    obj = {
        "format": RECOVERY_FORMAT,
        "version": 1 if queue is None else QUEUE_SINCE,
        "corpus": os.path.abspath(corpus.path) if corpus.path else None,
        "written": time.time(),
        "owner": owner,
        "sentences": [
            {
                "index": int(k),
                "words": list(sents[k].words),
                "spans": [[s.start, s.end, s.label] for s in sents[k].spans],
            }
            for k in sorted(set(sentences))
        ],
    }
    if state is not None:
        obj["state"] = state
    if queue is not None:
        obj["suspects"] = {
            "list": queue.fingerprint,
            "count": queue.count,
            "dismissed": sorted(queue.dismissed),
        }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_open(path, encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)


def plain_label(label: str) -> bool:
    """A label every corpus format can write: printable, without white space or ``|``, at most
    100 characters (a recovery file's other labels must be ones its corpus has already)."""
    return len(label) <= 100 and all(
        ch.isprintable() and not ch.isspace() and ch != "|" for ch in label
    )


def _bad(path: str, why: str) -> FormatError:
    return FormatError(path, None, f"not a readable recovery file: {why}")


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _indices(path: str, v: object, n: int, what: str) -> list[int]:
    if not isinstance(v, list) or not all(_is_int(k) and 0 <= k < n for k in v):
        raise _bad(path, f"{what} must be a list of sentence numbers below {n}")
    return sorted(set(v))


def _state(path: str, st: object) -> dict:
    """A recovery file's ``state`` checked field by field (see app.autosave.state_of)."""
    if not isinstance(st, dict) or not set(st) <= _STATE_KEYS or "sentences" not in st:
        raise _bad(path, f"its state must be an object with the fields {sorted(_STATE_KEYS)}")
    n = st["sentences"]
    if not _is_int(n) or n < 0:
        raise _bad(path, "its state's sentence count must be a whole number")
    notes = st.get("notes", {})
    if not isinstance(notes, dict) or not all(
        isinstance(t, str) and k.isdecimal() and int(k) < n for k, t in notes.items()
    ):
        raise _bad(path, f"its notes must map sentence numbers below {n} to text")
    return {
        "sentences": n,
        "reviewed": _indices(path, st.get("reviewed", []), n, "its reviewed sentences"),
        "notes": {str(int(k)): t for k, t in notes.items()},
        "flagged": _indices(path, st.get("flagged", []), n, "its flagged sentences"),
    }


def _queue(path: str, q: object) -> QueueState:
    """A recovery file's ``suspects`` checked field by field (see :class:`QueueState`)."""
    if not isinstance(q, dict) or set(q) != _QUEUE_KEYS:
        raise _bad(path, f"its suspects must be an object with the fields {sorted(_QUEUE_KEYS)}")
    fp, n = q["list"], q["count"]
    if not isinstance(fp, str) or not _FINGERPRINT.fullmatch(fp):
        raise _bad(path, "its suspects list must be named by 64 hexadecimal digits")
    if not _is_int(n) or n < 0:
        raise _bad(path, "its suspects count must be a whole number")
    dismissed = q["dismissed"]
    if not isinstance(dismissed, list) or not all(_is_int(i) and 0 <= i < n for i in dismissed):
        raise _bad(path, f"its dismissed suspects must be a list of numbers below {n}")
    return QueueState(fp, n, frozenset(dismissed))


def _sentence(path: str, i: int, rec: object) -> tuple[int, tuple[str, ...], list[Span]]:
    """One entry of a recovery file's ``sentences``: its index, words and checked spans."""
    if not isinstance(rec, dict) or set(rec) != {"index", "words", "spans"}:
        raise _bad(path, f"sentence entry {i + 1} must have exactly index, words and spans")
    k, words, spans = rec["index"], rec["words"], rec["spans"]
    if not _is_int(k) or k < 0:
        raise _bad(path, f"sentence entry {i + 1} has no valid index")
    if not isinstance(words, list) or not all(isinstance(w, str) for w in words):
        raise _bad(path, f"sentence {k + 1}: its words must be a list of strings")
    if not isinstance(spans, list) or not all(
        isinstance(sp, list)
        and len(sp) == 3
        and _is_int(sp[0])
        and _is_int(sp[1])
        and isinstance(sp[2], str)
        for sp in spans
    ):
        raise _bad(path, f"sentence {k + 1}: each span must be [start, end, label]")
    out = _sorted(spans)
    try:
        check_spans(out, len(words))
    except DataError:
        raise _bad(
            path, f"sentence {k + 1}: its spans overlap or lie outside its {len(words)} words"
        ) from None
    return k, tuple(words), out


_KEYS = {"format", "version", "corpus", "written", "owner", "sentences", "state", "suspects"}
_STATE_KEYS = {"sentences", "reviewed", "notes", "flagged"}
_QUEUE_KEYS = {"list", "count", "dismissed"}
_FINGERPRINT = re.compile("[0-9a-f]{64}")


def read_recovery(path: str) -> Recovery:
    """Read a recovery file, every field checked (it may be damaged, or not nerstudio's):
    raises :class:`~nerstudio.errors.FormatError` naming the file and what is wrong, and
    OSError when it cannot be read at all (also when it is a symbolic link or not a regular
    file). Spans are sorted, inside their sentence and never
    overlap, so a recovery never restores what cannot be saved."""
    try:  # a symbolic link is not followed, a named pipe not waited on (NotRegular, an OSError)
        with open(path, encoding="utf-8", opener=nofollow_opener) as f:
            obj = json.load(f)
    except UnicodeDecodeError:
        raise _bad(path, "it is not UTF-8 text") from None
    except (ValueError, RecursionError) as exc:
        raise _bad(path, f"it is not JSON ({str(exc).splitlines()[0][:200]})") from None
    if not isinstance(obj, dict) or obj.get("format") != RECOVERY_FORMAT:
        raise _bad(path, "it is not a nerstudio recovery file")
    version = obj.get("version", 0)
    if not _is_int(version) or version < 1:
        raise _bad(path, f"its version {version!r} is not a version number")
    if version > RECOVERY_VERSION:
        raise DataError(f"{path}: recovery file version {version} is newer than this nerstudio")
    if not set(obj) <= _KEYS:
        raise _bad(path, f"unknown fields {sorted(set(obj) - _KEYS)}")
    if "suspects" in obj and version < QUEUE_SINCE:
        raise _bad(path, f"version {version} has no suspects field")
    corpus, written, owner = obj.get("corpus"), obj.get("written", 0.0), obj.get("owner")
    if corpus is not None and not isinstance(corpus, str):
        raise _bad(path, "its corpus must be a file name")
    if (
        not isinstance(written, (int, float))
        or isinstance(written, bool)
        or not (math.isfinite(written) and written >= 0)
    ):
        raise _bad(path, "its time of writing must be a number of seconds")
    if owner is not None and Instance.from_dict(owner) is None:
        raise _bad(path, "its owner must name a process and host")
    entries = obj.get("sentences", [])
    if not isinstance(entries, list):
        raise _bad(path, "its sentences must be a list")
    edits, words = {}, {}
    for i, rec in enumerate(entries):
        k, ws, spans = _sentence(path, i, rec)
        if k in edits:
            raise _bad(path, f"sentence {k + 1} is listed twice")
        edits[k], words[k] = spans, ws
    state, queue = obj.get("state"), obj.get("suspects")
    return Recovery(
        corpus or "",
        edits,
        words,
        float(written),
        owner,
        None if state is None else _state(path, state),
        None if queue is None else _queue(path, queue),
    )


def _saved_at(corpus_path: str) -> float:
    """When the corpus was last written: its file's time, or for a folder (a brat collection)
    the newest of the folder and its files."""
    t = os.path.getmtime(corpus_path)
    if os.path.isdir(corpus_path):
        with os.scandir(corpus_path) as it:
            for e in it:
                if e.is_file():
                    t = max(t, e.stat().st_mtime)
    return t


def recovery_is_newer(path: str, corpus_path: str) -> bool:
    """A recovery file exists and was written after the corpus was last saved."""
    try:
        return os.path.getmtime(path) > _saved_at(corpus_path)
    except OSError:
        return False
