"""Tagging-kernel values kept across the runs of the kernel perceptron's β search.

Why: β is chosen on the development set by one full training run per value of a grid, and each
run spends nearly all its time on K(candidate, stored sequence) — for the training sentences it
visits and for every development sentence. The stored sequences are candidates of the training
sentences, and runs with neighbouring β make mostly the same mistakes in the same order (a
mistake's gold sequence is always the sentence's oracle), so most of those values were already
computed by an earlier run. :class:`KernelCache` keeps every distinct stored sequence once (keyed
by its training sentence and candidate number) and, per query sentence, the raw kernel values
computed so far; a run asks for the columns of its own stored sequences and only the missing
ones are computed. The values are the ones the run would have computed itself (the same compiled
dynamic program on the same sequences), so the β search's results do not change.

Memory: one float per (query candidate, distinct stored sequence) actually asked for; the cache
lives for one ``fit`` only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence

import numpy as np

from ..arrays import sorted_unique
from .tagging_kernel import SequenceStore


class KernelCache:
    """Raw K(query candidate, stored sequence) for one λ, shared by several training runs."""

    def __init__(self, word_features: bool, lam: float, threads: int = 1):
        self.pool = SequenceStore(word_features, threads=threads)
        self.lam = float(lam)
        self._index: dict[Hashable, int] = {}
        # id(candidates array) → [the array (keeps the id unique), column of each pool sequence
        # (-1: not computed), values (candidates × capacity), columns used]
        self._rows: dict[int, list] = {}
        self.computed = 0  # (query sentence, stored sequence) pairs computed
        self.reused = 0  # … and served from the cache

    def sequence(self, key: Hashable, words: Sequence[str], tags: np.ndarray) -> int:
        """The pool number of the stored sequence ``key`` (added on first sight)."""
        p = self._index.get(key)
        if p is None:
            p = self._index[key] = self.pool.add(words, tags)
        return p

    def kernel(
        self,
        words: Sequence[str],
        cands: np.ndarray,
        pool_ids: np.ndarray,
        tick: Callable[[], None] | None = None,
    ) -> np.ndarray:
        """``K[j, c]`` = K(candidate j, pool sequence ``pool_ids[c]``); ``cands`` must be the same
        array object each time the same sentence is asked for."""
        pool_ids = np.asarray(pool_ids, dtype=np.int64)
        entry = self._rows.get(id(cands))
        if entry is None:
            entry = self._rows[id(cands)] = [
                cands,
                np.full(0, -1, dtype=np.int64),
                np.empty((len(cands), 0)),
                0,
            ]
        P = len(self.pool)
        if len(entry[1]) < P:
            grown = np.full(max(P, len(entry[1]) * 3 // 2), -1, dtype=np.int64)
            grown[: len(entry[1])] = entry[1]
            entry[1] = grown
        cols = entry[1]
        need = sorted_unique(pool_ids[cols[pool_ids] < 0])
        self.computed += len(need)
        self.reused += len(pool_ids) - len(need)
        if len(need):
            K = self.pool.kernel(words, cands, self.lam, tick=tick, index=need)
            used = entry[3]
            if used + len(need) > entry[2].shape[1]:
                vals = np.empty((len(cands), max(used + len(need), entry[2].shape[1] * 3 // 2, 64)))
                vals[:, :used] = entry[2][:, :used]
                entry[2] = vals
            entry[2][:, used : used + len(need)] = K
            cols[need] = np.arange(used, used + len(need))
            entry[3] = used + len(need)
        return entry[2][:, cols[pool_ids]]
