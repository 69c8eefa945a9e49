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

Constraints (hard, not learned): a tag ``y`` may follow only the tags ``y'`` with
``allowed[y', y]``; ``is_c[y]`` holds flags: bit 1 (a C-X, I-X or L-X tag) says it may not start
a sequence or a sentence (``starts[token]``), bit 2 (B-X or I-X of the BILOU alphabet) that it
may not end a sequence. (Inside a sequence, a sentence cannot end on B or I either: the next
sentence's first tag cannot follow them.)

The module is long because these kernels must share one summation order and one weight layout to
stay bit-for-bit consistent, so they live together; each is a short numba function.
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
    _forward(a, L, node, edge, T, allowed, is_c, starts, delta, back)
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
def _kbest_core(
    a,
    L,
    node,
    edge,
    T,
    allowed,
    is_c,
    starts,
    K,
    sc,
    cnt,
    bp_tag,
    bp_rank,
    heads,
    hv,
    out_tags,
    out_scores,
):
    """List Viterbi: the K best distinct valid taggings (best first). Returns how many exist (≤ K).

    For every position i and tag y the K best partial paths ending there are kept, sorted; they
    are the K largest of the T sorted lists coming from the previous position (plus the edge
    score), merged head by head (``hv[y']`` is the value at the head of list y', −inf once it is
    used up or the transition is not allowed). Each kept entry is a distinct (previous tag,
    previous rank) pair, so the paths are distinct. Ties: the smaller previous tag, then the
    better previous rank.
    """
    if L == 0:
        out_scores[0] = 0.0
        return 1
    cur = 0
    for y in range(T):
        if is_c[y] & 1:
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
            if st and is_c[y] & 1:
                continue
            for yp in range(T):
                heads[yp] = 0
                if allowed[yp, y] and cnt[prv, yp] > 0:
                    hv[yp] = sc[prv, yp, 0] + edge[i, yp * T + y]
                else:
                    hv[yp] = NEG
            ny = node[i, y]
            for r in range(K):
                best = NEG
                arg = -1
                for yp in range(T):
                    if hv[yp] > best:
                        best = hv[yp]
                        arg = yp
                if arg < 0:
                    break
                sc[cur, y, r] = best + ny
                h = heads[arg]
                bp_tag[i, y, r] = arg
                bp_rank[i, y, r] = h
                h += 1
                heads[arg] = h
                if h < cnt[prv, arg]:
                    hv[arg] = sc[prv, arg, h] + edge[i, arg * T + y]
                else:
                    hv[arg] = NEG
                cnt[cur, y] = r + 1
    for y in range(T):
        heads[y] = 0
        hv[y] = sc[cur, y, 0] if cnt[cur, y] > 0 and not is_c[y] & 2 else NEG
    n_out = 0
    for r in range(K):
        best = NEG
        arg = -1
        for y in range(T):
            if hv[y] > best:
                best = hv[y]
                arg = y
        if arg < 0:
            break
        out_scores[r] = best
        yy = arg
        rr = heads[arg]
        heads[arg] = rr + 1
        hv[arg] = sc[cur, arg, rr + 1] if rr + 1 < cnt[cur, arg] else NEG
        for i in range(L - 1, -1, -1):
            out_tags[r, i] = yy
            if i > 0:
                nyy = bp_tag[i, yy, rr]
                rr = bp_rank[i, yy, rr]
                yy = nyy
        n_out += 1
    return n_out


@njit(cache=True, nogil=True)
def _forward(a, L, node, edge, T, allowed, is_c, starts, delta, back):
    """Viterbi forward pass: delta[i, y] best score of a valid prefix ending in y, back[i, y] its
    previous tag (ties: the smaller tag)."""
    for y in range(T):
        delta[0, y] = NEG if is_c[y] & 1 else node[0, y]
        back[0, y] = -1
    for i in range(1, L):
        st = starts[a + i]
        for y in range(T):
            back[i, y] = -1
            if st and is_c[y] & 1:
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
    if L > 0:
        for y in range(T):  # the last tag must be one that may end a sequence
            if is_c[y] & 2:
                delta[L - 1, y] = NEG


@njit(cache=True, nogil=True)
def _next_derivation(
    L,
    ni,
    ny,
    edge,
    node,
    T,
    allowed,
    delta,
    back,
    rec_score,
    rec_y,
    rec_pred,
    rec_next,
    n_rec,
    cand_rec,
    candval,
    pending,
    last_rec,
    state,
    stack_i,
    stack_y,
):
    """One more derivation (the next best path) of trellis node (ni, ny); its record id, or −1.

    Node (L, 0) is the sink, reached from every (L−1, y) with score 0. A node keeps, per previous
    tag y', the record of (i−1, y') at the head of its candidate list (``cand_rec``) and its value
    (``candval``: that record's score plus the edge score); the tag of the derivation popped last
    is ``pending``: its list advances (lazily) at the next request, which may need the next
    derivation of (i−1, y') first. That recursion is run with an explicit stack.
    ``state``: 0 untouched, 1 active, 2 exhausted.
    """
    top = 0
    stack_i[0] = ni
    stack_y[0] = ny
    result = -1
    while top >= 0:
        ci = stack_i[top]
        cy = stack_y[top]
        st = state[ci, cy]
        if st == 0:
            if ci == 0:
                st = 2
            else:
                for yp in range(T):
                    ok = ci == L or allowed[yp, cy]
                    if ok and delta[ci - 1, yp] != NEG:
                        cand_rec[ci, cy, yp] = (ci - 1) * T + yp
                        e = 0.0 if ci == L else edge[ci, yp * T + cy]
                        candval[ci, cy, yp] = delta[ci - 1, yp] + e
                    else:
                        cand_rec[ci, cy, yp] = -1
                        candval[ci, cy, yp] = NEG
                pending[ci, cy] = -1 if ci == L else back[ci, cy]
                st = 1
            state[ci, cy] = st
        if st == 2:
            top -= 1
            result = -1
            continue
        yp = pending[ci, cy]
        if yp >= 0:
            h = cand_rec[ci, cy, yp]
            nx = rec_next[h]
            if nx < 0 and state[ci - 1, yp] != 2:
                top += 1
                stack_i[top] = ci - 1
                stack_y[top] = yp
                continue
            if nx >= 0:
                cand_rec[ci, cy, yp] = nx
                e = 0.0 if ci == L else edge[ci, yp * T + cy]
                candval[ci, cy, yp] = rec_score[nx] + e
            else:
                cand_rec[ci, cy, yp] = -1
                candval[ci, cy, yp] = NEG
            pending[ci, cy] = -1
        best = NEG
        arg = -1
        for yq in range(T):
            if candval[ci, cy, yq] > best:
                best = candval[ci, cy, yq]
                arg = yq
        if arg < 0:
            state[ci, cy] = 2
            top -= 1
            result = -1
            continue
        rid = n_rec[0]
        n_rec[0] = rid + 1
        rec_score[rid] = best + (0.0 if ci == L else node[ci, cy])
        rec_y[rid] = cy
        rec_pred[rid] = cand_rec[ci, cy, arg]
        rec_next[rid] = -1
        lr = last_rec[ci, cy]
        if lr >= 0:
            rec_next[lr] = rid
        last_rec[ci, cy] = rid
        pending[ci, cy] = arg
        top -= 1
        result = rid
    return result


@njit(cache=True, nogil=True)
def _kbest_lazy(
    a,
    L,
    node,
    edge,
    T,
    allowed,
    is_c,
    starts,
    K,
    delta,
    back,
    rec_score,
    rec_y,
    rec_pred,
    rec_next,
    n_rec,
    cand_rec,
    candval,
    pending,
    last_rec,
    state,
    stack_i,
    stack_y,
    out_tags,
    out_scores,
):
    """The K best distinct valid taggings, best first; returns how many exist (≤ K).

    Lazy k-best on the Viterbi trellis (after Huang & Chiang 2005, Algorithm 3): the forward pass
    gives every node's best derivation (record i·T + y); further derivations of a node are made
    only when a later node asks for them. Every node's derivations come out in the order of the
    list Viterbi (:func:`_kbest_core`): the T sorted lists from the previous position merged head by
    head, ties to the smaller previous tag, so both return the same taggings with the same
    scores, computed with the same additions. Work: the forward pass plus at most L + 1 node
    steps per extra tagging. Record arrays need L·T + K·(L + 1) entries.
    """
    if L == 0:
        out_scores[0] = 0.0
        return 1
    _forward(a, L, node, edge, T, allowed, is_c, starts, delta, back)
    for i in range(L):
        for y in range(T):
            rid = i * T + y
            rec_score[rid] = delta[i, y]
            rec_y[rid] = y
            rec_pred[rid] = (i - 1) * T + back[i, y] if i > 0 else -1
            rec_next[rid] = -1
            last_rec[i, y] = rid
            state[i, y] = 0 if delta[i, y] != NEG else 2
    state[L, 0] = 0
    last_rec[L, 0] = -1
    n_rec[0] = L * T
    n_out = 0
    for r in range(K):
        rid = _next_derivation(
            L,
            L,
            0,
            edge,
            node,
            T,
            allowed,
            delta,
            back,
            rec_score,
            rec_y,
            rec_pred,
            rec_next,
            n_rec,
            cand_rec,
            candval,
            pending,
            last_rec,
            state,
            stack_i,
            stack_y,
        )
        if rid < 0:
            break
        out_scores[r] = rec_score[rid]
        p = rec_pred[rid]
        for i in range(L - 1, -1, -1):
            out_tags[r, i] = rec_y[p]
            p = rec_pred[p]
        n_out += 1
    return n_out


@njit(cache=True, nogil=True)
def kbest_list(
    a,
    L,
    indptr,
    ids,
    edge_of,
    w,
    T,
    E0,
    allowed,
    is_c,
    starts,
    K,
    node,
    edge,
    sc,
    cnt,
    bp_tag,
    bp_rank,
    heads,
    hv,
    out_tags,
    out_scores,
):
    """The list-Viterbi k-best (reference implementation for the tests)."""
    fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
    return _kbest_core(
        a,
        L,
        node,
        edge,
        T,
        allowed,
        is_c,
        starts,
        K,
        sc,
        cnt,
        bp_tag,
        bp_rank,
        heads,
        hv,
        out_tags,
        out_scores,
    )


@njit(cache=True, nogil=True)
def viterbi_all(
    seq_ptr,
    indptr,
    ids,
    edge_of,
    w,
    T,
    E0,
    allowed,
    is_c,
    starts,
    out,
    scores,
    node,
    edge,
    delta,
    back,
):
    """Viterbi over every sequence; tags into ``out`` (one per token), scores into ``scores``."""
    for s in range(seq_ptr.shape[0] - 1):
        a = seq_ptr[s]
        L = seq_ptr[s + 1] - a
        fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
        scores[s] = _viterbi_core(
            a, L, node, edge, T, allowed, is_c, starts, delta, back, out[a : a + L]
        )


@njit(cache=True, nogil=True)
def kbest_one(
    a,
    L,
    indptr,
    ids,
    edge_of,
    w,
    T,
    E0,
    allowed,
    is_c,
    starts,
    K,
    node,
    edge,
    delta,
    back,
    rec_score,
    rec_y,
    rec_pred,
    rec_next,
    n_rec,
    cand_rec,
    candval,
    pending,
    last_rec,
    state,
    stack_i,
    stack_y,
    out_tags,
    out_scores,
):
    fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
    return _kbest_lazy(
        a,
        L,
        node,
        edge,
        T,
        allowed,
        is_c,
        starts,
        K,
        delta,
        back,
        rec_score,
        rec_y,
        rec_pred,
        rec_next,
        n_rec,
        cand_rec,
        candval,
        pending,
        last_rec,
        state,
        stack_i,
        stack_y,
        out_tags,
        out_scores,
    )


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
def score_many(a, L, Y, indptr, ids, edge_of, w, T, E0, node, edge, out):
    """:func:`score_seq` of every row of ``Y`` (bit for bit): from the token scores of
    :func:`fill_scores` when there are enough rows to pay for them, else one by one."""
    n = Y.shape[0]
    if n < 8:
        for c in range(n):
            out[c] = score_seq(a, L, Y[c], indptr, ids, edge_of, w, T, E0)
        return
    fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
    for c in range(n):
        s = 0.0
        for i in range(L):
            y = np.int64(Y[c, i])
            if i == 0:
                s = node[0, y]
            else:
                s = (s + edge[i, np.int64(Y[c, i - 1]) * T + y]) + node[i, y]
        out[c] = s


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
        gp = np.int64(0)
        pp = np.int64(0)
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
def train_chunk(
    order,
    lo,
    hi,
    seq_ptr,
    indptr,
    ids,
    edge_of,
    gold,
    w,
    u,
    track,
    counter,
    T,
    E0,
    allowed,
    is_c,
    starts,
    margin,
    C,
    node,
    edge,
    delta,
    back,
    rec_score,
    rec_y,
    rec_pred,
    rec_next,
    n_rec,
    cand_rec,
    candval,
    pending,
    last_rec,
    state,
    stack_i,
    stack_y,
    kt,
    ks,
    stats,
):
    """Process sequences order[lo:hi] with the perceptron (margin=False) or Algorithm 3.1 (True).

    ``counter[0]`` counts the examples seen; the update made while seeing example c+1 is
    time-stamped c+1 in ``u`` (see :class:`~nerstudio.tagging.weights.AveragedWeights`).
    ``stats`` accumulates: [0] tokens whose best tag is wrong, [1] sequences whose best tagging is
    wrong, [2] updates, [3] margin updates (gold best but second within C), [4] tokens.
    """
    for oi in range(lo, hi):
        s = order[oi]
        a = seq_ptr[s]
        L = seq_ptr[s + 1] - a
        fill_scores(a, L, indptr, ids, edge_of, w, T, E0, node, edge)
        if margin:
            n = _kbest_lazy(
                a,
                L,
                node,
                edge,
                T,
                allowed,
                is_c,
                starts,
                2,
                delta,
                back,
                rec_score,
                rec_y,
                rec_pred,
                rec_next,
                n_rec,
                cand_rec,
                candval,
                pending,
                last_rec,
                state,
                stack_i,
                stack_y,
                kt,
                ks,
            )
        else:
            ks[0] = _viterbi_core(a, L, node, edge, T, allowed, is_c, starts, delta, back, kt[0])
            n = 1
        g = gold[a : a + L]
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


class Buffers:
    """Work arrays of the compiled search for sequences up to ``L`` tokens and ``k`` best."""

    def __init__(self, L: int, T: int, k: int):
        L = max(int(L), 1)
        k = max(int(k), 1)
        self.L, self.k, self.T = L, k, T
        self.node = np.zeros((L, T))
        self.edge = np.zeros((L, T * T))
        self.delta = np.zeros((L, T))
        self.back = np.zeros((L, T), dtype=np.int16)
        n_rec = L * T + (k if k > 1 else 1) * (L + 1) + 1
        self.rec_score = np.zeros(n_rec)
        self.rec_y = np.zeros(n_rec, dtype=np.int16)
        self.rec_pred = np.zeros(n_rec, dtype=np.int32)
        self.rec_next = np.zeros(n_rec, dtype=np.int32)
        self.n_rec = np.zeros(1, dtype=np.int64)
        self.cand_rec = np.zeros((L + 1, T, T), dtype=np.int32)
        self.candval = np.zeros((L + 1, T, T))
        self.pending = np.zeros((L + 1, T), dtype=np.int16)
        self.last_rec = np.zeros((L + 1, T), dtype=np.int32)
        self.state = np.zeros((L + 1, T), dtype=np.int8)
        self.stack_i = np.zeros(L + 2, dtype=np.int64)
        self.stack_y = np.zeros(L + 2, dtype=np.int64)
        self.kt = np.zeros((k, L), dtype=np.int16)
        self.ks = np.zeros(k)

    def lazy(self) -> tuple:
        return (
            self.delta,
            self.back,
            self.rec_score,
            self.rec_y,
            self.rec_pred,
            self.rec_next,
            self.n_rec,
            self.cand_rec,
            self.candval,
            self.pending,
            self.last_rec,
            self.state,
            self.stack_i,
            self.stack_y,
        )
