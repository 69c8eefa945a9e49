"""The tagging kernel's dynamic program, compiled (numba).

Why compiled code: the kernel perceptron evaluates K(candidate, stored sequence) for every
candidate of every training, development and test sentence against hundreds of stored
sequences — tens of billions of cells of the dynamic program on CoNLL-2003. Written with numpy
(one vector operation per query position along the whole store), each cell went through about
ten array passes; here each cell is visited once, in a workspace small enough to stay in the
CPU's cache, and the cells whose tags differ (C = 0) cost one comparison.

:func:`kernel_rows` is the same recursion as :func:`nerstudio.rerank.tagging_kernel.tagging_kernel`
(the reference it is tested against) with the candidates' shared suffixes computed once. Stored
sequences are independent of one another, so with ``parallel=True`` they are split between
threads (:func:`kernel_rows_parallel`): every value is computed by exactly the same operations
in the same order, so the results are identical to the serial function's.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, nogil=True)
def _one_sequence(
    tags, ids, s, m, q, node_tag, node_tail, layer_ptr, roots, lam, wc, c0, c1, k0, k1, out, col
):
    """K of every candidate against the stored sequence at ``s`` (``m`` states) into ``out[:, col]``."""
    n_slots, ell = q.shape
    for a in range(ell):
        for b in range(m):
            w = 1.0
            for sl in range(n_slots):
                if ids[sl, s + b] == q[sl, a]:
                    w += 1.0
            wc[a, b] = w
    prev_c, cur_c, prev_k, cur_k = c0, c1, k0, k1
    for layer in range(ell):
        a = ell - 1 - layer
        lo = layer_ptr[layer]
        for nd in range(layer_ptr[layer + 1] - lo):
            t = node_tag[lo + nd]
            tl = node_tail[lo + nd]
            tot = 0.0
            if layer == 0:
                for b in range(m):
                    v = wc[a, b] if tags[s + b] == t else 0.0
                    cur_c[nd, b] = v
                    tot += v
            else:
                for b in range(m):
                    v = wc[a, b] * (prev_c[tl, b + 1] * lam + 1.0) if tags[s + b] == t else 0.0
                    cur_c[nd, b] = v
                    tot += v
            cur_c[nd, m] = 0.0  # C past the end of the stored sequence
            cur_k[nd] = tot if layer == 0 else tot + prev_k[tl]
        prev_c, cur_c = cur_c, prev_c
        prev_k, cur_k = cur_k, prev_k
    for j in range(roots.shape[0]):
        out[j, col] = prev_k[roots[j]]


@njit(cache=True, nogil=True)
def _table_sizes(lengths, layer_ptr, ell):
    """The work tables' sizes: one column more than the longest stored sequence, one row per
    node of the widest suffix layer."""
    width = 2
    for k in range(lengths.shape[0]):
        width = max(width, lengths[k] + 1)
    nodes = 1
    for layer in range(ell):
        nodes = max(nodes, layer_ptr[layer + 1] - layer_ptr[layer])
    return width, nodes


@njit(cache=True, nogil=True)
def kernel_rows(tags, ids, starts, lengths, q, node_tag, node_tail, layer_ptr, roots, lam, out):
    """``out[j, k]`` = K(candidate j, stored sequence k) for the sequences at ``starts`` (absolute
    positions in ``tags``/``ids``) with ``lengths``.

    ``q`` (slots × query length) are the query words' feature ids (they match ``ids`` where equal;
    -1 and -2 never match). The candidates' distinct suffixes come in layers, position
    ``len-1`` first: layer ``l`` holds nodes ``layer_ptr[l] .. layer_ptr[l+1]-1`` with their tag
    (``node_tag``) and the index of their tail in the layer before (``node_tail``, local);
    ``roots[j]`` is candidate j's node in the last layer.
    """
    ell = q.shape[1]
    width, nodes = _table_sizes(lengths, layer_ptr, ell)
    wc = np.empty((ell, width))
    c0 = np.empty((nodes, width))
    c1 = np.empty((nodes, width))
    k0 = np.empty(nodes)
    k1 = np.empty(nodes)
    for k in range(starts.shape[0]):
        _one_sequence(
            tags,
            ids,
            starts[k],
            lengths[k],
            q,
            node_tag,
            node_tail,
            layer_ptr,
            roots,
            lam,
            wc,
            c0,
            c1,
            k0,
            k1,
            out,
            k,
        )


@njit(cache=True, nogil=True, parallel=True)
def kernel_rows_parallel(
    tags, ids, starts, lengths, q, node_tag, node_tail, layer_ptr, roots, lam, out, n_chunks
):
    """:func:`kernel_rows` with the stored sequences split into ``n_chunks`` contiguous chunks
    that run on numba's threads (identical results: each value is computed the same way)."""
    ell = q.shape[1]
    width, nodes = _table_sizes(lengths, layer_ptr, ell)
    n = starts.shape[0]
    for c in prange(n_chunks):
        wc = np.empty((ell, width))
        c0 = np.empty((nodes, width))
        c1 = np.empty((nodes, width))
        k0 = np.empty(nodes)
        k1 = np.empty(nodes)
        for k in range(c * n // n_chunks, (c + 1) * n // n_chunks):
            _one_sequence(
                tags,
                ids,
                starts[k],
                lengths[k],
                q,
                node_tag,
                node_tail,
                layer_ptr,
                roots,
                lam,
                wc,
                c0,
                c1,
                k0,
                k1,
                out,
                k,
            )


@njit(cache=True, nogil=True)
def suffix_nodes(cands):
    """The candidates' distinct suffixes, layer by layer (see :func:`kernel_rows`).

    Returns ``node_tag``, ``node_tail``, ``layer_ptr`` and ``roots``: layer ``l`` (position
    ``len-1-l``) holds one node per distinct suffix starting there, in order of the first
    candidate that has it."""
    n, ell = cands.shape
    node_tag = np.empty(n * ell, dtype=np.int64)
    node_tail = np.empty(n * ell, dtype=np.int64)
    layer_ptr = np.zeros(ell + 1, dtype=np.int64)
    tail = np.zeros(n, dtype=np.int64)
    new = np.empty(n, dtype=np.int64)
    count = 0
    for layer in range(ell):
        a = ell - 1 - layer
        lo = count
        for j in range(n):
            found = -1
            for j2 in range(j):
                if cands[j2, a] == cands[j, a] and tail[j2] == tail[j]:
                    found = new[j2]
                    break
            if found < 0:
                found = count - lo
                node_tag[count] = cands[j, a]
                node_tail[count] = tail[j]
                count += 1
            new[j] = found
        layer_ptr[layer + 1] = count
        for j in range(n):
            tail[j] = new[j]
    return node_tag[:count], node_tail[:count], layer_ptr, tail
