"""The per-sentence flags behind the browser's marks and filters, computed from the document.

:meth:`Document.flags <nerstudio.app.document.Document.flags>` caches them per revision; this
module only derives them from what the document exposes (its corpus, review states, notes and
flags, the attached list's exact candidates and the reranker's choices), so it never writes the
document.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from .document import Document


def sentence_flags(doc: Document) -> dict[str, np.ndarray]:
    """Per corpus sentence of ``doc``: has_nbest, error, changed, missing, rerank_error,
    unreviewed, flagged and noted (see :meth:`~nerstudio.app.document.Document.flags`)."""
    n = len(doc.corpus) if doc.corpus else 0
    out = {
        "has_nbest": np.zeros(n, bool),
        "error": np.zeros(n, bool),
        "changed": np.zeros(n, bool),
        "missing": np.zeros(n, bool),
        "unreviewed": ~doc.reviewed,
        "flagged": doc.flagged.copy(),
        "noted": np.zeros(n, bool),
    }
    out["noted"][list(doc.notes)] = True
    ix = doc.nbest_index
    if ix is None or n == 0:
        return out
    has = ix.row_of >= 0
    out["has_nbest"] = has
    rows = np.where(has, ix.row_of, 0)
    exact = doc.exact()
    sizes = np.diff(ix.offsets)
    if exact is not None:
        first_ok = np.zeros(len(ix.nbest), dtype=bool)
        nz = sizes > 0
        first_ok[nz] = exact[ix.offsets[:-1][nz]]
        any_ok = np.zeros(len(ix.nbest), dtype=bool)
        if len(exact):
            any_ok[nz] = np.logical_or.reduceat(exact, ix.offsets[:-1][nz])
        out["error"] = has & ~first_ok[rows]
        out["missing"] = has & ~any_ok[rows]
    if doc.scored is not None:
        choice = doc.scored.choice
        out["changed"] = has & (choice[rows] > 0)
        if exact is not None:
            pick = ix.offsets[:-1] + np.maximum(choice, 0)
            ok = np.zeros(len(ix.nbest), dtype=bool)
            valid = (choice >= 0) & (sizes > 0)
            ok[valid] = exact[pick[valid]]
            out["rerank_error"] = has & ~ok[rows]
    return out
