"""Compiled kernels of the structured perceptron tagger (numba, ``nogil``).

Weight layout (flat float64 vector ``w``), T tags, P predicates of which P_e have edge features:

* node block: ``w[p * T + y]`` for predicate p and current tag y;
* edge block: ``w[E0 + e * T * T + y_prev * T + y]`` with ``E0 = P * T`` and ``e = edge_of[p]``
  (``-1``: predicate p has no edge features).

Edge features exist from the second token of a sequence on. The score of a tagging is

    s = node(0, y_0);   s = (s + edge(i, y_{i-1}, y_i)) + node(i, y_i)   for i = 1 .. L-1,

where ``node(i, y)`` and ``edge(i, y', y)`` are sums over the token's predicates in CSR order,
starting from 0.0. Viterbi, the k-best search and :func:`score_seq` all add in exactly this order,
so a path's score is bit-for-bit the same whichever routine computes it.

Constraints (hard, not learned): tag ``y`` with ``is_c[y]`` (a C-X tag) may not start a sequence
or a sentence (``starts[token]``), and may follow only the tags ``y'`` with ``allowed[y', y]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

NEG = -np.inf


@njit(cache=True, nogil=True)
def fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge):
    """node[i, y] and edge[i, y' * T + y] for the tokens a .. a+L-1 (edge[0] is not used)."""
    TT = T * T
    for i in range(L):
        r = a + i
        for y in range(T):
            node[i, y] = 0.0
        if i > 0:
            for j in range(TT):
                edge[i, j] = 0.0
        for q in range(indptr[r], indptr[r + 1]):
            p = np.int64(ids[q])
            nb = p * T
            for y in range(T):
                node[i, y] += w[nb + y]
            if i > 0:
                e = edge_of[p]
                if e >= 0:
                    eb = E0 + e * TT
                    for j in range(TT):
                        edge[i, j] += w[eb + j]


@njit(cache=True, nogil=True)
def _viterbi_core(a, L, node, edge, T, allowed, is_c, starts, delta, back, out):
    """Best valid tagging into out[0:L]; returns its score. Ties go to the smaller tag id."""
    if L == 0:
        return 0.0
    for y in range(T):
        delta[0, y] = NEG if is_c[y] else node[0, y]
    for i in range(1, L):
        st = starts[a + i]
        for y in range(T):
            back[i, y] = 0
            if st and is_c[y]:
                delta[i, y] = NEG
                continue
            best = NEG
            arg = -1
            for yp in range(T):
                if not allowed[yp, y]:
                    continue
                v = delta[i - 1, yp]
                if v == NEG:
                    continue
                s = v + edge[i, yp * T + y]
                if arg < 0 or s > best:
                    best = s
                    arg = yp
            if arg < 0:
                delta[i, y] = NEG
            else:
                delta[i, y] = best + node[i, y]
                back[i, y] = arg
    best = NEG
    arg = -1
    for y in range(T):
        if delta[L - 1, y] != NEG and (arg < 0 or delta[L - 1, y] > best):
            best = delta[L - 1, y]
            arg = y
    y = arg
    for i in range(L - 1, -1, -1):
        out[i] = y
        if i > 0:
            y = back[i, y]
    return best


@njit(cache=True, nogil=True)
def _kbest_core(a, L, node, edge, T, allowed, is_c, starts, K, sc, cnt, bp_tag, bp_rank, heads,
                out_tags, out_scores):
    """List Viterbi: the K best distinct valid taggings (best first). Returns how many exist (≤ K).

    For every position i and tag y the K best partial paths ending there are kept, sorted; they
    are the K largest of the T sorted lists coming from the previous position (plus the edge
    score), merged head by head. Each kept entry is a distinct (previous tag, previous rank) pair,
    so the paths are distinct. Ties: the smaller previous tag, then the better previous rank.
    """
    if L == 0:
        out_scores[0] = 0.0
        return 1
    cur = 0
    for y in range(T):
        if is_c[y]:
            cnt[0, y] = 0
        else:
            sc[0, y, 0] = node[0, y]
            cnt[0, y] = 1
    for i in range(1, L):
        prv = cur
        cur = 1 - cur
        st = starts[a + i]
        for y in range(T):
            cnt[cur, y] = 0
            if st and is_c[y]:
                continue
            for yp in range(T):
                heads[yp] = 0
            ny = node[i, y]
            for r in range(K):
                best = NEG
                arg = -1
                for yp in range(T):
                    h = heads[yp]
                    if h >= cnt[prv, yp] or not allowed[yp, y]:
                        continue
                    s = sc[prv, yp, h] + edge[i, yp * T + y]
                    if arg < 0 or s > best:
                        best = s
                        arg = yp
                if arg < 0:
                    break
                sc[cur, y, r] = best + ny
                bp_tag[i, y, r] = arg
                bp_rank[i, y, r] = heads[arg]
                heads[arg] += 1
                cnt[cur, y] = r + 1
    for y in range(T):
        heads[y] = 0
    n_out = 0
    for r in range(K):
        best = NEG
        arg = -1
        for y in range(T):
            h = heads[y]
            if h < cnt[cur, y]:
                s = sc[cur, y, h]
                if arg < 0 or s > best:
                    best = s
                    arg = y
        if arg < 0:
            break
        out_scores[r] = best
        yy = arg
        rr = heads[arg]
        heads[arg] += 1
        for i in range(L - 1, -1, -1):
            out_tags[r, i] = yy
            if i > 0:
                nyy = bp_tag[i, yy, rr]
                rr = bp_rank[i, yy, rr]
                yy = nyy
        n_out += 1
    return n_out


@njit(cache=True, nogil=True)
def viterbi_all(seq_ptr, indptr, ids, edge_of, w, T, E0, allowed, is_c, starts, out, scores, node, edge,
                delta, back):
    """Viterbi over every sequence; tags into ``out`` (one per token), scores into ``scores``."""
    for s in range(seq_ptr.shape[0] - 1):
        a = seq_ptr[s]
        L = seq_ptr[s + 1] - a
        fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
        scores[s] = _viterbi_core(a, L, node, edge, T, allowed, is_c, starts, delta, back, out[a:a + L])


@njit(cache=True, nogil=True)
def kbest_one(a, L, indptr, ids, edge_of, w, T, E0, allowed, is_c, starts, K, node, edge, sc, cnt,
              bp_tag, bp_rank, heads, out_tags, out_scores):
    fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
    return _kbest_core(a, L, node, edge, T, allowed, is_c, starts, K, sc, cnt, bp_tag, bp_rank, heads,
                       out_tags, out_scores)


@njit(cache=True, nogil=True)
def score_seq(a, L, tags, indptr, ids, edge_of, w, T, E0):
    """Φ(x, y)·w of the tagging ``tags`` of tokens a .. a+L-1 (constraints are not checked)."""
    TT = T * T
    s = 0.0
    for i in range(L):
        r = a + i
        y = np.int64(tags[i])
        nsum = 0.0
        for q in range(indptr[r], indptr[r + 1]):
            nsum += w[np.int64(ids[q]) * T + y]
        if i == 0:
            s = nsum
        else:
            yp = np.int64(tags[i - 1])
            esum = 0.0
            for q in range(indptr[r], indptr[r + 1]):
                e = edge_of[np.int64(ids[q])]
                if e >= 0:
                    esum += w[E0 + e * TT + yp * T + y]
            s = (s + esum) + nsum
    return s


@njit(cache=True, nogil=True)
def phi_indices(a, L, tags, indptr, ids, edge_of, T, E0, out):
    """Weight indices touched by the tagging (with repetitions); returns how many were written."""
    TT = T * T
    n = 0
    for i in range(L):
        r = a + i
        y = np.int64(tags[i])
        for q in range(indptr[r], indptr[r + 1]):
            p = np.int64(ids[q])
            out[n] = p * T + y
            n += 1
            if i > 0:
                e = edge_of[p]
                if e >= 0:
                    out[n] = E0 + e * TT + np.int64(tags[i - 1]) * T + y
                    n += 1
    return n


@njit(cache=True, nogil=True)
def add_update(a, L, gold, pred, indptr, ids, edge_of, w, u, track, stamp, scale, T, E0):
    """w += scale · (Φ(gold) − Φ(pred)); with ``track`` also u += stamp · scale · (same).

    Only positions where the node tag or the tag pair differ contribute (elsewhere the two
    vectors cancel exactly).
    """
    TT = T * T
    su = stamp * scale
    for i in range(L):
        r = a + i
        g = np.int64(gold[i])
        p_ = np.int64(pred[i])
        node_diff = g != p_
        edge_diff = False
        gp = 0
        pp = 0
        if i > 0:
            gp = np.int64(gold[i - 1])
            pp = np.int64(pred[i - 1])
            edge_diff = node_diff or gp != pp
        if not node_diff and not edge_diff:
            continue
        for q in range(indptr[r], indptr[r + 1]):
            p = np.int64(ids[q])
            if node_diff:
                j1 = p * T + g
                j2 = p * T + p_
                w[j1] += scale
                w[j2] -= scale
                if track:
                    u[j1] += su
                    u[j2] -= su
            if edge_diff:
                e = edge_of[p]
                if e >= 0:
                    j1 = E0 + e * TT + gp * T + g
                    j2 = E0 + e * TT + pp * T + p_
                    w[j1] += scale
                    w[j2] -= scale
                    if track:
                        u[j1] += su
                        u[j2] -= su


@njit(cache=True, nogil=True)
def train_chunk(order, lo, hi, seq_ptr, indptr, ids, edge_of, gold, w, u, track, counter, T, E0, allowed,
                is_c, starts, margin, C, node, edge, sc, cnt, bp_tag, bp_rank, heads, kt, ks, stats):
    """Process sequences order[lo:hi] with the perceptron (margin=False) or Algorithm 3.1 (True).

    ``counter[0]`` counts the examples seen; the update made while seeing example c+1 is
    time-stamped c+1 in ``u`` (see :class:`~nerstudio.tagging.perceptron.AveragedWeights`).
    ``stats`` accumulates: [0] tokens whose best tag is wrong, [1] sequences whose best tagging is
    wrong, [2] updates, [3] margin updates (gold best but second within C), [4] tokens.
    """
    K = 2 if margin else 1
    for oi in range(lo, hi):
        s = order[oi]
        a = seq_ptr[s]
        L = seq_ptr[s + 1] - a
        fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
        n = _kbest_core(a, L, node, edge, T, allowed, is_c, starts, K, sc, cnt, bp_tag, bp_rank, heads, kt, ks)
        g = gold[a:a + L]
        wrong = 0
        for i in range(L):
            if kt[0, i] != g[i]:
                wrong += 1
        stamp = counter[0] + 1.0
        stats[0] += wrong
        stats[4] += L
        if wrong > 0:
            stats[1] += 1
            stats[2] += 1
            add_update(a, L, g, kt[0], indptr, ids, edge_of, w, u, track, stamp, 1.0, T, E0)
        elif margin and n >= 2 and ks[0] - ks[1] <= C:
            stats[2] += 1
            stats[3] += 1
            add_update(a, L, g, kt[1], indptr, ids, edge_of, w, u, track, stamp, 1.0, T, E0)
        counter[0] += 1
