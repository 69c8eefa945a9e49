"""Span edits for annotation and a recovery journal, as plain functions (no Qt).

Every edit takes the gold spans of one sentence and returns a new sorted list; nothing is changed
in place, so an undo command only has to keep the lists before and after. Spans never overlap:
typing a selection replaces the spans under it, but moving a boundary (:func:`resize`) only
takes tokens from a neighbour and refuses to swallow one whole (:class:`EditRefused`).

The recovery journal is a JSON file holding, for every sentence edited since the last save, its
spans now (plus its words, to check it still belongs to the corpus it is applied to). It is
written atomically; after a crash, :func:`read_recovery` reads the edits back and the document
re-applies them as one undoable step (:class:`nerstudio.app.autosave.Autosaver`).
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass

from .corpus.formats import atomic_open
from .corpus.model import Corpus, Span
from .errors import DataError, NerstudioError

RECOVERY_FORMAT = "nerstudio-recovery"
RECOVERY_VERSION = 1


# --------------------------------------------------------------------------------------------
# span edits


class EditRefused(NerstudioError, ValueError):
    """An edit that would lose an entity the user did not point at (say why, change nothing)."""


def _sorted(spans) -> list[Span]:
    return sorted(Span(*s) for s in spans)


def span_at(spans: Sequence[Span], token: int) -> Span | None:
    """The span covering ``token``, if any."""
    for s in spans:
        if s.start <= token < s.end:
            return s
    return None


def overlapping(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    return [s for s in spans if s.start < end and start < s.end]


def set_label(spans: Sequence[Span], start: int, end: int, label: str) -> list[Span]:
    """A span ``[start, end)`` with ``label``; spans overlapping it are removed."""
    if not 0 <= start < end:
        raise ValueError(f"empty or negative span [{start}, {end})")
    keep = [s for s in spans if not (s.start < end and start < s.end)]
    return _sorted(keep + [Span(start, end, label)])


def clear(spans: Sequence[Span], start: int, end: int) -> list[Span]:
    """Remove every span overlapping ``[start, end)``."""
    return _sorted(s for s in spans if not (s.start < end and start < s.end))


def resize(spans: Sequence[Span], span: Span, start: int, end: int, n_tokens: int) -> list[Span]:
    """Move the boundaries of ``span`` to ``[start, end)`` (clipped to the sentence). A
    neighbour it grows into gives up the tokens it now covers; a neighbour that would lose all
    its tokens is not removed: :class:`EditRefused` is raised instead. A span shrunk to nothing
    disappears."""
    start, end = max(0, start), min(n_tokens, end)
    rest = [s for s in spans if s != span]
    if end <= start:
        return _sorted(rest)
    out = []
    for s in rest:
        if not (s.start < end and start < s.end):
            out.append(s)
            continue
        left, right = Span(s.start, start, s.label), Span(end, s.end, s.label)
        kept = [p for p in (left, right) if p.start < p.end]
        if not kept:
            raise EditRefused(f"the {s.label or 'entity'} next to it has no token left to give")
        out.extend(kept)
    return _sorted(out + [Span(start, end, span.label)])


def split(spans: Sequence[Span], span: Span, at: int) -> list[Span]:
    """Cut ``span`` before token ``at`` into two spans of the same type."""
    if not span.start < at < span.end:
        raise ValueError(f"cannot split {tuple(span)} before token {at}")
    rest = [s for s in spans if s != span]
    return _sorted(rest + [Span(span.start, at, span.label), Span(at, span.end, span.label)])


def merge(spans: Sequence[Span], a: Span, b: Span) -> list[Span]:
    """One span from the first start to the last end of ``a`` and ``b``, typed like the first;
    anything in between is absorbed."""
    first, _last = (a, b) if a.start <= b.start else (b, a)
    return set_label(
        [s for s in spans if s not in (a, b)], first.start, max(a.end, b.end), first.label
    )


def neighbours(spans: Sequence[Span], span: Span) -> tuple[Span | None, Span | None]:
    """The spans just before and just after ``span``."""
    srt = _sorted(spans)
    i = srt.index(span)
    return (srt[i - 1] if i > 0 else None), (srt[i + 1] if i + 1 < len(srt) else None)


def merge_pair(spans: Sequence[Span], caret: int) -> tuple[Span, Span] | None:
    """What ``+`` merges for a caret on ``caret``: the entity there with the one ending right
    before it when the caret is on its first token (so a split is undone by ``+`` where it was
    made), else with the next entity; None when there is nothing to merge."""
    sp = span_at(spans, caret)
    if sp is None:
        return None
    prev, nxt = neighbours(spans, sp)
    if caret == sp.start and prev is not None and prev.end == sp.start:
        return prev, sp
    if nxt is not None:
        return sp, nxt
    return None


# --------------------------------------------------------------------------------------------
# recovery journal


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


@dataclass
class Recovery:
    corpus_path: str
    edits: dict[int, list[Span]]  # sentence index -> its spans
    words: dict[int, tuple[str, ...]]
    written: float  # time.time() when written
    owner: dict | None = (
        None  # the instance that wrote it (corpus.filelock.Instance), None in old files
    )


def write_recovery(
    path: str, corpus: Corpus, sentences: Sequence[int], owner: dict | None = None
) -> None:
    """Write the current spans of ``sentences`` of ``corpus`` to ``path`` (atomically);
    ``owner``: the instance writing it (whether it still runs decides whether it is offered)."""
    sents = corpus.sentences
    obj = {
        "format": RECOVERY_FORMAT,
        "version": RECOVERY_VERSION,
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
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with atomic_open(path, encoding="utf-8") as f:
        json.dump(obj, f, ensure_ascii=False)


def read_recovery(path: str) -> Recovery:
    """Read a recovery file; raises :class:`~nerstudio.errors.DataError` when it is not one."""
    with open(path, encoding="utf-8") as f:
        obj = json.load(f)
    if not isinstance(obj, dict) or obj.get("format") != RECOVERY_FORMAT:
        raise DataError(f"{path}: not a nerstudio recovery file")
    if int(obj.get("version", 0)) > RECOVERY_VERSION:
        raise DataError(
            f"{path}: recovery file version {obj.get('version')} is newer than this nerstudio"
        )
    edits, words = {}, {}
    for rec in obj.get("sentences", []):
        k = int(rec["index"])
        edits[k] = _sorted(Span(int(a), int(b), str(c)) for a, b, c in rec["spans"])
        words[k] = tuple(rec["words"])
    owner = obj.get("owner")
    return Recovery(
        obj.get("corpus") or "",
        edits,
        words,
        float(obj.get("written", 0.0)),
        owner if isinstance(owner, dict) else None,
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
