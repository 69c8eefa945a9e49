"""How the kernel perceptron's dual models score candidates.

Why a module of its own: :mod:`nerstudio.rerank.kernel` trains the dual perceptron and keeps its
model; the scoring it relies on has two parts of its own. :class:`_MistakeKernel` is the kernel
between the stored sequences (gold and prediction of each mistake) and the candidates of one
sentence: the tagging kernel (normalised or not, computed on the run's store or taken from the β
search's :class:`~nerstudio.rerank.kernel_cache.KernelCache`), optionally the cosine of the
global-feature vectors (:class:`_StoredFeatures`, :func:`unit_rows`), and ``γ·L(a)·L(b)``.
:class:`_Tracker` folds successive models (one more mistake each) into voted and averaged scores
of a whole data set, with the global-feature part of a block of sentences in one sparse product.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ..arrays import rows_dot
from ..nbest import NBestList
from .data import RankingData
from .kernel_cache import KernelCache
from .tagging_kernel import SequenceStore, candidate_self_kernels, normalised


def unit_rows(X) -> sp.csr_matrix:
    """The rows of a sparse matrix scaled to unit length (empty rows stay empty), in float64."""
    X = sp.csr_matrix(X, dtype=np.float64)
    norms = np.sqrt(np.asarray(X.multiply(X).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    return sp.csr_matrix(sp.diags(scale) @ X)


class _StoredFeatures:
    """The global-feature vectors h(x) of the stored sequences, each scaled to unit length, as
    one sparse matrix (rebuilt when sequences were added or removed)."""

    def __init__(self, n_features: int):
        self.n_features = int(n_features)
        self.indices: list[np.ndarray] = []
        self.values: list[np.ndarray] = []
        self._matrix, self._rows = None, -1

    def __len__(self) -> int:
        return len(self.indices)

    def add(self, unit: sp.csr_matrix, row: int) -> None:
        """Append one stored sequence's vector: row ``row`` of ``unit`` (rows of unit length)."""
        a, b = unit.indptr[row], unit.indptr[row + 1]
        self.indices.append(unit.indices[a:b].astype(np.int32))
        self.values.append(unit.data[a:b].astype(np.float64))

    def truncate(self, n: int) -> None:
        del self.indices[n:], self.values[n:]

    def matrix(self) -> sp.csr_matrix:
        if self._rows != len(self):
            lengths = np.array([len(i) for i in self.indices], dtype=np.int64)
            indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
            indices = np.concatenate(self.indices) if self.indices else np.zeros(0, dtype=np.int32)
            values = np.concatenate(self.values) if self.values else np.zeros(0)
            self._matrix = sp.csr_matrix(
                (values, indices, indptr), shape=(len(self), self.n_features)
            )
            self._rows = len(self)
        return self._matrix


class _MistakeKernel:
    """``K'(stored sequence k, candidate)`` as the model uses it: the tagging kernel (normalised
    or not), plus the cosine of the two global-feature vectors when ``feats`` is given, plus
    ``γ · L(stored) · L(candidate)``, over a range of stored sequences."""

    def __init__(
        self,
        store: SequenceStore,
        lam: float,
        normalise: bool,
        gamma: float,
        stored_L: list,
        norm_cache: dict | None = None,
        cache: KernelCache | None = None,
        pool_ids: list | None = None,
        feats: _StoredFeatures | None = None,
    ):
        self.store, self.lam, self.normalise, self.gamma = (
            store,
            float(lam),
            bool(normalise),
            float(gamma),
        )
        self.stored_L = stored_L  # L(x) of every stored sequence (gold and prediction alternate)
        self.norm_cache = (
            norm_cache  # (id of the candidates array, λ) → their K(x, x), kept across runs
        )
        # raw kernel values kept across the runs of a β search, and the cache's number of every
        # stored sequence of this run (None: computed on the store)
        self.cache, self.pool_ids = cache, pool_ids
        self.feats = feats  # h(x) of the stored sequences (None: no global-feature part)

    def cosines(self, unit: sp.csr_matrix, first: int, stop: int) -> np.ndarray:
        """The global-feature part: cosines of the rows of ``unit`` (unit length) with the stored
        sequences ``first .. stop-1``."""
        if self.feats is None:
            raise RuntimeError("no global-feature part in this kernel")  # callers check first
        return (unit @ self.feats.matrix()[first:stop].T).toarray()

    def query_norms(self, words, cands) -> np.ndarray | None:
        if not self.normalise:
            return None
        key = (id(cands), self.lam)
        if self.norm_cache is not None and key in self.norm_cache:
            return self.norm_cache[key][1]
        norms = candidate_self_kernels(words, cands, self.lam, self.store.word_features)
        if self.norm_cache is not None:
            self.norm_cache[key] = (cands, norms)  # holding the array keeps its id unique
        return norms

    def __call__(
        self,
        words,
        cands,
        Lq,
        first: int,
        stop: int,
        tick=None,
        qnorm=None,
        Xq=None,
        lin=None,
        linear: bool = True,
    ) -> np.ndarray:
        """With a global-feature part: ``lin`` is that part already computed (candidates × stored
        sequences ``first .. stop-1``), else ``Xq`` the candidates' feature rows (any scale);
        ``linear=False`` leaves that part out (the caller adds it)."""
        if self.cache is not None and self.pool_ids is not None:  # the two come together
            K = self.cache.kernel(
                words, cands, np.asarray(self.pool_ids[first:stop], dtype=np.int64), tick
            )
        else:
            K = self.store.kernel(words, cands, self.lam, first, stop, tick)
        if self.normalise:
            if qnorm is None:
                qnorm = self.query_norms(words, cands)
            K = normalised(K, qnorm, self.store.self_kernels(self.lam, first, stop))
        if self.feats is not None and linear:
            if lin is None:
                if Xq is None:
                    raise ValueError(
                        "the kernel has a global-feature part: the candidates' features are needed"
                    )
                lin = self.cosines(unit_rows(Xq), first, first + K.shape[1])
            K += lin
        if self.gamma:
            K += self.gamma * np.outer(
                Lq, np.asarray(self.stored_L[first : first + K.shape[1]], dtype=np.float64)
            )
        return K


class _Tracker:
    """Voted and averaged scores of a sequence of dual models on one data set, incrementally.

    Model ``t`` holds the first ``t`` mistakes. :meth:`advance` folds in the mistakes stored
    since the last call; the survival counts of models that have since been replaced are final
    by then, and the current (last) model's count is only read when scores are asked for.
    ``base`` is the fixed weight on L(x) (0 when that weight is learnt through the kernel).
    """

    def __init__(self, data: RankingData, base: float):
        _require_nbest(data)
        self.data = data
        self.sent = np.flatnonzero(data.sizes > 1)  # one-candidate sentences need no scoring
        self.cur = {int(s): base * data.L[data.rows(int(s))] for s in self.sent}  # model t's scores
        self.votes = {int(s): np.zeros(data.sizes[int(s)]) for s in self.sent}  # closed models
        self.wsum = {int(s): np.zeros(data.sizes[int(s)]) for s in self.sent}  # Σ c_t F_t, closed
        self.qnorm: dict[int, np.ndarray | None] = {}
        self.done = 0  # mistakes folded in = index of the current model
        self.closed_total = 0.0  # Σ c_t over the replaced models
        self.base = base
        self._unit = None

    BLOCK_ROWS = 8192  # candidates whose global-feature part is computed in one product

    def unit(self) -> sp.csr_matrix:
        """The data's global-feature rows scaled to unit length (computed once)."""
        if self._unit is None:
            self._unit = unit_rows(self.data.X)
        return self._unit

    def advance(self, kern: _MistakeKernel, n_mistakes: int, counts: np.ndarray, tick) -> None:
        t0, t1 = self.done, n_mistakes
        if t1 <= t0:
            return
        nb, data = _require_nbest(self.data), self.data
        c = np.asarray(counts[t0:t1], dtype=np.float64)  # counts of models t0 .. t1-1 (all final)
        block, b0, b1 = None, 0, 0  # the global-feature part of candidate rows b0 .. b1-1
        for s in self.cur:
            if s not in self.qnorm:
                self.qnorm[s] = kern.query_norms(nb.words[s], nb.candidates[s])
            rows = data.rows(s)
            lin = None
            if kern.feats is not None:
                if rows.stop > b1:  # the next block of sentences, all at once (one sparse product)
                    b0 = rows.start
                    b1 = max(
                        rows.stop,
                        int(
                            data.offsets[
                                np.searchsorted(data.offsets, b0 + self.BLOCK_ROWS, side="right")
                                - 1
                            ]
                        ),
                    )
                    block = kern.cosines(self.unit()[b0:b1], 2 * t0, 2 * t1)
                assert block is not None  # made for the first sentence (rows.stop > b1 = 0)
                lin = block[rows.start - b0 : rows.stop - b0]
            K = kern(
                nb.words[s],
                nb.candidates[s],
                data.L[rows],
                2 * t0,
                2 * t1,
                tick,
                self.qnorm[s],
                lin=lin,
            )
            D = K[:, 0::2] - K[:, 1::2]
            F = np.empty((D.shape[0], t1 - t0 + 1))
            F[:, 0] = self.cur[s]
            np.cumsum(D, axis=1, out=F[:, 1:])
            F[:, 1:] += self.cur[s][:, None]
            top = np.argmax(F[:, :-1], axis=0)
            self.votes[s] += np.bincount(top, weights=c, minlength=F.shape[0])
            self.wsum[s] += rows_dot(F[:, :-1], c)
            self.cur[s] = F[:, -1]
            tick()
        self.closed_total += float(c.sum())
        self.done = t1

    def scores(self, mode: str, last_count: float) -> np.ndarray:
        """Per candidate: votes (``vote``), survival-weighted average score (``average``) or the
        current model's score (``last``); the current model counts ``last_count`` times."""
        data = self.data
        out = np.zeros(data.n_candidates) if mode == "vote" else self.base * data.L.copy()
        norm = self.closed_total + last_count
        for s, f in self.cur.items():
            rows = data.rows(s)
            if mode == "last":
                out[rows] = f
            elif mode == "vote":
                v = self.votes[s].copy()
                v[int(np.argmax(f))] += last_count
                out[rows] = v
            elif norm > 0:
                out[rows] = (self.wsum[s] + last_count * f) / norm
        return out


def _require_nbest(data: RankingData) -> NBestList:
    """The N-best list of ``data``: the words and tag sequences the kernel compares."""
    if data.nbest is None:
        raise ValueError("the kernel perceptron needs the N-best list (words and tags) of the data")
    return data.nbest
