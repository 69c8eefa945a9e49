"""Perceptron weights, shared by the structured tagger and the K&T joint trainer.

:class:`AveragedWeights` is a weight vector updated sparsely with its running average kept
lazily; :func:`sparse_weights` rebuilds a dense vector from a model file's (index, value) arrays,
validating them; :func:`shuffled_order` is the seeded order of one training pass.
"""

from __future__ import annotations

import numpy as np


class AveragedWeights:
    """Current weights ``w`` and what is needed for their running average, updated sparsely.

    The average is over the vectors after every example: with c examples seen (:meth:`tick`
    after each) and w_t the vector after example t, mean = (1/c) Σ_{t=1..c} w_t. Lazy form: an
    update Δ made while seeing example t (before its tick) is also added, times t, to ``u``; then
    Σ_t w_t = (c+1)·w − u, so the mean is ((c+1)·w − u) / c and no dense work is ever done per
    example. Initial weights are an update at time 1 (``add`` before the first tick), which gives
    the right mean when training starts from a BPM vector. ``track=False`` keeps ``w`` only.
    """

    def __init__(self, n: int, track: bool = True):
        self.w = np.zeros(int(n), dtype=np.float64)
        self.track = bool(track)
        self.u = np.zeros(int(n) if track else 0, dtype=np.float64)
        self.counter = np.zeros(1, dtype=np.int64)

    @property
    def c(self) -> int:
        """Examples seen so far."""
        return int(self.counter[0])

    def __len__(self) -> int:
        return len(self.w)

    def add(self, idx, vals, scale: float = 1.0) -> None:
        """w[idx] += scale·vals (repeated indices add up), time-stamped with the current example."""
        idx = np.asarray(idx, dtype=np.int64)
        v = np.broadcast_to(np.asarray(vals, dtype=np.float64) * scale, idx.shape)
        np.add.at(self.w, idx, v)
        if self.track:
            np.add.at(self.u, idx, (self.c + 1.0) * v)

    def tick(self, n: int = 1) -> None:
        """An example (or n) has been seen."""
        self.counter[0] += n

    def averaged(self) -> np.ndarray:
        """The mean of the vectors after each example (``w`` itself before any example)."""
        if not self.track or self.c == 0:
            return self.w.copy()
        c = float(self.c)
        return ((c + 1.0) * self.w - self.u) / c

    def grow(self, n: int) -> None:
        """Extend to n weights (new ones are zero and were zero at every past example)."""
        extra = int(n) - len(self.w)
        if extra < 0:
            raise ValueError("cannot shrink the weight vector")
        if extra:
            self.w = np.concatenate([self.w, np.zeros(extra)])
            if self.track:
                self.u = np.concatenate([self.u, np.zeros(extra)])


def sparse_weights(arrays, index: str, value: str, n: int) -> np.ndarray:
    """A dense vector of n weights from a model file's arrays of (sorted indices, values),
    validated (:class:`~nerstudio.persist.Corrupt` names what is wrong)."""
    from ..persist import Corrupt

    idx, val = arrays[index], arrays[value]
    if (
        idx.ndim != 1
        or idx.shape != val.shape
        or idx.dtype.kind not in "iu"
        or val.dtype != np.float64
    ):
        raise Corrupt(f"weight arrays {index!r} and {value!r} have the wrong shape or type")
    if len(idx) and (idx.min() < 0 or idx.max() >= n or np.any(np.diff(idx) <= 0)):
        raise Corrupt(f"weight indices in {index!r} out of range or unsorted")
    if not np.all(np.isfinite(val)):
        raise Corrupt(f"weights in {value!r} are not finite")
    w = np.zeros(n)
    w[idx] = val
    return w


def shuffled_order(n: int, seed: int, tag: int) -> np.ndarray:
    """The permutation of n sequences used for epoch ``tag`` (BPM pass r uses tag 1000 + r)."""
    return np.random.default_rng([int(seed), int(tag)]).permutation(n).astype(np.int64)
