"""A model folder's tagger and reranker, and their choice for sentences: the one implementation
behind the Python API (:mod:`nerstudio.api`), the pre-annotation of a corpus
(:mod:`nerstudio.app.preannotate`), its command and the application.

It lives here, below the API, the command line and the application, because all three use it
and import-linter's layers let none of them import another. A *model folder* holds
``tagger.npz`` (or ``sequence-tagger.npz``) and, optionally, ``reranker.npz`` (the demo model,
the application's results folders) or ``reranker-<system>.npz`` files (``nerstudio
experiment``'s output). Every sentence is decoded on its own, as a document of one sentence: a
sentence's candidates never depend on the other sentences given with it, so decoding many at
once gives what decoding each alone gives.

A reranker with document context features (``nerstudio experiment``'s default) looks, for each
entity, at the tagger's best candidates of the other sentences of its document and of the list
(:mod:`nerstudio.rerank.context`): its choice needs the whole list and each sentence's document
(:func:`needs_documents`, ``documents`` of :func:`choices`). Without documents every sentence is
a document of its own, so one sentence alone gets no document context.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ..corpus.model import Corpus, Document, Sentence
from ..errors import DataError, SettingsError
from ..nbest import NBestList

TAGGER_FILES = ("tagger.npz", "sequence-tagger.npz")


def load_model_folder(folder, system: str | None = None):
    """``(tagger, reranker or None)`` from a model folder (see the module docstring); a path to
    a tagger file loads the tagger alone. ``system`` picks ``reranker-<system>.npz`` when there
    are several. A missing folder or tagger is a :class:`FileNotFoundError`, an unknown or
    ambiguous system a :class:`ValueError`: both name the folder."""
    from ..tagging import load_tagger

    path = Path(os.fspath(folder))
    if path.is_file():
        return load_tagger(path), None
    if not path.is_dir():
        raise FileNotFoundError(2, "no such folder", str(path))
    tagger_file = next((path / f for f in TAGGER_FILES if (path / f).is_file()), None)
    if tagger_file is None:
        raise FileNotFoundError(
            2, f"no tagger model ({' or '.join(TAGGER_FILES)}) in the folder", str(path)
        )
    return load_tagger(tagger_file), _load_reranker(path, system)


def _load_reranker(path: Path, system: str | None):
    from ..rerank.model import RerankerModel

    by_system = {
        f.name[len("reranker-") : -len(".npz")]: f for f in sorted(path.glob("reranker-*.npz"))
    }
    if system is not None:
        if system not in by_system:
            have = ", ".join(by_system) or "none"
            raise SettingsError(f"{path}: no reranker-{system}.npz (systems here: {have})")
        return RerankerModel.load(by_system[system])
    if (path / "reranker.npz").is_file():
        return RerankerModel.load(path / "reranker.npz")
    if len(by_system) == 1:
        return RerankerModel.load(next(iter(by_system.values())))
    if by_system:
        raise SettingsError(
            f"{path} holds several rerankers ({', '.join(by_system)}): choose one with system="
        )
    return None


def tagger_nbest(tagger, sentences: Sequence[Sentence | Sequence[str]], n: int) -> NBestList:
    """The tagger's ``n`` best candidates of every sentence, one entry per sentence in the order
    given, each sentence decoded on its own. A sentence is a token list or a
    :class:`~nerstudio.corpus.model.Sentence`, whose extra columns (POS, chunk) a model trained
    with them uses; its gold is not read."""
    plain = [
        Sentence(s.words, extra=s.extra) if isinstance(s, Sentence) else Sentence(list(s))
        for s in sentences
    ]
    corpus = Corpus([Document([s]) for s in plain], format="columns")
    return tagger.candidate_lists(corpus, n=n, with_gold=False)


def needs_documents(reranker) -> bool:
    """Whether ``reranker``'s choice for a sentence depends on the other sentences of the list
    (document and corpus context features)."""
    return reranker is not None and bool(
        getattr(getattr(reranker, "features", None), "context", False)
    )


def choices(reranker, nb: NBestList, documents: Sequence[int] | None = None) -> np.ndarray:
    """Per sentence of ``nb``, the index of the chosen candidate: the reranker's pick, or 0 (the
    tagger's best) without a reranker. ``documents``: each sentence's document, for a reranker
    with context features (default: each sentence a document of its own)."""
    if reranker is None:
        return np.zeros(len(nb), dtype=np.int64)
    if needs_documents(reranker):
        docs = list(range(len(nb))) if documents is None else [int(d) for d in documents]
        if len(docs) != len(nb):
            raise DataError(f"{len(docs)} document numbers for {len(nb)} sentences")
        nb.meta["documents"] = docs
    return np.asarray(reranker.predict(reranker.data(nb)), dtype=np.int64)
