"""Work as files: what a remote worker reads, and what it sends back.

An executor on other machines (:mod:`.dask_executor`) must not ship pickled corpora: a job
names its inputs by *path* and the worker reads them itself, and a job's result travels back as
the project's own ``.npz`` + JSON files. This module holds both halves:

inputs
    a :class:`SharedInput` is a small, hashable description of files a worker loads —
    :class:`CorpusFile` (a corpus, checked against a fingerprint of the sentences the caller
    holds, so unsaved edits or a different file at the same path are an error, never a silently
    different result) and :class:`NBestFile` (an N-best list, checked by its SHA-256).
    :func:`load_input` loads one, at most once per worker process (a small cache), through a
    ``resolve`` function that maps the caller's path to a local copy when the file had to be
    shipped; :func:`load_inputs` does that for every input found in a job's settings.
results
    a :class:`ResultFiles` pair (``save(result, folder)``, ``load(folder)``) of module-level
    functions, kept next to each task; :func:`pack_folder` / :func:`unpack_folder` move a
    folder's files as bytes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ..corpus.formats import read_corpus
from ..corpus.model import Corpus
from ..errors import NerstudioError
from .file_hash import sha256_file

CACHE_SIZE = 3  # inputs kept per worker process (a corpus of eng.train's size is about 200 MB)


@runtime_checkable
class SharedInput(Protocol):
    """Files a worker loads by itself (frozen dataclasses: hashable, small to send)."""

    def paths(self) -> tuple[str, ...]:
        """The files read, absolute paths on the caller's machine."""

    def load(self, resolve: Callable[[str], str]) -> Any:
        """The loaded input; ``resolve(path)`` is where this process reads ``path``."""


def _same_path(path: str) -> str:
    return path


def corpus_fingerprint(corpus: Corpus) -> str:
    """SHA-256 of what the learners see: documents, words, extra columns and gold spans."""
    h = hashlib.sha256()
    for d in corpus.documents:
        h.update(b"\x1d")
        for s in d.sentences:
            h.update("\x1f".join(s.words).encode("utf-8", "surrogatepass"))
            for col in s.extra:
                h.update(b"\x1e" + "\x1f".join(col).encode("utf-8", "surrogatepass"))
            h.update(
                b"\x1c"
                + ";".join(f"{a},{b},{t}" for a, b, t in s.spans).encode("utf-8", "surrogatepass")
            )
    return h.hexdigest()


@dataclass(frozen=True)
class CorpusFile:
    """A corpus as a worker reads it: ``part`` is ``"sentences"``, ``"documents"`` or ``"corpus"``."""

    path: str
    part: str
    format: str
    scheme: str
    encoding: str
    fingerprint: str

    @classmethod
    def of(cls, corpus: Corpus, part: str) -> CorpusFile:
        """The file ``corpus`` was read from; raises if it has none."""
        if part not in ("sentences", "documents", "corpus"):
            raise ValueError(f"part must be sentences, documents or corpus, not {part!r}")
        if not corpus.path:
            raise NerstudioError(
                "this corpus has no file: save it before sending work to other machines"
            )
        return cls(
            os.path.abspath(corpus.path),
            part,
            corpus.format,
            corpus.scheme,
            corpus.encoding,
            corpus_fingerprint(corpus),
        )

    def paths(self) -> tuple[str, ...]:
        return (self.path,)

    def cached_as(self) -> CorpusFile:
        """Every part of a corpus shares one cache entry: the whole corpus."""
        return dataclasses.replace(self, part="corpus")

    def load(self, resolve: Callable[[str], str]) -> Corpus:
        local = resolve(self.path)
        corpus = read_corpus(local, self.format, self.scheme, self.encoding)
        corpus.path = self.path  # sentence ids name the caller's file, wherever it was read
        if corpus_fingerprint(corpus) != self.fingerprint:
            raise NerstudioError(
                f"{self.path}: the file differs from the corpus the work was asked for "
                "(unsaved changes, or another file at this path on a worker)"
            )
        return corpus

    def select(self, corpus: Corpus) -> Any:
        return {"corpus": corpus, "sentences": corpus.sentences, "documents": corpus.documents}[
            self.part
        ]


@dataclass(frozen=True)
class NBestFile:
    """An N-best file (``.npz``), identified by its SHA-256."""

    path: str
    sha256: str

    @classmethod
    def of(cls, path) -> NBestFile:
        path = os.path.abspath(os.fspath(path))
        return cls(path, sha256_file(path))

    def paths(self) -> tuple[str, ...]:
        return (self.path,)

    def load(self, resolve: Callable[[str], str]) -> Any:
        from ..nbest import NBestList

        local = resolve(self.path)
        if sha256_file(local) != self.sha256:
            raise NerstudioError(
                f"{self.path}: the file differs from the one the work was asked for"
            )
        return NBestList.load(local)


# ------------------------------------------------------------------------------------------------
# the per-process cache

_cache: OrderedDict = OrderedDict()
_cache_lock = threading.RLock()  # an input may load others (a pair of corpora)


def load_input(source: SharedInput, resolve: Callable[[str], str] = _same_path) -> Any:
    """``source.load(resolve)``, cached per process (the last :data:`CACHE_SIZE` inputs). An input
    may name the entry it shares (``cached_as()``) and pick its part of it (``select(value)``)."""
    key = source.cached_as() if hasattr(source, "cached_as") else source
    with (
        _cache_lock
    ):  # one load at a time: two threads of a worker must not read the same corpus twice
        if key in _cache:
            _cache.move_to_end(key)
            value = _cache[key]
        else:
            value = key.load(resolve)
            _cache[key] = value
            while len(_cache) > CACHE_SIZE:
                _cache.popitem(last=False)
    return source.select(value) if hasattr(source, "select") else value


def clear_cache() -> None:
    with _cache_lock:
        _cache.clear()


def find_inputs(obj) -> list[SharedInput]:
    """Every :class:`SharedInput` inside ``obj`` (nested dicts, lists and tuples)."""
    if isinstance(obj, SharedInput) and dataclasses.is_dataclass(obj):
        return [obj]
    if isinstance(obj, dict):
        return [x for v in obj.values() for x in find_inputs(v)]
    if isinstance(obj, (list, tuple)):
        return [x for v in obj for x in find_inputs(v)]
    return []


def load_inputs(obj, resolve: Callable[[str], str] = _same_path):
    """``obj`` with every :class:`SharedInput` inside replaced by what it loads."""
    if isinstance(obj, SharedInput) and dataclasses.is_dataclass(obj):
        return load_input(obj, resolve)
    if isinstance(obj, dict):
        return {k: load_inputs(v, resolve) for k, v in obj.items()}
    if isinstance(obj, list):
        return [load_inputs(v, resolve) for v in obj]
    if isinstance(obj, tuple):
        return tuple(load_inputs(v, resolve) for v in obj)
    return obj


# ------------------------------------------------------------------------------------------------
# results


@dataclass(frozen=True)
class ResultFiles:
    """How a task's result travels as files: ``save(result, folder)`` writes them (``.npz`` and
    JSON only), ``load(folder)`` reads them back. Both module-level functions."""

    save: Callable[[Any, str], None]
    load: Callable[[str], Any]


def pack_folder(folder: str) -> dict[str, bytes]:
    """The files of ``folder`` (not its subfolders) by name."""
    out = {}
    for name in sorted(os.listdir(folder)):
        path = os.path.join(folder, name)
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out[name] = f.read()
    return out


def unpack_folder(files: dict[str, bytes], folder: str) -> None:
    """Write ``files`` (from :func:`pack_folder`) into ``folder``; names are plain file names."""
    for name, data in files.items():
        if os.path.basename(name) != name or name in ("", ".", ".."):
            raise ValueError(f"not a plain file name: {name!r}")
        with open(os.path.join(folder, name), "wb") as f:
            f.write(data)
