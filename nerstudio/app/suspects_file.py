"""The suspects queue on disk: ``NAME.nerstudio-suspects.json`` beside the corpus.

The queue of suspect annotations (:mod:`.suspects`) outlives the window: it is written beside
the corpus file, like the review sidecar (:mod:`.review`), when a list is made or opened and at
every save (Save as writes it beside the new file), atomically, and only while there is a
queue. It holds the number of sentences and a checksum of their words (the queue is for these
sentences only), where the list came from, and each suspect with whether the annotator
dismissed it. Whether a suggestion was accepted is not stored: the corpus's entities say it.
Dismissals made since the last save are in the recovery file with the unsaved edits (named
by :func:`fingerprint`, the list they belong to).

The folder may come from someone else, so reading is defensive: the file is opened without
following a symbolic link or waiting on a named pipe (:func:`~nerstudio.corpus.fsnames.open_regular`),
a file larger than :data:`MAX_BYTES` is not read, and every field is checked; a file that does
not fit is refused with one line (:class:`~nerstudio.errors.FormatError`), never half read.
A symbolic link (or anything but a regular file) in the file's place is never written through.
No Qt here.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..corpus.atomic import atomic_open
from ..corpus.fsnames import kind_of, open_regular
from ..corpus.model import Corpus, Span, StrPath
from ..errors import FormatError
from .review import words_checksum

if TYPE_CHECKING:
    from ..label_errors import Suspect

SUFFIX = ".nerstudio-suspects.json"
FORMAT = "nerstudio-suspects"
VERSION = 1
MAX_BYTES = 64 * 1024 * 1024  # a queue of a million suspects is far smaller


@dataclass(frozen=True)
class Stored:
    """A queue as its file holds it: the suspects in order, the indices of those dismissed, and
    where the list came from."""

    suspects: tuple[Suspect, ...]
    dismissed: frozenset[int]
    source: str


def path_for(corpus_path: StrPath) -> str:
    """``NAME.nerstudio-suspects.json`` beside the corpus file (or folder) ``corpus_path``."""
    return str(os.fspath(corpus_path)).rstrip("/\\") + SUFFIX


def _span_list(spans: Iterable[Span]) -> list[list[Any]]:
    return [[sp.start, sp.end, sp.label] for sp in spans]


def fingerprint(suspects: Sequence[Suspect]) -> str:
    """A name for the list ``suspects`` (in its order): the same list read back from its file
    has the same one, any other list another. A recovery file names the list its dismissals
    (indices into it) are for with it."""
    items = [
        [
            s.sentence,
            float(s.score),
            s.start,
            s.end,
            _span_list(sorted(s.gold)),
            _span_list(sorted(s.suggested)),
            s.evidence,
        ]
        for s in suspects
    ]
    text = json.dumps(items, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def write(
    corpus_path: StrPath,
    corpus: Corpus,
    suspects: Sequence[Suspect],
    dismissed: Iterable[int],
    source: str,
    checksum: int | None = None,
) -> str:
    """Write the queue of ``corpus`` (saved at ``corpus_path``) atomically; returns the file's
    path. ``checksum``: :func:`~.review.words_checksum` of the corpus, when known. Raises
    OSError (a :class:`~nerstudio.corpus.fsnames.NotRegular` when something other than a
    regular file is in its place) and nothing is written then."""
    path = path_for(corpus_path)
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        mode = None
    if mode is not None and not stat.S_ISREG(mode):
        raise OSError(f"{path} is {kind_of(mode)}, not a regular file: not written")
    gone = set(dismissed)
    data = {
        "format": FORMAT,
        "version": VERSION,
        "corpus": os.path.basename(str(os.fspath(corpus_path)).rstrip("/\\")),
        "sentences": len(corpus),
        "words_crc32": words_checksum(corpus) if checksum is None else checksum,
        "source": source,
        "suspects": [
            {
                "sentence": s.sentence,
                "score": _score_out(s.score),
                "start": s.start,
                "end": s.end,
                "gold": _span_list(s.gold),
                "suggested": _span_list(s.suggested),
                "evidence": s.evidence,
                "dismissed": i in gone,
            }
            for i, s in enumerate(suspects)
        ],
    }
    with atomic_open(path, encoding="utf-8") as f:
        f.write(json.dumps(data, ensure_ascii=False, allow_nan=False) + "\n")
    return path


def _score_out(score: float) -> float | str:
    """A score as JSON: a number, or ``"inf"`` / ``"-inf"`` as the TSV spells them (a gold type
    the model does not know; nothing but gold proposed), since JSON has no infinity."""
    value = float(score)
    if math.isinf(value):
        return "inf" if value > 0 else "-inf"
    return value


def read(corpus: Corpus, checksum: int | None = None) -> Stored | None:
    """The queue stored beside ``corpus``'s file; None when there is none (or no file).
    Raises :class:`~nerstudio.errors.FormatError` naming the file when it cannot be used."""
    if not corpus.path:
        return None
    path = path_for(corpus.path)
    if not os.path.lexists(path):
        return None
    try:
        fd = open_regular(path)
        with os.fdopen(fd, "rb") as f:
            size = os.fstat(f.fileno()).st_size
            if size > MAX_BYTES:
                raise FormatError(path, None, f"{size:,} bytes: too large for a suspects list")
            raw = f.read(MAX_BYTES + 1)
    except OSError as exc:
        raise FormatError(path, None, f"cannot be read: {exc.strerror or exc}") from None
    try:
        data = json.loads(raw.decode("utf-8"))
        return _check(data, corpus, checksum)
    except (ValueError, RecursionError) as exc:  # UnicodeDecodeError and JSON errors too
        raise FormatError(path, None, str(exc) or type(exc).__name__) from None


def _need(ok: bool, what: str) -> None:
    if not ok:
        raise ValueError(what)


def _is_int(x: object) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _spans(x: object, start: int, end: int, where: str) -> tuple[Span, ...]:
    _need(isinstance(x, list), f"{where} is not a list of entities")
    assert isinstance(x, list)
    out = []
    for item in x:
        ok = (
            isinstance(item, list)
            and len(item) == 3
            and _is_int(item[0])
            and _is_int(item[1])
            and isinstance(item[2], str)
            and bool(item[2])
        )
        _need(ok, f"{where}: {item!r} is not an entity [start, end, label]")
        sp = Span(item[0], item[1], item[2])
        _need(start <= sp.start < sp.end <= end, f"{where}: {item!r} is outside its region")
        out.append(sp)
    return tuple(sorted(out))


def _suspect(x: object, corpus: Corpus, i: int) -> tuple[Suspect, bool]:
    from ..label_errors import Suspect

    where = f"suspect {i + 1}"
    _need(isinstance(x, dict), f"{where} is not an object")
    assert isinstance(x, dict)
    k, start, end, score = x.get("sentence"), x.get("start"), x.get("end"), x.get("score")
    if not (isinstance(k, int) and not isinstance(k, bool) and 0 <= k < len(corpus)):
        raise ValueError(f"{where}: no sentence {k!r} in the corpus")
    n = len(corpus.sentences[k])
    if not (_is_int(start) and _is_int(end)):
        raise ValueError(f"{where}: region {start!r}-{end!r} is not two token positions")
    assert isinstance(start, int) and isinstance(end, int)
    _need(0 <= start < end <= n, f"{where}: region {start}-{end} is not inside sentence {k + 1}")
    if score in ("inf", "-inf"):  # see _score_out
        score = float(score)
    if isinstance(score, bool) or not isinstance(score, (int, float)):
        raise ValueError(f"{where}: score {score!r} is not a number")
    try:
        value = float(score)  # a whole number too large for a float: OverflowError
    except OverflowError:
        value = math.nan
    _need(not math.isnan(value), f"{where}: score {score!r} is not a number")
    evidence, dismissed = x.get("evidence"), x.get("dismissed")
    _need(isinstance(evidence, str), f"{where}: evidence is not a text")
    _need(isinstance(dismissed, bool), f"{where}: dismissed is not true or false")
    gold = _spans(x.get("gold"), start, end, f"{where}: gold")
    suggested = _spans(x.get("suggested"), start, end, f"{where}: suggested")
    _need(gold != suggested, f"{where}: gold and suggestion are the same")
    assert isinstance(evidence, str)
    return Suspect(k, value, start, end, gold, suggested, evidence), bool(dismissed)


def _check(data: object, corpus: Corpus, checksum: int | None) -> Stored:
    _need(isinstance(data, dict) and data.get("format") == FORMAT, f"not a {FORMAT} file")
    assert isinstance(data, dict)
    version = data.get("version")
    _need(version == VERSION, f"version {version!r} is not {VERSION}")
    n = data.get("sentences")
    _need(n == len(corpus), f"written for {n!r} sentences, the corpus has {len(corpus)}")
    crc = words_checksum(corpus) if checksum is None else checksum
    _need(data.get("words_crc32") == crc, "written for other words than the corpus's")
    source, items = data.get("source"), data.get("suspects")
    _need(isinstance(source, str), '"source" is not a text')
    _need(isinstance(items, list), '"suspects" is not a list')
    assert isinstance(source, str) and isinstance(items, list)
    suspects, dismissed = [], set()
    for i, x in enumerate(items):
        s, gone = _suspect(x, corpus, i)
        suspects.append(s)
        if gone:
            dismissed.add(i)
    return Stored(tuple(suspects), frozenset(dismissed), source)
