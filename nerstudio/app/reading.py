"""A corpus file read for the document: the corpus, its sentences indexed by entity type, and
the file's fingerprint taken before reading, or why it could not be read.

The window reads a corpus in its worker (:func:`read_corpus_file`, given the worker's
:class:`~nerstudio.app.progress.Progress`: the megabytes read, and a cancel between blocks) and
opens the result in the :class:`~nerstudio.app.document.Document`. A file that cannot be read is
a result too (:class:`CorpusRead` with ``error``), so the window can say why in one line, or
offer another encoding when the bytes were not in the one it was read with.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np

from ..corpus.formats import read_corpus
from ..corpus.model import Corpus
from ..errors import Cancelled, NerstudioError
from .document import type_masks_of
from .ownership import Fingerprint, fingerprint
from .progress import Progress


@dataclass
class CorpusRead:
    """What reading a corpus file gave: the corpus and its per-type sentence masks, or the
    error (``decoding``: the bytes are not in the encoding it was read with — it may be read
    again in another one)."""

    path: str
    encoding: str | None = None
    corpus: Corpus | None = None
    type_masks: dict[str, np.ndarray] | None = None
    error: str = ""
    decoding: bool = False
    disk: Fingerprint | None = None  # the file's fingerprint taken before reading


def decoding_failure(exc: BaseException) -> bool:
    """Whether ``exc`` (a reader's FormatError) was caused by bytes the encoding cannot decode."""
    seen: set[int] = set()
    e: BaseException | None = exc
    while e is not None and id(e) not in seen:
        if isinstance(e, UnicodeDecodeError):
            return True
        seen.add(id(e))
        e = e.__cause__ or e.__context__
    return False


def read_corpus_file(ctx: Progress, path: str, encoding: str | None = None) -> CorpusRead:
    """Read the corpus file ``path`` and index it by entity type (the document's type masks),
    reporting the bytes read to ``ctx`` and honouring its cancellation."""
    name = os.path.basename(path)
    try:
        size = max(os.path.getsize(path), 1)
    except OSError:
        size = 1
    ctx.plan([f"reading {name}", "indexing"])
    ctx.stage(f"reading {name}", "", 0, 1000)
    disk = fingerprint(path)  # before reading: a change made meanwhile shows at the next check

    def watch(pos: int) -> None:
        ctx.check()
        ctx.progress(f"{pos / 1e6:,.1f} of {size / 1e6:,.1f} MB", int(pos * 1000 / size), 1000)

    try:
        corpus = read_corpus(path, encoding=encoding, watch=watch)
    except Cancelled:
        raise
    except (NerstudioError, OSError) as exc:
        return CorpusRead(path, encoding, error=str(exc), decoding=decoding_failure(exc))
    ctx.check()
    ctx.stage("indexing", f"{len(corpus):,} sentences…")
    masks = type_masks_of(corpus)
    ctx.check()
    return CorpusRead(path, encoding, corpus, masks, disk=disk)
