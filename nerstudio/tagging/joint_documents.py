"""The documents a joint tagger trains and decodes on, with their non-local feature vectors.

Why a module of its own: Kazama & Torisawa's joint training (:mod:`nerstudio.tagging.joint`)
scores every candidate labelling of a document with its non-local features Φ^g, many times per
epoch; :class:`Documents` holds a set of documents (their sequences, their local part, their
entities' index) and caches each candidate's Φ^g, as ids for the training documents (which grow
the vocabulary) and as feature strings or compiled counts mapped anew for the others.
:func:`sentence_spans` cuts a document labelling back into sentences.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

import numpy as np

from ..corpus.model import Span
from ..nbest import entity_types, scn_spans
from ..text.nonlocal_features import DocumentIndex, NonLocalFeatures
from .joint_local import Local
from .sequences import Sequences

__all__ = ["Documents", "sentence_spans"]


def sentence_spans(
    tags: np.ndarray, offsets: Sequence[int] | np.ndarray, tagset: Sequence[str]
) -> list[list[Span]]:
    """Split a document labelling into per-sentence spans (``offsets``: sentence starts + end).
    An entity running over a sentence boundary is cut there, as scoring per sentence does."""
    offsets = np.asarray(offsets, dtype=np.int64)
    _, a, b, lab = scn_spans(np.asarray(tags)[None, :], tagset)
    types = entity_types(tagset)
    out: list[list[Span]] = [[] for _ in range(len(offsets) - 1)]
    for s, e, li in zip(a.tolist(), b.tolist(), lab.tolist()):
        k = int(np.searchsorted(offsets, s, side="right")) - 1
        while s < e:  # cut at every sentence end the entity runs over
            end = min(e, int(offsets[k + 1]))
            out[k].append(Span(s - int(offsets[k]), end - int(offsets[k]), types[li]))
            s, k = end, k + 1
    return out


def _spans(a: np.ndarray, b: np.ndarray, lab: np.ndarray, types: Sequence[str]) -> list[Span]:
    """The entities of one candidate from its starts, ends and type ids."""
    return [Span(int(x), int(y), types[z]) for x, y, z in zip(a, b, lab)]


class Documents:
    """One set of documents: sequences, their local part, and non-local vectors (cached)."""

    def __init__(self, seqs: Sequences, local: Local, nl: NonLocalFeatures, tagset, grow: bool):
        self.seqs, self.local, self.nl, self.tagset, self.grow = seqs, local, nl, tagset, grow
        self.index = [DocumentIndex(w) for w in seqs.words]
        self._cache: list[dict] = [{} for _ in seqs.words]
        self._gold: dict[int, tuple] = {}
        self._types = entity_types(tagset) or [""]

    def __len__(self) -> int:
        return len(self.seqs.words)

    def spans(self, Y: np.ndarray) -> list[list[Span]]:
        """Entities of every candidate (rows of Y), vectorised."""
        c, a, b, lab = scn_spans(np.asarray(Y), self.tagset)
        types = self._types
        out: list[list[Span]] = [[] for _ in range(len(Y))]
        for ci, ai, bi, li in zip(c.tolist(), a.tolist(), b.tolist(), lab.tolist()):
            out[ci].append(Span(ai, bi, types[li]))
        return out

    #: count the features with the compiled code on integer ids (False: the string form, the
    #: reference the tests compare it with; the vectors are the same)
    compiled = True

    def nonlocal_vectors(self, i: int, Y: np.ndarray) -> list:
        """Φ^g of every candidate of document i (see :meth:`nonlocal_vector`)."""
        cache = self._cache[i]
        if len(cache) > 5000:
            cache.clear()
        keys = [y.tobytes() for y in Y]
        todo = [k for k, key in enumerate(keys) if key not in cache]
        if todo and self.compiled:
            self._count(i, Y[todo], [keys[k] for k in todo], cache)
        elif todo:
            for k, sp in zip(todo, self.spans(Y[todo])):
                if self.grow:
                    cache[keys[k]] = self.nl.vector(self.index[i], sp, grow=True)
                else:
                    cache[keys[k]] = [self.nl.strings(self.index[i], sp), None, None]
        if self.grow:
            return [cache[key] for key in keys]
        return [self._ids(cache[key]) for key in keys]

    def _count(self, i: int, Y: np.ndarray, keys: list, cache: dict) -> None:
        """The compiled counts of the candidates Y of document i into the cache: ids for the
        training documents, (codes, counts) for the others (their ids follow the vocabulary)."""
        c, a, b, lab = scn_spans(np.asarray(Y), self.tagset)
        cptr = np.searchsorted(c, np.arange(len(Y) + 1))
        types, doc = self._types, self.index[i]
        for k, (codes, counts) in enumerate(self.nl.code_vectors(doc, cptr, a, b, lab, types)):
            if self.grow:
                p, q = cptr[k], cptr[k + 1]
                cache[keys[k]] = self.nl.ids_of(
                    codes,
                    counts,
                    types,
                    grow=True,
                    doc=doc,
                    spans=partial(_spans, a[p:q], b[p:q], lab[p:q], types),
                )
            else:
                cache[keys[k]] = [(codes, counts), None, None]

    def nonlocal_vector(self, i: int, tags: np.ndarray):
        """Φ^g of a candidate. Training documents grow the vocabulary, so their vectors are
        complete and cached as ids; other documents cache feature strings and their ids under
        the vocabulary's size at the time (the vocabulary only grows and never renumbers, so the
        ids are mapped anew only when it has grown since)."""
        return self.nonlocal_vectors(i, np.asarray(tags)[None, :])[0]

    def _ids(self, entry):
        voc = self.nl.vocabulary
        stamp = (id(voc), len(voc))
        if entry[2] != stamp and isinstance(entry[0], tuple):  # compiled counts: (codes, counts)
            entry[1] = self.nl.ids_of(entry[0][0], entry[0][1], self._types, grow=False)
            entry[2] = stamp
        elif entry[2] != stamp:
            pairs = sorted((voc[s], c) for s, c in entry[0].items() if s in voc)
            entry[1] = (
                np.array([p[0] for p in pairs], dtype=np.int64),
                np.array([p[1] for p in pairs], dtype=np.float64),
            )
            entry[2] = stamp
        return entry[1]

    def gold(self, i: int):
        """(gold tags, Φ^g(gold))."""
        hit = self._gold.get(i)
        if hit is None:
            golds = self.seqs.gold
            if golds is None:
                raise ValueError("these documents were read without their gold tags")
            g = np.asarray(golds[i])
            hit = self._gold[i] = (g, self.nonlocal_vector(i, g))
        return hit
