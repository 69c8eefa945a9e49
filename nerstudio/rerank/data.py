"""Ranking data: every candidate of every sentence as a sparse feature row, grouped by sentence.

:class:`RankingData` is what the rerankers learn from and score. For ``n`` candidates in all and
``m`` selected global features it holds

``X``
    ``(n, m)`` CSR matrix of the binary global features h_k(x) (data are all 1, int8);
``L``
    ``(n,)`` L(x), the tagger's log-probability of each candidate;
``offsets``
    ``(S + 1,)``: the candidates of sentence ``i`` are rows ``offsets[i]:offsets[i+1]``;
``oracle``
    per sentence, the index *within its group* of x_i1, the candidate closest to gold (SPEC §3),
    or ``None`` when there is no gold;
``correct`` / ``proposed`` / ``n_gold``
    per candidate, its entities that are correct and all its entities; per sentence, the gold
    entities. Corpus precision, recall and F of *any* choice of one candidate per sentence
    follow from sums of these, so dev-set curves cost a few vector operations per point;
``quality``
    per candidate, the oracle criterion (correct tags, or span F): a sentence whose candidates
    are all equally good carries no ranking information (:meth:`informative`).

The N-best list it was built from is kept in ``nbest`` (words and tags, for display, for the
kernel perceptron and for writing predictions).

:class:`RowsData` is the same data made from the CSR rows of ``X`` (what a reranker's feature
index computes, or a saved copy of them): its ``X`` is built when first read, so showing
saved scores and explaining them (:meth:`RankingData.features_of`) does not import scipy.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..errors import DataError
from ..nbest import NBestList

if TYPE_CHECKING:  # scipy is imported where a matrix is made: reading saved rows needs none
    import scipy.sparse as sp


@dataclass
class RankingData:
    """Candidates as sparse rows grouped by sentence (see the module docstring)."""

    X: sp.csr_matrix
    L: np.ndarray
    offsets: np.ndarray
    oracle: np.ndarray | None = None
    correct: np.ndarray | None = None
    proposed: np.ndarray | None = None
    n_gold: np.ndarray | None = None
    quality: np.ndarray | None = None
    nbest: NBestList | None = None
    feature_names: list[str] = field(default_factory=list)

    def __post_init__(self):
        self.offsets = np.asarray(self.offsets, dtype=np.int64)
        self.L = np.asarray(self.L, dtype=np.float64)
        if self._n_rows() != len(self.L) or self.offsets[-1] != len(self.L):
            raise ValueError("X, L and offsets disagree on the number of candidates")

    def _n_rows(self) -> int:
        return int(self.X.shape[0])

    # -- shape ------------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.offsets) - 1

    @property
    def n_candidates(self) -> int:
        return int(self.offsets[-1])

    @property
    def n_features(self) -> int:
        return int(self.X.shape[1])

    @property
    def sizes(self) -> np.ndarray:
        return np.diff(self.offsets)

    @property
    def group(self) -> np.ndarray:
        """Sentence index of every candidate."""
        return np.repeat(np.arange(len(self), dtype=np.int64), self.sizes)

    @property
    def has_gold(self) -> bool:
        return self.correct is not None and self.n_gold is not None

    def rows(self, i: int) -> slice:
        return slice(int(self.offsets[i]), int(self.offsets[i + 1]))

    def features_of(self, row: int) -> np.ndarray:
        """Active feature ids of candidate ``row`` (a global row number)."""
        return self.X.indices[self.X.indptr[row] : self.X.indptr[row + 1]]

    # -- choices and scores -----------------------------------------------------------------
    def argmax(self, scores: np.ndarray) -> np.ndarray:
        """Per sentence, the index within its group of the highest score (first on ties);
        ``-1`` for a sentence without candidates."""
        return group_argmax(scores, self.offsets)

    def informative(self) -> np.ndarray:
        """Sentences whose candidates are not all equally good (they carry ranking information)."""
        if self.quality is None:
            raise DataError("no gold: ranking information is unknown")
        q = self.quality
        sizes = self.sizes
        ok = sizes > 1
        out = np.zeros(len(self), dtype=bool)
        if ok.any():
            starts = self.offsets[:-1][ok]
            mx = np.maximum.reduceat(q, starts)
            mn = np.minimum.reduceat(q, starts)
            out[ok] = mx > mn
        return out

    def prf(self, choice: np.ndarray) -> tuple[float, float, float]:
        """Corpus precision, recall and F (percent) of one candidate per sentence."""
        correct, proposed, n_gold = self.correct, self.proposed, self.n_gold
        if correct is None or proposed is None or n_gold is None:
            raise DataError("no gold: cannot score")
        choice = np.asarray(choice)
        valid = choice >= 0
        rows = self.offsets[:-1][valid] + choice[valid]
        C = int(correct[rows].sum())
        P = int(proposed[rows].sum())
        G = int(n_gold.sum())
        p = 100.0 * C / P if P else 0.0
        r = 100.0 * C / G if G else 0.0
        f = 200.0 * C / (G + P) if G + P else 0.0
        return p, r, f

    def subset(self, sentences: np.ndarray) -> RankingData:
        """The same data restricted to some sentences (in the given order)."""
        sentences = np.asarray(sentences, dtype=np.int64)
        sizes = self.sizes[sentences]
        offsets = np.zeros(len(sentences) + 1, dtype=np.int64)
        np.cumsum(sizes, out=offsets[1:])
        rows = (
            np.concatenate([np.arange(self.offsets[i], self.offsets[i + 1]) for i in sentences])
            if len(sentences)
            else np.zeros(0, dtype=np.int64)
        )

        def pick(a, by):
            return None if a is None else a[by]

        nb = None
        if self.nbest is not None:
            src = self.nbest
            idx = sentences.tolist()
            nb = NBestList(
                src.tagset,
                [src.words[i] for i in idx],
                [src.candidates[i] for i in idx],
                [src.logprobs[i] for i in idx],
                None if src.gold is None else [src.gold[i] for i in idx],
                [src.ids[i] for i in idx],
                dict(src.meta),
            )
        return RankingData(
            self.X[rows],
            self.L[rows],
            offsets,
            pick(self.oracle, sentences),
            pick(self.correct, rows),
            pick(self.proposed, rows),
            pick(self.n_gold, sentences),
            pick(self.quality, rows),
            nb,
            self.feature_names,
        )


class RowsData(RankingData):
    """Ranking data given as the CSR rows of its binary ``X`` — ``indices`` (int32 feature
    columns) and ``indptr`` (``n + 1`` row starts) over ``n_columns`` columns — which becomes a
    scipy matrix when ``X`` is first read (a learner scoring or training on it); the rest is
    :class:`RankingData`'s. The rows are taken as they are: check them before."""

    def __init__(
        self,
        indices: np.ndarray,
        indptr: np.ndarray,
        n_columns: int,
        L: np.ndarray,
        offsets: np.ndarray,
        **rest,
    ):
        self._rows = (np.asarray(indices), np.asarray(indptr), int(n_columns))
        self._X: sp.csr_matrix | None = None
        # X: made from the rows when read (the property below), never stored
        super().__init__(None, L, offsets, **rest)  # pyright: ignore[reportArgumentType]

    @property  # a field of RankingData, computed here
    def X(self) -> sp.csr_matrix:
        if self._X is None:
            import scipy.sparse as sp

            indices, indptr, n_columns = self._rows
            if indptr[-1] < 2**31 - 1:
                indptr = indptr.astype(np.int32)
            self._X = sp.csr_matrix(
                (np.ones(len(indices), dtype=np.int8), indices, indptr),
                shape=(len(indptr) - 1, n_columns),
            )
        return self._X

    @X.setter
    def X(self, value: None) -> None:  # RankingData's __init__ passes None: the rows stand for it
        if value is not None:
            raise AttributeError("the matrix of a RowsData is made from its rows")

    def _n_rows(self) -> int:
        return len(self._rows[1]) - 1

    @property
    def n_features(self) -> int:
        return self._rows[2]

    def features_of(self, row: int) -> np.ndarray:
        indices, indptr, _ = self._rows
        return indices[indptr[row] : indptr[row + 1]]


def group_argmax(scores: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    """Index within each group of its maximum (the first one on ties), -1 for empty groups."""
    scores = np.asarray(scores, dtype=np.float64)
    S = len(offsets) - 1
    out = np.full(S, -1, dtype=np.int64)
    sizes = np.diff(offsets)
    ok = sizes > 0
    if not ok.any():
        return out
    starts = offsets[:-1][ok]
    mx = np.maximum.reduceat(scores, starts)
    g = np.repeat(np.arange(int(ok.sum())), sizes[ok])
    hit = scores >= mx[g]
    # first hit per group
    pos = np.flatnonzero(hit)
    first = np.full(int(ok.sum()), -1, dtype=np.int64)
    gh = g[pos]
    # positions are increasing, so the first occurrence of each group id is its first hit
    uniq, idx = np.unique(gh, return_index=True)
    first[uniq] = pos[idx]
    out[ok] = first - starts
    return out
