"""A reranker's scores of an N-best list, saved beside the reranker: opening that list with that
reranker then costs no feature computation.

The bundled demo ships one (``nerstudio/demo/model/train.scored.npz``, written by
``tools/demo/build_scored.py``), so that the window shows the demo's candidates, their scores
and the features behind them as soon as the demo is open, instead of after every candidate's
global features were computed in the worker. The file holds each candidate's feature columns
(CSR rows), the scores and the reranker's pick per sentence; its header names the files it was
computed from (the corpus, the N-best list, the reranker) by their SHA-256. When any of them
differs (the user edited their copy of the demo corpus, or saved another reranker over the
demo's), or the file is damaged, it is not used and the list is scored as any other.
The format is :mod:`nerstudio.persist`'s (arrays and a JSON header, never pickle). No Qt here.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import numpy as np

from ..corpus.model import Corpus
from ..errors import FormatError
from ..nbest import NBestList
from ..persist import load_npz, save_npz
from ..runtime.predictor import needs_documents
from .attachments import NBestIndex, Scored, index_nbest, with_documents
from .digest import digest

FORMAT = "nerstudio-scored-list"
VERSION = 1
#: what a saved file is checked against: role -> the file it was computed from
Sources = Mapping[str, "str | os.PathLike[str]"]


def save_scored(path: str | os.PathLike[str], scored: Scored, sources: Sources) -> None:
    """Write ``scored`` (a reranker applied to a list: :func:`~.attachments.score_nbest`) to
    ``path``, naming the files ``sources`` it was computed from."""
    X = scored.data.X
    header = {
        "format": FORMAT,
        "version": VERSION,
        "sources": {role: digest(p) for role, p in sorted(sources.items())},
        "n_columns": int(X.shape[1]),
    }
    arrays = {
        "indices": np.asarray(X.indices, dtype=np.int32),
        "indptr": np.asarray(X.indptr, dtype=np.int64),
        "scores": np.asarray(scored.scores, dtype=np.float64),
        "choice": np.asarray(scored.choice, dtype=np.int64),
    }
    save_npz(path, header, arrays)


def _sound(indices: np.ndarray, indptr: np.ndarray, n_columns: int, n_candidates: int) -> bool:
    if indices.ndim != 1 or indptr.ndim != 1 or len(indptr) != n_candidates + 1:
        return False
    if len(indptr) and (indptr[0] != 0 or indptr[-1] != len(indices)):
        return False
    if len(indptr) > 1 and bool((np.diff(indptr) < 0).any()):
        return False
    return not len(indices) or (int(indices.min()) >= 0 and int(indices.max()) < n_columns)


def load_scored(
    path: str | os.PathLike[str], model: Any, nbest: NBestList, sources: Sources
) -> Scored | None:
    """The scores saved in ``path`` of ``nbest`` (attached to its corpus: its gold is the
    corpus's) by ``model``, when every file of ``sources`` is the one they were computed from
    and the file is sound; else None (the caller scores the list itself)."""
    try:
        header, arrays = load_npz(path, FORMAT, VERSION, "a scored N-best list")
        saved = header.get("sources")
        if not isinstance(saved, dict) or set(saved) != set(sources):
            return None
        if any(saved[role] is None or digest(p) != saved[role] for role, p in sources.items()):
            return None
        n_columns = header.get("n_columns")
        indices, indptr = arrays["indices"], arrays["indptr"]
        scores, choice = arrays["scores"], arrays["choice"]
    except (FormatError, OSError, KeyError):
        return None
    n = sum(nbest.n_candidates(i) for i in range(len(nbest)))
    if not isinstance(n_columns, int) or n_columns != model.features.n_features:
        return None
    if not _sound(indices, indptr, n_columns, n) or scores.shape != (n,):
        return None
    sizes = np.array([nbest.n_candidates(i) for i in range(len(nbest))], dtype=np.int64)
    if choice.shape != (len(nbest),) or bool(((choice < 0) | (choice >= sizes)).any()):
        return None
    target = with_documents(nbest)[0] if needs_documents(model) else nbest
    data = model.features.data_from_rows(target, indices, indptr, n_columns)
    return Scored(model, data, scores.astype(np.float64), choice.astype(np.int64))


def attach_with_saved_scores(
    corpus: Corpus,
    nbest: NBestList,
    model: Any,
    path: str | os.PathLike[str],
    sources: Sources,
    revision: int = 0,
) -> tuple[NBestIndex, Scored] | None:
    """``nbest`` lined up with ``corpus`` (:func:`~.attachments.index_nbest`) and its scores by
    ``model`` from the file ``path`` (:func:`load_scored`), or None when the file cannot be used
    (``nbest`` is then attached to the corpus all the same: score it as any list)."""
    ix = index_nbest(corpus, nbest, revision=revision)
    scored = load_scored(path, model, nbest, sources)
    return None if scored is None else (ix, scored)
