"""The Collins & Duffy (2002) tagging kernel between tagged sentences, plain and batched.

A tagged sentence is a sequence of states, each a (tag, word) pair. A *fragment* is a
contiguous run of states in which every state keeps its tag and either drops its word or keeps
one of the word's features. The kernel ``K(x, y)`` is the inner product of the two fragment-count
vectors, with a fragment of ``n`` states weighted by ``λ^(n-1)``. It is computed by a dynamic
program: with ``C(a, b)`` the weighted count of common fragments that start at state ``a`` of
``x`` and state ``b`` of ``y``,

    C(a, b) = 0                                 if the tags at a and b differ,
    C(a, b) = c(a, b) · (1 + λ · C(a+1, b+1))   otherwise (C past either end is 0),

and ``K(x, y) = Σ_{a,b} C(a, b)``. ``c(a, b) = 1 + |F(word_a) ∩ F(word_b)|`` counts the ways one
state can be written on both sides: without its word, or with a feature both words have.

Word features ``F(w)`` (each a tagged string, so features of different kinds never meet):

* plain kernel (``word_features=False``): the word itself only, so ``c = 2`` for equal words
  and ``1`` otherwise, as in the paper;
* ``word_features=True``: the word itself; its lowercase form; its collapsed shape (upper-case
  letters → ``X``, lower-case → ``x``, digits → ``d``, other characters kept, runs of one
  symbol collapsed: ``McDonald`` → ``XxXx``, ``1996`` → ``d``, ``U.S.`` → ``X.X.``); "starts with
  a capital letter" (only for words that do); "contains a digit" (only for words that do).
  Two equal words share all of their features.

:func:`tagging_kernel` is the plain reference implementation. :class:`SequenceStore` keeps many
sequences end to end (a separator that matches nothing after each) and evaluates the kernel of
all candidates of one sentence against a whole range of stored sequences at once (compiled,
:mod:`nerstudio.rerank._kernel_compiled`: one small DP table per stored sequence, and
candidates that share a suffix share that part of the work).

The raw kernel grows geometrically with the length of the common runs when ``c·λ > 1`` (word
features give ``c`` up to 5), and a sentence's similarity to itself dwarfs its similarity to
anything else; :func:`normalised` divides by ``sqrt(K(x, x) · K(y, y))`` so that every value is in
[0, 1] (:meth:`SequenceStore.self_kernels` and :func:`candidate_self_kernels` give the norms).

The kernel perceptron that uses it is :mod:`nerstudio.rerank.kernel`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

# -- word features -------------------------------------------------------------------------------

#: Names of the word-feature slots, in order, for ``word_features=True``.
WORD_FEATURE_SLOTS = ("word", "lower", "shape", "initial-capital", "has-digit")


def word_shape(word: str) -> str:
    """Collapsed shape: ``X`` for upper-case letters, ``x`` lower-case, ``d`` digits, other
    characters as they are; runs of one symbol become one."""
    out: list[str] = []
    for ch in word:
        s = "X" if ch.isupper() else "x" if ch.islower() else "d" if ch.isdigit() else ch
        if not out or out[-1] != s:
            out.append(s)
    return "".join(out)


def word_feature_values(word: str, word_features: bool = False) -> tuple[str | None, ...]:
    """The word's feature value in each slot (``None`` = the word lacks that feature).

    With ``word_features=False`` there is one slot, the word itself. Two words share the feature
    of a slot when both values are equal and not ``None``.
    """
    if not word_features:
        return (word,)
    return (
        word,
        word.lower(),
        word_shape(word),
        "cap" if word[:1].isupper() else None,
        "digit" if any(ch.isdigit() for ch in word) else None,
    )


def shared_features(word_a: str, word_b: str, word_features: bool = False) -> int:
    """Number of word features the two words have in common."""
    fa = word_feature_values(word_a, word_features)
    fb = word_feature_values(word_b, word_features)
    return sum(1 for u, v in zip(fa, fb) if u is not None and u == v)


def tagging_kernel(
    tags_x: Sequence,
    words_x: Sequence[str],
    tags_y: Sequence,
    words_y: Sequence[str],
    lam: float = 0.5,
    word_features: bool = False,
) -> float:
    """K(x, y) of two tagged sequences by the plain O(|x|·|y|) dynamic program.

    Tags may be any comparable values (tag ids or strings); ``words_*`` are strings of the same
    lengths as the tags. This is the reference the fast :class:`SequenceStore` is tested against.
    """
    n, m = len(tags_x), len(tags_y)
    if len(words_x) != n or len(words_y) != m:
        raise ValueError("tags and words must have the same length")
    fx = [word_feature_values(w, word_features) for w in words_x]
    fy = [word_feature_values(w, word_features) for w in words_y]
    nxt = [0.0] * (m + 1)  # C(a+1, ·), with C(·, m) = 0
    total = 0.0
    for a in range(n - 1, -1, -1):
        cur = [0.0] * (m + 1)
        for b in range(m - 1, -1, -1):
            if tags_x[a] != tags_y[b]:
                continue
            c = 1 + sum(1 for u, v in zip(fx[a], fy[b]) if u is not None and u == v)
            cur[b] = c * (1.0 + lam * nxt[b + 1])
            total += cur[b]
        nxt = cur
    return total


# -- batched kernel evaluation -------------------------------------------------------------------

_UNKNOWN = -1  # a query word (feature) the store has never seen, or a feature the word lacks
_NEVER = -2  # separators and features a stored word lacks: equal to nothing


class SequenceStore:
    """Tagged sequences laid end to end, for evaluating K(candidate, stored) in batches.

    Words are mapped to integer ids once per feature slot (one slot for the plain kernel, five
    with word features). Each stored sequence is followed by a separator position whose tag
    and features match nothing, so a fragment can never run from one sequence into the next and
    a slice of the store that ends at a separator is self-contained.

    :meth:`kernel` runs the compiled dynamic program (:mod:`._kernel_compiled`) over blocks of
    about ``chunk`` stored positions; with ``threads`` > 1 the sequences of a block are split
    between that many numba threads (the values are the same as with one).
    """

    def __init__(self, word_features: bool = False, chunk: int = 16384, threads: int = 1):
        self.word_features = bool(word_features)
        self.n_slots = len(word_feature_values("", self.word_features))
        self.chunk = int(chunk)
        self.threads = max(int(threads), 1)
        self._vocab: list[dict[str, int]] = [{} for _ in range(self.n_slots)]
        self._margin = 64  # never-matching positions before the first sequence
        self._size = 0  # stored positions, separators included
        self._tags = np.full(self._margin, -1, dtype=np.int16)
        self._ids = np.full((self.n_slots, self._margin), _NEVER, dtype=np.int32)
        self._starts: list[int] = []  # without the margin
        self._lengths: list[int] = []
        self.words: list[tuple[str, ...]] = []  # per stored sequence (for state and display)
        self._norms: dict[float, list[float]] = {}  # per λ: K(k, k) of the first stored sequences

    def __len__(self) -> int:
        return len(self._starts)

    @property
    def n_positions(self) -> int:
        """Stored positions, separators included."""
        return self._size

    def tags_of(self, k: int) -> np.ndarray:
        s = self._margin + self._starts[k]
        return self._tags[s : s + self._lengths[k]].copy()

    def _layout(self, margin: int, need: int) -> None:
        """Make the left margin at least ``margin`` and the arrays at least ``need`` positions
        long past it (new positions never match)."""
        margin = max(margin, self._margin)
        cap = len(self._tags) - self._margin
        if margin == self._margin and need <= cap:
            return
        cap = max(need, 2 * cap, 1024) if need > cap else cap
        tags = np.full(margin + cap, -1, dtype=np.int16)
        ids = np.full((self.n_slots, margin + cap), _NEVER, dtype=np.int32)
        n = self._size
        tags[margin : margin + n] = self._tags[self._margin : self._margin + n]
        ids[:, margin : margin + n] = self._ids[:, self._margin : self._margin + n]
        self._tags, self._ids, self._margin = tags, ids, margin

    def add(self, words: Sequence[str], tags: Sequence[int] | np.ndarray) -> int:
        """Append one tagged sequence; returns its index."""
        tags = np.asarray(tags, dtype=np.int16)
        n = len(words)
        if tags.shape != (n,):
            raise ValueError("tags and words must have the same length")
        if n and tags.min() < 0:
            raise ValueError("tag ids must be non-negative")
        s = self._size
        self._layout(self._margin, s + n + 1 + self._margin)
        g = self._margin + s
        self._tags[g : g + n] = tags
        for a, w in enumerate(words):
            for k, v in enumerate(word_feature_values(w, self.word_features)):
                if v is not None:
                    self._ids[k, g + a] = self._vocab[k].setdefault(v, len(self._vocab[k]))
        self._starts.append(s)
        self._lengths.append(n)
        self.words.append(tuple(words))
        self._size = s + n + 1  # the separator at g + n is already never-matching
        return len(self._starts) - 1

    def truncate(self, n_sequences: int) -> None:
        """Forget every sequence from index ``n_sequences`` on (vocabulary ids are kept)."""
        if n_sequences >= len(self):
            return
        self._size = self._starts[n_sequences]
        g = self._margin + self._size
        self._tags[g:] = -1
        self._ids[:, g:] = _NEVER
        del self._starts[n_sequences:], self._lengths[n_sequences:], self.words[n_sequences:]
        for norms in self._norms.values():
            del norms[n_sequences:]

    def self_kernels(self, lam: float, first: int = 0, stop: int | None = None) -> np.ndarray:
        """``K(k, k)`` of the stored sequences ``first <= k < stop`` (computed once per λ)."""
        stop = len(self) if stop is None else min(stop, len(self))
        norms = self._norms.setdefault(float(lam), [])
        for k in range(len(norms), stop):
            norms.append(
                float(self.kernel(self.words[k], self.tags_of(k)[None, :], lam, k, k + 1)[0, 0])
                if self._lengths[k]
                else 0.0
            )
        return np.asarray(norms[first:stop], dtype=np.float64)

    def encode(self, words: Sequence[str]) -> np.ndarray:
        """``(n_slots, len)`` feature ids of a query sentence (unknown or absent: -1)."""
        out = np.full((self.n_slots, len(words)), _UNKNOWN, dtype=np.int32)
        for a, w in enumerate(words):
            for k, v in enumerate(word_feature_values(w, self.word_features)):
                if v is not None:
                    out[k, a] = self._vocab[k].get(v, _UNKNOWN)
        return out

    def kernel(
        self,
        words: Sequence[str],
        cands: np.ndarray,
        lam: float,
        first: int = 0,
        stop: int | None = None,
        tick: Callable[[], None] | None = None,
        index: np.ndarray | None = None,
    ) -> np.ndarray:
        """``K[j, k - first]`` = K(candidate j, stored sequence k) for ``first <= k < stop``, or with
        ``index`` (stored sequence numbers, any order) ``K[j, c]`` = K(candidate j, ``index[c]``).

        ``cands`` is an ``(n, len)`` array of tag ids of candidates that all share ``words``.
        ``tick`` (if given) is called between blocks of work, e.g. to honour a cancel request.
        """
        from . import _kernel_compiled as kc  # numba: imported on first use

        stop = len(self) if stop is None else min(stop, len(self))
        sel = (
            np.arange(first, max(stop, first))
            if index is None
            else np.asarray(index, dtype=np.int64)
        )
        cands = np.asarray(cands)
        n, ell = cands.shape
        width = len(sel)
        out = np.zeros((n, width), dtype=np.float64)
        if n == 0 or ell == 0 or width == 0:
            return out
        if len(words) != ell:
            raise ValueError("candidates and words must have the same length")
        q = self.encode(words)
        node_tag, node_tail, layer_ptr, roots = kc.suffix_nodes(np.ascontiguousarray(cands))
        starts = np.asarray(self._starts, dtype=np.int64)[sel] + self._margin
        lengths = np.asarray(self._lengths, dtype=np.int64)[sel]
        ends = np.cumsum(lengths + 1)
        k0 = 0
        while k0 < width:  # blocks of whole sequences of about `chunk` positions (at least one)
            k1 = int(np.searchsorted(ends, (ends[k0 - 1] if k0 else 0) + self.chunk, side="right"))
            k1 = min(max(k1, k0 + 1), width)
            block = out[:, k0:k1]
            if self.threads > 1 and k1 - k0 > 1:
                kc.kernel_rows_parallel(
                    self._tags,
                    self._ids,
                    starts[k0:k1],
                    lengths[k0:k1],
                    q,
                    node_tag,
                    node_tail,
                    layer_ptr,
                    roots,
                    float(lam),
                    block,
                    min(self.threads, k1 - k0),
                )
            else:
                kc.kernel_rows(
                    self._tags,
                    self._ids,
                    starts[k0:k1],
                    lengths[k0:k1],
                    q,
                    node_tag,
                    node_tail,
                    layer_ptr,
                    roots,
                    float(lam),
                    block,
                )
            if tick is not None:
                tick()
            k0 = k1
        return out


def candidate_self_kernels(
    words: Sequence[str], cands: np.ndarray, lam: float, word_features: bool = False
) -> np.ndarray:
    """``K(x_j, x_j)`` of every candidate ``j`` of one sentence (for normalising the kernel).

    The dynamic program of :func:`tagging_kernel` run for all candidates at once: the word part
    ``c(a, b)`` is shared (the candidates have the same words), only the tag matches differ."""
    cands = np.asarray(cands)
    n = cands.shape[0]
    ell = cands.shape[1] if cands.ndim == 2 else 0
    if n == 0 or ell == 0:
        return np.zeros(n)
    if len(words) != ell:
        raise ValueError("candidates and words must have the same length")
    feats = [word_feature_values(w, word_features) for w in words]
    c = np.ones((ell, ell))
    for k in range(len(feats[0])):
        index: dict[str, int] = {}
        ids = np.array([-1 if f[k] is None else index.setdefault(f[k], len(index)) for f in feats])
        c += (ids[:, None] == ids[None, :]) & (ids[:, None] >= 0)
    eq = cands[:, :, None] == cands[:, None, :]  # (candidate, a, b): same tag at a and b
    total = np.zeros(n)
    nxt = np.zeros((n, ell + 1))  # C(a+1, ·), with C(·, ell) = 0
    for a in range(ell - 1, -1, -1):
        cur = np.zeros((n, ell + 1))
        cur[:, :ell] = eq[:, a, :] * c[a][None, :] * (1.0 + lam * nxt[:, 1:])
        total += cur[:, :ell].sum(axis=1)
        nxt = cur
    return total


def normalised(K: np.ndarray, query_norms: np.ndarray, stored_norms: np.ndarray) -> np.ndarray:
    """``K(x, y) / sqrt(K(x, x) · K(y, y))`` (0 where either sequence is empty): every value in
    [0, 1] and ``K̂(x, x) = 1``, whatever λ, the word features and the sentence lengths."""
    d = np.sqrt(np.outer(query_norms, stored_norms))
    out = np.zeros_like(K)
    np.divide(K, d, out=out, where=d > 0)
    return out
